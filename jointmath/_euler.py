"""Euler angles <-> quaternions for the six Tait-Bryan orders.

float32 and float64 run the SIMD kernels (csrc/euler.c), float64 in float64.
"""
import numpy as np

from . import _core, reference
from ._arrays import _float_array


def _euler_to_quat_one_order(angles, order, degrees):
    axes, intrinsic = reference._euler_axes(order)
    return _core._euler_float32(angles, tuple(axes), intrinsic, bool(degrees), True)


def _quat_to_euler_one_order(q, order, degrees):
    axes, intrinsic = reference._euler_axes(order)
    return _core._euler_float32(q, tuple(axes), intrinsic, bool(degrees), False)


def _by_order(values, order, core, func):
    """func(values[..., j, :], order[j]) per group of joints sharing an order (order a list)."""
    if not isinstance(order, (list, tuple)):
        return func(values, order)  # a single order (validated by func)
    order = list(order)
    if values.ndim < 1 + len(core) or values.shape[-1 - len(core)] != len(order):
        raise ValueError(f"a list of orders needs one per joint: {len(order)} orders for an array of shape "
                         f"{values.shape} (joints on axis -{1 + len(core)})")
    results = {}
    for o in set(order):
        joint_ids = [j for j, oj in enumerate(order) if oj == o]
        results[o] = (joint_ids, func(values[..., joint_ids, :], o))
    first = next(iter(results.values()))[1]
    out = np.empty(values.shape[:-1] + first.shape[-1:], first.dtype)
    for joint_ids, result in results.values():
        out[..., joint_ids, :] = result
    return out


def euler_to_quat(angles, order, degrees=True):
    """Unit quaternions (x, y, z, w) from Tait-Bryan angles.

    angles: float32 or float64 array (..., 3), the angle of each axis of `order`, in degrees
    (radians with degrees=False).
    order: "XYZ", "XZY", "YXZ", "YZX", "ZXY" or "ZYX" - intrinsic, as BVH channels use them:
    "ZXY" means R = Rz(a0) Rx(a1) Ry(a2), scipy's from_euler("ZXY", ...) - or the same in
    lowercase for extrinsic rotations (scipy's convention too). For (..., J, 3) arrays, a list
    of J orders gives each joint its own.

    Returns (..., 4) in the dtype of `angles`. float32 and float64 run the SIMD kernels: rotation
    error <= 1e-6 rad in float32 against scipy (float64) for angles up to 720 degrees on every
    path; <= 4e-15 rad in float64 against an extended-precision evaluation (7.1e-16 measured;
    exact reduction up to 2^40 degrees or 2^20 radians). A NaN or infinite angle gives a NaN
    quaternion in its own record.

    Raises TypeError (angles not a float array) or ValueError (angles not (..., 3), an order
    that is not one of the twelve, or a list of orders not one per joint).
    """
    angles = _float_array(angles, "angles", (3,))
    return _by_order(angles, order, (3,), lambda a, o: _euler_to_quat_one_order(a, o, degrees))


def quat_to_euler(q, order, degrees=True):
    """Tait-Bryan angles of quaternions: the inverse of euler_to_quat.

    q may have any finite non-zero scale (float32 2^-149 ... FLT_MAX, float64 2^-1074 ...
    DBL_MAX): the angles are those of q / |q|. A zero quaternion, or one with a NaN or infinite
    component, gives NaN angles in its own record.

    Returns (..., 3) angles in [-180, 180] degrees (radians with degrees=False), the middle one
    in [-90, 90], in q's dtype. At gimbal lock (middle angle within 1e-7 rad of +-90 degrees, on
    both paths) the angles are not unique: the third is set to 0 and the first carries the rest,
    as in scipy's as_euler (which warns; this function does not). float32 runs the SIMD kernel:
    each angle within 3.4e-7 rad of float64 away from gimbal lock; the angles reproduce the
    rotation within 1e-6 rad everywhere, also through euler_to_quat in float32 (7.6e-7 measured,
    middle angles next to +-90 degrees included; near the lock the outer angles are
    ill-conditioned and float32 may split them differently from scipy, never the rotation).
    float64 runs the SIMD kernel too: the angles reproduce the rotation within 1e-14 rad
    (1.0e-15 measured against an extended-precision evaluation) at any scale, away from gimbal
    lock and at exact lock; inside the lock band (middle angle within 1e-7 rad of +-90 degrees
    but not on it) setting the third angle to 0 moves the rotation by up to about twice the
    middle angle's distance from +-90 degrees (<= 2e-7 rad, the rule's cost in any precision).

    Raises TypeError (q not a float array) or ValueError (q not (..., 4), an order that is not
    one of the twelve, or a list of orders not one per joint).
    """
    q = _float_array(q, "q", (4,))
    return _by_order(q, order, (4,), lambda a, o: _quat_to_euler_one_order(a, o, degrees))
