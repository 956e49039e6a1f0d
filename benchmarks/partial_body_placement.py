"""Every second joint in place against the full call in place, with the two lists placed at
chosen distances from each other (x86-64 or arm64):

    PYTHONPATH=. python benchmarks/partial_body_placement.py [--joints N] [--rounds R] [--paths P,...] [GAP_KIB ...]

For each GAP_KIB (default: 0 4 16 64 128 1024 32768) one NumPy buffer of 2 N + GAP records holds
`blend` (its first N records) and `joints` (its last N), so that joints starts N * 32 bytes +
GAP KiB after blend; the gap `numpy` places them as separate NumPy arrays, made in the order
bench_interp.py and partial_body_numpy.py make theirs (joints, blend, out, then the copy that is
blended in place). Every path this CPU runs, per placement: the full slerp in place (ns per
joint), and over it, timed back to back in every round (thread CPU time): every second joint in
place and a random half in place (each index a joint_index), and the lists' data movement in place
(np.maximum of the two lists' floats into joints: both lists read, joints written whole, no math).
A fresh buffer for every placement and path.
"""

import argparse

import numpy as np

import jointmath as jm
from jointmath import _core
from timing import median_ratio, median_seconds

T = 0.3
RECORD = np.dtype(jm.JOINT_QUAT).itemsize
DEFAULT_GAPS = ["0", "4", "16", "64", "128", "1024", "32768"]


def joint_list(rng, n):
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return jm.make_joints(q.astype(np.float32), rng.uniform(-1, 1, (n, 3)))


def placed(gap, first, second):
    """(joints, blend, what keeps them alive): copies of first and second placed as `gap` says."""
    n = len(first)
    if gap == "numpy":
        joints, blend, out = first.copy(), second.copy(), np.empty(n, jm.JOINT_QUAT)
        in_place = joints.copy()
        return in_place, blend, (joints, out)
    records = int(gap) * 1024 // RECORD
    buffer = np.empty(2 * n + records, jm.JOINT_QUAT)
    blend, joints = buffer[:n], buffer[n + records:]
    blend[...], joints[...] = second, first
    return joints, blend, buffer


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gaps", nargs="*", default=DEFAULT_GAPS, metavar="GAP_KIB",
                        help="KiB between the end of blend and the start of joints in one buffer, or numpy")
    parser.add_argument("--joints", type=int, default=1 << 20)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--paths", default=",".join(jm.available_isas()),
                        help="comma-separated paths to time (default: every path this CPU runs)")
    args = parser.parse_args()
    for gap in args.gaps:
        if gap != "numpy" and (not gap.isdigit() or int(gap) * 1024 % RECORD):
            parser.error(f"GAP_KIB must be a number of KiB or numpy, got {gap!r}")
    n = args.joints
    rng = np.random.default_rng(0)
    first, second = joint_list(rng, n), joint_list(rng, n)
    every_second = jm.joint_index(np.arange(0, n, 2), n)
    random_half = jm.joint_index(rng.choice(n, n // 2, replace=False), n)
    print(f"{n:,} joints, in place, medians of {args.rounds} rounds; distance: joints' start - blend's start")
    print("| path | gap | distance (MiB) | distance mod 32 MiB (KiB) | full in place (ns/joint) | "
          "every second joint / full | random half / full | data movement / full |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    before = jm.isa()
    try:
        for isa in args.paths.split(","):
            _core._set_isa(isa)
            for gap in args.gaps:
                joints, blend, keep = placed(gap, first, second)
                distance = joints.ctypes.data - blend.ctypes.data
                floats = joints.view(np.float32), blend.view(np.float32)
                full = lambda: jm.slerp_joints(joints, blend, T, out=joints)  # noqa: E731
                ratios = [median_ratio(call, full, rounds=args.rounds, cpu=True) for call in (
                    lambda: jm.slerp_joints(joints, blend, T, index=every_second, out=joints),
                    lambda: jm.slerp_joints(joints, blend, T, index=random_half, out=joints),
                    lambda: np.maximum(*floats, out=floats[0]))]
                ns = median_seconds(full, cpu=True) * 1e9 / n
                print(f"| {isa} | {gap} | {distance / 2**20:.3f} | {distance % 2**25 / 1024:.0f} | {ns:.2f} | "
                      + " | ".join(f"{r:.2f}" for r in ratios) + " |", flush=True)
    finally:
        _core._set_isa(before)


if __name__ == "__main__":
    main()
