"""forward_kinematics against joints_to_mats on the same records (one conversion and one 3x4
product per joint against the conversion alone), and the one-frame-one-joint call against np.add
on 4 float32 (a NumPy ufunc call), on every ISA path; ratios measured in one run.
Shape: 35,776 frames x the 31 joints of CMU 01_01 (tests/data/01_01.bvh's hierarchy), random
unit quaternions. Run: python benchmarks/bench_fk.py [--quick]
"""
from pathlib import Path

import numpy as np

import jointmath as jm
from jointmath import _core, bvh

from timing import median_ratio, median_seconds, start

CLIP = Path(__file__).resolve().parents[1] / "tests" / "data" / "01_01.bvh"


def main():
    args, rng = start(__doc__, "2,048 frames instead of 35,776")
    parents = bvh.load(CLIP).parents
    frames, n_joints = (2048 if args.quick else 35776), len(parents)
    q = rng.standard_normal((frames, n_joints, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    joints = jm.make_joints(q.astype(np.float32), rng.uniform(-50, 50, (frames, n_joints, 3)))
    one, one_parent, four = joints[:1, :1].copy(), np.array([-1]), np.ones(4, np.float32)
    print(f"\nforward_kinematics, {frames:,} frames x {n_joints} joints (ns per joint: wall-clock medians; ratios: "
          f"medians of rounds timed back to back in thread CPU time)")
    print(f"  {'path':<8}{'fk ns':>8}{'j2m ns':>9}{'fk / joints_to_mats':>21}{'1x1 call / np.add':>20}")
    before = jm.isa()
    for isa in jm.available_isas():
        _core._set_isa(isa)
        fk = lambda: jm.forward_kinematics(joints, parents)  # noqa: E731
        to_mats = lambda: jm.joints_to_mats(joints)  # noqa: E731
        per_joint = 1e9 / (frames * n_joints)
        print(f"  {isa:<8}{median_seconds(fk, repeats=7) * per_joint:>8.2f}{median_seconds(to_mats, repeats=7) * per_joint:>9.2f}"
              f"{median_ratio(fk, to_mats, rounds=11, cpu=True):>21.2f}"
              f"{median_ratio(lambda: jm.forward_kinematics(one, one_parent), lambda: np.add(four, four), cpu=True):>20.2f}")
    _core._set_isa(before)


if __name__ == "__main__":
    main()
