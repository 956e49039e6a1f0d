"""Mocap workflow pieces on joint arrays: forward kinematics and resampling (sign continuity,
make_continuous, is in C: jointmath/_arrays.c)."""
import os

import numpy as np

from . import _core
from ._records import JOINT_QUAT, checked_joints


#: World transforms of a hierarchy in one pass over the frames: jointmath/_compose.c (the
#: docstring there), which also reads and checks the parents.
forward_kinematics = _core.forward_kinematics


def _positive_number(value, name, unit):
    """value as a float if it is a real number > 0 (not a bool); else TypeError / ValueError naming `name`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a positive number{unit}, got {type(value).__name__}")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number{unit}, got {value!r}")
    return float(value)


def _physical_memory():
    """Bytes of RAM on this machine, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def resample_times(n_frames, frame_time, fps, bytes_per_frame=0):
    """(source indices i0, fractions) of the frames at k / fps, k = 0, 1, ... within the clip.

    The new frame k lies between source frames i0 and i0 + 1 at `fraction` of the way (i0 stops
    at n_frames - 2 with fraction 1 for the last source frame). Times within 1e-9 frames of a
    source frame snap onto it, so 120 -> 30 fps takes every fourth frame exactly.
    bytes_per_frame: what the caller allocates per new frame on top of the 16 bytes here; a
    count of frames whose bytes exceed the machine's memory (or cannot be allocated) raises a
    ValueError saying how many frames and bytes, before anything is allocated.
    """
    fps = _positive_number(fps, "fps", " of frames per second")
    frame_time = _positive_number(frame_time, "frame_time", " of seconds per source frame")
    if n_frames < 2:
        raise ValueError(f"resampling needs at least 2 frames, got {n_frames}")
    frames = np.floor((n_frames - 1) * frame_time * fps + 1e-9) + 1  # a float: may exceed any integer type
    nbytes = frames * (16 + bytes_per_frame)
    memory = _physical_memory()

    def too_large(reason):
        def amount(x):
            return f"{x:,.0f}" if x < 1e18 else f"{x:.3g}"
        return ValueError(f"fps={fps!r} at frame_time={frame_time!r} makes {amount(frames)} frames "
                          f"({amount(nbytes)} bytes), {reason}")

    if not np.isfinite(nbytes) or frames >= 2**62 or (memory is not None and nbytes > memory):
        raise too_large(f"more than this machine's memory ({memory:,} bytes)" if memory else "too large to allocate")
    count = int(frames)
    try:
        position = np.arange(count) / fps / frame_time
        snapped = np.round(position)
        position = np.where(np.abs(position - snapped) < 1e-9, snapped, position)
        index = np.minimum(np.floor(position).astype(np.int64), n_frames - 2)
        return index, np.clip(position - index, 0.0, 1.0)
    except MemoryError:
        raise too_large("too large to allocate") from None


def resample_joints(joints, frame_time, fps):
    """(F, J) JOINT_QUAT frames at `frame_time` seconds each -> frames at `fps`, k / fps apart.

    Rotations are slerped (shortest arc) and translations linearly interpolated between the two
    source frames around each new time, with a fraction per frame. Returns a new (F', J)
    JOINT_QUAT array; F' covers the clip's duration, (F - 1) * frame_time.
    Raises TypeError for a frame_time or fps that is not a real number (True is not 1 s) and
    ValueError for one that is not positive and finite, for fewer than 2 frames, and for an
    fps whose output would not fit in memory (the error says how many frames and bytes).
    """
    from ._interp import slerp  # the interpolation family builds on this module's records

    checked_joints(joints)
    if joints.ndim != 2:
        raise ValueError(f"joints must have shape (frames, joints), got shape {joints.shape}")
    # the output and the two gathered source frames per new frame
    index, fraction = resample_times(joints.shape[0], frame_time, fps, 3 * joints[0].nbytes)
    try:
        a, b = joints[index], joints[index + 1]
        fraction32 = fraction.astype(np.float32)[:, None]
        out = np.zeros((len(index), joints.shape[1]), JOINT_QUAT)
    except MemoryError:
        raise ValueError(f"fps={fps!r} makes {len(index):,} frames of {joints.shape[1]} joints "
                         f"({3 * len(index) * joints[0].nbytes:,} bytes with the source frames gathered), too large "
                         f"to allocate") from None
    out["q"] = slerp(a["q"], b["q"], fraction32)
    # a (1 - f) + b f: exactly a at f = 0 and b at f = 1
    out["t"] = a["t"] * (1 - fraction32[..., None]) + b["t"] * fraction32[..., None]
    return out
