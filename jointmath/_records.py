"""The joint record dtypes, byte for byte the C structs in csrc/jointmath.h."""
import numpy as np

from . import _core

#: A joint as quaternion + translation, 32 bytes: ``q`` float32[4] (x, y, z, w) and
#: ``t`` float32[4] (translation x, y, z; the 4th lane is 0).
JOINT_QUAT = np.dtype([("q", np.float32, (4,)), ("t", np.float32, (4,))])

#: A joint as a 3x4 matrix, 48 bytes: ``m`` float32[3][4], the row-major rotation with the
#: translation in column 3.
JOINT_MAT = np.dtype([("m", np.float32, (3, 4))])

_core._register_dtypes(JOINT_QUAT, JOINT_MAT)


def _real_array(a, name):
    """``a`` as an ndarray of real numbers (floats, integers, bools), else a TypeError naming it."""
    try:
        array = np.asarray(a)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be an array_like of real numbers, got {type(a).__name__} ({error})") from None
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array_like of real numbers (float32, float64, integers or bools), "
                        f"got dtype {array.dtype}")
    return array


def make_joints(q, t=None):
    """A JOINT_QUAT array from quaternions ``q`` (..., 4) and optional translations ``t`` (..., 3).

    Both are array_like of real numbers, converted to float32; ``t`` defaults to zero. The result
    has shape ``q.shape[:-1]``. Raises TypeError (naming the argument) for complex, object or
    string input, ValueError for wrong shapes.
    """
    q = _real_array(q, "q")
    if q.ndim < 1 or q.shape[-1] != 4:
        raise ValueError(f"q must have shape (..., 4), got shape {q.shape}")
    joints = np.zeros(q.shape[:-1], JOINT_QUAT)
    joints["q"] = q
    if t is not None:
        t = _real_array(t, "t")
        if t.shape != q.shape[:-1] + (3,):
            raise ValueError(f"t must have shape {q.shape[:-1] + (3,)}, got shape {t.shape}")
        joints["t"][..., :3] = t
    return joints


def translations(joints):
    """The translations of a JOINT_QUAT array as a writeable (..., 3) float32 view.

    ``t`` holds a 4th padding lane, so ``joints["t"] = xyz`` does not broadcast; read and set
    translations through this view instead: ``translations(joints)[:] = xyz``. The 4th lane
    stays 0.
    """
    return checked_joints(joints)["t"][..., :3]


def checked_joints(joints, name="joints"):
    """`joints` itself if it is an ndarray of dtype JOINT_QUAT (one record of one: as a 0-d array),
    else a TypeError naming `name`."""
    if isinstance(joints, np.void) and joints.dtype == JOINT_QUAT:
        return np.asarray(joints)
    if not isinstance(joints, np.ndarray) or joints.dtype != JOINT_QUAT:
        got = f"dtype {joints.dtype}" if isinstance(joints, np.ndarray) else type(joints).__name__
        raise TypeError(f"{name} must be a numpy array of dtype jointmath.JOINT_QUAT, got {got}")
    return joints
