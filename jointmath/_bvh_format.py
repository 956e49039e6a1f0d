"""The BVH channel model: the channel names a joint may have, the bounds of what a file holds,
and the conversion of raw channel values (a frame's numbers in the MOTION block) into joints.

A joint's Euler channels, in the order they appear, are intrinsic rotations, so "Zrotation
Xrotation Yrotation" means R = Rz(z) Rx(x) Ry(y) (scipy's from_euler("ZXY", ...), degrees).

Position channels (Xposition, Yposition, Zposition) follow one of two conventions, a clip's
``position_channels``: "offset+channel" (CMU, the files jointmath has always written) adds them
to the OFFSET, a missing one counting as 0; "channel" (Blender's exporter, the Bandai-Namco
dataset) takes them as the joint's whole local translation on their axes, the OFFSET giving
only the axes without a channel and the rest pose. The convention changes nothing but how the
position channels map to and from the joints' translations (position_base).
"""
import re

import numpy as np

from . import _core
from ._euler import quat_to_euler
from ._records import refuse_masked

__all__ = ["FRAME_TIME_RANGE", "POSITION_CONVENTIONS", "joints_from_motion"]


_ROTATIONS = {"Xrotation": "X", "Yrotation": "Y", "Zrotation": "Z"}
_POSITIONS = {"Xposition": 0, "Yposition": 1, "Zposition": 2}

#: A line's words: BVH separates them by ASCII spaces and tabs (str.split() would also split a
#: name at a no-break space or another Unicode space, and change it).
_WORD = re.compile(r"[^ \t\n\r\v\f]+")
#: Values from this one on round to float32 infinity (halfway between FLT_MAX and 2^128).
_FLOAT32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103
#: The conventions of position channels: added to the OFFSET, or the whole local translation.
POSITION_CONVENTIONS = ("offset+channel", "channel")
#: Frame Time bounds: 1,000,000 frames per second to one frame an hour.
FRAME_TIME_RANGE = (1e-6, 3600.0)


def _real_array(value, name, dtype=np.float64):
    """value as an array of `dtype`, after refusing masked arrays and values that are not real numbers."""
    refuse_masked(value, name)
    array = np.asarray(value)
    if array.size and array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {array.dtype}")
    return array.astype(dtype)


def checked_convention(positions, name="positions"):
    """positions if it names a convention (POSITION_CONVENTIONS); TypeError/ValueError naming `name`."""
    if not isinstance(positions, str):
        raise TypeError(f"{name} must be a str, one of {', '.join(map(repr, POSITION_CONVENTIONS))}, "
                        f"got {type(positions).__name__}")
    if positions not in POSITION_CONVENTIONS:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, POSITION_CONVENTIONS))}, got {positions!r}")
    return positions


def position_base(offsets, channels, positions):
    """(J, 3) float64: what each joint's position channels are added to, and subtracted from on
    writing: its OFFSET ("offset+channel"), or, for "channel", 0 on the axes with a position
    channel (the channel is the whole translation there) and the OFFSET on the others."""
    base = np.array(offsets, np.float64)
    if positions == "channel":
        for j, ch in enumerate(channels):
            for name in ch:
                if name in _POSITIONS:
                    base[j, _POSITIONS[name]] = 0.0
    return base


def _channel_problem(channels):
    """What is wrong with one joint's channel names, or None."""
    for name in channels:
        if name not in _ROTATIONS and name not in _POSITIONS:
            return f"unknown channel {name!r}"
    if len(set(channels)) != len(channels):
        return "a channel appears twice"
    rotations = sum(c in _ROTATIONS for c in channels)
    if rotations not in (0, 3):
        return f"a joint needs 0 or 3 rotation channels, got {rotations}"
    return None


def _checked_channels(channels, names=None):
    """channels as a list of tuples of channel names, one per joint, each checked (_channel_problem):
    a TypeError for anything that is not a sequence of sequences of names; a ValueError for a
    count other than len(names) when the joints' names are given, or for a problem with a joint's
    channels (naming the joint)."""
    if isinstance(channels, (str, bytes)) or not hasattr(channels, "__iter__"):
        raise TypeError(f"channels must be a sequence of channel-name tuples, one per joint, got "
                        f"{type(channels).__name__}")
    checked = []
    for j, ch in enumerate(channels):
        if isinstance(ch, (str, bytes)) or not hasattr(ch, "__iter__"):
            raise TypeError(f"channels[{j}] must be a sequence of channel names such as ('Zrotation', 'Xrotation', "
                            f"'Yrotation'), got {ch!r}")
        checked.append(tuple(ch))
    if names is not None and len(checked) != len(names):
        raise ValueError(f"channels must list one tuple per joint ({len(names)}), got {len(checked)}")
    for j, ch in enumerate(checked):
        problem = _channel_problem(ch)
        if problem:
            where = f"channels of joint {j} ({names[j]!r})" if names is not None else f"channels[{j}]"
            raise ValueError(f"{where}: {problem}")
    return checked


def _layout(channels):
    """Columns of the raw channels: {order: (joint ids, (n, 3) rotation columns)} and the
    position channels as (columns, joints, axes)."""
    by_order, position = {}, ([], [], [])
    column = 0
    for j, ch in enumerate(channels):
        order, rotation_columns = "", []
        for name in ch:
            if name in _POSITIONS:
                position[0].append(column)
                position[1].append(j)
                position[2].append(_POSITIONS[name])
            else:
                order += _ROTATIONS[name]
                rotation_columns.append(column)
            column += 1
        if order:
            joint_ids, columns = by_order.setdefault(order, ([], []))
            joint_ids.append(j)
            columns.append(rotation_columns)
    return by_order, tuple(np.array(p, np.int64) for p in position), column


def _rotation_columns(channels):
    """The columns of the rotation channels, in file order."""
    columns, column = [], 0
    for ch in channels:
        columns += [column + k for k, name in enumerate(ch) if name in _ROTATIONS]
        column += len(ch)
    return columns


def _joints_from_motion(motion, offsets, channels):
    """(F, J) JOINT_QUAT from (F, C) channel values, in C (one pass)."""
    motion = np.ascontiguousarray(motion, np.float32)
    columns = np.full((len(channels), 6), -1, np.int64)
    axes = np.zeros((len(channels), 3), np.int64)
    column = 0
    for j, ch in enumerate(channels):
        rotation = 0
        for name in ch:
            if name in _POSITIONS:
                columns[j, 3 + _POSITIONS[name]] = column
            else:
                columns[j, rotation] = column
                axes[j, rotation] = "XYZ".index(_ROTATIONS[name])
                rotation += 1
            column += 1
    if column != motion.shape[1]:
        raise ValueError(f"motion must have one column per channel ({column}), got shape {motion.shape}")
    if offsets.shape != (len(channels), 3):
        raise ValueError(f"offsets must have shape ({len(channels)}, 3), one per joint, got shape {offsets.shape}")
    rest = np.zeros((len(channels), 4), np.float32)
    rest[:, :3] = offsets
    return _core._motion_to_joints(motion, rest, columns, axes)


def _motion_from_joints(joints, offsets, channels):
    by_order, (pos_columns, pos_joints, pos_axes), n_channels = _layout(channels)
    motion = np.empty((joints.shape[0], n_channels), np.float32)
    if pos_columns.size:
        # the loader adds the float32 OFFSET: subtracting that same value gives back -17 as -17
        offset32 = offsets.astype(np.float32).astype(np.float64)
        motion[:, pos_columns] = joints["t"][:, pos_joints, pos_axes] - offset32[pos_joints, pos_axes]
    for order, (joint_ids, columns) in by_order.items():
        motion[:, np.array(columns)] = quat_to_euler(joints["q"][:, joint_ids], order, degrees=True)
    return motion


def joints_from_motion(motion, offsets, channels, positions="offset+channel"):
    """Local joints from raw BVH channel values, as load() builds them.

    Parameters
    ----------
    motion : array_like of real numbers
        (F, C) channel values, one column per channel of `channels` in order (computed in
        float32; NaN gives NaN).
    offsets : array_like of real numbers
        (J, 3) each joint's OFFSET.
    channels : sequence of sequences of str
        J sequences of channel names as Clip.channels ("Xposition", "Zrotation", ...).
    positions : {"offset+channel", "channel"}, optional
        How position channels give a translation: added to the OFFSET (default), or as the
        whole local translation on their axes (the OFFSET on the axes without one).

    Returns
    -------
    numpy.ndarray
        (F, J) JOINT_QUAT: each joint's rotation from its Euler channels (intrinsic, in the
        order they appear, degrees) and its translation, OFFSET + position channels (or the
        channels themselves with positions="channel").

    Raises
    ------
    TypeError
        For motion or offsets that are not real numbers, or channels that are not a sequence
        of sequences of names.
    ValueError
        For an unknown or repeated channel name, a joint with other than 0 or 3 rotation
        channels, shapes that do not fit each other, or an unknown `positions`.

    Examples
    --------
    >>> from jointmath import bvh
    >>> joints = bvh.joints_from_motion([[5, 0, 0, 90]], offsets=[[0, 1, 0]],
    ...                                 channels=[("Xposition", "Zrotation", "Xrotation", "Yrotation")])
    >>> joints["t"][0, 0, :3].tolist(), [round(float(c), 6) for c in joints["q"][0, 0]]
    ([5.0, 1.0, 0.0], [0.0, 0.707107, 0.0, 0.707107])

    A file whose position channels hold the whole translation (Blender's exports):

    >>> whole = bvh.joints_from_motion([[5, 0, 0, 90]], offsets=[[5, 1, 0]], positions="channel",
    ...                                channels=[("Xposition", "Zrotation", "Xrotation", "Yrotation")])
    >>> whole["t"][0, 0, :3].tolist()  # X is the channel alone; Y, without a channel, the OFFSET
    [5.0, 1.0, 0.0]
    """
    checked_convention(positions)
    checked = _checked_channels(channels)
    arrays = {}
    for name, value in (("motion", motion), ("offsets", offsets)):
        array = _real_array(value, name, np.float32 if name == "motion" else np.float64)
        if array.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array, got shape {array.shape}")
        arrays[name] = array
    if arrays["offsets"].shape != (len(checked), 3):
        raise ValueError(f"offsets must have shape ({len(checked)}, 3), one per joint, got shape {arrays['offsets'].shape}")
    return _joints_from_motion(arrays["motion"], position_base(arrays["offsets"], checked, positions), checked)
