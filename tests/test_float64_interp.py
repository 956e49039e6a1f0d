"""float64 slerp / nlerp (the kernels slerp_quats_f64, nlerp_quats_f64) on every path, against an
independent oracle: the textbook formulas evaluated in np.longdouble (80-bit extended precision
on x86: 64-bit mantissa, 15-bit exponent, so products of any two float64 values are exact in
range), never jointmath.reference's float64 code."""

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference

from adversarial import SIZES, hard_quats, layouts, random_unit_quats

LD = np.longdouble
if np.finfo(LD).nmant < 60:  # pragma: no cover - the oracle needs extended precision
    pytest.skip("np.longdouble is not an extended-precision type on this platform", allow_module_level=True)

BOUND = 2e-15  # max abs component error, slerp and nlerp
TIE = 1e-12  # |q0 . q1| below this (relative): the shorter arc is a tie that rounding decides
DBL_MAX = float(np.finfo(np.float64).max)


# ------------------------------------------------------------------ the oracle (longdouble) --


def ld_dot(q0, q1):
    return np.sum(np.asarray(q0).astype(LD) * np.asarray(q1).astype(LD), axis=-1, keepdims=True)


def ld_slerp(q0, q1, t, sign):
    """slerp along the arc to sign * q1 (sign +-1, (..., 1)) in extended precision: the angle from
    2 atan2(|a - b|, |a + b|) (no dot product), weights sin((1 - t) w) / sin w, sin(t w) / sin w."""
    a, b = np.asarray(q0).astype(LD), np.asarray(q1).astype(LD) * sign.astype(LD)
    t = np.asarray(t).astype(LD)[..., None]
    omega = 2 * np.arctan2(np.sqrt(np.sum((a - b) ** 2, -1, keepdims=True)),
                           np.sqrt(np.sum((a + b) ** 2, -1, keepdims=True)))
    sin_omega = np.sin(omega)
    parallel = sin_omega == 0
    safe = np.where(parallel, 1, sin_omega)
    w0 = np.where(parallel, 1 - t, np.sin((1 - t) * omega) / safe)
    w1 = np.where(parallel, t, np.sin(t * omega) / safe)
    return w0 * a + w1 * b


def ld_nlerp(q0, q1, t, sign):
    """normalize((1 - t) q0 + sign t q1) in extended precision (any float64 scale fits its range)."""
    a, b = np.asarray(q0).astype(LD), np.asarray(q1).astype(LD)
    t = np.asarray(t).astype(LD)[..., None]
    s = (1 - t) * a + sign.astype(LD) * t * b
    with np.errstate(invalid="ignore"):  # 0 / 0 at t = 0 or 1 of a zero input: not compared
        return s / np.sqrt(np.sum(s * s, -1, keepdims=True))


def arc_error(func, q0, q1, t):
    """Max abs component error of func(q0, q1, t) (float64) against the oracle, per element; where
    q0 . q1 is a tie (|d| < TIE |q0| |q1|) the smaller of the errors against the two arcs. Also
    checks dtype, finiteness and the exact endpoints."""
    q0, q1 = np.broadcast_arrays(np.asarray(q0, np.float64), np.asarray(q1, np.float64))
    t = np.broadcast_to(np.asarray(t, np.float64), q0.shape[:-1])
    out = func(q0, q1, t)
    assert out.dtype == np.float64 and out.shape == q0.shape
    assert np.isfinite(out).all()
    oracle = ld_slerp if func is jm.slerp else ld_nlerp
    d = ld_dot(q0 / scale_of(q0), q1 / scale_of(q1))  # exact sign at any scale
    norms = np.sqrt(np.sum((q0 / scale_of(q0)).astype(LD) ** 2, -1, keepdims=True) *
                    np.sum((q1 / scale_of(q1)).astype(LD) ** 2, -1, keepdims=True))
    tie = (np.abs(d) < TIE * norms)[..., 0]
    sign = np.where(d < 0, -1.0, 1.0)
    inner = (t > 0) & (t < 1)
    np.testing.assert_array_equal(out[t == 0], q0[t == 0])
    end = (out[t == 1] == sign[t == 1] * q1[t == 1]).all(-1) | tie[t == 1]
    assert end.all() and (np.abs(out[t == 1]) == np.abs(q1[t == 1])).all()
    err = np.abs(out - oracle(q0, q1, t, sign)).max(-1)
    if tie.any():
        err = np.where(tie, np.minimum(err, np.abs(out - oracle(q0, q1, t, -sign)).max(-1)), err)
    return float(np.where(inner, err, 0).max(initial=0))


def scale_of(q):
    """the largest |component| of each quaternion (1 for zero ones), (..., 1)"""
    m = np.abs(q).max(-1, keepdims=True)
    return np.where(m > 0, m, 1.0)


def normalised(q):
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def hard_pairs(rng, n=300):
    """identical, antipodal, nearly parallel and nearly antipodal at 1e-3 ... 1e-15, orthogonal,
    around the 45-degree switch of the angle formula (q0 . q1 ~ cos(pi/8)), 90 degrees
    (q0 . q1 ~ 0) and the adversarial quaternions against shuffled and negated copies"""
    q = random_unit_quats(rng, n, np.float64)
    other = rng.standard_normal((n, 4))
    other = normalised(other - np.sum(other * q, -1, keepdims=True) * q)  # orthogonal to q
    pairs = [(q, q), (q, -q), (q, other), (q, -other)]
    for eps in (1e-3, 1e-5, 1e-7, 1e-9, 1e-11, 1e-13, 1e-15):
        near = normalised(q + eps * other)
        pairs += [(q, near), (q, -near)]
    for half_angle in (np.pi / 8, np.pi / 4):  # quaternion angles pi/4 and pi/2 (the rotation's: twice)
        for delta in (0, 1e-15, -1e-15, 1e-9, -1e-9):
            a = half_angle + delta
            pairs.append((q, normalised(np.cos(a) * q + np.sin(a) * other)))
    h = hard_quats(rng, np.float64)
    pairs += [(h, h[rng.permutation(len(h))]), (h, -h), (h, h)]
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


FRACTIONS = [0.0, 5e-324, 1e-300, 1e-16, 1e-8, 0.25, 0.5, 0.75, 1 - 2.0**-53, 1.0]


# ---------------------------------------------------------------- accuracy --


@pytest.mark.parametrize("func", [jm.slerp, jm.nlerp])
def test_accuracy_random(rng, func):
    q0, q1 = random_unit_quats(rng, 200000, np.float64), random_unit_quats(rng, 200000, np.float64)
    assert arc_error(func, q0, q1, rng.uniform(0, 1, 200000)) <= BOUND
    assert arc_error(func, q0, q1, 0.3) <= BOUND  # one t for all (t_stride 0)


@pytest.mark.parametrize("func", [jm.slerp, jm.nlerp])
def test_accuracy_hard_pairs(rng, func):
    q0, q1 = hard_pairs(rng)
    for t in FRACTIONS:
        assert arc_error(func, q0, q1, t) <= BOUND, t
    assert arc_error(func, q0, q1, rng.uniform(0, 1, len(q0))) <= BOUND
    assert arc_error(func, q0, q1, rng.choice(FRACTIONS, len(q0))) <= BOUND


def test_slerp_identical_and_antipodal(rng):
    """q with itself or -q: q at every t (never NaN), within the bound."""
    q = random_unit_quats(rng, 1000, np.float64)
    for other in (q, -q):
        for t in FRACTIONS[1:-1]:
            for func in (jm.slerp, jm.nlerp):
                np.testing.assert_allclose(func(q, other, t), q, rtol=0, atol=BOUND)


def test_slerp_constant_speed_and_shortest_arc(rng):
    """The angle from q0 grows as t times the whole angle (up to pi/2 between quaternions), and
    -q1 gives the same result as q1."""
    q0, q1 = random_unit_quats(rng, 5000, np.float64), random_unit_quats(rng, 5000, np.float64)
    t = rng.uniform(0, 1, 5000)
    out = jm.slerp(q0, q1, t)
    np.testing.assert_array_equal(jm.slerp(q0, -q1, t), out)

    def angle(a, b):
        a, b = a.astype(LD), b.astype(LD)
        b = b * np.where(np.sum(a * b, -1, keepdims=True) < 0, -1, 1)
        return 2 * np.arctan2(np.linalg.norm((a - b).astype(np.float64), axis=-1),
                              np.linalg.norm((a + b).astype(np.float64), axis=-1))

    np.testing.assert_allclose(angle(q0, out), t * angle(q0, q1), rtol=0, atol=1e-14)


def test_scalar_t_is_the_per_element_formula(rng):
    """t_stride 0 runs the per-lane formula: bit for bit what an array of that t gives."""
    q0, q1 = hard_pairs(rng)
    for func in (jm.slerp, jm.nlerp):
        for t in FRACTIONS:
            np.testing.assert_array_equal(func(q0, q1, t), func(q0, q1, np.full(len(q0), t)))


# ---------------------------------------------------------------- nlerp at any scale --


def scales():
    """powers of two across float64: the smallest denormal, denormals, normals, near DBL_MAX"""
    return [2.0**e for e in (-1074, -1060, -1030, -1022, -1000, -700, -481, -480, -300, -1, 0, 300, 480, 481,
                             700, 1000, 1020)]


@pytest.mark.parametrize("same", [True, False])
def test_nlerp_any_scale(rng, same):
    """Each input at any scale (same for both, or one each), t including denormal ones: within the
    bound of the extended-precision normalised sum as written, never inf or NaN."""
    q0, q1 = hard_pairs(rng, 40)
    fractions = np.array(FRACTIONS)[rng.integers(0, len(FRACTIONS), len(q0))]
    for s0 in scales():
        for s1 in ([s0] if same else scales()[::3]):
            a, b = q0 * s0, q1 * s1  # denormal scales round the components: the oracle takes them as they are
            if not (np.abs(a).max(-1) > 0).all() or not (np.abs(b).max(-1) > 0).all():
                continue  # a quaternion rounded to zero (tested below)
            assert arc_error(jm.nlerp, a, b, fractions) <= BOUND, (s0, s1)
            assert arc_error(jm.nlerp, a, b, 0.5) <= BOUND, (s0, s1)


def test_nlerp_extremes(rng):
    """DBL_MAX components, the smallest denormal against DBL_MAX, one zero input, t = 5e-324."""
    q = random_unit_quats(rng, 64, np.float64)
    r = random_unit_quats(rng, 64, np.float64)
    huge = np.sign(q) * DBL_MAX  # |q|^2 overflows any direct sum
    tiny = np.sign(r) * 5e-324
    for a, b in ((huge, huge[::-1]), (huge, tiny), (tiny, huge), (tiny, tiny[::-1]), (np.zeros_like(q), r * 1e300),
                 (r * 1e-300, np.zeros_like(q))):
        for t in (5e-324, 0.5, rng.uniform(0, 1, 64), 1 - 2.0**-53):
            assert arc_error(jm.nlerp, a, b, t) <= BOUND
    # 2^-24 (1, 0, 0, 0) and 2^1000 (0, 1, 0, 0) at t = 2^-1024: equal terms, an orthogonal pair
    np.testing.assert_allclose(jm.nlerp(np.array([2.0**-24, 0, 0, 0]), np.array([0, 2.0**1000, 0, 0]), 2.0**-1024),
                               [0.5**0.5, 0.5**0.5, 0, 0], rtol=0, atol=BOUND)


# ---------------------------------------------------------------- NaN rules --


@pytest.mark.parametrize("func", [jm.slerp, jm.nlerp])
def test_non_finite_stays_in_its_record(rng, func):
    """NaN or inf in one record: that record's result is not finite (NaN for nlerp), every other
    record is bit for bit what it is without it; two zero quaternions give NaN in nlerp."""
    n = 37
    q0, q1 = random_unit_quats(rng, n, np.float64), random_unit_quats(rng, n, np.float64)
    t = rng.uniform(0.01, 0.99, n)
    clean = func(q0, q1, t)
    for bad in (np.nan, np.inf, -np.inf):
        for k in (0, 5, 16, 36):
            a, b = q0.copy(), q1.copy()
            (a if k % 2 else b)[k, k % 4] = bad
            out = func(a, b, t)
            assert not np.isfinite(out[k]).any() if func is jm.nlerp else not np.isfinite(out[k]).all()
            if func is jm.nlerp or bad != bad:  # a NaN leaves no plausible component (slerp took the lerp weights)
                assert np.isnan(out[k]).all()
            np.testing.assert_array_equal(np.delete(out, k, 0), np.delete(clean, k, 0))
    if func is jm.nlerp:
        zero = np.zeros((n, 4))
        assert np.isnan(jm.nlerp(zero, zero, t)).all()
        np.testing.assert_array_equal(jm.nlerp(zero, zero, 0.0), zero)


def test_t_outside_or_nan_is_refused():
    q = np.array([0.0, 0, 0, 1])
    for func in (jm.slerp, jm.nlerp):
        for t in (-1e-300, 1 + 2.0**-52, np.nan, [0.5, np.nan]):
            with pytest.raises(ValueError, match="t must be in"):
                func(q, q, t)
            # float32 quaternions: float64 t is checked as given, however it is spelled (a Python
            # float was; a NumPy one was cast first, 1 + 2^-52 to 1)
            for spelled in (t, np.float64(t) if np.ndim(t) == 0 else np.array(t), np.array(t)[..., None, None]):
                with pytest.raises(ValueError, match="t must be in"):
                    func(q.astype(np.float32), q.astype(np.float32), spelled)


# ---------------------------------------------------------------- shapes, layouts, out= --


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("func", [jm.slerp, jm.nlerp])
def test_sizes_and_layouts(rng, n, func):
    """Every size around the vector widths and every awkward layout gives the contiguous result,
    bit for bit; inputs are never written."""
    q0, q1 = random_unit_quats(rng, n, np.float64), random_unit_quats(rng, n, np.float64)
    q1[: n // 3] = -q0[: n // 3]  # antipodal pairs among the others
    t = rng.choice(FRACTIONS, n)
    expected = func(q0, q1, t)
    assert arc_error(func, q0, q1, t) <= BOUND
    for name, a in layouts(q0).items():
        for other_name, b in layouts(q1).items():
            before = (a.copy(), b.copy())
            np.testing.assert_array_equal(func(a, b, t), expected, err_msg=f"{name} / {other_name}")
            np.testing.assert_array_equal(a, before[0])
            np.testing.assert_array_equal(b, before[1])
    for name, tt in layouts(t).items():
        np.testing.assert_array_equal(func(q0, q1, tt), expected, err_msg=name)


@pytest.mark.parametrize("func", [jm.slerp, jm.nlerp])
def test_broadcasting_and_out(rng, func):
    """One record against many, t per frame, out= separate, strided and in place (out=q0, out=q1)."""
    frames, joints = 7, 13
    q0 = random_unit_quats(rng, frames * joints, np.float64).reshape(frames, joints, 4)
    q1 = random_unit_quats(rng, frames * joints, np.float64).reshape(frames, joints, 4)
    t = rng.uniform(0, 1, frames)[:, None]
    expected = func(q0, q1, np.broadcast_to(t, (frames, joints)).copy())
    np.testing.assert_array_equal(func(q0, q1, t), expected)
    np.testing.assert_array_equal(func(q0[0, 0], q1, 0.4), func(np.broadcast_to(q0[0, 0], q1.shape).copy(), q1, 0.4))
    np.testing.assert_array_equal(func(q0, q1[2, 3], 0.4), func(q0, np.broadcast_to(q1[2, 3], q0.shape).copy(), 0.4))
    separate = np.empty_like(q0)
    assert func(q0, q1, t, out=separate) is separate
    np.testing.assert_array_equal(separate, expected)
    strided = np.zeros((frames, joints, 8))[..., ::2]
    func(q0, q1, t, out=strided)
    np.testing.assert_array_equal(strided, expected)
    for which in (0, 1):
        work = (q0 if which == 0 else q1).copy()
        args = (work, q1, t) if which == 0 else (q0, work, t)
        func(*args, out=work)
        np.testing.assert_array_equal(work, expected)
    # out overlapping an input other than record for record: as if through a temporary
    work = np.concatenate([q0.reshape(-1, 4), np.zeros((1, 4))])
    func(work[:-1], q1.reshape(-1, 4), 0.4, out=work[1:])
    np.testing.assert_array_equal(work[1:], func(q0.reshape(-1, 4), q1.reshape(-1, 4), 0.4))


def test_lanes_are_independent(rng):
    """A record's result does not depend on its neighbours (lane position, block, cold lanes of
    nlerp beside it): each record alone gives what it gives in the batch."""
    q0, q1 = hard_pairs(rng, 8)
    q0 = np.concatenate([q0, q0[:20] * 2.0**-1000, q0[:20] * 2.0**1000])
    q1 = np.concatenate([q1, q1[:20], q1[:20] * 2.0**-1000])
    t = rng.uniform(0, 1, len(q0))
    for func in (jm.slerp, jm.nlerp):
        batch = func(q0, q1, t)
        for k in range(0, len(q0), 7):
            np.testing.assert_array_equal(func(q0[k], q1[k], t[k]), batch[k])


def test_large_arrays_threads(rng):
    """Calls large enough to release the GIL agree across threads."""
    from adversarial import assert_threads_agree

    q0, q1 = random_unit_quats(rng, 100000, np.float64), random_unit_quats(rng, 100000, np.float64)
    t = rng.uniform(0, 1, 100000)
    assert_threads_agree(lambda: (jm.slerp(q0, q1, t), jm.nlerp(q0, q1, t)), n_threads=3, repeats=1)


def test_no_reference_on_the_call_path(rng, monkeypatch):
    """float64 slerp / nlerp never compute through jointmath.reference."""
    def refuse(*args, **kwargs):
        raise AssertionError("jointmath.reference called on a product path")

    for name in ("slerp", "nlerp", "_arc_sign", "_endpoints", "_mantissa_exponent"):
        monkeypatch.setattr(reference, name, refuse)
    q0, q1 = random_unit_quats(rng, 50, np.float64), random_unit_quats(rng, 50, np.float64)
    for func in (jm.slerp, jm.nlerp):
        assert func(q0, q1, 0.3).dtype == np.float64
        assert func(q0, q1, rng.uniform(0, 1, 50)).dtype == np.float64
        assert func(q0 * 2.0**-1050, q1 * 2.0**1000, 0.3).dtype == np.float64
