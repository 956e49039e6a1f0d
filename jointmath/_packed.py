"""The packed-clip archive (.npz, compressed) that `python -m jointmath --format packed --out`
and jointmath.save_packed write: the packed joints and the skeleton, read back by
jointmath.load_packed."""
import json
import os
import struct
import zipfile
import zlib

import numpy as np

from . import bvh
from ._bvh_format import FRAME_TIME_RANGE, POSITION_CONVENTIONS, checked_convention
from ._bvh_write import _check_names, _check_offsets, _check_rotations, _check_translations
from ._core import make_continuous, pack_joints, unpack_joints
from ._files import write_atomic

__all__ = ["PACK_FORMAT", "load_packed", "save_packed"]


#: Version of the packed-clip archive, stored in it as `pack_format`: 2 = mid-tread fields
#: (code = round(c M) + M). Archives without it hold the earlier centred codes, which the
#: current decoder would misread by half a step, so load_packed refuses them.
PACK_FORMAT = 2


def _members(clip, packed):
    """The members of the archive of `clip` and its packed joints, as save_packed writes them."""
    return {"pack_format": np.array(PACK_FORMAT),
            "packed": packed.view(np.uint8).reshape(packed.shape + (packed.dtype.itemsize,)),
            "packed_dtype": np.array(str(packed.dtype.itemsize)), "names": np.array(clip.names, dtype=str),
            "parents": np.asarray(clip.parents), "offsets": np.asarray(clip.offsets),
            "orders": np.array(clip.orders, dtype=str),
            "channels": np.array(json.dumps([list(c) for c in clip.channels])),
            "end_sites": np.asarray(clip.end_sites), "end_offsets": np.asarray(clip.end_offsets),
            "frame_time": np.array(float(clip.frame_time)),
            "position_channels": np.array(clip.position_channels, dtype=str)}


def save_packed(clip, path, packed=None, bits=10):
    """Write a clip as a packed clip archive (.npz), which jointmath.load_packed reads back.

    The archive holds the skeleton, the clip's ``position_channels`` (the BVH convention that
    bvh.save writes it with) and every joint-sample packed with pack_joints (a 10- or
    20-bit-per-component rotation code and a float32 translation, 16 or 20 bytes), compressed
    with np.savez_compressed. The packing is lossy: load_packed returns the unpacked joints.

    Parameters
    ----------
    clip : jointmath.bvh.Clip
        The clip: its skeleton, frame time and (unless `packed` is given) its joints.
    path : str, os.PathLike or file
        Where to write: a path (written atomically: a temporary file in the same folder,
        renamed; the folder must exist) or a binary file open for writing.
    packed : numpy.ndarray, optional
        (F, J) PACKED_JOINT or PACKED_JOINT64, the clip's joints as pack_joints packed them
        (the command passes the ones it measured); default: ``pack_joints(clip.joints, bits)``.
    bits : {10, 20}, optional
        Bits per rotation component when `packed` is not given.

    Returns
    -------
    str, os.PathLike or file
        `path`.

    Raises
    ------
    TypeError
        For a `clip` that is not a Clip, or `packed` that is not a PACKED_JOINT or PACKED_JOINT64
        array.
    ValueError
        For anything load_packed would refuse, checked before a byte is written: `packed` of
        another shape than (frames, joints) of the clip, a skeleton Clip() refuses, a clip
        bvh.save() would refuse (an empty joint name, a rotation or translation its channels
        cannot hold, a frame time outside 1e-6 ... 3600 s, a non-finite translation); `bits`
        other than 10 and 20.

    Examples
    --------
    >>> import os, tempfile
    >>> import jointmath as jm
    >>> from jointmath import bvh, data
    >>> clip = bvh.load(data.sample_clip_path())
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = jm.save_packed(clip, os.path.join(folder, "walk.npz"), bits=20)
    ...     again = jm.load_packed(path)
    >>> again.n_frames == clip.n_frames, again.names == clip.names
    (True, True)
    >>> float(abs(again.joints["t"] - clip.joints["t"]).max())
    0.0
    """
    from ._records import PACKED_JOINT, PACKED_JOINT64

    if not isinstance(clip, bvh.Clip):
        raise TypeError(f"clip must be a jointmath.bvh.Clip, got {type(clip).__name__}")
    if packed is None:
        if bits not in (10, 20):
            raise ValueError(f"bits must be 10 or 20, got {bits!r}")
        if not (isinstance(clip.joints, np.ndarray) and clip.joints.ndim == 2):
            raise ValueError("clip.joints must be a (frames, joints) JOINT_QUAT array")
        packed = pack_joints(clip.joints, bits)
    if not isinstance(packed, np.ndarray) or packed.dtype not in (PACKED_JOINT, PACKED_JOINT64):
        raise TypeError(f"packed must be a PACKED_JOINT or PACKED_JOINT64 array (pack_joints' result), got "
                        f"{getattr(packed, 'dtype', type(packed).__name__)}")
    n_joints = len(clip.names)
    if packed.ndim != 2 or packed.shape[1] != n_joints:
        raise ValueError(f"packed must be (frames, {n_joints}) for the clip's {n_joints} joints, got shape "
                         f"{packed.shape}")
    packed = np.ascontiguousarray(packed)
    members = _members(clip, packed)
    try:  # what load_packed checks, before anything is written: a clip it writes is one it reads
        _clip_from_members(dict(members), clip.name)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"clip cannot be saved as a packed clip that load_packed reads back: {exc}") from exc

    def write(f):
        np.savez_compressed(f, **members)

    if isinstance(path, (str, bytes, os.PathLike)):
        write_atomic(os.fsdecode(path), write)
        return path
    write(path)
    return path


def load_packed(path):
    """Read a packed clip written by save_packed or ``python -m jointmath --format packed --out DIR``
    back into a Clip.

    The joints are the unpacked (lossy) ones, their quaternions made sign-continuous along the
    frames (make_continuous along axis 0: each frame's on the hemisphere of the frame before;
    the first frame's largest component positive). Packing keeps no sign and unpacking makes
    each quaternion's largest component positive, which would leave neighbouring frames on
    opposite hemispheres wherever that component changes, a jump in q for anything that
    differences, blends or averages them (the rotations are the same either way).

    Every member of the archive is checked before the clip is returned: its type and shape
    against the frames and joints of ``packed``, the skeleton as Clip() checks it, ``orders``
    against the channels, and the clip as bvh.save() checks it, so that a clip that loads also
    saves. Nothing is unpickled (an archive holding Python objects is refused).

    Parameters
    ----------
    path : str, os.PathLike or file
        The .npz archive (DIR/<clip>.npz), or a binary file open for reading.

    Returns
    -------
    jointmath.bvh.Clip
        The skeleton and the unpacked frames, named after the file's stem as bvh.load names
        clips, with the ``position_channels`` convention it was saved with ("offset+channel"
        for an archive without that member, written before archives held it). Clip.motion is
        computed from the joints, so the clip saves as BVH like any other.

    Raises
    ------
    ValueError
        For any file that cannot be read as a complete, consistent packed clip, naming the file
        and saying what is wrong (the error that revealed it chained as its cause): a file that
        is not a packed clip archive (empty, another kind of file such as a BVH or a single .npy
        array, a zip archive without the members a packed clip holds); a truncated or corrupt
        archive (a member that fails its CRC check, an invalid zip or .npy structure); an
        archive of another format version (PACK_FORMAT; one without ``pack_format``, such as
        one written before packing fields became mid-tread, lists the members it lacks); a
        record size (``packed_dtype``) other than '16' and '20'; a member of another type or
        shape than save_packed writes, or one that does not fit the frames and joints of
        ``packed``; ``orders`` that are not the rotation orders of ``channels``; a
        ``position_channels`` that names no convention (bvh.POSITION_CONVENTIONS); a skeleton
        Clip() refuses; a clip bvh.save() would refuse (an empty joint name, a rotation or
        translation that its channels cannot hold, a frame_time outside FRAME_TIME_RANGE).
    FileNotFoundError
        For a file that does not exist, as open() raises it.
    IsADirectoryError
        For a path that names a folder, as open() raises it.
    PermissionError
        For a file that cannot be opened for reading, as open() raises it.

    Examples
    --------
    >>> import os, subprocess, sys, tempfile
    >>> import jointmath as jm
    >>> with tempfile.TemporaryDirectory() as out:  # the command on the embedded sample
    ...     done = subprocess.run([sys.executable, "-m", "jointmath", "--format", "packed", "--out", out],
    ...                           capture_output=True)
    ...     clip = jm.load_packed(os.path.join(out, "sample_01_01.npz"))
    >>> clip
    <Clip 'sample_01_01': 31 joints, 381 frames at 120 fps, 3.16665 s>
    """
    if isinstance(path, (str, bytes, os.PathLike)):
        where = os.fsdecode(path)
        name = os.path.splitext(os.path.basename(where))[0]
        with open(path, "rb") as file:  # FileNotFoundError, IsADirectoryError ... as open() raises them
            arrays = _read_archive(file, where)
    else:
        where, name = str(getattr(path, "name", path)), ""
        arrays = _read_archive(path, where)
    try:
        return _clip_from_members(arrays, name)
    except (TypeError, ValueError) as exc:  # json.JSONDecodeError too
        raise ValueError(f"path {where!r} holds an inconsistent packed clip: {exc}") from exc


#: The members of a packed clip archive, as save_packed writes them.
_REQUIRED = ("packed", "packed_dtype", "names", "parents", "offsets", "orders", "channels", "end_sites",
             "end_offsets", "frame_time")
#: Members save_packed writes that an archive may lack: archives written before them load with
#: the Clip field's default (position_channels "offset+channel", the only convention then).
_OPTIONAL = ("position_channels",)

#: What reading a truncated or corrupt archive raises: zipfile's and zlib's errors, an OSError
#: from a seek before the start (a deleted byte shifts every offset), NumPy's ValueError for an
#: invalid .npy header, NotImplementedError / RuntimeError for a compression method or an
#: encryption flag that a flipped bit invented, EOFError for a member shorter than its header says.
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, struct.error, OSError, EOFError, ValueError, KeyError, TypeError,
                OverflowError, NotImplementedError, RuntimeError)


def _read_archive(file, where):
    """The members of the packed clip archive open in `file` (binary, seekable) that a packed
    clip holds, as arrays by name; a ValueError naming `where` for a file that is not such an
    archive or cannot be read (truncated, corrupt)."""
    try:
        start = file.tell()
        head = file.read(16)
        file.seek(start)
    except _READ_ERRORS as exc:
        raise ValueError(f"path {where!r} cannot be read as a packed clip archive: {type(exc).__name__}: "
                         f"{exc}") from exc
    if head.startswith(np.lib.format.MAGIC_PREFIX):
        raise ValueError(f"path {where!r} holds a single array (.npy), not a packed clip archive (.npz written "
                         f"by jointmath)")
    try:
        archive = zipfile.ZipFile(file)
    except _READ_ERRORS as exc:
        what = ("it is empty" if not head else
                "it looks like a BVH file (read it with jointmath.bvh.load)" if head.lstrip().startswith(b"HIERARCHY")
                else "it is not a zip archive, or one truncated or corrupt")
        raise ValueError(f"path {where!r} is not a packed clip archive (.npz written by jointmath): {what} "
                         f"({type(exc).__name__}: {exc})") from exc
    with archive:
        members = {n[:-len(".npy")]: n for n in archive.namelist() if n.endswith(".npy")}
        if "pack_format" not in members:
            lacks = ", ".join(["pack_format"] + [n for n in _REQUIRED if n not in members])
            if "packed" not in members:
                raise ValueError(f"path {where!r} is not a packed clip archive (.npz written by jointmath): it lacks "
                                 f"{lacks}")
            raise ValueError(f"path {where!r} is not a packed clip archive of format {PACK_FORMAT}: it lacks {lacks} "
                             f"(a packed clip written before format {PACK_FORMAT}, unversioned, lacks pack_format and "
                             f"used the centred quantiser, which this jointmath would decode wrongly); pack the clip "
                             f"again with python -m jointmath --out")
        arrays = {"pack_format": _read_member(archive, members["pack_format"], where)}
        _check_format(arrays["pack_format"], where)
        missing = [n for n in _REQUIRED if n not in members]
        if missing:
            raise ValueError(f"path {where!r} is an incomplete packed clip archive: it lacks {', '.join(missing)}")
        for n in _REQUIRED + tuple(n for n in _OPTIONAL if n in members):
            arrays[n] = _read_member(archive, members[n], where)
    return arrays


def _read_member(archive, member, where):
    """One .npy member of the open zip `archive`, read whole (its CRC checked) without unpickling;
    its header's size checked against the member's before anything is allocated."""
    try:
        info = archive.getinfo(member)
        with archive.open(info) as stream:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
            else:
                raise ValueError(f"unsupported .npy format version {version}")
            if dtype.hasobject:
                raise ValueError(f"it holds Python objects ({dtype}), which a packed clip never does and which are "
                                 f"not unpickled")
            expected = int(np.prod(shape, dtype=object)) * dtype.itemsize + stream.tell()  # exact, no overflow
            if expected != info.file_size:
                raise ValueError(f"its header describes {expected} bytes, the member holds {info.file_size}")
        with archive.open(info) as stream:
            array = np.lib.format.read_array(stream, allow_pickle=False)
            if stream.read(1):  # at the end: the CRC was checked
                raise ValueError("bytes follow the array")
        return array
    except _READ_ERRORS as exc:
        raise ValueError(f"path {where!r} is not a complete packed clip archive (.npz written by jointmath): member "
                         f"{member!r} is truncated or corrupt ({type(exc).__name__}: {exc})") from exc


def _check_format(found, where):
    """A ValueError naming `where` unless `found` (the pack_format member) is PACK_FORMAT."""
    value = int(found) if found.shape == () and found.dtype.kind in "iu" else repr(found.tolist())
    if value != PACK_FORMAT:
        raise ValueError(f"path {where!r} holds packed format {value}, this jointmath reads format "
                         f"{PACK_FORMAT} only (format 1, unversioned, used the centred quantiser and would "
                         f"decode wrongly); pack the clip again with python -m jointmath --out")


def _checked_member(arrays, name, kinds, itemsize, shape, what):
    """arrays[name] after checking its dtype (one of the kinds, the itemsize unless None; either
    byte order) and shape (None for any length) against what save_packed writes (`what`, for the
    message). Integers of any size hold the same indices; floats must be float64, as written."""
    array = arrays[name]
    fits = (array.dtype.kind in kinds and (itemsize is None or array.dtype.itemsize == itemsize)
            and array.ndim == len(shape) and all(s is None or s == n for s, n in zip(shape, array.shape)))
    if not fits:
        raise ValueError(f"{name} must be {what}, got {array.dtype} of shape {array.shape}")
    return array


def _clip_from_members(arrays, name):
    """The Clip the checked members of a packed clip archive hold (TypeError / ValueError for
    members that do not fit each other, or a clip that Clip() or bvh.save() would refuse)."""
    from ._records import PACKED_JOINT, PACKED_JOINT64

    record_dtypes = {str(d.itemsize): d for d in (PACKED_JOINT, PACKED_JOINT64)}  # as save_packed writes them
    found = arrays["packed_dtype"]
    dtype = record_dtypes.get(str(found.item())) if found.shape == () and found.dtype.kind == "U" else None
    if dtype is None:
        raise ValueError(f"packed_dtype is {found.tolist()!r}, which no packed clip has: '16' (PACKED_JOINT, 10-bit "
                         f"codes) or '20' (PACKED_JOINT64, 20-bit codes)")
    raw = arrays["packed"]
    if raw.dtype != np.uint8 or raw.ndim != 3 or raw.shape[-1] != dtype.itemsize:
        raise ValueError(f"expected (frames, joints, {dtype.itemsize}) uint8 record bytes, got {raw.dtype} of "
                         f"shape {raw.shape}")
    n_joints = raw.shape[1]
    names = _checked_member(arrays, "names", "U", None, (n_joints,), f"({n_joints},) str, one name per joint")
    parents = _checked_member(arrays, "parents", "iu", None, (n_joints,), f"({n_joints},) integers, one per joint")
    offsets = _checked_member(arrays, "offsets", "f", 8, (n_joints, 3), f"({n_joints}, 3) float64, one per joint")
    orders = _checked_member(arrays, "orders", "U", None, (n_joints,), f"({n_joints},) str, one order per joint")
    channels = _checked_member(arrays, "channels", "U", None, (), "a str (0-d) holding the channels as JSON")
    end_sites = _checked_member(arrays, "end_sites", "iu", None, (None,), "(E,) integers, one joint per End Site")
    end_offsets = _checked_member(arrays, "end_offsets", "f", 8, (len(end_sites), 3),
                                  f"({len(end_sites)}, 3) float64, one per End Site")
    frame_time = _checked_member(arrays, "frame_time", "f", 8, (), "a float64 (0-d) number of seconds")
    position_channels = "offset+channel"  # an archive written before the member: the convention then
    if "position_channels" in arrays:
        position_channels = checked_convention(str(_checked_member(
            arrays, "position_channels", "U", None, (), f"a str (0-d), one of {', '.join(POSITION_CONVENTIONS)}")),
            "position_channels")
    try:
        channels = json.loads(str(channels))
    except RecursionError as exc:
        raise ValueError("channels nest too deeply to be a list of channel names per joint") from exc
    if not (isinstance(channels, list) and all(isinstance(ch, list) and all(isinstance(c, str) for c in ch)
                                               for ch in channels)):
        raise ValueError("channels must be a JSON list of lists of channel names, one list per joint")
    packed = np.ascontiguousarray(raw).view(dtype)[..., 0]
    joints = unpack_joints(packed)
    joints["q"] = make_continuous(joints["q"], 0)
    clip = bvh.Clip(names=[str(n) for n in names], parents=parents, offsets=offsets,
                    channels=[tuple(ch) for ch in channels], end_sites=end_sites, end_offsets=end_offsets,
                    frame_time=frame_time, joints=joints, name=name, position_channels=position_channels)
    for j, (order, expected) in enumerate(zip(orders.tolist(), clip.orders)):
        if order != expected:
            raise ValueError(f"orders[{j}] = {order!r} is not the rotation order of joint {j}'s ({clip.names[j]!r}) "
                             f"channels {' '.join(clip.channels[j]) or '(none)'}: {expected!r}")
    low, high = FRAME_TIME_RANGE
    if not low <= clip.frame_time <= high:  # as bvh.load and save take them
        raise ValueError(f"frame_time must be between {low:g} and {high:g} seconds, got {clip.frame_time!r}")
    if not np.isfinite(joints["t"]).all():
        raise ValueError("packed holds a non-finite translation, which BVH cannot hold")
    # the rest of bvh.save's checks: a clip that loads also saves
    _check_names(clip)
    _check_offsets(clip)
    _check_translations(clip, joints)
    _check_rotations(clip, joints)
    return clip
