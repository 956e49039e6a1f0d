"""compose_mats, forward_kinematics, make_continuous and resampling."""
from pathlib import Path

import numpy as np
import pytest

import jointmath as jm
from jointmath import bvh
from jointmath import reference as ref

from adversarial import SIZES, layouts, random_unit_quats

DATA = Path(__file__).resolve().parent / "data"


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
    with pytest.raises(TypeError, match="joints must be a numpy array of dtype jointmath.JOINT_QUAT"):
        jm.forward_kinematics(np.zeros((2, 3, 8), np.float32), [-1, 0, 1])


def test_make_continuous(rng):
    q = random_unit_quats(rng, 200 * 5).reshape(200, 5, 4)
    # a smooth motion, then random sign flips as exporters write them
    smooth = ref.slerp(np.repeat(q[:1], 200, 0), np.repeat(q[1:2], 200, 0), np.linspace(0, 1, 200)[:, None])
    flips = np.where(rng.random((200, 5)) < 0.5, -1.0, 1.0)[..., None]
    flipped = (smooth * flips).astype(np.float32)
    before = flipped.copy()
    fixed = jm.make_continuous(flipped)
    np.testing.assert_array_equal(flipped, before)
    assert (np.sum(fixed[1:] * fixed[:-1], axis=-1) >= 0).all()
    np.testing.assert_array_equal(np.abs(fixed), np.abs(flipped))
    np.testing.assert_array_equal(fixed[0], flipped[0])
    # in chunks with prev = the last frame of the previous chunk: the same answer
    first = jm.make_continuous(flipped[:77])
    second = jm.make_continuous(flipped[77:], prev=first[-1])
    np.testing.assert_array_equal(np.concatenate([first, second]), fixed)
    # along another axis
    np.testing.assert_array_equal(jm.make_continuous(np.swapaxes(flipped, 0, 1), axis=1), np.swapaxes(fixed, 0, 1))
    with pytest.raises(ValueError, match="prev must have shape"):
        jm.make_continuous(flipped, prev=flipped[0, 0])
    for axis in (2, -1, 3, -4):  # the component axis, or no axis of q
        with pytest.raises(ValueError, match=rf"axis must name a leading axis of q .*got axis={axis} "):
            jm.make_continuous(flipped, axis=axis)
    # float64 runs its own kernel: the same signs
    np.testing.assert_array_equal(jm.make_continuous(flipped.astype(np.float64)), fixed)


def test_resample_joints_exact_ratios(rng):
    joints = jm.make_joints(random_unit_quats(rng, 121 * 4).reshape(121, 4, 4), rng.uniform(-1, 1, (121, 4, 3)))
    joints["q"] = jm.make_continuous(joints["q"])
    down = jm.resample_joints(joints, 1 / 120, 30)
    np.testing.assert_array_equal(down, joints[::4])
    up = jm.resample_joints(joints, 1 / 120, 240)
    assert up.shape == (241, 4)
    np.testing.assert_array_equal(up[::2], joints)
    np.testing.assert_allclose(up["q"][1::2], ref.slerp(joints["q"][:-1], joints["q"][1:], 0.5), atol=5e-7)
    np.testing.assert_allclose(up["t"][1::2], (joints["t"][:-1] + joints["t"][1:]) / 2, atol=1e-6)
    odd = jm.resample_joints(joints, 1 / 120, 100)  # 120 -> 100: fractions 0, .2, .4, .6, .8
    assert odd.shape == (101, 4)
    np.testing.assert_allclose(odd["q"][1], ref.slerp(joints["q"][1], joints["q"][2], 0.2), atol=5e-7)


def test_resample_bad_arguments(rng):
    joints = jm.make_joints(random_unit_quats(rng, 8).reshape(4, 2, 4))
    with pytest.raises(ValueError, match="fps must be a positive number"):
        jm.resample_joints(joints, 0.01, 0)
    with pytest.raises(ValueError, match="frame_time must be a positive number"):
        jm.resample_joints(joints, -1, 30)
    with pytest.raises(ValueError, match="at least 2 frames"):
        jm.resample_joints(joints[:1], 0.01, 30)
    with pytest.raises(ValueError, match=r"shape \(frames, joints\)"):
        jm.resample_joints(joints[0], 0.01, 30)


def test_resample_clip_saves_and_reloads(isa, tmp_path):
    if isa != jm.available_isas()[-1]:
        pytest.skip("file handling does not depend on the ISA path: run once")
    clip = bvh.load(DATA / "01_01.bvh")
    for fps in (30, 100, 240):
        new = bvh.resample(clip, fps)
        assert new.frame_time == 1 / fps
        assert new.n_frames == int(np.floor((clip.n_frames - 1) * clip.frame_time * fps + 1e-9)) + 1
        bvh.save(new, tmp_path / "r.bvh")
        again = bvh.load(tmp_path / "r.bvh")
        assert ref.angle_between(again.joints["q"], new.joints["q"]).max() < 2e-6
        np.testing.assert_allclose(again.joints["t"], new.joints["t"], atol=1e-4)
