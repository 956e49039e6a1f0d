"""BVH motion-capture files: load into a Clip, save back.

Our own parser: the HIERARCHY block is tokenised in Python (it is small); the MOTION block is
read by NumPy's C text parser. Tabs, CRLF line ends, exponents and leading-dot floats are
accepted. A malformed or truncated file raises ValueError naming the line; no partial Clip is
ever returned. More frame lines than "Frames:" declares (some exporters add one) keeps the
declared frames and warns with BVHWarning.

Rotations: a joint's Euler channels, in the order they appear, are intrinsic rotations, so
"Zrotation Xrotation Yrotation" means R = Rz(z) Rx(x) Ry(y) (scipy's from_euler("ZXY", ...),
degrees). Translations: a joint's translation is its OFFSET plus its position channels
(Xposition, Yposition, Zposition; a missing one counts as 0), in every frame.
"""
import io
import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from ._records import JOINT_QUAT

__all__ = ["BVHWarning", "Clip", "joints_from_motion", "load", "resample", "save"]


class BVHWarning(UserWarning):
    """A readable file that breaks the format in a way load() could repair (said what it did)."""


_ROTATIONS = {"Xrotation": "X", "Yrotation": "Y", "Zrotation": "Z"}
_POSITIONS = {"Xposition": 0, "Yposition": 1, "Zposition": 2}


@dataclass
class Clip:
    """A motion clip: a skeleton and its frames. Plain NumPy arrays and lists; pickles.

    names          joint names, J of them, parents before children (file order)
    parents        (J,) int64, the parent's index, -1 for a root
    offsets        (J, 3) float64, each joint's OFFSET
    channels       J tuples of channel names as in the file ("Xposition", "Zrotation", ...)
    orders         J rotation orders from the channel order, e.g. "ZXY" ("" without rotation)
    end_sites      (E,) int64 parent joint of each End Site
    end_offsets    (E, 3) float64, each End Site's OFFSET
    frame_time     seconds per frame, as written in the file
    motion         (F, C) float32, the raw channel values (C = total channels, file order)
    joints         (F, J) JOINT_QUAT: local rotation from the Euler channels, translation =
                   OFFSET + position channels
    """

    names: list
    parents: np.ndarray
    offsets: np.ndarray
    channels: list
    orders: list
    end_sites: np.ndarray
    end_offsets: np.ndarray
    frame_time: float
    motion: np.ndarray
    joints: np.ndarray = field(repr=False)

    @property
    def fps(self):
        """Frames per second, 1 / frame_time."""
        return 1.0 / self.frame_time

    @property
    def n_frames(self):
        return self.motion.shape[0]

    @property
    def n_joints(self):
        return len(self.names)


class _Lines:
    """The file's lines with 1-based numbers, and errors that name them."""

    def __init__(self, text, source):
        self.lines = text.splitlines()
        self.source = source
        self.i = 0

    def error(self, message, lineno=None):
        lineno = self.i if lineno is None else lineno
        return ValueError(f"{self.source}:{lineno}: {message}")

    def next_tokens(self, what):
        """The tokens of the next non-blank line (and its number); a ValueError at end of file."""
        while self.i < len(self.lines):
            self.i += 1
            tokens = self.lines[self.i - 1].split()
            if tokens:
                return tokens
        raise self.error(f"unexpected end of file, expected {what}", len(self.lines))


def _floats(lines, tokens, count, what):
    if len(tokens) != count:
        raise lines.error(f"{what} needs {count} numbers, got {len(tokens)}")
    try:
        return [float(t) for t in tokens]
    except ValueError:
        raise lines.error(f"{what}: not a number in {' '.join(tokens)!r}") from None


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
    if len(tokens) < 2 or not tokens[1].isdigit():
        raise lines.error("CHANNELS needs a count")
    count = int(tokens[1])
    found = tuple(tokens[2:])
    if len(found) != count:
        raise lines.error(f"CHANNELS says {count} but lists {len(found)}")
    for name in found:
        if name not in _ROTATIONS and name not in _POSITIONS:
            raise lines.error(f"unknown channel {name!r}")
    if len(set(found)) != len(found):
        raise lines.error("a channel appears twice")
    rotations = [c for c in found if c in _ROTATIONS]
    if len(rotations) not in (0, 3):
        raise lines.error(f"a joint needs 0 or 3 rotation channels, got {len(rotations)}")
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
    try:
        n_frames = int(frames_text)
    except ValueError:
        raise lines.error(f"Frames: not a whole number: {frames_text!r}") from None
    if n_frames < 0:
        raise lines.error("Frames: negative")
    time_text = _header_value(lines, "Frame Time")
    try:
        frame_time = float(time_text)
    except ValueError:
        raise lines.error(f"Frame Time: not a number: {time_text!r}") from None
    if not (frame_time > 0 and np.isfinite(frame_time)):
        raise lines.error("Frame Time must be positive")
    first = lines.i
    body = lines.lines[first:]
    try:
        motion = np.loadtxt(body, dtype=np.float32, ndmin=2) if body else np.zeros((0, n_channels), np.float32)
    except ValueError:
        raise _motion_error(lines, first, n_channels) from None
    if motion.shape[0] and motion.shape[1] != n_channels:
        raise _motion_error(lines, first, n_channels)
    if motion.shape[0] < n_frames:
        raise lines.error(f"Frames: {n_frames} but the file ends after {motion.shape[0]} frames (truncated?)",
                          len(lines.lines))
    if motion.shape[0] > n_frames:
        # some exporters write one frame more than they declare: keep what is declared, say so
        warnings.warn(f"{lines.source}: Frames: {n_frames} but the file holds {motion.shape[0]} frame lines; "
                      f"the last {motion.shape[0] - n_frames} are ignored", BVHWarning, stacklevel=3)
        motion = motion[:n_frames]
    if motion.shape[0] == 0:
        motion = motion.reshape(0, n_channels)
    return frame_time, motion


def _motion_error(lines, first, n_channels):
    """Finds the first bad MOTION line (slow path, only when the fast parser refused)."""
    for offset, line in enumerate(lines.lines[first:]):
        tokens = line.split()
        if not tokens:
            continue
        lineno = first + offset + 1
        if len(tokens) != n_channels:
            return lines.error(f"a frame needs {n_channels} values, got {len(tokens)}", lineno)
        for t in tokens:
            try:
                float(t)
            except ValueError:
                return lines.error(f"not a number: {t!r}", lineno)
    return lines.error("unreadable MOTION block", first)


def _read_text(path_or_file):
    if isinstance(path_or_file, (str, os.PathLike)):
        with open(path_or_file, "rb") as f:
            data, source = f.read(), os.fspath(path_or_file)
    elif hasattr(path_or_file, "read"):
        data, source = path_or_file.read(), getattr(path_or_file, "name", "<file>")
    else:
        raise TypeError(f"path_or_file must be a path or an open file, got {type(path_or_file).__name__}")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{source}: not a text file ({e})") from None
    # Windows exporters often start the file with a byte-order mark; it is not part of "HIERARCHY"
    return data.removeprefix("\ufeff"), str(source)


def load(path_or_file):
    """Read a BVH file (a path, or a file opened in text or binary mode) into a Clip.

    Raises ValueError with the file name and line number for a malformed or truncated file,
    TypeError for an argument that is neither a path nor a file.
    """
    text, source = _read_text(path_or_file)
    lines = _Lines(text, source)
    names, parents, offsets, channels, end_sites, end_offsets = _parse_hierarchy(lines)
    n_channels = sum(len(c) for c in channels)
    frame_time, motion = _parse_motion(lines, n_channels)
    offsets = np.array(offsets, np.float64).reshape(-1, 3)
    orders = ["".join(_ROTATIONS[c] for c in ch if c in _ROTATIONS) for ch in channels]
    return Clip(
        names=names,
        parents=np.array(parents, np.int64),
        offsets=offsets,
        channels=channels,
        orders=orders,
        end_sites=np.array(end_sites, np.int64),
        end_offsets=np.array(end_offsets, np.float64).reshape(-1, 3),
        frame_time=frame_time,
        motion=motion,
        joints=joints_from_motion(motion, offsets, channels),
    )


def joints_from_motion(motion, offsets, channels):
    """(F, J) JOINT_QUAT local joints from raw channel values (see the module docstring)."""
    from ._euler import euler_to_quat

    n_frames, n_joints = motion.shape[0], len(channels)
    joints = np.zeros((n_frames, n_joints), JOINT_QUAT)
    joints["t"][..., :3] = offsets.astype(np.float32)
    joints["q"][..., 3] = 1
    column = 0
    by_order = {}  # rotation order -> (joint indices, their three rotation columns each)
    for j, ch in enumerate(channels):
        order, rotation_columns = "", []
        for name in ch:
            if name in _POSITIONS:
                joints["t"][:, j, _POSITIONS[name]] += motion[:, column]
            else:
                order += _ROTATIONS[name]
                rotation_columns.append(column)
            column += 1
        if order:
            joint_ids, columns = by_order.setdefault(order, ([], []))
            joint_ids.append(j)
            columns.append(rotation_columns)
    for order, (joint_ids, columns) in by_order.items():
        angles = motion[:, np.array(columns)]  # (F, joints of this order, 3)
        joints["q"][:, joint_ids] = euler_to_quat(np.ascontiguousarray(angles), order)
    return joints


def save(clip, path_or_file):
    """Write a Clip as BVH (its hierarchy and its raw motion channels).

    Values are written with 9 significant digits, so load(save(clip)) gives back the same
    float32 motion; the frame time is written as repr(clip.frame_time).
    """
    out = io.StringIO()
    out.write("HIERARCHY\n")
    children = {j: [] for j in range(len(clip.names))}
    roots = []
    for j, p in enumerate(clip.parents):
        (children[int(p)] if p >= 0 else roots).append(j)
    ends = {}
    for parent, offset in zip(clip.end_sites, clip.end_offsets):
        ends.setdefault(int(parent), []).append(offset)

    def number(v):
        return f"{float(v):.9g}"

    def write_joint(j, depth):
        pad = "\t" * depth
        out.write(f"{pad}{'ROOT' if clip.parents[j] < 0 else 'JOINT'} {clip.names[j]}\n{pad}{{\n")
        out.write(f"{pad}\tOFFSET {' '.join(number(v) for v in clip.offsets[j])}\n")
        out.write(f"{pad}\tCHANNELS {len(clip.channels[j])}{''.join(' ' + c for c in clip.channels[j])}\n")
        for child in children[j]:
            write_joint(child, depth + 1)
        for offset in ends.get(j, []):
            out.write(f"{pad}\tEnd Site\n{pad}\t{{\n{pad}\t\tOFFSET {' '.join(number(v) for v in offset)}\n{pad}\t}}\n")
        out.write(f"{pad}}}\n")

    for root in roots:
        write_joint(root, 0)
    out.write(f"MOTION\nFrames: {clip.motion.shape[0]}\nFrame Time: {clip.frame_time!r}\n")
    if clip.motion.size:
        np.savetxt(out, clip.motion, fmt="%.9g", delimiter=" ")
    text = out.getvalue()
    if isinstance(path_or_file, (str, os.PathLike)):
        with open(path_or_file, "w", newline="\n") as f:
            f.write(text)
    else:
        path_or_file.write(text)


def resample(clip, fps):
    """The clip at `fps` frames per second: frames at exact multiples of 1 / fps covering the
    same duration, rotations slerped and translations lerped between the source frames around
    each new time (jointmath.resample_joints). The raw motion channels are recomputed from the
    resampled joints (positions = translation - OFFSET, Euler angles by quat_to_euler in each
    joint's order), so the result saves as BVH. Any ratio works (120 -> 30, 120 -> 100, 30 -> 60).
    """
    from ._euler import quat_to_euler
    from ._mocap import resample_joints

    if not isinstance(clip, Clip):
        raise TypeError(f"clip must be a jointmath.bvh.Clip, got {type(clip).__name__}")
    joints = resample_joints(clip.joints, clip.frame_time, fps)
    motion = np.empty((joints.shape[0], clip.motion.shape[1]), np.float32)
    column = 0
    for j, channels in enumerate(clip.channels):
        rotation = [column + k for k, c in enumerate(channels) if c in _ROTATIONS]
        if rotation:
            motion[:, rotation] = quat_to_euler(joints["q"][:, j], clip.orders[j])
        for k, c in enumerate(channels):
            if c in _POSITIONS:
                axis = _POSITIONS[c]
                motion[:, column + k] = joints["t"][:, j, axis] - clip.offsets[j, axis]
        column += len(channels)
    return Clip(names=list(clip.names), parents=clip.parents.copy(), offsets=clip.offsets.copy(),
                channels=list(clip.channels), orders=list(clip.orders), end_sites=clip.end_sites.copy(),
                end_offsets=clip.end_offsets.copy(), frame_time=1.0 / float(fps), motion=motion, joints=joints)
