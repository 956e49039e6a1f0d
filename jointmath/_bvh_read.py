"""Reading BVH: the HIERARCHY block tokenised in Python (it is small), the MOTION block read in
C in one pass straight into float32 (jointmath/_motion.c), the joints built from it in C."""
import os
import re
import stat
import warnings

import numpy as np

from . import _core
from ._bvh_clip import Clip
from ._bvh_format import (FRAME_TIME_RANGE, POSITION_CONVENTIONS, _FLOAT32_OVERFLOW, _WORD, _channel_problem,
                          _joints_from_motion, position_base)
from ._bvh_positions import detect_convention

__all__ = ["BVHWarning", "load"]


class BVHWarning(UserWarning):
    r"""A readable BVH file that breaks the format in a way load() could repair.

    The message names the file and line and says what load() did: more frame lines than
    "Frames:" declares (the declared frames are kept), or a joint name that is not UTF-8 (read
    as cp1252).

    Examples
    --------
    >>> import io, warnings
    >>> from jointmath import bvh
    >>> text = ("HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Xposition\n}\n"
    ...         "MOTION\nFrames: 1\nFrame Time: 0.1\n1\n2\n")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     clip = bvh.load(io.StringIO(text))
    >>> clip.n_frames, caught[0].category.__name__
    (1, 'BVHWarning')
    >>> print(caught[0].message)
    <file>:11: Frames: 1 but the file holds 2 frame lines; the last 1 (up to this line) are ignored
    """


_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_LINE_END = re.compile(rb"\r\n|\r|\n")


def load(path_or_file, positions="auto"):
    """Read a BVH file into a Clip.

    Parameters
    ----------
    path_or_file : str, os.PathLike, file or Traversable
        A path; a file opened in text or binary mode; or an importlib.resources Traversable
        such as ``resources.files(...) / "clip.bvh"`` or a zipfile.Path. A path is read into
        memory in one call, never memory-mapped.
    positions : {"auto", "offset+channel", "channel"}, optional
        How the position channels give a joint's translation. "offset+channel": added to its
        OFFSET (CMU files, and every file jointmath wrote before it knew of conventions).
        "channel": the whole local translation on their axes (Blender's exporter, the
        Bandai-Namco dataset), the OFFSET giving the rest pose and the axes without a channel.
        "auto" (default) decides from the file: see Notes.

    Returns
    -------
    Clip
        The skeleton and its frames, named after the file's stem, with ``position_channels``
        the convention it was read with. It keeps the file's channel values, which ``motion``
        and save() give back exactly for the frames left unedited.

    Raises
    ------
    ValueError
        With the file name and line number for a malformed or truncated file, and naming the
        file for one that another program changed while it was read.
    TypeError
        For an argument that is none of these, or a `positions` that is not a str.

    Warns
    -----
    BVHWarning
        For frame lines beyond the declared "Frames:" (ignored) and for names that are not
        UTF-8 (read as cp1252); load() goes on.

    See Also
    --------
    save, jointmath.data.sample_clip_path

    Notes
    -----
    positions="auto" looks only at joints with position channels, on the axes where their
    OFFSET is not zero (elsewhere both readings agree). On each such axis it divides the
    channel's median over the frames by the OFFSET: near 1 (within 0.25) the channel holds the
    whole translation, near 0 a change added to the OFFSET. The joints below the root decide
    when any has such an axis: "channel" when all of them read as whole translations,
    "offset+channel" when all read as changes, and otherwise "offset+channel" with a note on
    the clip saying the file was undecided. The root decides alone only where no other joint
    can (its travel over the ground leaves its OFFSET's axes, usually the hip height, alone).
    A CMU file (position channels on the root only, OFFSET zero) reads as "offset+channel".
    When "auto" chooses "channel", ``clip.notes`` says so, once.

    Examples
    --------
    >>> from jointmath import bvh, data
    >>> clip = bvh.load(data.sample_clip_path())
    >>> clip
    <Clip 'sample_01_01': 31 joints, 381 frames at 120 fps, 3.16665 s>
    >>> clip.names[:3], clip.channels[0]
    (['Hips', 'LHipJoint', 'LeftUpLeg'], ('Xposition', 'Yposition', 'Zposition', 'Zrotation', 'Yrotation', 'Xrotation'))
    >>> clip.position_channels
    'offset+channel'

    A joint whose position channels hold its OFFSET (as Blender writes them) reads as "channel":

    >>> import io
    >>> text = ("HIERARCHY\\nROOT Hips\\n{\\nOFFSET 0 0 0\\nCHANNELS 3 Zrotation Xrotation Yrotation\\n"
    ...         "JOINT Knee\\n{\\nOFFSET 0 -4 0\\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\\n"
    ...         "End Site\\n{\\nOFFSET 0 -4 0\\n}\\n}\\n}\\nMOTION\\nFrames: 1\\nFrame Time: 0.1\\n0 0 0 0 -4 0 0 0 0\\n")
    >>> knee = bvh.load(io.StringIO(text))
    >>> knee.position_channels, knee.joints["t"][0, 1, :3].tolist()
    ('channel', [0.0, -4.0, 0.0])
    >>> bvh.load(io.StringIO(text), positions="offset+channel").joints["t"][0, 1, :3].tolist()
    [0.0, -8.0, 0.0]
    """
    if positions != "auto":
        _checked_positions(positions)
    notes = []
    try:
        return _read(path_or_file, notes, positions)
    finally:  # also before an error: a warning can explain it
        for note in notes:
            warnings.warn(note, BVHWarning, stacklevel=2)


def _checked_positions(positions):
    choices = ("auto",) + POSITION_CONVENTIONS
    if not isinstance(positions, str):
        raise TypeError(f"positions must be a str, one of {', '.join(map(repr, choices))}, got {type(positions).__name__}")
    if positions not in choices:
        raise ValueError(f"positions must be one of {', '.join(map(repr, choices))}, got {positions!r}")


def _read(path_or_file, notes, positions="auto"):
    """load() with the reader's warnings appended to the list `notes` as text instead of given:
    what process_file uses, in threads that must not share the warnings module's state."""
    _checked_positions(positions)
    data, source, file_name = _file_bytes(path_or_file)
    lines = _Lines(data, source, notes)
    # Windows exporters often start the file with a byte-order mark; it is not part of "HIERARCHY"
    if data[:3] == b"\xef\xbb\xbf":
        lines.pos = 3
    names, parents, offsets, channels, end_sites, end_offsets = _parse_hierarchy(lines)
    n_channels = sum(len(c) for c in channels)
    frame_time, motion = _parse_motion(lines, n_channels)
    offsets = np.array(offsets, np.float64).reshape(-1, 3)
    clip_notes = []
    if positions == "auto":
        positions, note = detect_convention(motion, offsets, channels, parents, names)
        if note:
            clip_notes.append(f"{source}: {note}")
    joints = _joints_from_motion(motion, position_base(offsets, channels, positions), channels)
    clip = Clip(names=names, parents=np.array(parents, np.int64), offsets=offsets, channels=channels,
                frame_time=frame_time, joints=joints,
                end_sites=np.array(end_sites, np.int64), end_offsets=np.array(end_offsets, np.float64).reshape(-1, 3),
                name=os.path.splitext(os.path.basename(file_name))[0], position_channels=positions, notes=clip_notes)
    clip._loaded_motion = motion  # see Clip.motion: used only while it gives exactly these joints
    return clip


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
