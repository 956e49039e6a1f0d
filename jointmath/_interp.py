"""slerp / nlerp on plain (..., 4) quaternion arrays: argument checks, broadcasting, and the
SIMD kernels (float32, or their float64 twins)."""
import numpy as np

from . import _core
from ._arrays import _checked_out, _float_array


def _fractions(t, check_range):
    """t as an array of real numbers (TypeError naming t otherwise); with check_range also in
    [0, 1] (ValueError). The float32 kernels check the range themselves, after rounding."""
    if isinstance(t, (float, int)) and not isinstance(t, bool):  # the quick common case
        if not 0 <= t <= 1:
            raise ValueError(f"t must be in [0, 1], got {t!r}")
        return np.asarray(t, np.float64)
    arr = np.asarray(t)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"t must be a float in [0, 1] or an array of them, got {type(t).__name__} "
                        f"(dtype {arr.dtype})")
    if check_range and arr.size and not (arr.min() >= 0 and arr.max() <= 1):  # NaN fails both
        outside = ~((arr >= 0) & (arr <= 1))
        raise ValueError(f"t must be in [0, 1], got {arr[outside].flat[0].item()!r}")
    return arr


def _operand(a, shape, record_size, dtype):
    """``a`` as a C-contiguous ``dtype`` array for the kernel: a single record stays one record
    (the kernel repeats it), anything else is broadcast to ``shape`` (copied only if needed)."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.size == record_size or a.shape == shape:
        return a
    return np.ascontiguousarray(np.broadcast_to(a, shape))


def _blend(kernel, q0, q1, t, out):
    q0 = _float_array(q0, "q0", (4,))
    q1 = _float_array(q1, "q1", (4,))
    if q1.dtype != q0.dtype:
        raise TypeError(f"q1 must have the dtype of q0 ({q0.dtype}), got dtype {q1.dtype}")
    t = _fractions(t, q0.dtype == np.float64)
    try:
        lead = q0.shape[:-1]
        if q1.shape[:-1] != lead or t.shape not in ((), lead):  # (broadcast_shapes costs microseconds)
            lead = np.broadcast_shapes(lead, q1.shape[:-1], t.shape)
    except ValueError:
        raise ValueError(f"q0, q1 and t do not broadcast together: leading shapes {q0.shape[:-1]}, "
                         f"{q1.shape[:-1]} and t shape {t.shape}") from None
    shape = lead + (4,)
    dtype = q0.dtype
    out = _checked_out(out, shape, dtype)
    a, b, tt = _operand(q0, shape, 4, dtype), _operand(q1, shape, 4, dtype), _operand(t, lead, 1, dtype)
    # the kernel checks t and goes through a temporary if out overlaps an input
    result = out if out is not None and out.flags.c_contiguous else np.empty(shape, dtype)
    _core._blend_float32(kernel, a, b, tt, result)
    if out is None:
        return result
    if result is not out:
        out[...] = result
    return out


def slerp(q0, q1, t, out=None):
    """Spherical linear interpolation between quaternion arrays.

    q0, q1: float32 or float64 arrays (..., 4) of unit quaternions (x, y, z, w), same dtype;
    their leading shapes broadcast like NumPy. They are not normalised: other inputs give
    w0 q0 + w1 q1 with the weights of their raw dot product, which is no slerp (normalise them
    first, or use nlerp, which takes any scale).
    t: fraction(s) in [0, 1]: a float, or an array broadcasting with the leading shapes (one
    fraction per element, as resampling a clip needs; one per frame of (frames, joints, 4)
    arrays is ``t[:, None]``).
    out: optional writeable array of the broadcast shape (..., 4) and q0's dtype; returned.

    Returns slerp(q0, q1, t) along the shortest arc (q1 negated where q0 . q1 < 0); t = 0 gives
    q0 exactly and t = 1 the end of that arc exactly, q1 or -q1 (where q0 . q1 < 0), element by
    element, so slerp(q0, q1, linspace(0, 1, n)) stays on one hemisphere up to its last sample
    (a dot product within rounding of 0 is a tie either sign may win). Nearly parallel pairs
    fall back to lerp; identical and antipodal pairs never give NaN. float32 runs the SIMD
    kernel: max abs component error <= 5e-7 against a float64 slerp and | |q| - 1 | <= 1e-6 for
    unit inputs (a scalar t uses the faster fixed-t weights of slerp_joints, an array of t the
    per-element formula: the two agree within that bound, not bit for bit); float64 runs its
    float64 kernel (one formula for a scalar t and an array): max abs component error <= 2e-15
    against an extended-precision slerp for unit inputs (6.6e-16 measured).

    Raises TypeError for non-arrays, non-float dtypes or mixed dtypes, ValueError for shapes
    that are not (..., 4) or do not broadcast, t outside [0, 1] or NaN, and bad ``out``.
    """
    return _blend("slerp", q0, q1, t, out)


def nlerp(q0, q1, t, out=None):
    """Normalised linear interpolation normalize((1 - t) q0 +- t q1) between quaternion arrays.

    Arguments, broadcasting, shortest arc, exact endpoints (t = 1: q1 or -q1) and errors as for
    slerp. Same arc as slerp but not at constant angular speed, and cheaper.

    q0 and q1 may have any finite scale, each its own (float32 from the smallest denormal 2^-149
    to FLT_MAX, float64 over its whole range): the result is normalize((1 - t) q0 +- t q1) as
    written, so equal scales give the nlerp of the unit quaternions; t = 0 and t = 1 still return
    q0 and +-q1 themselves, unnormalised. Two zero quaternions give NaN. float32 runs the SIMD
    kernel: max abs component error <= 3e-7 against a float64 nlerp at any scale (lanes whose
    float32 sums could overflow or underflow are computed in double); float64 runs its float64
    kernel, max abs component error <= 2e-15 against an extended-precision nlerp at any scale
    (3.5e-16 measured; lanes whose sums could overflow or underflow are computed from mantissas
    and exponents).
    """
    return _blend("nlerp", q0, q1, t, out)
