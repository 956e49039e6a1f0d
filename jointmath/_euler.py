"""Euler angles <-> quaternions for the six Tait-Bryan orders (scipy's conventions: radians by
default, uppercase intrinsic, lowercase extrinsic).

euler_to_quat and quat_to_euler are implemented in C (jointmath/_euler.c); a sequence of orders,
one per joint, is grouped here by order and each group runs through the C function.
"""
import numpy as np

from . import _core
from ._core import euler_to_quat, quat_to_euler

__all__ = ["euler_to_quat", "quat_to_euler"]


def _by_order(values, orders, to_quat, degrees, out):
    """euler_to_quat (to_quat) or quat_to_euler of values (..., J, 3 or 4), an already checked
    float32/float64 array, with orders[j] for joint j (a sequence of J orders: a list, a tuple, a
    1-D array of str ...), into out (None, or an array the C boundary checked: the result's dtype
    and shape, writeable)."""
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
        if not isinstance(order, str):
            raise ValueError(f"order must be one of the six Tait-Bryan orders or a sequence of them, got {order!r} "
                             f"for joint {j}")
        groups.setdefault(str(order), []).append(j)
    # a new array even with out: out may share memory with values (read below, group by group)
    result = _core._empty(values.shape[:-1] + (4 if to_quat else 3,), values.dtype)
    for order, joint_ids in groups.items():
        result[..., joint_ids, :] = func(values[..., joint_ids, :], order, degrees)
    if out is None:
        return result
    out[...] = result
    return out
