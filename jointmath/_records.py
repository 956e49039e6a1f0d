"""The joint record dtypes (JOINT_QUAT and JOINT_MAT byte for byte the C structs in csrc/jointmath.h;
the packed joints of pack_joints) and the views on them."""
import numpy as np

from . import _core

#: A joint as quaternion + translation, 32 bytes: ``q`` float32[4] (x, y, z, w) and
#: ``t`` float32[4] (translation x, y, z; the 4th lane is 0).
JOINT_QUAT = np.dtype([("q", np.float32, (4,)), ("t", np.float32, (4,))])

#: A joint as a 3x4 matrix, 48 bytes: ``m`` float32[3][4], the row-major rotation with the
#: translation in column 3.
JOINT_MAT = np.dtype([("m", np.float32, (3, 4))])

#: A packed joint, 16 bytes: ``q`` uint32 (the 32-bit code of pack_quats, bits=10) and
#: ``t`` float32[3] (the translation).
PACKED_JOINT = np.dtype([("q", np.uint32), ("t", np.float32, (3,))])

#: A packed joint with the 64-bit code (bits=20), 20 bytes: ``q`` uint64, ``t`` float32[3].
PACKED_JOINT64 = np.dtype([("q", np.uint64), ("t", np.float32, (3,))])

_core._register_dtypes(JOINT_QUAT, JOINT_MAT, PACKED_JOINT, PACKED_JOINT64)

#: JOINT_QUAT records from quaternions and translations: jointmath/_convert.c (the docstring there).
make_joints = _core.make_joints


def translations(joints):
    """The translations of a JOINT_QUAT array as a writeable float32 view.

    ``t`` holds a 4th padding lane, so ``joints["t"] = xyz`` does not broadcast; read and set
    translations through this view instead. The 4th lane stays 0.

    Parameters
    ----------
    joints : ndarray of JOINT_QUAT
        Any shape, or one record.

    Returns
    -------
    ndarray of float32, shape (..., 3)
        A view of ``joints``' memory: writing it writes the translations.

    Raises
    ------
    TypeError
        For anything but an ndarray of JOINT_QUAT (a masked array included).

    See Also
    --------
    make_joints

    Examples
    --------
    >>> import jointmath as jm
    >>> joints = jm.make_joints([[0, 0, 0, 1], [0, 0, 0, 1]])
    >>> jm.translations(joints)[:] = [[1, 2, 3], [4, 5, 6]]
    >>> joints["t"]
    array([[1., 2., 3., 0.],
           [4., 5., 6., 0.]], dtype=float32)
    """
    return checked_joints(joints)["t"][..., :3]


def refuse_masked(value, name):
    """A TypeError for a masked array: its mask would be lost and the masked values used."""
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"{name} must not be a masked array (numpy.ma.MaskedArray): jointmath ignores masks, so the "
                        f"masked values would be used and the mask lost; pass {name}.filled(value) or {name}.data")


def checked_joints(joints, name="joints"):
    """`joints` itself if it is an ndarray of dtype JOINT_QUAT (one record of one: as a 0-d array),
    else a TypeError naming `name` (a masked array too)."""
    refuse_masked(joints, name)
    if isinstance(joints, np.void) and joints.dtype == JOINT_QUAT:
        return np.asarray(joints)
    if not isinstance(joints, np.ndarray) or joints.dtype != JOINT_QUAT:
        got = f"dtype {joints.dtype}" if isinstance(joints, np.ndarray) else type(joints).__name__
        raise TypeError(f"{name} must be a numpy array of dtype jointmath.JOINT_QUAT, got {got}")
    return joints
