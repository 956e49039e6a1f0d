"""Arguments read as NumPy and scipy read them: flags are bools, a fraction too large for a float
is refused naming t without NumPy's warnings, and the messages say what was passed."""
import warnings

import numpy as np
import pytest

import jointmath as jm
from jointmath import bvh, data

NOT_BOOLS = ["no", "yes", "", 1, 0, 1.0, None, np.int64(1), np.array(True), [True]]


def flag_calls():
    """(name of the flag, call taking its value) for every bool flag of the public API."""
    angles = np.array([[10.0, 20.0, 30.0]])
    q = jm.euler_to_quat(angles, "ZYX")
    a = np.eye(3, dtype=np.float32)
    return [
        ("degrees", lambda flag: jm.euler_to_quat(angles, "ZYX", degrees=flag)),
        ("degrees", lambda flag: jm.quat_to_euler(q, "ZYX", degrees=flag)),
        ("degrees", lambda flag: jm.euler_to_quat(angles, "ZYX", flag)),
        ("return_iterations", lambda flag: jm.extract_rotation(a, return_iterations=flag)),
    ]


@pytest.mark.parametrize("case", range(len(flag_calls())))
def test_flags_are_bools(case):
    name, call = flag_calls()[case]
    for value in NOT_BOOLS:
        with pytest.raises(TypeError, match=rf"^{name} must be a bool \(True or False\), got "):
            call(value)
    for value, same in ((np.True_, True), (np.False_, False)):
        expected, given = call(same), call(value)
        if isinstance(expected, tuple):
            expected, given = expected[0], given[0]
        np.testing.assert_array_equal(given, expected)


def test_clip_positions_end_sites_is_a_bool():
    clip = bvh.load(data.sample_clip_path())
    short = clip.copy() if hasattr(clip, "copy") else clip
    for value in ("no", 1, None):
        with pytest.raises(TypeError, match=r"^end_sites must be a bool \(True or False\), got "):
            short.positions(end_sites=value)
    assert short.positions(end_sites=np.False_).shape[1] == clip.n_joints


@pytest.mark.parametrize("blend", [jm.slerp, jm.nlerp])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_fraction_beyond_float_is_refused_naming_t(blend, dtype):
    q0 = np.array([0, 0, 0, 1], dtype)
    q1 = np.array([0, 0, 1, 0], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for t in (10**400, -10**400):
            with pytest.raises(ValueError, match=r"^t must be in \[0, 1\], got an int too large for a float"):
                blend(q0, q1, t)
        for t in (np.float64(1e39), [1e39], np.array([0.5, 1e39]), np.float64(-1e39)):
            with pytest.raises(ValueError, match=r"^t must be in \[0, 1\], got -?1e\+39"):
                blend(q0, q1, t)


@pytest.mark.parametrize("blend", [jm.slerp_joints, jm.lerp_joints])
def test_joint_blends_refuse_a_huge_fraction_without_warnings(blend):
    joints = np.zeros(3, jm.JOINT_QUAT)
    joints["q"][:, 3] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for t in (10**39, np.float64(1e39), 10**400, -10**39):
            with pytest.raises(ValueError, match=r"^t must be in \[0, 1\], got "):
                blend(joints, joints, t=t)


def test_unpack_quats_says_what_was_passed():
    with pytest.raises(TypeError, match=r"got a list of int \(NumPy reads it as int64\)"):
        jm.unpack_quats([123])
    with pytest.raises(TypeError, match=r"got a tuple of float "):
        jm.unpack_quats((1.5, 2.0))
    with pytest.raises(TypeError, match=r"got an array of dtype int32"):
        jm.unpack_quats(np.array([123], np.int32))
    with pytest.raises(TypeError, match=r"got int \(NumPy reads it as int64\)"):
        jm.unpack_quats(123)


def test_make_continuous_names_the_allowed_axes():
    with pytest.raises(ValueError, match=r"^axis must be 0 or -2 \(the time axis\) for q of shape \(5, 4\), "
                                         r"got axis=-1; the last axis \(-1\) holds the 4 components"):
        jm.make_continuous(np.zeros((5, 4)), axis=-1)
    with pytest.raises(ValueError, match=r"^axis must be 0, 1, -3 or -2 .*got axis=2;"):
        jm.make_continuous(np.zeros((5, 2, 4)), axis=2)
    with pytest.raises(ValueError, match=r"^axis must be one of 0, 1, \.\.\., 2 or -4, \.\.\., -2 .*got axis=-1;"):
        jm.make_continuous(np.zeros((5, 2, 3, 4)), axis=-1)
