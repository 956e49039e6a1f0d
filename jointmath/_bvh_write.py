"""Writing BVH: the hierarchy depth-first from each root, then the raw channel values
(Clip.motion), each the shortest decimal that reads back as the same float32 (in C,
jointmath/_motion.c)."""
import dataclasses
import io
import os

import numpy as np

from . import _core
from ._bvh_clip import Clip
from ._bvh_continuity import channel_values
from ._bvh_format import FRAME_TIME_RANGE, _FLOAT32_OVERFLOW, _POSITIONS, _ROTATIONS, _WORD, checked_convention
from ._files import write_atomic
from ._records import checked_joints

__all__ = ["MAX_INDENT", "save"]


#: save() indents a joint by its depth in tabs, up to this many (a 10,000-deep chain stays small).
MAX_INDENT = 32


def save(clip, path_or_file, positions=None):
    """Write a Clip as BVH.

    The file holds the clip's hierarchy, then ``clip.motion``, computed from ``clip.joints``:
    each joint's rotation as its Euler channels in its own order, in degrees, its position
    channels as translation - OFFSET, or as the translation itself in the "channel"
    convention. Every value is the shortest decimal that reads back as
    the same float32 (-17 is written "-17"); OFFSETs and the frame time are written as repr of
    the float. load(save(clip)) gives the rotations back within 1e-6 rad and the translations
    within 1e-6 relative (exactly the file's values for the frames of a clip as load()
    returned it that were not edited). No recursion: any depth of hierarchy saves
    (indentation stops growing at MAX_INDENT tabs).

    Parameters
    ----------
    clip : Clip
        The clip to write; every field is checked again (fields may have been assigned since
        construction).
    path_or_file : str, os.PathLike or file
        A path, written atomically (a temporary file in the same folder, renamed over the path
        once complete: a failed save leaves the file it would replace as it was, and no partial
        file; the new file keeps the permission bits of the one it replaces, a new file gets
        the umask's; a hard link to the old file keeps the old contents), or a file open for
        writing in text or binary mode.
    positions : {"offset+channel", "channel"}, optional
        The convention of the position channels written (see load). Default: the clip's
        ``position_channels``, the one load() read it with, so that a loaded clip saves back
        to the same numbers. "offset+channel" is how CMU files are written; "channel" is how
        Blender's importer reads joints below the root.

    Raises
    ------
    TypeError
        For a clip that is not a Clip, a destination that is neither a path nor a writable
        file, or a `positions` that is not a str.
    ValueError
        For a field that Clip() would refuse; a joint name that would not read back as itself
        (empty, or with whitespace other than single spaces between words); a zero or
        non-finite rotation or translation; a translation that differs from the OFFSET on an
        axis without a position channel; a joint without rotation channels whose rotation is
        not the identity (within 1e-6 rad); a frame_time outside FRAME_TIME_RANGE (1e-6 to
        3600 s), which load() would refuse; an unknown `positions`.
    FileNotFoundError
        For a folder that does not exist.
    OSError
        When the file cannot be written.

    See Also
    --------
    load

    Notes
    -----
    A BVH file nests each joint in its parent, so it lists the joints depth-first (each root,
    then its first child's subtree, ...) and a joint's End Sites after its children. A clip in
    another order (any order with parents before children is a valid Clip: breadth-first, for
    example) is written depth-first, each joint with its own channel values, and loads back in
    that depth-first order: match the joints of the clip loaded back by name, not by position.
    The End Sites load back in the order written (each joint's after its children's), which is
    load()'s own order: a clip that lists them otherwise gets them back reordered, each with its
    OFFSET (positions() lists End Site tips in that order). Nothing is written when the clip
    cannot be saved.

    Examples
    --------
    >>> import io
    >>> from jointmath import bvh, data
    >>> clip = bvh.load(data.sample_clip_path())
    >>> out = io.StringIO()
    >>> bvh.save(clip, out)
    >>> [line.strip() for line in out.getvalue().splitlines()[:4]]
    ['HIERARCHY', 'ROOT Hips', '{', 'OFFSET 0 0 0']
    >>> _ = out.seek(0)
    >>> again = bvh.load(out)  # the unedited frames come back exactly
    >>> again.joints.tobytes() == clip.joints.tobytes(), again.names == clip.names
    (True, True)

    The same motion in the other convention: the root's channels hold OFFSET + change.

    >>> whole = io.StringIO()
    >>> bvh.save(clip, whole, positions="channel")
    >>> _ = whole.seek(0)
    >>> bvh.load(whole, positions="channel").joints.tobytes() == clip.joints.tobytes()
    True
    """
    if not isinstance(clip, Clip):
        raise TypeError(f"clip must be a jointmath.bvh.Clip, got {type(clip).__name__}")
    if not (isinstance(path_or_file, (str, os.PathLike)) or hasattr(path_or_file, "write")):
        raise TypeError(f"path_or_file must be a path or a file open for writing, got {type(path_or_file).__name__}")
    if positions is not None:
        checked_convention(positions)
    loaded = getattr(clip, "_loaded_motion", None)
    clip = dataclasses.replace(clip)  # the fields checked again (and converted) by Clip itself
    _write(clip, clip.joints, loaded, path_or_file, clip.position_channels if positions is None else positions)


def _save_frames(clip, joints, path_or_file):
    """save() of `clip`'s skeleton with `joints` as its frames, without building that clip: for
    a clip whose fields Clip() checked and nobody assigned since (the command's own), and joints
    of its skeleton ((F, J) JOINT_QUAT, checked here as Clip() checks them). The frames are
    computed from `joints` (no file values are reused)."""
    checked_joints(joints)
    if joints.ndim != 2 or joints.shape[1] != clip.n_joints:
        raise ValueError(f"joints must have shape (frames, {clip.n_joints}), got shape {joints.shape}")
    _write(clip, joints, None, path_or_file, clip.position_channels)


def _write(clip, joints, loaded, path_or_file, positions):
    """save()'s checks and writing, for a checked `clip` with the frames `joints` and the file
    values `loaded` (or None) that Clip.motion may reuse, the position channels in the
    convention `positions`."""
    low, high = FRAME_TIME_RANGE
    if not low <= clip.frame_time <= high:
        raise ValueError(f"clip.frame_time must be between {low:g} and {high:g} seconds to be read back as BVH "
                         f"(1,000,000 to 1/3600 frames per second), got {clip.frame_time!r}")
    _check_names(clip)
    _check_offsets(clip)
    _check_translations(clip, joints)
    _check_rotations(clip, joints)
    hierarchy = io.StringIO()
    order = _write_hierarchy(clip, hierarchy)
    motion = channel_values(joints, clip.offsets, clip.channels, loaded, positions)
    first_column = np.cumsum([0] + [len(ch) for ch in clip.channels])
    if order != sorted(order):
        motion = motion[:, np.concatenate([np.arange(first_column[j], first_column[j + 1]) for j in order])]
    body = _core._format_motion(np.ascontiguousarray(motion, np.float32))
    if isinstance(body, int):
        f, c = divmod(body, motion.shape[1])
        j = order[int(np.searchsorted(np.cumsum([len(clip.channels[j]) for j in order]), c, side="right"))]
        raise ValueError(f"clip.joints hold a zero or non-finite rotation or a non-finite translation in frame {f}, "
                         f"joint {j} ({clip.names[j]!r}): BVH cannot hold it")
    hierarchy.write(f"MOTION\nFrames: {len(joints)}\nFrame Time: {clip.frame_time!r}\n")
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
    if not fixed_axes.any() or len(motion_joints) == 0:
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


def _check_rotations(clip, joints):
    """A joint without rotation channels must keep the identity rotation (BVH cannot say
    otherwise): within 1e-6 rad, q of any scale and either sign, and not zero or non-finite."""
    fixed = np.array([not any(c in _ROTATIONS for c in ch) for ch in clip.channels], bool)
    if not fixed.any() or len(joints) == 0:
        return
    q = joints["q"][:, fixed].astype(np.float64)
    vector, scalar = np.sqrt(np.einsum("...i,...i->...", q[..., :3], q[..., :3])), np.abs(q[..., 3])
    # 2 atan2(|v|, |w|) <= 1e-6 rad with 0 < |w| < inf; NaN fails the comparison
    rotated = ~((vector <= np.tan(5e-7) * scalar) & (scalar > 0) & (scalar < np.inf))
    if rotated.any():
        f, k = np.unravel_index(np.argmax(rotated), rotated.shape)
        j = int(np.flatnonzero(fixed)[k])
        raise ValueError(f"clip.joints['q'] of joint {j} ({clip.names[j]!r}) is not the identity rotation in frame {f} "
                         f"({joints['q'][f, j].tolist()}), and the joint has no rotation channels to write it: "
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
