"""Quaternions packed into 32 (or 64) bits, and joint records packed into 16 (or 20) bytes.

The bit layout is documented in csrc/pack.c and in pack_quats below.
"""
import numpy as np

from ._core import pack_quats, unpack_quats
from ._records import JOINT_QUAT, checked_joints

#: A packed joint, 16 bytes: ``q`` uint32 (the 32-bit code of pack_quats, bits=10) and
#: ``t`` float32[3] (the translation).
PACKED_JOINT = np.dtype([("q", np.uint32), ("t", np.float32, (3,))])

#: A packed joint with the 64-bit code (bits=20), 20 bytes: ``q`` uint64, ``t`` float32[3].
PACKED_JOINT64 = np.dtype([("q", np.uint64), ("t", np.float32, (3,))])

_PACKED_JOINTS = {10: PACKED_JOINT, 20: PACKED_JOINT64}


def _checked_bits(bits):
    if type(bits) is int and (bits == 10 or bits == 20):
        return bits
    if isinstance(bits, np.integer) and int(bits) in (10, 20):
        return int(bits)
    raise ValueError(f"bits must be 10 (uint32 codes) or 20 (uint64 codes), got {bits!r}")


def pack_joints(joints, bits=10):
    """Pack JOINT_QUAT records for compact storage.

    joints: array of dtype JOINT_QUAT, any shape, or one record of one (a 0-d result).
    bits: 10 (default) or 20.
    Returns an array of the same shape of dtype PACKED_JOINT (16 bytes: ``q`` uint32 code,
    ``t`` float32[3] translation) for bits=10, or PACKED_JOINT64 (20 bytes, uint64 code) for
    bits=20. The rotation is packed as by pack_quats (same errors for zero or non-finite q);
    the translation is kept exactly.
    """
    joints = checked_joints(joints)
    bits = _checked_bits(bits)
    packed = np.empty(joints.shape, _PACKED_JOINTS[bits])
    packed["q"] = pack_quats(joints["q"], bits)
    packed["t"] = joints["t"][..., :3]
    return packed


def unpack_joints(packed):
    """JOINT_QUAT records from pack_joints' output (PACKED_JOINT or PACKED_JOINT64: an array of
    any shape, or one record of one), same shape; unit quaternions as by unpack_quats,
    translations exact, t[3] = 0."""
    if isinstance(packed, np.void) and packed.dtype in (PACKED_JOINT, PACKED_JOINT64):
        packed = np.asarray(packed)
    if not isinstance(packed, np.ndarray) or packed.dtype not in (PACKED_JOINT, PACKED_JOINT64):
        got = f"dtype {packed.dtype}" if isinstance(packed, np.ndarray) else type(packed).__name__
        raise TypeError(f"packed must be a numpy array of dtype jointmath.PACKED_JOINT or PACKED_JOINT64, got {got}")
    joints = np.zeros(packed.shape, JOINT_QUAT)
    joints["q"] = unpack_quats(packed["q"])
    joints["t"][..., :3] = packed["t"]
    return joints
