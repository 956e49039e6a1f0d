"""Euler angles <-> quaternions for the six Tait-Bryan orders (scipy's conventions: radians by
default, uppercase intrinsic, lowercase extrinsic).

euler_to_quat and quat_to_euler are implemented in C (jointmath/_euler.c); a sequence of orders,
one per joint, is grouped here by order and each group runs through the C function.
"""
import math

import numpy as np

from . import _core
from ._core import euler_to_quat, quat_to_euler

__all__ = ["euler_to_quat", "quat_to_euler"]


def _by_order(values, orders, to_quat, degrees, out):
    """euler_to_quat (to_quat) or quat_to_euler of values (..., J, 3 or 4), an already checked
    float32/float64 array, with orders[j] for joint j (a sequence of J orders: a list, a tuple, a
    1-D array of str ...), into out (None, or an array the C boundary checked: the result's dtype
    and shape, writeable).

    Each order's joints are copied out (np.take), converted by the C function and written into
    out: no temporary of the whole result's size, except a new result when out may share memory
    with values (out then gets the result of values as they were). Every array is allocated by
    _core._empty (too large: the package's ValueError, not MemoryError), and all of them before
    out is written, so a failed call leaves out as it was."""
    func = euler_to_quat if to_quat else quat_to_euler
    if isinstance(orders, np.ndarray) and orders.ndim != 1:
        raise ValueError(f"order must be one order or a 1-D sequence of orders (one per joint), got an array of "
                         f"shape {orders.shape}")
    orders = list(orders)
    if values.ndim < 2 or values.shape[-2] != len(orders):
        raise ValueError(f"a sequence of orders needs one per joint: {len(orders)} orders for an array of shape "
                         f"{values.shape} (joints on axis -2)")
    groups = {}
    for j, order in enumerate(orders):
        if not isinstance(order, str) or not order:
            hint = " (a bvh.Clip's orders hold '' for a joint without rotation channels: leave such joints out)"
            raise ValueError(f"order must be one of the six Tait-Bryan orders or a sequence of them, got {order!r} "
                             f"for joint {j}{hint if isinstance(order, str) else ''}")
        groups.setdefault(str(order), []).append(j)
    if len(groups) <= 1:  # one order for every joint (or no joint): no copies
        return func(values, next(iter(groups), "XYZ"), degrees, out)
    batch, result_len = values.shape[:-2], 4 if to_quat else 3
    most = max(len(joint_ids) for joint_ids in groups.values())
    taken = _core._empty(batch + (most, values.shape[-1]), values.dtype)  # one group's values, ...
    converted = _core._empty(batch + (most, result_len), values.dtype)  # ... and its result
    result = out
    if out is None or np.may_share_memory(out, values):
        result = _core._empty(values.shape[:-1] + (result_len,), values.dtype)
    for order, joint_ids in groups.items():
        group_values = _leading(taken, batch + (len(joint_ids), values.shape[-1]))
        np.take(values, joint_ids, axis=-2, out=group_values, mode="clip")  # "raise" would buffer a copy
        result[..., joint_ids, :] = func(group_values, order, degrees,
                                         _leading(converted, batch + (len(joint_ids), result_len)))
    if out is None or result is out:
        return result
    out[...] = result
    return out


def _leading(array, shape):
    """The first prod(shape) elements of the C-contiguous `array` as a C-contiguous array of `shape`."""
    return array.reshape(-1)[:math.prod(shape)].reshape(shape)


_core._register_euler_by_order(_by_order)  # the C functions call it for a sequence of orders
