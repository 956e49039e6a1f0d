"""slerp / nlerp: slerp_joints, lerp_joints (index, out=, in place) and slerp, nlerp on arrays; the
float64 kernels against the textbook formulas evaluated in np.longdouble (never
jointmath.reference's float64 code)."""

import pickle
import warnings

import numpy as np
import pytest

import jointmath as jm
from jointmath import _core
from jointmath import reference as ref

from adversarial import SIZES, assert_threads_agree, hard_quats, layouts, random_unit_quats
from longdouble_oracle import LD, needs_extended_precision

SLERP_BOUND = 5e-7  # max abs component error against the float64 slerp, unit quaternions
NLERP_BOUND = 3e-7
NORM_BOUND = 1e-6


def random_joints(rng, n):
    return jm.make_joints(random_unit_quats(rng, n), rng.uniform(-100, 100, (n, 3)))


def normalised(q):
    q = np.asarray(q, np.float64)
    return (q / np.linalg.norm(q, axis=-1, keepdims=True)).astype(np.float32)


def hard_pairs(rng):
    """Pairs where slerps break: identical, negated (antipodal), nearly parallel at several
    distances, nearly antipodal, orthogonal, plus the adversarial quaternions against shuffled
    copies of themselves."""
    h = hard_quats(rng)
    q = random_unit_quats(rng, 400)
    near = [normalised(q + eps * random_unit_quats(rng, 400)) for eps in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7)]
    ortho = rng.standard_normal((400, 4))
    ortho -= np.sum(ortho * q, axis=1, keepdims=True) * q
    ortho = normalised(ortho)
    q0 = np.concatenate([q, q, q, q, q, *([q] * 5), *([q] * 5), h, h])
    q1 = np.concatenate([q, -q, ortho, -ortho, normalised(q * np.float32(1 + 1e-7)), *near, *[-m for m in near],
                         h[rng.permutation(len(h))], -h])
    return q0, q1


def arc_error(out, q0, q1, t, ref_func):
    """Max abs component error of out against ref_func, per element. Where q0 . q1 is within
    float rounding of 0 the shorter arc is a tie that rounding decides: either arc is right."""
    q0, q1 = np.broadcast_arrays(np.asarray(q0, np.float64), np.asarray(q1, np.float64))
    t = np.broadcast_to(np.asarray(t, np.float64), q0.shape[:-1])
    err = np.abs(out - ref_func(q0, q1, t)).max(axis=-1)
    tie = np.abs(np.sum(q0 * q1, axis=-1)) < 1e-6
    if tie.any():
        a, b, s = q0[tie], q1[tie], t[tie][:, None]
        omega = np.arccos(np.abs(np.sum(a * b, axis=-1, keepdims=True)))
        if ref_func is ref.slerp:
            w0, w1 = np.sin((1 - s) * omega) / np.sin(omega), np.sin(s * omega) / np.sin(omega)
        else:
            w0, w1 = 1 - s, s
        arcs = [w0 * a + w1 * b, w0 * a - w1 * b]
        if ref_func is ref.nlerp:
            arcs = [q / np.linalg.norm(q, axis=-1, keepdims=True) for q in arcs]
        err[tie] = np.minimum(*[np.abs(out[tie] - q).max(axis=-1) for q in arcs])
    return err.max(initial=0)


def check(func, q0, q1, t):
    """func (jm.slerp or jm.nlerp) against its reference: bound, unit norm, finite, float32."""
    ref_func, bound = (ref.slerp, SLERP_BOUND) if func is jm.slerp else (ref.nlerp, NLERP_BOUND)
    out = func(q0, q1, t)
    assert out.dtype == np.float32 and np.isfinite(out).all()
    assert arc_error(out, q0, q1, t, ref_func) <= bound
    assert np.abs(np.linalg.norm(out.astype(np.float64), axis=-1) - 1).max(initial=0) <= NORM_BOUND
    return out


# ---------------------------------------------------------------- accuracy --


def test_slerp_accuracy_random(rng):
    q0, q1 = random_unit_quats(rng, 100000), random_unit_quats(rng, 100000)
    t = rng.uniform(0, 1, 100000).astype(np.float32)
    check(jm.slerp, q0, q1, t)
    check(jm.nlerp, q0, q1, t)


@pytest.mark.parametrize("t", [0.0, 1e-7, 0.001, 0.25, 0.5, 0.75, 0.999, 1 - 1e-7, 1.0])
def test_slerp_accuracy_hard_pairs(rng, t):
    q0, q1 = hard_pairs(rng)
    check(jm.slerp, q0, q1, t)
    check(jm.nlerp, q0, q1, t)


def test_hard_pairs_random_t(rng):
    q0, q1 = hard_pairs(rng)
    t = rng.uniform(0, 1, len(q0)).astype(np.float32)
    check(jm.slerp, q0, q1, t)
    check(jm.nlerp, q0, q1, t)


def test_identical_and_antipodal_give_the_rotation(rng):
    q = random_unit_quats(rng, 100)
    for other in (q, -q):
        for t in (0.1, 0.5, 0.9):
            assert ref.angle_between(jm.slerp(q, other, t), q).max() <= 1e-6
            assert ref.angle_between(jm.nlerp(q, other, t), q).max() <= 1e-6


def test_shortest_arc(rng):
    q0, q1 = random_unit_quats(rng, 1000), random_unit_quats(rng, 1000)
    t = rng.uniform(0.01, 0.99, 1000).astype(np.float32)
    np.testing.assert_array_equal(jm.slerp(q0, -q1, t), jm.slerp(q0, q1, t))
    np.testing.assert_array_equal(jm.nlerp(q0, -q1, t), jm.nlerp(q0, q1, t))
    # the path never turns more than the shorter way round
    total = ref.angle_between(q0, q1)
    assert (ref.angle_between(q0, jm.slerp(q0, q1, t)) <= total + 1e-6).all()


def test_constant_angular_speed(rng):
    q0, q1 = random_unit_quats(rng, 2000), random_unit_quats(rng, 2000)
    t = rng.uniform(0, 1, 2000).astype(np.float32)
    moved = ref.angle_between(q0, jm.slerp(q0, q1, t))
    np.testing.assert_allclose(moved, t * ref.angle_between(q0, q1), atol=2e-6)


def test_reference_matches_scipy(rng):
    Slerp = pytest.importorskip("scipy.spatial.transform").Slerp
    Rotation = pytest.importorskip("scipy.spatial.transform").Rotation
    q0, q1 = random_unit_quats(rng, 50, np.float64), random_unit_quats(rng, 50, np.float64)
    t = rng.uniform(0, 1, 50)
    ours = jm.slerp(q0, q1, t)
    for i in range(50):
        theirs = Slerp([0, 1], Rotation.from_quat([q0[i], q1[i]]))([t[i]]).as_quat()[0]
        assert ref.angle_between(ours[i], theirs) < 1e-7


def test_float64_computes_in_float64(rng):
    q0, q1 = random_unit_quats(rng, 100, np.float64), random_unit_quats(rng, 100, np.float64)
    t = rng.uniform(0, 1, 100)
    for func, ref_func in ((jm.slerp, ref.slerp), (jm.nlerp, ref.nlerp)):
        out = func(q0, q1, t)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out, ref_func(q0, q1, t), rtol=0, atol=2e-15)  # the float64 kernels
    assert np.abs(np.linalg.norm(jm.slerp(q0, q1, t), axis=-1) - 1).max() < 1e-14


# ------------------------------------------------------------ any input scale --

FLT_TRUE_MIN, FLT_MAX = float(np.finfo(np.float32).smallest_subnormal), float(np.finfo(np.float32).max)


def check_nlerp_scaled(a, b, t):
    """nlerp and lerp_joints (full, indexed, in place) of float32 a, b of any scale against the
    float64 reference on the same inputs: finite, unit, within NLERP_BOUND (dot-product ties:
    either arc); t = 0 and 1 exactly a and the arc's end."""
    t = np.broadcast_to(np.asarray(t, np.float32), a.shape[:-1])
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    tie = np.abs(np.sum(a64 * b64, -1)) < 1e-6 * np.linalg.norm(a64, axis=-1) * np.linalg.norm(b64, axis=-1)
    inner = (t > 0) & (t < 1)
    results = [jm.nlerp(a, b, t)]
    if (t == t.flat[0]).all() and a.ndim == 2:
        joints, blend = jm.make_joints(a), jm.make_joints(b)
        results.append(jm.lerp_joints(joints, blend, t.flat[0])["q"])
        idx = np.arange(0, len(a), 2)
        work = joints.copy()
        jm.lerp_joints(work, blend, t.flat[0], index=idx, out=work)
        np.testing.assert_array_equal(work["q"][idx], results[-1][idx])
    for out in results:
        np.testing.assert_array_equal(out[t == 0], a[t == 0])
        assert_arc_end(out[t == 1], a[t == 1], b[t == 1])
        out = out[inner]
        assert np.isfinite(out).all()
        assert np.abs(np.linalg.norm(out.astype(np.float64), axis=-1) - 1).max(initial=0) <= NORM_BOUND
        err = np.abs(out - ref.nlerp(a64, b64, t)[inner]).max(axis=-1)
        ti = t[inner][:, None].astype(np.float64)
        arcs = [(1 - ti) * a64[inner] + sign * ti * b64[inner] for sign in (1, -1)]  # float32's range fits float64's
        with np.errstate(invalid="ignore", divide="ignore"):  # the far arc of a = b at t = 1/2 is 0; used for ties only
            arc_err = [np.abs(out - q / np.linalg.norm(q, axis=-1, keepdims=True)).max(axis=-1) for q in arcs]
        assert np.where(tie[inner], np.minimum(*arc_err), err).max(initial=0) <= NLERP_BOUND


@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 9, 16, 17, 33])
@pytest.mark.parametrize("scales", ["smallest denormal", "denormal", "tiny normal", "large", "FLT_MAX",
                                    "one tiny one huge", "one zero"])
def test_nlerp_any_scale(rng, n, scales):
    """nlerp / lerp_joints of quaternions scaled from the smallest denormal to FLT_MAX (they used
    to give inf, NaN or zero there); equal power-of-two scales give the unscaled result."""
    q0, q1 = end_pairs(rng, n)
    s0, s1 = {"smallest denormal": (FLT_TRUE_MIN, FLT_TRUE_MIN), "denormal": (2.0**-140, 2.0**-135),
              "tiny normal": (2.0**-120, 2.0**-120), "large": (2.0**100, 2.0**100), "FLT_MAX": (FLT_MAX, -FLT_MAX),
              "one tiny one huge": (FLT_TRUE_MIN, 2.0**127), "one zero": (0.0, 3.0)}[scales]
    if scales == "smallest denormal":  # components of one smallest denormal: the sign pattern of q
        a, b = (np.sign(q) * np.float32(FLT_TRUE_MIN) for q in (q0, q1))
    else:
        a, b = (q0.astype(np.float64) * s0).astype(np.float32), (q1.astype(np.float64) * s1).astype(np.float32)
    for t in (0.0, 1e-30, 0.3, 1 - 2.0**-24, 1.0, rng.uniform(0, 1, n)):
        check_nlerp_scaled(a, b, t)
    if scales == "one zero":  # two zero quaternions have no direction: NaN, float32 and float64
        for zero in (np.zeros_like(a), np.zeros(a.shape)):
            assert np.isnan(jm.nlerp(zero, zero, 0.5)).all()
        assert np.isnan(jm.lerp_joints(jm.make_joints(a * 0), jm.make_joints(a * 0), 0.5)["q"]).all()
    if scales in ("tiny normal", "large"):
        decided = arc_end(q0, q1)[1]
        np.testing.assert_allclose(jm.nlerp(a, b, 0.3)[decided], jm.nlerp(q0, q1, 0.3)[decided], rtol=0,
                                   atol=NLERP_BOUND)


def test_float64_nlerp_any_scale(rng):
    """The float64 nlerp (jointmath.reference.nlerp) from the smallest float64 denormal to the
    largest float64: equal power-of-two scales change nothing, one tiny and one huge input give
    the exact direction of the sum."""
    q0, q1 = end_pairs(rng, 50)
    q0, q1 = q0.astype(np.float64), q1.astype(np.float64)
    t = rng.uniform(0, 1, 50)
    unscaled = jm.nlerp(q0, q1, t)
    for e in (-1074, -1060, -1022, -600, 600, 1000, 1023):
        a, b = np.ldexp(q0, e), np.ldexp(q1, e)
        out = jm.nlerp(a, b, t)
        assert np.isfinite(out).all()
        if e >= -1022:  # exact scaling (no denormal rounding of the inputs)
            np.testing.assert_allclose(out, unscaled, rtol=0, atol=1e-15)
    # 2^-24 (1, 0, 0, 0) and 2^1000 (0, 1, 0, 0) at the denormal t = 2^-1024: equal terms
    small, huge = np.array([2.0**-24, 0, 0, 0]), np.array([0, 2.0**1000, 0, 0])
    np.testing.assert_allclose(jm.nlerp(small, huge, 2.0**-1024), [0.5**0.5, 0.5**0.5, 0, 0], rtol=1e-15, atol=0)
    # the smallest denormal against 2^1000 at the smallest t: terms 2^-1074 and 2^-74
    np.testing.assert_allclose(jm.nlerp(small * 2.0**-1050, huge, 5e-324), [2.0**-1000, 1, 0, 0], rtol=1e-15, atol=0)


hypothesis = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")
PROPERTY = hypothesis.settings(max_examples=150, deadline=None, derandomize=True,
                               suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture])


def scale_strategy(low, high):
    """finite non-zero scales m 2^e of either sign, e in [low, high]"""
    return st.builds(lambda m, e, negative: (-1) ** negative * m * 2.0**e, st.floats(1, 2, exclude_max=True),
                     st.integers(low, high), st.booleans())


@PROPERTY
@hypothesis.given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), s0=scale_strategy(-149, 126),
                  s1=scale_strategy(-149, 126), same=st.booleans(), t=st.floats(0, 1, width=32))
def test_property_nlerp_any_float32_scale(seed, n, s0, s1, same, t):
    """Any scales 2^-149 ... 2^127 with random signs, equal or one per input, any t: nlerp and
    lerp_joints stay within NLERP_BOUND of the float64 reference, t = 1 ends the arc."""
    rng = np.random.default_rng(seed)
    q0, q1 = end_pairs(rng, n)
    a = (q0.astype(np.float64) * s0).astype(np.float32)
    b = (q1.astype(np.float64) * (s0 if same else s1)).astype(np.float32)
    check_nlerp_scaled(a, b, t)
    check_nlerp_scaled(a, b, rng.uniform(0, 1, n).astype(np.float32))


@PROPERTY
@hypothesis.given(seed=st.integers(0, 2**32 - 1), s0=scale_strategy(-1074, 1022), s1=scale_strategy(-1074, 1022),
                  t=st.floats(0, 1))
def test_property_nlerp_any_float64_scale(seed, s0, s1, t):
    """The float64 nlerp at any scales: unit, finite, the arc's end at t = 1, and the direction of
    the exact sum (1 - t) q0 +- t q1 (checked on the inputs rescaled by their exponent difference)."""
    rng = np.random.default_rng(seed)
    q0, q1 = end_pairs(rng, 8)
    q0, q1 = q0.astype(np.float64), q1.astype(np.float64)
    a, b = q0 * s0, q1 * s1
    out = jm.nlerp(a, b, t)
    if t == 1:
        assert_arc_end(out, a, b)
        return
    if t == 0:
        np.testing.assert_array_equal(out, a)
        return
    assert np.isfinite(out).all()
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1, rtol=0, atol=1e-15)
    # the same sum in exact rational arithmetic for one quaternion pair
    from fractions import Fraction
    k = int(rng.integers(8))
    d = sum(Fraction(x) * Fraction(y) for x, y in zip(a[k], b[k]))
    if not arc_end(a[k], b[k])[1]:
        return  # a tie (the orthogonal pair): either arc
    sign = -1 if d < 0 else 1
    exact = [(1 - Fraction(t)) * Fraction(x) + sign * Fraction(t) * Fraction(y) for x, y in zip(a[k], b[k])]
    big = max(abs(c) for c in exact)
    direction = np.array([float(c / big) for c in exact])
    np.testing.assert_allclose(out[k], direction / np.linalg.norm(direction), rtol=0, atol=1e-14)


@PROPERTY
@hypothesis.given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 40))
def test_property_t1_ends_the_arc(seed, n):
    """At t = 1 every function returns exactly the arc's end, on any pairs."""
    rng = np.random.default_rng(seed)
    q0, q1 = random_unit_quats(rng, n), random_unit_quats(rng, n)
    for func in (jm.slerp, jm.nlerp):
        assert_arc_end(func(q0, q1, 1.0), q0, q1)
        assert_arc_end(func(q0, q1, np.ones(n)), q0, q1)
    for func in (jm.slerp_joints, jm.lerp_joints):
        assert_arc_end(func(jm.make_joints(q0), jm.make_joints(q1), 1.0)["q"], q0, q1)


# ------------------------------------------------------------- joint records --


@pytest.mark.parametrize("n", SIZES)
def test_joints_match_reference(rng, n):
    joints, blend = random_joints(rng, n), random_joints(rng, n)
    t = float(rng.uniform(0, 1))
    for func, ref_func, bound in ((jm.slerp_joints, ref.slerp_joints, SLERP_BOUND),
                                  (jm.lerp_joints, ref.lerp_joints, NLERP_BOUND)):
        out = func(joints, blend, t)
        assert out.dtype == jm.JOINT_QUAT and out.shape == (n,)
        expected = ref_func(joints, blend, np.float32(t))
        assert np.abs(out["q"] - expected["q"]).max(initial=0) <= bound
        assert np.abs(out["t"] - expected["t"]).max(initial=0) <= 1e-5  # |t| <= 100: a few ulp
        # the rotation is exactly the array function's
        np.testing.assert_array_equal(out["q"], (jm.slerp if func is jm.slerp_joints else jm.nlerp)(
            joints["q"], blend["q"], np.float32(t)))


def test_joints_hard_pairs(rng):
    q0, q1 = hard_pairs(rng)
    joints, blend = jm.make_joints(q0), jm.make_joints(q1)
    for t in (1e-6, 0.3, 0.5, 0.999999):
        out = jm.slerp_joints(joints, blend, t)
        assert np.isfinite(out["q"]).all()
        assert arc_error(out["q"], q0, q1, np.float32(t), ref.slerp) <= SLERP_BOUND
        assert np.abs(np.linalg.norm(out["q"].astype(np.float64), axis=-1) - 1).max() <= NORM_BOUND
        out = jm.lerp_joints(joints, blend, t)
        assert arc_error(out["q"], q0, q1, np.float32(t), ref.nlerp) <= NLERP_BOUND


def arc_end(q0, q1):
    """sign(q0 . q1) q1 (the end of the shortest arc, -q1 where q0 . q1 < 0) and the mask of the
    pairs whose dot product is not a tie (|q0 . q1| >= 1e-6 |q0| |q1|, where rounding decides)."""
    # each divided by its largest |component| first: the sign of a float64 dot product of float64
    # inputs at any scale (its products could underflow)
    a, b = (np.asarray(q, np.float64) for q in (q0, q1))
    a, b = (q / np.maximum(np.abs(q).max(axis=-1, keepdims=True, initial=0), 5e-324) for q in (a, b))
    d = np.sum(a * b, axis=-1)
    end = np.where((d < 0)[..., None], -np.asarray(q1), q1)
    return end, np.abs(d) >= 1e-6 * np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)


def assert_arc_end(out, q0, q1):
    """out is exactly +q1 or -q1, and -q1 where q0 . q1 < 0 (ties: either)."""
    end, decided = arc_end(q0, q1)
    exact = (out == end).all(axis=-1) | ((out == -end).all(axis=-1) & ~decided)
    assert exact.all(), f"{(~exact).sum()} of {exact.size} results are not the arc's end"


def test_endpoints_are_exact(rng):
    joints, blend = random_joints(rng, 37), random_joints(rng, 37)
    joints["t"][:, 3] = 0.5  # every float is copied, the 4th translation lane too
    blend["t"][:, 3] = -0.0
    for func in (jm.slerp_joints, jm.lerp_joints):
        np.testing.assert_array_equal(func(joints, blend, 0.0), joints)
        out = func(joints, blend, 1)
        assert_arc_end(out["q"], joints["q"], blend["q"])
        np.testing.assert_array_equal(out["t"].view(np.uint32), blend["t"].view(np.uint32))  # -0.0 too
        idx = np.array([3, 0, 36])
        out = func(joints, blend, 1.0, index=idx)
        assert_arc_end(out["q"][idx], joints["q"][idx], blend["q"][idx])
        np.testing.assert_array_equal(out["t"][idx], blend["t"][idx])
        np.testing.assert_array_equal(np.delete(out, idx), np.delete(joints, idx))
        np.testing.assert_array_equal(func(joints, blend, 0.0, index=idx), joints)
    q0, q1 = joints["q"], blend["q"]
    t = np.where(np.arange(37) % 3 == 0, 0.0, np.where(np.arange(37) % 3 == 1, 1.0, 0.5)).astype(np.float32)
    for func in (jm.slerp, jm.nlerp):
        out = func(q0, q1, t)
        np.testing.assert_array_equal(out[t == 0], q0[t == 0])
        assert_arc_end(out[t == 1], q0[t == 1], q1[t == 1])


def end_pairs(rng, n):
    """n pairs, about half with q0 . q1 < 0; the first three antipodal, identical, orthogonal."""
    q0, q1 = random_unit_quats(rng, n), random_unit_quats(rng, n)
    special = [-q0[0], q0[1], [-q0[2, 1], q0[2, 0], -q0[2, 3], q0[2, 2]]] if n >= 3 else [-q0[k] for k in range(n)]
    q1[:len(special)] = special
    return q0, q1


@pytest.mark.parametrize("n", [n for n in SIZES if n])
def test_t1_ends_the_arc_joint_lists(rng, n):
    """slerp_joints / lerp_joints at t = 1: q is exactly the arc's end (-blend.q where the dot
    product is negative), t exactly blend's; full and indexed lists, in place and separate out=."""
    q0, q1 = end_pairs(rng, n)
    joints, blend = jm.make_joints(q0, rng.uniform(-9, 9, (n, 3))), jm.make_joints(q1, rng.uniform(-9, 9, (n, 3)))
    idx = np.sort(rng.choice(n, n // 2, replace=False)) if n else np.array([], np.intp)
    rest = np.setdiff1d(np.arange(n), idx)
    for func in (jm.slerp_joints, jm.lerp_joints):
        for t in (1, 1.0, np.float32(1)):
            out = func(joints, blend, t)
            assert_arc_end(out["q"], q0, q1)
            np.testing.assert_array_equal(out["t"], blend["t"])
            separate = np.zeros(n, jm.JOINT_QUAT)
            assert func(joints, blend, t, out=separate) is separate
            np.testing.assert_array_equal(separate, out)
            work = joints.copy()
            func(work, blend, t, out=work)
            np.testing.assert_array_equal(work, out)
            work = blend.copy()
            func(joints, work, t, out=work)
            np.testing.assert_array_equal(work, out)
            for in_place in (False, True):
                work = joints.copy()
                result = func(work, blend, t, index=idx, out=work if in_place else None)
                np.testing.assert_array_equal(result[idx], out[idx])
                np.testing.assert_array_equal(result[rest], joints[rest])


@pytest.mark.parametrize("n", [n for n in SIZES if n])
def test_t1_ends_the_arc_arrays(rng, n):
    """slerp / nlerp at t = 1, float32 and float64: exactly q1 or -q1 (where q0 . q1 < 0), with t
    a scalar, an array of ones or an array mixing 1 with other fractions; in place and out=."""
    q0, q1 = end_pairs(rng, n)
    mixed = np.where(np.arange(n) % 2 == 0, 1.0, rng.uniform(0, 1, n)).astype(np.float32)
    ones = mixed == 1
    for dtype in (np.float32, np.float64):
        a, b = q0.astype(dtype), q1.astype(dtype)
        for func in (jm.slerp, jm.nlerp):
            for t in (1.0, 1, np.ones(n, np.float32), np.ones((n, 1), dtype)[:, 0]):
                assert_arc_end(func(a, b, t), a, b)
            out = func(a, b, mixed)
            assert_arc_end(out[ones], a[ones], b[ones])
            separate = np.empty_like(a)
            func(a, b, mixed, out=separate)
            np.testing.assert_array_equal(separate, out)
            work = a.copy()
            func(work, b, mixed, out=work)
            np.testing.assert_array_equal(work, out)


@pytest.mark.parametrize("n", [2, 5, 17, 64])
def test_sampled_curve_stays_on_one_hemisphere(rng, n):
    """slerp / nlerp over linspace(0, 1, n): every sample on the hemisphere of q0's arc, the last
    one too (it used to jump to +q1): consecutive samples have positive dot products."""
    q0, q1 = random_unit_quats(rng, 200), random_unit_quats(rng, 200)
    q1[:3] = -q0[:3]  # antipodal pairs: the curve stays at q0, then ends at -q1 = q0
    for dtype in (np.float32, np.float64):
        for func in (jm.slerp, jm.nlerp):
            curve = func(q0.astype(dtype), q1.astype(dtype), np.linspace(0, 1, n)[:, None])
            step = np.sum(curve[1:].astype(np.float64) * curve[:-1], axis=-1)
            assert (step > 0).all()
            assert_arc_end(curve[-1], q0, q1)


def test_index_selects_joints_in_every_frame(rng):
    frames, n = 5, 23
    joints = random_joints(rng, frames * n).reshape(frames, n)
    blend = random_joints(rng, frames * n).reshape(frames, n)
    for idx in ([7], [0, 22, 5, 11, 3, 17, 9, 1, 2, 4, 6, 8, 10, 12, 13, 14, 15, 16, 18, 19, 20, 21],
                np.arange(0, n, 2, dtype=np.int32), np.array([], np.int64), []):
        for func, ref_func, bound in ((jm.slerp_joints, ref.slerp_joints, SLERP_BOUND),
                                      (jm.lerp_joints, ref.lerp_joints, NLERP_BOUND)):
            out = func(joints, blend, 0.4, index=idx)
            sel = np.asarray(idx, np.intp)
            expected = ref_func(joints, blend, np.float32(0.4), index=sel)
            assert np.abs(out["q"] - expected["q"]).max() <= bound
            assert np.abs(out["t"] - expected["t"]).max() <= 1e-5
            # selected joints as without index, the others copied bit for bit
            np.testing.assert_array_equal(out[:, sel], func(joints[:, sel], blend[:, sel], 0.4))
            rest = np.setdiff1d(np.arange(n), sel)
            np.testing.assert_array_equal(out[:, rest], joints[:, rest])


@pytest.mark.parametrize("kind", ["every second", "sorted subset", "shuffled", "last joints", "runs and long gaps",
                                  "ends only", "strided out"])
def test_index_over_many_blocks(rng, kind):
    """Frames of many blocks, several kinds of index, a fresh or strided out: the selected joints
    as without index, the others copied bit for bit."""
    frames, n = 3, 301
    joints, blend = (random_joints(rng, frames * n).reshape(frames, n) for _ in range(2))
    idx = {"every second": np.arange(0, n, 2), "sorted subset": np.sort(rng.choice(n, 170, replace=False)),
           "shuffled": rng.permutation(n)[:170], "last joints": np.arange(n - 40, n),
           "runs and long gaps": np.r_[0:20, 50:60, 200:201, 290:300], "ends only": np.array([0, n - 1]),
           "strided out": np.arange(1, n, 3)}[kind]
    out = np.zeros((frames, 2 * n), jm.JOINT_QUAT)[:, ::2] if kind == "strided out" else None
    result = jm.slerp_joints(joints, blend, 0.35, index=idx, out=out)
    np.testing.assert_array_equal(result[:, idx], jm.slerp_joints(joints[:, idx], blend[:, idx], 0.35))
    rest = np.setdiff1d(np.arange(n), idx)
    np.testing.assert_array_equal(result[:, rest], joints[:, rest])


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("func", [jm.slerp_joints, jm.lerp_joints])
def test_index_runs_and_scattered_blocks(rng, func, in_place):
    """Indexes whose blocks of W selected joints are runs of consecutive joints (read and written
    as the full call's blocks) next to scattered blocks, at every offset, in place and with a
    separate out=: bit-identical to the full call on the selected joints, and the other joints
    copied (separate out) or not written at all (in place: their bytes stay as they were)."""
    frames, n = 2, 211
    joints, blend = (random_joints(rng, frames * n).reshape(frames, n) for _ in range(2))
    indexes = [np.arange(3, 3 + 16), np.arange(1, 1 + 33), np.r_[0:16, 17:33, 40:41, 50:66, 70:200:3],
               np.r_[5:8, 9:41, 100:101, 102:150], np.arange(0, n, 2), np.arange(n), np.arange(n - 17, n)]
    for idx in indexes:
        rest = np.setdiff1d(np.arange(n), idx)
        expected = func(joints[:, idx], blend[:, idx], 0.45)
        if in_place:
            work = joints.copy()
            # the unselected joints hold a marker (NaN bits) the call must leave as it is
            work["q"][:, rest] = np.float32("nan")
            marker = work[:, rest].copy()
            assert func(work, blend, 0.45, index=idx, out=work) is work
            np.testing.assert_array_equal(work[:, idx], expected)
            assert work[:, rest].tobytes() == marker.tobytes()
        else:
            result = func(joints, blend, 0.45, index=idx)
            np.testing.assert_array_equal(result[:, idx], expected)
            np.testing.assert_array_equal(result[:, rest], joints[:, rest])


def half_run_blocks(n_blocks, n_runs):
    """An index of n_blocks blocks of 16 selected joints, the first n_runs of them runs of 16
    consecutive joints and the others every second joint, the blocks apart by gaps of 3."""
    parts, start = [], 0
    for block in range(n_blocks):
        step = 1 if block < n_runs else 2
        parts.append(start + step * np.arange(16))
        start = parts[-1][-1] + 4
    return np.concatenate(parts)


def scattered_indexes(rng, n):
    """Indexes of partial-body blends over n joints: every second and third joint from 0 and 1,
    random subsets of several densities, blocks of 16 half runs (the AVX-512 path's own kernel)
    and one run fewer (its AVX2 kernel), indexes at both frame edges, every second joint after
    irregular blocks (csrc/partial_body.c every_second_joint_block: the gap before each block), and
    blocks of each vector width that span as many joints as every second joint but are not."""
    yield from (np.arange(0, n, 2), np.arange(1, n, 2), np.arange(0, n, 3), np.arange(2, n, 3))
    for size in (1, 15, 16, 17, n // 4, n // 2, n - 16, n - 1):
        yield np.sort(rng.choice(n, size, replace=False))
    yield from (half_run_blocks(4, 2), half_run_blocks(4, 1), half_run_blocks(5, 3), half_run_blocks(5, 2))
    yield np.r_[0:32:2, n - 32:n:2]
    yield np.r_[0, 2:n - 1:2, n - 1]
    yield np.r_[1, 4, 5, 9, 12:44:2, 45, 47, 48, 52:n - 1:2]  # every second joint after irregular blocks
    for width in (4, 8, 16):  # blocks of a path's width spanning 2 (width - 1) joints, not evenly spaced
        block = np.r_[0:2 * width - 4:2, 2 * width - 3, 2 * width - 2]
        yield np.concatenate([block + 2 * width * b for b in range(n // (2 * width))])


@pytest.mark.parametrize("func, ref_func, bound", [(jm.slerp_joints, ref.slerp_joints, SLERP_BOUND),
                                                   (jm.lerp_joints, ref.lerp_joints, NLERP_BOUND)])
def test_scattered_and_dense_indexes(rng, func, ref_func, bound):
    """Scattered, dense and mixed indexes (scattered_indexes) in frames of 137 joints: against the
    float64 reference, bit-identical to the call without index on the selected joints, the others
    copied bit for bit (separate out=), left as they were (in place: their bytes stay), and with
    out=blend (the unselected joints from joints)."""
    frames, n = 3, 137
    joints, blend = (random_joints(rng, frames * n).reshape(frames, n) for _ in range(2))
    for idx in scattered_indexes(rng, n):
        assert idx.max() < n and (np.diff(idx) > 0).all()
        rest = np.setdiff1d(np.arange(n), idx)
        full = func(joints, blend, 0.3)
        result = func(joints, blend, 0.3, index=idx)
        expected = ref_func(joints, blend, np.float32(0.3), index=idx)
        assert np.abs(result["q"] - expected["q"]).max() <= bound
        assert np.abs(result["t"] - expected["t"]).max() <= 1e-4
        np.testing.assert_array_equal(result[:, idx], full[:, idx])
        np.testing.assert_array_equal(result[:, rest], joints[:, rest])
        work = joints.copy()
        work["q"][:, rest] = np.float32("nan")
        marker = work[:, rest].copy()
        assert func(work, blend, 0.3, index=idx, out=work) is work
        np.testing.assert_array_equal(work[:, idx], full[:, idx])
        assert work[:, rest].tobytes() == marker.tobytes()
        b = blend.copy()
        assert func(joints, b, 0.3, index=idx, out=b) is b
        np.testing.assert_array_equal(b, result)


def placed(records, offset):
    """A copy of records that starts `offset` bytes past a 64-byte boundary (a cache line)."""
    buf = np.zeros(records.nbytes + 128, np.uint8)
    start = -buf.ctypes.data % 64 + offset
    view = buf[start:start + records.nbytes].view(records.dtype).reshape(records.shape)
    view[...] = records
    return view


@pytest.mark.parametrize("func", [jm.slerp_joints, jm.lerp_joints])
def test_every_second_joint_at_every_placement(rng, func):
    """Every second joint (and every second joint after irregular blocks) with joints and out at
    each 16-byte offset in a cache line, over frames of an odd number of joints (so the parity of
    the unselected joints' offsets alternates): on AVX2 / AVX-512, where out's unselected records
    cross cache lines, the stride-two blocks copy them by 128-bit halves (csrc/partial_body.c
    gap_copies_cross). Bit-identical to the call without index on the selected joints, the others
    copied bit for bit."""
    frames, n = 3, 137
    joints, blend = (random_joints(rng, frames * n).reshape(frames, n) for _ in range(2))
    for idx in (np.arange(0, n, 2), np.arange(1, n, 2), np.r_[1, 4, 5, 9, 12:n - 1:2]):
        rest = np.setdiff1d(np.arange(n), idx)
        expected = func(joints[:, idx], blend[:, idx], 0.3)
        for joints_offset in (0, 16, 32, 48):
            placed_joints = placed(joints, joints_offset)
            for out_offset in (0, 16, 32, 48):
                out = placed(np.zeros_like(joints), out_offset)
                assert func(placed_joints, blend, 0.3, index=idx, out=out) is out
                np.testing.assert_array_equal(out[:, idx], expected)
                np.testing.assert_array_equal(out[:, rest], joints[:, rest])


@pytest.mark.parametrize("in_place", [False, True])
def test_long_irregular_index(rng, in_place):
    """An index of more than 4,096 joints (csrc/partial_body.c SPAN_COPY_MIN_INDEX) whose blocks are
    random subsets (a separate out copies their whole spans before the blocks' stores), every
    second joint and runs, into an out that holds other values: the selected joints as without
    index, the others copied from joints (or left as they were, in place)."""
    frames, n = 2, 12_011
    joints, blend = (random_joints(rng, frames * n).reshape(frames, n) for _ in range(2))
    idx = np.r_[np.sort(rng.choice(np.arange(0, 5000), 2500, replace=False)), 5000:7000:2, 7001:7200,
                np.sort(rng.choice(np.arange(7300, n), 1700, replace=False))]
    assert len(idx) >= 4096 and (np.diff(idx) > 0).all()
    rest = np.setdiff1d(np.arange(n), idx)
    for func in (jm.slerp_joints, jm.lerp_joints):
        expected = func(joints[:, idx], blend[:, idx], 0.55)
        out = joints.copy() if in_place else random_joints(rng, frames * n).reshape(frames, n)
        marker = out[:, rest].copy()
        assert func(out if in_place else joints, blend, 0.55, index=idx, out=out) is out
        np.testing.assert_array_equal(out[:, idx], expected)
        np.testing.assert_array_equal(out[:, rest], joints[:, rest])
        assert out[:, rest].tobytes() == (marker.tobytes() if in_place else joints[:, rest].tobytes())


PREFETCH_MIN_RECORDS = 32768  # csrc/joint_blocks.h: calls this large prefetch ahead (PREFETCH_AHEAD = 64)
PREFETCH_SPAN_MAX_GAP = 4  # csrc/partial_body.c: an index over >= 1/4 of the joints prefetches whole spans
PREFETCH_FAR_MIN_RECORDS = 131072  # csrc/partial_body.c: from this many records on, in place, AVX2 and AVX-512 also
#                                   request lines far ahead


@pytest.mark.parametrize("records", [PREFETCH_MIN_RECORDS, PREFETCH_FAR_MIN_RECORDS])
@pytest.mark.parametrize("spacing", [2, 2 * PREFETCH_SPAN_MAX_GAP])
@pytest.mark.parametrize("n_index", [65, 68, 72, 80, 81, 20_000])
def test_lists_beyond_the_prefetch_threshold(rng, n_index, spacing, records):
    """Calls large enough for the kernels' software prefetch: index lengths at its edge on every
    vector width (64 + 1, 4, 8, 16 entries) over many frames, and one long frame; a dense index
    (about every second joint: the span prefetch, up to the frame's end) and a sparse one (about
    every eighth: by entry); full lists, in place and with a separate out (in place from
    PREFETCH_FAR_MIN_RECORDS on, AVX2 and AVX-512 also request lines far ahead), against the
    float64 reference and the unindexed call."""
    n_joints = max(100 * spacing // 2, spacing * n_index)
    frames = -(-records // n_joints)
    joints, blend = (random_joints(rng, frames * n_joints).reshape(frames, n_joints) for _ in range(2))
    if n_index < 100:
        idx = np.sort(np.r_[rng.choice(n_joints - 1, n_index - 1, replace=False), n_joints - 1])
    else:
        idx = np.arange(0, n_joints, spacing)
    for func, ref_func, bound in ((jm.slerp_joints, ref.slerp_joints, SLERP_BOUND),
                                  (jm.lerp_joints, ref.lerp_joints, NLERP_BOUND)):
        full = func(joints, blend, 0.6)
        assert np.abs(full["q"] - ref_func(joints, blend, np.float32(0.6))["q"]).max() <= bound
        whole = joints.copy()
        func(whole, blend, 0.6, out=whole)
        np.testing.assert_array_equal(whole, full)
        out = func(joints, blend, 0.6, index=idx)
        np.testing.assert_array_equal(out[:, idx], full[:, idx])
        np.testing.assert_array_equal(np.delete(out, idx, axis=1), np.delete(joints, idx, axis=1))
        work = joints.copy()
        func(work, blend, 0.6, index=idx, out=work)
        np.testing.assert_array_equal(work, out)


FLAT_CHUNK = 256  # csrc/partial_body.c: an index of fewer entries over several frames runs as one over the flat lists


SPARSE_BLEND_MIN_RECORDS = 524288  # csrc/partial_body.c: with out=, lists this long and an index leaving lines of
#                                   blend unread request its read lines by entry (AVX2 / AVX-512)
SHORT_FRAME_CASES = [(31, "first half"), (31, "every second"), (31, "random 13"), (31, "one joint"),
                     (31, "all joints"), (8, "every second"), (1, "all joints"), (300, f"random {FLAT_CHUNK - 1}"),
                     (300, f"random {FLAT_CHUNK}")]


@pytest.mark.parametrize("n_joints, kind, records",
                         [(*case, records) for records in (3000, PREFETCH_MIN_RECORDS + 1000)
                          for case in SHORT_FRAME_CASES]
                         + [(31, "first half", SPARSE_BLEND_MIN_RECORDS + 1000),
                            (600, "first third", SPARSE_BLEND_MIN_RECORDS + 1000),
                            (31, "every second", SPARSE_BLEND_MIN_RECORDS + 1000)])
def test_index_over_many_short_frames(rng, n_joints, kind, records):
    """Many frames of a clip-like length with an index of under FLAT_CHUNK entries: the frames'
    entries run one after another over the flat lists (blocks across frame ends, built in chunks,
    the rest of a chunk carried to the next); with and without the prefetch, a dense and a sparse
    index, the threshold's both sides; beyond SPARSE_BLEND_MIN_RECORDS with a separate out, the
    first half of 31 joints and the first third of 600 (blend's read lines requested whole frames
    ahead, up to the lists' end: frames of 31 two and 17 ahead, of 600 one) and every second joint
    (the span requests); in place and with a separate out, t = 0.6 and the arc's end t = 1: the
    selected joints of every frame as the unindexed call, the others copied bit for bit."""
    frames = -(-records // n_joints)
    joints, blend = (random_joints(rng, frames * n_joints).reshape(frames, n_joints) for _ in range(2))
    if kind.startswith("random"):
        idx = np.sort(rng.choice(n_joints, int(kind.split()[1]), replace=False))
    else:
        idx = {"first half": np.arange(n_joints // 2), "first third": np.arange(n_joints // 3),
               "every second": np.arange(0, n_joints, 2), "one joint": [n_joints - 1],
               "all joints": np.arange(n_joints)}[kind]
    for func in (jm.slerp_joints, jm.lerp_joints):
        for t in (0.6, 1.0):
            full = func(joints, blend, t)
            out = func(joints, blend, t, index=idx)
            np.testing.assert_array_equal(out[:, idx], full[:, idx])
            np.testing.assert_array_equal(np.delete(out, idx, axis=1), np.delete(joints, idx, axis=1))
            work = joints.copy()
            func(work, blend, t, index=idx, out=work)
            np.testing.assert_array_equal(work, out)


@pytest.mark.parametrize("where", [1, 2, 7, 8, 9, 16, 17, 150, 298, 299])
def test_long_index_checked_everywhere(rng, where):
    """A long index (the vectorised order and range check of every path) that goes wrong at one
    position: a repeat or a value out of range is refused, a step back is a valid index in
    another order and selects the same joints."""
    n = 600
    joints, blend = random_joints(rng, n), random_joints(rng, n)
    good = np.arange(0, n, 2)[:300]
    expected = jm.slerp_joints(joints, blend, 0.25, index=good)
    repeated = good.copy()
    repeated[where] = repeated[where - 1]
    with pytest.raises(ValueError, match=f"index value {repeated[where]} appears more than once"):
        jm.slerp_joints(joints, blend, 0.25, index=repeated)
    for bad in (n, -2, np.iinfo(np.intp).max, np.iinfo(np.intp).min):
        out_of_range = good.copy()
        out_of_range[where] = bad
        work = joints.copy()
        with pytest.raises(ValueError, match=f"index value {bad} is out of range for {n} joints"):
            jm.slerp_joints(work, blend, 0.25, index=out_of_range, out=work)
        np.testing.assert_array_equal(work, joints)  # nothing written
    swapped = good.copy()
    swapped[[where - 1, where]] = swapped[[where, where - 1]]
    np.testing.assert_array_equal(jm.slerp_joints(joints, blend, 0.25, index=swapped), expected)
    np.testing.assert_array_equal(jm.slerp_joints(joints, blend, 0.25, index=good[::-1]), expected)


def test_unsigned_index_values_beyond_intp_are_reported_as_given():
    joints = random_joints(np.random.default_rng(0), 5)
    for value in (2**63, 2**64 - 1):
        with pytest.raises(ValueError, match=rf"index value {value} is out of range for 5 joints"):
            jm.slerp_joints(joints, joints, 0.5, index=np.array([value], np.uint64))
        with pytest.raises(ValueError, match=rf"index value {value} is out of range for 5 joints"):
            jm.joint_index(np.array([1, value], np.uint64), 5)
    with pytest.raises(ValueError, match=r"index value -3 is out of range for 5 joints"):
        jm.slerp_joints(joints, joints, 0.5, index=[-3])


def test_joint_index_is_checked_once_and_read_only():
    """joint_index: the positions checked as any index, sorted, in a read-only intp array with a
    copy of its own that NumPy refuses to make writeable (so the calls can trust it unchecked)."""
    source = np.array([9, 2, 4], np.int16)
    index = jm.joint_index(source, 10)
    assert index.dtype == np.intp and index.tolist() == [2, 4, 9] and not index.flags.writeable
    source[0] = 3
    assert index.tolist() == [2, 4, 9]  # a copy
    with pytest.raises(ValueError, match="read-only"):
        index[0] = 1
    with pytest.raises(ValueError, match="WRITEABLE"):
        index.setflags(write=True)
    assert not np.lib.stride_tricks.as_strided(index, writeable=True).flags.writeable
    copy = pickle.loads(pickle.dumps(index))  # a plain array again, checked on every call
    assert copy.tolist() == [2, 4, 9] and copy.flags.writeable
    assert jm.joint_index([], 0).shape == (0,) and jm.joint_index((1, 0), n_joints=2).tolist() == [0, 1]
    with pytest.raises(ValueError, match="index value 10 is out of range for 10 joints"):
        jm.joint_index([0, 10], 10)
    with pytest.raises(ValueError, match="index value 4 appears more than once"):
        jm.joint_index([4, 1, 4], 10)
    with pytest.raises(TypeError, match="index must be an array of integers, got dtype float64"):
        jm.joint_index([1.0], 10)
    with pytest.raises(ValueError, match=r"index must be a 1-D array of joint positions, got shape \(1, 2\)"):
        jm.joint_index([[0, 1]], 10)
    for n_joints in (2.0, True, "3", None):
        with pytest.raises(TypeError, match="n_joints must be an int, got"):
            jm.joint_index([0], n_joints)
    for n_joints in (-1, 10**400, np.iinfo(np.intp).max):
        with pytest.raises(ValueError, match="n_joints must be >= 0 and below"):
            jm.joint_index([0], n_joints)
    with pytest.raises(TypeError, match="missing required argument 'n_joints'"):
        jm.joint_index([0])
    # positions far above any list: a table up to the largest position, or a sort when sparse
    assert jm.joint_index([5, 1], 1 << 60).tolist() == [1, 5]
    assert jm.joint_index([1 << 50, 3, 1 << 40], 1 << 60).tolist() == [3, 1 << 40, 1 << 50]
    with pytest.raises(ValueError, match=f"index value {1 << 40} appears more than once"):
        jm.joint_index([1 << 50, 1 << 40, 3, 1 << 40, 1 << 50], 1 << 60)


@pytest.mark.parametrize("func", [jm.slerp_joints, jm.lerp_joints])
def test_joint_index_blends_as_the_plain_index(rng, func):
    """A joint_index selects what the same plain index does, bit for bit (separate out=, in place,
    many frames); on fewer joints than it reaches it is refused as any index; its views and copies
    (reversed, sliced, re-typed, reshaped) are checked as plain indexes, never taken as checked."""
    frames, n = 3, 137
    joints, blend = (random_joints(rng, frames * n).reshape(frames, n) for _ in range(2))
    for positions in scattered_indexes(rng, n):
        plain = np.array(positions[::-1])
        index = jm.joint_index(plain, n)
        np.testing.assert_array_equal(func(joints, blend, 0.3, index=index), func(joints, blend, 0.3, index=plain))
        work, expected = joints.copy(), joints.copy()
        func(work, blend, 0.3, index=index, out=work)
        func(expected, blend, 0.3, index=plain, out=expected)
        np.testing.assert_array_equal(work, expected)
    index = jm.joint_index([1, 3, 8], 9)
    with pytest.raises(ValueError, match="index value 8 is out of range for 6 joints"):
        func(joints[:, :6], blend[:, :6], 0.5, index=index)
    np.testing.assert_array_equal(func(joints, blend, 0.5, index=index), func(joints, blend, 0.5, index=[1, 3, 8]))
    index = jm.joint_index(np.arange(0, 40, 2), n)
    for view in (index[::-1], index[1:], index[::2], index.copy(), index.view(np.uint64 if np.intp(0).itemsize == 8
                                                                              else np.uint32)):
        np.testing.assert_array_equal(func(joints, blend, 0.5, index=view),
                                      func(joints, blend, 0.5, index=np.array(view, np.intp)))
    # the joint_index array itself re-shaped or re-typed in place: no longer the positions checked
    index.shape = (2, 10)
    with pytest.raises(ValueError, match=r"index must be a 1-D array of joint positions, got shape \(2, 10\)"):
        func(joints, blend, 0.5, index=index)
    index = jm.joint_index(np.arange(0, 40, 2), n)
    index.dtype = np.int32 if np.intp(0).itemsize == 8 else np.int16  # 0, 0, 2, 0, 4, 0, ...
    with pytest.raises(ValueError, match="index value 0 appears more than once"):
        func(joints, blend, 0.5, index=index)
    index = jm.joint_index(np.arange(0, 40, 2), n)
    index.dtype = np.float64 if np.intp(0).itemsize == 8 else np.float32
    with pytest.raises(TypeError, match="index must be an array of integers"):
        func(joints, blend, 0.5, index=index)
    index = jm.joint_index(np.arange(0, 40, 2), n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # setting strides is deprecated (NumPy 2.4)
        index.strides = (0,)  # reads index[0] 20 times
    with pytest.raises(ValueError, match="index value 0 appears more than once"):
        func(joints, blend, 0.5, index=index)


def test_joint_index_is_not_copied_where_the_gil_is_released():
    """A call large enough to release the GIL copies a plain index first (another thread could
    change it during the kernel), and uses a joint_index as it is: no allocation at all."""
    tracemalloc = pytest.importorskip("tracemalloc")
    n = 1 << 18
    joints = np.zeros(n, jm.JOINT_QUAT)
    joints["q"][:, 3] = 1
    out = np.empty_like(joints)
    plain = np.arange(0, n, 2)
    peaks = []
    for index in (plain, jm.joint_index(plain, n)):
        released = _core._gil_releases()
        tracemalloc.start()
        try:
            jm.slerp_joints(joints, joints, 0.5, index=index, out=out)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert _core._gil_releases() == released + 1
    assert peaks[0] >= plain.nbytes and peaks[1] == 0, peaks


def test_index_in_another_order_dense_and_sparse(rng):
    """An index in another order is checked in full and sorted: a dense one through a table of its
    positions (the first repeat in the given order is reported), a sparse one over a long list
    (largest position far above 64 per entry) by sorting a copy; either selects the same joints
    as the sorted index, and the caller's array is not reordered."""
    n = 100_003
    joints, blend = random_joints(rng, n), random_joints(rng, n)
    for positions in ([n - 1, 0, 7], [9, 3, 100, 4], list(rng.permutation(n)[:5000])):
        given = np.array(positions)
        expected = jm.slerp_joints(joints, blend, 0.4, index=np.sort(given))
        np.testing.assert_array_equal(jm.slerp_joints(joints, blend, 0.4, index=given), expected)
        assert given.tolist() == list(positions)
    with pytest.raises(ValueError, match="index value 9 appears more than once"):
        jm.slerp_joints(joints, blend, 0.4, index=[3, 9, 9, 3])
    with pytest.raises(ValueError, match=f"index value {n - 1} appears more than once"):
        jm.slerp_joints(joints, blend, 0.4, index=[n - 1, 5, n - 1])
    # positions of 2^62 and more (joint_index's n_joints may be that large; the check of the paths
    # without a 64-bit compare sends them to the full check): accepted and sorted as any
    top = np.iinfo(np.intp).max
    huge = np.array([3, 1 << 62, top - 2], np.intp) if top > 1 << 62 else np.array([3, 1 << 30, top - 2], np.intp)
    for given in (huge, huge[::-1], huge[[1, 0, 2]]):
        np.testing.assert_array_equal(jm.joint_index(given, top - 1), huge)
    with pytest.raises(ValueError, match=f"index value {top - 2} is out of range for {top - 2} joints"):
        jm.joint_index(huge, top - 2)
    if top > 1 << 62:  # steps of at most 2^62 that wrap around through the negative values back
        # to a valid last position (each step "up" as 64-bit unsigned differences); 6 and 8 entries:
        # the wrap in a vector path's last, partial step and in its whole steps
        for tail in ([], [2, 3]):
            wrapped = [0, 1 << 62, top - 2, -top + 1, -(1 << 62) + 2, 1] + tail
            with pytest.raises(ValueError, match=f"index value {-top + 1} is out of range"):
                jm.joint_index(wrapped, top - 1)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 100])
def test_index_in_place_like_the_seed(rng, n):
    joints, blend = random_joints(rng, n), random_joints(rng, n)
    idx = rng.permutation(n)[: max(1, n // 2)]
    expected = jm.slerp_joints(joints, blend, 0.7, index=idx)
    work = joints.copy()
    assert jm.slerp_joints(work, blend, 0.7, index=idx, out=work) is work
    np.testing.assert_array_equal(work, expected)
    work = joints.copy()
    jm.lerp_joints(work, blend, 0.7, index=idx, out=work)
    np.testing.assert_array_equal(work, jm.lerp_joints(joints, blend, 0.7, index=idx))


def test_out_variants(rng):
    joints, blend = random_joints(rng, 41), random_joints(rng, 41)
    expected = jm.slerp_joints(joints, blend, 0.3)
    out = np.zeros(41, jm.JOINT_QUAT)
    assert jm.slerp_joints(joints, blend, 0.3, out=out) is out
    np.testing.assert_array_equal(out, expected)
    for target in ("joints", "blend"):
        a, b = joints.copy(), blend.copy()
        dst = a if target == "joints" else b
        assert jm.slerp_joints(a, b, 0.3, out=dst) is dst
        np.testing.assert_array_equal(dst, expected)
    # out=blend with an index: the unselected joints come from joints, the selected from both
    idx = [1, 5, 40]
    b = blend.copy()
    jm.slerp_joints(joints, b, 0.3, index=idx, out=b)
    np.testing.assert_array_equal(b, jm.slerp_joints(joints, blend, 0.3, index=idx))
    # a strided out and a 2-D non-contiguous out
    big = np.zeros(82, jm.JOINT_QUAT)
    jm.slerp_joints(joints, blend, 0.3, index=idx, out=big[::2])
    np.testing.assert_array_equal(big[::2], jm.slerp_joints(joints, blend, 0.3, index=idx))
    assert (big[1::2]["q"] == 0).all()
    grid = np.zeros((4, 12), jm.JOINT_QUAT)
    j2, b2 = joints[:12].reshape(2, 6), blend[:12].reshape(2, 6)
    jm.lerp_joints(j2, b2, 0.3, index=[4, 0], out=grid[::2, ::2])
    np.testing.assert_array_equal(grid[::2, ::2], jm.lerp_joints(j2, b2, 0.3, index=[4, 0]))
    assert (grid[1::2]["q"] == 0).all() and (grid[:, 1::2]["q"] == 0).all()


def test_out_partially_overlapping_the_inputs(rng):
    joints = random_joints(rng, 30)
    buf = joints.copy()
    a, b = buf[1:], buf[:-1]  # blend is joints shifted by one record
    expected = jm.slerp_joints(a.copy(), b.copy(), 0.6)
    jm.slerp_joints(a, b, 0.6, out=a)
    np.testing.assert_array_equal(a, expected)
    q = random_unit_quats(rng, 30)
    qa, qb = q[1:].copy(), q[:-1].copy()
    expected = jm.slerp(qa, qb, 0.6)
    qbuf = q.copy()
    jm.slerp(qbuf[1:], qbuf[:-1], 0.6, out=qbuf[1:])
    np.testing.assert_array_equal(qbuf[1:], expected)


@pytest.mark.parametrize("name", ["contiguous", "strided", "reversed", "readonly", "unaligned"])
def test_layouts(rng, name):
    joints, blend = random_joints(rng, 37), random_joints(rng, 37)
    idx = [0, 36, 5, 16, 17]
    for func in (jm.slerp_joints, jm.lerp_joints):
        for index in (None, idx):
            expected = func(joints, blend, 0.35, index=index)
            a, b = layouts(joints)[name], layouts(blend)[name]
            before = (a.copy(), b.copy())
            np.testing.assert_array_equal(func(a, b, 0.35, index=index), expected)
            np.testing.assert_array_equal(a, before[0])
            np.testing.assert_array_equal(b, before[1])
    # t in the quaternions' dtype, so that its view reaches the kernel unconverted (37 values:
    # whole blocks of every path and a tail)
    for dtype in (np.float32, np.float64):
        q0, q1 = random_unit_quats(rng, 37, dtype), random_unit_quats(rng, 37, dtype)
        t = rng.uniform(0, 1, 37).astype(dtype)
        v0, v1, vt = layouts(q0)[name], layouts(q1)[name], layouts(t)[name]
        for func in (jm.slerp, jm.nlerp):
            np.testing.assert_array_equal(func(v0, v1, vt), func(q0, q1, t))
            np.testing.assert_array_equal(func(q0, q1, vt), func(q0, q1, t))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_element_t_as_a_view(rng, dtype):
    """A per-element t that is a view of other data (a column of a table, reversed, every second
    value) gives what its contiguous copy gives, within the bound of the reference (before the
    fix, the SIMD paths read float32 t as if contiguous: errors up to 1 in every whole block)."""
    n = 37
    q0, q1 = random_unit_quats(rng, n, dtype), random_unit_quats(rng, n, dtype)
    table = rng.uniform(0, 1, (2 * n, 3)).astype(dtype)
    column, reversed_, every_second = table[:n, 1], table[:n, 0][::-1], table[:2 * n:2, 2]
    for func, ref_func, bound in ((jm.slerp, ref.slerp, SLERP_BOUND), (jm.nlerp, ref.nlerp, NLERP_BOUND)):
        for t in (column, reversed_, every_second):
            got = func(q0, q1, t)
            np.testing.assert_array_equal(got, func(q0, q1, np.ascontiguousarray(t)))
            assert np.abs(got - ref_func(q0, q1, t)).max() <= bound
            out = np.zeros_like(q0)
            assert func(q0, q1, t, out=out) is out
            np.testing.assert_array_equal(out, got)


def test_non_contiguous_multi_frame(rng):
    joints = random_joints(rng, 60).reshape(6, 10)
    blend = random_joints(rng, 60).reshape(6, 10)
    view_a, view_b = joints[::2, 1::3], blend[1::2, 1::3]
    np.testing.assert_array_equal(jm.slerp_joints(view_a, view_b, 0.5, index=[2, 0]),
                                  jm.slerp_joints(view_a.copy(), view_b.copy(), 0.5, index=[2, 0]))
    np.testing.assert_array_equal(jm.slerp_joints(joints.T, blend.T, 0.5), jm.slerp_joints(joints, blend, 0.5).T)
    single = jm.slerp_joints(joints[0, 0], blend[0, 0], 0.5)
    assert single.shape == () and single == jm.slerp_joints(joints, blend, 0.5)[0, 0]


# ---------------------------------------------------------------- broadcasting --


def test_broadcasting_and_per_element_t(rng):
    q0, q1 = random_unit_quats(rng, 7), random_unit_quats(rng, 7)
    t = rng.uniform(0, 1, 7)
    for func, ref_func in ((jm.slerp, ref.slerp), (jm.nlerp, ref.nlerp)):
        per_element = func(q0, q1, t)
        for i in range(7):
            # one t: the slerp takes its fixed-t weights, not the per-element ones (both within the bound)
            single = func(q0[i], q1[i], t[i])
            if func is jm.slerp:
                np.testing.assert_allclose(per_element[i], single, rtol=0, atol=SLERP_BOUND)
            else:
                np.testing.assert_array_equal(per_element[i], single)
        assert func(q0[0], q1[0], 0.5).shape == (4,)
        # one quaternion against many, one t for all
        out = func(q0[0], q1, 0.25)
        np.testing.assert_array_equal(out, func(np.repeat(q0[:1], 7, 0), q1, 0.25))
        # resampling: frames of t against a pose pair -> (frames, joints, 4)
        frames = np.linspace(0, 1, 5).reshape(5, 1)
        grid = func(q0, q1, frames)
        assert grid.shape == (5, 7, 4)
        assert np.abs(grid - ref_func(q0, q1, frames)).max() <= SLERP_BOUND
        # t per frame, quaternions per frame and joint
        f0, f1 = random_unit_quats(rng, 35).reshape(5, 7, 4), random_unit_quats(rng, 35).reshape(5, 7, 4)
        np.testing.assert_array_equal(func(f0, f1, frames), func(f0, f1, np.repeat(frames, 7, 1)))
        out = np.zeros((5, 7, 4), np.float32)
        assert func(q0, q1, frames, out=out) is out
        np.testing.assert_array_equal(out, grid)
        # in place on q0
        work = q0.copy()
        assert func(work, q1, t, out=work) is work
        np.testing.assert_array_equal(work, per_element)


def test_python_scalars_and_lists_for_t(rng):
    q0, q1 = random_unit_quats(rng, 3), random_unit_quats(rng, 3)
    np.testing.assert_array_equal(jm.slerp(q0, q1, [0.2, 0.4, 1]), jm.slerp(q0, q1, np.array([0.2, 0.4, 1.0])))
    np.testing.assert_array_equal(jm.slerp(q0, q1, 1), q1)
    np.testing.assert_array_equal(jm.slerp(q0, q1, np.float64(0)), q0)
    joints, blend = jm.make_joints(q0), jm.make_joints(q1)
    np.testing.assert_array_equal(jm.slerp_joints(joints, blend, np.float32(0.5)), jm.slerp_joints(joints, blend, 0.5))
    np.testing.assert_array_equal(jm.slerp_joints(joints, blend, np.array(0.5)), jm.slerp_joints(joints, blend, 0.5))


# ---------------------------------------------------------------- bad input --


def test_joints_bad_input():
    joints = np.zeros(4, jm.JOINT_QUAT)
    joints["q"][:, 3] = 1
    for func in (jm.slerp_joints, jm.lerp_joints):
        name = func.__name__
        with pytest.raises(TypeError, match="joints must be a numpy array of dtype jointmath.JOINT_QUAT, got list"):
            func([1, 2], joints, 0.5)
        with pytest.raises(TypeError, match="blend must have dtype jointmath.JOINT_QUAT, got dtype float32"):
            func(joints, np.zeros((4, 8), np.float32), 0.5)
        with pytest.raises(ValueError, match=r"blend must have the shape of joints \(4,\), got shape \(5,\)"):
            func(joints, np.zeros(5, jm.JOINT_QUAT), 0.5)
        with pytest.raises(ValueError, match=r"blend must have the shape of joints \(4,\), got shape \(2, 2\)"):
            func(joints, np.zeros((2, 2), jm.JOINT_QUAT), 0.5)
        for bad_t in (-0.1, 1.5, float("nan"), float("inf")):
            with pytest.raises(ValueError, match=r"t must be in \[0, 1\], got"):
                func(joints, joints, bad_t)
        with pytest.raises(TypeError, match=r"t must be a float in \[0, 1\], got str"):
            func(joints, joints, "0.5")
        with pytest.raises(TypeError, match=r"t must be a float in \[0, 1\], got NoneType"):
            func(joints, joints, None)
        for flag in (True, np.False_, np.array(True)):  # taken as 1 or 0 before
            with pytest.raises(TypeError, match=r"t must be a float in \[0, 1\], got .*bool"):
                func(joints, joints, flag)
        with pytest.raises(TypeError, match=r"t must be a float in \[0, 1\], got an array of shape \(4,\)"):
            func(joints, joints, np.full(4, 0.5))
        for span in (np.timedelta64(0), np.timedelta64(1, "s")):  # NumPy's integers: 0 was taken as t = 0
            with pytest.raises(TypeError, match=r"t must be a float in \[0, 1\], got timedelta64"):
                func(joints, joints, span)
        with pytest.raises(TypeError, match="index must be an array of integers, got dtype float64"):
            func(joints, joints, 0.5, index=[1.0, 2.0])
        with pytest.raises(TypeError, match="index must be an array of integers, got dtype bool"):
            func(joints, joints, 0.5, index=np.array([True, False, True, False]))
        with pytest.raises(ValueError, match=r"index must be a 1-D array of joint positions, got shape \(\)"):
            func(joints, joints, 0.5, index=2)
        with pytest.raises(ValueError, match=r"index must be a 1-D array of joint positions, got shape \(1, 2\)"):
            func(joints, joints, 0.5, index=[[0, 1]])
        with pytest.raises(ValueError, match=r"index value 4 is out of range for 4 joints"):
            func(joints, joints, 0.5, index=[0, 4])
        with pytest.raises(ValueError, match=r"index value -1 is out of range for 4 joints"):
            func(joints, joints, 0.5, index=[-1])
        with pytest.raises(ValueError, match="index value 2 appears more than once"):
            func(joints, joints, 0.5, index=[2, 0, 2])
        with pytest.raises(ValueError, match="index needs joints with a joints axis, got a single record"):
            func(joints[0], joints[0], 0.5, index=[0])
        with pytest.raises(TypeError, match="out must have dtype jointmath.JOINT_QUAT"):
            func(joints, joints, 0.5, out=np.zeros(4, jm.JOINT_MAT))
        with pytest.raises(ValueError, match=r"out must have shape \(4,\), got shape \(3,\)"):
            func(joints, joints, 0.5, out=np.zeros(3, jm.JOINT_QUAT))
        readonly = joints.copy()
        readonly.flags.writeable = False
        with pytest.raises(ValueError, match="out must be writeable"):
            func(joints, joints, 0.5, out=readonly)
        with pytest.raises(TypeError, match="missing required argument 't'"):
            func(joints, joints)
        with pytest.raises(TypeError, match="unexpected keyword argument 'indices'"):
            func(joints, joints, 0.5, indices=[0])
        with pytest.raises(TypeError, match=f"{name}\\(\\) takes at most 5 arguments"):
            func(joints, joints, 0.5, None, None, None)
        # keywords work, None means "not given"
        assert func(joints=joints, blend=joints, t=0.5, index=None, out=None).shape == (4,)


def test_array_bad_input():
    q = np.zeros((4, 4), np.float32)
    q[:, 3] = 1
    for func in (jm.slerp, jm.nlerp):
        # array_like like NumPy's ufuncs: lists, integers (float64), mixed dtypes (float64)
        np.testing.assert_array_equal(func([[0, 0, 0, 1]], q, 0.5), func(q[:1].astype(np.float64), q, 0.5))
        assert func(q, np.zeros((4, 4), np.int64) + [0, 0, 0, 1], 0.5).dtype == np.float64
        assert func(q, q.astype(np.float64), 0.5).dtype == np.float64
        with pytest.raises(TypeError, match="q1 must be an array_like of real numbers .*, got dtype complex128"):
            func(q, q.astype(complex), 0.5)
        with pytest.raises(ValueError, match=r"q0 must have shape \(\.\.\., 4\), got shape \(4, 3\)"):
            func(np.zeros((4, 3), np.float32), q, 0.5)
        with pytest.raises(ValueError, match=r"q0, q1 and t do not broadcast together: leading shapes \(4,\), "
                                             r"\(3,\) and t shape \(\)"):
            func(q, q[:3], 0.5)
        with pytest.raises(ValueError, match=r"do not broadcast together: .* and t shape \(3,\)"):
            func(q, q, np.full(3, 0.5))
        with pytest.raises(ValueError, match=r"t must be in \[0, 1\], got -0.5"):
            func(q, q, np.array([0.5, -0.5, 2, 0.5]))
        with pytest.raises(ValueError, match=r"t must be in \[0, 1\], got nan"):
            func(q, q, float("nan"))
        with pytest.raises(TypeError, match=r"t must be an array_like of real numbers .*, got dtype <U4"):
            func(q, q, "half")
        with pytest.raises(TypeError, match=r"t must be an array_like of real numbers .*, got dtype object"):
            func(q, q, None)
        with pytest.raises(TypeError, match="out must have dtype float32, got dtype float64"):
            func(q, q, 0.5, out=np.zeros((4, 4)))
        with pytest.raises(ValueError, match=r"out must have shape \(4, 4\), got shape \(4,\)"):
            func(q, q, 0.5, out=np.zeros(4, np.float32))
        readonly = np.zeros((4, 4), np.float32)
        readonly.flags.writeable = False
        with pytest.raises(ValueError, match="out must be writeable"):
            func(q, q, 0.5, out=readonly)


def test_zero_length(rng):
    for shape in [(0,), (0, 3), (3, 0)]:
        empty = np.zeros(shape, jm.JOINT_QUAT)
        assert jm.slerp_joints(empty, empty, 0.5).shape == shape
        assert jm.lerp_joints(empty, empty, 0.5, out=empty.copy()).shape == shape
    assert jm.slerp_joints(np.zeros((3, 0), jm.JOINT_QUAT), np.zeros((3, 0), jm.JOINT_QUAT), 0.5, index=[]).shape == (3, 0)
    # an empty list or tuple is an empty index; an array must hold integers, empty or not (as
    # NumPy's indexing asks: an empty float, complex or record array was taken, or raised NumPy's
    # cast error without naming index)
    joints = jm.make_joints(np.tile([0, 0, 0, 1.0], (3, 1)))
    for empty in ([], (), np.array([], np.int8), np.array([], ">u8")):
        np.testing.assert_array_equal(jm.slerp_joints(joints, joints, 0.5, index=empty), joints)
    for empty in (np.array([]), np.array([], complex), np.array([], bool), np.zeros(0, jm.JOINT_QUAT)):
        for func in (jm.slerp_joints, jm.lerp_joints):
            with pytest.raises(TypeError, match="index must be an array of integers, got dtype"):
                func(joints, joints, 0.5, index=empty)
        with pytest.raises(TypeError, match="index must be an array of integers, got dtype"):
            jm.joint_index(empty, 3)
    assert jm.slerp_joints(np.zeros((0, 4), jm.JOINT_QUAT), np.zeros((0, 4), jm.JOINT_QUAT), 0.5, index=[3]).shape == (0, 4)
    assert jm.slerp(np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32), 0.5).shape == (0, 4)
    assert jm.nlerp(random_unit_quats(rng, 1), np.zeros((0, 4), np.float32), 0.5).shape == (0, 4)


def test_nan_stays_in_its_joint(rng):
    joints, blend = random_joints(rng, 40), random_joints(rng, 40)
    clean = {f: f(joints, blend, 0.5) for f in (jm.slerp_joints, jm.lerp_joints)}
    for k in (0, 7, 16, 39):
        for bad_side in ("joints", "blend"):
            a, b = joints.copy(), blend.copy()
            (a if bad_side == "joints" else b)["q"][k, 2] = np.nan
            for func, expected in clean.items():
                out = func(a, b, 0.5)
                assert np.isnan(out["q"][k]).any()
                others = np.arange(40) != k
                np.testing.assert_array_equal(out[others], expected[others])
                out = func(a, b, 0.5, index=[k, (k + 1) % 40])
                assert np.isnan(out["q"][k]).any()
                np.testing.assert_array_equal(out[others], func(a, b, 0.5, index=[k, (k + 1) % 40])[others])
                assert np.isfinite(out["q"][others]).all()
    q0, q1 = joints["q"].copy(), blend["q"]
    q0[3] = np.inf
    out = jm.slerp(q0, q1, 0.5)
    assert not np.isfinite(out[3]).all()
    np.testing.assert_array_equal(np.delete(out, 3, 0), np.delete(jm.slerp(joints["q"], q1, 0.5), 3, 0))


def test_threads_agree_with_sequential_calls(rng):
    n = 50000  # large enough for the GIL to be released around the kernels
    joints, blend = random_joints(rng, n), random_joints(rng, n)
    idx = np.arange(0, n, 3)
    t = rng.uniform(0, 1, n).astype(np.float32)
    assert_threads_agree(lambda: (jm.slerp_joints(joints, blend, 0.3), jm.lerp_joints(joints, blend, 0.3, index=idx),
                                  jm.slerp(joints["q"], blend["q"], t)))


def test_inputs_are_never_modified(rng):
    joints, blend = random_joints(rng, 100), random_joints(rng, 100)
    q0, q1 = random_unit_quats(rng, 100), random_unit_quats(rng, 100)
    t = rng.uniform(0, 1, 100)
    idx = np.array([5, 1, 99])
    saved = [a.copy() for a in (joints, blend, q0, q1, t, idx)]
    for func in (jm.slerp_joints, jm.lerp_joints):
        func(joints, blend, 0.5)
    jm.slerp_joints(joints, blend, 0.5, index=idx)
    jm.lerp_joints(joints, blend, 1.0, index=idx)
    for func in (jm.slerp, jm.nlerp):
        func(q0, q1, t)
        func(q0.astype(np.float64), q1.astype(np.float64), t)
    for a, b in zip((joints, blend, q0, q1, t, idx), saved):
        np.testing.assert_array_equal(a, b)


# ------------------------------- float64: slerp / nlerp against the extended-precision oracle --

FLOAT64_BOUND = 2e-15  # max abs component error, slerp and nlerp
TIE = 1e-12  # |q0 . q1| below this (relative): the shorter arc is a tie that rounding decides
DBL_MAX = float(np.finfo(np.float64).max)


# ----------------------------------------------------------- float64: the oracle (longdouble) --


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


def arc_error64(func, q0, q1, t):
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


def normalised64(q):
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def hard_pairs64(rng, n=300):
    """identical, antipodal, nearly parallel and nearly antipodal at 1e-3 ... 1e-15, orthogonal,
    around the 45-degree switch of the angle formula (q0 . q1 ~ cos(pi/8)), 90 degrees
    (q0 . q1 ~ 0) and the adversarial quaternions against shuffled and negated copies"""
    q = random_unit_quats(rng, n, np.float64)
    other = rng.standard_normal((n, 4))
    other = normalised64(other - np.sum(other * q, -1, keepdims=True) * q)  # orthogonal to q
    pairs = [(q, q), (q, -q), (q, other), (q, -other)]
    for eps in (1e-3, 1e-5, 1e-7, 1e-9, 1e-11, 1e-13, 1e-15):
        near = normalised64(q + eps * other)
        pairs += [(q, near), (q, -near)]
    for half_angle in (np.pi / 8, np.pi / 4):  # quaternion angles pi/4 and pi/2 (the rotation's: twice)
        for delta in (0, 1e-15, -1e-15, 1e-9, -1e-9):
            a = half_angle + delta
            pairs.append((q, normalised64(np.cos(a) * q + np.sin(a) * other)))
    h = hard_quats(rng, np.float64)
    pairs += [(h, h[rng.permutation(len(h))]), (h, -h), (h, h)]
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


FRACTIONS = [0.0, 5e-324, 1e-300, 1e-16, 1e-8, 0.25, 0.5, 0.75, 1 - 2.0**-53, 1.0]


# -------------------------------------------------------------------------- float64: accuracy --


@needs_extended_precision
@pytest.mark.parametrize("func", [jm.slerp, jm.nlerp])
def test_accuracy_random(rng, func):
    q0, q1 = random_unit_quats(rng, 200000, np.float64), random_unit_quats(rng, 200000, np.float64)
    assert arc_error64(func, q0, q1, rng.uniform(0, 1, 200000)) <= FLOAT64_BOUND
    assert arc_error64(func, q0, q1, 0.3) <= FLOAT64_BOUND  # one t for all (t_stride 0)


@needs_extended_precision
@pytest.mark.parametrize("func", [jm.slerp, jm.nlerp])
def test_accuracy_hard_pairs(rng, func):
    q0, q1 = hard_pairs64(rng)
    for t in FRACTIONS:
        assert arc_error64(func, q0, q1, t) <= FLOAT64_BOUND, t
    assert arc_error64(func, q0, q1, rng.uniform(0, 1, len(q0))) <= FLOAT64_BOUND
    assert arc_error64(func, q0, q1, rng.choice(FRACTIONS, len(q0))) <= FLOAT64_BOUND


@needs_extended_precision
def test_slerp_identical_and_antipodal(rng):
    """q with itself or -q: q at every t (never NaN), within the bound."""
    q = random_unit_quats(rng, 1000, np.float64)
    for other in (q, -q):
        for t in FRACTIONS[1:-1]:
            for func in (jm.slerp, jm.nlerp):
                np.testing.assert_allclose(func(q, other, t), q, rtol=0, atol=FLOAT64_BOUND)


@needs_extended_precision
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


@needs_extended_precision
def test_scalar_t_is_the_per_element_formula(rng):
    """t_stride 0 runs the per-lane formula: bit for bit what an array of that t gives."""
    q0, q1 = hard_pairs64(rng)
    for func in (jm.slerp, jm.nlerp):
        for t in FRACTIONS:
            np.testing.assert_array_equal(func(q0, q1, t), func(q0, q1, np.full(len(q0), t)))


# ---------------------------------------------------------------- float64: nlerp at any scale --


def scales():
    """powers of two across float64: the smallest denormal, denormals, normals, near DBL_MAX"""
    return [2.0**e for e in (-1074, -1060, -1030, -1022, -1000, -700, -481, -480, -300, -1, 0, 300, 480, 481,
                             700, 1000, 1020)]


@needs_extended_precision
@pytest.mark.parametrize("same", [True, False])
def test_nlerp_any_scale_float64(rng, same):
    """Each input at any scale (same for both, or one each), t including denormal ones: within the
    bound of the extended-precision normalised64 sum as written, never inf or NaN."""
    q0, q1 = hard_pairs64(rng, 40)
    fractions = np.array(FRACTIONS)[rng.integers(0, len(FRACTIONS), len(q0))]
    for s0 in scales():
        for s1 in ([s0] if same else scales()[::3]):
            a, b = q0 * s0, q1 * s1  # denormal scales round the components: the oracle takes them as they are
            if not (np.abs(a).max(-1) > 0).all() or not (np.abs(b).max(-1) > 0).all():
                continue  # a quaternion rounded to zero (tested below)
            assert arc_error64(jm.nlerp, a, b, fractions) <= FLOAT64_BOUND, (s0, s1)
            assert arc_error64(jm.nlerp, a, b, 0.5) <= FLOAT64_BOUND, (s0, s1)


@needs_extended_precision
def test_nlerp_extremes(rng):
    """DBL_MAX components, the smallest denormal against DBL_MAX, one zero input, t = 5e-324."""
    q = random_unit_quats(rng, 64, np.float64)
    r = random_unit_quats(rng, 64, np.float64)
    huge = np.sign(q) * DBL_MAX  # |q|^2 overflows any direct sum
    tiny = np.sign(r) * 5e-324
    for a, b in ((huge, huge[::-1]), (huge, tiny), (tiny, huge), (tiny, tiny[::-1]), (np.zeros_like(q), r * 1e300),
                 (r * 1e-300, np.zeros_like(q))):
        for t in (5e-324, 0.5, rng.uniform(0, 1, 64), 1 - 2.0**-53):
            assert arc_error64(jm.nlerp, a, b, t) <= FLOAT64_BOUND
    # 2^-24 (1, 0, 0, 0) and 2^1000 (0, 1, 0, 0) at t = 2^-1024: equal terms, an orthogonal pair
    np.testing.assert_allclose(jm.nlerp(np.array([2.0**-24, 0, 0, 0]), np.array([0, 2.0**1000, 0, 0]), 2.0**-1024),
                               [0.5**0.5, 0.5**0.5, 0, 0], rtol=0, atol=FLOAT64_BOUND)


# ------------------------------------------------------------------------- float64: NaN rules --


@needs_extended_precision
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


@needs_extended_precision
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


# ------------------------------------------------------------- float64: shapes, layouts, out= --


@needs_extended_precision
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("func", [jm.slerp, jm.nlerp])
def test_sizes_and_layouts(rng, n, func):
    """Every size around the vector widths and every awkward layout gives the contiguous result,
    bit for bit; inputs are never written."""
    q0, q1 = random_unit_quats(rng, n, np.float64), random_unit_quats(rng, n, np.float64)
    q1[: n // 3] = -q0[: n // 3]  # antipodal pairs among the others
    t = rng.choice(FRACTIONS, n)
    expected = func(q0, q1, t)
    assert arc_error64(func, q0, q1, t) <= FLOAT64_BOUND
    for name, a in layouts(q0).items():
        for other_name, b in layouts(q1).items():
            before = (a.copy(), b.copy())
            np.testing.assert_array_equal(func(a, b, t), expected, err_msg=f"{name} / {other_name}")
            np.testing.assert_array_equal(a, before[0])
            np.testing.assert_array_equal(b, before[1])
    for name, tt in layouts(t).items():
        np.testing.assert_array_equal(func(q0, q1, tt), expected, err_msg=name)


@needs_extended_precision
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


@needs_extended_precision
def test_lanes_are_independent(rng):
    """A record's result does not depend on its neighbours (lane position, block, cold lanes of
    nlerp beside it): each record alone gives what it gives in the batch."""
    q0, q1 = hard_pairs64(rng, 8)
    q0 = np.concatenate([q0, q0[:20] * 2.0**-1000, q0[:20] * 2.0**1000])
    q1 = np.concatenate([q1, q1[:20], q1[:20] * 2.0**-1000])
    t = rng.uniform(0, 1, len(q0))
    for func in (jm.slerp, jm.nlerp):
        batch = func(q0, q1, t)
        for k in range(0, len(q0), 7):
            np.testing.assert_array_equal(func(q0[k], q1[k], t[k]), batch[k])


@needs_extended_precision
def test_large_arrays_threads(rng):
    """Calls large enough to release the GIL agree across threads."""
    from adversarial import assert_threads_agree

    q0, q1 = random_unit_quats(rng, 100000, np.float64), random_unit_quats(rng, 100000, np.float64)
    t = rng.uniform(0, 1, 100000)
    assert_threads_agree(lambda: (jm.slerp(q0, q1, t), jm.nlerp(q0, q1, t)), n_threads=3, repeats=1)


@needs_extended_precision
def test_no_reference_on_the_call_path(rng, monkeypatch):
    """float64 slerp / nlerp never compute through jointmath.ref."""
    def refuse(*args, **kwargs):
        raise AssertionError("jointmath.ref called on a product path")

    for name in ("slerp", "nlerp", "_arc_sign", "_endpoints", "_mantissa_exponent"):
        monkeypatch.setattr(ref, name, refuse)
    q0, q1 = random_unit_quats(rng, 50, np.float64), random_unit_quats(rng, 50, np.float64)
    for func in (jm.slerp, jm.nlerp):
        assert func(q0, q1, 0.3).dtype == np.float64
        assert func(q0, q1, rng.uniform(0, 1, 50)).dtype == np.float64
        assert func(q0 * 2.0**-1050, q1 * 2.0**1000, 0.3).dtype == np.float64
