"""The NumPy boundary of the plain-array functions: array_like inputs as NumPy's ufuncs take them,
one return form for single elements, errors of the right kind naming the argument."""
import tracemalloc

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import random_unit_quats

# every plain-array function, called on one array argument of its core shape
UNARY = {
    "quat_to_matrix": (jm.quat_to_matrix, "q", (4,)),
    "matrix_to_quat": (jm.matrix_to_quat, "m", (3, 3)),
    "euler_to_quat": (lambda a: jm.euler_to_quat(a, "ZXY"), "angles", (3,)),
    "quat_to_euler": (lambda q: jm.quat_to_euler(q, "xyz"), "q", (4,)),
    "pack_quats": (jm.pack_quats, "q", (4,)),
    "make_continuous": (jm.make_continuous, "q", (4,)),
    "slerp q0": (lambda q: jm.slerp(q, np.array([0, 0, 0, 1], np.float32), 0.5), "q0", (4,)),
    "nlerp q1": (lambda q: jm.nlerp(np.array([0, 0, 0, 1], np.float32), q, 0.5), "q1", (4,)),
    "extract_rotation": (jm.extract_rotation, "a", (3, 3)),
}


def nested_tuples(a):
    return tuple(nested_tuples(x) for x in a) if isinstance(a, np.ndarray) else a


def sample(core, n=3):
    """n records of a core shape that every function accepts (unit quaternions, rotations, angles)."""
    rng = np.random.default_rng(7)
    if core == (3, 3):
        return jm.quat_to_matrix(random_unit_quats(rng, n, np.float64))
    if core == (3,):
        return rng.uniform(-3, 3, (n, 3))
    return random_unit_quats(rng, n, np.float64)


@pytest.mark.parametrize("name", UNARY)
def test_array_like_follows_numpy(name):
    func, arg, core = UNARY[name]
    x = sample(core)
    as64, as32 = func(x), func(x.astype(np.float32))
    if name == "pack_quats":  # codes: the same from either dtype
        np.testing.assert_array_equal(as64, as32)
    else:
        assert as64.dtype == np.float64 and as32.dtype == np.float32
    # lists, tuples and a big-endian copy give the same numbers as the array itself
    np.testing.assert_array_equal(func(x.tolist()), as64)
    np.testing.assert_array_equal(func(nested_tuples(x)), as64)
    np.testing.assert_array_equal(func(x.astype(">f8")), as64)
    np.testing.assert_array_equal(func(x.astype(np.float32).astype(">f4")), as32)
    # float16 computes in float32; integers and bools in float64
    assert func(x.astype(np.float16)).dtype == (np.uint32 if name == "pack_quats" else np.float32)
    ints = np.rint(x * 2).astype(np.int16)
    ints.reshape(-1)[-1] = 1  # nothing zero or degenerate for packing
    assert func(ints).dtype == (np.uint32 if name == "pack_quats" else np.float64)
    np.testing.assert_array_equal(func(ints), func(ints.astype(np.float64)))
    for bad, dtype in [(x.astype(np.complex128), "complex128"), (x.astype(object), "object"),
                       (x.astype(str), "<U"), (np.zeros(x.shape, "M8[s]"), "datetime64"),
                       (x.astype(np.longdouble), rf"{np.dtype(np.longdouble)} \(no kernel computes in long double: pass "
                                                 rf"\.astype\(numpy\.float64\)\)")]:
        with pytest.raises(TypeError, match=rf"{arg} must be an array_like of real numbers .*got dtype {dtype}"):
            func(bad)
    with pytest.raises(TypeError, match=rf"{arg} must be an array_like of real numbers"):
        func([[1, 2], [3]])  # ragged
    with pytest.raises(ValueError, match=rf"{arg} must have shape \(\.\.\.(, \d)+\), got shape \(3, 5\)"):
        func(np.zeros((3, 5)))
    # inputs are never written
    before = x.copy()
    func(x)
    np.testing.assert_array_equal(x, before)


def test_float32_input_is_used_without_a_copy():
    q = random_unit_quats(np.random.default_rng(1), 1 << 16)
    out = np.empty((1 << 16, 3, 3), np.float32)
    jm.quat_to_matrix(q, out=out)  # warm up

    def peak(arg):
        tracemalloc.start()
        jm.quat_to_matrix(arg, out=out)
        used = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return used

    assert peak(q) < 4096  # the native aligned array is read in place
    assert peak(q.astype(">f4")) >= q.nbytes  # a byte-swapped one is converted (this test can fail)
    out = out[::2]
    assert peak(q[::2]) < 4096  # a 1-d stride is walked, not copied (out too)


def test_one_return_form_for_single_elements(rng):
    q = random_unit_quats(rng, 1)[0]
    for dtype in (np.float32, np.float64):
        for bits, code_type in ((10, np.uint32), (20, np.uint64)):
            code = jm.pack_quats(q.astype(dtype), bits=bits)
            assert type(code) is code_type  # a NumPy scalar, as np.add returns for 0-d results
            assert code == jm.pack_quats(q[None].astype(dtype), bits=bits)[0]
            for form in (code, np.asarray(code), int(code) if False else code.astype(code_type), [code]):
                back = jm.unpack_quats(form)
                assert back.shape == np.shape(form) + (4,)
                assert ref.angle_between(back.reshape(4).astype(np.float64), q.astype(np.float64)) < 0.01
    joints = jm.make_joints(random_unit_quats(rng, 3), rng.uniform(-1, 1, (3, 3)))
    for one in (joints[1], joints[1:2].reshape(())):  # a record of an array, a 0-d array
        for bits in (10, 20):
            packed = jm.pack_joints(one, bits=bits)
            assert packed.shape == ()
            for form in (packed, packed[()]):  # the 0-d array and its record
                back = jm.unpack_joints(form)
                assert back.shape == () and back["t"].tolist() == joints[1]["t"].tolist()


def test_empty_inputs_give_empty_outputs():
    for dtype in (np.float32, np.float64):
        assert jm.euler_to_quat(np.zeros((5, 0, 3), dtype), []).shape == (5, 0, 4)
        assert jm.quat_to_euler(np.zeros((5, 0, 4), dtype), []).shape == (5, 0, 3)
        assert jm.euler_to_quat(np.zeros((0, 3), dtype), "XYZ").dtype == dtype
        assert jm.make_continuous(np.zeros((0, 2, 4), dtype)).shape == (0, 2, 4)
        assert jm.slerp(np.zeros((0, 4), dtype), np.zeros((0, 4), dtype), 0.5).shape == (0, 4)
        assert jm.pack_quats(np.zeros((2, 0, 4), dtype)).shape == (2, 0)


def test_degrees_default_is_radians_as_scipy():
    q = jm.euler_to_quat([0, 0, np.pi / 2], "XYZ")
    np.testing.assert_allclose(q, [0, 0, np.sqrt(0.5), np.sqrt(0.5)], atol=1e-15)
    np.testing.assert_allclose(jm.euler_to_quat([0, 0, 90], "XYZ", degrees=True), q, atol=1e-15)
    np.testing.assert_allclose(jm.quat_to_euler(q, "XYZ"), [0, 0, np.pi / 2], atol=1e-15)
    np.testing.assert_allclose(jm.quat_to_euler(q, "XYZ", degrees=True), [0, 0, 90], atol=1e-12)


def test_extract_rotation_huge_arguments_name_themselves():
    a = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match=r"tol must be in \[0, 1e30\], got 1000000000"):
        jm.extract_rotation(a, tol=10**400)
    with pytest.raises(ValueError, match=r"max_iter must be in \[0, 2\*\*24\], got 1000000000"):
        jm.extract_rotation(a, max_iter=10**400)
    with pytest.raises(ValueError, match=r"max_iter must be in \[0, 2\*\*24\], got -1000000000"):
        jm.extract_rotation(a, max_iter=-10**400)


def test_codes_of_any_unsigned_spelling_and_the_names_in_errors():
    code = jm.pack_quats(np.array([0, 0, 0, 1], np.float32), bits=20)
    np.testing.assert_array_equal(jm.unpack_quats(np.array([code], "Q")), [[0, 0, 0, 1]])
    with pytest.raises(TypeError, match=r"p must hold uint32 or uint64 codes .*got an array of dtype int64"):
        jm.unpack_quats(np.array([5]))
    for bad in ([1, 2], np.zeros(2, jm.JOINT_QUAT), np.zeros(2, np.uint32)):
        with pytest.raises(TypeError, match="packed must be a numpy array of dtype jointmath.PACKED_JOINT"):
            jm.unpack_joints(bad)


def test_make_joints_refuses_complex_and_strings():
    with pytest.raises(TypeError, match=r"q must be an array_like of real numbers .*got dtype complex128"):
        jm.make_joints(np.array([[0, 0, 0, 1 + 1j]]))
    with pytest.raises(TypeError, match=r"t must be an array_like of real numbers .*got dtype complex64"):
        jm.make_joints([[0, 0, 0, 1]], np.zeros((1, 3), np.complex64))
    with pytest.raises(TypeError, match=r"q must be an array_like of real numbers .*got dtype <U1"):
        jm.make_joints([["a", "b", "c", "d"]])
    assert jm.make_joints([[0, 0, 0, 1]], [[1, 2, 3]])["t"].tolist() == [[1, 2, 3, 0]]


def test_results_too_large_to_allocate_say_how_large():
    huge = np.broadcast_to(np.float32(0), (1 << 24, 1 << 24, 4))  # no memory of its own
    q = np.broadcast_to(np.array([0, 0, 0, 1], np.float32), (1 << 24, 1 << 24, 4))
    for call in (lambda: jm.quat_to_matrix(q), lambda: jm.make_continuous(q),
                 lambda: jm.slerp(q[:, :1], q[:1], 0.5), lambda: jm.pack_quats(huge),
                 lambda: jm.unpack_quats(np.broadcast_to(np.uint32(0), (1 << 24, 1 << 24)))):
        with pytest.raises(ValueError, match=r"an array of shape \(16777216, 16777216.*\) .* needs [0-9.e+]+ bytes, "
                                             r"more than can be allocated"):
            call()
    # a stride-0 run of 2^58 quaternions is read in place; its matrices need more bytes than an intp counts
    with pytest.raises(ValueError, match=r"an array of shape \(288230376151711744, 3, 3\) \(4-byte elements\) "
                                         r"needs 1\.038e\+19 bytes"):
        jm.quat_to_matrix(np.broadcast_to(np.zeros(4, np.float32), (1 << 58, 4)))


def test_index_of_any_integer_dtype_and_byte_order(rng):
    joints = jm.make_joints(random_unit_quats(rng, 4 * 9).reshape(4, 9, 4))
    blend = jm.make_joints(random_unit_quats(rng, 4 * 9).reshape(4, 9, 4))
    index = [1, 2, 7]
    expected = jm.slerp_joints(joints, blend, 0.4, index=np.array(index, np.intp))
    for dtype in ("<i8", ">i8", ">i4", "u1", ">u2", "i1"):
        for func in (jm.slerp_joints, jm.lerp_joints):
            got = func(joints, blend, 0.4, index=np.array(index, dtype))
            np.testing.assert_array_equal(got, func(joints, blend, 0.4, index=np.array(index, np.intp)))
    np.testing.assert_array_equal(jm.slerp_joints(joints, blend, 0.4, index=np.array(index, ">i8")), expected)


# ---------------------------------------------- the record builders: make_joints, pack_joints,
# unpack_joints, resample_joints (C boundaries on the shared walk helpers)


def _unaligned(a):
    """A copy of `a` one byte past an aligned address (no float in it at its natural alignment)."""
    view = np.zeros(a.size * a.dtype.itemsize + 1, np.uint8)[1:].view(a.dtype).reshape(a.shape)
    view[...] = a
    return view


def _layouts(a):
    """(name, array equal to `a` in another memory layout) for a 2-D or deeper array."""
    strided = np.zeros((a.shape[0], 2 * a.shape[1]) + a.shape[2:], a.dtype)[:, ::2]
    strided[...] = a
    reversed_ = a[::-1].copy()[::-1]
    return [("C order", a), ("Fortran order", np.asfortranarray(a)), ("every second", strided),
            ("negative strides", reversed_), ("unaligned", _unaligned(a)),
            ("read-only", np.frombuffer(a.tobytes(), a.dtype).reshape(a.shape))]


def _same_bytes(got, expected):
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(expected).tobytes()


def _joints_by_numpy(q, t=None):
    """make_joints' definition: NumPy's assignment casts into zeroed records."""
    q = np.asarray(q)
    joints = np.zeros(q.shape[:-1], jm.JOINT_QUAT)
    joints["q"] = q
    if t is not None:
        joints["t"][..., :3] = t
    return joints


def test_make_joints_any_layout_dtype_and_byte_order(rng):
    q = random_unit_quats(rng, 30).reshape(6, 5, 4)
    t = rng.uniform(-9, 9, (6, 5, 3)).astype(np.float32)
    expected = _joints_by_numpy(q, t)
    for (name_q, q_view), (name_t, t_view) in zip(_layouts(q), _layouts(t)):
        before = q_view.tobytes(), t_view.tobytes()
        _same_bytes(jm.make_joints(q_view, t_view), expected)
        assert (q_view.tobytes(), t_view.tobytes()) == before, f"{name_q} input written"
    # other dtypes and byte orders: each value cast to float32 once, as NumPy's assignment does
    for dtype in (">f4", ">f8", np.float64, np.float16, np.longdouble, np.int64, ">i2", np.uint8, bool):
        sign = np.abs if np.dtype(dtype).kind == "u" else np.positive  # a negative float to uint8: undefined in C
        qd, td = sign(q * 100).astype(dtype), sign(t * 100).astype(dtype)
        _same_bytes(jm.make_joints(qd, td), _joints_by_numpy(qd, td))
    # an int64 that float64 cannot hold: rounded once to float32 (through float64 it would round twice)
    big = jm.make_joints([[2**60 + 2**36 + 1, 0, 0, 1]])
    assert big["q"][0, 0] == np.float32(2**60 + 2**37) != np.float32(np.float64(2**60 + 2**36 + 1))
    # lists, keywords
    _same_bytes(jm.make_joints(q=q.tolist(), t=t.tolist()), _joints_by_numpy(q.tolist(), t.tolist()))


def test_make_joints_zero_d_empty_and_too_large():
    one = jm.make_joints(np.array([0, 0, 0, 1], np.float32), [1, 2, 3])
    assert isinstance(one, np.ndarray) and one.shape == () and one.dtype == jm.JOINT_QUAT
    assert one["q"].tolist() == [0, 0, 0, 1] and one["t"].tolist() == [1, 2, 3, 0]
    assert jm.make_joints(np.zeros((0, 4))).shape == (0,)
    assert jm.make_joints(np.zeros((3, 0, 4)), np.zeros((3, 0, 3))).shape == (3, 0)
    with pytest.raises(ValueError, match=r"t must have shape \(3, 0, 3\), got shape \(3, 1, 3\)"):
        jm.make_joints(np.zeros((3, 0, 4)), np.zeros((3, 1, 3)))  # no broadcasting
    with pytest.raises(ValueError, match=r"q must have shape \(\.\.\., 4\), got shape \(\)"):
        jm.make_joints(1.0)
    with pytest.raises(TypeError, match=r"q must be an array_like of real numbers, got list"):
        jm.make_joints([[0, 0, 0, 1], [0, 0]])  # ragged
    with pytest.raises(TypeError, match="make_joints.. got an unexpected keyword argument 'x'"):
        jm.make_joints([[0, 0, 0, 1]], x=1)
    huge = np.broadcast_to(np.float32(0), (1 << 24, 1 << 24, 4))
    with pytest.raises(ValueError, match=r"an array of shape \(16777216, 16777216\) \(32-byte elements\) needs "
                                         r"[0-9.e+]+ bytes, more than can be allocated"):
        jm.make_joints(huge)


@pytest.mark.parametrize("bits", [10, 20])
def test_pack_and_unpack_joints_any_layout(isa, rng, bits):
    joints = jm.make_joints(random_unit_quats(rng, 6 * 37).reshape(6, 37, 4), rng.uniform(-9, 9, (6, 37, 3)))
    packed = jm.pack_joints(joints, bits)
    expected_packed = np.zeros(joints.shape, packed.dtype)
    expected_packed["q"] = jm.pack_quats(joints["q"], bits)
    expected_packed["t"] = joints["t"][..., :3]
    _same_bytes(packed, expected_packed)
    expected_joints = np.zeros(joints.shape, jm.JOINT_QUAT)
    expected_joints["q"] = jm.unpack_quats(packed["q"])
    expected_joints["t"][..., :3] = packed["t"]
    for (name, joints_view), (_, packed_view) in zip(_layouts(joints), _layouts(packed)):
        before = joints_view.tobytes(), packed_view.tobytes()
        _same_bytes(jm.pack_joints(joints_view, bits=bits), expected_packed)
        _same_bytes(jm.unpack_joints(packed_view), expected_joints)
        assert (joints_view.tobytes(), packed_view.tobytes()) == before, f"{name} input written"
    # one record (np.void or a 0-d array) gives a 0-d array; empty shapes stay empty
    for one in (joints[2, 3], joints[2, 3:4].reshape(())):
        _same_bytes(jm.pack_joints(one, bits), expected_packed[2, 3:4].reshape(()))
    for one in (packed[2, 3], packed[2, 3:4].reshape(())):
        _same_bytes(jm.unpack_joints(one), expected_joints[2, 3:4].reshape(()))
    for shape in ((0,), (3, 0)):
        assert jm.pack_joints(np.zeros(shape, jm.JOINT_QUAT), bits).shape == shape
        assert jm.unpack_joints(np.zeros(shape, packed.dtype)).shape == shape
    # a bad quaternion anywhere (more than one chunk of records in): its index in the joints' shape
    bad = joints.copy()
    bad["q"][5, 30] = 0
    with pytest.raises(ValueError, match=r"joints holds 1 zero or non-finite quaternion \(cannot be packed\); the first "
                                         r"at index \(5, 30\)"):
        jm.pack_joints(np.tile(bad, (1, 10))[:, :37], bits)


def test_pack_and_unpack_joints_dtypes_and_sizes():
    joints = jm.make_joints([[0, 0, 0, 1]])
    swapped = joints.astype(jm.JOINT_QUAT.newbyteorder())  # NumPy's == tells these dtypes apart
    with pytest.raises(TypeError, match=r"joints must be a numpy array of dtype jointmath.JOINT_QUAT, got dtype"):
        jm.pack_joints(swapped)
    with pytest.raises(TypeError, match="joints must be a numpy array of dtype jointmath.JOINT_QUAT, got void"):
        jm.pack_joints(np.zeros(1, jm.JOINT_MAT)[0])
    with pytest.raises(TypeError, match="packed must be a numpy array of dtype jointmath.PACKED_JOINT or "
                                        "PACKED_JOINT64, got float64"):
        jm.unpack_joints(np.float64(1))
    for bits in (True, 10.0, "10", 16):
        with pytest.raises(ValueError, match="bits must be 10 .uint32 codes. or 20"):
            jm.pack_joints(joints, bits=bits)
    assert jm.pack_joints(joints=joints, bits=np.int8(20)).dtype == jm.PACKED_JOINT64
    huge = np.broadcast_to(joints[0], (1 << 24, 1 << 24))
    with pytest.raises(ValueError, match=r"an array of shape \(16777216, 16777216\) \(16-byte elements\) needs"):
        jm.pack_joints(huge)
    with pytest.raises(ValueError, match=r"an array of shape \(16777216, 16777216\) \(32-byte elements\) needs"):
        jm.unpack_joints(np.broadcast_to(jm.pack_joints(joints, 20)[0], (1 << 24, 1 << 24)))


def _resample_by_numpy(joints, frame_time, fps):
    """The time grid of resample_joints in NumPy: (source index, fraction) per new frame."""
    count = int(np.floor((joints.shape[0] - 1) * frame_time * fps + 1e-9)) + 1
    position = np.arange(count) / fps / frame_time
    snapped = np.round(position)
    position = np.where(np.abs(position - snapped) < 1e-9, snapped, position)
    index = np.minimum(np.floor(position).astype(np.int64), joints.shape[0] - 2)
    return index, np.clip(position - index, 0.0, 1.0).astype(np.float32)


def test_resample_joints_follows_its_time_grid(isa, rng):
    joints = jm.make_joints(random_unit_quats(rng, 50 * 37).reshape(50, 37, 4), rng.uniform(-9, 9, (50, 37, 3)))
    joints["q"] = jm.make_continuous(joints["q"])
    for frame_time, fps in ((1 / 120, 30), (1 / 120, 100), (1 / 30, 120), (0.0123, 77.7), (1 / 120, 1000 / 7)):
        got = jm.resample_joints(joints, frame_time, fps)
        index, fraction = _resample_by_numpy(joints, frame_time, fps)
        a, b = joints[index], joints[index + 1]
        assert got.shape == (len(index), 37)
        f = fraction[:, None]
        np.testing.assert_allclose(got["q"], ref.slerp(a["q"], b["q"], f.astype(np.float64)), atol=5e-7, rtol=0)
        np.testing.assert_allclose(got["t"], a["t"] * (1 - f[..., None]) + b["t"] * f[..., None], atol=4e-6, rtol=0)
        # at a source frame exactly that frame (fraction 0: the earlier one, 1: the last frame)
        _same_bytes(got[fraction == 0], a[fraction == 0])
        _same_bytes(got[fraction == 1], b[fraction == 1])


def test_resample_joints_layouts_and_edges(rng):
    joints = jm.make_joints(random_unit_quats(rng, 9 * 8).reshape(9, 8, 4), rng.uniform(-9, 9, (9, 8, 3)))
    expected = jm.resample_joints(joints, 1 / 120, 50)
    for name, view in _layouts(joints):
        before = view.tobytes()
        _same_bytes(jm.resample_joints(view, 1 / 120, 50), expected)
        assert view.tobytes() == before, f"{name} input written"
    _same_bytes(jm.resample_joints(joints[:, ::2], 1 / 120, 50), jm.resample_joints(joints[:, ::2].copy(), 1 / 120, 50))
    _same_bytes(jm.resample_joints(joints=joints, frame_time=1 / 120, fps=50), expected)
    assert jm.resample_joints(joints[:, :0], 1 / 120, 50).shape == (expected.shape[0], 0)
    assert jm.resample_joints(joints[:2], 1, 0.5).shape == (1, 8)  # shorter than one new frame: the first
    with pytest.raises(ValueError, match=r"joints must have shape \(frames, joints\), got shape \(\)"):
        jm.resample_joints(joints[0, 0], 1 / 120, 50)
    with pytest.raises(ValueError, match="resampling needs at least 1 frame, got 0"):
        jm.resample_joints(joints[:0], 1 / 120, 50)
    with pytest.raises(TypeError, match="joints must be a numpy array of dtype jointmath.JOINT_QUAT, got dtype"):
        jm.resample_joints(joints.astype(jm.JOINT_QUAT.newbyteorder()), 1 / 120, 50)
    with pytest.raises(TypeError, match="fps must be a positive number of frames per second, got NoneType"):
        jm.resample_joints(joints, 1 / 120, None)
    with pytest.raises(TypeError, match="frame_time must be a positive number of seconds per source frame, got bool"):
        jm.resample_joints(joints, np.bool_(True), 50)
    for bad in (0, -1.0, float("inf"), np.float32("nan"), 10**400):
        with pytest.raises(ValueError, match="fps must be a positive number of frames per second, got"):
            jm.resample_joints(joints, 1 / 120, bad)
    with pytest.raises(TypeError, match=r"resample_joints\(\) missing required argument 'fps'"):
        jm.resample_joints(joints, 1 / 120)


# ------------------------------------- one rule for every public function: argument kinds, sizes


def test_extract_rotation_method_must_be_a_str():
    a = np.eye(3, dtype=np.float32)
    for bad, name in ((None, "NoneType"), (1, "int"), (b"newton", "bytes")):
        with pytest.raises(TypeError, match=rf"method must be a str, got {name}$"):
            jm.extract_rotation(a, method=bad)
    np.testing.assert_array_equal(jm.extract_rotation(a, method="newton"), jm.extract_rotation(a))


def test_results_of_shape_0_are_numpy_scalars():
    """Every number result whose shape is () is a NumPy scalar, as NumPy's ufuncs return: the code
    of one quaternion and the update count of one matrix (quaternions of shape (4,) stay arrays;
    one record stays a 0-d record array, as np.zeros((), JOINT_QUAT) is one)."""
    for a in (np.eye(3, dtype=np.float32), np.eye(3), jm.joints_to_mats(jm.make_joints([[0, 0, 0, 1]]))[0]):
        q, n = jm.extract_rotation(a, return_iterations=True)
        assert type(n) is np.int32 and n == 1 and q.shape == (4,)
        q, n = jm.extract_rotation(a, out=np.empty(4, q.dtype), return_iterations=True)
        assert type(n) is np.int32
    assert type(ref.extract_rotation(np.eye(3), return_iterations=True)[1]) is np.int32  # the oracle too
    q, n = jm.extract_rotation(np.tile(np.eye(3), (2, 1, 1)), return_iterations=True)
    assert type(n) is np.ndarray and n.shape == (2,)
    assert type(jm.pack_quats([0, 0, 0, 1.0])) is np.uint32
    one = jm.make_joints([0, 0, 0, 1.0])
    assert type(one) is np.ndarray and one.shape == () and type(jm.joints_to_mats(one)) is np.ndarray


class _Float:
    """Any object with __float__, as float() and NumPy read it."""

    def __float__(self):
        return 1e-3


def test_real_and_integer_arguments_as_numpy_reads_them(rng):
    from decimal import Decimal
    from fractions import Fraction

    a = jm.quat_to_matrix(random_unit_quats(rng, 5)) * np.float32(1.5)
    expected = jm.extract_rotation(a, tol=1e-3, max_iter=3)
    for tol in (np.array(1e-3), np.float64(1e-3), Fraction(1, 1000), Decimal("0.001"), _Float()):
        np.testing.assert_array_equal(jm.extract_rotation(a, tol=tol, max_iter=3), expected)
    for max_iter in (np.array(3), np.uint8(3), np.array(3, ">i8")):
        np.testing.assert_array_equal(jm.extract_rotation(a, tol=1e-3, max_iter=max_iter), expected)
    for bad, what in ((True, "bool"), (np.True_, "bool"), (np.array(False), "a 0-d array of dtype bool"),
                      (1e-3 + 0j, "complex"), (np.complex128(1e-3), "complex128"), ("1e-3", "str"), (b"1", "bytes"),
                      (np.array([1e-3]), r"an array of shape \(1,\)"), (np.array(1e-3, complex), "a 0-d array of dtype"),
                      (np.timedelta64(1, "s"), "timedelta64"), (np.timedelta64(0), "timedelta64")):
        with pytest.raises(TypeError, match=f"tol must be a real number, got {what}"):
            jm.extract_rotation(a, tol=bad)
    with pytest.raises(ValueError, match=r"tol must be in \[0, 1e30\], got Fraction\(-1, 3\)"):
        jm.extract_rotation(a, tol=Fraction(-1, 3))
    for bad, what in ((np.array(3.0), "a 0-d array of dtype float64"), (np.array([3]), r"an array of shape \(1,\)"),
                      (np.array(True), "a 0-d array of dtype bool"), (np.True_, "bool"), (3.0, "float")):
        with pytest.raises(TypeError, match=f"max_iter must be an int, got {what}"):
            jm.extract_rotation(a, max_iter=bad)
    # the other real-number and integer arguments read them the same way
    joints = jm.make_joints(random_unit_quats(rng, 9 * 2).reshape(9, 2, 4))
    expected = jm.resample_joints(joints, 0.25, 3)
    for frame_time, fps in ((np.array(0.25), np.array(3)), (Fraction(1, 4), np.int8(3)), (np.float32(0.25), Decimal(3))):
        _same_bytes(jm.resample_joints(joints, frame_time, fps), expected)
    with pytest.raises(TypeError, match="fps must be a positive number of frames per second, got a 0-d array of dtype bool"):
        jm.resample_joints(joints, 0.25, np.array(True))
    assert jm.pack_quats([0, 0, 0, 1.0], bits=np.array(20)).dtype == np.uint64
    with pytest.raises(ValueError, match="bits must be 10 .uint32 codes. or 20"):
        jm.pack_quats([0, 0, 0, 1.0], bits=np.array(True))
    with pytest.raises(TypeError, match=r"axis must be an int, got a 0-d array of dtype float64"):
        jm.make_continuous(np.zeros((2, 4)), axis=np.array(0.0))


def test_parents_beyond_int64_in_a_list_name_the_entry():
    joints = jm.make_joints(np.tile([0, 0, 0, 1.0], (2, 3, 1)))
    expected = jm.forward_kinematics(joints, np.array([-1, 0, 1]))
    for big in (2**70, -2**70, 2**63, np.uint64(2**64 - 1)):
        for parents in ([-1, 0, big], (-1, 0, big), [-1, np.int64(0), big]):
            with pytest.raises(ValueError, match=rf"parents must list parents before children .*: parents\[2\] = "
                                                 rf"{int(big)}$"):
                jm.forward_kinematics(joints, parents)
    # NumPy integers in a list are read as integers, bools refused whichever kind
    _same_bytes(jm.forward_kinematics(joints, [-1, np.int64(0), np.uint8(1)]), expected)
    for flag in (True, np.True_):
        with pytest.raises(TypeError, match=r"parents must be integers, got bool at parents\[1\]"):
            jm.forward_kinematics(joints, [-1, flag, 0])


def test_every_result_too_large_to_allocate_says_how_large():
    """10^13 records broadcast from one (no memory of their own): every function raises the ValueError
    that says how large, not NumPy's MemoryError."""
    many = 10**13
    joint = jm.make_joints([[0, 0, 0, 1.0]])
    mat = jm.joints_to_mats(joint)
    joints, mats = np.broadcast_to(joint, (many, 2)), np.broadcast_to(mat, (many, 2))
    angles, quats = np.broadcast_to(np.float32(0), (many, 2, 3)), np.broadcast_to(np.float32([0, 0, 0, 1]), (many, 2, 4))
    calls = {
        "joints_to_mats": lambda: jm.joints_to_mats(joints),
        "joints_to_mats 1-d": lambda: jm.joints_to_mats(joints[:, 0]),
        "mats_to_joints": lambda: jm.mats_to_joints(mats),
        "compose_mats": lambda: jm.compose_mats(mats, mats),
        "compose_mats one record": lambda: jm.compose_mats(mats[:, 0], mat[0]),
        "forward_kinematics": lambda: jm.forward_kinematics(joints, [-1, 0]),
        "slerp_joints": lambda: jm.slerp_joints(joints, joints, 0.5),
        "lerp_joints": lambda: jm.lerp_joints(joints[:, 0], joints[:, 0], 0.5),
        "slerp_joints indexed": lambda: jm.slerp_joints(joints, joints, 0.5, index=[1]),
        # the copy of an index (thread safety) or joint_index's: 10^13 positions broadcast from one
        "slerp_joints index copy": lambda: jm.slerp_joints(joint, joint, 0.5, index=np.broadcast_to(np.intp(0), many)),
        "lerp_joints index copy": lambda: jm.lerp_joints(joint, joint, 0.5, index=np.broadcast_to(np.int32(0), many)),
        "joint_index": lambda: jm.joint_index(np.broadcast_to(np.intp(0), many), 1),
        "pack_joints": lambda: jm.pack_joints(joints),
        "extract_rotation JOINT_MAT": lambda: jm.extract_rotation(mats),
        "euler_to_quat orders": lambda: jm.euler_to_quat(angles, ["XYZ", "ZYX"]),
        "quat_to_euler orders": lambda: jm.quat_to_euler(quats, ("XYZ", "zyx")),
        "quat_to_matrix float16": lambda: jm.quat_to_matrix(np.broadcast_to(np.float16([0, 0, 0, 1]), (many, 4))),
        "quat_to_matrix big-endian": lambda: jm.quat_to_matrix(np.broadcast_to(np.float32([0, 0, 0, 1]).astype(">f4"),
                                                                               (many, 4))),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=r"an array of shape \(10000000000000,.*\) \(\d+-byte elements\) needs "
                                             r"[0-9.e+]+ bytes, more than can be allocated"):
            call()
    # forward_kinematics' working memory for 2^40 joints per frame (none of them there): the same
    # kind of error, not MemoryError
    with pytest.raises(ValueError, match=r"the parents of 1099511627776 joints need \d+ bytes of working memory, "
                                         r"more than can be allocated"):
        jm.forward_kinematics(np.zeros((0, 2**40), jm.JOINT_QUAT), [-1])


def test_orders_as_any_sequence_of_str(rng):
    angles = rng.uniform(-3, 3, (4, 3, 3))
    q = random_unit_quats(rng, 12, np.float64).reshape(4, 3, 4)
    orders = ["XYZ", "zxy", "XYZ"]

    class Orders:  # a sequence that is neither a list nor a tuple
        def __len__(self):
            return len(orders)

        def __getitem__(self, j):
            return orders[j]

    expected_q, expected_angles = jm.euler_to_quat(angles, orders), jm.quat_to_euler(q, orders)
    for form in (tuple(orders), np.array(orders), np.array(orders, object), Orders()):
        np.testing.assert_array_equal(jm.euler_to_quat(angles, form), expected_q)
        np.testing.assert_array_equal(jm.quat_to_euler(q, form), expected_angles)
        np.testing.assert_array_equal(jm.quat_to_euler(q.astype(np.float32), form, degrees=True),
                                      jm.quat_to_euler(q.astype(np.float32), orders, degrees=True))
    for bad in (np.array([orders]), np.array("XYZ")):
        with pytest.raises(ValueError, match=r"order must be one order or a 1-D sequence of orders \(one per joint\), "
                                             r"got an array of shape"):
            jm.euler_to_quat(angles, bad)
    with pytest.raises(ValueError, match="order must be one of the six Tait-Bryan orders .*, got .*b'XYZ'.* for joint 0"):
        jm.euler_to_quat(angles, np.array(orders, "S"))


def test_pack_errors_name_the_argument_passed():
    q = np.array([[0, 0, 0, 1], [0, 0, 0, 0], [np.nan, 0, 0, 1]], np.float32)
    with pytest.raises(ValueError, match=r"^q holds 2 zero or non-finite quaternions \(cannot be packed\); the first "
                                         r"at index 1$"):
        jm.pack_quats(q)
    for bits in (10, 20):
        with pytest.raises(ValueError, match=r"^joints holds 2 zero or non-finite quaternions \(cannot be packed\); "
                                             r"the first at index 1$"):
            jm.pack_joints(jm.make_joints(q), bits=bits)


def test_an_index_of_another_kind_is_a_type_error(rng):
    joints = jm.make_joints(random_unit_quats(rng, 12).reshape(2, 6, 4))
    calls = (lambda index: jm.slerp_joints(joints, joints, 0.5, index=index),
             lambda index: jm.lerp_joints(joints, joints, 0.5, index=index),
             lambda index: jm.joint_index(index, 6))
    for call in calls:
        for bad, name in ((slice(0, 3), "slice"), (1.5, "float"), (np.float64(1), "float64"), ({1, 2}, "set"),
                          ("12", "str"), (b"\x01", "bytes"), (True, "bool"), (iter([1, 2]), "list_iterator")):
            with pytest.raises(TypeError, match=rf"index must be a 1-D array or sequence of integer joint positions, "
                                                rf"got {name}$"):
                call(bad)
        for scalar in (3, np.int64(3), np.array(3)):  # an integer: a shape error, as before
            with pytest.raises(ValueError, match=r"index must be a 1-D array of joint positions, got shape \(\)"):
                call(scalar)
    with pytest.raises(TypeError, match="index must be a 1-D array or sequence of integer joint positions, got NoneType"):
        jm.joint_index(None, 6)


def test_masked_arrays_are_refused_naming_the_argument(rng):
    """As scipy's Rotation under its array API: a mask is never dropped silently."""
    q = random_unit_quats(rng, 2, np.float64)
    masked = np.ma.masked_invalid(np.array([q[0], [np.nan, 0, 0, 1]]))
    joints = jm.make_joints(q)
    mats = jm.joints_to_mats(joints)
    calls = {
        "q": lambda: jm.quat_to_matrix(masked), "m": lambda: jm.matrix_to_quat(np.ma.masked_array(jm.quat_to_matrix(q))),
        "q0": lambda: jm.slerp(masked, q, 0.5), "q1": lambda: jm.nlerp(q, masked, 0.5),
        "t": lambda: jm.slerp(q, q, np.ma.masked_array([0.5, 0.5])), "angles": lambda: jm.euler_to_quat(masked[:, :3], "XYZ"),
        "p": lambda: jm.unpack_quats(np.ma.masked_array(jm.pack_quats(q))),
        "a": lambda: jm.extract_rotation(np.ma.masked_array(mats)),
        "tol": lambda: jm.extract_rotation(np.eye(3), tol=np.ma.masked_array(1e-3)),
        "joints": lambda: jm.joints_to_mats(np.ma.masked_array(joints)),
        "blend": lambda: jm.slerp_joints(joints, np.ma.masked_array(joints), 0.5),
        "index": lambda: jm.lerp_joints(joints[None], joints[None], 0.5, index=np.ma.masked_array([0])),
        "parents": lambda: jm.forward_kinematics(joints, np.ma.masked_array([-1, 0])),
        "out": lambda: jm.quat_to_matrix(q, out=np.ma.masked_array(np.zeros((2, 3, 3)))),
        # a fully masked setting was used as its data (bits 20, degrees True), a masked order list too
        "bits": lambda: jm.pack_quats(q, np.ma.masked_array(20, mask=True)),
        "degrees": lambda: jm.euler_to_quat(masked[:, :3].filled(0), "XYZ", np.ma.masked_array(True, mask=True)),
        "order": lambda: jm.quat_to_euler(q, np.ma.masked_array(["XYZ", "ZYX"])),
    }
    for arg, call in calls.items():
        with pytest.raises(TypeError, match=rf"^{arg} must not be a masked array \(numpy.ma.MaskedArray\): .*; pass "
                                            rf"{arg}.filled\(value\) or {arg}.data$"):
            call()
    # translations(), the view to read and write them through (it returned a MaskedArray)
    with pytest.raises(TypeError, match=r"^joints must not be a masked array \(numpy.ma.MaskedArray\)"):
        jm.translations(np.ma.masked_array(joints, mask=True))
    np.testing.assert_array_equal(jm.quat_to_matrix(masked.filled(0)[:1]), jm.quat_to_matrix(q[:1]))

    class Subclass(np.ndarray):
        pass

    np.testing.assert_array_equal(jm.quat_to_matrix(q.view(Subclass)), jm.quat_to_matrix(q))  # other subclasses: read


def test_make_joints():
    joints = jm.make_joints(np.ones((2, 3, 4)), np.full((2, 3, 3), 5.0))
    assert joints.shape == (2, 3) and joints.dtype == jm.JOINT_QUAT
    assert (joints["t"][..., :3] == 5).all() and (joints["t"][..., 3] == 0).all()
    assert (jm.make_joints(np.ones((4, 4)))["t"] == 0).all()
    with pytest.raises(ValueError, match=r"q must have shape \(\.\.\., 4\), got shape \(4, 3\)"):
        jm.make_joints(np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"t must have shape \(4, 3\), got shape \(4, 4\)"):
        jm.make_joints(np.ones((4, 4)), np.ones((4, 4)))
