"""The public names: the record dtypes as the C structs lay them out, functions that pickle by
reference, and jointmath.reference's angle_between."""
import pickle

import numpy as np
import pytest

import jointmath as jm


def test_record_dtypes_match_the_c_structs():
    assert jm.JOINT_QUAT.itemsize == 32 and jm.JOINT_MAT.itemsize == 48
    assert jm.JOINT_QUAT.fields["q"][1] == 0 and jm.JOINT_QUAT.fields["t"][1] == 16
    assert jm.JOINT_QUAT["q"] == np.dtype((np.float32, (4,)))
    assert jm.JOINT_MAT["m"] == np.dtype((np.float32, (3, 4)))


def test_functions_pickle_by_reference():
    """Every public function (and class) travels to worker processes by name."""
    public = [getattr(jm, name) for name in jm.__all__ if callable(getattr(jm, name))]
    assert len(public) >= 23
    for func in public:
        assert pickle.loads(pickle.dumps(func)) is func


def test_angle_between_is_the_rotation_angle():
    Rotation = pytest.importorskip("scipy.spatial.transform").Rotation
    rng = np.random.default_rng(3)
    q0 = Rotation.random(200, random_state=rng)
    q1 = Rotation.random(200, random_state=rng)
    expected = (q0.inv() * q1).magnitude()
    got = jm.reference.angle_between(q0.as_quat(), -q1.as_quat())
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert jm.reference.angle_between(np.array([0, 0, 0, 1.0]), np.array([0, 0, np.sin(1e-9), np.cos(1e-9)])) == \
        pytest.approx(2e-9, rel=1e-6)
