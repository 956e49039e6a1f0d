"""resample_joints: a clip's joints on a new time grid (slerp of the rotations, lerp of the translations)."""
import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import random_unit_quats


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
    # frames on opposite hemispheres (not made continuous): every new frame at a source frame is
    # that frame, the last one too (it was the end of the shortest arc from the frame before, -q)
    joints["q"][1::2] *= -1
    np.testing.assert_array_equal(jm.resample_joints(joints, 1 / 120, 30), joints[::4])
    np.testing.assert_array_equal(jm.resample_joints(joints, 1 / 120, 120), joints)


def test_resample_a_pose(rng):
    """One frame (a pose, no duration) resamples to itself at any rate, from any layout."""
    joints = jm.make_joints(random_unit_quats(rng, 6).reshape(3, 2, 4), rng.normal(size=(3, 2, 3)))
    for pose in (joints[:1], joints[1:2, ::-1], joints[2::3]):
        for fps in (1, 30, 120.5, 1e6):
            new = jm.resample_joints(pose, 1 / 120, fps)
            assert new.shape == (1, 2) and new.dtype == jm.JOINT_QUAT
            assert new.tobytes() == pose.tobytes()
            assert not np.shares_memory(new, joints)


def test_resample_bad_arguments(rng):
    joints = jm.make_joints(random_unit_quats(rng, 8).reshape(4, 2, 4))
    with pytest.raises(ValueError, match="fps must be a positive number"):
        jm.resample_joints(joints, 0.01, 0)
    with pytest.raises(ValueError, match="frame_time must be a positive number"):
        jm.resample_joints(joints, -1, 30)
    with pytest.raises(ValueError, match="at least 1 frame, got 0"):
        jm.resample_joints(joints[:0], 0.01, 30)
    with pytest.raises(ValueError, match=r"shape \(frames, joints\)"):
        jm.resample_joints(joints[0], 0.01, 30)


def test_resample_argument_types_and_sizes(rng):
    joints = jm.make_joints(random_unit_quats(rng, 8).reshape(4, 2, 4))
    with pytest.raises(TypeError, match="frame_time must be a positive number of seconds per source frame, got bool"):
        jm.resample_joints(joints, True, 30)  # not 1 s
    with pytest.raises(TypeError, match="fps must be a positive number of frames per second, got bool"):
        jm.resample_joints(joints, 0.01, True)
    with pytest.raises(TypeError, match="fps must be a positive number of frames per second, got str"):
        jm.resample_joints(joints, 0.01, "30")
    with pytest.raises(ValueError, match="fps must be a positive number"):
        jm.resample_joints(joints, 0.01, float("nan"))
    # far more frames than any memory: a ValueError saying how many frames and bytes (the result's
    # 2 joints x 32 bytes a frame: nothing else is allocated), no MemoryError
    with pytest.raises(ValueError, match=r"fps=10000000000000.0 at frame_time=0.01 makes 300,000,000,001 frames "
                                         r"\(19,200,000,000,064 bytes\)"):
        jm.resample_joints(joints, 0.01, 1e13)
    with pytest.raises(ValueError, match=r"makes 3e\+304 frames \(1.92e\+306 bytes\)"):
        jm.resample_joints(joints, 0.01, 1e306)
    with pytest.raises(ValueError, match="bytes"):
        jm.resample_joints(joints, 1e300, 1e300)  # the duration times fps overflows to inf
    same_rate = jm.resample_joints(joints, np.float64(0.5), np.int64(2))  # NumPy numbers are numbers
    assert same_rate.shape == joints.shape
    np.testing.assert_array_equal(np.abs(same_rate["q"]), np.abs(joints["q"]))
