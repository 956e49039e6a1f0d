"""extract_rotation: the rotation closest to arbitrary 3x3 matrices (Mueller et al. 2016)."""
import operator

import numpy as np

from . import _core, reference
from ._arrays import _checked_out, _float_array
from ._records import JOINT_MAT

#: default stopping tolerance on |omega| (rad) per dtype: float32 stops just above the size of
#: the update its rounding leaves at the answer, float64 near its own precision
DEFAULT_TOL = {np.dtype(np.float32): 2e-7, np.dtype(np.float64): 1e-12}
DEFAULT_MAX_ITER = 200


def _batch_rows(x, core_shape, batch):
    """x broadcast to batch + core_shape, as (n, *core_shape) with contiguous rows (a view when
    x already is one run of such rows, else a copy)."""
    if x.shape[: x.ndim - len(core_shape)] != batch:
        x = np.broadcast_to(x, batch + core_shape)
    rows = x.reshape((-1,) + core_shape)  # a view whenever the batch dims collapse
    if rows.ndim > 1 and rows.strides[1:] != np.empty((1,) + core_shape, x.dtype).strides[1:]:
        rows = np.ascontiguousarray(rows)
    return rows


def extract_rotation(a, q0=None, *, max_iter=DEFAULT_MAX_ITER, tol=None, out=None, return_iterations=False):
    """The rotation closest to each matrix, as a unit quaternion (Mueller et al. 2016).

    Finds the proper rotation R (det +1) minimising ||A - R||_F by the paper's iteration
    R <- exp(omega) R, omega = sum_i r_i x a_i / (|sum_i r_i . a_i| + 1e-9) (columns r_i of R,
    a_i of A): the rotational part of the polar decomposition for det A > 0, and still a proper
    rotation for det A <= 0 and for rank-deficient A, where the directions A does not determine
    carry over from the start.

    a: float32/float64 array (..., 3, 3), or a JOINT_MAT array (...) whose 3x3 part is used
    (computed in float32). Any layout; never modified.
    q0: optional (..., 4) starting quaternions (x, y, z, w), e.g. the previous frame's result;
    broadcast against a's batch shape; converted to a's dtype; need not be unit (q0 = 0 starts
    from the identity). Without q0 the start is the normalised matrix->quaternion of A (the
    paper's recommendation), which is near the answer only for nearly orthogonal A.
    max_iter: int >= 0 (float32: <= 2**24), most updates per matrix (default 200).
    tol: float >= 0, a matrix stops when |omega| < tol (rad) before updating; default 2e-7 for
    float32 (the smallest that float32 rounding lets well-conditioned matrices reach) and 1e-12
    for float64. tol=0 runs max_iter updates.
    out: optional writeable (..., 4) array of the result dtype (float32 for JOINT_MAT); it is
    returned. It may be q0 itself (warm start updated in place).
    return_iterations: also return the int32 (...) count of updates each matrix took.

    Returns (..., 4) unit quaternions in a's dtype (float32 for JOINT_MAT), or (q, iterations).
    The sign follows the start: q is the product of the applied update rotations and q0.

    Before iterating, A is scaled by the power of two that puts its largest |element| in [1, 2):
    exact, the answer does not change, and any finite A gives a finite result. A = 0 returns the
    start unchanged (a unit float32 q0 bit for bit). NaN in one matrix or q0 gives NaN there
    only.

    Convergence is linear: for A = R S (S symmetric, eigenvalues s1 >= s2 >= s3 > 0) the error
    about the axis of s1 shrinks by s1 / (s1 + s2 + s3) per update, so ill-conditioned matrices
    are slow. Measured cold-start updates to reach the default float32 tol (median / 99th
    percentile, random S of that condition number, bench_extract.py): condition 1: 0 / 0,
    2: 14 / 20, 10: 57 / 83, 100: 483 / 700, 1000: 4,000+ (max_iter hit). Warm-start from the
    previous frame instead, and bound max_iter (3 is typical per simulation step).

    Accuracy, float32, default tol and max_iter: condition number <= 10 matches the SVD polar
    rotation within 1e-5 rad (99.9 % of matrices; <= 1e-4 rad all); a rotation matrix comes back
    within 1e-6 rad; | |q| - 1 | <= 5e-7. float64 computes the same iteration in NumPy
    (jointmath.reference.extract_rotation).

    Raises TypeError for a, q0, out of the wrong type or dtype and for non-integer max_iter or
    non-real tol; ValueError for wrong shapes, shapes that do not broadcast, max_iter or tol out
    of range, or a read-only out.
    """
    records = isinstance(a, np.ndarray) and a.dtype == JOINT_MAT
    if records:
        batch, dtype = a.shape, np.dtype(np.float32)
    else:
        a = _float_array(a, "a", (3, 3))
        batch, dtype = a.shape[:-2], a.dtype
    if q0 is not None:
        q0 = _float_array(q0, "q0", (4,))
        if q0.shape[:-1] != batch:
            try:
                batch = np.broadcast_shapes(batch, q0.shape[:-1])
            except ValueError:
                raise ValueError(
                    f"q0 must broadcast against a: batch shapes {q0.shape[:-1]} and {batch} do not") from None
    if isinstance(max_iter, bool):
        raise TypeError("max_iter must be an int, got bool")
    try:
        max_iter = operator.index(max_iter)
    except TypeError:
        raise TypeError(f"max_iter must be an int, got {type(max_iter).__name__}") from None
    if not 0 <= max_iter <= (1 << 24 if dtype == np.float32 else 1 << 62):
        raise ValueError(f"max_iter must be >= 0 (float32: <= 2**24), got {max_iter}")
    if tol is None:
        tol = DEFAULT_TOL[dtype]
    elif isinstance(tol, (bool, np.bool_)) or not isinstance(tol, (int, float, np.integer, np.floating)):
        raise TypeError(f"tol must be a real number, got {type(tol).__name__}")
    if not 0 <= tol < np.inf:
        raise ValueError(f"tol must be finite and >= 0, got {tol}")
    out = _checked_out(out, batch + (4,), dtype)

    if dtype == np.float64:
        result = reference.extract_rotation(a, q0, max_iter, tol, return_iterations)
        q, iterations = result if return_iterations else (result, None)
        if out is not None:
            out[...] = q
            q = out
        return (q, iterations) if return_iterations else q

    a_rows = _batch_rows(a, (), batch) if records else _batch_rows(a, (3, 3), batch)
    q0_rows = None if q0 is None else _batch_rows(q0.astype(np.float32, copy=False), (4,), batch)
    # the kernel writes into out directly when it is one contiguous run that overlaps neither
    # input, or that is q0's own records (in-place warm start: each block reads before writing)
    direct = (
        out is not None
        and out.flags.c_contiguous
        and not np.may_share_memory(out, a_rows)
        and (q0_rows is None or not np.may_share_memory(out, q0_rows)
             or (q0_rows.flags.c_contiguous and q0_rows.ctypes.data == out.ctypes.data))
    )
    result = out.reshape(-1, 4) if direct else np.empty((a_rows.shape[0], 4), np.float32)
    iterations = np.empty(batch, np.int32) if return_iterations else None
    _core._extract_float32(a_rows, q0_rows, result, None if iterations is None else iterations.reshape(-1),
                           max_iter, float(tol))
    if direct:
        q = out
    elif out is not None:
        out[...] = result.reshape(batch + (4,))
        q = out
    else:
        q = result.reshape(batch + (4,))
    return (q, iterations) if return_iterations else q
