"""extract_rotation: accuracy against the SVD polar rotation and the paper's loop, the paper's
convergence experiment, rank-deficient / inverted / non-finite input, layouts, out=, bad input.
float64 input runs the float64 kernel: against an extended-precision polar rotation, the float64
SVD polar rotation and an independent NumPy implementation of the same method
(tests/extract64_oracle.py), and nothing on its path is NumPy's."""

import sys

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import SIZES, assert_threads_agree, hard_quats, layouts, random_unit_quats
from extract64_oracle import extract_rotation64

POLAR_BOUND_999 = 1e-5  # rad, condition number <= 10: 99.9 % of matrices
POLAR_BOUND_ALL = 1e-4  # rad, all of them
ROTATION_BOUND = 1e-6  # rad, rotation matrices in
NORM_BOUND = 5e-7  # | |q| - 1 |


def rotations(q):
    return ref.quat_to_matrix(q)


def stretched(rng, n, max_condition, dtype=np.float32):
    """A = R S with S symmetric positive definite of condition number <= max_condition (log-
    uniform), a random overall scale, and the polar rotation R as a float64 quaternion; in dtype."""
    r = rotations(random_unit_quats(rng, n, np.float64))
    v = rotations(random_unit_quats(rng, n, np.float64))
    kappa = np.exp(rng.uniform(0, np.log(max_condition), n))
    s = np.stack([np.ones(n), rng.uniform(1, kappa), kappa], 1) * np.exp(rng.uniform(-2, 2, (n, 1)))
    a = r @ v @ (s[:, :, None] * np.swapaxes(v, 1, 2))
    return a.astype(dtype)


def euler_quats(angles):
    """Quaternions of R = Rz(c) Ry(b) Rx(a) for rows (a, b, c), radians: extrinsic "xyz"."""
    return ref.euler_to_quat(angles, "xyz", degrees=False)

def check_unit(q):
    assert np.isfinite(q).all()
    assert np.abs(np.linalg.norm(q.astype(np.float64), axis=-1) - 1).max(initial=0) <= NORM_BOUND


# ---------------------------------------------------------------- accuracy --


def test_matches_svd_polar_rotation_for_condition_up_to_10(rng):
    a = stretched(rng, 10000, 10)
    q = jm.extract_rotation(a)
    assert q.dtype == np.float32 and q.shape == (10000, 4)
    check_unit(q)
    err = ref.angle_between(q, ref.matrix_to_quat(ref.polar_rotation(a)))
    assert np.quantile(err, 0.999) <= POLAR_BOUND_999
    assert err.max() <= POLAR_BOUND_ALL


def test_rotation_matrices_come_back(rng):
    q_true = np.concatenate([random_unit_quats(rng, 5000), hard_quats(rng)])
    m = rotations(q_true).astype(np.float32)
    exact = ref.matrix_to_quat(m)  # the float32 matrices' own rotation
    q = jm.extract_rotation(m)
    check_unit(q)
    assert ref.angle_between(q, exact).max() <= ROTATION_BOUND
    # also from far away: a random warm start
    q_far = jm.extract_rotation(m, random_unit_quats(rng, len(m)))
    assert ref.angle_between(q_far, exact).max() <= ROTATION_BOUND


def test_follows_the_papers_loop(rng):
    # same start, same number of updates: the float32 kernel tracks the float64 paper loop
    a = stretched(rng, 2000, 5)
    answer = ref.matrix_to_quat(ref.polar_rotation(a))
    q0 = ref.quat_multiply(euler_quats(rng.uniform(-0.4, 0.4, (2000, 3))), answer).astype(np.float32)
    for max_iter in (1, 3, 8):
        q = jm.extract_rotation(a, q0, method="muller", max_iter=max_iter, tol=0)
        expected = ref.extract_rotation(a, q0, max_iter=max_iter, tol=0)
        assert ref.angle_between(q, expected).max() <= 2e-6


def test_one_update_from_anywhere_matches_the_papers_step(rng):
    # random A and starts: steps of every size, including those beyond pi that the exponential
    # map reduces by 2 pi (the step's own float32 conditioning, |omega| ~ 1 / |trace|, grows
    # with its size, hence the looser bound there)
    a = rng.uniform(-1, 1, (5000, 3, 3)).astype(np.float32)
    q0 = random_unit_quats(rng, 5000)
    r, m = rotations(q0), a.astype(np.float64)
    omega = np.cross(r, m, axis=-2).sum(-1) / (np.abs(np.sum(r * m, axis=(1, 2))) + 1e-9)[:, None]
    theta = np.linalg.norm(omega, axis=1)
    err = ref.angle_between(jm.extract_rotation(a, q0, method="muller", max_iter=1, tol=0),
                            ref.extract_rotation(a, q0, max_iter=1, tol=0))
    assert err[theta <= np.pi].max() <= 5e-6
    reduced = (theta > np.pi) & (theta < 10)
    assert reduced.sum() > 500 and err[reduced].max() <= 1e-4


def test_float64_computes_in_float64(rng):
    a = stretched(rng, 300, 10).astype(np.float64)
    q, iterations = jm.extract_rotation(a, return_iterations=True)
    assert q.dtype == np.float64 and iterations.dtype == np.int32
    polar = ref.matrix_to_quat(ref.polar_rotation(a))
    assert ref.angle_between(q, polar).max() <= 1e-12 and iterations.max() <= 12
    # Mueller's method in float64 is the paper's loop
    q_muller = jm.extract_rotation(a, method="muller")
    assert ref.angle_between(q_muller, polar).max() <= 1e-9
    for max_iter in (1, 5):
        np.testing.assert_allclose(jm.extract_rotation(a, method="muller", max_iter=max_iter, tol=0),
                                   ref.extract_rotation(a, max_iter=max_iter, tol=0), rtol=0, atol=1e-13)
    # a float32 q0 is converted to a's dtype
    q_warm = jm.extract_rotation(a, q.astype(np.float32))
    assert q_warm.dtype == np.float64 and ref.angle_between(q_warm, q).max() <= 1e-9


# ------------------------------------------------------- the paper's experiment --


def test_paper_experiment_warm_starts_within_pi_over_3(rng):
    n = 20000
    identity = np.broadcast_to(np.eye(3, dtype=np.float32), (n, 3, 3))
    q0 = euler_quats(rng.uniform(-np.pi / 3, np.pi / 3, (n, 3))).astype(np.float32)
    q = jm.extract_rotation(identity, q0, method="muller", max_iter=3, tol=0)
    frobenius2 = 8 * np.sin(ref.angle_between(q, [0, 0, 0, 1]) / 2) ** 2  # ||I - R||_F^2
    assert (frobenius2 < 0.001).mean() >= 0.95


def test_paper_experiment_random_starts_always_converge(rng):
    n = 20000
    identity = np.broadcast_to(np.eye(3, dtype=np.float32), (n, 3, 3))
    q = jm.extract_rotation(identity, random_unit_quats(rng, n), method="muller")
    assert ref.angle_between(q, [0, 0, 0, 1]).max() <= ROTATION_BOUND


# ------------------------------------------------------------- robustness --


def test_zero_matrix_returns_q0_unchanged(rng):
    q0 = random_unit_quats(rng, 50)
    q, iterations = jm.extract_rotation(np.zeros((50, 3, 3), np.float32), q0, return_iterations=True)
    np.testing.assert_array_equal(q, q0)
    assert (iterations == 0).all()
    # a non-unit q0 comes back normalised; q0 = 0 means the identity
    q_scaled = jm.extract_rotation(np.zeros((50, 3, 3), np.float32), q0 * np.float32(7))
    assert ref.angle_between(q_scaled, q0).max() <= 1e-6
    check_unit(q_scaled)
    np.testing.assert_array_equal(jm.extract_rotation(np.zeros((3, 3), np.float32), np.zeros(4, np.float32)),
                                  [0, 0, 0, 1])
    np.testing.assert_allclose(jm.extract_rotation(np.zeros((2, 3, 3), np.float32)), [[0, 0, 0, 1]] * 2, atol=1e-7)


def test_float64_warm_start_of_any_size_for_float32_a(rng):
    """A float64 q0 for float32 a is used by its direction: 1e300 or 1e-300 of a unit quaternion is
    that quaternion (a plain cast made it inf, then NaN, or 0, then the identity)."""
    q0 = random_unit_quats(rng, 20).astype(np.float64)
    rotations = np.broadcast_to(np.eye(3, dtype=np.float32), (20, 3, 3))
    for scale in (1e300, 1e-300, 2.0**-1074 * 1e15):
        with np.errstate(under="ignore"):
            scaled = q0 * scale
        with np.errstate(all="raise"):  # and no NumPy cast warning
            from_zero = jm.extract_rotation(np.zeros((20, 3, 3), np.float32), scaled)
            at_identity = jm.extract_rotation(rotations, scaled)
        assert from_zero.dtype == np.float32
        assert ref.angle_between(from_zero, q0).max() <= 1e-6
        assert ref.angle_between(at_identity, np.array([0, 0, 0, 1.0])).max() <= 1e-3
    # records of JOINT_MAT are float32 too
    mats = jm.joints_to_mats(jm.make_joints(random_unit_quats(rng, 20), np.zeros((20, 3))))
    assert ref.angle_between(jm.extract_rotation(mats, q0 * 1e300), jm.extract_rotation(mats, q0)).max() <= 1e-6


def test_rank_one_keeps_the_other_directions_from_q0(rng):
    n = 500
    u = rng.standard_normal((n, 3))
    v = rng.standard_normal((n, 3))
    a = (u[:, :, None] * v[:, None, :]).astype(np.float32)  # A = u v^T: A maps v to u
    q0 = random_unit_quats(rng, n)
    q = jm.extract_rotation(a, q0, max_iter=1000)
    check_unit(q)
    r, r0 = rotations(q), rotations(q0)
    v_hat = v / np.linalg.norm(v, axis=1, keepdims=True)
    u_hat = u / np.linalg.norm(u, axis=1, keepdims=True)
    # R v points along u ...
    np.testing.assert_allclose(np.einsum("nij,nj->ni", r, v_hat), u_hat, atol=1e-5)
    # ... reached from R0 by the shortest arc: the rotation R R0^T turns R0 v to u about their
    # common normal, by the angle between them, and nothing else
    r0v = np.einsum("nij,nj->ni", r0, v_hat)
    turn = ref.angle_between(q, q0)
    between = np.arccos(np.clip(np.sum(r0v * u_hat, 1), -1, 1))
    np.testing.assert_allclose(turn, between, atol=2e-5)


def test_rank_two_and_inverted_matrices_give_the_proper_polar_rotation(rng):
    n = 2000
    u = rotations(random_unit_quats(rng, n, np.float64))
    v = rotations(random_unit_quats(rng, n, np.float64))
    s = np.sort(rng.uniform(1, 2, (n, 3)), axis=1)[:, ::-1] * [1, 1, 0]  # rank 2
    rank2 = (u * s[:, None, :]) @ np.swapaxes(v, 1, 2)
    s_inv = np.sort(rng.uniform(1, 2, (n, 3)), axis=1)[:, ::-1] * [1, 1, -0.5]  # det < 0
    inverted = (u * s_inv[:, None, :]) @ np.swapaxes(v, 1, 2)
    for a in (rank2.astype(np.float32), inverted.astype(np.float32)):
        q = jm.extract_rotation(a, max_iter=1000)
        check_unit(q)
        polar = ref.polar_rotation(a)
        assert np.allclose(np.linalg.det(polar), 1)
        assert ref.angle_between(q, ref.matrix_to_quat(polar)).max() <= 1e-5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("family", ["kappa 1e4, sigma2 1..3", "det < 0, gap 1e-2", "det < 0, gap 1e-3"])
def test_weakly_determined_axes_converge(rng, dtype, family):
    """Matrices whose maximum is weakly determined about one axis, where the start may lie on
    the wrong side of it: sigma = (1e4, 1..3, 1) (sigma2 / sigma1 below 2^-12, which the rank
    test once took for rank one: only Mueller's updates, 200 of them, ending up to pi off), and
    det A < 0 with sigma = (1, 1, 1 - gap) (the Ritz axis, from too few squarings of the power
    iteration, fell on the flat direction of a saddle instead of the descending one). Every one
    converges within its bound in a few updates, float32 and float64, on every path."""
    n = 1000
    u = rotations(random_unit_quats(rng, n, np.float64))
    v = rotations(random_unit_quats(rng, n, np.float64))
    if family.startswith("kappa"):
        s = np.stack([np.full(n, 1e4), rng.uniform(1, 3, n), np.ones(n)], 1)
    else:
        gap = float(family.split()[-1])
        s = np.tile([1.0, 1.0, -(1 - gap)], (n, 1))
    a = (u * s[:, None, :]) @ np.swapaxes(v, 1, 2)
    q, iterations = jm.extract_rotation(a.astype(dtype), return_iterations=True)
    error = ref.angle_between(q, ref.matrix_to_quat(ref.polar_rotation(a)))
    sigma = np.abs(s)
    if family.startswith("kappa"):
        conditioning = sigma[:, 0] / (sigma[:, 1] + sigma[:, 2])
        bound = np.maximum(1e-6, 1e-6 * conditioning) if dtype == np.float32 else 1.2e-14 * conditioning
    else:
        bound = (1e-6 if dtype == np.float32 else 5e-14) / (sigma[:, 1] - sigma[:, 2])
    assert iterations.max() <= 20, np.sort(iterations)[-5:]
    assert (error <= bound).all(), (error / bound).max()


@pytest.mark.parametrize("family", ["kappa 1e6", "kappa 1e8", "det < 0, gap 1e-4"])
def test_float64_converges_where_float32_cannot_tell(rng, family):
    """float64 takes Newton's and the Ritz updates down to its own precision (a curvature margin
    of 2^-40 of A's scale, not float32's 2^-14): condition 1e6 and 1e8, and det A < 0 near-ties
    with a gap of 1e-4, converge in a few updates within float64's conditioning (before, 22 %
    of condition 1e6 ran all 200 updates and stopped far off)."""
    n = 2000
    u = rotations(random_unit_quats(rng, n, np.float64))
    v = rotations(random_unit_quats(rng, n, np.float64))
    if family.startswith("kappa"):
        kappa = float(family.split()[-1])
        s = np.stack([np.full(n, kappa), 10 ** rng.uniform(0, np.log10(kappa), n), np.ones(n)], 1)
        bound = 2e-15 * s[:, 0] / (s[:, 1] + s[:, 2]) + 1e-14
    else:
        s = np.tile([1.0, 1.0, -(1 - 1e-4)], (n, 1))
        bound = np.full(n, 5e-14 / 1e-4)
    a = (u * s[:, None, :]) @ np.swapaxes(v, 1, 2)
    q, iterations = jm.extract_rotation(a, return_iterations=True)
    error = ref.angle_between(q, ref.matrix_to_quat(ref.polar_rotation(a)))
    assert iterations.max() <= 20, np.sort(iterations)[-5:]
    assert (error <= bound).all(), (error / bound).max()


def test_no_nan_from_finite_input(rng):
    base = rng.uniform(-3, 3, (400, 3, 3))
    scales = np.array([1, 1e38, 1e-38, 1e-42, 3e-45, 2.0**-100, 2.0**100])
    a = np.concatenate([base * s for s in scales]).astype(np.float32)
    a[:20] = 0
    a[20:40, :, 1:] = 0  # rank 1
    a[40:60] = -np.eye(3)
    a[60:80] = np.diag([1, 1, -1])
    a[80:100] = np.finfo(np.float32).max * rng.choice([-1, 1], (20, 3, 3))
    q0 = random_unit_quats(rng, len(a))
    q0[:50] *= np.float32(1e30)
    q0[50:100] *= np.float32(1e-30)
    q0[100:120] = 0
    # the paper's maximum equilibrium for A = I: zero torque, but not the answer
    q0[120] = ref.matrix_to_quat(np.array([[0, 1, 0], [1, 0, 0], [0, 0, -1.0]]))
    a[120] = np.eye(3)
    for start in (None, q0):
        check_unit(jm.extract_rotation(a, start))
        check_unit(jm.extract_rotation(a, start, max_iter=3))
    # subnormal matrices are scaled like any other (the float64 loop sees the same values)
    tiny = (stretched(rng, 100, 10) * np.float32(2.0**-140)).astype(np.float32)
    assert ref.angle_between(jm.extract_rotation(tiny), ref.extract_rotation(tiny, tol=2e-7)).max() <= 1e-5


def test_float64_robustness(rng):
    a = np.concatenate([rng.uniform(-3, 3, (50, 3, 3)), np.zeros((5, 3, 3)), 1e300 * rng.uniform(-3, 3, (5, 3, 3))])
    q0 = random_unit_quats(rng, 60, np.float64)
    q, iterations = jm.extract_rotation(a, q0, return_iterations=True)
    assert np.isfinite(q).all()
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1, atol=1e-15)
    np.testing.assert_allclose(q[50:55], q0[50:55], atol=1e-16)  # A = 0: q0
    assert (iterations[50:55] == 0).all()
    bad = a.copy()
    bad[3, 2, 2] = np.nan
    q_bad = jm.extract_rotation(bad, q0)
    assert np.isnan(q_bad[3]).all()
    others = np.arange(60) != 3
    np.testing.assert_array_equal(q_bad[others], q[others])


def test_power_of_two_scale_changes_nothing(rng):
    a = stretched(rng, 200, 10)
    q0 = random_unit_quats(rng, 200)
    expected = jm.extract_rotation(a, q0)
    for exponent in (-100, -3, 1, 7, 60):
        scaled = (a * np.float32(2.0**exponent)).astype(np.float32)
        np.testing.assert_array_equal(jm.extract_rotation(scaled, q0), expected)


@pytest.mark.parametrize("dtype, inf_method", [(np.float32, "newton"), (np.float64, "muller")])
def test_nan_and_inf_stay_in_their_matrix(rng, dtype, inf_method):
    a = stretched(rng, 40, 10, dtype)
    q0 = random_unit_quats(rng, 40, dtype)
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
        assert np.isnan(jm.extract_rotation(bad, method=inf_method)[k]).all()


def test_iteration_counts(rng):
    a = stretched(rng, 300, 10)
    q, iterations = jm.extract_rotation(a, return_iterations=True)
    assert iterations.shape == (300,) and iterations.dtype == np.int32
    assert 0 < iterations.max() <= 200
    # the count is the number of updates: stopping there gives the same result
    for k in (0, 5, 299):
        again = jm.extract_rotation(a[k], max_iter=int(iterations[k]), tol=0)
        np.testing.assert_array_equal(again, q[k])
    _, all_of_them = jm.extract_rotation(a, max_iter=7, tol=0, return_iterations=True)
    assert (all_of_them == 7).all()
    zero_iter = jm.extract_rotation(a, random_unit_quats(rng, 300), max_iter=0)
    check_unit(zero_iter)


# ---------------------------------------------------------------- records --


def test_joint_mat_records_use_the_3x3_part(rng):
    a = stretched(rng, 37, 10)
    mats = np.zeros(37, jm.JOINT_MAT)
    mats["m"][:, :, :3] = a
    mats["m"][:, :, 3] = rng.uniform(-1e30, 1e30, (37, 3))  # translations play no part
    q0 = random_unit_quats(rng, 37)
    expected = jm.extract_rotation(a, q0)
    q = jm.extract_rotation(mats, q0)
    assert q.dtype == np.float32 and q.shape == (37, 4)
    np.testing.assert_array_equal(q, expected)
    np.testing.assert_array_equal(jm.extract_rotation(mats[::-2]), jm.extract_rotation(a[::-2]))
    np.testing.assert_array_equal(jm.extract_rotation(mats.reshape(37, 1)[:, 0]), jm.extract_rotation(a))
    np.testing.assert_array_equal(jm.extract_rotation(mats[3]), jm.extract_rotation(a[3]))


# ---------------------------------------------------------------- layouts --


@pytest.mark.parametrize("n", SIZES)
def test_every_size_matches_a_longer_run(rng, n):
    # a matrix's result depends on nothing else in its block: no position, tail or block-mate
    a = stretched(rng, 1000, 10)
    q0 = random_unit_quats(rng, 1000)
    full, full_iterations = jm.extract_rotation(a, q0, return_iterations=True)
    q, iterations = jm.extract_rotation(a[:n], q0[:n], return_iterations=True)
    assert q.shape == (n, 4) and iterations.shape == (n,)
    np.testing.assert_array_equal(q, full[:n])
    np.testing.assert_array_equal(iterations, full_iterations[:n])
    np.testing.assert_array_equal(jm.extract_rotation(a[1000 - n:]), jm.extract_rotation(a)[1000 - n:])


@pytest.mark.parametrize("name", ["contiguous", "strided", "reversed", "readonly", "unaligned", "fortran"])
def test_array_layouts(rng, name):
    a = stretched(rng, 37, 10)
    q0 = random_unit_quats(rng, 37)
    expected = jm.extract_rotation(a, q0)
    a_variant, q0_variant = layouts(a)[name], layouts(q0)[name]
    saved = a_variant.copy(), q0_variant.copy()
    np.testing.assert_array_equal(jm.extract_rotation(a_variant, q0_variant), expected)
    np.testing.assert_array_equal(jm.extract_rotation(np.swapaxes(np.swapaxes(a, 1, 2).copy(), 1, 2), q0), expected)
    np.testing.assert_array_equal(a_variant, saved[0])
    np.testing.assert_array_equal(q0_variant, saved[1])


def test_broadcasting_and_shapes(rng):
    a = stretched(rng, 30, 10)
    q0 = random_unit_quats(rng, 30)
    one_start = jm.extract_rotation(a, q0[0])
    np.testing.assert_array_equal(one_start, jm.extract_rotation(a, np.repeat(q0[:1], 30, axis=0)))
    one_matrix = jm.extract_rotation(a[0], q0.reshape(5, 6, 4))
    assert one_matrix.shape == (5, 6, 4)
    np.testing.assert_array_equal(one_matrix.reshape(30, 4), jm.extract_rotation(np.repeat(a[:1], 30, axis=0), q0))
    grid = jm.extract_rotation(a[:6].reshape(2, 1, 3, 3, 3)[:, :, 0], q0[:3].reshape(1, 3, 4))
    assert grid.shape == (2, 3, 4)
    q, iterations = jm.extract_rotation(a.reshape(2, 15, 3, 3), return_iterations=True)
    assert q.shape == (2, 15, 4) and iterations.shape == (2, 15)
    single, count = jm.extract_rotation(a[4], return_iterations=True)
    assert single.shape == (4,) and count.shape == ()
    assert jm.extract_rotation(np.zeros((0, 3, 3), np.float32)).shape == (0, 4)
    assert jm.extract_rotation(np.zeros((0, 3, 3)), np.zeros((0, 4))).shape == (0, 4)
    assert jm.extract_rotation(np.zeros(0, jm.JOINT_MAT), return_iterations=True)[1].shape == (0,)


# ---------------------------------------------------------------- out= --


def test_out(rng):
    a = stretched(rng, 33, 10)
    q0 = random_unit_quats(rng, 33)
    expected = jm.extract_rotation(a, q0)
    out = np.zeros((33, 4), np.float32)
    assert jm.extract_rotation(a, q0, out=out) is out
    np.testing.assert_array_equal(out, expected)
    # in place: the warm start updated where it lies
    warm = q0.copy()
    assert jm.extract_rotation(a, warm, out=warm) is warm
    np.testing.assert_array_equal(warm, expected)
    # non-contiguous out
    big = np.zeros((66, 4), np.float32)
    result, iterations = jm.extract_rotation(a, q0, out=big[::2], return_iterations=True)
    assert result.base is big and iterations.shape == (33,)
    np.testing.assert_array_equal(big[::2], expected)
    assert (big[1::2] == 0).all()
    # out overlapping a (and q0 partially) is computed as if it did not
    buf = np.zeros(33 * 9 + 33 * 4, np.float32)
    a_view = buf[: 33 * 9].reshape(33, 3, 3)
    a_view[...] = a
    overlapping = buf[33 * 5: 33 * 5 + 33 * 4].reshape(33, 4)
    jm.extract_rotation(a_view, q0, out=overlapping)
    np.testing.assert_array_equal(overlapping, expected)
    shifted = np.zeros((34, 4), np.float32)
    shifted[1:] = q0
    jm.extract_rotation(a, shifted[1:], out=shifted[:33])
    np.testing.assert_array_equal(shifted[:33], expected)
    out64 = np.zeros((33, 4))
    assert jm.extract_rotation(a.astype(np.float64), out=out64) is out64


def test_bad_input():
    a = np.zeros((4, 3, 3), np.float32)
    # array_like like NumPy's ufuncs: lists and integers compute in float64
    identity = jm.extract_rotation([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert identity.dtype == np.float64 and np.allclose(np.abs(identity), [0, 0, 0, 1])
    assert jm.extract_rotation(np.zeros((4, 3, 3), np.int64)).dtype == np.float64
    with pytest.raises(TypeError, match="a must be an array_like of real numbers"):
        jm.extract_rotation(np.zeros(4, jm.JOINT_QUAT))
    with pytest.raises(TypeError, match="a must be an array_like of real numbers .*, got dtype complex64"):
        jm.extract_rotation(np.zeros((4, 3, 3), np.complex64))
    with pytest.raises(ValueError, match=r"a must have shape \(\.\.\., 3, 3\), got shape \(4, 3, 4\)"):
        jm.extract_rotation(np.zeros((4, 3, 4), np.float32))
    with pytest.raises(ValueError, match=r"a must have shape \(\.\.\., 3, 3\), got shape \(9,\)"):
        jm.extract_rotation(np.zeros(9, np.float32))
    assert jm.extract_rotation(a, (0, 0, 0, 1)).dtype == np.float32  # q0 takes a's dtype
    assert jm.extract_rotation(a, np.zeros((4, 4), np.float16)).dtype == np.float32
    with pytest.raises(TypeError, match="q0 must be an array_like of real numbers .*, got dtype <U1"):
        jm.extract_rotation(a, ["x", "y", "z", "w"])
    with pytest.raises(ValueError, match=r"q0 must have shape \(\.\.\., 4\), got shape \(4, 3\)"):
        jm.extract_rotation(a, np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match=r"q0 must broadcast against a: batch shapes \(5,\) and \(4,\) do not"):
        jm.extract_rotation(a, np.zeros((5, 4), np.float32))
    with pytest.raises(TypeError, match="max_iter must be an int, got float"):
        jm.extract_rotation(a, max_iter=3.0)
    with pytest.raises(TypeError, match="max_iter must be an int, got bool"):
        jm.extract_rotation(a, max_iter=True)
    with pytest.raises(ValueError, match=r"max_iter must be in \[0, 2\*\*24\], got -1"):
        jm.extract_rotation(a, max_iter=-1)
    with pytest.raises(ValueError, match=r"max_iter must be in \[0, 2\*\*24\], got 16777217"):
        jm.extract_rotation(a, max_iter=2**24 + 1)
    with pytest.raises(ValueError, match=r"max_iter must be in \[0, 2\*\*24\]"):
        jm.extract_rotation(a, max_iter=10**30)
    with pytest.raises(TypeError, match="tol must be a real number, got str"):
        jm.extract_rotation(a, tol="1e-6")
    with pytest.raises(TypeError, match="tol must be a real number, got bool"):
        jm.extract_rotation(a, tol=False)
    for bad_tol in (-1e-6, float("nan"), float("inf"), 1e31):
        with pytest.raises(ValueError, match=r"tol must be in \[0, 1e30\]"):
            jm.extract_rotation(a, tol=bad_tol)
    with pytest.raises(TypeError, match="out must have dtype float32, got dtype float64"):
        jm.extract_rotation(a, out=np.zeros((4, 4)))
    with pytest.raises(TypeError, match="out must have dtype float64"):
        jm.extract_rotation(a.astype(np.float64), out=np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match=r"out must have shape \(4, 4\), got shape \(4, 3\)"):
        jm.extract_rotation(a, out=np.zeros((4, 3), np.float32))
    with pytest.raises(TypeError, match="out must be a numpy array"):
        jm.extract_rotation(a, out=[])
    readonly = np.zeros((4, 4), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="out must be writeable"):
        jm.extract_rotation(a, out=readonly)
    with pytest.raises(TypeError, match="positional argument"):
        jm.extract_rotation(a, None, 3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'iterations'"):
        jm.extract_rotation(a, iterations=3)
    with pytest.raises(ValueError, match="a must have at most"):
        jm.extract_rotation(np.zeros((1,) * 64, jm.JOINT_MAT))  # NumPy allows 64 dimensions
    # numpy integers and floats are fine
    assert jm.extract_rotation(a, max_iter=np.int64(3), tol=np.float32(1e-6)).shape == (4, 4)


# ---------------------------------------------------------------- threads --


def test_threads_agree_with_sequential_calls(rng):
    a = stretched(rng, 20000, 10)  # large enough for the GIL to be released
    q0 = random_unit_quats(rng, 20000)
    assert_threads_agree(lambda: jm.extract_rotation(a, q0, max_iter=3))


def test_inputs_are_never_modified(rng):
    a = stretched(rng, 100, 10)
    q0 = random_unit_quats(rng, 100)
    mats = np.zeros(100, jm.JOINT_MAT)
    mats["m"][:, :, :3] = a
    saved = [x.copy() for x in (a, q0, mats)]
    jm.extract_rotation(a, q0)
    jm.extract_rotation(mats, q0)
    jm.extract_rotation(a.astype(np.float64), q0)
    for x, y in zip((a, q0, mats), saved):
        np.testing.assert_array_equal(x, y)


def test_reference_polar_rotation_is_proper(rng):
    a = rng.standard_normal((500, 3, 3))
    r = ref.polar_rotation(a)
    np.testing.assert_allclose(np.linalg.det(r), 1, atol=1e-12)
    np.testing.assert_allclose(r @ np.swapaxes(r, 1, 2), np.broadcast_to(np.eye(3), r.shape), atol=1e-12)
    # where det A > 0 it is the plain polar factor U V^T
    u, _, vt = np.linalg.svd(a)
    positive = np.linalg.det(a) > 0
    np.testing.assert_allclose(r[positive], (u @ vt)[positive], atol=1e-12)


# ------------------------------------------------ the maximum, not a saddle --


def saddle_matrices(rng, n, dtype=np.float32):
    """Symmetric A = W diag(1, -m, -1/100) W^T (det > 0, m log-uniform in [1/100, 1]): R = I is a
    stationary point of trace(R^T A) that is not the maximum (a saddle), and the cold start lands
    on it whenever A's largest-divisor case is w; the answer is pi away."""
    w = rotations(random_unit_quats(rng, n, np.float64))
    s = np.stack([np.ones(n), -np.exp(rng.uniform(np.log(1e-2), 0, n)), np.full(n, -1e-2)], 1)
    return ((w * s[:, None, :]) @ np.swapaxes(w, 1, 2)).astype(dtype)


@pytest.mark.parametrize("method", ["newton", "muller"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cold_start_never_stops_at_a_saddle(rng, method, dtype):
    a = saddle_matrices(rng, 2000).astype(dtype)
    q, iterations = jm.extract_rotation(a, method=method, max_iter=1000, return_iterations=True)
    err = ref.angle_between(q, ref.matrix_to_quat(ref.polar_rotation(a)))
    assert err.max() <= 1e-4
    assert iterations.min() >= 1  # the start is never accepted as it is


@pytest.mark.parametrize("method", ["newton", "muller"])
@pytest.mark.parametrize("dtype, bound", [(np.float32, 1e-6), (np.float64, 1e-14)])
def test_warm_start_at_a_saddle_leaves_it(rng, method, dtype, bound):
    # q0 exactly on each of the three saddles of A = diag(1, 0.5, 0.2): the half turns about x, y, z
    a = np.broadcast_to(np.diag([1, 0.5, 0.2]).astype(dtype), (3, 3, 3))
    q0 = np.eye(4, dtype=dtype)[:3]
    q, iterations = jm.extract_rotation(a, q0, method=method, return_iterations=True)
    assert ref.angle_between(q, [0, 0, 0, 1]).max() <= bound
    assert (iterations >= 1).all()


def test_condition_up_to_1000_within_the_polar_factors_conditioning(rng):
    # the default: every matrix within max(1e-6, 1e-6 sigma1 / (sigma2 + sigma3)) rad of the SVD
    # polar rotation, in at most 40 Newton iterations (99 % within 20)
    a = stretched(rng, 10000, 1000)
    s = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    q, iterations = jm.extract_rotation(a, return_iterations=True)
    check_unit(q)
    err = ref.angle_between(q, ref.matrix_to_quat(ref.polar_rotation(a)))
    assert (err <= np.maximum(1e-6, 1e-6 * s[:, 0] / (s[:, 1] + s[:, 2]))).all()
    assert np.quantile(iterations, 0.99) <= 20 and iterations.max() <= 40


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inverted_with_a_small_gap(rng, dtype):
    # det A < 0, sigma = (1, 0.5, -(0.5 - gap)), gap from 1e-2 down to 0: the answer's
    # conditioning is sigma1 / (sigma2 - sigma3). Above the curvature margin (gap >~ 1e-4 here)
    # Newton converges; below it the two halves of the maximum nearly tie: Mueller's update runs
    # to max_iter (no hang) and trace(R^T A) ends within 2 (sigma2 - sigma3) of the maximum
    n = 2000
    u = rotations(random_unit_quats(rng, n, np.float64))
    v = rotations(random_unit_quats(rng, n, np.float64))
    gap = np.concatenate([10 ** rng.uniform(-8, -2, n - 100), np.zeros(100)])
    s = np.stack([np.full(n, 1.0), np.full(n, 0.5), -(0.5 - gap)], 1)
    a = ((u * s[:, None, :]) @ np.swapaxes(v, 1, 2)).astype(dtype)
    sigma = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    q, iterations = jm.extract_rotation(a, max_iter=200, return_iterations=True)
    assert np.isfinite(q).all() and iterations.max() <= 200
    achieved = np.einsum("nij,nij->n", rotations(q), a.astype(np.float64))
    gap = sigma[:, 1] - sigma[:, 2]
    assert (sigma[:, 0] + gap - achieved <= 2 * gap + 2e-6).all()
    wide = gap >= 2e-4
    err = ref.angle_between(q, ref.matrix_to_quat(ref.polar_rotation(a)))
    assert (err[wide] <= np.maximum(1e-6, 1e-6 * sigma[wide, 0] / gap[wide])).all()
    assert iterations[wide].max() <= 40


@pytest.mark.parametrize("method", ["newton", "muller"])
def test_scale_invariance_over_the_float32_range(method):
    # extraction normalises A by a power of two: any 2^k A (k over the whole float32 range,
    # subnormals included) of a matrix with random signs gives the same bits as A itself
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=60, deadline=None, derandomize=True)
    @hypothesis.given(seed=st.integers(0, 2**32 - 1), exponent=st.integers(-149, 127), negate=st.booleans())
    def check(seed, exponent, negate):
        rng = np.random.default_rng(seed)
        a = rng.uniform(-1, 1, (24, 3, 3)).astype(np.float32) * rng.choice(np.float32([-1, 1]), (24, 3, 3))
        a = np.where(negate, -a, a)
        # matrices whose elements are all representable at 2^exponent: scale mantissas to 8 bits
        # and the largest element to 1, so that 2^exponent A neither overflows nor loses bits
        a = np.ldexp(np.round(np.ldexp(a, 8)), -8).astype(np.float32)
        a /= np.float32(2.0 ** np.floor(np.log2(np.abs(a).max())))
        shift = min(exponent, 127) if exponent >= 0 else max(exponent + 8 + 7, -149 + 8 + 7)
        scaled = np.ldexp(a, shift).astype(np.float32)
        np.testing.assert_array_equal(np.ldexp(scaled.astype(np.float64), -shift), a)  # exact
        q0 = random_unit_quats(rng, 24)
        expected = jm.extract_rotation(a, q0, method=method)
        np.testing.assert_array_equal(jm.extract_rotation(scaled, q0, method=method), expected)
        np.testing.assert_array_equal(jm.extract_rotation(scaled, method=method), jm.extract_rotation(a, method=method))

    check()


def test_bad_method():
    a = np.zeros((4, 3, 3), np.float32)
    with pytest.raises(TypeError, match="method must be a str, got int"):
        jm.extract_rotation(a, method=1)
    with pytest.raises(ValueError, match="method must be 'newton' or 'muller', got 'svd'"):
        jm.extract_rotation(a, method="svd")
    with pytest.raises(ValueError, match="method must be 'newton' or 'muller'"):
        jm.extract_rotation(a.astype(np.float64), method="Newton")


def test_any_record_layout_and_an_out_on_the_input(isa, rng):
    """The operands are walked in place or copied by the shared helpers of _core.c: every layout
    gives the result of a C-ordered copy, and an out= lying on the input's own memory is written
    only after the kernel read it."""
    q = random_unit_quats(rng, 6 * 7).reshape(6, 7, 4)
    mats = jm.joints_to_mats(jm.make_joints(q))
    expected = jm.extract_rotation(mats)
    for view in (mats.T.copy().T, mats[::-1].copy()[::-1], np.asfortranarray(mats)):
        np.testing.assert_array_equal(jm.extract_rotation(view), expected)
    np.testing.assert_array_equal(jm.extract_rotation(mats.reshape(-1)[::-3]), expected.reshape(-1, 4)[::-3])
    for dtype in (np.float32, np.float64):
        a = jm.quat_to_matrix(q.astype(dtype))
        before = jm.extract_rotation(a)
        out = a.reshape(6, 7, 9)[..., 2:6]  # the matrices' own memory
        assert jm.extract_rotation(a, out=out) is out
        np.testing.assert_array_equal(out, before)


def mirrored(rng, n, third=1.0):
    """n matrices U diag(1, 1, -third) V^T: mirrored rotations (third = 1: a rotation with one
    axis flipped, as a negative scale gives), det A < 0."""
    u = rotations(random_unit_quats(rng, n, np.float64))
    v = rotations(random_unit_quats(rng, n, np.float64))
    return (u * np.array([1.0, 1.0, -third])) @ np.swapaxes(v, 1, 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mirrored_rotations_converge(rng, dtype):
    """A rotation with a flipped axis (singular values 1, 1, 1, det -1) has a family of best
    rotations. Newton falls back to Mueller's update there, which overshot 2x about the one
    determined axis (the error changed sign each update without shrinking): 61 of 5,000 float32
    matrices stopped after 200 updates 5.5e-3 rad from every best rotation, trace(R^T A) 3e-5
    below the maximum. Mueller's step where det A < 0 is now bounded by the curvature."""
    a = mirrored(rng, 5000).astype(dtype)
    a64 = a.astype(np.float64)
    sigma = np.linalg.svd(a64, compute_uv=False)
    best = sigma[:, 0] + sigma[:, 1] - sigma[:, 2]
    for method in ("newton", "muller"):
        q, iterations = jm.extract_rotation(a, method=method, return_iterations=True)
        shortfall = best - np.einsum("nij,nij->n", rotations(q.astype(np.float64)), a64)
        assert shortfall.max() <= 2 * (sigma[:, 1] - sigma[:, 2]).max() + (5e-7 if dtype == np.float32 else 1e-14)
        assert iterations.max() <= 10


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_muller_never_moves_away_from_a_mirrored_maximum(rng, dtype):
    """det A < 0 with singular values (1, 1, 0.99): the paper's step tau / |f| overshoots the
    curvature s1 + s2 (up to 2x); method "muller" ended worse than its cold start in 14 % of
    such matrices after 200 updates, some at the worst rotation there is (trace gap 4). Now no
    matrix loses ground, and the mirrored rotation of the paper's example converges."""
    a = mirrored(rng, 2000, 0.99).astype(dtype)
    a64 = a.astype(np.float64)
    best = np.einsum("nij,nij->n", ref.polar_rotation(a64), a64)

    def shortfall(q):
        return best - np.einsum("nij,nij->n", rotations(q.astype(np.float64)), a64)

    start = shortfall(jm.extract_rotation(a, method="muller", max_iter=0))
    for max_iter in (3, 10, 200):
        assert (shortfall(jm.extract_rotation(a, method="muller", max_iter=max_iter)) <= start + 1e-6).all()
    flipped = mirrored(rng, 1)[0].astype(dtype)
    q, iterations = jm.extract_rotation(flipped, method="muller", return_iterations=True)
    assert np.sum(rotations(q.astype(np.float64)) * flipped) >= 1 - 1e-6 and iterations <= 5


def test_finite_where_the_curvature_determinant_is_lost_in_rounding(rng):
    """det A < 0 near a tie (singular values ~(1, 1, 0.9999)): after a Ritz update N's eigenvalues
    are ~(4, 6e-5, 6e-5) and float32 rounding of its cofactors (~1e-6) swallows det N while the
    leading minors still pass the margin test; the Newton step 2 adj(N) tau / det N came out inf
    and the result NaN (scalar and sse: no fused multiply-add). Newton's step must now be finite
    (else the Ritz or Mueller update runs). The two matrices found, and 20,000 neighbours of each
    within 6 ulp."""
    found = np.array([[[-0.8821057677268982, -0.2932640612125397, 0.36849984526634216],
                       [-0.3306785523891449, 0.9427983164787292, -0.04146953299641609],
                       [0.33520519733428955, 0.15847517549991608, 0.928697943687439]],
                      [[-0.8821054697036743, -0.29326412081718445, 0.3684997856616974],
                       [-0.33067840337753296, 0.9427986741065979, -0.0414695143699646],
                       [0.3352051377296448, 0.15847516059875488, 0.9286976456642151]]], np.float32)
    steps = rng.integers(-6, 7, (2, 20000, 3, 3)).astype(np.int32)
    near = (found[:, None].view(np.int32) + steps).view(np.float32).reshape(-1, 3, 3)
    a = np.concatenate([found, near])
    q, iterations = jm.extract_rotation(a, return_iterations=True)
    assert np.isfinite(q).all()
    a64 = a.astype(np.float64)
    sigma = np.linalg.svd(a64, compute_uv=False)
    shortfall = sigma[:, 0] + sigma[:, 1] - sigma[:, 2] - np.einsum("nij,nij->n", rotations(q.astype(np.float64)), a64)
    # near a multiple of a reflection (sigma1 - sigma3 ~ sigma2 - sigma3 ~ 1e-4): within
    # 2 (sigma1 - sigma3) + 2 (sigma2 - sigma3), the two nearly flat axes
    bound = 2 * (sigma[:, 0] - sigma[:, 2]) + 2 * (sigma[:, 1] - sigma[:, 2]) + 1e-6
    assert (shortfall <= bound).all() and iterations.max() <= 40


# ------- float64: the float64 kernel against extended precision, the SVD and the NumPy method --

EXTENDED_BOUND = 2e-15  # rad per sigma1 / (sigma2 + sigma3): against the extended-precision polar
SVD_BOUND = 1.2e-14  # the same against numpy.linalg.svd, whose own error is up to 1.08e-14 of it
UNIT_BOUND = 1e-15  # | |q| - 1 |


def stretched64(rng, n, max_condition):
    return stretched(rng, n, max_condition, np.float64)


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


def check_unit64(q):
    assert q.dtype == np.float64 and np.isfinite(q).all()
    assert np.abs(np.linalg.norm(q, axis=-1) - 1).max(initial=0) <= UNIT_BOUND


# -------------------------------------------------------------------------- float64: accuracy --


@pytest.mark.parametrize("max_condition", [10, 1e3, 1e4])
def test_newton_within_the_bound_of_the_polar_rotation(rng, max_condition):
    a = stretched64(rng, 4000, max_condition)
    kappa = conditioning(a)
    q, iterations = jm.extract_rotation(a, return_iterations=True)
    check_unit64(q)
    assert (angle_to(q, extended_polar(a)) <= EXTENDED_BOUND * kappa).all()
    svd = ref.matrix_to_quat(ref.polar_rotation(a))
    assert (ref.angle_between(q, svd) <= SVD_BOUND * kappa).all()
    assert np.median(iterations) <= 5 and iterations.max() <= 12


def test_rotation_matrices_come_back_float64(rng):
    q_true = np.concatenate([random_unit_quats(rng, 3000, np.float64), hard_quats(rng, np.float64)])
    m = rotations(q_true)
    q = jm.extract_rotation(m)
    check_unit64(q)
    assert ref.angle_between(q, ref.matrix_to_quat(m)).max() <= 2e-15
    q_far = jm.extract_rotation(m, random_unit_quats(rng, len(m), np.float64))  # from anywhere
    assert ref.angle_between(q_far, ref.matrix_to_quat(m)).max() <= 2e-15


def test_muller_converges_to_its_tolerance(rng):
    # linear: stopping on |omega| < tol leaves about tol (s1 + s2 + s3) / (s2 + s3) rad
    a = stretched64(rng, 2000, 10)
    s = np.linalg.svd(a, compute_uv=False)
    q = jm.extract_rotation(a, method="muller", tol=1e-14, max_iter=5000)
    check_unit64(q)
    err = angle_to(q, extended_polar(a))
    assert (err <= 2e-14 * s.sum(1) / (s[:, 1] + s[:, 2]) + EXTENDED_BOUND * conditioning(a)).all()


@pytest.mark.parametrize("method", ["newton", "muller"])
@pytest.mark.parametrize("warm", [False, True])
def test_same_updates_as_the_numpy_method(rng, method, warm):
    # the same start, the same updates and stops as an independent NumPy implementation: equal
    # iteration counts for well-separated matrices, results within the rounding of both
    a = stretched64(rng, 1500, 100 if method == "newton" else 10)  # Mueller converges within 200 updates
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
    a = stretched64(rng, 500, 10).astype(np.float32)
    q32 = jm.extract_rotation(a)
    q64 = jm.extract_rotation(a.astype(np.float64))
    assert q64.dtype == np.float64 and ref.angle_between(q32, q64).max() <= 1e-5


# --------------------------------------------------------- float64: the maximum, not a saddle --


@pytest.mark.parametrize("method", ["newton", "muller"])
def test_cold_start_never_stops_at_a_saddle_float64(rng, method):
    a = saddle_matrices(rng, 2000, np.float64)
    q, iterations = jm.extract_rotation(a, method=method, max_iter=5000, return_iterations=True)
    check_unit64(q)
    kappa = conditioning(a)
    svd = ref.matrix_to_quat(ref.polar_rotation(a))
    bound = SVD_BOUND * kappa if method == "newton" else 1e-9
    assert (ref.angle_between(q, svd) <= bound).all()
    assert iterations.min() >= 1


# ---------------------------------------------------- float64: rank-deficient, inverted, zero --


def test_rank_two_and_inverted_give_the_proper_polar_rotation(rng):
    n = 1000
    u = rotations(random_unit_quats(rng, n, np.float64))
    v = rotations(random_unit_quats(rng, n, np.float64))
    s = np.stack([np.ones(n), rng.uniform(0.2, 1, n), np.where(np.arange(n) < n // 2, 0.0, -rng.uniform(0, 0.1, n))], 1)
    a = u @ (s[:, :, None] * np.swapaxes(v, 1, 2))
    q = jm.extract_rotation(a)
    check_unit64(q)
    polar = ref.matrix_to_quat(ref.polar_rotation(a))
    kappa = s[:, 0] / (s[:, 1] + s[:, 2])
    assert (ref.angle_between(q, polar) <= SVD_BOUND * kappa).all()


@pytest.mark.parametrize("method", ["newton", "muller"])
def test_rank_one_keeps_the_other_directions_from_q0_float64(rng, method):
    n = 300
    u = rng.standard_normal((n, 3))
    v = rng.standard_normal((n, 3))
    a = u[:, :, None] * v[:, None, :]  # maps v to u
    q0 = random_unit_quats(rng, n, np.float64)
    q = jm.extract_rotation(a, q0, method=method, max_iter=1000)
    check_unit64(q)
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
    check_unit64(q_scaled)
    assert ref.angle_between(q_scaled, q0).max() <= 1e-15
    tiny = jm.extract_rotation(np.zeros((50, 3, 3)), q0 * 1e-310)  # denormal q0
    check_unit64(tiny)
    np.testing.assert_array_equal(jm.extract_rotation(np.zeros((3, 3)), np.zeros(4)), [0, 0, 0, 1])
    np.testing.assert_array_equal(jm.extract_rotation(np.zeros((2, 3, 3))), [[0, 0, 0, 1]] * 2)


def test_max_iter_zero_and_tol_zero(rng):
    a = stretched64(rng, 37, 10)
    q0 = random_unit_quats(rng, 37, np.float64)
    q, iterations = jm.extract_rotation(a, q0, max_iter=0, return_iterations=True)
    np.testing.assert_array_equal(q, q0)
    assert (iterations == 0).all()
    _, iterations = jm.extract_rotation(a, q0, method="muller", tol=0, max_iter=25, return_iterations=True)
    assert (iterations == 25).all()


@pytest.mark.parametrize("method", ["newton", "muller"])
def test_power_of_two_scale_changes_nothing_float64(rng, method):
    a = stretched64(rng, 64, 100)
    q = jm.extract_rotation(a, method=method)
    for e in (-1074 + 60, -1000, -300, 300, 1000):  # the elements' exponents stay in range
        scaled = a * 2.0**e
        np.testing.assert_array_equal(jm.extract_rotation(scaled, method=method), q)
    huge = np.full((3, 3), np.finfo(np.float64).max) * np.diag([1.0, -1.0, 1.0])
    assert np.isfinite(jm.extract_rotation(huge)).all()
    denormal = np.diag([5e-324, 5e-324, 1e-323])
    np.testing.assert_array_equal(jm.extract_rotation(denormal), [0, 0, 0, 1])


# ------------------------------------------------------------------- float64: shapes, layouts --


@pytest.mark.parametrize("n", SIZES)
def test_every_size_is_lane_independent(rng, n):
    a = stretched64(rng, max(SIZES), 1000)
    q0 = random_unit_quats(rng, max(SIZES), np.float64)
    for method in ("newton", "muller"):
        full, full_iterations = jm.extract_rotation(a, q0, method=method, return_iterations=True)
        q, iterations = jm.extract_rotation(a[:n], q0[:n], method=method, return_iterations=True)
        assert q.shape == (n, 4) and iterations.shape == (n,)
        np.testing.assert_array_equal(q, full[:n])
        np.testing.assert_array_equal(iterations, full_iterations[:n])
        for k in range(min(n, 9)):  # one at a time: the same as in any block
            np.testing.assert_array_equal(jm.extract_rotation(a[k], q0[k], method=method), full[k])


def test_array_layouts_float64(rng):
    a = stretched64(rng, 29, 100)
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
    a = stretched64(rng, 12, 10).reshape(3, 4, 3, 3)
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


def test_inputs_are_never_modified_float64(rng):
    a = stretched64(rng, 33, 10)
    q0 = random_unit_quats(rng, 33, np.float64) * 3
    a_copy, q0_copy = a.copy(), q0.copy()
    jm.extract_rotation(a, q0)
    jm.extract_rotation(a, q0, method="muller")
    np.testing.assert_array_equal(a, a_copy)
    np.testing.assert_array_equal(q0, q0_copy)


def test_threads_agree(rng):
    a = stretched64(rng, 20000, 100)
    assert_threads_agree(lambda: jm.extract_rotation(a, return_iterations=True))


def test_no_numpy_route_on_the_path(rng, monkeypatch):
    # the float64 path runs the kernel: no Python module computes it
    def refuse(*args, **kwargs):
        raise AssertionError("jointmath.reference on the product path")

    a = stretched64(np.random.default_rng(1), 50, 10)
    for name in ("polar_rotation", "extract_rotation", "matrix_to_quat", "quat_to_matrix"):
        monkeypatch.setattr(ref, name, refuse)
    monkeypatch.setitem(sys.modules, "jointmath._extract64", None)  # an import would fail
    assert jm.extract_rotation(a).dtype == np.float64
    assert jm.extract_rotation(a, method="muller").dtype == np.float64
