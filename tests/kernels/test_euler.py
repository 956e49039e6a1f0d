"""Euler angles: euler_to_quat and quat_to_euler, one order or one per joint, in float32 and
float64 (float64 also against the extended-precision oracle of longdouble_oracle.py)."""
import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import SIZES, every_scale_quats64, hard_quats, layouts, random_unit_quats
from longdouble_oracle import LD, ld_angle, ld_euler_to_quat, needs_extended_precision

Rotation = pytest.importorskip("scipy.spatial.transform").Rotation

EULER_TO_QUAT_BOUND = 4e-15  # rad, float64
NORM_BOUND = 1e-15  # float64
ROUND_TRIP_BOUND = 1e-14  # rad, float64 quat_to_euler then the exact rotation of its angles

ORDERS = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "xyz", "xzy", "yxz", "yzx", "zxy", "zyx"]


@pytest.mark.parametrize("order", ORDERS)
def test_euler_to_quat_matches_scipy(rng, order):
    angles = rng.uniform(-720, 720, (2000, 3))
    for dtype, bound in ((np.float32, 1e-6), (np.float64, 1e-12)):
        given = angles.astype(dtype)
        expected = Rotation.from_euler(order, given.astype(np.float64), degrees=True).as_quat()
        q = jm.euler_to_quat(given, order, degrees=True)
        assert q.dtype == dtype
        assert ref.angle_between(q, expected).max() < bound
    expected = Rotation.from_euler(order, angles, degrees=True).as_quat()
    radians = jm.euler_to_quat(np.radians(angles), order, degrees=False)
    assert ref.angle_between(radians, expected).max() < 1e-12


@pytest.mark.parametrize("order", ORDERS)
def test_quat_to_euler_matches_scipy_including_gimbal_lock(rng, order):
    q = rng.standard_normal((2000, 4))
    axes = order.lower()
    locked = Rotation.from_euler(order, np.column_stack([rng.uniform(-180, 180, 50), np.full(50, 90.0),
                                                         rng.uniform(-180, 180, 50)]), degrees=True).as_quat()
    q = np.concatenate([q, locked])
    with pytest.warns(UserWarning, match="Gimbal lock"):
        expected = Rotation.from_quat(q).as_euler(order, degrees=True)
    got = jm.quat_to_euler(q, order, degrees=True)
    difference = (got - expected + 180) % 360 - 180
    assert np.abs(difference).max() < 1e-9
    assert ref.angle_between(jm.euler_to_quat(got, order, degrees=True), q).max() < 1e-12
    assert axes  # every order exercised


def test_per_joint_orders(rng):
    angles = rng.uniform(-180, 180, (5, 3, 3))
    orders = ["ZXY", "xyz", "ZXY"]
    q = jm.euler_to_quat(angles, orders)
    for j, order in enumerate(orders):
        np.testing.assert_allclose(q[:, j], jm.euler_to_quat(angles[:, j], order))
    back = jm.quat_to_euler(q, orders)
    assert ref.angle_between(jm.euler_to_quat(back, orders), q).max() < 1e-12


def test_euler_bad_arguments():
    a = np.zeros((4, 3))
    for order in ("XYX", "XY", "XyZ", "ABC", 3):
        with pytest.raises(ValueError, match="order must be one of the six Tait-Bryan orders"):
            jm.euler_to_quat(a, order)
    with pytest.raises(ValueError, match=r"angles must have shape \(\.\.\., 3\)"):
        jm.euler_to_quat(np.zeros((4, 4)), "XYZ")
    with pytest.raises(TypeError, match="angles must be an array_like of real numbers .*, got dtype complex128"):
        jm.euler_to_quat([[0, 0, 1j]], "XYZ")
    with pytest.raises(TypeError, match="q must be an array_like of real numbers .*, got dtype <U1"):
        jm.quat_to_euler([["a", "b", "c", "d"]], "XYZ")
    with pytest.raises(ValueError, match="a sequence of orders needs one per joint: 2 orders"):
        jm.euler_to_quat(np.zeros((5, 3, 3)), ["XYZ", "ZXY"])


@pytest.mark.parametrize("n", [0, 1, 3, 5, 8, 15, 17, 33])
def test_euler_sizes_and_layouts(rng, n):
    angles = rng.uniform(-180, 180, (n, 3)).astype(np.float32)
    expected = ref.euler_to_quat(angles, "YZX")
    q = jm.euler_to_quat(angles, "YZX")
    assert q.shape == (n, 4)
    assert ref.angle_between(q, expected).max(initial=0) < 1e-6
    strided = np.repeat(angles, 2, axis=0)[::2]
    np.testing.assert_array_equal(jm.euler_to_quat(strided, "YZX"), q)
    before = angles.copy()
    jm.euler_to_quat(angles, "yzx")
    np.testing.assert_array_equal(angles, before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 7, 33])
def test_euler_out(rng, dtype, n):
    """out= of euler_to_quat / quat_to_euler: returned, filled as without it, contiguous or not,
    at any alignment, the inputs untouched; a list of orders writes into it too."""
    angles = rng.uniform(-3, 3, (n, 2, 3)).astype(dtype)
    q = rng.standard_normal((n, 2, 4)).astype(dtype)
    for func, x, width in ((jm.euler_to_quat, angles, 4), (jm.quat_to_euler, q, 3)):
        before = x.copy()
        for order in ("ZXY", ["xzy", "YXZ"]):
            expected = func(x, order)
            raw = np.zeros(n * 2 * width * 2 * x.itemsize + 1, np.uint8)
            outs = [np.zeros((n, 2, width), dtype),  # contiguous
                    np.zeros((n, 2, 2 * width), dtype)[..., ::2],  # strided
                    np.zeros((n, 4, width), dtype)[:, ::2],  # gaps between records
                    np.zeros((n, 2, width), dtype)[::-1],  # reversed
                    raw[1:1 + expected.nbytes].view(dtype).reshape(expected.shape)]  # unaligned
            for out in outs:
                assert func(x, order, out=out) is out
                np.testing.assert_array_equal(out, expected)
                np.testing.assert_array_equal(x, before)
            assert func(x, order, False, outs[0]) is outs[0]  # positional
    # out sharing the input's memory: as NumPy, the result is that of the input before the call
    for func, width_in, width_out in ((jm.euler_to_quat, 3, 4), (jm.quat_to_euler, 4, 3)):
        x = rng.uniform(-3, 3, (n, 2, width_in)).astype(dtype)
        for order in ("yzx", ["yzx", "zyx"]):
            expected = func(x, order)
            buf = np.zeros(n * 2 * 4, dtype)
            buf[:x.size] = x.ravel()
            out = buf[:n * 2 * width_out].reshape(n, 2, width_out)
            assert func(buf[:x.size].reshape(x.shape), order, out=out) is out
            np.testing.assert_array_equal(out, expected)


def test_euler_out_bad_arguments():
    angles, q = np.zeros((4, 3)), np.zeros((4, 4), np.float32)
    with pytest.raises(TypeError, match="out must have dtype float64, got dtype float32"):
        jm.euler_to_quat(angles, "XYZ", out=np.zeros((4, 4), np.float32))
    with pytest.raises(TypeError, match="out must have dtype float32, got dtype float64"):
        jm.quat_to_euler(q, "XYZ", out=np.zeros((4, 3)))
    with pytest.raises(TypeError, match="out must be a numpy array"):
        jm.quat_to_euler(q, "XYZ", out=[[0.0] * 3] * 4)
    with pytest.raises(ValueError, match=r"out must have shape \(4, 4\), got shape \(4, 3\)"):
        jm.euler_to_quat(angles, "XYZ", out=np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"out must have shape \(4, 3\), got shape \(3,\)"):
        jm.quat_to_euler(q, ["XYZ"] * 4, out=np.zeros(3, np.float32))
    readonly = np.zeros((4, 4))
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="out must be writeable"):
        jm.euler_to_quat(angles, "XYZ", out=readonly)
    np.testing.assert_array_equal(readonly, 0)


@pytest.mark.parametrize("order", ORDERS)
def test_quat_to_euler_float32_kernel(rng, order):
    q = np.concatenate([rng.standard_normal((3000, 4)), np.zeros((1, 4)) + [0, 0, 0, 1]]).astype(np.float32)
    got = jm.quat_to_euler(q, order, degrees=True)
    assert got.dtype == np.float32
    expected = Rotation.from_quat(q.astype(np.float64)).as_euler(order, degrees=True)
    # away from gimbal lock the angles match scipy; everywhere they reproduce the rotation
    regular = np.abs(expected[:, 1]) < 89
    difference = np.radians(np.abs((got - expected + 180) % 360 - 180))
    assert difference[regular].max() < 1e-6
    assert ref.angle_between(ref.euler_to_quat(got.astype(np.float64), order, degrees=True), q).max() < 1e-6
    radians = jm.quat_to_euler(q, order, degrees=False)
    assert np.abs(radians - np.radians(got.astype(np.float64)))[regular].max() < 1e-6
    locked = jm.euler_to_quat(np.array([[30, 90, 0], [-45, -90, 0]], np.float32), order, degrees=True)
    assert ref.angle_between(jm.euler_to_quat(jm.quat_to_euler(locked, order), order), locked).max() < 1e-6


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the float64 path's NumPy
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quat_to_euler_nan_stays_in_its_record(rng, dtype):
    q = rng.standard_normal((37, 4)).astype(dtype)
    bad = [3, 17, 36]
    q[bad] = [[np.nan, 0, 0, 1], [0, np.inf, 0, 1], [0, 0, 0, -np.inf]]
    got = jm.quat_to_euler(q, "ZXY")
    assert np.isnan(got[bad]).all()
    good = np.delete(np.arange(37), bad)
    np.testing.assert_array_equal(got[good], jm.quat_to_euler(q[good], "ZXY"))


# ------------------------------------- float64: against the extended-precision oracle --


def all_quats64(rng, n):
    return np.concatenate([random_unit_quats(rng, n, np.float64), hard_quats(rng, np.float64)])


def special_angles(rng, degrees):
    """Angles where the reduction is exact or at a quadrant edge, in the unit asked for."""
    full = 360.0 if degrees else 2 * np.pi
    edges = np.array([0, -0.0, 1e-300, -1e-300, 5e-324]
                     + [k * full / 8 for k in range(-16, 17)]  # multiples of 45 degrees, to +-720
                     + [k * full / 8 + eps for k in range(-16, 17) for eps in (1e-12, -1e-12)])
    return rng.choice(edges, (3000, 3))


@needs_extended_precision
@pytest.mark.parametrize("order", ORDERS)
def test_euler_to_quat_accuracy(rng, order):
    for degrees, limit in ((True, 720.0), (False, 4 * np.pi)):
        angles = np.concatenate([rng.uniform(-limit, limit, (4000, 3)), special_angles(rng, degrees)])
        q = jm.euler_to_quat(angles, order, degrees=degrees)
        assert q.dtype == np.float64
        assert ld_angle(q, ld_euler_to_quat(angles, order, degrees)).max() <= EULER_TO_QUAT_BOUND
        norms = np.sqrt(np.sum(q.astype(LD) ** 2, axis=-1))
        assert np.abs(norms - 1).max() <= 2 * NORM_BOUND


@needs_extended_precision
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
            assert ref.angle_between(q, ref.euler_to_quat(angles, order, degrees)).max() <= bound
            assert np.abs(np.linalg.norm(q.astype(np.float64), axis=-1) - 1).max() <= norm_bound
    angles[5] = [np.inf, 1, 2]
    q = jm.euler_to_quat(angles, "ZXY", degrees=True)
    assert np.isnan(q[5]).all() and np.isfinite(np.delete(q, 5, 0)).all()


@needs_extended_precision
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


def round_trip_error(q, order, degrees=True):
    """quat_to_euler of q, then the exact (extended-precision) rotation of those angles vs q."""
    angles = jm.quat_to_euler(q, order, degrees=degrees)
    assert angles.dtype == np.float64
    return ld_angle(ld_euler_to_quat(angles, order, degrees), q), angles


@needs_extended_precision
@pytest.mark.parametrize("order", ORDERS)
def test_quat_to_euler_round_trip(rng, order):
    q = np.concatenate([rng.standard_normal((4000, 4)), all_quats64(rng, 2000)])
    for degrees in (True, False):
        error, angles = round_trip_error(q, order, degrees)
        assert error.max() <= ROUND_TRIP_BOUND
        half_turn = 180.0 if degrees else np.pi
        assert (np.abs(angles[:, [0, 2]]) <= half_turn).all()
        assert (np.abs(angles[:, 1]) <= half_turn / 2).all()


@needs_extended_precision
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


@needs_extended_precision
def test_quat_to_euler_any_scale_and_invalid(rng):
    q = every_scale_quats64(rng)
    for order in ("ZXY", "xzy"):
        assert round_trip_error(q, order)[0].max() <= ROUND_TRIP_BOUND
    q = rng.standard_normal((30, 4))
    bad = [0, 8, 9, 29]
    q[bad] = [[0, 0, 0, 0], [np.nan, 0, 0, 1], [0, 0, np.inf, 1], [0, -0.0, 0, 0]]
    angles = jm.quat_to_euler(q, "XYZ", degrees=True)
    assert np.isnan(angles[bad]).all()
    good = np.delete(np.arange(30), bad)
    np.testing.assert_array_equal(angles[good], jm.quat_to_euler(q[good], "XYZ", degrees=True))


@needs_extended_precision
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
