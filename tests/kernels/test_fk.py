"""compose_mats and forward_kinematics."""
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import jointmath as jm
from jointmath import bvh
from jointmath import reference as ref

from adversarial import SIZES, layouts, random_unit_quats

DATA = Path(__file__).resolve().parents[1] / "data"


def random_mats(rng, n):
    return jm.joints_to_mats(jm.make_joints(random_unit_quats(rng, n), rng.uniform(-10, 10, (n, 3))))


@pytest.mark.parametrize("n", SIZES)
def test_compose_matches_reference(rng, n):
    a, b = random_mats(rng, n), random_mats(rng, n)
    c = jm.compose_mats(a, b)
    assert c.dtype == jm.JOINT_MAT and c.shape == (n,)
    assert np.abs(c["m"] - ref.compose_mats(a, b)["m"]).max(initial=0) < 1e-5


def test_compose_single_record_layouts_and_out(rng):
    a, b = random_mats(rng, 37), random_mats(rng, 37)
    expected = jm.compose_mats(a, b)
    for name in ("strided", "reversed", "readonly", "unaligned"):
        va, vb = layouts(a)[name], layouts(b)[name]
        np.testing.assert_array_equal(jm.compose_mats(va, vb), expected)
    np.testing.assert_allclose(jm.compose_mats(a[5], b)["m"], ref.compose_mats(a[5], b)["m"], atol=1e-5)
    np.testing.assert_allclose(jm.compose_mats(a, b[:1])["m"], ref.compose_mats(a, b[:1])["m"], atol=1e-5)
    out = np.empty(37, jm.JOINT_MAT)
    assert jm.compose_mats(a, b, out=out) is out
    np.testing.assert_array_equal(out, expected)
    in_place = a.copy()
    jm.compose_mats(in_place, b, out=in_place)  # out aliasing an input goes through a temporary
    np.testing.assert_array_equal(in_place, expected)


def test_compose_nan_exactly_outside_the_domain_in_any_lane_and_layout(rng):
    """compose_mats' domain, sum|a| * sum|b| below FLT_MAX / 4 per record: all 12 elements NaN
    outside it (NaN, inf, or finite products no sum overflows), the product inside it, also for
    elements so large that the cheap per-block test fails (2^60) and the exact one decides; the
    other records of the block as they are alone; packed records (the test from memory) and
    strided ones (the test from the transposed records) alike, at any lane and in the tail."""
    n = 53
    a, b = random_mats(rng, n), random_mats(rng, n)
    big = np.float32(2.0 ** 60)
    fmax = np.finfo(np.float32).max
    edge = np.float32(np.sqrt(1.05 * 2.0 ** 126 / 144))
    cases = {  # (record of a, record of b, inside the domain): the rotation part 0 unless given
        0: ({(0, 3): big}, {(0, 0): 1, (1, 1): 1, (2, 2): 1}, True),          # ~2^60 * 3
        3: ({(1, 3): 2.0 ** 120}, {(0, 0): 1, (0, 3): 2.0 ** 10}, False),    # 2^130, no overflow
        4: ({(2, 2): np.nan}, {(0, 0): 1}, False),
        15: ({(0, 0): 1}, {(1, 3): np.inf}, False),
        16: ({(0, 1): fmax / 64}, {(2, 0): 1}, True),                        # FLT_MAX / 64
        17: ({(0, 1): fmax / 2}, {(1, 0): 4}, False),                        # 2 FLT_MAX
        # every element x: sum|a| * sum|b| = 144 x^2 just above FLT_MAX / 4 while each element's
        # square, x^2 = that / 144, is below 2^120 / 16: only the exact test sees it (the record
        # alone in its block on every path)
        40: (dict.fromkeys(np.ndindex(3, 4), edge), dict.fromkeys(np.ndindex(3, 4), -edge), False),
        21: (dict.fromkeys(np.ndindex(3, 4), edge / 2), dict.fromkeys(np.ndindex(3, 4), edge), True),
        31: ({(2, 3): -big}, {(1, 2): -big}, True),                          # 2^120
        30: ({(2, 3): 2.0 ** 64}, {(1, 2): 2.0 ** 64}, False),               # 2^128
        50: ({(1, 1): -np.inf}, {(1, 1): 0}, False),
        52: ({(0, 0): big, (1, 1): big}, {(0, 3): big}, True),                # tail: 2^121
    }
    for r, (in_a, in_b, _) in cases.items():
        a["m"][r], b["m"][r] = 0, 0
        for (i, j), v in in_a.items():
            a["m"][r, i, j] = v
        for (i, j), v in in_b.items():
            b["m"][r, i, j] = v
    c = jm.compose_mats(a, b)
    for r, (_, _, inside) in cases.items():
        if inside:
            scale = np.abs(a["m"][r].astype(np.float64)).sum() * np.abs(b["m"][r].astype(np.float64)).sum()
            assert np.isfinite(c["m"][r]).all(), r
            assert np.abs(c["m"][r] - ref.compose_mats(a[r], b[r])["m"]).max() <= 1e-6 * scale, r
        else:
            assert np.isnan(c["m"][r]).all(), r
    good = np.setdiff1d(np.arange(n), list(cases))
    np.testing.assert_array_equal(c["m"][good], jm.compose_mats(a[good], b[good])["m"])
    np.testing.assert_array_equal(jm.compose_mats(layouts(a)["strided"], layouts(b)["strided"])["m"], c["m"])
    np.testing.assert_array_equal(jm.compose_mats(a, layouts(b)["strided"])["m"], c["m"])


def test_compose_bad_arguments(rng):
    a = random_mats(rng, 4)
    with pytest.raises(TypeError, match="b must have dtype jointmath.JOINT_MAT"):
        jm.compose_mats(a, np.zeros(4, jm.JOINT_QUAT))
    with pytest.raises(ValueError, match=r"a and b must have the same shape .*\(4,\) and \(3,\)"):
        jm.compose_mats(a, a[:3])
    with pytest.raises(ValueError, match=r"out must have shape \(4,\)"):
        jm.compose_mats(a, a, out=np.empty(5, jm.JOINT_MAT))


def test_forward_kinematics_matches_reference_on_a_random_tree(rng):
    parents = np.array([-1, 0, 1, 1, 0, 4, -1, 6, 7])
    joints = jm.make_joints(random_unit_quats(rng, 50 * 9).reshape(50, 9, 4), rng.uniform(-5, 5, (50, 9, 3)))
    world = jm.forward_kinematics(joints, parents)
    assert world.shape == (50, 9) and world.dtype == jm.JOINT_MAT
    assert np.abs(world["m"] - ref.forward_kinematics(joints, parents)["m"]).max() < 1e-5
    assert jm.forward_kinematics(joints[:0], parents).shape == (0, 9)


@pytest.mark.parametrize("shape", ["crowd", "chain", "star", "forest"])
def test_forward_kinematics_hierarchies_of_any_width(rng, shape):
    """World transforms kept only while a child is to come (slots taken again): a crowd of
    skeletons in one list, a long chain, one root with many children, many small trees mixed;
    against the float64 reference, frames in every lane position."""
    skeleton = bvh.load(DATA / "01_01.bvh").parents.tolist()
    if shape == "crowd":
        parents = [p + 31 * k if p >= 0 else -1 for k in range(40) for p in skeleton]
    elif shape == "chain":
        parents = list(range(-1, 299))
    elif shape == "star":
        parents = [-1] + [0] * 99 + list(range(1, 100))
    else:
        parents = [-1 if j == 0 or rng.random() < 0.1 else int(rng.integers(max(0, j - 5), j)) for j in range(400)]
    n_joints = len(parents)
    q = random_unit_quats(rng, 19 * n_joints).reshape(19, n_joints, 4)
    joints = jm.make_joints(q, rng.uniform(-1, 1, (19, n_joints, 3)))
    world = jm.forward_kinematics(joints, parents)
    expected = ref.forward_kinematics(joints, parents)["m"]
    depth = 300 if shape == "chain" else 12
    np.testing.assert_allclose(world["m"], expected, rtol=0, atol=depth * 2e-6)
    np.testing.assert_array_equal(jm.forward_kinematics(joints[5], parents), world[5])


def test_forward_kinematics_memory_grows_with_the_joints_not_their_lanes(rng):
    """One frame of 200,000 joints (a crowd of skeletons, and one chain): the call's peak
    memory is its output and a few words per joint, not 12 vectors per joint (768 bytes on
    every path before: 154 MB here)."""
    skeleton = bvh.load(DATA / "01_01.bvh").parents.tolist()
    n_joints = 31 * 6452
    crowd = np.array([p + 31 * k if p >= 0 else -1 for k in range(n_joints // 31) for p in skeleton])
    joints = jm.make_joints(np.tile(np.float32([0, 0, 0, 1]), (1, n_joints, 1)))
    for parents in (crowd, np.arange(-1, n_joints - 1)):
        tracemalloc.start()
        world = jm.forward_kinematics(joints, parents)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < world.nbytes + 40 * n_joints + (1 << 20), peak
    assert world["m"][0, -1, 1, 3] == 0 and world["m"][0, -1, 0, 0] == 1


@pytest.mark.parametrize("name", ["01_01.bvh", "zxy_extra_frame.bvh"])
def test_forward_kinematics_on_real_clips(name):
    with pytest.warns() if name == "zxy_extra_frame.bvh" else np.errstate():
        clip = bvh.load(DATA / name)
    world = jm.forward_kinematics(clip.joints[::7], clip.parents)
    expected = ref.forward_kinematics(clip.joints[::7], clip.parents)
    scale = np.abs(expected["m"][..., 3]).max()
    # float32 along chains of up to ~8 joints: relative error well under 1e-6 of the clip's size
    assert np.abs(world["m"] - expected["m"]).max() < 1e-6 * scale + 1e-6


def test_forward_kinematics_bad_arguments(rng):
    joints = jm.make_joints(random_unit_quats(rng, 6).reshape(2, 3, 4))
    with pytest.raises(ValueError, match=r"parents\[1\] = 2"):
        jm.forward_kinematics(joints, [-1, 2, 0])
    with pytest.raises(ValueError, match="one index per joint"):
        jm.forward_kinematics(joints, [-1, 0])
    with pytest.raises(TypeError, match="parents must be integers"):
        jm.forward_kinematics(joints, [-1.0, 0.0, 1.0])
    with pytest.raises(TypeError, match="joints must have dtype jointmath.JOINT_QUAT, got dtype float32"):
        jm.forward_kinematics(np.zeros((2, 3, 8), np.float32), [-1, 0, 1])
    with pytest.raises(TypeError, match="joints must be a numpy array of dtype jointmath.JOINT_QUAT, got list"):
        jm.forward_kinematics([1, 2], [-1, 0])
    with pytest.raises(ValueError, match="joints must have shape"):
        jm.forward_kinematics(joints[0, 0], [])
    with pytest.raises(TypeError, match="parents must be a sequence of joint indices, got int"):
        jm.forward_kinematics(joints, 3)
    with pytest.raises(TypeError, match="parents must be integers, got dtype bool"):
        jm.forward_kinematics(joints, np.array([True, False, False]))
    with pytest.raises(ValueError, match=r"one index per joint \(3\), got shape \(1, 3\)"):
        jm.forward_kinematics(joints, [[-1, 0, 1]])
    with pytest.raises(ValueError, match=r"parents\[0\] = -2"):
        jm.forward_kinematics(joints, (-2, 0, 1))
    with pytest.raises(ValueError, match=r"parents\[0\] = 18446744073709551615"):  # beyond int64, as it is
        jm.forward_kinematics(joints, np.array([2**64 - 1, 0, 1], np.uint64))
    with pytest.raises(TypeError, match=r"parents must be integers, got bool at parents\[2\]"):
        jm.forward_kinematics(joints, [-1, 0, True])  # as a bool array is refused, not taken as 1
    for text in ("abc", b"abc"):
        with pytest.raises(TypeError, match="parents must be a sequence of joint indices, got"):
            jm.forward_kinematics(joints, text)
    # any sequence NumPy reads as integers: a range too
    np.testing.assert_array_equal(jm.forward_kinematics(joints, range(-1, 2)), jm.forward_kinematics(joints, [-1, 0, 1]))
    with pytest.raises(ValueError, match=r"parents\[1\] = 1"):
        jm.forward_kinematics(joints, [-1, 1, 0])  # a joint its own parent


def chained_kernels(joints, parents):
    """World transforms by joints_to_mats and compose_mats, joint after joint (the same path)."""
    local = jm.joints_to_mats(joints)
    world = local.copy()
    for j, p in enumerate(parents):
        if p >= 0:
            world[..., j] = jm.compose_mats(np.ascontiguousarray(world[..., p]), np.ascontiguousarray(local[..., j]))
    return world


@pytest.mark.parametrize("frames", [0, 1, 3, 4, 5, 15, 16, 17, 33])
@pytest.mark.parametrize("parents", [[-1], [-1, 0], [-1, 0, 1, 1, 0, 4, -1, 6, 7, 2, 9]])
def test_forward_kinematics_is_the_kernel_chain(rng, frames, parents):
    """Every frame count around the vector widths (frames are the lanes): bit-identical to
    joints_to_mats then compose_mats on the same path, and within float32 error of the oracle."""
    n = len(parents)
    joints = jm.make_joints(random_unit_quats(rng, frames * n).reshape(frames, n, 4),
                            rng.uniform(-5, 5, (frames, n, 3)))
    before = joints.copy()
    world = jm.forward_kinematics(joints, parents)
    np.testing.assert_array_equal(joints, before)
    assert world.shape == (frames, n) and world.dtype == jm.JOINT_MAT
    np.testing.assert_array_equal(world, chained_kernels(joints, parents))
    assert np.abs(world["m"] - ref.forward_kinematics(joints, parents)["m"]).max(initial=0) < 2e-5


def test_forward_kinematics_parents_of_any_integer_layout(rng):
    """parents of every integer dtype and byte order, unaligned or strided, list or tuple: the
    same world transforms (no misread, no misaligned typed load)."""
    parents = [-1, 0, 1, 1, 0, 4, -1, 6, 7]
    joints = jm.make_joints(random_unit_quats(rng, 21 * 9).reshape(21, 9, 4), rng.uniform(-5, 5, (21, 9, 3)))
    expected = chained_kernels(joints, parents)
    variants = [parents, tuple(parents), [np.int64(p) for p in parents], np.array(parents)[::-1].copy()[::-1]]
    for dtype in ("i1", "i2", "i4", "i8", ">i2", ">i4", ">i8", "<i8"):
        variants.append(np.array(parents, dtype))
        raw = np.zeros(9 * np.dtype(dtype).itemsize + 1, np.uint8)
        unaligned = raw[1:].view(dtype)
        unaligned[:] = parents
        variants.append(unaligned)
        strided = np.zeros(18, dtype)
        strided[::2] = parents
        variants.append(strided[::2])
    for p in variants:
        np.testing.assert_array_equal(jm.forward_kinematics(joints, p), expected, err_msg=repr(p))
    chain = [-1, 0, 1, 2, 3, 4, 5, 6, 7]  # unsigned dtypes hold no -1: a chain below one root of each kind
    roots = [-1, -1, -1, -1, -1, -1, -1, -1, -1]
    expected_chain = chained_kernels(joints, chain)
    for dtype in ("u1", "u2", ">u4", "u8", ">u8"):
        unsigned = np.array([0] + chain[1:], dtype)  # parents[0] = 0 is not before joint 0: refused
        with pytest.raises(ValueError, match=r"parents\[0\] = 0"):
            jm.forward_kinematics(joints, unsigned)
    np.testing.assert_array_equal(jm.forward_kinematics(joints, chain), expected_chain)
    np.testing.assert_array_equal(jm.forward_kinematics(joints, roots), jm.joints_to_mats(joints))


def test_forward_kinematics_empty_and_awkward_shapes(rng):
    for shape in [(3, 0), (0, 4), (0, 0), (2, 0, 5), (0,)]:
        joints = np.zeros(shape, jm.JOINT_QUAT)
        world = jm.forward_kinematics(joints, [-1] + list(range(shape[-1] - 1)) if shape[-1] else [])
        assert world.shape == shape and world.dtype == jm.JOINT_MAT
    # more axes, a non-contiguous, read-only, unaligned record array: the same as a contiguous copy
    parents = [-1, 0, 0, 2, 3]
    joints = jm.make_joints(random_unit_quats(rng, 2 * 7 * 5).reshape(2, 7, 5, 4), rng.uniform(-5, 5, (2, 7, 5, 3)))
    expected = chained_kernels(joints, parents)
    world = jm.forward_kinematics(joints, parents)
    assert world.shape == (2, 7, 5)
    np.testing.assert_array_equal(world, expected)
    for name, view in layouts(joints.reshape(14, 5)).items():
        np.testing.assert_array_equal(jm.forward_kinematics(view, parents), expected.reshape(14, 5), err_msg=name)
    np.testing.assert_array_equal(jm.forward_kinematics(joints[..., ::2], [-1, 0, 1]),
                                  chained_kernels(joints[..., ::2], [-1, 0, 1]))
    np.testing.assert_array_equal(jm.forward_kinematics(joints[1, 3], parents), expected[1, 3])
