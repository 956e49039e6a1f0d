"""One clip compressed under a certified error bound (jointmath.compress), the default format of
`python -m jointmath`: the bound and shell given in centimetres converted to clip units, and the
figures the report gives (sizes against raw float32 and the source under gzip -9 and xz -9,
errors in clip units and in cm). Product code only."""
import numpy as np

from ._sizes import FLOATS_PER_JOINT_SAMPLE, raw_float32_bytes

__all__ = ["DEFAULT_ERROR_CM", "DEFAULT_SHELL_CM", "HUMAN_HEIGHT_CM", "compress_clip", "unit_scale_of"]

#: The error bound when none is given, in cm: ACL's default precision.
DEFAULT_ERROR_CM = 0.01

#: The shell (virtual-vertex distance of the error metric) when none is given, in cm: ACL's.
DEFAULT_SHELL_CM = 3.0

#: The height a skeleton is taken to have, in cm, when no unit scale is given: a human's.
HUMAN_HEIGHT_CM = 170.0

#: How many joints the report names as the worst.
WORST_JOINTS = 3


def unit_scale_of(clip, unit_scale=None):
    """(cm per clip unit, how it was chosen): `unit_scale` when given ("--unit-scale"), else the
    skeleton taken for a HUMAN_HEIGHT_CM human (HUMAN_HEIGHT_CM / skeleton_height; 1.0 for a
    skeleton of height 0).

    Examples
    --------
    >>> from jointmath import bvh, data
    >>> from jointmath._compressed_job import unit_scale_of
    >>> clip = bvh.load(data.sample_clip_path())
    >>> unit_scale_of(clip, 2.54 / 0.45)[1], unit_scale_of(clip)[1]
    ('--unit-scale', 'skeleton height taken as 170 cm')
    """
    if unit_scale is not None:
        return float(unit_scale), "--unit-scale"
    height = clip.skeleton_height()
    if height > 0:
        return HUMAN_HEIGHT_CM / height, f"skeleton height taken as {HUMAN_HEIGHT_CM:g} cm"
    return 1.0, "skeleton of height 0: 1 cm per unit"


def compress_clip(clip, error_cm=DEFAULT_ERROR_CM, shell_cm=DEFAULT_SHELL_CM, unit_scale=None, stage=None):
    """Compress `clip` with jointmath.compress at `error_cm` and `shell_cm` converted to clip
    units (unit_scale_of). `stage(name, frames, func, *args)` times a stage (called as
    func(*args) when None). Returns (figures dict, CompressedClip)."""
    from . import compress  # the codec's public entry point

    if stage is None:
        def stage(name, frames, func, *args):
            return func(*args)
    scale, how = unit_scale_of(clip, unit_scale)
    error, shell = error_cm / scale, shell_cm / scale
    n_frames, n_joints = clip.n_frames, clip.n_joints
    compressed = stage("compress", n_frames, lambda: compress(clip, error=error, shell=shell))
    stats = compressed.stats
    per_joint = np.asarray(stats.joint_max_error, np.float64).reshape(-1)
    worst = np.argsort(-per_joint, kind="stable")[:WORST_JOINTS]
    samples = n_frames * n_joints
    raw = raw_float32_bytes(n_frames, n_joints)
    nbytes = int(compressed.nbytes)
    figures = {
        "bytes": nbytes,
        "bytes_per_joint_sample": nbytes / samples if samples else None,
        "raw_float32_bytes": raw,
        "floats_per_joint_sample": FLOATS_PER_JOINT_SAMPLE,
        "ratio_float32": raw / nbytes if nbytes else None,
        "error_bound": error, "shell": shell, "error_bound_cm": float(error_cm), "shell_cm": float(shell_cm),
        "unit_scale_cm": scale, "unit_scale_from": how,
        "max_error": float(stats.max_error), "p99_error": float(stats.p99_error),
        "max_error_cm": float(stats.max_error) * scale, "p99_error_cm": float(stats.p99_error) * scale,
        "joint_max_error": [float(x) for x in per_joint],
        "worst_joints": [{"name": clip.names[j], "max_error": float(per_joint[j]),
                          "max_error_cm": float(per_joint[j]) * scale} for j in worst],
    }
    return figures, compressed
