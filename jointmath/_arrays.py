"""The plain-float-array API: argument checks and float32/float64 routing.

float32 and float64 arrays run the SIMD kernels of the running ISA path (float64 through the
kernels' _f64 twins, in float64). Inputs are never written; ``out`` is validated before use.
"""
import numpy as np

from . import _core

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _float_array(a, name, core_shape):
    """Checks that ``a`` is a float32/float64 ndarray ending in ``core_shape``."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a numpy array of float32 or float64, got {type(a).__name__}")
    if a.dtype not in _FLOATS:
        raise TypeError(f"{name} must have dtype float32 or float64, got dtype {a.dtype}")
    core = len(core_shape)
    if a.ndim < core or a.shape[a.ndim - core:] != core_shape:
        want = "(..., " + ", ".join(map(str, core_shape)) + ")"
        raise ValueError(f"{name} must have shape {want}, got shape {a.shape}")
    return a


def _checked_out(out, shape, dtype):
    """Validates a caller's ``out`` (or passes None through)."""
    if out is None:
        return None
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array of dtype {dtype}, got {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"out must have dtype {dtype}, got dtype {out.dtype}")
    if out.shape != shape:
        raise ValueError(f"out must have shape {shape}, got shape {out.shape}")
    if not out.flags.writeable:
        raise ValueError("out must be writeable, got a read-only array")
    return out


def _map(kernel, a, out, out_shape):
    """Runs a float kernel (float32, or its float64 twin) from ``a`` into ``out`` or a new array."""
    out = _checked_out(out, out_shape, a.dtype)
    src = np.ascontiguousarray(a)
    direct = out is not None and out.flags.c_contiguous and not np.may_share_memory(out, src)
    result = out if direct else np.empty(out_shape, a.dtype)
    _core._convert_float32(kernel, src, result)
    if out is None or result is out:
        return result
    out[...] = result
    return out


def quat_to_matrix(q, out=None):
    """Rotation matrices of quaternions.

    q: float32 or float64 array (..., 4), components (x, y, z, w); need not be unit length:
    the rotation of q / |q| is returned for any finite non-zero scale (float32 2^-149 ...
    FLT_MAX, float64 2^-1074 ... DBL_MAX); a zero quaternion, or a NaN or infinite component,
    gives NaN in its own matrix.
    out: optional writeable array (..., 3, 3) of q's dtype; it is returned.

    Returns the active rotation matrices (v' = R v, scipy's ``Rotation.as_matrix``), (..., 3, 3)
    in q's dtype. float32 and float64 run the SIMD kernels: max abs element error <= 5e-7 at any
    scale in float32 (2.5e-7 measured, benchmarks/convert_numerics.py), <= 1e-15 in float64
    (4.5e-16 measured against an extended-precision evaluation, tests/test_float64.py).
    """
    q = _float_array(q, "q", (4,))
    return _map("quats_to_matrices", q, out, q.shape[:-1] + (3, 3))


def matrix_to_quat(m, out=None):
    """Unit quaternions of rotation matrices.

    m: float32 or float64 array (..., 3, 3) of rotation matrices (v' = R v).
    out: optional writeable array (..., 4) of m's dtype; it is returned.

    Returns (..., 4) unit quaternions (x, y, z, w) in m's dtype, by the largest-divisor method:
    the component with the largest magnitude is computed from the diagonal and comes out
    positive (q and -q are the same rotation; this picks one). The matrix is NOT orthogonalised:
    a non-rotation input (a scaled rotation c R included) gives the normalised quaternion of
    this formula, not the closest rotation (use extract_rotation for that). float32 and float64
    run the SIMD kernels; accuracy for rotation matrices, including 180-degree rotations:
    float32 rotation angle error <= 1e-6 rad and | |q| - 1 | <= 1e-6; float64 <= 2e-15 rad and
    | |q| - 1 | <= 1e-15 (3.8e-16 and 3.2e-16 measured against an extended-precision evaluation).
    """
    m = _float_array(m, "m", (3, 3))
    return _map("matrices_to_quats", m, out, m.shape[:-2] + (4,))
