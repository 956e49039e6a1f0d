"""Scale invariance, zero quaternions and gimbal lock of the kernels that normalise a quaternion
for conversion and Euler angles: quat_to_matrix, joints_to_mats, forward_kinematics,
quat_to_euler (every path, float32) and the float64 path (jointmath.reference)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jointmath as jm
from jointmath import reference as ref

QUAT_TO_MATRIX_BOUND = 5e-7  # max abs element error, any finite non-zero scale
EULER_ROTATION_BOUND = 1e-6  # rad: the rotation of the angles (and of their round trip) vs q's
ORDERS = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "xyz", "xzy", "yxz", "yzx", "zxy", "zyx"]
FLT_MAX = float(np.finfo(np.float32).max)

# the isa fixture only switches the path: it is the same for every example of a test
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def scaled_quats(seed, exponents, dtype):
    """(q, exact): random unit quaternions with random signs times 2^k (one k per record) in
    `dtype`, and the float64 quaternions of the same rotation as q exactly (q's rounding at
    subnormal scales included). Records rounded to zero are zero in both."""
    rng = np.random.default_rng(seed)
    k = np.asarray(exponents)
    unit = rng.standard_normal((len(k), 4))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    q = np.ldexp(unit * rng.choice([-1.0, 1.0], unit.shape), k[:, None]).astype(dtype)
    return q, np.ldexp(q.astype(np.float64), -k[:, None])


def matrices(q):
    """quat_to_matrix, joints_to_mats and forward_kinematics (one root joint per record) of q."""
    joints = jm.make_joints(q, np.zeros(q.shape[:-1] + (3,), np.float32))
    return (jm.quat_to_matrix(q), jm.joints_to_mats(joints)["m"][..., :3],
            jm.forward_kinematics(joints[:, None], [-1])["m"][:, 0, :, :3])


def euler_rotation_error(q, exact, order):
    """max over records of the rotation error of quat_to_euler(q) (angles converted back in
    float64) and of the float32 round trip euler_to_quat(quat_to_euler(q)), against exact."""
    angles = jm.quat_to_euler(q, order, degrees=False)
    alone = ref.angle_between(ref.euler_to_quat(angles.astype(np.float64), order, degrees=False), exact)
    trip = ref.angle_between(jm.euler_to_quat(angles, order, degrees=False), exact)
    return max(alone.max(initial=0), trip.max(initial=0))


# ------------------------------------------------------------- property tests --

float32_exponents = st.lists(st.integers(-149, 127), min_size=1, max_size=40)


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), exponents=float32_exponents)
def test_matrix_kernels_at_any_float32_scale(seed, exponents):
    q, exact = scaled_quats(seed, exponents, np.float32)
    zero = (q == 0).all(axis=1)
    expected = ref.quat_to_matrix(exact)
    for m in matrices(q):
        assert np.abs(m[~zero] - expected[~zero]).max(initial=0) <= QUAT_TO_MATRIX_BOUND
        assert np.isnan(m[zero]).all()


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), exponents=float32_exponents, order=st.sampled_from(ORDERS))
def test_quat_to_euler_at_any_float32_scale(seed, exponents, order):
    q, exact = scaled_quats(seed, exponents, np.float32)
    zero = (q == 0).all(axis=1)
    assert euler_rotation_error(q[~zero], exact[~zero], order) <= EULER_ROTATION_BOUND
    assert np.isnan(jm.quat_to_euler(q[zero], order)).all()


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), exponents=st.lists(st.integers(-1074, 1023), min_size=1, max_size=40),
       order=st.sampled_from(ORDERS))
def test_float64_at_any_float64_scale(seed, exponents, order):
    q, exact = scaled_quats(seed, exponents, np.float64)
    zero = (q == 0).all(axis=1)
    expected = ref.quat_to_matrix(exact)
    m = jm.quat_to_matrix(q)
    assert np.abs(m[~zero] - expected[~zero]).max(initial=0) <= 1e-15
    assert np.isnan(m[zero]).all()
    angles = jm.quat_to_euler(q, order, degrees=False)
    back = ref.euler_to_quat(angles[~zero], order, degrees=False)
    assert ref.angle_between(back, exact[~zero]).max(initial=0) <= 1e-14
    assert np.isnan(angles[zero]).all()


# ---------------------------------------------------- the reported cases, by name --


def test_quat_to_matrix_huge_w_is_the_identity():
    for m in matrices(np.array([[0, 0, 0, 1e20], [0, 0, 0, -FLT_MAX]], np.float32)):
        np.testing.assert_array_equal(m, np.broadcast_to(np.eye(3), (2, 3, 3)))


def test_quat_to_matrix_subnormal_w_is_the_identity():
    for m in matrices(np.array([[0, 0, 0, 1e-40], [0, 0, 0, 2.0**-149]], np.float32)):
        np.testing.assert_array_equal(m, np.broadcast_to(np.eye(3), (2, 3, 3)))


def test_quat_to_matrix_tiny_x_is_a_half_turn():
    for m in matrices(np.array([[1e-20, 0, 0, 0]], np.float32)):
        np.testing.assert_array_equal(m[0], np.diag([1.0, -1.0, -1.0]))


def test_quat_to_matrix_flt_max_components():
    q = np.array([[FLT_MAX, -FLT_MAX, FLT_MAX, FLT_MAX]], np.float32)
    for m in matrices(q):
        np.testing.assert_allclose(m, ref.quat_to_matrix([[1, -1, 1, 1]]), atol=QUAT_TO_MATRIX_BOUND)


def test_quat_to_matrix_scaled_lane_leaves_its_neighbours_alone(rng):
    # a block holding one non-unit quaternion takes the scaling step: the unit ones beside it
    # must come out bit for bit as without it
    from adversarial import random_unit_quats
    q = random_unit_quats(rng, 64)
    alone = jm.quat_to_matrix(q)
    mixed = q.copy()
    mixed[5] *= np.float32(1e20)
    mixed[40] = 0
    got = jm.quat_to_matrix(mixed)
    others = np.setdiff1d(np.arange(64), [5, 40])
    np.testing.assert_array_equal(got[others], alone[others])
    np.testing.assert_allclose(got[5], alone[5], atol=QUAT_TO_MATRIX_BOUND)


@pytest.mark.parametrize("order", ORDERS)
def test_quat_to_euler_tiny_equal_components_match_the_reference(order):
    q = np.full((1, 4), 1e-30, np.float32)
    expected = ref.quat_to_euler(np.full((1, 4), 0.5), order)  # e.g. (90, 90, 0) for ZXY: gimbal lock
    np.testing.assert_allclose(jm.quat_to_euler(q, order), expected, atol=1e-4)


@pytest.mark.parametrize("w", [1e-40, 2.0**-149, 1e20, FLT_MAX, -1e20])
def test_quat_to_euler_of_a_scaled_identity_is_zero(w):
    q = np.array([[0, 0, 0, w]], np.float32)
    for order in ORDERS:
        np.testing.assert_array_equal(np.abs(jm.quat_to_euler(q, order)), 0)


def test_quat_to_euler_of_zero_is_nan():
    q = np.zeros((37, 4), np.float32)
    for order in ("ZXY", "xyz"):
        assert np.isnan(jm.quat_to_euler(q, order)).all()
        assert np.isnan(jm.quat_to_euler(q.astype(np.float64), order)).all()


@pytest.mark.parametrize("order", ORDERS)
def test_quat_to_euler_round_trip_next_to_gimbal_lock(rng, order):
    # middle angles within 1e-5 rad of +-90 degrees (dense, and down to 1e-9 geometrically)
    offsets = np.concatenate([np.linspace(-1e-5, 1e-5, 2001), np.geomspace(1e-9, 1e-5, 100), -np.geomspace(1e-9, 1e-5, 100)])
    middle = np.concatenate([np.pi / 2 + offsets, -np.pi / 2 - offsets])
    angles = np.column_stack([rng.uniform(-np.pi, np.pi, len(middle)), middle, rng.uniform(-np.pi, np.pi, len(middle))])
    q = ref.euler_to_quat(angles, order, degrees=False).astype(np.float32)
    assert euler_rotation_error(q, q.astype(np.float64), order) <= EULER_ROTATION_BOUND


@pytest.mark.parametrize("order", ["ZXY", "xyz"])
def test_gimbal_lock_threshold_is_1e_7_rad(order):
    # middle angle 90 degrees - 5e-8 rad locks (third angle 0); 90 degrees - 2e-7 rad does not
    third = 0.7
    for offset, locked in ((5e-8, True), (2e-7, False)):
        for sign in (1, -1):
            angles = np.array([[0.3, sign * (np.pi / 2 - offset), third]])
            q = ref.euler_to_quat(angles, order, degrees=False)
            got = jm.quat_to_euler(q.astype(np.float32), order, degrees=False)
            assert (got[0, 2] == 0) == locked, (offset, sign, got)
            assert (ref.quat_to_euler(q, order, degrees=False)[0, 2] == 0) == locked


def test_float64_extreme_scales():
    q = np.array([[0, 0, 0, 1e300], [0, 0, 0, 5e-324], [1e-300, 0, 0, 0], [1e308, 1e308, 1e308, 1e308]])
    m = jm.quat_to_matrix(q)
    np.testing.assert_array_equal(m[:2], np.broadcast_to(np.eye(3), (2, 3, 3)))
    np.testing.assert_allclose(m[2], np.diag([1.0, -1.0, -1.0]), atol=1e-15)
    np.testing.assert_allclose(m[3], ref.quat_to_matrix([[0.5, 0.5, 0.5, 0.5]])[0], atol=1e-15)
    angles = jm.quat_to_euler(q, "ZXY", degrees=True)
    np.testing.assert_array_equal(np.abs(angles[:2]), 0)
    np.testing.assert_allclose(angles[3], ref.quat_to_euler([0.5, 0.5, 0.5, 0.5], "ZXY", degrees=True), atol=1e-12)
    assert np.isnan(jm.quat_to_matrix(np.zeros((2, 4)))).all()
