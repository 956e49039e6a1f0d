"""quaternion <-> matrix conversion: joints_to_mats, mats_to_joints, quat_to_matrix, matrix_to_quat."""

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import SIZES, assert_threads_agree, hard_quats, layouts, random_unit_quats

QUAT_TO_MATRIX_BOUND = 5e-7  # max abs element error, unit quaternions
ANGLE_BOUND = 1e-6  # rad, matrix -> quaternion
NORM_BOUND = 1e-6


def random_joints(rng, n):
    return jm.make_joints(random_unit_quats(rng, n), rng.uniform(-100, 100, (n, 3)))


def all_quats(rng):
    return np.concatenate([random_unit_quats(rng, 20000), hard_quats(rng)])


# ---------------------------------------------------------------- accuracy --


def test_quat_to_matrix_accuracy(rng):
    q = all_quats(rng)
    err = np.abs(jm.quat_to_matrix(q) - ref.quat_to_matrix(q)).max()
    assert err <= QUAT_TO_MATRIX_BOUND


def test_quat_to_matrix_matches_scipy(rng):
    Rotation = pytest.importorskip("scipy.spatial.transform").Rotation
    q = random_unit_quats(rng, 1000)
    np.testing.assert_allclose(jm.quat_to_matrix(q), Rotation.from_quat(q.astype(np.float64)).as_matrix(), atol=5e-7)
    assert jm.quat_to_matrix(np.array([0, 0, np.sqrt(0.5), np.sqrt(0.5)], np.float32))[0, 1] == pytest.approx(-1)


def check_matrix_to_quat(m, q_true):
    q = jm.matrix_to_quat(m)
    assert q.dtype == m.dtype
    assert ref.angle_between(q, q_true).max() <= ANGLE_BOUND
    assert np.abs(np.linalg.norm(q.astype(np.float64), axis=-1) - 1).max() <= NORM_BOUND
    return q


def test_matrix_to_quat_accuracy(rng):
    q = all_quats(rng)
    # the float32 matrix as the kernel sees it; its exact quaternion is the float64 reference's
    m = ref.quat_to_matrix(q).astype(np.float32)
    check_matrix_to_quat(m, ref.matrix_to_quat(m))
    # and against the quaternion we started from
    check_matrix_to_quat(m, q)


def test_matrix_to_quat_divisor_component_positive(rng):
    q = all_quats(rng)
    out = jm.matrix_to_quat(ref.quat_to_matrix(q).astype(np.float32))
    expected = ref.matrix_to_quat(ref.quat_to_matrix(q).astype(np.float32))
    # where the reference's largest component is clearly the largest, the kernel picks the same
    # case, so the two agree in sign too (not only modulo sign)
    top2 = np.sort(np.abs(expected), axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-3
    np.testing.assert_allclose(out[clear], expected[clear], atol=1e-6)
    assert (out[np.arange(len(out)), np.abs(out).argmax(1)] > 0).all()


def test_matrix_to_quat_half_turns_and_exact_cases():
    # 180-degree rotations (trace = -1) about the axes and diagonals, and the identity
    cases = {
        (1, 0, 0, 0): [[1, 0, 0], [0, -1, 0], [0, 0, -1]],
        (0, 1, 0, 0): [[-1, 0, 0], [0, 1, 0], [0, 0, -1]],
        (0, 0, 1, 0): [[-1, 0, 0], [0, -1, 0], [0, 0, 1]],
        (0, 0, 0, 1): [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    }
    for q, m in cases.items():
        out = jm.matrix_to_quat(np.array(m, np.float32))
        np.testing.assert_allclose(out, np.array(q, np.float32), atol=2e-7)


def test_round_trip_returns_the_rotation(rng):
    q = all_quats(rng)
    back = jm.matrix_to_quat(jm.quat_to_matrix(q))
    assert ref.angle_between(back, q).max() <= ANGLE_BOUND


@pytest.mark.parametrize("n", SIZES)
def test_joint_records_match_reference(rng, n):
    joints = random_joints(rng, n)
    mats = jm.joints_to_mats(joints)
    assert mats.dtype == jm.JOINT_MAT and mats.shape == (n,)
    expected = ref.joints_to_mats(joints)
    assert np.abs(mats["m"] - expected["m"]).max(initial=0) <= QUAT_TO_MATRIX_BOUND
    np.testing.assert_array_equal(mats["m"][:, :, 3], joints["t"][:, :3])

    back = jm.mats_to_joints(mats)
    assert back.dtype == jm.JOINT_QUAT and back.shape == (n,)
    assert ref.angle_between(back["q"], joints["q"]).max(initial=0) <= ANGLE_BOUND
    np.testing.assert_array_equal(back["t"][:, :3], joints["t"][:, :3])
    np.testing.assert_array_equal(back["t"][:, 3], 0)


def test_translation_fourth_lane_is_zero_even_when_input_is_not(rng):
    mats = jm.joints_to_mats(random_joints(rng, 20))
    back = jm.mats_to_joints(mats)
    assert (back["t"][:, 3] == 0).all()


def test_any_shape(rng):
    joints = random_joints(rng, 2 * 3 * 5).reshape(2, 3, 5)
    mats = jm.joints_to_mats(joints)
    assert mats.shape == (2, 3, 5)
    np.testing.assert_array_equal(mats.reshape(-1), jm.joints_to_mats(joints.reshape(-1)))
    scalar = jm.joints_to_mats(joints[0, 0, 0])
    assert scalar.shape == () and scalar == mats[0, 0, 0]
    q = random_unit_quats(rng, 12).reshape(3, 4, 4)
    assert jm.quat_to_matrix(q).shape == (3, 4, 3, 3)
    assert jm.matrix_to_quat(jm.quat_to_matrix(q)).shape == (3, 4, 4)
    assert jm.quat_to_matrix(q[0, 0]).shape == (3, 3)


def test_float64_computes_in_float64(rng):
    q = random_unit_quats(rng, 100, np.float64)
    m = jm.quat_to_matrix(q)
    assert m.dtype == np.float64
    np.testing.assert_allclose(m, ref.quat_to_matrix(q), atol=1e-15)
    back = jm.matrix_to_quat(m)
    assert back.dtype == np.float64
    assert ref.angle_between(back, q).max() < 1e-7


def test_non_unit_quaternions_are_normalised(rng):
    q = random_unit_quats(rng, 50)
    scaled = q * np.float32(3.5)
    np.testing.assert_allclose(jm.quat_to_matrix(scaled), jm.quat_to_matrix(q), atol=1e-6)


# ---------------------------------------------------------------- layouts --


def check_layout(forward, backward, a, name):
    """forward/backward on a layout variant of `a` give the contiguous results; nothing written."""
    expected = forward(a)
    variant = layouts(a)[name]
    before = variant.copy()
    np.testing.assert_array_equal(forward(variant), expected)
    np.testing.assert_array_equal(variant, before)
    np.testing.assert_array_equal(backward(layouts(expected)[name]), backward(expected))


@pytest.mark.parametrize("name", ["contiguous", "strided", "reversed", "readonly", "unaligned"])
def test_record_layouts(rng, name):
    check_layout(jm.joints_to_mats, jm.mats_to_joints, random_joints(rng, 37), name)


def test_two_dimensional_non_contiguous_records(rng):
    joints = random_joints(rng, 60).reshape(6, 10)
    view = joints[::2, 1::3]
    np.testing.assert_array_equal(jm.joints_to_mats(view), jm.joints_to_mats(view.copy()))
    np.testing.assert_array_equal(jm.joints_to_mats(joints.T), jm.joints_to_mats(joints).T)


@pytest.mark.parametrize("name", ["contiguous", "strided", "reversed", "readonly", "unaligned", "fortran"])
def test_array_layouts(rng, name):
    q = random_unit_quats(rng, 37)
    check_layout(jm.quat_to_matrix, jm.matrix_to_quat, q, name)
    m = jm.quat_to_matrix(q)
    transposed = np.ascontiguousarray(np.swapaxes(m, 1, 2))
    np.testing.assert_array_equal(jm.matrix_to_quat(np.swapaxes(transposed, 1, 2)), jm.matrix_to_quat(m))


# ---------------------------------------------------------------- out= --


def test_out_is_filled_and_returned(rng):
    joints = random_joints(rng, 33)
    out = np.zeros(33, jm.JOINT_MAT)
    assert jm.joints_to_mats(joints, out=out) is out
    np.testing.assert_array_equal(out, jm.joints_to_mats(joints))
    back = np.zeros(33, jm.JOINT_QUAT)
    assert jm.mats_to_joints(out, back) is back
    np.testing.assert_array_equal(back, jm.mats_to_joints(out))

    q = random_unit_quats(rng, 33)
    m = np.zeros((33, 3, 3), np.float32)
    assert jm.quat_to_matrix(q, out=m) is m
    np.testing.assert_array_equal(m, jm.quat_to_matrix(q))
    qo = np.zeros((33, 4), np.float32)
    assert jm.matrix_to_quat(m, out=qo) is qo
    np.testing.assert_array_equal(qo, jm.matrix_to_quat(m))
    q64 = np.zeros((33, 4))
    assert jm.matrix_to_quat(m.astype(np.float64), out=q64) is q64


def test_non_contiguous_out(rng):
    joints = random_joints(rng, 21)
    big = np.zeros(42, jm.JOINT_MAT)
    jm.joints_to_mats(joints, out=big[::2])
    np.testing.assert_array_equal(big[::2], jm.joints_to_mats(joints))
    assert (big[1::2]["m"] == 0).all()
    grid = np.zeros((6, 8), jm.JOINT_MAT)
    jm.joints_to_mats(joints[:12].reshape(3, 4), out=grid[::2, ::2])
    np.testing.assert_array_equal(grid[::2, ::2], jm.joints_to_mats(joints[:12].reshape(3, 4)))
    assert (grid[1::2]["m"] == 0).all() and (grid[:, 1::2]["m"] == 0).all()

    q = random_unit_quats(rng, 21)
    m = np.zeros((21, 3, 6), np.float32)
    jm.quat_to_matrix(q, out=m[:, :, ::2])
    np.testing.assert_array_equal(m[:, :, ::2], jm.quat_to_matrix(q))
    assert (m[:, :, 1::2] == 0).all()


def test_out_overlapping_the_input(rng):
    # out aliasing the input's memory (through a view of another dtype) must not corrupt it
    q = random_unit_quats(rng, 40)
    expected = jm.quat_to_matrix(q[:4])
    buf = np.zeros(40 * 4, np.float32)
    buf[:16] = q[:4].ravel()
    src = buf[:16].reshape(4, 4)
    out = buf[:36].reshape(4, 3, 3)
    jm.quat_to_matrix(src, out=out)
    np.testing.assert_array_equal(out, expected)

    joints = random_joints(rng, 6)
    raw = np.zeros(6 * 48, np.uint8)
    raw[: 6 * 32] = joints.view(np.uint8)
    src_j = raw[: 6 * 32].view(jm.JOINT_QUAT)
    out_m = raw.view(jm.JOINT_MAT)
    jm.joints_to_mats(src_j, out=out_m)
    np.testing.assert_array_equal(out_m, jm.joints_to_mats(joints))


# ---------------------------------------------------------------- bad input --


def test_record_bad_input():
    joints = np.zeros(4, jm.JOINT_QUAT)
    mats = np.zeros(4, jm.JOINT_MAT)
    with pytest.raises(TypeError, match="joints must be a numpy array of dtype jointmath.JOINT_QUAT, got list"):
        jm.joints_to_mats([1, 2, 3])
    with pytest.raises(TypeError, match="joints must have dtype jointmath.JOINT_QUAT, got dtype float32"):
        jm.joints_to_mats(np.zeros((4, 8), np.float32))
    with pytest.raises(TypeError, match="joints must have dtype jointmath.JOINT_QUAT"):
        jm.joints_to_mats(mats)
    with pytest.raises(TypeError, match="mats must have dtype jointmath.JOINT_MAT"):
        jm.mats_to_joints(joints)
    with pytest.raises(TypeError, match="out must have dtype jointmath.JOINT_MAT"):
        jm.joints_to_mats(joints, out=np.zeros(4, jm.JOINT_QUAT))
    with pytest.raises(TypeError, match="out must be a numpy array of dtype jointmath.JOINT_QUAT, got list"):
        jm.mats_to_joints(mats, out=[])
    with pytest.raises(ValueError, match=r"out must have shape \(4,\), got shape \(5,\)"):
        jm.joints_to_mats(joints, out=np.zeros(5, jm.JOINT_MAT))
    with pytest.raises(ValueError, match=r"out must have shape \(4,\), got shape \(2, 2\)"):
        jm.joints_to_mats(joints, out=np.zeros((2, 2), jm.JOINT_MAT))
    readonly = np.zeros(4, jm.JOINT_MAT)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="out must be writeable"):
        jm.joints_to_mats(joints, out=readonly)
    with pytest.raises(TypeError, match="missing required argument 'joints'"):
        jm.joints_to_mats()
    with pytest.raises(TypeError, match="unexpected keyword argument 'output'"):
        jm.joints_to_mats(joints, output=mats)
    with pytest.raises(TypeError, match="multiple values for argument 'joints'"):
        jm.joints_to_mats(joints, joints=joints)
    with pytest.raises(TypeError, match="at most 2 arguments"):
        jm.joints_to_mats(joints, mats, mats)
    # keywords work, and out=None means a new array
    assert jm.joints_to_mats(joints=joints, out=None).shape == (4,)


def test_array_bad_input():
    q = np.zeros((4, 4), np.float32)
    # array_like like NumPy's ufuncs: lists and integers compute in float64, float16 in float32
    assert jm.quat_to_matrix([[0, 0, 0, 1]]).dtype == np.float64
    np.testing.assert_array_equal(jm.quat_to_matrix(np.array([[0, 0, 0, 1]], np.int64)), np.eye(3)[None])
    assert jm.quat_to_matrix(np.zeros((4, 4), np.float16) + np.float16(1)).dtype == np.float32
    with pytest.raises(TypeError, match="q must be an array_like of real numbers .*, got dtype complex128"):
        jm.quat_to_matrix(np.zeros((4, 4), complex))
    with pytest.raises(ValueError, match=r"q must have shape \(\.\.\., 4\), got shape \(4, 3\)"):
        jm.quat_to_matrix(np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match=r"q must have shape \(\.\.\., 4\), got shape \(\)"):
        jm.quat_to_matrix(np.ones((), np.float32))
    with pytest.raises(ValueError, match=r"m must have shape \(\.\.\., 3, 3\), got shape \(4, 4\)"):
        jm.matrix_to_quat(q)
    with pytest.raises(TypeError, match="out must have dtype float32, got dtype float64"):
        jm.quat_to_matrix(q, out=np.zeros((4, 3, 3)))
    with pytest.raises(ValueError, match=r"out must have shape \(4, 3, 3\), got shape \(4, 9\)"):
        jm.quat_to_matrix(q, out=np.zeros((4, 9), np.float32))
    with pytest.raises(TypeError, match="out must be a numpy array"):
        jm.matrix_to_quat(np.zeros((2, 3, 3), np.float32), out=(0, 0))
    readonly = np.zeros((4, 3, 3), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="out must be writeable"):
        jm.quat_to_matrix(q, out=readonly)


# ------------------------------------------------------- edge values, threads --


@pytest.mark.parametrize("n", [0, 1, 17])
def test_zero_length_and_small(rng, n):
    assert jm.joints_to_mats(np.zeros((0, 3), jm.JOINT_QUAT)).shape == (0, 3)
    assert jm.quat_to_matrix(np.zeros((0, 4), np.float32)).shape == (0, 3, 3)
    assert jm.matrix_to_quat(np.zeros((0, 3, 3), np.float32)).shape == (0, 4)
    assert jm.quat_to_matrix(random_unit_quats(rng, n)).shape == (n, 3, 3)


def test_nan_stays_in_its_joint(rng):
    joints = random_joints(rng, 40)
    clean_mats = jm.joints_to_mats(joints)
    for k in (0, 7, 16, 39):
        bad = joints.copy()
        bad["q"][k, 2] = np.nan
        mats = jm.joints_to_mats(bad)
        assert np.isnan(mats["m"][k, :, :3]).any()
        others = np.arange(40) != k
        np.testing.assert_array_equal(mats[others], clean_mats[others])

        bad_m = clean_mats.copy()
        bad_m["m"][k, 1, 0] = np.nan
        back = jm.mats_to_joints(bad_m)
        assert np.isnan(back["q"][k]).any()
        np.testing.assert_array_equal(back[others], jm.mats_to_joints(clean_mats)[others])


def test_zero_quaternion_gives_nan_not_a_crash():
    m = jm.quat_to_matrix(np.zeros((5, 4), np.float32))
    assert np.isnan(m).all()


def test_finite_non_rotation_matrices_give_finite_unit_quaternions(rng):
    m = rng.uniform(-3, 3, (5000, 3, 3)).astype(np.float32)
    m[:10] = 0
    q = jm.matrix_to_quat(m)
    assert np.isfinite(q).all()
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1, atol=1e-6)
    assert ref.angle_between(q, ref.matrix_to_quat(m)).max() < 1e-4


def test_threads_agree_with_sequential_calls(rng):
    joints = random_joints(rng, 50000)  # large enough for the GIL to be released
    assert_threads_agree(lambda: (jm.joints_to_mats(joints), jm.mats_to_joints(jm.joints_to_mats(joints))), 8, 3)


def test_inputs_are_never_modified(rng):
    joints = random_joints(rng, 100)
    q = random_unit_quats(rng, 100)
    m = jm.quat_to_matrix(q)
    mats = jm.joints_to_mats(joints)
    saved = [a.copy() for a in (joints, q, m, mats)]
    jm.joints_to_mats(joints)
    jm.mats_to_joints(mats)
    jm.quat_to_matrix(q)
    jm.matrix_to_quat(m)
    jm.quat_to_matrix(q.astype(np.float64))
    for a, b in zip((joints, q, m, mats), saved):
        np.testing.assert_array_equal(a, b)
