"""The mocap processing job behind `python -m jointmath`: one function per clip, plain results.

process_file runs load -> optional resampling -> forward kinematics -> packing -> unpacking ->
errors (-> optional float64 check), writes the clip's outputs
atomically, and returns a JSON-ready dict, so the single-process run and the Dask run produce
the same report. Product code only: nothing here calls jointmath.reference.
"""
import dataclasses
import json
import math
import os
import time
from importlib import resources

import numpy as np

from . import _core, bvh
from ._files import write_atomic
from ._core import make_continuous
from ._core import forward_kinematics, pack_joints, resample_joints, unpack_joints

__all__ = ["PACK_FORMAT", "load_packed", "process_clip", "process_file", "sample_path", "save_packed",
           "skeleton_height"]

SAMPLE = "sample_01_01.bvh"

#: Working memory of the pipeline per joint per output frame (the joints, two sets of world
#: matrices, packed and unpacked copies, positions and errors), used to refuse a resampling
#: that would not fit before allocating it.
BYTES_PER_JOINT_FRAME = 320

#: How many end effectors the per-frame error series keeps (the worst ones, for the plot).
SERIES_END_EFFECTORS = 3

#: How many joints the report names as the worst.
WORST_JOINTS = 3


def sample_path():
    """Path of the embedded sample clip (CMU 01_01 excerpt; attribution next to it)."""
    return str(resources.files("jointmath").joinpath("data", SAMPLE))


def _bare_leaves(clip):
    """The joints that are nobody's parent and have no End Site."""
    used = set(int(p) for p in clip.parents) | set(int(j) for j in clip.end_sites)
    return [j for j in range(clip.n_joints) if j not in used]


def end_effectors(clip):
    """The names of the clip's end effectors: its End Site tips ("Head End Site"; a joint with
    several numbers them "Hand End Site 2" ...), then the joints that are nobody's parent and
    have no End Site (the hands, feet and head of a skeleton written without them)."""
    tips = [int(j) for j in clip.end_sites]
    names = []
    for k, j in enumerate(tips):
        repeat = tips[:k].count(j)
        names.append(f"{clip.names[j]} End Site" + (f" {repeat + 1}" if repeat else ""))
    return names + [clip.names[j] for j in _bare_leaves(clip)]


def _effector_columns(clip):
    """Where end_effectors(clip) are among (F, J + E, 3) positions (Clip.positions() order: the
    joints, then the End Site tips): the tips, then the leaf joints without an End Site."""
    return np.array([*range(clip.n_joints, clip.n_joints + len(clip.end_sites)), *_bare_leaves(clip)], np.intp)


def skeleton_height(clip):
    """Height of the clip's skeleton in its rest pose: Clip.height(), the extent along Y (BVH's up
    axis); the largest extent of the rest pose when the Y extent is 0 (a skeleton lying in
    another plane)."""
    height = clip.height()
    return height if height > 0 else max(clip.height(axis) for axis in (0, 2))


def _distances(p0, p1):
    """|p0 - p1| over the last axis (3 coordinates)."""
    d = p0 - p1
    return np.sqrt(np.einsum("...i,...i->...", d, d))


def _frames_after_resampling(clip, fps):
    """The frame count resample_joints gives, without allocating anything."""
    return int(np.floor(max(clip.n_frames - 1, 0) * clip.frame_time * fps + 1e-9)) + 1


def _memory_budget():
    """Bytes one clip's pipeline may take: half the physical memory (8 GiB where unknown)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (AttributeError, ValueError, OSError):
        return 8 << 30


def process_clip(clip, bits=10, fps=None, check=False, progress=None):
    """Run the pipeline on a loaded Clip.

    Returns (result dict, packed joints, processed clip, unpacked joints); the processed clip is
    the one that was packed: resampled to `fps` when given. No stage makes signs continuous:
    packing is sign-invariant and keeps no sign, so load_packed does it when it reads the clip.

    The dict holds, per stage, seconds, the frames that stage processed and frames per second
    (resampling and the stages after it count the output frames); the
    compression ratio (JOINT_QUAT bytes / packed bytes); per joint the max and mean rotation
    angle error of packing (radians) and the max position error (clip units); the skeleton height
    (skeleton_height) and the position error after packing of the end effectors (end_effectors:
    the End Site tips, which a leaf joint's own rotation error moves; max, mean, and the max as a
    fraction of the height); the worst joints by name; a per-frame error series of the worst
    end effectors (key "_series", left out of report.json). Position errors compare world
    positions computed in float64 from the processed and the unpacked joints: the packing's error
    alone, without float32 rounding of the positions. With check=True also the max position error
    of the float32 forward kinematics against those float64 positions (clip units). Raises ValueError for a
    resampling that would not fit in memory and for a clip of 0 frames. progress(stage) is called
    after each stage.
    """
    times, counts = {}, {}

    def stage(name, frames, func, *args):
        start = time.perf_counter()
        value = func(*args)
        times[name] = time.perf_counter() - start
        counts[name] = int(frames)
        if progress is not None:
            progress(name)
        return value

    source_frames = clip.n_frames
    if source_frames == 0:
        raise ValueError("the clip has no frames: nothing to compress")
    joints = clip.joints
    if fps is not None:
        frames = _frames_after_resampling(clip, fps)
        need = frames * clip.n_joints * BYTES_PER_JOINT_FRAME
        if need > _memory_budget():
            raise ValueError(f"resampling to {fps:g} frames/s makes {frames:,} frames x {clip.n_joints} joints, "
                             f"about {need / 2**30:.1f} GiB of working memory, more than this machine's budget "
                             f"({_memory_budget() / 2**30:.1f} GiB); choose a lower --fps")
        joints = stage("resample", frames, resample_joints, joints, clip.frame_time, fps)
        clip = dataclasses.replace(clip, joints=joints, frame_time=1.0 / fps)
    n_frames, n_joints = joints.shape
    world = stage("forward_kinematics", n_frames, forward_kinematics, joints, clip.parents)
    packed = stage("pack", n_frames, pack_joints, joints, bits)
    unpacked = stage("unpack", n_frames, unpack_joints, packed)

    def errors():
        # float64 angles in C, without the GIL (NumPy's ~30 calls per block of quaternions took
        # twice as long and handed the GIL back and forth between the threads of --dask local)
        angle = _core._packing_angles(np.ascontiguousarray(unpacked), np.ascontiguousarray(joints))
        # the world positions of both in float64 (C, without the GIL): float32 kinematics' own
        # rounding of positions a few hundred units from the origin is ~10 % of what 20-bit
        # packing moves them, and differs by ISA path
        before, after = (_core._positions64(j, clip.parents, clip.end_sites, clip.end_offsets)
                         for j in (joints, unpacked))
        distance = _distances(after, before)  # (F, J + E)
        return angle, distance[:, :n_joints], distance[:, _effector_columns(clip)], before[:, :n_joints]

    angle, position, end_position, positions64 = stage("errors", n_frames, errors)
    height = skeleton_height(clip)
    if check:
        kinematics = stage("check", n_frames, lambda: _distances(world["m"][..., 3], positions64).max(initial=0.0))

    ends = end_effectors(clip)
    per_joint = position.max(axis=0, initial=0.0)
    worst_ends = np.argsort(-end_position.max(axis=0, initial=0.0), kind="stable")[:SERIES_END_EFFECTORS]
    worst = np.argsort(-per_joint, kind="stable")[:WORST_JOINTS]

    def fraction(value):
        return float(value / height) if height > 0 else None

    result = {
        "frames": int(n_frames),
        "source_frames": int(source_frames),
        "joints": int(n_joints),
        "frame_time": float(clip.frame_time),
        "bits": int(bits),
        "seconds": {k: float(v) for k, v in times.items()},
        "stage_frames": counts,
        "frames_per_second": {k: (counts[k] / v if v > 0 else None) for k, v in times.items()},
        "compression_ratio": joints.dtype.itemsize / packed.dtype.itemsize,  # = their nbytes' ratio
        "skeleton_height": height,
        "angle_error_max": [float(x) for x in angle.max(axis=0, initial=0.0)],
        "angle_error_mean": [float(x) for x in (angle.mean(axis=0) if n_frames else np.zeros(n_joints))],
        "position_error_max": [float(x) for x in per_joint],
        "end_effectors": ends,
        "end_effector_error_max": float(end_position.max(initial=0.0)),
        "end_effector_error_mean": float(end_position.mean()) if end_position.size else 0.0,
        "end_effector_error_max_fraction": fraction(end_position.max(initial=0.0)),
        "worst_joints": [{"name": clip.names[j], "position_error_max": float(per_joint[j]),
                          "fraction": fraction(per_joint[j])} for j in worst],
        "names": list(clip.names),
        "parents": [int(p) for p in clip.parents],
        "_series": {"names": [ends[k] for k in worst_ends],
                    "errors": end_position[:, worst_ends].T.astype(np.float32)},
    }
    if check:
        result["forward_kinematics_error_max"] = float(kinematics)
    return result, packed, clip, unpacked


def json_ready(value):
    """`value` (dicts, lists and numbers) with every NaN and infinity as None: JSON has neither,
    so json.dump would write NaN / Infinity, which strict readers (jq, JSON.parse) refuse."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def write_json(path, value):
    """value as indented strict JSON at `path` (json_ready: NaN and infinities as null), written
    atomically."""
    return write_atomic(path, lambda f: json.dump(json_ready(value), f, indent=1, allow_nan=False), text=True)


def clip_to_save(clip, joints):
    """The Clip to give to bvh.save for `clip`'s skeleton with `joints` (e.g. unpacked): bvh.save
    writes what a clip's joints hold."""
    return dataclasses.replace(clip, joints=joints)

def process_file(path, bits=10, fps=None, outputs=None, check=False, progress=None):
    """Load and process one BVH file and write its outputs.

    outputs: None or a dict with "packed" (path of the .npz archive, read back with
    jointmath.load_packed) and optionally "bvh" (path of the processed clip as BVH: resampled
    and decoded from the packed form). Each is written atomically (a temporary file in the same
    folder, then renamed). Never raises for a bad file or a failed write: returns
    {"file": path, "error": reason, "outputs": what was written} instead. Warnings of the reader
    (BVHWarning) are returned under "warnings", not printed. progress(stage) as in process_clip.
    """
    path = str(path)
    caught = []
    written = {}
    try:
        start = time.perf_counter()
        clip = bvh._read(path, caught)  # the warnings as text: no global state, safe in threads
        load_seconds = time.perf_counter() - start
        if progress is not None:
            progress("load")
        result, packed, clip, unpacked = process_clip(clip, bits, fps, check, progress)
        for kind, target in (outputs or {}).items():
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)  # a subfolder of --out
            if kind == "packed":
                save_packed(target, clip, packed)
            elif kind == "bvh":
                bvh.save(clip_to_save(clip, unpacked), target)
            else:
                raise ValueError(f"outputs: unknown kind {kind!r} (packed, bvh)")
            written[kind] = target
            if progress is not None:
                progress("write " + kind)
    except Exception as exc:  # noqa: BLE001 - one clip's failure, whatever it is, must not stop the others
        return {"file": path, "error": f"{type(exc).__name__}: {exc}", "outputs": written,
                "warnings": caught}
    result["seconds"] = {"load": load_seconds, **result["seconds"]}
    result["stage_frames"] = {"load": result["source_frames"], **result["stage_frames"]}
    result["frames_per_second"] = {"load": result["source_frames"] / load_seconds if load_seconds > 0 else None,
                                   **result["frames_per_second"]}
    result["file"] = path
    result["outputs"] = written
    result["warnings"] = caught
    return result


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
    """Read a .npz written by `python -m jointmath --out DIR` back into a jointmath.bvh.Clip.

    The joints are the unpacked (lossy) ones, their quaternions made sign-continuous along the
    frames (make_continuous along axis 0: each frame's on the hemisphere of the frame before;
    the first frame's largest component positive). Packing keeps no sign and unpacking makes
    each quaternion's largest component positive, which would leave neighbouring frames on
    opposite hemispheres wherever that component changes, a jump in q for anything that
    differences, blends or averages them (the rotations are the same either way). Clip.motion
    is computed from them, so the clip saves as BVH like any other. Its name is the file's stem, as
    bvh.load gives. Raises ValueError naming the file for an archive of another format version
    (PACK_FORMAT), e.g. one written before packing fields became mid-tread, or a record size
    (packed_dtype) other than the two it defines, '16' and '20', and for a file that is not a
    complete packed clip: empty, truncated or corrupt, not an .npz archive, without one of the
    arrays a packed clip holds (the error lists the missing ones), or with one of the wrong type or
    size (packed joints that are not the records' bytes, a skeleton that does not fit them). A file
    that does not exist raises FileNotFoundError, as open() does.
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
