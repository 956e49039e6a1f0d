"""The plain-float-array API is implemented in C (jointmath/_arrays.c, _interp.c, _euler.c,
_pack.c): argument handling, broadcasting and out= like NumPy's ufuncs, float32 and float64 kernels.

TRANSITIONAL (float64 kernels): until the float64 kernels (jm_kernel_table fields ``*_f64``) are
merged, the C boundary runs the float64 case through this table (jm_float64_transitional in
jointmath/_core.c) with already checked, broadcast, aligned float64 arrays. Delete the table with
the hook when they land.
"""
import numpy as np

from . import reference


def _pack64(q, bits):
    """(codes, number of invalid quaternions, index of the first), as the float32 kernel gives."""
    invalid = reference.invalid_quats(q)
    count = int(invalid.sum())
    if count:
        return None, count, int(np.flatnonzero(invalid)[0])
    return np.asarray(reference.pack_quats(q, bits)), 0, q.size // 4


_FLOAT64_TRANSITIONAL = {
    "quat_to_matrix": reference.quat_to_matrix,
    "matrix_to_quat": reference.matrix_to_quat,
    "slerp": reference.slerp,
    "nlerp": reference.nlerp,
    "euler_to_quat": reference.euler_to_quat,
    "quat_to_euler": reference.quat_to_euler,
    "pack_quats": _pack64,
}
