"""A BVH clip as an ACL raw clip (.acl.sjson), the input of ACL's acl_compressor.

ACL (nfrechette/acl) measures in centimetres: its default precision is 0.01 cm and its default
virtual-vertex (shell) distance 3 cm. The clip is written in cm, its lengths multiplied by
`unit_scale` (cm per clip unit: CMU's clips are 2.54/0.45; by default 170 / skeleton height, the
scale the codec's own defaults assume, a 170 cm human), so that ACL's defaults mean the same
thing on every clip. Written: the skeleton (parents before children) with its bind pose (identity
rotation, the joint's OFFSET), and per joint its local rotation (x, y, z, w) and translation
(OFFSET + position channels) at every frame, and the frame rate. No `settings` block: with none,
acl_compressor compresses with ACL's default settings (variable bit rates, 0.01 cm per joint).

Run: python benchmarks/bvh_to_acl_sjson.py CLIP.bvh OUT.acl.sjson [--fps 24] [--unit-scale 2.54/0.45]
"""
import argparse
import io
import json
import os
import sys

import numpy as np

#: ACL's default virtual-vertex distance (its error metric's shell), in cm.
ACL_SHELL_CM = 3.0

#: ACL's default precision (largest object-space error), in cm.
ACL_ERROR_CM = 0.01

#: The skeleton height the defaults are scaled against, in cm: a human.
HUMAN_HEIGHT_CM = 170.0


def default_unit_scale(clip):
    """cm per clip unit when none is given: a skeleton HUMAN_HEIGHT_CM tall (1.0 for a skeleton
    of height 0)."""
    height = clip.skeleton_height()
    return HUMAN_HEIGHT_CM / height if height > 0 else 1.0


def _rows(values):
    """One `[ a, b, ... ]` line per row of the 2-D float array `values`, each number written so
    that it reads back as the same float32 (9 significant digits)."""
    text = io.StringIO()
    np.savetxt(text, values, fmt="%.9g", delimiter=", ", newline=" ]\n\t\t\t[ ")
    return "\t\t\t[ " + text.getvalue()[: -len("\n\t\t\t[ ")]


def write_acl_sjson(clip, file, unit_scale=None, shell_cm=ACL_SHELL_CM, name=None):
    """Write `clip` (a jointmath.bvh.Clip) as an ACL raw clip into the text file `file`.

    Lengths are multiplied by `unit_scale` (cm per clip unit; default default_unit_scale(clip)).
    Returns the unit scale used.
    """
    scale = default_unit_scale(clip) if unit_scale is None else float(unit_scale)
    joints = clip.joints
    n_frames, n_joints = joints.shape
    write = file.write
    write("version = 5\n\n")
    write("clip =\n{\n")
    write(f"\tname = {json.dumps(name if name is not None else clip.name or 'clip')}\n")
    write(f"\tnum_samples = {n_frames}\n")
    write(f"\tsample_rate = {1.0 / clip.frame_time:.17g}\n")
    write("\tis_binary_exact = false\n")
    write("}\n\n")
    write("bones =\n[\n")
    for j in range(n_joints):
        parent = clip.names[clip.parents[j]] if clip.parents[j] >= 0 else ""
        offset = clip.offsets[j] * scale
        write("\t{\n")
        write(f"\t\tname = {json.dumps(clip.names[j])}\n")
        write(f"\t\tparent = {json.dumps(parent)}\n")
        write(f"\t\tvertex_distance = {shell_cm:.17g}\n")
        write("\t\tbind_rotation = [ 0.0, 0.0, 0.0, 1.0 ]\n")
        write(f"\t\tbind_translation = [ {offset[0]:.17g}, {offset[1]:.17g}, {offset[2]:.17g} ]\n")
        write("\t}\n")
    write("]\n\n")
    write("tracks =\n[\n")
    q = joints["q"].astype(np.float64)
    t = joints["t"][..., :3].astype(np.float64) * scale
    for j in range(n_joints):
        write("\t{\n")
        write(f"\t\tname = {json.dumps(clip.names[j])}\n")
        write("\t\trotations =\n\t\t[\n")
        write(_rows(q[:, j]))
        write("\n\t\t]\n")
        write("\t\ttranslations =\n\t\t[\n")
        write(_rows(t[:, j]))
        write("\n\t\t]\n")
        write("\t}\n")
    write("]\n")
    return scale


def convert(bvh_path, out_path, fps=None, unit_scale=None):
    """Read the BVH at `bvh_path` (resampled to `fps` when given) and write it as ACL SJSON at
    `out_path`. Returns (the clip written, the unit scale used)."""
    from jointmath import bvh

    clip = bvh.load(bvh_path)
    if fps is not None:
        clip = bvh.resample(clip, fps)
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        scale = write_acl_sjson(clip, f, unit_scale, name=os.path.splitext(os.path.basename(bvh_path))[0])
    return clip, scale


def parse_unit_scale(text):
    """A number or a fraction such as 2.54/0.45."""
    parts = [float(p) for p in text.split("/")]
    if len(parts) not in (1, 2):
        raise argparse.ArgumentTypeError(f"expected a number or a fraction, got {text!r}")
    return parts[0] / parts[1] if len(parts) == 2 else parts[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bvh")
    parser.add_argument("out")
    parser.add_argument("--fps", type=float, default=None, help="resample to this rate first")
    parser.add_argument("--unit-scale", type=parse_unit_scale, default=None,
                        help="cm per clip unit (default: 170 / skeleton height)")
    args = parser.parse_args(argv)
    clip, scale = convert(args.bvh, args.out, args.fps, args.unit_scale)
    print(f"{args.out}: {clip.n_frames} samples x {clip.n_joints} joints at {clip.fps:g} fps, "
          f"{scale:.6g} cm per clip unit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
