"""Every public array function on unaligned views: the same results as on aligned copies, no
undefined behaviour (run under the README's UBSan recipe on every path: a misaligned typed read
aborts the process there).

An unaligned view is np.zeros(n * itemsize + 1, np.uint8)[1:].view(dtype): its data pointer is
one byte past an allocation, so no float, int64 or record in it sits at its natural alignment.
"""
import numpy as np
import pytest

import jointmath as jm
from jointmath import _core

from adversarial import random_unit_quats


def unaligned(a):
    """A copy of `a` whose data starts one byte past an aligned address (C-contiguous)."""
    a = np.asarray(a)
    view = np.zeros(a.size * a.dtype.itemsize + 1, np.uint8)[1:].view(a.dtype).reshape(a.shape)
    view[...] = a
    assert view.ctypes.data % 2 == 1 and not view.flags.aligned or a.dtype.alignment == 1
    return view


def assert_same(got, expected):
    if isinstance(got, tuple):
        for g, e in zip(got, expected):
            assert_same(g, e)
        return
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.names:
        for name in got.dtype.names:
            np.testing.assert_array_equal(got[name], expected[name])
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.fixture
def data(rng):
    n = 37  # more than one block on every path, with a tail
    q = random_unit_quats(rng, n)
    joints = jm.make_joints(q, rng.uniform(-1, 1, (n, 3)))
    return {
        "q": q,
        "q2": random_unit_quats(rng, n),
        "t": rng.uniform(0, 1, n).astype(np.float32),
        "angles": rng.uniform(-3, 3, (n, 3)).astype(np.float32),
        "joints": joints,
        "blend": jm.make_joints(random_unit_quats(rng, n)),
        "mats": jm.joints_to_mats(joints),
        "matrices": jm.quat_to_matrix(q),
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_array_functions(data, dtype):
    q, q2, t = data["q"].astype(dtype), data["q2"].astype(dtype), data["t"].astype(dtype)
    angles, matrices = data["angles"].astype(dtype), data["matrices"].astype(dtype)
    flips = np.where(np.arange(37) % 3 == 0, -1, 1).astype(dtype)[:, None]
    clip = (q[:36] * flips[:36]).reshape(12, 3, 4)
    calls = [
        (jm.quat_to_matrix, (q,)),
        (jm.matrix_to_quat, (matrices,)),
        (jm.slerp, (q, q2, t)),
        (jm.nlerp, (q, q2, t)),
        (jm.slerp, (q, q2[:1], 0.25)),
        (jm.euler_to_quat, (angles, "ZXY")),
        (jm.quat_to_euler, (q, "yzx")),
        (jm.pack_quats, (q,)),
        (lambda p: jm.pack_quats(p, bits=20), (q,)),
        (jm.make_continuous, (clip,)),
        (lambda c, p: jm.make_continuous(c, prev=p), (clip, clip[0])),
        (lambda c: jm.make_continuous(c, axis=1), (clip,)),
        (jm.extract_rotation, (matrices,)),
        (lambda a, q0: jm.extract_rotation(a, q0, return_iterations=True), (matrices, q)),
        (jm.make_joints, (q, angles)),
    ]
    for func, args in calls:
        assert_same(func(*(unaligned(a) if isinstance(a, np.ndarray) else a for a in args)), func(*args))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_array_out(data, dtype):
    q, q2, t = data["q"].astype(dtype), data["q2"].astype(dtype), data["t"].astype(dtype)
    for func, args, shape in [
        (jm.quat_to_matrix, (q,), (37, 3, 3)),
        (jm.matrix_to_quat, (jm.quat_to_matrix(q),), (37, 4)),
        (jm.slerp, (q, q2, t), (37, 4)),
        (jm.nlerp, (q, q2, 0.5), (37, 4)),
        (jm.extract_rotation, (jm.quat_to_matrix(q),), (37, 4)),
        (jm.euler_to_quat, (data["angles"].astype(dtype), "ZXY"), (37, 4)),
        (jm.quat_to_euler, (q, "yzx"), (37, 3)),
    ]:
        out = unaligned(np.zeros(shape, dtype))
        assert func(*args, out=out) is out
        assert_same(out, func(*args))


def test_codes(data):
    for bits in (10, 20):
        codes = jm.pack_quats(data["q"], bits=bits)
        assert_same(jm.unpack_quats(unaligned(codes)), jm.unpack_quats(codes))
        assert_same(jm.unpack_quats(unaligned(codes.astype(codes.dtype.newbyteorder()))), jm.unpack_quats(codes))


def test_record_functions(data):
    joints, blend, mats = data["joints"], data["blend"], data["mats"]
    index = np.array([1, 4, 5, 30], np.intp)
    calls = [
        (jm.joints_to_mats, (joints,)),
        (jm.mats_to_joints, (mats,)),
        (jm.compose_mats, (mats, mats[::-1].copy())),
        (jm.slerp_joints, (joints, blend, 0.3)),
        (jm.lerp_joints, (joints, blend, 0.3)),
        (lambda a, b, i: jm.slerp_joints(a, b, 0.3, index=i), (joints, blend, index)),
        (lambda a, b, i: jm.lerp_joints(a, b, 0.7, index=i), (joints, blend, index)),
        (jm.pack_joints, (joints,)),
        (lambda j: jm.pack_joints(j, bits=20), (joints,)),
        (jm.unpack_joints, (jm.pack_joints(joints),)),
        (jm.unpack_joints, (jm.pack_joints(joints, bits=20),)),
        (jm.extract_rotation, (mats,)),
    ]
    for func, args in calls:
        assert_same(func(*(unaligned(a) for a in args)), func(*args))
    for func, args in [(jm.joints_to_mats, (joints,)), (jm.slerp_joints, (joints, blend, 0.5))]:
        out = unaligned(np.zeros(joints.shape, func(*args).dtype))
        assert func(*args, out=out) is out
        assert_same(out, func(*args))
    # a byte-swapped index is read by value
    swapped = index.astype(index.dtype.newbyteorder())
    assert_same(jm.slerp_joints(joints, blend, 0.3, index=unaligned(swapped)), jm.slerp_joints(joints, blend, 0.3, index=index))


def test_mocap_functions(rng):
    frames, n_joints = 9, 4
    joints = jm.make_joints(random_unit_quats(rng, frames * n_joints).reshape(frames, n_joints, 4),
                            rng.uniform(-1, 1, (frames, n_joints, 3)))
    parents = np.array([-1, 0, 1, 1], np.int64)
    assert_same(jm.forward_kinematics(unaligned(joints), unaligned(parents)), jm.forward_kinematics(joints, parents))
    # the command's float64 world positions (jointmath._job)
    sites, offsets = np.array([2, 3]), rng.uniform(-1, 1, (2, 3))
    assert_same(_core._positions64(unaligned(joints), unaligned(parents), unaligned(sites), unaligned(offsets)),
                _core._positions64(joints, parents, sites, offsets))
    assert_same(jm.resample_joints(unaligned(joints), 1 / 120, 50), jm.resample_joints(joints, 1 / 120, 50))
