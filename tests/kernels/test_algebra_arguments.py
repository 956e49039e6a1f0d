"""The rotation algebra's arguments and edge cases on every path: sizes around every vector width,
awkward layouts, broadcasting, dtypes, out=, flags, errors naming their argument, inputs never
modified, zero / NaN / degenerate records (accuracy: test_algebra.py)."""

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import SIZES, layouts, random_unit_quats

# name -> (function, the operands' trailing sizes, flag name or None, the result's core shape)
FUNCTIONS = {
    "quat_multiply": (jm.quat_multiply, (4, 4), None, (4,)),
    "quat_conjugate": (jm.quat_conjugate, (4,), None, (4,)),
    "quat_inverse": (jm.quat_inverse, (4,), None, (4,)),
    "rotate_vectors": (jm.rotate_vectors, (4, 3), "inverse", (3,)),
    "quat_to_rotvec": (jm.quat_to_rotvec, (4,), "degrees", (3,)),
    "rotvec_to_quat": (jm.rotvec_to_quat, (3,), "degrees", (4,)),
    "quat_angle": (jm.quat_angle, (4,), None, ()),
    "quat_angle_between": (jm.quat_angle_between, (4, 4), None, ()),
    "swing_twist": (jm.swing_twist, (4, 3), None, (4,)),
    "quat_to_6d": (jm.quat_to_6d, (4,), None, (6,)),
    "sixd_to_quat": (jm.sixd_to_quat, (6,), None, (4,)),
}
NAMES = sorted(FUNCTIONS)
ARG_NAMES = {"quat_multiply": ("p", "q"), "quat_angle_between": ("p", "q"), "rotate_vectors": ("q", "v"),
             "swing_twist": ("q", "axis"), "rotvec_to_quat": ("v",), "sixd_to_quat": ("x",)}


def operands(rng, name, n, dtype=np.float32):
    """n valid records per operand of `name`"""
    ops = []
    for size in FUNCTIONS[name][1]:
        if size == 4:
            ops.append(random_unit_quats(rng, n, dtype))
        else:
            ops.append((rng.standard_normal((n, size)) * 2).astype(dtype))
    return ops


def call(name, *args, **kwargs):
    """the function's result as a tuple of arrays (swing_twist returns two)"""
    result = FUNCTIONS[name][0](*args, **kwargs)
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_size_gives_the_same_records(rng, name, dtype):
    """0, 1, W - 1, W, W + 1 ... records: each record's result is the one of the long call (no lane
    depends on its neighbours, no tail differs)"""
    ops = operands(rng, name, max(SIZES), dtype)
    full = call(name, *ops)
    for n in SIZES:
        part = call(name, *(op[:n] for op in ops))
        for a, b in zip(part, full):
            assert a.shape == (n,) + FUNCTIONS[name][3] and a.dtype == dtype
            np.testing.assert_array_equal(a, b[:n])


@pytest.mark.parametrize("name", NAMES)
def test_layouts_and_inputs_never_modified(rng, name):
    ops = operands(rng, name, 37)
    want = call(name, *ops)
    for kind in layouts(ops[0]):
        given = [layouts(op)[kind] for op in ops]
        before = [g.copy() for g in given]
        got = call(name, *given)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b, err_msg=kind)
        for g, b in zip(given, before):
            np.testing.assert_array_equal(g, b)


@pytest.mark.parametrize("name", NAMES)
def test_dtypes_follow_numpy(rng, name):
    ops = operands(rng, name, 5, np.float64)
    assert all(r.dtype == np.float64 for r in call(name, *ops))
    assert all(r.dtype == np.float32 for r in call(name, *(op.astype(np.float16) for op in ops)))
    assert all(r.dtype == np.float64 for r in call(name, *(np.round(op * 10).astype(np.int16) for op in ops)))
    assert all(r.dtype == np.float64 for r in call(name, *(op.tolist() for op in ops)))
    swapped = [op.astype(op.dtype.newbyteorder()) for op in ops]
    for a, b in zip(call(name, *swapped), call(name, *ops)):
        np.testing.assert_array_equal(a, b)
    if len(ops) == 2:  # mixed: float64
        assert all(r.dtype == np.float64 for r in call(name, ops[0].astype(np.float32), ops[1]))
        assert all(r.dtype == np.float64 for r in call(name, ops[0], ops[1].astype(np.float32)))


@pytest.mark.parametrize("name", [n for n in NAMES if len(FUNCTIONS[n][1]) == 2])
def test_two_operands_broadcast(rng, name):
    a, b = operands(rng, name, 6)
    a = a[:3].reshape(3, 1, -1)
    got = call(name, a, b)
    ba, bb = np.broadcast_arrays(a[..., :1], b[..., :1])
    want = call(name, np.broadcast_to(a, ba.shape[:-1] + a.shape[-1:]).copy(),
                np.broadcast_to(b, bb.shape[:-1] + b.shape[-1:]).copy())
    for x, y in zip(got, want):
        assert x.shape == (3, 6) + FUNCTIONS[name][3]
        np.testing.assert_array_equal(x, y)
    # one record against many, either way
    for x, y in zip(call(name, a[0, 0], b), call(name, np.repeat(a[0], 6, 0), b)):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(call(name, a[:, 0], b[0]), call(name, a[:, 0], np.repeat(b[:1], 3, 0))):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="do not broadcast"):
        call(name, a[:, 0], b[:4])
    # long runs (every block shape of the kernels) against one record repeated, both ways
    a, b = operands(rng, name, 1000)
    for x, y in zip(call(name, a, b[7]), call(name, a, np.repeat(b[7:8], 1000, 0))):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(call(name, a[7], b), call(name, np.repeat(a[7:8], 1000, 0), b)):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", NAMES)
def test_out(rng, name):
    ops = operands(rng, name, 20)
    want = call(name, *ops)
    core = FUNCTIONS[name][3]
    if name == "swing_twist":
        out = (np.empty((20, 4), np.float32), np.empty((20, 4), np.float32))
        got = jm.swing_twist(*ops, out=out)
        assert got[0] is out[0] and got[1] is out[1]
        with pytest.raises(TypeError, match="out must be a tuple of two arrays"):
            jm.swing_twist(*ops, out=out[0])
    else:
        out = np.empty((20,) + core, np.float32)
        got = call(name, *ops, out=out)
        assert got[0] is out
        got = (out,)
        with pytest.raises(TypeError, match="float32"):
            call(name, *ops, out=np.empty((20,) + core, np.float64))
        with pytest.raises(ValueError):
            call(name, *ops, out=np.empty((21,) + core, np.float32))
        readonly = np.empty((20,) + core, np.float32)
        readonly.flags.writeable = False
        with pytest.raises(ValueError):
            call(name, *ops, out=readonly)
        strided = np.empty((40,) + core, np.float32)[::2]
        assert call(name, *ops, out=strided)[0] is strided
        np.testing.assert_array_equal(strided, want[0])
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["quat_multiply", "quat_conjugate", "quat_inverse", "quat_angle_between"])
def test_out_may_be_an_input(rng, name):
    ops = operands(rng, name, 50, np.float64)
    if name == "quat_angle_between":
        return  # a scalar result has no room in an input
    want = call(name, *ops)[0]
    for k in range(len(ops)):
        given = [op.copy() for op in ops]
        assert call(name, *given, out=given[k])[0] is given[k]
        np.testing.assert_array_equal(given[k], want)


@pytest.mark.parametrize("name", [n for n in NAMES if FUNCTIONS[n][2]])
def test_flags_must_be_bool(rng, name):
    ops = operands(rng, name, 3)
    flag = FUNCTIONS[name][2]
    a = call(name, *ops, **{flag: True})[0]
    np.testing.assert_array_equal(call(name, *ops, **{flag: np.True_})[0], a)
    np.testing.assert_array_equal(call(name, *ops, **{flag: np.bool_(False)})[0], call(name, *ops)[0])
    for bad in (1, 0, "yes", None, 1.0, np.array([True])):
        with pytest.raises(TypeError, match=f"{flag} must be a bool"):
            call(name, *ops, **{flag: bad})


@pytest.mark.parametrize("name", NAMES)
def test_errors_name_the_argument(rng, name):
    ops = operands(rng, name, 3)
    for k, arg in enumerate(ARG_NAMES.get(name, ("q",))):
        wrong = list(ops)
        wrong[k] = np.zeros((3, 5))
        with pytest.raises(ValueError, match=rf"{arg} must have shape \(\.\.\., {ops[k].shape[-1]}\)"):
            call(name, *wrong)
        wrong[k] = ops[k].astype(np.complex64)
        with pytest.raises(TypeError, match=arg):
            call(name, *wrong)
        wrong[k] = "abc"
        with pytest.raises(TypeError, match=arg):
            call(name, *wrong)
    with pytest.raises(TypeError, match="missing required argument"):
        FUNCTIONS[name][0]()
    with pytest.raises(TypeError, match="unexpected keyword"):
        call(name, *ops, bogus=1)


def test_one_record_gives_a_scalar_angle():
    a = jm.quat_angle([0.0, 0.0, 1.0, 0.0])
    assert isinstance(a, np.float64) and a == np.pi
    assert isinstance(jm.quat_angle(np.float32([0, 0, 0, 1])), np.float32)
    assert isinstance(jm.quat_angle_between([0, 0, 0, 1.0], [0, 0, 1.0, 0]), np.float64)
    out = np.empty((), np.float64)
    assert jm.quat_angle([0, 0, 0, 1.0], out=out) is out
    assert jm.quat_multiply([0, 0, 0, 1], [0, 0, 1, 0]).shape == (4,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zero_and_nan_records(rng, dtype):
    """a zero quaternion: NaN (quat_conjugate: zeros), on every path; NaN stays in its own record"""
    q = random_unit_quats(rng, 40, dtype)
    q[5] = 0
    q[17] = [np.nan, 0, 0, 1]
    v = rng.standard_normal((40, 3)).astype(dtype)
    bad = np.zeros(40, bool)
    bad[[5, 17]] = True
    assert np.array_equal(jm.quat_conjugate(q)[5], np.array([-0.0, -0.0, -0.0, 0.0], dtype))
    for result in (jm.quat_inverse(q), jm.rotate_vectors(q, v), jm.quat_to_rotvec(q), jm.quat_to_6d(q),
                   jm.quat_angle(q)[:, None], jm.quat_angle_between(q, q[::-1])[:, None],
                   jm.quat_angle_between(q[::-1], q)[:, None], *jm.swing_twist(q, v)):
        nan = np.isnan(result).all(axis=1)
        assert np.array_equal(nan | bad | bad[::-1], bad | bad[::-1]) and nan[bad].all()
        assert np.isfinite(result[~(bad | bad[::-1])]).all()
    # an infinite component, a zero or infinite axis
    assert np.isnan(jm.quat_inverse(np.array([np.inf, 0, 0, 1], dtype))).all()
    assert np.isnan(jm.quat_angle(np.array([np.inf, 0, 0, 1], dtype)))
    for axis in ([0, 0, 0], [np.inf, 0, 0]):
        assert all(np.isnan(x).all() for x in jm.swing_twist(q[0], np.array(axis, dtype)))
    # rotation vectors: inf and NaN give NaN
    assert np.isnan(jm.rotvec_to_quat(np.array([[np.inf, 0, 0], [np.nan, 0, 0]], dtype))).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_swing_twist_singular_case(dtype):
    """q a half turn about an axis perpendicular to the twist axis: the identity twist, swing = q"""
    for q, axis in (([1, 0, 0, 0], [0, 0, 1]), ([0, 3, 4, 0], [5, 0, 0]), ([0.6, -0.8, 0, -0.0], [0, 0, 2])):
        q = np.array(q, dtype)
        swing, twist = jm.swing_twist(q, np.array(axis, dtype))
        assert np.array_equal(twist, [0, 0, 0, 1])
        np.testing.assert_allclose(swing, q / np.linalg.norm(q), atol=1e-7)
        s, t = ref.swing_twist(q, axis)
        np.testing.assert_array_equal(t, [0, 0, 0, 1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sixd_degenerate_input_is_nan(dtype):
    for x in ([0, 0, 0, 0, 1, 0], [1, 2, 3, 2, 4, 6], [1, 0, 0, 0, 0, 0], [np.nan, 0, 0, 0, 1, 0]):
        assert np.isnan(jm.sixd_to_quat(np.array(x, dtype))).all()


def test_antipodal_and_identical_pairs(rng):
    for dtype in (np.float32, np.float64):
        q = random_unit_quats(rng, 100, dtype)
        assert np.all(jm.quat_angle_between(q, q) == 0)
        assert np.all(jm.quat_angle_between(q, -q) == 0)
        np.testing.assert_allclose(jm.quat_multiply(q, jm.quat_conjugate(q)), np.tile([0, 0, 0, 1], (100, 1)),
                                   atol=5e-7)
