"""quat_mean and align_vectors (csrc/fit.c) on every path: against the float64 NumPy oracle
(jointmath.reference: eigh for the mean, Kabsch's SVD for the alignment) and against scipy, on
well-conditioned random sets and on the adversarial ones."""
import warnings

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import SIZES, assert_threads_agree, every_scale_quats64, layouts

Rotation = pytest.importorskip("scipy.spatial.transform").Rotation

BOUND = {np.float32: 1e-6, np.float64: 1e-14}  # rad, from the oracle and from scipy (well-conditioned)
DTYPES = [np.float32, np.float64]


def angle(p, q):
    return ref.angle_between(np.asarray(p, np.float64), np.asarray(q, np.float64))


def spread_quats(rng, shape, spread=0.4, dtype=np.float64):
    """Quaternions within about `spread` rad of a random rotation, of random scales and signs: a
    well-conditioned set (eigen-gap near the total weight)."""
    centre = rng.standard_normal(4)
    noise = rng.standard_normal(shape + (4,)) * spread / 2
    q = centre / np.linalg.norm(centre) + noise
    q *= rng.choice([-1, 1], shape + (1,)) * rng.uniform(0.5, 2, shape + (1,))
    return q.astype(dtype)


def well_conditioned_sets(rng, batch, n, dtype=np.float64):
    """Vector sets b and a = C b + noise with C random: (s2 + s3) / s1 well above 0.01."""
    b = rng.standard_normal(batch + (n, 3))
    c = Rotation.random(int(np.prod(batch, dtype=int)), rng).as_matrix().reshape(batch + (1, 3, 3))
    a = np.einsum("...ij,...j->...i", c, b) + 0.05 * rng.standard_normal(batch + (n, 3))
    return a.astype(dtype), b.astype(dtype)


# ------------------------------------------------------------------------------ quat_mean --


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weighted", [False, True])
def test_quat_mean_matches_oracle_and_scipy(rng, dtype, weighted):
    q = spread_quats(rng, (200,), dtype=dtype)
    w = rng.uniform(0, 3, 200) if weighted else None
    got = jm.quat_mean(q, w)
    assert got.dtype == dtype and got.shape == (4,)
    scipy_mean = Rotation.from_quat(q.astype(np.float64)).mean(w).as_quat()
    assert angle(got, ref.quat_mean(q, w)) <= BOUND[dtype]
    assert angle(got, scipy_mean) <= BOUND[dtype]
    assert got[3] >= 0 and abs(np.linalg.norm(got.astype(np.float64)) - 1) <= 4 * np.finfo(dtype).eps


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1, (0,), (0, 2), (2, 0), (), None, (0, 1, 2)])
def test_quat_mean_axis_as_numpy_and_scipy(rng, dtype, axis):
    q = spread_quats(rng, (6, 5, 3), dtype=dtype)
    w = rng.uniform(0.1, 2, (5, 1))  # broadcast to q.shape[:-1]
    got = jm.quat_mean(q, w, axis=axis)
    expected = ref.quat_mean(q, w, axis=axis)
    assert got.shape == expected.shape == np.sum(np.zeros(q.shape[:-1]), axis=axis).shape + (4,)
    assert np.all(angle(got, expected) <= BOUND[dtype])
    # scipy's mean of each set (one set at a time: Rotation.mean(axis=) is scipy >= 1.17)
    reduced = tuple(range(3)) if axis is None else tuple(np.atleast_1d(axis) % 3)
    kept = [d for d in range(3) if d not in reduced]
    order = kept + list(reduced)
    sets = np.moveaxis(q.astype(np.float64), order, range(3)).reshape(-1, int(np.prod([q.shape[d] for d in reduced],
                                                                                      dtype=int)), 4)
    weights = np.moveaxis(np.broadcast_to(w, q.shape[:-1]), order, range(3)).reshape(len(sets), -1)
    scipy_mean = np.array([Rotation.from_quat(s).mean(ws).as_quat() for s, ws in zip(sets, weights)])
    assert np.all(angle(got.reshape(-1, 4), scipy_mean) <= BOUND[dtype])


def test_quat_mean_batched_joint_means(rng):
    """(frames, joints, 4), axis=0: each joint's mean, a loop over scipy per joint."""
    q = spread_quats(rng, (64, 31))
    got = jm.quat_mean(q, axis=0)
    for j in range(31):
        assert angle(got[j], Rotation.from_quat(q[:, j]).mean().as_quat()) <= 1e-14


def test_quat_mean_sign_invariant_exactly(rng):
    for dtype in DTYPES:
        q = spread_quats(rng, (40,), dtype=dtype)
        flipped = q * rng.choice([-1, 1], (40, 1)).astype(dtype)
        np.testing.assert_array_equal(jm.quat_mean(flipped), jm.quat_mean(q))


def test_quat_mean_antipodal_pairs(rng):
    """q and -q in one set are the same rotation twice."""
    q = spread_quats(rng, (10,))
    both = np.concatenate([q, -q])
    assert angle(jm.quat_mean(both), jm.quat_mean(q)) <= 1e-15
    # a rotation and its antipode only: the mean is that rotation
    one = np.array([0.1, -0.2, 0.3, 0.9])
    assert angle(jm.quat_mean([one, -one]), one) <= 1e-15


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_mean_single_element_is_the_normalised_quaternion(rng, dtype):
    q = spread_quats(rng, (25,), dtype=dtype)
    got = jm.quat_mean(q, axis=())
    expected = q.astype(np.float64) / np.linalg.norm(q.astype(np.float64), axis=-1, keepdims=True)
    expected *= np.where(expected[:, 3:] < 0, -1, 1)
    np.testing.assert_allclose(got, expected, atol=2 * np.finfo(dtype).eps)
    assert angle(jm.quat_mean(q[:1]), q[0]) <= BOUND[dtype]


def test_quat_mean_every_scale():
    """float64 quaternions of every binary scale (subnormal to DBL_MAX), each alone and as sets
    scaled by a power of two."""
    q = every_scale_quats64(np.random.default_rng(5))
    got = jm.quat_mean(q, axis=())
    assert np.all(angle(got, ref.quat_mean(q, axis=())) <= 4e-15)
    base = spread_quats(np.random.default_rng(6), (20,))
    expected = jm.quat_mean(base)
    for e in (-1000, -600, -200, 0, 200, 600, 1000):  # exact scalings (no subnormal rounding)
        assert angle(jm.quat_mean(np.ldexp(base, e)), expected) <= 4e-15
    tiny = np.array([[1e-45, 0, 0, 1e-45], [3e-45, 0, 0, 1.4e-45], [1e38, 0, 0, 3e38]], np.float32)
    assert np.all(np.isfinite(jm.quat_mean(tiny)))
    assert angle(jm.quat_mean(tiny, axis=()), ref.quat_mean(tiny, axis=())).max() <= 1e-6


def test_quat_mean_zero_and_nan_give_nan_in_their_set_only(rng):
    q = spread_quats(rng, (3, 4))
    q[0, 1] = 0
    q[2, 2, 1] = np.nan
    q[1, 0, 0] = np.inf
    got = jm.quat_mean(q, axis=1)
    assert np.all(np.isnan(got[0])) and np.all(np.isnan(got[2])) and np.all(np.isnan(got[1]))
    ok = spread_quats(rng, (2, 4))
    ok[1, 3] = 0
    got = jm.quat_mean(ok, axis=1)
    assert np.all(np.isfinite(got[0])) and np.all(np.isnan(got[1]))


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf, -np.inf])
def test_quat_mean_refuses_bad_weights(rng, bad):
    w = np.ones(5)
    w[2] = bad
    with pytest.raises(ValueError, match="weights"):
        jm.quat_mean(spread_quats(rng, (5,)), w)


def test_quat_mean_refuses_all_zero_weights(rng):
    q = spread_quats(rng, (4, 3))
    w = np.ones((4, 3))
    w[:, 1] = 0
    jm.quat_mean(q, w, axis=1)  # a zero among others is fine
    w[2] = 0
    with pytest.raises(ValueError, match="weights are all zero in set 2"):
        jm.quat_mean(q, w, axis=1)
    with pytest.raises(ValueError, match="weights"):
        jm.quat_mean(q, 0.0)


def test_quat_mean_argument_errors(rng):
    q = spread_quats(rng, (4, 3))
    with pytest.raises(ValueError, match="weights"):
        jm.quat_mean(q, np.ones(4))  # broadcasts against the last dim (3), as NumPy
    with pytest.raises(ValueError, match="weights"):
        jm.quat_mean(q, np.ones((2, 4, 3)))
    with pytest.raises(TypeError, match="weights"):
        jm.quat_mean(q, np.ones(3, complex))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        jm.quat_mean(q, axis=2)
    with pytest.raises(ValueError, match="axis -3 is out of bounds"):
        jm.quat_mean(q, axis=-3)
    with pytest.raises(ValueError, match="repeated"):
        jm.quat_mean(q, axis=(0, -2))
    for bad_axis in (True, 1.0, [0], "0"):
        with pytest.raises(TypeError, match="axis"):
            jm.quat_mean(q, axis=bad_axis)
    with pytest.raises(TypeError, match="axis"):
        jm.quat_mean(q, axis=(0, False))
    with pytest.raises(ValueError, match="q"):
        jm.quat_mean(np.ones((4, 3)))
    with pytest.raises(TypeError, match="q"):
        jm.quat_mean(np.ones((4, 4), complex))
    with pytest.raises(ValueError, match="empty"):
        jm.quat_mean(np.zeros((0, 4)))
    with pytest.raises(ValueError, match="empty"):
        jm.quat_mean(np.zeros((3, 0, 4)), axis=1)
    assert jm.quat_mean(np.zeros((0, 3, 4)), axis=1).shape == (0, 4)
    assert jm.quat_mean(np.zeros((0, 4)), axis=()).shape == (0, 4)
    assert jm.quat_mean([0, 0, 0, 2]).tolist() == [0, 0, 0, 1]  # a single quaternion, integers: float64
    assert jm.quat_mean(np.array([[0, 0, 0, 1]], np.float16)).dtype == np.float32


@pytest.mark.parametrize("n", SIZES)
def test_quat_mean_sizes_and_layouts(rng, n):
    q = spread_quats(rng, (n, 3), dtype=np.float32)
    w = rng.uniform(0, 1, (n, 3)) + 0.01
    for name, variant in layouts(q).items():
        before = variant.copy()
        for axis in (0, 1):
            if q.shape[axis] == 0:
                continue
            got = jm.quat_mean(variant, w, axis=axis)
            assert np.all(angle(got, ref.quat_mean(q, w, axis=axis)) <= 1e-6), name
        np.testing.assert_array_equal(variant, before)
    wr = w.copy()
    wr.flags.writeable = False
    if n:
        jm.quat_mean(q, wr[::1], axis=0)
        np.testing.assert_array_equal(wr, w)


def test_quat_mean_threads_agree(rng):
    q = spread_quats(rng, (300, 40))
    assert_threads_agree(lambda: jm.quat_mean(q, axis=0))


# -------------------------------------------------------------------------- align_vectors --


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weighted", [False, True])
def test_align_vectors_matches_oracle_and_scipy(rng, dtype, weighted):
    a, b = well_conditioned_sets(rng, (12,), 8, dtype)
    w = rng.uniform(0.1, 2, (12, 8)) if weighted else None
    q, rssd = jm.align_vectors(a, b, w)
    assert q.dtype == rssd.dtype == dtype and q.shape == (12, 4) and rssd.shape == (12,)
    q_ref, rssd_ref = ref.align_vectors(a, b, w)
    assert np.all(angle(q, q_ref) <= BOUND[dtype])
    np.testing.assert_allclose(rssd, rssd_ref, rtol=1e-6 if dtype == np.float32 else 1e-12)
    for i in range(12):
        r, scipy_rssd = Rotation.align_vectors(a[i].astype(np.float64), b[i].astype(np.float64),
                                               None if w is None else w[i])
        assert angle(q[i], r.as_quat()) <= BOUND[dtype]
        assert abs(rssd[i] - scipy_rssd) <= (1e-5 if dtype == np.float32 else 1e-10) * max(scipy_rssd, 1)


def test_align_vectors_maps_b_onto_a():
    """The convention: a = C b (scipy's), C applied to b."""
    c = Rotation.from_euler("xyz", [0.3, -1.1, 2.0])
    b = np.random.default_rng(0).standard_normal((5, 3))
    q, rssd = jm.align_vectors(c.apply(b), b)
    assert angle(q, c.as_quat()) <= 1e-15 and rssd <= 1e-14
    assert isinstance(rssd, float)


def test_align_vectors_batches_broadcast(rng):
    a, b = well_conditioned_sets(rng, (3, 4), 5)
    q, rssd = jm.align_vectors(a, b[0, 0])  # b: one set for all
    q_ref, rssd_ref = ref.align_vectors(a, b[0, 0])
    assert q.shape == (3, 4, 4) and rssd.shape == (3, 4)
    assert np.all(angle(q, q_ref) <= 1e-14)
    np.testing.assert_allclose(rssd, rssd_ref, rtol=1e-12)
    w = rng.uniform(0.5, 1, 5)
    q, _ = jm.align_vectors(a, b, w)
    assert np.all(angle(q, ref.align_vectors(a, b, w)[0]) <= 1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
def test_align_vectors_one_pair_is_the_least_rotation(rng, dtype):
    pairs = [rng.standard_normal((2, 3)) for _ in range(20)]
    u = rng.standard_normal(3)
    pairs += [np.array([u, u * 3]), np.array([u, -u * 2]), np.array([[0, 0, 1], [0, 0, -1]]),
              np.array([[1.0, 0, 0], [-1.0, 0, 0]]), np.array([[0, 2.0, 0], [0, 0.5, 0]]),
              np.array([u, -u + 1e-5])]
    for a, b in pairs:
        a, b = a.astype(dtype), b.astype(dtype)
        q, rssd = jm.align_vectors(a, b)
        r, scipy_rssd = Rotation.align_vectors(a.astype(np.float64), b.astype(np.float64))
        bound = 2e-6 if dtype == np.float32 else 5e-12  # scipy's own error near half a turn: 1e-12
        assert angle(q, r.as_quat()) <= bound, (a, b)
        assert abs(rssd - scipy_rssd) <= bound * max(1, scipy_rssd)
        q2, _ = jm.align_vectors(a[None], b[None])
        np.testing.assert_array_equal(q2, q)


@pytest.mark.parametrize("dtype", DTYPES)
def test_align_vectors_infinite_weight_as_scipy(rng, dtype):
    for k in range(10):
        a, b = well_conditioned_sets(rng, (), 5, dtype)
        w = rng.uniform(0.1, 2, 5)
        w[k % 5] = np.inf
        q, rssd = jm.align_vectors(a, b, w)
        r, scipy_rssd = Rotation.align_vectors(a.astype(np.float64), b.astype(np.float64), w)
        assert angle(q, r.as_quat()) <= BOUND[dtype] * 10
        assert abs(rssd - scipy_rssd) <= (1e-5 if dtype == np.float32 else 1e-12) * max(1, scipy_rssd)
        primary = k % 5
        mapped = Rotation.from_quat(q.astype(np.float64)).apply(b[primary].astype(np.float64))
        np.testing.assert_allclose(mapped / np.linalg.norm(mapped), a[primary] / np.linalg.norm(a[primary]),
                                   atol=2e-6 if dtype == np.float32 else 1e-15)
    # one pair of infinite weight: rssd 0; of weight 4: rssd sqrt(4) |a - C b|
    a, b = np.array([[1.0, 0, 0]]), np.array([[0, 2.0, 0]])
    assert jm.align_vectors(a, b, [np.inf])[1] == 0
    assert abs(jm.align_vectors(a, b, [4.0])[1] - 2.0) <= 1e-15


def test_align_vectors_errors_as_scipy(rng):
    a, b = well_conditioned_sets(rng, (2,), 4)
    w = np.ones((2, 4))
    w[1, 0] = w[1, 3] = np.inf
    with pytest.raises(ValueError, match="only one infinite weight per set.*set 1"):
        jm.align_vectors(a, b, w)
    for bad in (-1.0, np.nan):
        with pytest.raises(ValueError, match="weights"):
            jm.align_vectors(a, b, [1, 1, bad, 1])
    a0 = a.copy()
    a0[0, 2] = 0
    with pytest.raises(ValueError, match="zero length primary"):
        jm.align_vectors(a0, b, [1, 1, np.inf, 1])
    with pytest.raises(ValueError, match="zero length primary"):
        jm.align_vectors([0, 0, 0], [1, 0, 0])
    with pytest.raises(ValueError, match="as many vectors"):
        jm.align_vectors(a, b[:, :3])
    with pytest.raises(ValueError, match="broadcast"):
        jm.align_vectors(a, np.zeros((3, 4, 3)))
    with pytest.raises(ValueError, match="weights"):
        jm.align_vectors(a, b, np.ones(3))
    with pytest.raises(ValueError, match="a"):
        jm.align_vectors(np.ones((4, 4)), b)
    with pytest.raises(TypeError, match="b"):
        jm.align_vectors(a, b.astype(complex))
    with pytest.raises(TypeError, match="weights"):
        jm.align_vectors(a, b, "heavy")


def test_align_vectors_degenerate_sets_warn_as_scipy():
    """Collinear vectors: no unique optimum; scipy warns, so does align_vectors, and the rotation
    returned is optimal (its rssd is the optimum's)."""
    a = np.array([[1.0, 0, 0], [2, 0, 0], [-1, 0, 0]])
    b = np.array([[0, 1.0, 0], [0, 2, 0], [0, -1, 0]])
    with pytest.warns(UserWarning, match="not uniquely or poorly defined"):
        q, rssd = jm.align_vectors(a, b)
    with pytest.warns(UserWarning):
        _, scipy_rssd = Rotation.align_vectors(a, b)
    assert abs(rssd - scipy_rssd) <= 1e-12
    np.testing.assert_allclose(Rotation.from_quat(q).apply(b), a, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jm.align_vectors(a + [[0, 0, 0], [0, 0, 0], [0, 1, 0]], b + [[0, 0, 0], [0, 0, 0], [1, 0, 0]])


def test_align_vectors_empty_and_zero_sets():
    q, rssd = jm.align_vectors(np.zeros((0, 3)), np.zeros((0, 3)))
    assert q.tolist() == [0, 0, 0, 1] and rssd == 0
    q, rssd = jm.align_vectors(np.zeros((3, 3)), np.zeros((3, 3)))
    assert q.tolist() == [0, 0, 0, 1] and rssd == 0
    q, rssd = jm.align_vectors(np.ones((2, 3)), np.ones((2, 3)), [0, 0])
    assert q.tolist() == [0, 0, 0, 1] and rssd == 0
    q, rssd = jm.align_vectors(np.zeros((0, 5, 3)), np.zeros((0, 5, 3)))
    assert q.shape == (0, 4) and rssd.shape == (0,)


def test_align_vectors_nan_gives_nan_in_its_set(rng):
    a, b = well_conditioned_sets(rng, (3,), 4)
    a[1, 2, 0] = np.nan
    q, rssd = jm.align_vectors(a, b)
    assert np.all(np.isnan(q[1])) and np.isnan(rssd[1])
    assert np.all(np.isfinite(q[[0, 2]])) and np.all(np.isfinite(rssd[[0, 2]]))


def test_align_vectors_every_scale(rng):
    """Scaling all a's or all b's by a power of two leaves the rotation: integer-valued sets (exact
    at every scale) from subnormal to near DBL_MAX (float64) and FLT_MAX (float32)."""
    a, b = well_conditioned_sets(rng, (), 6)
    a, b = np.round(a * 1000), np.round(b * 1000)
    q, rssd = jm.align_vectors(a, b)
    for ea, eb in [(-1074, 0), (0, -1074), (-1074, -1074), (1000, -1070), (1010, 1010), (-500, 300)]:
        qs, rssd_s = jm.align_vectors(np.ldexp(a, ea), np.ldexp(b, eb))
        assert angle(qs, q) <= 1e-14, (ea, eb)
        if ea == eb:
            assert abs(rssd_s / np.ldexp(rssd, ea) - 1) <= 1e-12
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    q32, rssd32 = jm.align_vectors(a32, b32)
    for ea, eb in [(-149, 0), (0, -149), (-149, -149), (100, -140), (115, 115)]:
        qs, rssd_s = jm.align_vectors(np.ldexp(a32, ea), np.ldexp(b32, eb))
        assert angle(qs, q32) <= 1e-6, (ea, eb)
        if ea == eb:
            assert abs(rssd_s / np.ldexp(rssd32, ea) - 1) <= 1e-6
    huge_w = np.full(6, 1e300)
    qw, rssd_w = jm.align_vectors(a, b, huge_w)
    assert angle(qw, q) <= 1e-14 and abs(rssd_w / (rssd * 1e150) - 1) <= 1e-12


@pytest.mark.parametrize("n", SIZES)
def test_align_vectors_batch_sizes_and_layouts(rng, n):
    a, b = well_conditioned_sets(rng, (n,), 4, np.float32)
    q_ref, rssd_ref = ref.align_vectors(a, b)
    for name, variant in layouts(a).items():
        before = variant.copy()
        q, rssd = jm.align_vectors(variant, b)
        assert np.all(angle(q, q_ref) <= 1e-6), name
        np.testing.assert_allclose(rssd, rssd_ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(variant, before)
    bt = np.ascontiguousarray(b.transpose(0, 2, 1)).transpose(0, 2, 1)  # items strided inside a set
    q, _ = jm.align_vectors(a, bt)
    assert np.all(angle(q, q_ref) <= 1e-6)


def test_align_vectors_mixed_dtypes_promote(rng):
    a, b = well_conditioned_sets(rng, (), 4)
    q, rssd = jm.align_vectors(a.astype(np.float32), b)
    assert q.dtype == np.float64 and angle(q, ref.align_vectors(a.astype(np.float32), b)[0]) <= 1e-14
    assert jm.align_vectors(a.astype(np.float16), b.astype(np.float32))[0].dtype == np.float32
    assert jm.align_vectors(a.round().astype(int), b.round().astype(int))[0].dtype == np.float64


def test_align_vectors_threads_agree(rng):
    a, b = well_conditioned_sets(rng, (3000,), 4)
    assert_threads_agree(lambda: jm.align_vectors(a, b))


def test_gil_released_on_large_calls_only():
    """As tests/test_threads_and_memory.py checks the other boundaries: a large call releases the
    GIL (counted by _core._gil_releases), a one-element call does not."""
    from jointmath import _core

    q = np.tile([0.0, 0, 0, 1], (1 << 14, 1))
    v = np.random.default_rng(0).standard_normal((1 << 12, 4, 3))
    large = [lambda: jm.quat_mean(q), lambda: jm.align_vectors(v, v), lambda: jm.random_quats(1 << 14, rng=1)]
    small = [lambda: jm.quat_mean(q[:1]), lambda: jm.align_vectors(v[0, 0], v[0, 0]),
             lambda: jm.random_quats(1, rng=1)]
    for big, one in zip(large, small):
        before = _core._gil_releases()
        big()
        assert _core._gil_releases() > before
        before = _core._gil_releases()
        one()
        assert _core._gil_releases() == before


@pytest.mark.parametrize("n", [1, 7, 255, 256, 257, 1000, 2051])
def test_float32_sets_sum_as_their_exact_float64_values(rng, n):
    """float32 records are widened to doubles (exactly) in chunks: a float32 set of any length and
    layout gives the float64 call's result on the same values, rounded once to float32."""
    q = (rng.standard_normal((2 * n, 4)) * [0.2, 0.2, 0.2, 1]).astype(np.float32)
    for variant in (q[:n], q[::2]):  # contiguous records, records two apart
        np.testing.assert_array_equal(jm.quat_mean(variant), jm.quat_mean(variant.astype(np.float64)).astype(np.float32))
    a, b = rng.standard_normal((2, n, 3)).astype(np.float32)
    q32, rssd32 = jm.align_vectors(a, b)
    q64, rssd64 = jm.align_vectors(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(q32, q64.astype(np.float32))
    assert rssd32 == np.float32(rssd64)


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_mean_sets_solved_by_powers_or_jacobi_match_scipy(rng, dtype):
    """Batched means take the eigenvector by matrix powers when its residual certifies it, by Jacobi
    sweeps otherwise: well-separated sets (powers), spread ones (eigenvalues within a few percent:
    Jacobi) and sets of two or three rotations (a repeated or zero eigenvalue), mixed in one call
    so that every lane pattern of a block occurs, all match scipy's one-set means."""
    n_sets, n = 64, 16
    q = spread_quats(rng, (n_sets, n), spread=0.3)
    spread = rng.random(n_sets) < 0.3
    q[spread] = rng.standard_normal((int(spread.sum()), n, 4))  # nearly uniform: close eigenvalues
    few = rng.random(n_sets) < 0.15
    q[few, :, :] = q[few, :1, :] * rng.uniform(0.5, 2, (int(few.sum()), n, 1))  # one rotation, scaled
    q = q.astype(dtype)
    got = jm.quat_mean(q, axis=1)
    for s in range(n_sets):
        k = np.einsum("ni,nj->ij", *(2 * [q[s].astype(np.float64) / np.linalg.norm(q[s].astype(np.float64), axis=1,
                                                                                 keepdims=True)]))
        eig = np.linalg.eigvalsh(k)
        conditioning = n / (eig[-1] - eig[-2])  # the bound scales as trace / gap
        expected = Rotation.from_quat(q[s].astype(np.float64)).mean().as_quat()
        assert angle(got[s], expected) <= BOUND[dtype] * max(1.0, conditioning / 4), s
