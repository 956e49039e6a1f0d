"""Mocap workflow pieces on joint arrays: forward kinematics and resampling (sign continuity,
make_continuous, is in C: jointmath/_arrays.c)."""
import numpy as np

from . import _core
from ._records import JOINT_MAT, JOINT_QUAT, checked_joints


def checked_parents(parents, n_joints):
    """parents as a C-contiguous int64 (J,) array, after checking parents-before-children."""
    if not isinstance(parents, (np.ndarray, list, tuple)):
        raise TypeError(f"parents must be a sequence of joint indices, got {type(parents).__name__}")
    array = np.asarray(parents)
    if array.ndim != 1 or array.shape[0] != n_joints:
        raise ValueError(f"parents must hold one index per joint ({n_joints}), got shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"parents must be integers, got dtype {array.dtype}")
    array = np.ascontiguousarray(array, dtype=np.int64)
    bad = np.flatnonzero((array < -1) | (array >= np.arange(n_joints)))
    if bad.size:
        j = int(bad[0])
        raise ValueError(f"parents must list parents before children (parents[j] < j, -1 for a root): "
                         f"parents[{j}] = {int(array[j])}")
    return array


def forward_kinematics(joints, parents):
    """World transforms of every joint in every frame.

    joints: JOINT_QUAT array (..., J) of local transforms (frames x joints, e.g. Clip.joints).
    parents: J parent indices, -1 for a root, every parent before its children (as BVH lists
    them; Clip.parents).

    Returns a JOINT_MAT array of the same shape: world[..., j] = world[..., parents[j]] * local
    (compose_mats of joints_to_mats), a root's world transform being its local one.
    """
    checked_joints(joints)
    if joints.ndim < 1:
        raise ValueError("joints must have shape (..., J): one record per joint on the last axis")
    n_joints = joints.shape[-1]
    parents = checked_parents(parents, n_joints)
    local = _core.joints_to_mats(joints).reshape(-1, n_joints)
    world = np.empty(local.shape, JOINT_MAT)
    _core._forward_kinematics(local, parents, world)
    return world.reshape(joints.shape)


def resample_times(n_frames, frame_time, fps):
    """(source indices i0, fractions) of the frames at k / fps, k = 0, 1, ... within the clip.

    The new frame k lies between source frames i0 and i0 + 1 at `fraction` of the way (i0 stops
    at n_frames - 2 with fraction 1 for the last source frame). Times within 1e-9 frames of a
    source frame snap onto it, so 120 -> 30 fps takes every fourth frame exactly.
    """
    if not (isinstance(fps, (int, float, np.integer, np.floating)) and np.isfinite(fps) and fps > 0):
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    if not (isinstance(frame_time, (int, float, np.integer, np.floating)) and np.isfinite(frame_time) and frame_time > 0):
        raise ValueError(f"frame_time must be a positive number of seconds, got {frame_time!r}")
    if n_frames < 2:
        raise ValueError(f"resampling needs at least 2 frames, got {n_frames}")
    duration = (n_frames - 1) * float(frame_time)
    count = int(np.floor(duration * fps + 1e-9)) + 1
    position = np.arange(count) / float(fps) / float(frame_time)
    snapped = np.round(position)
    position = np.where(np.abs(position - snapped) < 1e-9, snapped, position)
    index = np.minimum(np.floor(position).astype(np.int64), n_frames - 2)
    return index, np.clip(position - index, 0.0, 1.0)


def resample_joints(joints, frame_time, fps):
    """(F, J) JOINT_QUAT frames at `frame_time` seconds each -> frames at `fps`, k / fps apart.

    Rotations are slerped (shortest arc) and translations linearly interpolated between the two
    source frames around each new time, with a fraction per frame. Returns a new (F', J)
    JOINT_QUAT array; F' covers the clip's duration, (F - 1) * frame_time.
    """
    from ._interp import slerp  # the interpolation family builds on this module's records

    checked_joints(joints)
    if joints.ndim != 2:
        raise ValueError(f"joints must have shape (frames, joints), got shape {joints.shape}")
    index, fraction = resample_times(joints.shape[0], frame_time, fps)
    a, b = joints[index], joints[index + 1]
    fraction32 = fraction.astype(np.float32)[:, None]
    out = np.zeros((len(index), joints.shape[1]), JOINT_QUAT)
    out["q"] = slerp(a["q"], b["q"], fraction32)
    # a (1 - f) + b f: exactly a at f = 0 and b at f = 1
    out["t"] = a["t"] * (1 - fraction32[..., None]) + b["t"] * fraction32[..., None]
    return out
