"""The mocap path: loading a BVH clip to (F, J) quaternions, saving it, euler_to_quat,
forward_kinematics.

Against peers measured in the same run: jointmath's own reader and writer at an earlier commit
(--baseline REV, a git revision: its bvh.py is read with `git show` and run on this build's
kernels), the PyPI `bvh` package followed
by scipy's from_euler per joint (pip install bvh; skipped if absent), scipy's from_euler on
1,048,576 triples, and a per-joint NumPy (einsum) loop over the hierarchy for forward kinematics.
Loading is also given in MB of file per second.
Run: python benchmarks/bench_mocap.py [CLIP.bvh] [--baseline REF]
"""
import argparse
import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import jointmath as jm
from jointmath import bvh as jm_bvh

from timing import median_ratio, median_seconds, per_isa, print_table

try:
    from scipy.spatial.transform import Rotation
except ImportError:
    Rotation = None
try:
    import bvh as pypi_bvh  # the PyPI package, a peer for the loading benchmark
except ImportError:
    pypi_bvh = None

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CLIP = ROOT / "tests" / "data" / "01_01.bvh"  # CMU 01_01, in the repository


def baseline_bvh(ref):
    """jointmath/bvh.py as of git commit `ref`, as a module of this jointmath (so it runs on this
    build's kernels), or None when no revision is given or git or the revision is not at hand."""
    if ref is None:
        return None
    try:
        source = subprocess.run(["git", "show", f"{ref}:jointmath/bvh.py"], cwd=ROOT, capture_output=True,
                                check=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    name = "jointmath._bvh_baseline"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "jointmath"
    sys.modules[name] = module
    exec(compile(source, f"{ref}:jointmath/bvh.py", "exec"), module.__dict__)
    return module


def peer_load(path):
    """The PyPI bvh package + scipy from_euler, joint by joint: (F, J, 4) quaternions."""
    with open(path) as f:
        mocap = pypi_bvh.Bvh(f.read())
    quats = []
    for name in mocap.get_joints_names():
        channels = [c for c in mocap.joint_channels(name) if c.endswith("rotation")]
        angles = np.array(mocap.frames_joint_channels(name, channels), dtype=np.float64)
        order = "".join(c[0] for c in channels)
        quats.append(Rotation.from_euler(order, angles, degrees=True).as_quat())
    return np.stack(quats, axis=1)


def einsum_forward_kinematics(joints, parents):
    """World 3x4 transforms by a per-joint NumPy loop: the usual hand-written version."""
    local = jm.reference.joints_to_mats(joints)["m"]
    world = np.empty_like(local)
    for j, p in enumerate(parents):
        if p < 0:
            world[:, j] = local[:, j]
        else:
            world[:, j, :, :3] = np.einsum("fik,fkj->fij", world[:, p, :, :3], local[:, j, :, :3])
            world[:, j, :, 3] = np.einsum("fik,fk->fi", world[:, p, :, :3], local[:, j, :, 3]) + world[:, p, :, 3]
    return world


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("clip", nargs="?", default=str(DEFAULT_CLIP), help="a BVH file (default: CMU 01_01.bvh)")
    parser.add_argument("--baseline", help="a git revision whose BVH reader and writer to time beside this one")
    args = parser.parse_args()
    print(f"running path: {jm.isa()}; available: {', '.join(jm.available_isas())}")
    clip = jm_bvh.load(args.clip)
    frames, joints = clip.n_frames, clip.n_joints
    size = os.path.getsize(args.clip)
    old = baseline_bvh(args.baseline)

    def load():
        return jm_bvh.load(args.clip)

    rows = [("jointmath.bvh.load", median_seconds(load, repeats=15))]
    if old is not None:
        rows.append((f"jointmath.bvh.load at {args.baseline}", median_seconds(lambda: old.load(args.clip), repeats=7)))
    if pypi_bvh is not None and Rotation is not None:
        rows.append(("PyPI bvh + scipy from_euler", median_seconds(lambda: peer_load(args.clip), min_time=1, repeats=3)))
    print_table(f"load {Path(args.clip).name} ({size / 1e6:.2f} MB) to (F, J) quaternions, per frame", frames, rows,
                "jointmath.bvh.load")
    for label, seconds in rows:
        print(f"  {label:<34}{size / seconds / 1e6:>10.1f} MB/s of file")
    # thread CPU time: the time waited for a core on a shared machine counts on neither side
    print(f"  {'jointmath.bvh.load, CPU time':<34}{size / median_seconds(load, repeats=15, cpu=True) / 1e6:>10.1f} "
          f"MB/s of file")
    if old is not None:
        ratio = median_ratio(lambda: old.load(args.clip), load)
        cpu_ratio = median_ratio(lambda: old.load(args.clip), load, cpu=True)
        print(f"  time at {args.baseline} / time now, timed back to back: {ratio:.2f}x (CPU time {cpu_ratio:.2f}x)")

    rows = [("jointmath.bvh.save", median_seconds(lambda: jm_bvh.save(clip, io.BytesIO()), repeats=7))]
    if old is not None:
        old_clip = old.load(args.clip)
        rows.append((f"jointmath.bvh.save at {args.baseline}",
                     median_seconds(lambda: old.save(old_clip, io.StringIO()), repeats=7)))
    print_table(f"save {Path(args.clip).name}, per frame", frames, rows, "jointmath.bvh.save")
    if old is not None:
        ratio = median_ratio(lambda: old.save(old_clip, io.StringIO()), lambda: jm_bvh.save(clip, io.BytesIO()),
                             cpu=True)
        print(f"  save time at {args.baseline} / time now, timed back to back (CPU time): {ratio:.2f}x")

    n = 1 << 20
    angles = np.random.default_rng(0).uniform(-180, 180, (n, 3)).astype(np.float32)
    rows = [(f"jointmath {isa}", t) for isa, t in per_isa(lambda: jm.euler_to_quat(angles, "ZXY")).items()]
    if Rotation is not None:
        angles64 = angles.astype(np.float64)
        rows.append(("scipy from_euler + as_quat", median_seconds(
            lambda: Rotation.from_euler("ZXY", angles64, degrees=True).as_quat(), repeats=3)))
    print_table("euler_to_quat, ZXY degrees", n, rows, "jointmath scalar")

    rows = [(f"jointmath {isa}", t) for isa, t in
            per_isa(lambda: jm.forward_kinematics(clip.joints, clip.parents)).items()]
    rows.append(("NumPy einsum loop over joints", median_seconds(
        lambda: einsum_forward_kinematics(clip.joints, clip.parents), repeats=5)))
    print_table(f"forward_kinematics, {joints} joints, per frame", frames, rows, "jointmath scalar")


if __name__ == "__main__":
    main()
