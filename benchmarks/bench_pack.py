"""Quaternion packing: ns per quaternion for pack_quats / unpack_quats on every ISA path, against
the project's scalar path, the float64 NumPy reference and a NumPy copy of 16 bytes per
quaternion (the memory bound). --accuracy measures the round-trip error over 10^7 random unit
quaternions instead (against the 32-bit format's bound 1 - 3 / (2 * 1022^2) on |q . q'| for q'
normalised, i.e. 0.19421 degrees) and that zero
components come back exactly 0. --baseline DIR times pack_quats against another build of
jointmath (a checkout built in place at DIR, e.g. an earlier commit), the two alternating in
every round. Run: python benchmarks/bench_pack.py [--quick] [--accuracy] [--baseline DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import jointmath as jm
from jointmath import reference

from timing import median_seconds, per_isa, print_table


def random_quats(n, rng):
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q.astype(np.float32)


def bench_size(n, rng):
    q = random_quats(n, rng)
    copy_src = np.ones(n * 16, np.uint8)
    copy_dst = np.empty_like(copy_src)
    copy_time = median_seconds(lambda: np.copyto(copy_dst, copy_src))
    for bits in (10, 20):
        codes = jm.pack_quats(q, bits)
        for title, func, ref_func in [
            (f"pack_quats bits={bits}", lambda: jm.pack_quats(q, bits), lambda: reference.pack_quats(q, bits)),
            (f"unpack_quats bits={bits}", lambda: jm.unpack_quats(codes), lambda: reference.unpack_quats(codes)),
        ]:
            rows = [(f"jointmath {isa}", t) for isa, t in per_isa(func).items()]
            rows.append(("numpy reference (float64)", median_seconds(ref_func)))
            rows.append(("numpy copy, 16 B/quaternion", copy_time))
            print_table(title, n, rows, "jointmath scalar")
            best = min(t for label, t in rows if label.startswith("jointmath"))
            print(f"  best path: {dict(rows)['jointmath scalar'] / best:.1f}x scalar, {best / copy_time:.2f}x the copy")


def measure_accuracy(total, rng, chunk=1_000_000):
    print(f"round-trip error over {total:,} random unit quaternions, every path "
          f"(32-bit format bound: |q.q'| >= 1 - 3/(2*1022^2) = {1 - 3 / (2 * 1022**2):.8f} for q' normalised, "
          f"{np.degrees(2 * np.arccos(1 - 3 / (2 * 1022**2))):.5f} deg)")
    for isa in jm.available_isas():
        jm._core._set_isa(isa)
        for bits in (10, 20):
            # zero components: the identity and 10^5 quaternions with ~40 % of their components 0
            q = random_quats(100_000, rng)
            zero = rng.random(q.shape) < 0.4
            zero[np.arange(len(q)), rng.integers(0, 4, len(q))] = False
            q[zero] = 0
            back = jm.unpack_quats(jm.pack_quats(np.vstack([q, [0, 0, 0, 1]]).astype(np.float32), bits))
            print(f"  {isa:<7} bits={bits}: identity -> {back[-1].tolist()}, zero components exactly 0: "
                  f"{int((back[:-1][zero] == 0).sum()):,} of {int(zero.sum()):,}")
            worst_dot, worst_angle, angle_sum, worst_norm = 1.0, 0.0, 0.0, 0.0
            for start in range(0, total, chunk):
                q = random_quats(min(chunk, total - start), rng)
                back = jm.unpack_quats(jm.pack_quats(q, bits))
                worst_dot = min(worst_dot, np.abs(np.sum(back.astype(np.float64) * q, axis=-1)).min())
                angle = np.degrees(reference.angle_between(back, q))
                worst_angle = max(worst_angle, angle.max())
                angle_sum += angle.sum()
                worst_norm = max(worst_norm, np.abs(np.linalg.norm(back.astype(np.float64), axis=-1) - 1).max())
            print(f"  {isa:<7} bits={bits}: worst |q.q'| {worst_dot:.8f}, rotation error worst {worst_angle:.3g} deg, "
                  f"mean {angle_sum / total:.3g} deg, worst | |q'| - 1 | {worst_norm:.2g}")


def _batch_seconds(isa, bits, q, number):
    """CPU seconds per call of pack_quats(q, bits) on `isa`, over `number` back-to-back calls (the
    thread's CPU time: the spells another process holds the core are not counted)."""
    jm._core._set_isa(isa)
    t0 = time.thread_time()
    for _ in range(number):
        jm.pack_quats(q, bits)
    return (time.thread_time() - t0) / number


def serve_baseline():
    """The baseline's side of --baseline: reads "isa bits n number" lines, answers each with the
    seconds per call of one batch, after a first line naming the jointmath it imported (the inputs are random_quats(n) of the same seed as the caller's)."""
    print(os.path.dirname(jm.__file__), flush=True)
    quats = {}
    for line in sys.stdin:
        isa, bits, n, number = line.split()
        q = quats.setdefault(int(n), random_quats(int(n), np.random.default_rng(0)))
        print(_batch_seconds(isa, int(bits), q, int(number)), flush=True)


def compare_to_baseline(directory, sizes, rounds=41, batch_seconds=0.004):
    """pack_quats here vs the jointmath built in place at `directory`, per path: each round times
    one batch on each side, back to back, so a slow spell of a shared machine slows both."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(directory))
    child = subprocess.Popen([sys.executable, __file__, "--serve-baseline"], env=env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    print(f"pack_quats: this build ({os.path.dirname(jm.__file__)}) vs the baseline "
          f"({child.stdout.readline().strip()}), medians of {rounds} alternating rounds")
    print(f"  {'':<22}{'ns/quat':>10}{'baseline':>10}{'ratio':>8}")
    try:
        for n in sizes:
            q = random_quats(n, np.random.default_rng(0))
            for bits in (10, 20):
                print(f"  bits={bits}, n = {n:,}")
                for isa in jm.available_isas():
                    number = max(1, round(batch_seconds / _batch_seconds(isa, bits, q, 1)))
                    own, base = [], []
                    for _ in range(rounds):
                        own.append(_batch_seconds(isa, bits, q, number))
                        child.stdin.write(f"{isa} {bits} {n} {number}\n")
                        child.stdin.flush()
                        base.append(float(child.stdout.readline()))
                    ratio = statistics.median(a / b for a, b in zip(own, base))
                    print(f"    {isa:<20}{statistics.median(own) / n * 1e9:>10.3f}"
                          f"{statistics.median(base) / n * 1e9:>10.3f}{ratio:>7.2f}x")
    finally:
        child.stdin.close()
        child.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only 1,024 quaternions")
    parser.add_argument("--accuracy", action="store_true", help="measure the error over 10^7 quaternions")
    parser.add_argument("--baseline", metavar="DIR", help="compare pack_quats to the in-place build at DIR")
    parser.add_argument("--serve-baseline", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    if args.serve_baseline:
        serve_baseline()
        return
    if args.baseline:
        compare_to_baseline(args.baseline, [1024] if args.quick else [1024, 1 << 20])
        return
    if args.accuracy:
        measure_accuracy(10_000_000, rng)
        return
    print(f"running path: {jm.isa()}; available: {', '.join(jm.available_isas())}")
    bench_size(1024, rng)
    if not args.quick:
        bench_size(1 << 20, rng)


if __name__ == "__main__":
    main()
