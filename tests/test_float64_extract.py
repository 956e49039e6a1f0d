"""extract_rotation on float64 input: the float64 kernel (csrc/extract.c, jm_extract_matrices_f64)
on every path, against an extended-precision polar rotation, the float64 SVD polar rotation and an
independent NumPy implementation of the same method (tests/extract64_oracle.py): accuracy up to
condition 1e4, saddles, rank-deficient and inverted matrices, warm starts, NaN, scale, sizes,
layouts, out=, and that nothing on the path is NumPy's."""

import sys

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import SIZES, assert_threads_agree, hard_quats, layouts, random_unit_quats
from extract64_oracle import extract_rotation64

EXTENDED_BOUND = 2e-15  # rad per sigma1 / (sigma2 + sigma3): against the extended-precision polar
SVD_BOUND = 1.2e-14  # the same against numpy.linalg.svd, whose own error is up to 1.08e-14 of it
UNIT_BOUND = 1e-15  # | |q| - 1 |


def rotations(q):
    return ref.quat_to_matrix(q)


def stretched(rng, n, max_condition):
    """float64 A = R S, S symmetric positive definite of condition <= max_condition (log-uniform),
    with a random overall scale."""
    r = rotations(random_unit_quats(rng, n, np.float64))
    v = rotations(random_unit_quats(rng, n, np.float64))
    kappa = np.exp(rng.uniform(0, np.log(max_condition), n))
    s = np.stack([np.ones(n), rng.uniform(1, kappa), kappa], 1) * np.exp(rng.uniform(-2, 2, (n, 1)))
    return r @ v @ (s[:, :, None] * np.swapaxes(v, 1, 2))


def conditioning(a):
    s = np.linalg.svd(a, compute_uv=False)
    return s[:, 0] / (s[:, 1] + s[:, 2])


def extended_polar(a, iterations=40):
    """The polar rotation of det > 0 matrices in np.longdouble: the scaled Newton iteration
    X <- (g X + X^-T / g) / 2 (Higham), X^-T from the cofactors."""
    x = np.asarray(a, np.longdouble).copy()
    for _ in range(iterations):
        cof = np.cross(x[:, [1, 2, 0]], x[:, [2, 0, 1]])
        inv_t = cof / np.sum(x[:, 0] * cof[:, 0], -1)[:, None, None]
        g = np.sqrt(np.sqrt(np.sum(inv_t * inv_t, (1, 2)) / np.sum(x * x, (1, 2))))[:, None, None]
        x = (g * x + inv_t / g) / 2
    return x


def angle_to(q, r):
    """Angle (rad) between the rotations of float64 quaternions q and extended-precision matrices
    r, from the skew part of r^T R(q) evaluated in np.longdouble."""
    q = np.asarray(q, np.longdouble)
    q = q / np.sqrt(np.sum(q * q, -1, keepdims=True))
    x, y, z, w = np.moveaxis(q, -1, 0)
    rq = np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                   np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                   np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)
    m = np.swapaxes(r, -1, -2) @ rq
    v = np.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1)
    cos = (np.trace(m, axis1=-2, axis2=-1) - 1) / 2
    return np.asarray(np.arctan2(np.sqrt(np.sum(v * v, -1)) / 2, cos), np.float64)


def check_unit(q):
    assert q.dtype == np.float64 and np.isfinite(q).all()
    assert np.abs(np.linalg.norm(q, axis=-1) - 1).max(initial=0) <= UNIT_BOUND


# ---------------------------------------------------------------- accuracy --


@pytest.mark.parametrize("max_condition", [10, 1e3, 1e4])
def test_newton_within_the_bound_of_the_polar_rotation(rng, max_condition):
    a = stretched(rng, 4000, max_condition)
    kappa = conditioning(a)
    q, iterations = jm.extract_rotation(a, return_iterations=True)
    check_unit(q)
    assert (angle_to(q, extended_polar(a)) <= EXTENDED_BOUND * kappa).all()
    svd = ref.matrix_to_quat(ref.polar_rotation(a))
    assert (ref.angle_between(q, svd) <= SVD_BOUND * kappa).all()
    assert np.median(iterations) <= 5 and iterations.max() <= 12


def test_rotation_matrices_come_back(rng):
    q_true = np.concatenate([random_unit_quats(rng, 3000, np.float64), hard_quats(rng, np.float64)])
    m = rotations(q_true)
    q = jm.extract_rotation(m)
    check_unit(q)
    assert ref.angle_between(q, ref.matrix_to_quat(m)).max() <= 2e-15
    q_far = jm.extract_rotation(m, random_unit_quats(rng, len(m), np.float64))  # from anywhere
    assert ref.angle_between(q_far, ref.matrix_to_quat(m)).max() <= 2e-15


def test_muller_converges_to_its_tolerance(rng):
    # linear: stopping on |omega| < tol leaves about tol (s1 + s2 + s3) / (s2 + s3) rad
    a = stretched(rng, 2000, 10)
    s = np.linalg.svd(a, compute_uv=False)
    q = jm.extract_rotation(a, method="muller", tol=1e-14, max_iter=5000)
    check_unit(q)
    err = angle_to(q, extended_polar(a))
    assert (err <= 2e-14 * s.sum(1) / (s[:, 1] + s[:, 2]) + EXTENDED_BOUND * conditioning(a)).all()


@pytest.mark.parametrize("method", ["newton", "muller"])
@pytest.mark.parametrize("warm", [False, True])
def test_same_updates_as_the_numpy_method(rng, method, warm):
    # the same start, the same updates and stops as an independent NumPy implementation: equal
    # iteration counts for well-separated matrices, results within the rounding of both
    a = stretched(rng, 1500, 100 if method == "newton" else 10)  # Mueller converges within 200 updates
    q0 = random_unit_quats(rng, 1500, np.float64) if warm else None
    q, iterations = jm.extract_rotation(a, q0, method=method, return_iterations=True)
    expected, expected_iterations = extract_rotation64(a, q0, method == "newton", 200, None, True)
    agree = iterations == expected_iterations
    assert agree.mean() >= 0.99
    if method == "newton":
        assert ref.angle_between(q, expected).max() <= 1e-13
    else:  # tol 1e-12 per update, linear: both stop within about 1e-11 of the answer
        assert ref.angle_between(q[agree], expected[agree]).max() <= 1e-10


def test_float32_input_agrees_to_float32_accuracy(rng):
    a = stretched(rng, 500, 10).astype(np.float32)
    q32 = jm.extract_rotation(a)
    q64 = jm.extract_rotation(a.astype(np.float64))
    assert q64.dtype == np.float64 and ref.angle_between(q32, q64).max() <= 1e-5


# ------------------------------------------------ the maximum, not a saddle --


def saddle_matrices(rng, n):
    """Symmetric A = W diag(1, -m, -1/100) W^T: R = I is a saddle of trace(R^T A) on which the cold
    start lands whenever A's largest-divisor case is w (tests/test_extract.py's case)."""
    w = rotations(random_unit_quats(rng, n, np.float64))
    s = np.stack([np.ones(n), -np.exp(rng.uniform(np.log(1e-2), 0, n)), np.full(n, -1e-2)], 1)
    return (w * s[:, None, :]) @ np.swapaxes(w, 1, 2)


@pytest.mark.parametrize("method", ["newton", "muller"])
def test_cold_start_never_stops_at_a_saddle(rng, method):
    a = saddle_matrices(rng, 2000)
    q, iterations = jm.extract_rotation(a, method=method, max_iter=5000, return_iterations=True)
    check_unit(q)
    kappa = conditioning(a)
    svd = ref.matrix_to_quat(ref.polar_rotation(a))
    bound = SVD_BOUND * kappa if method == "newton" else 1e-9
    assert (ref.angle_between(q, svd) <= bound).all()
    assert iterations.min() >= 1


@pytest.mark.parametrize("method", ["newton", "muller"])
def test_warm_start_at_a_saddle_leaves_it(method):
    a = np.broadcast_to(np.diag([1.0, 0.5, 0.2]), (3, 3, 3))
    q, iterations = jm.extract_rotation(a, np.eye(4)[:3], method=method, return_iterations=True)
    assert ref.angle_between(q, [0, 0, 0, 1]).max() <= 1e-14
    assert (iterations >= 1).all()


# ------------------------------------------- rank-deficient, inverted, zero --


def test_rank_two_and_inverted_give_the_proper_polar_rotation(rng):
    n = 1000
    u = rotations(random_unit_quats(rng, n, np.float64))
    v = rotations(random_unit_quats(rng, n, np.float64))
    s = np.stack([np.ones(n), rng.uniform(0.2, 1, n), np.where(np.arange(n) < n // 2, 0.0, -rng.uniform(0, 0.1, n))], 1)
    a = u @ (s[:, :, None] * np.swapaxes(v, 1, 2))
    q = jm.extract_rotation(a)
    check_unit(q)
    polar = ref.matrix_to_quat(ref.polar_rotation(a))
    kappa = s[:, 0] / (s[:, 1] + s[:, 2])
    assert (ref.angle_between(q, polar) <= SVD_BOUND * kappa).all()


@pytest.mark.parametrize("method", ["newton", "muller"])
def test_rank_one_keeps_the_other_directions_from_q0(rng, method):
    n = 300
    u = rng.standard_normal((n, 3))
    v = rng.standard_normal((n, 3))
    a = u[:, :, None] * v[:, None, :]  # maps v to u
    q0 = random_unit_quats(rng, n, np.float64)
    q = jm.extract_rotation(a, q0, method=method, max_iter=1000)
    check_unit(q)
    v_hat = v / np.linalg.norm(v, axis=1, keepdims=True)
    u_hat = u / np.linalg.norm(u, axis=1, keepdims=True)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", rotations(q), v_hat), u_hat, atol=1e-11)
    r0v = np.einsum("nij,nj->ni", rotations(q0), v_hat)  # shortest arc from the start
    between = np.arccos(np.clip(np.sum(r0v * u_hat, 1), -1, 1))
    np.testing.assert_allclose(ref.angle_between(q, q0), between, atol=1e-7)


def test_zero_matrix_returns_the_start(rng):
    q0 = random_unit_quats(rng, 50, np.float64)
    q, iterations = jm.extract_rotation(np.zeros((50, 3, 3)), q0, return_iterations=True)
    np.testing.assert_array_equal(q, q0)  # unit q0: bit for bit
    assert (iterations == 0).all()
    q_scaled = jm.extract_rotation(np.zeros((50, 3, 3)), q0 * 7)
    check_unit(q_scaled)
    assert ref.angle_between(q_scaled, q0).max() <= 1e-15
    tiny = jm.extract_rotation(np.zeros((50, 3, 3)), q0 * 1e-310)  # denormal q0
    check_unit(tiny)
    np.testing.assert_array_equal(jm.extract_rotation(np.zeros((3, 3)), np.zeros(4)), [0, 0, 0, 1])
    np.testing.assert_array_equal(jm.extract_rotation(np.zeros((2, 3, 3))), [[0, 0, 0, 1]] * 2)


def test_max_iter_zero_and_tol_zero(rng):
    a = stretched(rng, 37, 10)
    q0 = random_unit_quats(rng, 37, np.float64)
    q, iterations = jm.extract_rotation(a, q0, max_iter=0, return_iterations=True)
    np.testing.assert_array_equal(q, q0)
    assert (iterations == 0).all()
    _, iterations = jm.extract_rotation(a, q0, method="muller", tol=0, max_iter=25, return_iterations=True)
    assert (iterations == 25).all()


def test_nan_and_inf_stay_in_their_matrix(rng):
    a = stretched(rng, 40, 10)
    q0 = random_unit_quats(rng, 40, np.float64)
    clean, clean_iterations = jm.extract_rotation(a, q0, return_iterations=True)
    for k in (0, 7, 16, 39):
        others = np.arange(40) != k
        bad = a.copy()
        bad[k, 1, 2] = np.nan
        q, iterations = jm.extract_rotation(bad, q0, return_iterations=True)
        assert np.isnan(q[k]).all() and iterations[k] == 1
        np.testing.assert_array_equal(q[others], clean[others])
        np.testing.assert_array_equal(iterations[others], clean_iterations[others])
        bad_q0 = q0.copy()
        bad_q0[k, 0] = np.nan
        q = jm.extract_rotation(a, bad_q0)
        assert np.isnan(q[k]).all()
        np.testing.assert_array_equal(q[others], clean[others])
        bad[k, 0, 0] = np.inf
        assert np.isnan(jm.extract_rotation(bad, method="muller")[k]).all()


@pytest.mark.parametrize("method", ["newton", "muller"])
def test_power_of_two_scale_changes_nothing(rng, method):
    a = stretched(rng, 64, 100)
    q = jm.extract_rotation(a, method=method)
    for e in (-1074 + 60, -1000, -300, 300, 1000):  # the elements' exponents stay in range
        scaled = a * 2.0**e
        np.testing.assert_array_equal(jm.extract_rotation(scaled, method=method), q)
    huge = np.full((3, 3), np.finfo(np.float64).max) * np.diag([1.0, -1.0, 1.0])
    assert np.isfinite(jm.extract_rotation(huge)).all()
    denormal = np.diag([5e-324, 5e-324, 1e-323])
    np.testing.assert_array_equal(jm.extract_rotation(denormal), [0, 0, 0, 1])


# ------------------------------------------------------------ shapes, layouts --


@pytest.mark.parametrize("n", SIZES)
def test_every_size_is_lane_independent(rng, n):
    a = stretched(rng, max(SIZES), 1000)
    q0 = random_unit_quats(rng, max(SIZES), np.float64)
    for method in ("newton", "muller"):
        full, full_iterations = jm.extract_rotation(a, q0, method=method, return_iterations=True)
        q, iterations = jm.extract_rotation(a[:n], q0[:n], method=method, return_iterations=True)
        assert q.shape == (n, 4) and iterations.shape == (n,)
        np.testing.assert_array_equal(q, full[:n])
        np.testing.assert_array_equal(iterations, full_iterations[:n])
        for k in range(min(n, 9)):  # one at a time: the same as in any block
            np.testing.assert_array_equal(jm.extract_rotation(a[k], q0[k], method=method), full[k])


def test_array_layouts(rng):
    a = stretched(rng, 29, 100)
    q0 = random_unit_quats(rng, 29, np.float64)
    expected = jm.extract_rotation(a, q0)
    for name, a_layout in layouts(a).items():
        np.testing.assert_array_equal(jm.extract_rotation(a_layout), jm.extract_rotation(a), err_msg=name)
        for q0_name, q0_layout in layouts(q0).items():
            np.testing.assert_array_equal(jm.extract_rotation(a_layout, q0_layout), expected, err_msg=name + q0_name)
    # transposed and interleaved views
    big = np.zeros((29, 3, 3, 2))
    big[..., 1] = a
    np.testing.assert_array_equal(jm.extract_rotation(big[..., 1], q0), expected)


def test_broadcasting_dtypes_and_out(rng):
    a = stretched(rng, 12, 10).reshape(3, 4, 3, 3)
    q0 = random_unit_quats(rng, 4, np.float64)
    q = jm.extract_rotation(a, q0)
    assert q.shape == (3, 4, 4) and q.dtype == np.float64
    np.testing.assert_array_equal(q[1], jm.extract_rotation(a[1], q0))
    # a float32 q0 is converted to float64
    q_from32 = jm.extract_rotation(a, q0.astype(np.float32))
    assert q_from32.dtype == np.float64
    np.testing.assert_array_equal(q_from32, jm.extract_rotation(a, q0.astype(np.float32).astype(np.float64)))
    out = np.empty((3, 4, 4))
    result, iterations = jm.extract_rotation(a, q0, out=out, return_iterations=True)
    assert result is out and iterations.shape == (3, 4)
    np.testing.assert_array_equal(out, q)
    strided_out = np.zeros((3, 4, 8))[..., ::2]
    assert jm.extract_rotation(a, q0, out=strided_out) is strided_out
    np.testing.assert_array_equal(strided_out, q)
    warm = np.broadcast_to(q0, (3, 4, 4)).copy()  # out = q0: updated in place
    assert jm.extract_rotation(a, warm, out=warm) is warm
    np.testing.assert_array_equal(warm, q)
    with pytest.raises(TypeError, match="out"):
        jm.extract_rotation(a, out=np.empty((3, 4, 4), np.float32))


def test_inputs_are_never_modified(rng):
    a = stretched(rng, 33, 10)
    q0 = random_unit_quats(rng, 33, np.float64) * 3
    a_copy, q0_copy = a.copy(), q0.copy()
    jm.extract_rotation(a, q0)
    jm.extract_rotation(a, q0, method="muller")
    np.testing.assert_array_equal(a, a_copy)
    np.testing.assert_array_equal(q0, q0_copy)


def test_threads_agree(rng):
    a = stretched(rng, 20000, 100)
    assert_threads_agree(lambda: jm.extract_rotation(a, return_iterations=True))


def test_no_numpy_route_on_the_path(rng, monkeypatch):
    # the float64 path runs the kernel: no Python module computes it
    def refuse(*args, **kwargs):
        raise AssertionError("jointmath.reference on the product path")

    a = stretched(np.random.default_rng(1), 50, 10)
    for name in ("polar_rotation", "extract_rotation", "matrix_to_quat", "quat_to_matrix"):
        monkeypatch.setattr(ref, name, refuse)
    monkeypatch.setitem(sys.modules, "jointmath._extract64", None)  # an import would fail
    assert jm.extract_rotation(a).dtype == np.float64
    assert jm.extract_rotation(a, method="muller").dtype == np.float64
