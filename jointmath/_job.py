"""One clip's pipeline behind `python -m jointmath`: load -> optional resampling -> either
compression under a certified error bound (format "jmc", the command's default) or forward
kinematics -> packing -> unpacking -> errors (-> optional float64 check) (format "packed"), its
outputs written atomically, and a JSON-ready dict of figures, so the single-process run and the
Dask run produce the same report. Product code only: nothing here calls jointmath.reference.
"""
import os
import time

import numpy as np

from . import _core, _memory, bvh
from ._compressed_job import DEFAULT_ERROR_CM, DEFAULT_SHELL_CM, compress_clip
from ._core import forward_kinematics, pack_joints, unpack_joints
from ._packed import save_packed
from ._sizes import raw_float32_bytes, source_sizes

__all__ = ["FORMATS", "process_clip", "process_compressed", "process_file"]

#: The output formats: "jmc" (jointmath.compress, a certified error bound) and "packed" (the
#: fixed-rate 32-bit packing, pack_joints, in a .npz archive).
FORMATS = ("jmc", "packed")


#: Working memory of the pipeline per joint per output frame (the joints, two sets of world
#: matrices, packed and unpacked copies, positions and errors), used to refuse a resampling
#: that would not fit before allocating it.
BYTES_PER_JOINT_FRAME = 320

#: How many end effectors the per-frame error series keeps (the worst ones, for the plot).
SERIES_END_EFFECTORS = 3

#: How many joints the report names as the worst.
WORST_JOINTS = 3


def _distances(p0, p1):
    """|p0 - p1| over the last axis (3 coordinates)."""
    d = p0 - p1
    return np.sqrt(np.einsum("...i,...i->...", d, d))


def _frames_after_resampling(clip, fps):
    """The frame count resample_joints gives, without allocating anything."""
    return int(np.floor(max(clip.n_frames - 1, 0) * clip.frame_time * fps + 1e-9)) + 1


def _timed_stages(progress):
    """(stage, times, counts): stage(name, frames, func, *args) runs func(*args), records its
    seconds and frames under `name` and calls progress(name)."""
    times, counts = {}, {}

    def stage(name, frames, func, *args):
        start = time.perf_counter()
        value = func(*args)
        times[name] = time.perf_counter() - start
        counts[name] = int(frames)
        if progress is not None:
            progress(name)
        return value

    return stage, times, counts


def _resampled(clip, fps, stage):
    """`clip` resampled to `fps` (a stage), or as it is for None; ValueError for a resampling
    that would not fit in memory."""
    if fps is None:
        return clip
    frames = _frames_after_resampling(clip, fps)
    need, budget = frames * clip.n_joints * BYTES_PER_JOINT_FRAME, _memory.pipeline_budget()
    if need > budget:
        raise ValueError(f"resampling to {fps:g} frames/s makes {frames:,} frames x {clip.n_joints} joints, "
                         f"about {need / 2**30:.1f} GiB of working memory, more than this machine's budget "
                         f"({budget / 2**30:.1f} GiB); choose a lower --fps")
    return stage("resample", frames, bvh.resample, clip, fps)


def process_clip(clip, bits=10, fps=None, check=False, progress=None):
    """Run the pipeline on a loaded Clip.

    Returns (result dict, packed joints, processed clip, unpacked joints); the processed clip is
    the one that was packed: resampled to `fps` when given. No stage makes signs continuous:
    packing is sign-invariant and keeps no sign, so load_packed does it when it reads the clip.

    The dict holds, per stage, seconds, the frames that stage processed and frames per second
    (resampling and the stages after it count the output frames); the
    compression ratio (JOINT_QUAT bytes / packed bytes); per joint the max and mean rotation
    angle error of packing (radians) and the max position error (clip units); the skeleton height
    (Clip.skeleton_height) and the position error after packing of the end effectors (Clip.end_effectors:
    the End Site tips, which a leaf joint's own rotation error moves; max, mean, and the max as a
    fraction of the height); the worst joints by name; a per-frame error series of the worst
    end effectors (key "_series", left out of report.json). Position errors compare world
    positions computed in float64 from the processed and the unpacked joints: the packing's error
    alone, without float32 rounding of the positions. With check=True also the max position error
    of the float32 forward kinematics against those float64 positions (clip units). Raises ValueError for a
    resampling that would not fit in memory and for a clip of 0 frames. progress(stage) is called
    after each stage.
    """
    stage, times, counts = _timed_stages(progress)
    source_frames = clip.n_frames
    if source_frames == 0:
        raise ValueError("the clip has no frames: nothing to compress")
    clip = _resampled(clip, fps, stage)
    joints = clip.joints
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
        return angle, distance[:, :n_joints], distance[:, clip.end_effector_columns], before[:, :n_joints]

    angle, position, end_position, positions64 = stage("errors", n_frames, errors)
    height = clip.skeleton_height()
    if check:
        kinematics = stage("check", n_frames, lambda: _distances(world["m"][..., 3], positions64).max(initial=0.0))

    ends = clip.end_effectors
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


def process_compressed(clip, fps=None, error_cm=DEFAULT_ERROR_CM, shell_cm=DEFAULT_SHELL_CM, unit_scale=None,
                       progress=None):
    """Compress a loaded Clip (resampled to `fps` when given) with jointmath.compress.

    `error_cm` and `shell_cm` are in centimetres, converted to clip units with `unit_scale` (cm
    per clip unit) or, without it, the skeleton taken for a 170 cm human. Returns (result dict,
    CompressedClip, processed clip). The dict holds the stage figures as process_clip's, the
    bytes, bytes per joint-sample, the ratio against raw float32 (10 floats per joint-sample, as
    ACL counts them), the bound, shell and unit scale used, the certified max and 99th-percentile
    error (ACL's metric) in clip units and in cm, per joint and the worst joints. Raises
    ValueError for a clip of 0 frames (and whatever compress raises for a clip it refuses).
    """
    stage, times, counts = _timed_stages(progress)
    source_frames = clip.n_frames
    if source_frames == 0:
        raise ValueError("the clip has no frames: nothing to compress")
    clip = _resampled(clip, fps, stage)
    figures, compressed = compress_clip(clip, error_cm, shell_cm, unit_scale, stage)
    result = {
        "format": "jmc",
        "frames": int(clip.n_frames),
        "source_frames": int(source_frames),
        "joints": int(clip.n_joints),
        "frame_time": float(clip.frame_time),
        "seconds": {k: float(v) for k, v in times.items()},
        "stage_frames": counts,
        "frames_per_second": {k: (counts[k] / v if v > 0 else None) for k, v in times.items()},
        "skeleton_height": clip.skeleton_height(),
        **figures,
        "names": list(clip.names),
        "parents": [int(p) for p in clip.parents],
    }
    return result, compressed, clip


def _packed_bytes(clip, packed):
    """The size of the .npz archive save_packed writes for `packed` (measured whether or not
    load_packed would read that clip back: without --out it is only a figure)."""
    import io

    from ._packed import _members

    buffer = io.BytesIO()
    np.savez_compressed(buffer, **_members(clip, packed))
    return buffer.getbuffer().nbytes


def process_file(path, bits=10, fps=None, outputs=None, check=False, progress=None, format="packed",
                 error_cm=DEFAULT_ERROR_CM, shell_cm=DEFAULT_SHELL_CM, unit_scale=None):
    """Load and process one BVH file and write its outputs.

    format: "packed" (process_clip: `bits`, `check`) or "jmc" (process_compressed: `error_cm`,
    `shell_cm`, `unit_scale`). Either way the result also holds the archive's bytes per
    joint-sample, its ratio against raw float32 (10 floats per joint-sample) and the source
    file's size as it is and under gzip -9 and xz -9 (source_sizes).

    outputs: None or a dict with "packed" (path of the .npz archive, read back with
    jointmath.load_packed) or "compressed" (path of the .jmc clip, read back with
    jointmath.load_compressed), and optionally "bvh" (path of the processed clip as BVH:
    resampled and decoded from the packed or compressed form). Each is written atomically (a temporary file in the same
    folder, then renamed). Never raises for a bad file or a failed write: returns
    {"file": path, "error": reason, "outputs": what was written} instead. Warnings of the reader
    (BVHWarning) are returned under "warnings", not printed, and the clip's notes (Clip.notes,
    such as the position channels read as whole translations) under "notes", failed or not.
    progress(stage) as in process_clip.
    """
    path = str(path)
    caught = []
    notes = []
    written = {}
    try:
        start = time.perf_counter()
        clip = bvh._read(path, caught)  # the warnings as text: no global state, safe in threads
        load_seconds = time.perf_counter() - start
        notes = list(clip.notes)
        if progress is not None:
            progress("load")
        if format == "jmc":
            result, compressed, clip = process_compressed(clip, fps, error_cm, shell_cm, unit_scale, progress)
            archive_bytes = result["bytes"]
        elif format == "packed":
            result, packed, clip, unpacked = process_clip(clip, bits, fps, check, progress)
            result["format"] = "packed"
            archive_bytes = result["bytes"] = _packed_bytes(clip, packed)
            samples = result["frames"] * result["joints"]
            result["bytes_per_joint_sample"] = archive_bytes / samples if samples else None
            result["raw_float32_bytes"] = raw_float32_bytes(result["frames"], result["joints"])
            result["ratio_float32"] = result["raw_float32_bytes"] / archive_bytes
        else:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
        sizes = source_sizes(path)
        result.update(sizes, ratio_gzip9=sizes["gzip9_bytes"] / archive_bytes,
                      ratio_xz9=sizes["xz9_bytes"] / archive_bytes)
        if progress is not None:
            progress("source sizes")
        for kind, target in (outputs or {}).items():
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)  # a subfolder of --out
            if kind == "packed" and format == "packed":
                save_packed(clip, target, packed=packed)
            elif kind == "compressed" and format == "jmc":
                compressed.save(target)
            elif kind == "bvh":
                if format == "jmc":
                    from . import decompress

                    bvh._save_frames(clip, decompress(compressed).joints, target)  # the processed clip, decoded
                else:
                    bvh._save_frames(clip, unpacked, target)
            else:
                raise ValueError(f"outputs: kind {kind!r} does not go with format {format!r} "
                                 f"(packed: packed, bvh; jmc: compressed, bvh)")
            written[kind] = target
            if progress is not None:
                progress("write " + kind)
    except Exception as exc:  # noqa: BLE001 - one clip's failure, whatever it is, must not stop the others
        return {"file": path, "error": f"{type(exc).__name__}: {exc}", "outputs": written,
                "warnings": caught, "notes": notes}
    result["seconds"] = {"load": load_seconds, **result["seconds"]}
    result["stage_frames"] = {"load": result["source_frames"], **result["stage_frames"]}
    result["frames_per_second"] = {"load": result["source_frames"] / load_seconds if load_seconds > 0 else None,
                                   **result["frames_per_second"]}
    result["file"] = path
    result["outputs"] = written
    result["warnings"] = caught
    result["notes"] = notes
    return result
