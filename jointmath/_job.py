"""The mocap processing job behind `python -m jointmath`: one function per clip, plain results.

process_file runs load -> local quaternions -> sign continuity -> forward kinematics ->
optional resampling -> packing -> unpacking -> checks against jointmath.reference, and returns
a JSON-ready dict, so the single-process run and the Dask run produce the same report.
"""
import json
import os
import time
from importlib import resources

import numpy as np

from . import bvh, reference
from ._core import make_continuous
from ._mocap import forward_kinematics
from ._pack import pack_joints, unpack_joints

SAMPLE = "sample_01_01.bvh"


def sample_path():
    """Path of the embedded sample clip (CMU 01_01 excerpt; attribution next to it)."""
    return str(resources.files("jointmath").joinpath("data", SAMPLE))


def _end_effectors(parents):
    """Joints that are nobody's parent (hands, feet, head)."""
    used = set(int(p) for p in parents)
    return np.array([j for j in range(len(parents)) if j not in used], np.int64)


def process_clip(clip, bits=10, fps=None):
    """Run the pipeline on a loaded Clip. Returns (result dict, packed joints, the clip as packed: resampled when fps is given).

    The dict holds frames, joints, seconds and frames per second per stage, the compression
    ratio (JOINT_QUAT bytes / packed bytes), per-joint max and mean rotation angle error of
    packing (radians, vs the float64 reference quaternions), the max / mean end-effector
    position error of the unpacked clip after forward kinematics and the max end-effector error
    of forward_kinematics itself on the original clip (clip units, both against
    jointmath.reference.forward_kinematics in float64).
    """
    times = {}

    def stage(name, func, *args):
        start = time.perf_counter()
        value = func(*args)
        times[name] = time.perf_counter() - start
        return value

    joints = clip.joints.copy()
    joints["q"] = stage("continuity", make_continuous, joints["q"], 0)
    world = stage("forward_kinematics", forward_kinematics, joints, clip.parents)
    frame_time = clip.frame_time
    if fps is not None:
        clip = stage("resample", bvh.resample, clip, fps)
        joints = clip.joints.copy()
        joints["q"] = make_continuous(joints["q"], 0)
        world = forward_kinematics(joints, clip.parents)
        frame_time = 1.0 / fps
    packed = stage("pack", pack_joints, joints, bits)
    unpacked = stage("unpack", unpack_joints, packed)
    start = time.perf_counter()
    angle = reference.angle_between(unpacked["q"], joints["q"].astype(np.float64))
    world_back = forward_kinematics(unpacked, clip.parents)
    ends = _end_effectors(clip.parents)
    expected = reference.forward_kinematics(joints, clip.parents)["m"][..., ends, :, 3]
    position = np.linalg.norm(world_back["m"][..., ends, :, 3] - expected, axis=-1)
    kinematics = np.linalg.norm(world["m"][..., ends, :, 3] - expected, axis=-1)
    times["check"] = time.perf_counter() - start
    n_frames = joints.shape[0]
    result = {
        "frames": int(n_frames),
        "joints": int(joints.shape[1]),
        "frame_time": float(frame_time),
        "bits": int(bits),
        "seconds": {k: float(v) for k, v in times.items()},
        "frames_per_second": {k: (float(n_frames / v) if v > 0 else None) for k, v in times.items()},
        "compression_ratio": float(joints.nbytes / packed.nbytes),
        "angle_error_max": [float(x) for x in angle.max(axis=0)],
        "angle_error_mean": [float(x) for x in angle.mean(axis=0)],
        "end_effector_error_max": float(position.max()) if position.size else 0.0,
        "end_effector_error_mean": float(position.mean()) if position.size else 0.0,
        "forward_kinematics_error_max": float(kinematics.max()) if kinematics.size else 0.0,
        "names": list(clip.names),
    }
    return result, packed, clip


def process_file(path, bits=10, fps=None, out=None):
    """Load and process one BVH file; with `out` also write OUT/<stem>.npz. Never raises for a
    bad file: returns {"file": path, "error": reason} instead."""
    start = time.perf_counter()
    try:
        clip = bvh.load(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return {"file": str(path), "error": f"{type(exc).__name__}: {exc}"}
    load_seconds = time.perf_counter() - start
    try:
        result, packed, clip = process_clip(clip, bits, fps)
    except (ValueError, TypeError) as exc:
        return {"file": str(path), "error": f"{type(exc).__name__}: {exc}"}
    result["seconds"] = {"load": load_seconds, **result["seconds"]}
    result["frames_per_second"] = {"load": result["frames"] / load_seconds if load_seconds > 0 else None,
                                   **result["frames_per_second"]}
    result["file"] = str(path)
    if out is not None:
        stem = os.path.splitext(os.path.basename(str(path)))[0]
        result["npz"] = save_packed(os.path.join(out, stem + ".npz"), clip, packed)
    return result


#: Version of the packed-clip archive, stored in it as `pack_format`: 2 = mid-tread fields
#: (code = round(c M) + M). Archives without it hold the earlier centred codes, which the
#: current decoder would misread by half a step, so load_packed refuses them.
PACK_FORMAT = 2


def save_packed(path, clip, packed):
    """Write a packed clip (.npz): the packed joints plus the skeleton. Returns the path."""
    np.savez(path, pack_format=np.array(PACK_FORMAT), packed=packed.view(np.uint8).reshape(packed.shape + (-1,)),
             packed_dtype=np.array(str(packed.dtype.itemsize)), names=np.array(clip.names),
             parents=clip.parents, offsets=clip.offsets, orders=np.array(clip.orders),
             channels=np.array(json.dumps([list(c) for c in clip.channels])),
             end_sites=clip.end_sites, end_offsets=clip.end_offsets,
             frame_time=np.array(clip.frame_time))
    return path


def load_packed(path):
    """Read a .npz written by `python -m jointmath --out DIR` back into a jointmath.bvh.Clip.

    The joints are the unpacked (lossy) ones; Clip.motion is computed from them, so the clip
    saves as BVH like any other. Raises ValueError naming the file for an archive of another format
    version (PACK_FORMAT), e.g. one written before packing fields became mid-tread, and for a file
    that is not a complete packed clip: empty, truncated or corrupt, not an .npz archive, or
    without one of the arrays a packed clip holds (the error lists the missing ones). A file that
    does not exist raises FileNotFoundError, as open() does.
    """
    import pickle
    import zipfile

    from ._pack import PACKED_JOINT, PACKED_JOINT64

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
    found = int(arrays["pack_format"]) if "pack_format" in arrays else 1
    if found != PACK_FORMAT:
        raise ValueError(f"path {str(path)!r} holds packed format {found}, this jointmath reads format "
                         f"{PACK_FORMAT} only (format 1, unversioned, used the centred quantiser and would "
                         f"decode wrongly); pack the clip again with python -m jointmath --out")
    missing = [name for name in required if name not in arrays]
    if missing:
        raise ValueError(f"path {str(path)!r} is an incomplete packed clip archive: it lacks {', '.join(missing)}")
    try:
        dtype = PACKED_JOINT if int(arrays["packed_dtype"]) == PACKED_JOINT.itemsize else PACKED_JOINT64
        raw = np.ascontiguousarray(arrays["packed"])
        packed = raw.reshape(raw.shape[:-1] + (-1,)).view(dtype)[..., 0]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"path {str(path)!r} holds packed joints of a wrong size or type: {exc}") from exc
    joints = unpack_joints(packed)
    return bvh.Clip(names=[str(n) for n in arrays["names"]], parents=arrays["parents"], offsets=arrays["offsets"],
                    channels=[tuple(c) for c in json.loads(str(arrays["channels"]))], end_sites=arrays["end_sites"],
                    end_offsets=arrays["end_offsets"], frame_time=float(arrays["frame_time"]), joints=joints)
