"""Quaternions packed into 32 (or 64) bits, and joint records packed into 16 (or 20) bytes.

The bit layout is documented in csrc/pack.c and in pack_quats below.
"""
import numpy as np

from . import _core
from ._arrays import _float_array
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


def _raise_invalid(count, first, shape):
    where = np.unravel_index(first, shape) if len(shape) != 1 else (first,)
    where = where[0] if len(where) == 1 else tuple(int(i) for i in where)
    raise ValueError(f"q holds {count} zero or non-finite quaternion{'s' if count > 1 else ''} "
                     f"(cannot be packed); the first at index {where}")


def pack_quats(q, bits=10):
    """Pack quaternions into one integer each ("smallest three" with the largest component's index).

    q: float32 or float64 array (..., 4), (x, y, z, w). Any non-zero finite quaternion packs:
       the encoding is scale- and sign-invariant (q, -q and 3q give the same code).
    bits: 10 -> uint32 codes, 20 -> uint64 codes.

    Layout of a 32-bit code: bits 31-30 hold the index (0..3 for x, y, z, w) of the component of
    largest magnitude (the lowest index on ties); the quaternion is divided by that component and
    the other three, c in [-1, 1] in increasing index order, go to bits 29-20, 19-10 and 9-0
    mid-tread, as round(c * M) + M with M = 511 (so 0 is the level 511 and is exact; code 1023 is
    never written). The rounding is exactly to nearest, ties to even, of the real quotient of the
    given floats. The 64-bit code has 20-bit fields with M = 2^19 - 1 = 524287: the index in bits
    61-60, the fields in 59-40, 39-20, 19-0; bits 63-62 are 0.

    Returns an array of shape q.shape[:-1], uint32 or uint64. float32 and float64 each run their
    own SIMD kernel; both give exactly the codes defined above (so float32 input widened to
    float64 gives the same codes), on every ISA path, for any finite non-zero scale from the
    smallest denormal to the largest float of the input's dtype.

    Accuracy of unpack_quats(pack_quats(q)) over 10^7 random unit quaternions (float32, every
    path; benchmarks/bench_pack.py --accuracy): 32-bit worst |q . q'| 0.99999859 (the format's
    bound is 1 - 3 / (2 * 1022^2) = 0.99999856), worst rotation error 0.189 degrees, mean 0.078;
    64-bit worst 1.87e-4 degrees, mean 7.7e-5; decoded norms within 1.5e-7 of 1. Components that are 0
    (the identity, rotations about one axis) come back exactly 0.

    Raises TypeError for a non-array or a dtype other than float32/float64, ValueError for a
    wrong shape, a bits value other than 10/20, or zero / non-finite quaternions (saying how
    many and the index of the first).
    """
    q = _float_array(q, "q", (4,))
    bits = _checked_bits(bits)
    shape = q.shape[:-1]
    codes, count, first = _core._pack_float32(q, bits)  # float32 or float64 kernels
    if count:
        _raise_invalid(count, first, shape)
    return codes


def unpack_quats(p):
    """Unit quaternions from the codes of pack_quats.

    p: uint32 array (32-bit codes) or uint64 array (64-bit codes; bits 63-62 are ignored), any
       shape. Every code is valid.

    Returns float32 (..., 4) unit quaternions (x, y, z, w), | |q| - 1 | <= 1e-6: each field
    decodes as c = (code - M) / M (M = 511 or 524287; the never-written code 2^bits - 1 as +1),
    1 at the stored index, then normalised. The component that was largest comes out positive;
    a component packed as 0 comes out exactly 0.
    """
    return _core._unpack(p)  # checks p itself (a few hundred ns saved per call)


def pack_joints(joints, bits=10):
    """Pack JOINT_QUAT records for compact storage.

    joints: array of dtype JOINT_QUAT, any shape. bits: 10 (default) or 20.
    Returns an array of the same shape of dtype PACKED_JOINT (16 bytes: ``q`` uint32 code,
    ``t`` float32[3] translation) for bits=10, or PACKED_JOINT64 (20 bytes, uint64 code) for
    bits=20. The rotation is packed as by pack_quats (same errors for zero or non-finite q);
    the translation is kept exactly.
    """
    checked_joints(joints)
    bits = _checked_bits(bits)
    packed = np.empty(joints.shape, _PACKED_JOINTS[bits])
    packed["q"] = pack_quats(joints["q"], bits)
    packed["t"] = joints["t"][..., :3]
    return packed


def unpack_joints(packed):
    """JOINT_QUAT records from pack_joints' output (PACKED_JOINT or PACKED_JOINT64), same shape;
    unit quaternions as by unpack_quats, translations exact, t[3] = 0."""
    if not isinstance(packed, np.ndarray) or packed.dtype not in (PACKED_JOINT, PACKED_JOINT64):
        got = f"dtype {packed.dtype}" if isinstance(packed, np.ndarray) else type(packed).__name__
        raise TypeError(f"packed must be a numpy array of dtype jointmath.PACKED_JOINT or PACKED_JOINT64, got {got}")
    joints = np.zeros(packed.shape, JOINT_QUAT)
    joints["q"] = unpack_quats(packed["q"])
    joints["t"][..., :3] = packed["t"]
    return joints
