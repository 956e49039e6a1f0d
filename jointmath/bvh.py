"""BVH motion-capture files: load into a Clip, save back.

Our own parser: the HIERARCHY block is tokenised in Python (it is small); the MOTION block is
read in C in one pass straight into float32 (jointmath/_motion.c: correctly rounded like
strtof), and the joints are built from it in C in one more pass. A file given by its path is
read into memory in one call, not memory-mapped (another program truncating a mapped file would
crash the process); one that changes while it is read raises ValueError. Lines end at \\n,
\\r\\n or \\r only; tabs, exponents and leading-dot floats are accepted; numbers are ASCII (no "inf", "nan", "1_000" or full-width digits). A malformed or truncated
file raises ValueError naming the file and line; no partial Clip is ever returned. More frame
lines than "Frames:" declares (some exporters add one) keeps the declared frames and warns with
BVHWarning; so does a joint name that is not UTF-8 (read as cp1252). A skeleton without any
channel (no CHANNELS values in any joint) has frames without values: each frame is one blank
line, so "Frames: N" needs N lines after "Frame Time:" (save writes them; more are ignored).

Rotations: a joint's Euler channels, in the order they appear, are intrinsic rotations, so
"Zrotation Xrotation Yrotation" means R = Rz(z) Rx(x) Ry(y) (scipy's from_euler("ZXY", ...),
degrees). Translations: a joint's translation is its OFFSET plus its position channels
(Xposition, Yposition, Zposition; a missing one counts as 0), in every frame.
"""
import dataclasses
import html
import io
import numbers
import os
import re
import stat
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import _core
from ._files import write_atomic
from ._records import JOINT_QUAT, checked_joints, refuse_masked


__all__ = ["BVHWarning", "Clip", "joints_from_motion", "load", "resample", "save"]


class BVHWarning(UserWarning):
    """A readable file that breaks the format in a way load() could repair (said what it did)."""


_ROTATIONS = {"Xrotation": "X", "Yrotation": "Y", "Zrotation": "Z"}
_POSITIONS = {"Xposition": 0, "Yposition": 1, "Zposition": 2}
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_LINE_END = re.compile(rb"\r\n|\r|\n")
#: A line's words: BVH separates them by ASCII spaces and tabs (str.split() would also split a
#: name at a no-break space or another Unicode space, and change it).
_WORD = re.compile(r"[^ \t\n\r\v\f]+")
#: Values from this one on round to float32 infinity (halfway between FLT_MAX and 2^128).
_FLOAT32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103
#: Frame Time bounds: 1,000,000 frames per second to one frame an hour.
FRAME_TIME_RANGE = (1e-6, 3600.0)
#: save() indents a joint by its depth in tabs, up to this many (a 10,000-deep chain stays small).
MAX_INDENT = 32
#: A rotation channel computed from joints continues from the frame before by whole turns up to
#: this many degrees: float32 spaces values below it as finely as it does quat_to_euler's own
#: values from 128 to 180, so a save keeps its 1e-6 rad round trip. A value that would reach it
#: is written as its own (within +-180: a jump of a whole turn at that frame only), and the
#: channel continues from there.
CONTINUED_ANGLE_MAX = 256.0
#: Rotation channels computed from joints take, of a joint's two Euler solutions, the one nearer
#: the frame before, unless both lie this many degrees or more from it (the three angles' steps,
#: each modulo 360, summed): no solution continues the curve there (a T-pose first frame, a cut),
#: and quat_to_euler's (middle angle within +-90) is taken. Near gimbal lock the outer angles of
#: a continuous motion swing by tens of degrees a frame (01_01's root: 90 at its passage).
EULER_JUMP = 180.0


def _empty_end_sites():
    return np.zeros(0, np.int64)


def _empty_end_offsets():
    return np.zeros((0, 3), np.float64)



def _real_array(value, name, dtype=np.float64):
    """value as an array of `dtype`, after refusing masked arrays and values that are not real numbers."""
    refuse_masked(value, name)
    array = np.asarray(value)
    if array.size and array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {array.dtype}")
    return array.astype(dtype)


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


def _checked_parents(parents, n_joints):
    """parents as an int64 (J,) array, after checking parents-before-children (-1 for a root)."""
    refuse_masked(parents, "parents")
    array = np.asarray(parents)
    if array.ndim != 1 or array.shape[0] != n_joints:
        raise ValueError(f"parents must hold one index per joint ({n_joints}), got shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"parents must be integers, got dtype {array.dtype}")
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:  # would wrap to negative
        j = int(np.argmax(array > np.iinfo(np.int64).max))
        raise ValueError(f"parents must list parents before children (parents[j] < j, -1 for a root): "
                         f"parents[{j}] = {int(array[j])}")
    array = array.astype(np.int64)
    bad = np.flatnonzero((array < -1) | (array >= np.arange(n_joints)))
    if bad.size:
        j = int(bad[0])
        raise ValueError(f"parents must list parents before children (parents[j] < j, -1 for a root): "
                         f"parents[{j}] = {int(array[j])}")
    return array

def _checked_skeleton(clip):
    """(parents, offsets, end_sites, end_offsets) of clip checked and converted as Clip() stores
    them (TypeError / ValueError naming the field); the methods that compute from the skeleton
    use these too, so that a field assigned since construction is checked before it is used,
    never wrapped or broadcast as NumPy would read it (an End Site at -1 taken as the last joint)."""
    n_joints = len(clip.names)
    parents = _checked_parents(clip.parents, n_joints)
    offsets = _real_array(clip.offsets, "offsets")
    if offsets.shape != (n_joints, 3):
        raise ValueError(f"offsets must have shape ({n_joints}, 3), one per joint, got shape {offsets.shape}")
    if not np.isfinite(offsets).all():
        raise ValueError("offsets must be finite")
    refuse_masked(clip.end_sites, "end_sites")
    end_sites = np.asarray(clip.end_sites)
    if end_sites.ndim != 1 or (end_sites.size and end_sites.dtype.kind not in "iu"):
        raise ValueError(f"end_sites must be a 1-D array of joint indices, got {end_sites.dtype} of shape "
                         f"{end_sites.shape}")
    end_sites = end_sites.astype(np.int64)
    end_offsets = _real_array(clip.end_offsets, "end_offsets")
    if end_offsets.shape != (len(end_sites), 3):
        raise ValueError(f"end_offsets must have shape ({len(end_sites)}, 3), one per End Site, "
                         f"got shape {end_offsets.shape}")
    if ((end_sites < 0) | (end_sites >= n_joints)).any():
        raise ValueError(f"end_sites must be joint indices in [0, {n_joints}), got {end_sites.tolist()}")
    if not np.isfinite(end_offsets).all():
        raise ValueError("end_offsets must be finite")
    return parents, offsets, end_sites, end_offsets


def _frame_seconds(value):
    """frame_time as a float: any real number (a Python or NumPy number, a 0-d array, a Fraction),
    positive and finite; TypeError for anything else (a str, a bool), naming it."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_, np.timedelta64)) or not isinstance(value, numbers.Real):
        raise TypeError(f"frame_time must be a real number of seconds, got {type(value).__name__}")
    try:
        seconds = float(value)
    except OverflowError:  # an int or Fraction beyond a double
        seconds = float("inf")
    if not (np.isfinite(seconds) and seconds > 0):
        raise ValueError(f"frame_time must be a positive number of seconds, got {value!r}")
    return seconds


def _checked_frames(clip):
    """clip.joints checked as Clip() checks it: a JOINT_QUAT array of shape (frames, joints)."""
    checked_joints(clip.joints)
    if clip.joints.ndim != 2 or clip.joints.shape[1] != len(clip.names):
        raise ValueError(f"joints must have shape (frames, {len(clip.names)}), got shape {clip.joints.shape}")
    return clip.joints


@dataclass(eq=False, repr=False)
class Clip:
    """A motion clip: a skeleton and its frames. Plain NumPy arrays and lists; pickles.

    The skeleton and ``joints`` are the whole truth: ``motion`` (the raw BVH channel values) is
    computed from them on access, and save() writes what ``joints`` holds, so a clip edited
    through ``joints`` (in place or with ``dataclasses.replace(clip, joints=...)``) saves as
    edited.

    names          joint names, J of them, parents before children (file order)
    parents        (J,) int64, the parent's index, -1 for a root
    offsets        (J, 3) float64, each joint's OFFSET
    channels       J tuples of channel names as in the file ("Xposition", "Zrotation", ...);
                   each joint has 0 or 3 rotation channels and any of the 3 position channels
    frame_time     seconds per frame (a positive, finite real number: stored as a float)
    joints         (F, J) JOINT_QUAT: local rotation from the Euler channels, translation =
                   OFFSET + position channels
    end_sites      (E,) int64 parent joint of each End Site (default none)
    end_offsets    (E, 3) float64, each End Site's OFFSET
    name           a label for displays (load() uses the file's stem)

    ``joints`` is kept as given, not copied (a long capture is not held twice), while the
    skeleton fields are converted into arrays and lists of the clip's own: a clip made with
    ``dataclasses.replace(clip, ...)`` or ``Clip(joints=j, ...)`` shares its frames with ``clip``
    or ``j`` (pass ``joints=clip.joints.copy()`` for frames of its own). Fields may be assigned
    after construction; every method checks the ones it uses again (save() all of them). A clip
    as load() returned it also keeps the file's channel values (copies and pickles too), which
    ``motion`` and save() give for every frame whose joints are unchanged; a clip made with
    replace() or Clip() computes them from ``joints`` (the same rotations and Euler branches,
    float32 rounding apart).

    Equality: ``a == b`` is True when every field is equal (arrays element by element, so a
    NaN is never equal); clips are not hashable. ``repr`` is one line; notebooks show the
    skeleton as a table (``_repr_html_``).
    """

    names: list
    parents: np.ndarray
    offsets: np.ndarray
    channels: list
    frame_time: float
    joints: np.ndarray
    end_sites: np.ndarray = field(default_factory=_empty_end_sites)
    end_offsets: np.ndarray = field(default_factory=_empty_end_offsets)
    name: str = ""

    def __post_init__(self):
        if isinstance(self.names, (str, bytes)) or not hasattr(self.names, "__iter__"):
            raise TypeError(f"names must be a sequence of str, one per joint, got {type(self.names).__name__}")
        self.names = list(self.names)
        for j, name in enumerate(self.names):
            if not isinstance(name, str):
                raise TypeError(f"names[{j}] must be a str, got {type(name).__name__}")
        self.names = [str(n) for n in self.names]  # np.str_ as str
        n_joints = len(self.names)
        if not n_joints:
            raise ValueError("names must list at least one joint, got none")
        self.parents, self.offsets, self.end_sites, self.end_offsets = _checked_skeleton(self)
        self.channels = _checked_channels(self.channels, self.names)
        self.frame_time = _frame_seconds(self.frame_time)
        _checked_frames(self)

    # ------------------------------------------------------------------ derived values --

    @property
    def orders(self):
        """Each joint's rotation order from its channels, e.g. "ZXY"; "" for a joint without rotation
        channels, which the Euler functions refuse: convert the joints with an order (README)."""
        return ["".join(_ROTATIONS[c] for c in ch if c in _ROTATIONS) for ch in self.channels]

    @property
    def fps(self):
        """Frames per second, 1 / frame_time."""
        return 1.0 / _frame_seconds(self.frame_time)

    @property
    def n_frames(self):
        return self.joints.shape[0]

    @property
    def n_joints(self):
        return len(self.names)

    @property
    def duration(self):
        """Seconds from the first frame to the last, (n_frames - 1) * frame_time."""
        return max(self.n_frames - 1, 0) * _frame_seconds(self.frame_time)

    @property
    def motion(self):
        """(F, C) float32 raw channel values, computed from ``joints`` (a new array each time).

        Rotation channels: quat_to_euler of each joint's rotation in its order (degrees), or the
        other Euler solution of the same rotation, (a + 180, 180 - b, c + 180), where that one
        lies nearer the frame before (Blender's "compatible Euler": a middle angle passing
        beyond +-90 stays continuous, as a file's does); each value then moved by whole turns to
        within 180 degrees of the frame before, so that a curve does not jump by 360. A value
        that would reach +-CONTINUED_ANGLE_MAX is written as its own instead (within +-180: the
        one whole-turn jump, at that frame) and the channel continues from it. At gimbal lock
        (middle angle +-90) the third angle keeps its value from the frame before the lock and
        the first takes the rest (quat_to_euler sets the third to 0 there). Position
        channels: translation - OFFSET. The frames of a clip as
        load() returned it whose joints are unchanged keep the file's values exactly (edit a few
        frames in place and only those are computed, continuing from their neighbours).
        """
        offsets, channels = _checked_skeleton(self)[1], _checked_channels(self.channels, self.names)
        _checked_frames(self)
        loaded = getattr(self, "_loaded_motion", None)
        n_channels = sum(len(c) for c in channels)
        if loaded is not None and loaded.shape == (self.n_frames, n_channels):
            # the file's values for every frame they still give exactly
            frame_bytes = (self.n_frames, self.n_joints * JOINT_QUAT.itemsize)
            unchanged = (_joints_from_motion(loaded, offsets, channels).view(np.uint8).reshape(frame_bytes)
                         == np.ascontiguousarray(self.joints).view(np.uint8).reshape(frame_bytes)).all(axis=1)
            if unchanged.all():
                return loaded.copy()
            motion = loaded.copy()
            edited = ~unchanged
            motion[edited] = _motion_from_joints(self.joints[edited], offsets, channels)
        else:
            motion = _motion_from_joints(self.joints, offsets, channels)
            edited = np.ones(self.n_frames, bool)
        columns = _rotation_columns(channels)
        _continue_through_lock(motion, channels, edited)
        _nearest_solutions(motion, columns, edited)
        _continue_turns(motion, columns, edited)
        return motion

    def world(self):
        """(F, J) JOINT_MAT world transforms of every joint (jointmath.forward_kinematics)."""
        return _core.forward_kinematics(_checked_frames(self), _checked_skeleton(self)[0])

    def positions(self, end_sites=True):
        """(F, J + E, 3) float32 world positions: the J joints, then the End Site tips in
        ``end_sites`` order (only the joints with end_sites=False)."""
        parents, _, sites, site_offsets = _checked_skeleton(self)
        world = _core.forward_kinematics(_checked_frames(self), parents)["m"]
        joints = world[..., 3]
        if not end_sites or len(sites) == 0:
            return np.ascontiguousarray(joints)
        return np.concatenate([joints, _end_site_positions(world, sites, site_offsets).astype(np.float32)], axis=1)

    def rest_positions(self):
        """(J + E, 3) float64 positions of the joints and End Sites in the rest pose (every
        rotation identity, translations = OFFSET)."""
        parents, offsets, sites, site_offsets = _checked_skeleton(self)
        position = np.zeros((self.n_joints, 3))
        for j, p in enumerate(parents.tolist()):
            position[j] = offsets[j] + (position[p] if p >= 0 else 0)
        return np.concatenate([position, position[sites] + site_offsets])

    def height(self, axis=1):
        """The rest-pose skeleton height: the extent of rest_positions() along `axis` (default
        1, Y, BVH's up axis; a Python or NumPy integer or a 0-d integer array). The unit that
        errors are reported in."""
        refuse_masked(axis, "axis")
        if isinstance(axis, np.ndarray) and axis.ndim == 0 and axis.dtype.kind in "iu":
            axis = int(axis)
        if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"axis must be an int, 0, 1 or 2 (X, Y or Z), got {type(axis).__name__}")
        if axis not in (0, 1, 2):
            raise ValueError(f"axis must be 0, 1 or 2 (X, Y or Z), got {axis!r}")
        along = self.rest_positions()[:, axis]
        return float(along.max() - along.min())

    # ----------------------------------------------------------------- comparison, display --

    def __eq__(self, other):
        if not isinstance(other, Clip):
            return NotImplemented
        return (self.names == other.names and self.channels == other.channels and self.name == other.name
                and self.frame_time == other.frame_time and self.joints.shape == other.joints.shape
                and np.array_equal(self.parents, other.parents) and np.array_equal(self.offsets, other.offsets)
                and np.array_equal(self.end_sites, other.end_sites)
                and np.array_equal(self.end_offsets, other.end_offsets)
                and np.array_equal(self.joints["q"], other.joints["q"])
                and np.array_equal(self.joints["t"], other.joints["t"]))

    __hash__ = None

    def __repr__(self):
        return (f"<Clip {self.name!r}: {self.n_joints} joints, {self.n_frames} frames at {self.fps:.6g} fps, "
                f"{self.duration:.6g} s>")

    def _repr_html_(self, max_rows=200):
        rows = []
        for j in range(min(self.n_joints, max_rows)):
            p = int(self.parents[j])
            rows.append("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
                j, self.names[j], self.names[p] if p >= 0 else "", self.orders[j] or "-",
                " ".join(self.channels[j]), " ".join(f"{v:.6g}" for v in self.offsets[j]))) + "</tr>")
        if self.n_joints > max_rows:
            rows.append(f"<tr><td colspan='6'>... {self.n_joints - max_rows} more joints</td></tr>")
        head = "".join(f"<th>{h}</th>" for h in ("#", "joint", "parent", "order", "channels", "offset"))
        return (f"<div><b>Clip {html.escape(repr(self.name))}</b>: {self.n_joints} joints, "
                f"{len(self.end_sites)} End Sites, {self.n_frames} frames, {self.fps:.6g} fps, "
                f"{self.duration:.6g} s, height {self.height():.6g}"
                f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


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


# ------------------------------------------------------------------------ channels <-> joints --

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


def _end_site_positions(world, end_sites, end_offsets):
    """(F, E, 3) float64 world positions of End Site tips: each End Site's OFFSET (end_offsets,
    (E, 3)) through the (F, J, 3, 4) world matrices `world` of its joint (end_sites, (E,))."""
    parent = world[:, end_sites]
    return np.einsum("fejk,ek->fej", parent[..., :3].astype(np.float64), end_offsets) + parent[..., 3]


def _rotation_columns(channels):
    """The columns of the rotation channels, in file order."""
    columns, column = [], 0
    for ch in channels:
        columns += [column + k for k, name in enumerate(ch) if name in _ROTATIONS]
        column += len(ch)
    return columns


def _wrapped(degrees):
    """Angles moved by whole turns into [-180, 180]."""
    return degrees - 360 * np.rint(degrees / 360)


def _since_last_kept(counts, edited):
    """Cumulative sums of counts (F, K) over the frames, restarting at each frame not edited
    (whose counts are 0): the counts since the frame before each edited stretch. edited: (F,),
    or (F, K) for restarts of their own per column."""
    total = np.cumsum(counts, axis=0)
    if edited.all():  # no restart (a first frame's counts are 0)
        return total
    edited = edited.reshape(len(edited), -1)
    last_kept = np.maximum.accumulate(np.where(edited, 0, np.arange(len(edited))[:, None]), axis=0)
    return total - np.take_along_axis(total, np.broadcast_to(last_kept, total.shape), axis=0)


def _continue_through_lock(motion, channels, edited):
    """In place: at gimbal lock (middle angle +-90) quat_to_euler sets the third angle to 0 and the
    first carries the whole rotation about the two aligned axes, so a joint entering or holding a
    lock would jump in both outer channels. In the edited frames at lock, each joint's third angle
    becomes the one of its last frame before the lock and the first angle takes the rest (a +- c
    is what the rotation fixes there: the sign whose angles give the same rotation, within 1e-6
    rad, is used; a frame where neither does keeps its angles)."""
    from ._euler import euler_to_quat

    frames = np.arange(len(motion))[:, None]
    for order, (_, columns) in _layout(channels)[0].items():
        columns = np.asarray(columns)  # (n, 3)
        angles = motion[:, columns].astype(np.float64)  # (F, n, 3)
        lock = (np.abs(np.abs(angles[..., 1]) - 90) < 1e-4) & (angles[..., 2] == 0) & edited[:, None]
        before = np.maximum.accumulate(np.where(lock, -1, frames), axis=0)  # the last frame not at lock
        lock &= before >= 0
        if not lock.any():
            continue
        frame, joint = np.nonzero(lock)
        found = angles[frame, joint]
        kept = angles[before[frame, joint], joint, 2]
        q = euler_to_quat(found, order, degrees=True)
        done = np.zeros(len(frame), bool)
        for sign in (1.0, -1.0):
            moved = found.copy()
            moved[:, 0] -= sign * kept
            moved[:, 2] = kept
            moved_q = euler_to_quat(moved, order, degrees=True)
            same = np.minimum(np.linalg.norm(moved_q - q, axis=-1), np.linalg.norm(moved_q + q, axis=-1)) < 5e-7
            take = same & ~done
            found[take], done = moved[take], done | take
        motion[frame[:, None], columns[joint]] = _wrapped(found).astype(np.float32)


def _nearest_solutions(motion, columns, edited):
    """In place: each joint's Euler angles (a, b, c) in the edited frames replaced by the other
    solution of the same rotation, (a + 180, 180 - b, c + 180) in [-180, 180], where that one
    lies nearer the frame before as it ends up, by the sum of the three differences, each modulo
    360 (whole turns are _continue_turns' part): Blender's "compatible Euler". The identity holds
    for every Tait-Bryan order, intrinsic or extrinsic (those are the intrinsic ones reversed):
    Ri(a + 180) Rj(180 - b) Rk(c + 180) = Ri(a) [Ri(180) Rj(180 - b) Ri(180)^-1] Ri(180) Rk(180)
    Rk(c) = Ri(a) Rj(b - 180) Rj(180) Rk(c), since a half turn about axis i reverses rotations
    about j and two half turns about perpendicular axes make one about the third. `columns`
    lists each joint's three rotation columns in its order; a first frame and the frames not
    edited keep their angles (quat_to_euler's: middle angle within +-90). Where both solutions
    lie EULER_JUMP or more from the frame before, the motion itself jumps there (a T-pose first
    frame, a cut): the frame takes quat_to_euler's solution, and the choice restarts from it."""
    if not columns or len(motion) < 2:
        return
    triples = np.asarray(columns).reshape(-1, 3)
    angles = motion[:, triples]  # (F, K, 3)
    # solution 0 of frame f lies as far from solution 0 of frame f - 1 as solution 1 from
    # solution 1 (the differences are the same up to sign), and as far from solution 1 as
    # solution 1 from solution 0: a frame takes the other solution than its predecessor (flips)
    # where that cross distance is the shorter
    step = np.abs(_wrapped(np.diff(angles, axis=0)))
    same = step.sum(axis=-1)
    cross = 360 - step[..., 0] - step[..., 2] + np.abs(_wrapped(angles[1:, :, 1] + angles[:-1, :, 1] - 180))
    jumps = np.zeros(angles.shape[:2], bool)
    jumps[1:] = np.minimum(same, cross) >= EULER_JUMP
    flips = np.zeros(angles.shape[:2], np.int32)
    flips[1:] = (cross < same) & edited[1:, None]
    flips[jumps] = 0
    if not flips.any():  # the usual case: quat_to_euler's solutions are continuous
        return
    frames, joints = np.nonzero(_since_last_kept(flips, edited[:, None] & ~jumps) % 2)
    cells = (frames[:, None], triples[joints])
    other = motion[cells].astype(np.float64) + [180, 0, 180]  # computed in float64, rounded once
    other[:, 1] = 180 - other[:, 1]
    motion[cells] = _wrapped(other)


def _continue_turns(motion, columns, edited):
    """In place: the rotation channels (motion[:, columns], degrees) of the edited frames moved
    by whole turns to within 180 degrees of the frame before (as it ends up), from the last frame
    not edited on (a first frame keeps its value). A value that would then reach
    +-CONTINUED_ANGLE_MAX keeps its own (within +-180: the one jump of a whole turn that the
    channel makes there), and the channel continues from it. Frames not edited never change."""
    if not columns or len(motion) < 2:
        return
    columns = np.asarray(columns)
    turns = np.zeros((len(motion), len(columns)))  # turns[f]: whole turns from frame f - 1 to f
    turns[1:] = np.rint((motion[1:, columns] - motion[:-1, columns]) / np.float32(360))
    turns[~edited] = 0
    turning = np.flatnonzero(turns.any(axis=0))
    if not turning.size:  # the usual case: no channel crosses +-180 in an edited frame
        return
    columns, turns = columns[turning], turns[:, turning]
    values = motion[:, columns].astype(np.float64)
    continued = values - 360 * _since_last_kept(turns, edited)
    # checked as written (float32): 255.99999 rounds to 256
    for c in np.flatnonzero((np.abs(continued.astype(np.float32)) >= CONTINUED_ANGLE_MAX).any(axis=0)):
        continued[:, c] = _turned_back(values[:, c], turns[:, c], edited)
    motion[:, columns] = continued.astype(np.float32)


def _turned_back(values, turns, edited):
    """One channel continued as _continue_turns does, frame by frame: within each run of frames
    that share one count of turns (from a turn, or from the start of a stretch of edited frames,
    to the next or to the stretch's end), the first value that would reach
    +-CONTINUED_ANGLE_MAX and the rest of the run keep their own, and the count restarts."""
    values = values.copy()
    begins_stretch = edited & ~np.concatenate([[False], edited[:-1]])
    frames = np.arange(len(values))
    next_kept = np.minimum.accumulate(np.where(edited, len(values), frames)[::-1])[::-1]
    begins = np.flatnonzero((turns != 0) | begins_stretch)
    count = 0.0
    for begin, end in zip(begins, np.append(begins[1:], len(values))):
        count = turns[begin] + (0.0 if begins_stretch[begin] else count)
        run = values[begin:min(end, next_kept[begin])]  # a view: updated in place
        run -= 360 * count
        beyond = np.flatnonzero(np.abs(run.astype(np.float32)) >= CONTINUED_ANGLE_MAX)  # as written
        if beyond.size:
            run[beyond[0]:] += 360 * count
            count = 0.0
    return values


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
    from ._euler import quat_to_euler

    by_order, (pos_columns, pos_joints, pos_axes), n_channels = _layout(channels)
    motion = np.empty((joints.shape[0], n_channels), np.float32)
    if pos_columns.size:
        # the loader adds the float32 OFFSET: subtracting that same value gives back -17 as -17
        offset32 = offsets.astype(np.float32).astype(np.float64)
        motion[:, pos_columns] = joints["t"][:, pos_joints, pos_axes] - offset32[pos_joints, pos_axes]
    for order, (joint_ids, columns) in by_order.items():
        motion[:, np.array(columns)] = quat_to_euler(joints["q"][:, joint_ids], order, degrees=True)
    return motion


def joints_from_motion(motion, offsets, channels):
    """(F, J) JOINT_QUAT local joints from raw channel values (see the module docstring), as
    load() builds them: motion (F, C) real numbers (computed in float32; NaN gives NaN),
    offsets (J, 3) real numbers, channels J sequences of channel names as Clip.channels.

    Raises TypeError for motion or offsets that are not real numbers, or channels that are not
    a sequence of sequences of names; ValueError for an unknown or repeated channel name, a
    joint with other than 0 or 3 rotation channels, or shapes that do not fit each other.
    """
    checked = _checked_channels(channels)
    arrays = {}
    for name, value in (("motion", motion), ("offsets", offsets)):
        array = _real_array(value, name, np.float32 if name == "motion" else np.float64)
        if array.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array, got shape {array.shape}")
        arrays[name] = array
    return _joints_from_motion(arrays["motion"], arrays["offsets"], checked)


# ----------------------------------------------------------------------------------- reading --

class _Lines:
    """The file's lines (ended by \\n, \\r\\n or \\r only) with 1-based numbers, read one at a time
    from the bytes; errors name the line."""

    def __init__(self, data, source, notes):
        self.data = data
        self.source = source
        self.notes = notes  # warnings to give (BVHWarning), appended in order
        self.pos = 0  # byte offset of the next line
        self.i = 0  # number of the last line read
        self.cp1252_line = None

    def error(self, message, lineno=None):
        lineno = self.i if lineno is None else lineno
        return ValueError(f"{self.source}:{lineno}: {message}")

    def _decode(self, raw):
        if b"\x00" in raw:
            raise self.error("not a text file (a NUL byte)")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            if self.cp1252_line is None:
                self.cp1252_line = self.i
                self.notes.append(f"{self.source}:{self.i}: not UTF-8; the HIERARCHY was read as cp1252")
            try:
                return raw.decode("cp1252")
            except UnicodeDecodeError:  # the five bytes cp1252 leaves undefined
                return raw.decode("latin-1")

    def next_tokens(self, what):
        """The tokens of the next non-blank line; a ValueError at end of file."""
        data = self.data
        while self.pos < len(data):
            found = _LINE_END.search(data, self.pos)
            end = found.start() if found else len(data)
            raw = data[self.pos:end]
            self.pos = found.end() if found else len(data)
            self.i += 1
            tokens = _WORD.findall(self._decode(raw))
            if tokens:
                return tokens
        raise self.error(f"unexpected end of file, expected {what}")


def _floats(lines, tokens, count, what):
    if len(tokens) != count:
        raise lines.error(f"{what} needs {count} numbers, got {len(tokens)}")
    for t in tokens:
        if not _NUMBER.fullmatch(t):
            raise lines.error(f"{what}: not a number in {' '.join(tokens)!r}")
    values = [float(t) for t in tokens]
    if not all(abs(v) < _FLOAT32_OVERFLOW for v in values):  # rounds to a finite float32 (NaN fails too)
        raise lines.error(f"{what}: not a finite float32 in {' '.join(tokens)!r}")
    return values


def _parse_hierarchy(lines):
    if lines.next_tokens("HIERARCHY") != ["HIERARCHY"]:
        raise lines.error("expected HIERARCHY")
    names, parents, offsets, channels = [], [], [], []
    end_sites, end_offsets = [], []
    stack = []  # open joints (index) or End Sites (None)
    tokens = lines.next_tokens("ROOT")
    while True:
        key = tokens[0]
        if key in ("ROOT", "JOINT"):
            if key == "ROOT" and stack:
                raise lines.error("ROOT inside another joint")
            if key == "JOINT" and (not stack or stack[-1] is None):
                raise lines.error("JOINT outside a joint")
            if len(tokens) < 2:
                raise lines.error(f"{key} without a name")
            parent = stack[-1] if stack else -1
            names.append(" ".join(tokens[1:]))
            parents.append(parent)
            if lines.next_tokens("{") != ["{"]:
                raise lines.error("expected {")
            offset_tokens = lines.next_tokens("OFFSET")
            if offset_tokens[0] != "OFFSET":
                raise lines.error("expected OFFSET")
            offsets.append(_floats(lines, offset_tokens[1:], 3, "OFFSET"))
            channel_tokens = lines.next_tokens("CHANNELS")
            if channel_tokens[0] != "CHANNELS":
                raise lines.error("expected CHANNELS")
            channels.append(_channels(lines, channel_tokens))
            stack.append(len(names) - 1)
        elif key == "End" and tokens[1:] == ["Site"]:
            if not stack or stack[-1] is None:
                raise lines.error("End Site outside a joint")
            if lines.next_tokens("{") != ["{"]:
                raise lines.error("expected {")
            offset_tokens = lines.next_tokens("OFFSET")
            if offset_tokens[0] != "OFFSET":
                raise lines.error("expected OFFSET")
            end_sites.append(stack[-1])
            end_offsets.append(_floats(lines, offset_tokens[1:], 3, "OFFSET"))
            stack.append(None)
        elif tokens == ["}"]:
            if not stack:
                raise lines.error("unmatched }")
            stack.pop()
        elif tokens == ["MOTION"]:
            if stack:
                raise lines.error("MOTION before every joint was closed with }")
            break
        else:
            raise lines.error(f"unexpected {' '.join(tokens)!r}")
        tokens = lines.next_tokens("MOTION" if not stack else "}")
    if not names:
        raise lines.error("no joints")
    return names, parents, offsets, channels, end_sites, end_offsets


def _channels(lines, tokens):
    if len(tokens) < 2 or not re.fullmatch(r"[0-9]+", tokens[1], re.ASCII):
        raise lines.error(f"CHANNELS needs a count (digits 0-9), got {' '.join(tokens[1:2])!r}")
    count = int(tokens[1])
    found = tuple(tokens[2:])
    if len(found) != count:
        raise lines.error(f"CHANNELS says {count} but lists {len(found)}")
    problem = _channel_problem(found)
    if problem:
        raise lines.error(problem)
    return found


def _header_value(lines, label):
    """The value of 'Frames: N' / 'Frame Time: T' (label and value may be split by any space)."""
    tokens = lines.next_tokens(label)
    text = " ".join(tokens)
    if not text.startswith(label + ":"):
        raise lines.error(f"expected '{label}:'")
    value = text[len(label) + 1:].strip()
    if not value:
        raise lines.error(f"'{label}:' without a value")
    return value


def _parse_motion(lines, n_channels):
    frames_text = _header_value(lines, "Frames")
    if not re.fullmatch(r"[0-9]+", frames_text, re.ASCII):
        raise lines.error(f"Frames: not a whole number: {frames_text!r}")
    n_frames = int(frames_text)
    time_text = _header_value(lines, "Frame Time")
    if not _NUMBER.fullmatch(time_text):
        raise lines.error(f"Frame Time: not a number: {time_text!r}")
    frame_time = float(time_text)
    low, high = FRAME_TIME_RANGE
    if not (frame_time > 0 and np.isfinite(frame_time)):
        raise lines.error(f"Frame Time must be positive and finite, got {time_text}")
    if not low <= frame_time <= high:
        raise lines.error(f"Frame Time must be between {low:g} and {high:g} seconds (1,000,000 to 1/3600 frames "
                          f"per second), got {time_text}")
    # a frame takes a line: a count beyond the file's bytes is read as that many (then reported truncated)
    motion, found, last, detail = _core._read_motion(lines.data, lines.pos, lines.i + 1, n_channels,
                                                     min(n_frames, len(lines.data) + 1))
    if motion is None:  # (None, line, kind, detail)
        line, kind = found, last
        if kind == "count":
            raise lines.error(f"a frame needs {n_channels} values, got {detail}", line)
        token = detail.decode("utf-8", "backslashreplace")
        if kind == "number":
            raise lines.error(f"not a number: {token!r}", line)
        raise lines.error(f"not a finite float32: {token!r}", line)
    if found < n_frames:
        raise lines.error(f"Frames: {n_frames} but the file ends after {found} frames (truncated?)", last)
    if found > n_frames and n_channels:  # without channels, extra blank lines are just blank lines
        # some exporters write one frame more than they declare: keep what is declared, say so
        lines.notes.append(f"{lines.source}:{last}: Frames: {n_frames} but the file holds {found} frame lines; "
                           f"the last {found - n_frames} (up to this line) are ignored")
    return frame_time, motion


def _file_bytes(path_or_file):
    """(data, source, file name): the file's bytes, read into memory, the name messages give it and
    the name its clip takes the stem of (a Traversable's .name: its str() need not be a path). A
    file at a path is read in one call into a buffer of its size (f.read()), never memory-mapped:
    reading a map faults (SIGBUS, which kills the process) where another program truncated the file
    meanwhile. A regular file whose size or modification time changed while it was read (an exporter
    truncating and rewriting it) is a ValueError; one changed in place at the same size by a write
    already under way when the read began can go unnoticed (a mix of two versions). A Traversable
    that is not a path (zipfile.Path, a resource of a zipped package) is read by its
    read_bytes()."""
    if isinstance(path_or_file, (str, os.PathLike)):
        source = str(os.fspath(path_or_file))
        with open(path_or_file, "rb") as f:
            before = os.fstat(f.fileno())
            data = f.read()
            after = os.fstat(f.fileno())
        if stat.S_ISREG(before.st_mode) and (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns):
            raise ValueError(f"{source}: the file changed while it was read (another program writing it?); "
                             f"load it again once it is complete")
        return data, source, source
    if hasattr(path_or_file, "read"):
        data, source = path_or_file.read(), getattr(path_or_file, "name", "<file>")
        file_name = source
    elif hasattr(path_or_file, "read_bytes"):
        data, source = path_or_file.read_bytes(), path_or_file
        file_name = getattr(path_or_file, "name", source)
    else:
        raise TypeError(f"path_or_file must be a path, an open file or a Traversable, got {type(path_or_file).__name__}")
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    elif not isinstance(data, bytes):
        raise TypeError(f"reading path_or_file must give str or bytes, got {type(data).__name__}")
    return data, str(source), str(file_name)


def load(path_or_file):
    """Read a BVH file (a path, a file opened in text or binary mode, or an importlib.resources
    Traversable such as resources.files(...) / "clip.bvh" or a zipfile.Path) into a Clip.

    Raises ValueError with the file name and line number for a malformed or truncated file,
    and naming the file for one that another program changed while it was read (a path is read
    into memory, never memory-mapped); TypeError for an argument that is none of these. Warns
    (BVHWarning) and goes on for extra frame lines and for names that are not UTF-8 (read as
    cp1252).
    """
    notes = []
    try:
        return _read(path_or_file, notes)
    finally:  # also before an error: a warning can explain it
        for note in notes:
            warnings.warn(note, BVHWarning, stacklevel=2)


def _read(path_or_file, notes):
    """load() with the reader's warnings appended to the list `notes` as text instead of given:
    what process_file uses, in threads that must not share the warnings module's state."""
    data, source, file_name = _file_bytes(path_or_file)
    lines = _Lines(data, source, notes)
    # Windows exporters often start the file with a byte-order mark; it is not part of "HIERARCHY"
    if data[:3] == b"\xef\xbb\xbf":
        lines.pos = 3
    names, parents, offsets, channels, end_sites, end_offsets = _parse_hierarchy(lines)
    n_channels = sum(len(c) for c in channels)
    frame_time, motion = _parse_motion(lines, n_channels)
    offsets = np.array(offsets, np.float64).reshape(-1, 3)
    clip = Clip(names=names, parents=np.array(parents, np.int64), offsets=offsets, channels=channels,
                frame_time=frame_time, joints=_joints_from_motion(motion, offsets, channels),
                end_sites=np.array(end_sites, np.int64), end_offsets=np.array(end_offsets, np.float64).reshape(-1, 3),
                name=os.path.splitext(os.path.basename(file_name))[0])
    clip._loaded_motion = motion  # see Clip.motion: used only while it gives exactly these joints
    return clip


# ----------------------------------------------------------------------------------- writing --

def _check_names(clip):
    """Each name must read back as itself: words of non-space characters, one ASCII space apart,
    in UTF-8, without a NUL (load() takes a file with one for a binary file)."""
    for j, name in enumerate(clip.names):
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            writable = False
        else:
            writable = bool(name) and " ".join(_WORD.findall(name)) == name and "\x00" not in name
        if not writable:
            raise ValueError(f"clip.names[{j}] = {name!r} cannot be written as BVH: a joint name must be words of "
                             f"characters separated by single spaces (no tabs, line breaks, spaces at its ends or "
                             f"NUL characters; text that UTF-8 can encode), and not empty")


def _check_offsets(clip):
    """OFFSETs that load() would refuse (beyond float32's range) are refused before writing."""
    for attribute, values, what in (("offsets", clip.offsets, "joint"), ("end_offsets", clip.end_offsets, "End Site")):
        beyond = np.flatnonzero((np.abs(values) >= _FLOAT32_OVERFLOW).any(axis=1))
        if beyond.size:
            k = int(beyond[0])
            owner = f"joint {k} ({clip.names[k]!r})" if what == "joint" else f"End Site {k} of joint " \
                f"{int(clip.end_sites[k])} ({clip.names[int(clip.end_sites[k])]!r})"
            raise ValueError(f"clip.{attribute}[{k}] = {values[k].tolist()} ({owner}) is beyond float32's range "
                             f"(|v| < 3.4e38): BVH cannot hold it as load() reads it")


def _check_translations(clip, motion_joints):
    """An axis without a position channel must keep the joint's OFFSET there (BVH cannot say
    otherwise), within 1e-6 of the largest OFFSET (at least 1): the round trip's bound."""
    fixed_axes = np.array([sum(1 << axis for name, axis in _POSITIONS.items() if name not in ch)
                           for ch in clip.channels], np.uint8)
    if not fixed_axes.any() or clip.n_frames == 0:
        return
    offset = clip.offsets.astype(np.float32).astype(np.float64)
    scale = max(1.0, float(np.abs(clip.offsets).max()))
    bad = _core._first_moved_joint(np.ascontiguousarray(motion_joints), offset, fixed_axes, 1e-6 * scale)
    if bad >= 0:
        f, j = divmod(bad, clip.n_joints)
        missing = " ".join(name for name in _POSITIONS if name not in clip.channels[j])
        raise ValueError(f"clip.joints['t'] of joint {j} ({clip.names[j]!r}) differs from its OFFSET in frame {f} "
                         f"({motion_joints['t'][f, j, :3].tolist()} vs {clip.offsets[j].tolist()}) on an axis "
                         f"without a position channel to write it: give the joint {missing}")


def _check_rotations(clip):
    """A joint without rotation channels must keep the identity rotation (BVH cannot say
    otherwise): within 1e-6 rad, q of any scale and either sign, and not zero or non-finite."""
    fixed = np.array([not any(c in _ROTATIONS for c in ch) for ch in clip.channels], bool)
    if not fixed.any() or clip.n_frames == 0:
        return
    q = clip.joints["q"][:, fixed].astype(np.float64)
    vector, scalar = np.sqrt(np.einsum("...i,...i->...", q[..., :3], q[..., :3])), np.abs(q[..., 3])
    # 2 atan2(|v|, |w|) <= 1e-6 rad with 0 < |w| < inf; NaN fails the comparison
    rotated = ~((vector <= np.tan(5e-7) * scalar) & (scalar > 0) & (scalar < np.inf))
    if rotated.any():
        f, k = np.unravel_index(np.argmax(rotated), rotated.shape)
        j = int(np.flatnonzero(fixed)[k])
        raise ValueError(f"clip.joints['q'] of joint {j} ({clip.names[j]!r}) is not the identity rotation in frame {f} "
                         f"({clip.joints['q'][f, j].tolist()}), and the joint has no rotation channels to write it: "
                         f"give it three rotation channels")


def _write_hierarchy(clip, out):
    """Writes the HIERARCHY section of `clip` to the text stream `out`: depth-first from each
    root in turn, a joint's children in their clip order, its End Sites after them. Returns the
    joints in the order written (the order load() gives them)."""
    children = [[] for _ in range(clip.n_joints)]
    roots = []
    for j, p in enumerate(clip.parents.tolist()):
        (children[p] if p >= 0 else roots).append(j)
    ends = [[] for _ in range(clip.n_joints)]
    for parent, offset in zip(clip.end_sites.tolist(), clip.end_offsets):
        ends[parent].append(offset)

    def numbers(values):
        return " ".join(repr(float(v)).removesuffix(".0") for v in values)

    out.write("HIERARCHY\n")
    order = []
    # an explicit stack (no recursion): ("open", joint, depth) writes a joint and queues its
    # children, End Sites and closing brace, in file order
    stack = [("open", r, 0) for r in reversed(roots)]
    while stack:
        action, j, depth = stack.pop()
        pad = "\t" * min(depth, MAX_INDENT)
        if action == "open":
            order.append(j)
            out.write(f"{pad}{'ROOT' if depth == 0 else 'JOINT'} {clip.names[j]}\n{pad}{{\n")
            out.write(f"{pad}\tOFFSET {numbers(clip.offsets[j])}\n")
            out.write(f"{pad}\tCHANNELS {len(clip.channels[j])}{''.join(' ' + c for c in clip.channels[j])}\n")
            stack.append(("close", j, depth))
            stack.extend(("open", c, depth + 1) for c in reversed(children[j]))
        else:  # after the children: the End Sites, then the brace
            inner = "\t" * min(depth + 1, MAX_INDENT)
            for offset in ends[j]:
                out.write(f"{inner}End Site\n{inner}{{\n{inner}\tOFFSET {numbers(offset)}\n{inner}}}\n")
            out.write(f"{pad}}}\n")
    return order


def save(clip, path_or_file):
    """Write a Clip as BVH: its hierarchy, then ``clip.motion`` (computed from ``clip.joints``:
    each joint's rotation as its Euler channels in its own order, in degrees, its position
    channels as translation - OFFSET).

    Every value is the shortest decimal that reads back as the same float32 (-17 is written
    "-17"); OFFSETs and the frame time are written as repr of the float. load(save(clip))
    gives the rotations back within 1e-6 rad and the translations within 1e-6 relative (exactly
    the file's values for the frames of a clip as load() returned it that were not edited). No
    recursion: any depth of hierarchy saves (indentation stops growing at MAX_INDENT tabs).

    A BVH file nests each joint in its parent, so it lists the joints depth-first (each root,
    then its first child's subtree, ...) and a joint's End Sites after its children. A clip in
    another order (any order with parents before children is a valid Clip: breadth-first, for
    example) is written depth-first, each joint with its own channel values, and loads back in
    that depth-first order: match the joints of the clip loaded back by name, not by position.
    The End Sites load back in the order written (each joint's after its children's),
    which is load()'s own order: a clip that lists them otherwise gets them back reordered,
    each with its OFFSET (positions() lists End Site tips in that order).

    A path is written atomically (a temporary file in the same folder, renamed over the path
    once complete): a failed save leaves the file it would replace as it was, and no partial
    file. The new file keeps the permission bits of the one it replaces (a new file gets the
    umask's); a hard link to the old file keeps the old contents. Nothing is written when the
    clip cannot be saved.

    Raises TypeError for a clip that is not a Clip or a destination that is neither a path nor
    a writable file; ValueError for a field that Clip() would refuse (checked again: fields may
    have been assigned since), a joint name that would not read back as itself (empty, or with
    whitespace other than single spaces between words), a zero or non-finite rotation or
    translation, a translation that differs from the OFFSET on an axis without a position
    channel, a joint without rotation channels whose rotation is not the identity (within 1e-6
    rad), or a frame_time that load() would refuse (outside FRAME_TIME_RANGE, 1e-6 to 3600 s);
    FileNotFoundError for a folder that does not exist; OSError when the file cannot be written.
    """
    if not isinstance(clip, Clip):
        raise TypeError(f"clip must be a jointmath.bvh.Clip, got {type(clip).__name__}")
    if not (isinstance(path_or_file, (str, os.PathLike)) or hasattr(path_or_file, "write")):
        raise TypeError(f"path_or_file must be a path or a file open for writing, got {type(path_or_file).__name__}")
    loaded = getattr(clip, "_loaded_motion", None)
    clip = dataclasses.replace(clip)  # the fields checked again (and converted) by Clip itself
    clip._loaded_motion = loaded
    low, high = FRAME_TIME_RANGE
    if not low <= clip.frame_time <= high:
        raise ValueError(f"clip.frame_time must be between {low:g} and {high:g} seconds to be read back as BVH "
                         f"(1,000,000 to 1/3600 frames per second), got {clip.frame_time!r}")
    _check_names(clip)
    _check_offsets(clip)
    _check_translations(clip, clip.joints)
    _check_rotations(clip)
    hierarchy = io.StringIO()
    order = _write_hierarchy(clip, hierarchy)
    motion = clip.motion
    first_column = np.cumsum([0] + [len(ch) for ch in clip.channels])
    if order != sorted(order):
        motion = motion[:, np.concatenate([np.arange(first_column[j], first_column[j + 1]) for j in order])]
    body = _core._format_motion(np.ascontiguousarray(motion, np.float32))
    if isinstance(body, int):
        f, c = divmod(body, motion.shape[1])
        j = order[int(np.searchsorted(np.cumsum([len(clip.channels[j]) for j in order]), c, side="right"))]
        raise ValueError(f"clip.joints hold a zero or non-finite rotation or a non-finite translation in frame {f}, "
                         f"joint {j} ({clip.names[j]!r}): BVH cannot hold it")
    hierarchy.write(f"MOTION\nFrames: {clip.n_frames}\nFrame Time: {clip.frame_time!r}\n")
    text = hierarchy.getvalue().encode("utf-8") + body
    if isinstance(path_or_file, (str, os.PathLike)):
        write_atomic(os.fspath(path_or_file), lambda f: f.write(text))
    elif isinstance(path_or_file, io.TextIOBase):
        path_or_file.write(text.decode("utf-8"))
    else:
        try:
            path_or_file.write(text)
        except TypeError:  # a text file that is not an io.TextIOBase
            path_or_file.write(text.decode("utf-8"))


def resample(clip, fps):
    """The clip at `fps` frames per second: frames at exact multiples of 1 / fps covering the
    same duration, rotations slerped and translations lerped between the source frames around
    each new time (jointmath.resample_joints). A new Clip with a copy of the skeleton (editing
    one clip's offsets leaves the other's alone); it saves as BVH like any clip. Any ratio works (120 -> 30, 120 -> 100, 30 -> 60).
    """
    if not isinstance(clip, Clip):
        raise TypeError(f"clip must be a jointmath.bvh.Clip, got {type(clip).__name__}")
    parents, offsets, end_sites, end_offsets = _checked_skeleton(clip)  # new arrays: a copy of the skeleton
    joints = _core.resample_joints(_checked_frames(clip), _frame_seconds(clip.frame_time), fps)
    return dataclasses.replace(clip, joints=joints, frame_time=1.0 / float(fps), names=list(clip.names),
                               parents=parents, offsets=offsets, channels=list(clip.channels), end_sites=end_sites,
                               end_offsets=end_offsets)
