"""quaternion <-> matrix conversion: joints_to_mats, mats_to_joints, quat_to_matrix, matrix_to_quat, in float32
and float64 (the float64 kernels against the extended-precision oracle of longdouble_oracle.py)."""

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import SIZES, assert_threads_agree, every_scale_quats64, hard_quats, layouts, random_unit_quats
from longdouble_oracle import LD, ld_angle, ld_matrix_to_quat, ld_quat_to_matrix, needs_extended_precision

QUAT_TO_MATRIX_BOUND = 5e-7  # max abs element error, unit quaternions
ANGLE_BOUND = 1e-6  # rad, matrix -> quaternion
NORM_BOUND = 1e-6
QUAT_TO_MATRIX_BOUND_64 = 1e-15  # the same for float64
MATRIX_TO_QUAT_BOUND_64 = 2e-15  # rad
NORM_BOUND_64 = 1e-15

DTYPES = [np.float32, pytest.param(np.float64, marks=needs_extended_precision)]


def _norms64(q):
    return np.sqrt(np.sum(q.astype(LD) ** 2, axis=-1))


# what each dtype's results are held to: float32 against the float64 reference, float64 against
# the extended-precision oracle (longdouble_oracle.py)
EXACT = {
    np.float32: dict(quat_to_matrix=ref.quat_to_matrix, matrix_to_quat=ref.matrix_to_quat, angle=ref.angle_between,
                     norms=lambda q: np.linalg.norm(q.astype(np.float64), axis=-1),
                     matrix_bound=QUAT_TO_MATRIX_BOUND, angle_bound=ANGLE_BOUND, norm_bound=NORM_BOUND),
    np.float64: dict(quat_to_matrix=ld_quat_to_matrix, matrix_to_quat=ld_matrix_to_quat, angle=ld_angle, norms=_norms64,
                     matrix_bound=QUAT_TO_MATRIX_BOUND_64, angle_bound=MATRIX_TO_QUAT_BOUND_64, norm_bound=NORM_BOUND_64),
}


def random_joints(rng, n):
    return jm.make_joints(random_unit_quats(rng, n), rng.uniform(-100, 100, (n, 3)))


def all_quats(rng, dtype=np.float32, n=20000):
    return np.concatenate([random_unit_quats(rng, n, dtype), hard_quats(rng, dtype)])


# ---------------------------------------------------------------- accuracy --


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_to_matrix_accuracy(rng, dtype):
    exact = EXACT[dtype]
    q = all_quats(rng, dtype)
    m = jm.quat_to_matrix(q)
    assert m.dtype == dtype
    assert np.abs(m - exact["quat_to_matrix"](q)).max() <= exact["matrix_bound"]


def test_quat_to_matrix_matches_scipy(rng):
    Rotation = pytest.importorskip("scipy.spatial.transform").Rotation
    q = random_unit_quats(rng, 1000)
    np.testing.assert_allclose(jm.quat_to_matrix(q), Rotation.from_quat(q.astype(np.float64)).as_matrix(), atol=5e-7)
    assert jm.quat_to_matrix(np.array([0, 0, np.sqrt(0.5), np.sqrt(0.5)], np.float32))[0, 1] == pytest.approx(-1)


def check_matrix_to_quat(m, q_true):
    exact = EXACT[m.dtype.type]
    q = jm.matrix_to_quat(m)
    assert q.dtype == m.dtype
    assert exact["angle"](q, q_true).max(initial=0) <= exact["angle_bound"]
    assert np.abs(exact["norms"](q) - 1).max(initial=0) <= exact["norm_bound"]
    return q


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_to_quat_accuracy(rng, dtype):
    exact = EXACT[dtype]
    q = all_quats(rng, dtype)
    # the matrix as the kernel sees it (the exact rotation rounded to dtype), against its exact quaternion
    m = exact["quat_to_matrix"](q).astype(dtype)
    check_matrix_to_quat(m, exact["matrix_to_quat"](m))
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


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_returns_the_rotation(rng, dtype):
    exact = EXACT[dtype]
    q = all_quats(rng, dtype)
    back = jm.matrix_to_quat(jm.quat_to_matrix(q))
    assert exact["angle"](back, q).max() <= exact["angle_bound"]


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


# ------------------------------------- float64: against the extended-precision oracle --


@needs_extended_precision
def test_quat_to_matrix_any_scale(rng):
    q = every_scale_quats64(rng)
    assert np.abs(jm.quat_to_matrix(q) - ld_quat_to_matrix(q)).max() <= QUAT_TO_MATRIX_BOUND_64
    # float32 quaternions widened (|q|^2 - 1 ~ 1e-7: the division path) and arbitrary scales
    q32 = random_unit_quats(rng, 5000).astype(np.float64)
    assert np.abs(jm.quat_to_matrix(q32) - ld_quat_to_matrix(q32)).max() <= QUAT_TO_MATRIX_BOUND_64
    qs = rng.standard_normal((5000, 4)) * np.exp(rng.uniform(-40, 40, (5000, 1)))
    assert np.abs(jm.quat_to_matrix(qs) - ld_quat_to_matrix(qs)).max() <= QUAT_TO_MATRIX_BOUND_64


@needs_extended_precision
def test_quat_to_matrix_invalid_records_stay_in_their_record(rng):
    q = random_unit_quats(rng, 40, np.float64)
    bad = {3: [0, 0, 0, 0], 9: [np.nan, 0, 0, 1], 17: [0, np.inf, 0, 1], 18: [-np.inf, 0, 0, 0], 33: [0, 0, 0, -0.0]}
    for i, v in bad.items():
        q[i] = v
    m = jm.quat_to_matrix(q)
    good = np.setdiff1d(np.arange(40), list(bad))
    assert np.isnan(m[list(bad)]).all()
    assert np.abs(m[good] - ld_quat_to_matrix(q[good])).max() <= QUAT_TO_MATRIX_BOUND_64


@needs_extended_precision
@pytest.mark.parametrize("n", SIZES)
def test_quat_to_matrix_layouts_and_sizes(rng, n):
    q = random_unit_quats(rng, n, np.float64)
    expected = ld_quat_to_matrix(q)
    for name, a in layouts(q).items():
        before = a.copy()
        m = jm.quat_to_matrix(a)
        assert m.shape == (n, 3, 3) and m.dtype == np.float64, name
        assert np.abs(m - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND_64, name
        np.testing.assert_array_equal(a, before)
    out = np.full((n, 3, 3), 7.0)
    assert jm.quat_to_matrix(q, out=out) is out
    assert np.abs(out - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND_64
    strided_out = np.full((n, 3, 6), 7.0)[:, :, ::2]
    jm.quat_to_matrix(q, out=strided_out)
    assert np.abs(strided_out - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND_64


@needs_extended_precision
@pytest.mark.parametrize("n", SIZES)
def test_quat_to_matrix_out_with_gaps_or_reversed(rng, n):
    """out= records 96 bytes apart (the AVX-512 path stores whole 64-byte rows plus one masked
    double per matrix: the 24 bytes between matrices stay untouched) and in reverse order (a
    negative stride: the overlapping-quad stores)."""
    q = random_unit_quats(rng, n, np.float64)
    expected = ld_quat_to_matrix(q)
    padded = np.full((n, 4, 3), 7.0)
    assert jm.quat_to_matrix(q, out=padded[:, :3]).base is not None
    assert np.abs(padded[:, :3] - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND_64
    np.testing.assert_array_equal(padded[:, 3], 7.0)
    backwards = np.full((n, 3, 3), 7.0)[::-1]
    jm.quat_to_matrix(q, out=backwards)
    assert np.abs(backwards - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND_64
    m = np.full((n, 4, 3), np.nan)
    m[:, :3] = expected.astype(np.float64)
    assert ld_angle(jm.matrix_to_quat(m[:, :3]), q).max(initial=0) <= MATRIX_TO_QUAT_BOUND_64


def at_offset(shape, offset):
    """A float64 array of `shape` starting `offset` bytes after a 64-byte boundary."""
    size = int(np.prod(shape)) * 8
    raw = np.empty(size + 128, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    return raw[start:start + size].view(np.float64).reshape(shape)


@needs_extended_precision
@pytest.mark.parametrize("n", [1, 7, 8, 9, 1024])
def test_quat_to_matrix_any_alignment(rng, n, isa):
    """Input and out= at every 8-byte offset from a 64-byte boundary (NumPy's arrays start at 16):
    against the oracle, and bit-identical on the AVX2 and AVX-512 paths (AVX-512 runs the AVX2
    kernel: its own straddled cache lines and cost more, csrc/convert.c)."""
    q = np.concatenate([random_unit_quats(rng, n, np.float64)[: n - 1], [[3e-300, 0, 4e-300, 0]]])
    expected = ld_quat_to_matrix(q)
    results = []
    for q_offset in range(0, 64, 8):
        x = at_offset(q.shape, q_offset)
        x[...] = q
        out = at_offset((n, 3, 3), (q_offset + 24) % 64)
        assert jm.quat_to_matrix(x, out=out) is out
        assert np.abs(out - expected).max() <= QUAT_TO_MATRIX_BOUND_64, q_offset
        np.testing.assert_array_equal(jm.quat_to_matrix(x), out)
        np.testing.assert_array_equal(x, q)
        results.append(out.copy())
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    if isa == "avx512":
        jm._core._set_isa("avx2")
        try:
            np.testing.assert_array_equal(jm.quat_to_matrix(q), results[0])
        finally:
            jm._core._set_isa("avx512")


@needs_extended_precision
def test_matrix_to_quat_divisor_component_positive_and_exact_cases(rng):
    q = all_quats(rng, np.float64)
    out = jm.matrix_to_quat(ld_quat_to_matrix(q).astype(np.float64))
    assert (out[np.arange(len(out)), np.abs(out).argmax(1)] > 0).all()
    cases = {(1, 0, 0, 0): [[1, 0, 0], [0, -1, 0], [0, 0, -1]], (0, 1, 0, 0): [[-1, 0, 0], [0, 1, 0], [0, 0, -1]],
             (0, 0, 1, 0): [[-1, 0, 0], [0, -1, 0], [0, 0, 1]], (0, 0, 0, 1): [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}
    for expected, m in cases.items():
        np.testing.assert_array_equal(jm.matrix_to_quat(np.array(m, np.float64)), expected)


@needs_extended_precision
def test_matrix_to_quat_non_rotations_finite_nan_in_own_record(rng):
    m = rng.standard_normal((50, 3, 3)) * np.exp(rng.uniform(-600, 600, (50, 1, 1)))
    m[7] = 0
    m[11, 1, 2] = np.nan
    q = jm.matrix_to_quat(m)
    assert np.isnan(q[11]).all()
    fine = np.delete(np.arange(50), 11)
    assert np.isfinite(q[fine]).all()
    assert np.abs(np.linalg.norm(q[fine], axis=1) - 1).max() <= NORM_BOUND_64


@needs_extended_precision
@pytest.mark.parametrize("n", SIZES)
def test_matrix_to_quat_layouts_and_sizes(rng, n):
    m = ld_quat_to_matrix(random_unit_quats(rng, n, np.float64)).astype(np.float64)
    expected = ld_matrix_to_quat(m)
    for name, a in layouts(m).items():
        before = a.copy()
        q = jm.matrix_to_quat(a)
        assert q.shape == (n, 4), name
        assert ld_angle(q, expected).max(initial=0) <= MATRIX_TO_QUAT_BOUND_64, name
        np.testing.assert_array_equal(a, before)
    out = np.zeros((n, 8))[:, ::2]
    assert jm.matrix_to_quat(m, out=out) is out
    assert ld_angle(out, expected).max(initial=0) <= MATRIX_TO_QUAT_BOUND_64


@needs_extended_precision
def test_float64_functions_never_call_the_reference(rng, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the float64 product path called jointmath.reference")

    for name in ["quat_to_matrix", "matrix_to_quat", "euler_to_quat", "quat_to_euler"]:
        monkeypatch.setattr(ref, name, refuse)
    q = random_unit_quats(rng, 10, np.float64)
    jm.matrix_to_quat(jm.quat_to_matrix(q))
    jm.quat_to_euler(jm.euler_to_quat(np.zeros((10, 3)), "ZXY", degrees=True), "ZXY")
    jm.quat_to_euler(q, ["XYZ", "zyx"] * 5, degrees=True)
