"""float64 kernels (quat_to_matrix, matrix_to_quat, euler_to_quat, quat_to_euler) on every path,
against an independent oracle: the same mathematics evaluated in np.longdouble (80-bit extended
precision on x86: 64-bit mantissa, 15-bit exponent, so no scaling is needed even for 2^-1074 or
DBL_MAX inputs), never jointmath.reference's float64 code."""

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference

from adversarial import SIZES, hard_quats, layouts, random_unit_quats

LD = np.longdouble
if np.finfo(LD).nmant < 60:  # pragma: no cover - the oracle needs extended precision
    pytest.skip("np.longdouble is not an extended-precision type on this platform", allow_module_level=True)
PI = LD("3.14159265358979323846264338327950288")

QUAT_TO_MATRIX_BOUND = 1e-15  # max abs element error
MATRIX_TO_QUAT_BOUND = 2e-15  # rad
NORM_BOUND = 1e-15
EULER_TO_QUAT_BOUND = 4e-15  # rad
ROUND_TRIP_BOUND = 1e-14  # rad, quat_to_euler then the exact rotation of its angles
ORDERS = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "xyz", "xzy", "yxz", "yzx", "zxy", "zyx"]
AXES = {"x": 0, "y": 1, "z": 2}


# ------------------------------------------------------------------ the oracle (longdouble) --


def ld_quat_to_matrix(q):
    """(..., 4) -> (..., 3, 3): the rotation of q / |q| in extended precision."""
    x, y, z, w = np.moveaxis(np.asarray(q).astype(LD), -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = 1 / (x * x + y * y + z * z + w * w)
        r = np.stack([(w * w + x * x - y * y - z * z) * h, 2 * (x * y - w * z) * h, 2 * (x * z + w * y) * h,
                      2 * (x * y + w * z) * h, (w * w - x * x + y * y - z * z) * h, 2 * (y * z - w * x) * h,
                      2 * (x * z - w * y) * h, 2 * (y * z + w * x) * h, (w * w - x * x - y * y + z * z) * h], -1)
    return r.reshape(r.shape[:-1] + (3, 3))


def ld_normalize(q):
    q = np.asarray(q).astype(LD)
    return q / np.sqrt(np.sum(q * q, axis=-1, keepdims=True))


def ld_angle(q0, q1):
    """Angle (rad) of the rotation between q0 and q1, modulo sign, in extended precision."""
    q0, q1 = ld_normalize(q0), ld_normalize(q1)
    q1 = q1 * np.where(np.sum(q0 * q1, axis=-1) < 0, -1, 1)[..., None].astype(LD)
    d = np.sqrt(np.sum((q0 - q1) ** 2, axis=-1))
    s = np.sqrt(np.sum((q0 + q1) ** 2, axis=-1))
    return (4 * np.arctan2(d, s)).astype(np.float64)


def ld_matrix_to_quat(m):
    """(..., 3, 3) -> (..., 4): the largest-divisor quaternion of m, normalised, in extended precision."""
    r = np.moveaxis(np.asarray(m).astype(LD).reshape(np.shape(m)[:-2] + (9,)), -1, 0)
    t = np.stack([1 + r[0] - r[4] - r[8], 1 - r[0] + r[4] - r[8], 1 - r[0] - r[4] + r[8], 1 + r[0] + r[4] + r[8]])
    xy, xz, yz = r[1] + r[3], r[2] + r[6], r[5] + r[7]
    wx, wy, wz = r[7] - r[5], r[2] - r[6], r[3] - r[1]
    candidates = np.stack([np.stack([t[0], xy, xz, wx]), np.stack([xy, t[1], yz, wy]),
                           np.stack([xz, yz, t[2], wz]), np.stack([wx, wy, wz, t[3]])])
    case = np.argmax(t, axis=0)
    q = np.moveaxis(np.take_along_axis(candidates, case[None, None], axis=0)[0], 0, -1)
    return ld_normalize(q)


def ld_quat_multiply(p, q):
    px, py, pz, pw = np.moveaxis(p, -1, 0)
    qx, qy, qz, qw = np.moveaxis(q, -1, 0)
    return np.stack([pw * qx + px * qw + py * qz - pz * qy, pw * qy + py * qw + pz * qx - px * qz,
                     pw * qz + pz * qw + px * qy - py * qx, pw * qw - px * qx - py * qy - pz * qz], -1)


def ld_euler_to_quat(angles, order, degrees):
    """(..., 3) Tait-Bryan angles -> (..., 4) quaternions in extended precision (the definition:
    uppercase intrinsic R = R0 R1 R2, lowercase extrinsic R = R2 R1 R0)."""
    a = np.asarray(angles).astype(LD)
    # degrees: whole turns off first (fmod is exact), so PI's rounding is not multiplied by a big
    # angle; radians: sinl / cosl reduce their argument exactly
    half = np.fmod(a, 720) * (PI / 360) if degrees else a / 2
    e = []
    for k, c in enumerate(order.lower()):
        ek = np.zeros(a.shape[:-1] + (4,), LD)
        ek[..., AXES[c]] = np.sin(half[..., k])
        ek[..., 3] = np.cos(half[..., k])
        e.append(ek)
    if order.isupper():
        return ld_quat_multiply(ld_quat_multiply(e[0], e[1]), e[2])
    return ld_quat_multiply(ld_quat_multiply(e[2], e[1]), e[0])


def all_quats(rng, n=20000):
    return np.concatenate([random_unit_quats(rng, n, np.float64), hard_quats(rng, np.float64)])


def scaled_quats(rng):
    """Quaternions of every binary scale from 2^-1074 to DBL_MAX, exact (small integers times a
    power of two), including ones with subnormal and zero components."""
    ints = rng.integers(-(2 ** 20), 2 ** 20, (64, 4)).astype(np.float64)
    ints[ints[:, 0] == 0, 0] = 1
    out = [ints * 2.0 ** -20 * 2.0 ** e for e in range(-1054, 1004, 37)]
    out.append(np.array([[5e-324, 0, 0, 0], [5e-324, -5e-324, 5e-324, 5e-324], [1e-310, 3e-320, 0, -5e-324],
                         [1.7976931348623157e308, -1.7976931348623157e308, 1e308, 0],
                         [1.7976931348623157e308, 1.7976931348623157e308, 1.7976931348623157e308,
                          1.7976931348623157e308]]))
    return np.concatenate(out)


# ------------------------------------------------------------------ quat_to_matrix --


def test_quat_to_matrix_unit_accuracy(rng):
    q = all_quats(rng)
    m = jm.quat_to_matrix(q)
    assert m.dtype == np.float64
    assert np.abs(m - ld_quat_to_matrix(q)).max() <= QUAT_TO_MATRIX_BOUND


def test_quat_to_matrix_any_scale(rng):
    q = scaled_quats(rng)
    assert np.abs(jm.quat_to_matrix(q) - ld_quat_to_matrix(q)).max() <= QUAT_TO_MATRIX_BOUND
    # float32 quaternions widened (|q|^2 - 1 ~ 1e-7: the division path) and arbitrary scales
    q32 = random_unit_quats(rng, 5000).astype(np.float64)
    assert np.abs(jm.quat_to_matrix(q32) - ld_quat_to_matrix(q32)).max() <= QUAT_TO_MATRIX_BOUND
    qs = rng.standard_normal((5000, 4)) * np.exp(rng.uniform(-40, 40, (5000, 1)))
    assert np.abs(jm.quat_to_matrix(qs) - ld_quat_to_matrix(qs)).max() <= QUAT_TO_MATRIX_BOUND


def test_quat_to_matrix_invalid_records_stay_in_their_record(rng):
    q = random_unit_quats(rng, 40, np.float64)
    bad = {3: [0, 0, 0, 0], 9: [np.nan, 0, 0, 1], 17: [0, np.inf, 0, 1], 18: [-np.inf, 0, 0, 0], 33: [0, 0, 0, -0.0]}
    for i, v in bad.items():
        q[i] = v
    m = jm.quat_to_matrix(q)
    good = np.setdiff1d(np.arange(40), list(bad))
    assert np.isnan(m[list(bad)]).all()
    assert np.abs(m[good] - ld_quat_to_matrix(q[good])).max() <= QUAT_TO_MATRIX_BOUND


@pytest.mark.parametrize("n", SIZES)
def test_quat_to_matrix_layouts_and_sizes(rng, n):
    q = random_unit_quats(rng, n, np.float64)
    expected = ld_quat_to_matrix(q)
    for name, a in layouts(q).items():
        before = a.copy()
        m = jm.quat_to_matrix(a)
        assert m.shape == (n, 3, 3) and m.dtype == np.float64, name
        assert np.abs(m - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND, name
        np.testing.assert_array_equal(a, before)
    out = np.full((n, 3, 3), 7.0)
    assert jm.quat_to_matrix(q, out=out) is out
    assert np.abs(out - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND
    strided_out = np.full((n, 3, 6), 7.0)[:, :, ::2]
    jm.quat_to_matrix(q, out=strided_out)
    assert np.abs(strided_out - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND



@pytest.mark.parametrize("n", SIZES)
def test_quat_to_matrix_out_with_gaps_or_reversed(rng, n):
    """out= records 96 bytes apart (the AVX-512 path stores whole 64-byte rows plus one masked
    double per matrix: the 24 bytes between matrices stay untouched) and in reverse order (a
    negative stride: the overlapping-quad stores)."""
    q = random_unit_quats(rng, n, np.float64)
    expected = ld_quat_to_matrix(q)
    padded = np.full((n, 4, 3), 7.0)
    assert jm.quat_to_matrix(q, out=padded[:, :3]).base is not None
    assert np.abs(padded[:, :3] - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND
    np.testing.assert_array_equal(padded[:, 3], 7.0)
    backwards = np.full((n, 3, 3), 7.0)[::-1]
    jm.quat_to_matrix(q, out=backwards)
    assert np.abs(backwards - expected).max(initial=0) <= QUAT_TO_MATRIX_BOUND
    m = np.full((n, 4, 3), np.nan)
    m[:, :3] = expected.astype(np.float64)
    assert ld_angle(jm.matrix_to_quat(m[:, :3]), q).max(initial=0) <= MATRIX_TO_QUAT_BOUND

def at_offset(shape, offset):
    """A float64 array of `shape` starting `offset` bytes after a 64-byte boundary."""
    size = int(np.prod(shape)) * 8
    raw = np.empty(size + 128, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    return raw[start:start + size].view(np.float64).reshape(shape)


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
        assert np.abs(out - expected).max() <= QUAT_TO_MATRIX_BOUND, q_offset
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


# ------------------------------------------------------------------ matrix_to_quat --


def check_matrix_to_quat(m):
    q = jm.matrix_to_quat(m)
    assert q.dtype == np.float64
    assert ld_angle(q, ld_matrix_to_quat(m)).max(initial=0) <= MATRIX_TO_QUAT_BOUND
    norms = np.sqrt(np.sum(q.astype(LD) ** 2, axis=-1))
    assert np.abs(norms - 1).max(initial=0) <= NORM_BOUND
    return q


def test_matrix_to_quat_accuracy(rng):
    q = all_quats(rng)
    m = ld_quat_to_matrix(q).astype(np.float64)  # the float64 rounding of the exact rotation
    back = check_matrix_to_quat(m)
    assert ld_angle(back, q).max() <= MATRIX_TO_QUAT_BOUND  # and the rotation it was made from


def test_matrix_to_quat_divisor_component_positive_and_exact_cases(rng):
    q = all_quats(rng)
    out = jm.matrix_to_quat(ld_quat_to_matrix(q).astype(np.float64))
    assert (out[np.arange(len(out)), np.abs(out).argmax(1)] > 0).all()
    cases = {(1, 0, 0, 0): [[1, 0, 0], [0, -1, 0], [0, 0, -1]], (0, 1, 0, 0): [[-1, 0, 0], [0, 1, 0], [0, 0, -1]],
             (0, 0, 1, 0): [[-1, 0, 0], [0, -1, 0], [0, 0, 1]], (0, 0, 0, 1): [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}
    for expected, m in cases.items():
        np.testing.assert_array_equal(jm.matrix_to_quat(np.array(m, np.float64)), expected)


def test_matrix_to_quat_non_rotations_finite_nan_in_own_record(rng):
    m = rng.standard_normal((50, 3, 3)) * np.exp(rng.uniform(-600, 600, (50, 1, 1)))
    m[7] = 0
    m[11, 1, 2] = np.nan
    q = jm.matrix_to_quat(m)
    assert np.isnan(q[11]).all()
    fine = np.delete(np.arange(50), 11)
    assert np.isfinite(q[fine]).all()
    assert np.abs(np.linalg.norm(q[fine], axis=1) - 1).max() <= NORM_BOUND


@pytest.mark.parametrize("n", SIZES)
def test_matrix_to_quat_layouts_and_sizes(rng, n):
    m = ld_quat_to_matrix(random_unit_quats(rng, n, np.float64)).astype(np.float64)
    expected = ld_matrix_to_quat(m)
    for name, a in layouts(m).items():
        before = a.copy()
        q = jm.matrix_to_quat(a)
        assert q.shape == (n, 4), name
        assert ld_angle(q, expected).max(initial=0) <= MATRIX_TO_QUAT_BOUND, name
        np.testing.assert_array_equal(a, before)
    out = np.zeros((n, 8))[:, ::2]
    assert jm.matrix_to_quat(m, out=out) is out
    assert ld_angle(out, expected).max(initial=0) <= MATRIX_TO_QUAT_BOUND


def test_round_trip_is_the_rotation(rng):
    q = all_quats(rng)
    assert ld_angle(jm.matrix_to_quat(jm.quat_to_matrix(q)), q).max() <= MATRIX_TO_QUAT_BOUND


# ------------------------------------------------------------------ product path --


def test_float64_functions_never_call_the_reference(rng, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the float64 product path called jointmath.reference")

    for name in ["quat_to_matrix", "matrix_to_quat", "euler_to_quat", "quat_to_euler"]:
        monkeypatch.setattr(reference, name, refuse)
    q = random_unit_quats(rng, 10, np.float64)
    jm.matrix_to_quat(jm.quat_to_matrix(q))
    jm.quat_to_euler(jm.euler_to_quat(np.zeros((10, 3)), "ZXY", degrees=True), "ZXY")
    jm.quat_to_euler(q, ["XYZ", "zyx"] * 5, degrees=True)


# ------------------------------------------------------------------ euler_to_quat --


def special_angles(rng, degrees):
    """Angles where the reduction is exact or at a quadrant edge, in the unit asked for."""
    full = 360.0 if degrees else 2 * np.pi
    edges = np.array([0, -0.0, 1e-300, -1e-300, 5e-324]
                     + [k * full / 8 for k in range(-16, 17)]  # multiples of 45 degrees, to +-720
                     + [k * full / 8 + eps for k in range(-16, 17) for eps in (1e-12, -1e-12)])
    return rng.choice(edges, (3000, 3))


@pytest.mark.parametrize("order", ORDERS)
def test_euler_to_quat_accuracy(rng, order):
    for degrees, limit in ((True, 720.0), (False, 4 * np.pi)):
        angles = np.concatenate([rng.uniform(-limit, limit, (4000, 3)), special_angles(rng, degrees)])
        q = jm.euler_to_quat(angles, order, degrees=degrees)
        assert q.dtype == np.float64
        assert ld_angle(q, ld_euler_to_quat(angles, order, degrees)).max() <= EULER_TO_QUAT_BOUND
        norms = np.sqrt(np.sum(q.astype(LD) ** 2, axis=-1))
        assert np.abs(norms - 1).max() <= 2 * NORM_BOUND


def test_euler_to_quat_large_angles_and_invalid(rng):
    # the reduction stays exact far beyond a turn: radians up to 2^20, degrees up to 2^40
    rad = rng.uniform(-2.0 ** 20, 2.0 ** 20, (2000, 3))
    assert ld_angle(jm.euler_to_quat(rad, "ZXY", degrees=False), ld_euler_to_quat(rad, "ZXY", False)).max() \
        <= EULER_TO_QUAT_BOUND
    deg = np.round(rng.uniform(-2.0 ** 40, 2.0 ** 40, (2000, 3))) + rng.uniform(-1, 1, (2000, 3))
    assert ld_angle(jm.euler_to_quat(deg, "xyz", degrees=True), ld_euler_to_quat(deg, "xyz", True)).max() <= EULER_TO_QUAT_BOUND
    angles = rng.uniform(-180, 180, (20, 3))
    bad = [2, 9, 19]
    angles[bad] = [[np.nan, 0, 0], [0, np.inf, 0], [0, 0, -np.inf]]
    q = jm.euler_to_quat(angles, "YZX", degrees=True)
    assert np.isnan(q[bad]).all()
    good = np.delete(np.arange(20), bad)
    assert ld_angle(q[good], ld_euler_to_quat(angles[good], "YZX", True)).max() <= EULER_TO_QUAT_BOUND


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_euler_to_quat_any_finite_angle(rng, dtype):
    """Beyond the kernels' reductions (float32 from 2^14, float64 from 2^20, either unit) records
    are redone in double: any finite angle gives its unit quaternion within the dtype's bound (they
    had given errors of 0.07 rad at 2^19 rad on scalar / sse, then non-unit, infinite or NaN
    quaternions); an infinite angle still gives NaN in its own record."""
    bound, norm_bound, top = (4.3e-7, 1e-6, 127) if dtype == np.float32 else (EULER_TO_QUAT_BOUND, 4e-16, 1023)
    exponents = rng.integers(10, top, (3000, 3))
    angles = (rng.uniform(-2, 2, (3000, 3)) * 2.0 ** exponents).astype(dtype)
    angles[:10] = rng.uniform(-2, 2, (10, 3)).astype(dtype)  # blocks mixing ordinary and far angles
    for order in ("ZXY", "xyz"):
        for degrees in (False, True):
            q = jm.euler_to_quat(angles, order, degrees=degrees)
            assert q.dtype == dtype
            assert reference.angle_between(q, reference.euler_to_quat(angles, order, degrees)).max() <= bound
            assert np.abs(np.linalg.norm(q.astype(np.float64), axis=-1) - 1).max() <= norm_bound
    angles[5] = [np.inf, 1, 2]
    q = jm.euler_to_quat(angles, "ZXY", degrees=True)
    assert np.isnan(q[5]).all() and np.isfinite(np.delete(q, 5, 0)).all()


@pytest.mark.parametrize("n", SIZES)
def test_euler_to_quat_layouts_and_sizes(rng, n):
    angles = rng.uniform(-180, 180, (n, 3))
    expected = ld_euler_to_quat(angles, "zxy", True)
    for name, a in layouts(angles).items():
        before = a.copy()
        q = jm.euler_to_quat(a, "zxy", degrees=True)
        assert q.shape == (n, 4) and q.dtype == np.float64, name
        assert ld_angle(q, expected).max(initial=0) <= EULER_TO_QUAT_BOUND, name
        np.testing.assert_array_equal(a, before)


# ------------------------------------------------------------------ quat_to_euler --


def round_trip_error(q, order, degrees=True):
    """quat_to_euler of q, then the exact (extended-precision) rotation of those angles vs q."""
    angles = jm.quat_to_euler(q, order, degrees=degrees)
    assert angles.dtype == np.float64
    return ld_angle(ld_euler_to_quat(angles, order, degrees), q), angles


@pytest.mark.parametrize("order", ORDERS)
def test_quat_to_euler_round_trip(rng, order):
    q = np.concatenate([rng.standard_normal((4000, 4)), all_quats(rng, 2000)])
    for degrees in (True, False):
        error, angles = round_trip_error(q, order, degrees)
        assert error.max() <= ROUND_TRIP_BOUND
        half_turn = 180.0 if degrees else np.pi
        assert (np.abs(angles[:, [0, 2]]) <= half_turn).all()
        assert (np.abs(angles[:, 1]) <= half_turn / 2).all()


@pytest.mark.parametrize("order", ORDERS)
def test_quat_to_euler_gimbal_lock(rng, order):
    n = 400
    outer = rng.uniform(-180, 180, (n, 2))
    middle = np.where(np.arange(n) % 2 == 0, 90.0, -90.0)
    # at lock (the middle angle +-90 degrees, to rounding): the third angle is 0, the rotation exact
    q = ld_euler_to_quat(np.column_stack([outer[:, 0], middle, outer[:, 1]]), order, True).astype(np.float64)
    error, angles = round_trip_error(q, order)
    assert error.max() <= ROUND_TRIP_BOUND
    np.testing.assert_array_equal(angles[:, 2], 0)
    np.testing.assert_allclose(angles[:, 1], middle, rtol=0, atol=1e-12)
    # float64's lock band is 2e-15 rad (float32's and scipy's 1e-7 would move the rotation by up
    # to 3e-7 rad): from just outside it to far away, the regular formula and the rotation exact
    for offset in (1e-13, 1e-12, 1e-9, 5e-8, 9e-8, 2e-7, 1e-6, 1e-3):
        near = np.column_stack([outer[:, 0], middle - np.sign(middle) * np.degrees(offset), outer[:, 1]])
        q = ld_euler_to_quat(near, order, True).astype(np.float64)
        error, angles = round_trip_error(q, order)
        assert error.max() <= ROUND_TRIP_BOUND, offset
        assert (angles[:, 2] != 0).all()


@pytest.mark.parametrize("n", range(0, 50))
def test_euler_kernels_write_only_their_records(rng, n, isa):
    """The float64 Euler kernels move 24-byte records as 32-byte quads in every block but the
    last (each quad's fourth double overwritten by the next record): out= followed by other data
    keeps it, and every record equals the same record converted alone."""
    guard = -7.5
    q = rng.standard_normal((n, 4))
    buffer = np.full(3 * n + 8, guard)
    angles = jm.quat_to_euler(q, "zxy", out=buffer[: 3 * n].reshape(n, 3))
    np.testing.assert_array_equal(buffer[3 * n:], guard)
    alone = [jm.quat_to_euler(q[r : r + 1], "zxy")[0] for r in range(n)]
    np.testing.assert_array_equal(angles, np.reshape(alone, (n, 3)))
    buffer = np.full(4 * n + 8, guard)
    quats = jm.euler_to_quat(angles, "zxy", out=buffer[: 4 * n].reshape(n, 4))
    np.testing.assert_array_equal(buffer[4 * n:], guard)
    alone = [jm.euler_to_quat(angles[r : r + 1], "zxy")[0] for r in range(n)]
    np.testing.assert_array_equal(quats, np.reshape(alone, (n, 4)))


def test_quat_to_euler_any_scale_and_invalid(rng):
    q = scaled_quats(rng)
    for order in ("ZXY", "xzy"):
        assert round_trip_error(q, order)[0].max() <= ROUND_TRIP_BOUND
    q = rng.standard_normal((30, 4))
    bad = [0, 8, 9, 29]
    q[bad] = [[0, 0, 0, 0], [np.nan, 0, 0, 1], [0, 0, np.inf, 1], [0, -0.0, 0, 0]]
    angles = jm.quat_to_euler(q, "XYZ", degrees=True)
    assert np.isnan(angles[bad]).all()
    good = np.delete(np.arange(30), bad)
    np.testing.assert_array_equal(angles[good], jm.quat_to_euler(q[good], "XYZ", degrees=True))


@pytest.mark.parametrize("n", SIZES)
def test_quat_to_euler_layouts_and_sizes(rng, n):
    q = rng.standard_normal((n, 4))
    expected = jm.quat_to_euler(q.copy(), "YXZ", degrees=True)
    for name, a in layouts(q).items():
        before = a.copy()
        angles = jm.quat_to_euler(a, "YXZ", degrees=True)
        assert angles.shape == (n, 3), name
        np.testing.assert_array_equal(angles, expected)
        np.testing.assert_array_equal(a, before)
    assert round_trip_error(q, "YXZ")[0].max(initial=0) <= ROUND_TRIP_BOUND
