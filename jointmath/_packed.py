"""The packed-clip archive (.npz) that `python -m jointmath --out` writes: the packed joints
and the skeleton, read back by jointmath.load_packed."""
import json
import os

import numpy as np

from . import bvh
from ._core import make_continuous, unpack_joints
from ._files import write_atomic

__all__ = ["PACK_FORMAT", "load_packed", "save_packed"]


#: Version of the packed-clip archive, stored in it as `pack_format`: 2 = mid-tread fields
#: (code = round(c M) + M). Archives without it hold the earlier centred codes, which the
#: current decoder would misread by half a step, so load_packed refuses them.
PACK_FORMAT = 2


def save_packed(path, clip, packed):
    """Write a packed clip (.npz at `path`, atomically): the packed joints plus the skeleton.
    Returns the path. Read it back with jointmath.load_packed."""
    def write(f):
        np.savez(f, pack_format=np.array(PACK_FORMAT), packed=packed.view(np.uint8).reshape(packed.shape + (packed.dtype.itemsize,)),
                 packed_dtype=np.array(str(packed.dtype.itemsize)), names=np.array(clip.names),
                 parents=clip.parents, offsets=clip.offsets, orders=np.array(clip.orders),
                 channels=np.array(json.dumps([list(c) for c in clip.channels])),
                 end_sites=clip.end_sites, end_offsets=clip.end_offsets,
                 frame_time=np.array(clip.frame_time))

    return write_atomic(os.fspath(path), write)


def load_packed(path):
    """Read a packed clip written by ``python -m jointmath --out DIR`` back into a Clip.

    The joints are the unpacked (lossy) ones, their quaternions made sign-continuous along the
    frames (make_continuous along axis 0: each frame's on the hemisphere of the frame before;
    the first frame's largest component positive). Packing keeps no sign and unpacking makes
    each quaternion's largest component positive, which would leave neighbouring frames on
    opposite hemispheres wherever that component changes, a jump in q for anything that
    differences, blends or averages them (the rotations are the same either way).

    Parameters
    ----------
    path : str, os.PathLike or file
        The .npz archive (DIR/<clip>.npz).

    Returns
    -------
    jointmath.bvh.Clip
        The skeleton and the unpacked frames, named after the file's stem as bvh.load names
        clips. Clip.motion is computed from the joints, so the clip saves as BVH like any other.

    Raises
    ------
    ValueError
        Naming the file, for an archive of another format version (PACK_FORMAT), e.g. one
        written before packing fields became mid-tread; a record size (packed_dtype) other than
        the two it defines, '16' and '20'; and a file that is not a complete packed clip: empty,
        truncated or corrupt, not an .npz archive, without one of the arrays a packed clip holds
        (the error lists the missing ones), or with one of the wrong type or size (packed joints
        that are not the records' bytes, a skeleton that does not fit them).
    FileNotFoundError
        For a file that does not exist, as open() raises it.

    Examples
    --------
    >>> import os, subprocess, sys, tempfile
    >>> import jointmath as jm
    >>> with tempfile.TemporaryDirectory() as out:  # the command on the embedded sample
    ...     done = subprocess.run([sys.executable, "-m", "jointmath", "--out", out], capture_output=True)
    ...     clip = jm.load_packed(os.path.join(out, "sample_01_01.npz"))
    >>> clip
    <Clip 'sample_01_01': 31 joints, 381 frames at 120 fps, 3.16665 s>
    """
    import pickle
    import zipfile

    from ._records import PACKED_JOINT, PACKED_JOINT64

    required = ("packed", "packed_dtype", "names", "parents", "offsets", "orders", "channels", "end_sites",
                "end_offsets", "frame_time")
    try:
        data = np.load(path)  # an ndarray for a .npy file
        arrays = None
        if isinstance(data, np.lib.npyio.NpzFile):
            with data:  # every member read here, inside the try: a truncated one fails its CRC check now
                arrays = {name: data[name] for name in data.files}
    except (EOFError, zipfile.BadZipFile, pickle.UnpicklingError, ValueError) as exc:
        raise ValueError(f"path {str(path)!r} is not a complete packed clip archive (.npz): empty, truncated or "
                         f"corrupt ({type(exc).__name__}: {exc})") from exc
    if arrays is None:
        raise ValueError(f"path {str(path)!r} holds a single array (.npy), not a packed clip archive (.npz)")
    if "pack_format" not in arrays and "packed" not in arrays:
        lacks = ", ".join(["pack_format"] + [name for name in required if name not in arrays])
        raise ValueError(f"path {str(path)!r} is not a packed clip archive: it lacks {lacks}")
    found = arrays.get("pack_format", np.array(1))
    found = int(found) if found.shape == () and found.dtype.kind in "iu" else repr(found.tolist())
    if found != PACK_FORMAT:
        raise ValueError(f"path {str(path)!r} holds packed format {found}, this jointmath reads format "
                         f"{PACK_FORMAT} only (format 1, unversioned, used the centred quantiser and would "
                         f"decode wrongly); pack the clip again with python -m jointmath --out")
    missing = [name for name in required if name not in arrays]
    if missing:
        raise ValueError(f"path {str(path)!r} is an incomplete packed clip archive: it lacks {', '.join(missing)}")
    record_dtypes = {str(d.itemsize): d for d in (PACKED_JOINT, PACKED_JOINT64)}  # as save_packed writes them
    found = arrays["packed_dtype"]
    dtype = record_dtypes.get(str(found.item())) if found.shape == () else None
    if dtype is None:
        raise ValueError(f"path {str(path)!r} holds packed_dtype {found.tolist()!r}, which no packed clip has: "
                         f"'16' (PACKED_JOINT, 10-bit codes) or '20' (PACKED_JOINT64, 20-bit codes)")
    try:
        raw = arrays["packed"]
        if raw.dtype != np.uint8 or raw.ndim != 3 or raw.shape[-1] != dtype.itemsize:
            raise ValueError(f"expected (frames, joints, {dtype.itemsize}) uint8 record bytes, got {raw.dtype} of "
                             f"shape {raw.shape}")
        if arrays["names"].dtype.kind != "U":
            raise ValueError(f"expected joint names as strings, got {arrays['names'].dtype}")
        packed = np.ascontiguousarray(raw).view(dtype)[..., 0]
        joints = unpack_joints(packed)
        joints["q"] = make_continuous(joints["q"], 0)
        clip = bvh.Clip(names=[str(n) for n in arrays["names"]], parents=arrays["parents"], offsets=arrays["offsets"],
                        channels=[tuple(c) for c in json.loads(str(arrays["channels"]))],
                        end_sites=arrays["end_sites"], end_offsets=arrays["end_offsets"],
                        frame_time=arrays["frame_time"], joints=joints,
                        name=os.path.splitext(os.path.basename(os.fspath(path)))[0]
                        if isinstance(path, (str, os.PathLike)) else "")
        low, high = bvh.FRAME_TIME_RANGE
        if not low <= clip.frame_time <= high:  # as bvh.load and save take them
            raise ValueError(f"frame_time must be between {low:g} and {high:g} seconds, got {clip.frame_time!r}")
        return clip
    except (TypeError, ValueError) as exc:  # json.JSONDecodeError too
        raise ValueError(f"path {str(path)!r} holds packed joints or a skeleton of a wrong size or type: "
                         f"{exc}") from exc
