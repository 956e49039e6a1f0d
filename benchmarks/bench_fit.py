"""quat_mean, align_vectors and random_quats (csrc/fit.c) against scipy's Rotation, at 1,024 and
1,048,576 elements: ns per element on every path, and the speed-up of the running path over scipy
as a ratio of the two calls timed back to back (benchmarks/timing.py).

Cases (elements = quaternions, vector pairs or rotations drawn):
  quat_mean, one set                 against Rotation.from_quat(q).mean()
  quat_mean, sets of 16 (axis=1)     against scipy's batched Rotation.mean(axis=1) (scipy >= 1.17;
                                     before, a loop over 64 sets, extrapolated)
  align_vectors, one set             against Rotation.align_vectors(a, b)
  align_vectors, sets of 8 pairs     against a loop of Rotation.align_vectors over the sets (scipy
                                     has no batch): timed over the first 64 sets and extrapolated
                                     to all of them (a full loop would take minutes)
  random_quats                       against Rotation.random(n, rng)
  random_quats, out= reused          the same into one array reused from call to call (no page
                                     faults of a fresh result), against Rotation.random(n, rng)
scipy computes in float64 from float64 input; the float32 rows give jointmath float32 input.
Times are the calling thread's CPU time (timing.py's cpu=True): on a machine with more runnable
work than cores, the time a call waits for a core counts on neither side. Work scipy hands to
BLAS threads is not counted either (so the 'x scipy' figures are if anything low).

    python benchmarks/bench_fit.py [--quick]      (--quick: 1,024 elements only)
"""
import numpy as np

import jointmath as jm
from jointmath import _core
from timing import median_ratio, median_seconds, start

try:
    from scipy.spatial.transform import Rotation
except ImportError:
    raise SystemExit("bench_fit.py compares against scipy: pip install scipy")

SUBSET = 64  # sets of the scipy loop actually timed


def cases(rng, n):
    """(label, {dtype: jointmath call}, scipy call, scipy's scale factor) for n elements."""
    q = rng.standard_normal((n, 4)) * [0.2, 0.2, 0.2, 1]
    q32 = q.astype(np.float32)
    qs, qs32 = q.reshape(-1, 16, 4), q32.reshape(-1, 16, 4)
    a, b = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    a8, b8 = a.reshape(-1, 8, 3), b.reshape(-1, 8, 3)
    a8_32, b8_32 = a32.reshape(-1, 8, 3), b32.reshape(-1, 8, 3)
    generator = np.random.default_rng(1)
    reused = {dtype: np.zeros((n, 4), dtype) for dtype in (np.float32, np.float64)}

    def scipy_loop():
        for i in range(SUBSET):
            Rotation.align_vectors(a8[i], b8[i])

    def scipy_means():  # before scipy 1.17 (no mean(axis=)): a loop over the first SUBSET sets
        for i in range(SUBSET):
            Rotation.from_quat(qs[i]).mean()

    try:
        Rotation.from_quat(qs[:2]).mean(axis=1)
        scipy_batched_mean, mean_scale = (lambda: Rotation.from_quat(qs).mean(axis=1)), 1.0
    except (TypeError, ValueError):
        scipy_batched_mean, mean_scale = scipy_means, len(qs) / SUBSET

    return [
        ("quat_mean, one set", {np.float32: lambda: jm.quat_mean(q32), np.float64: lambda: jm.quat_mean(q)},
         lambda: Rotation.from_quat(q).mean(), 1.0),
        ("quat_mean, sets of 16", {np.float32: lambda: jm.quat_mean(qs32, axis=1),
                                   np.float64: lambda: jm.quat_mean(qs, axis=1)},
         scipy_batched_mean, mean_scale),
        ("align_vectors, one set", {np.float32: lambda: jm.align_vectors(a32, b32),
                                    np.float64: lambda: jm.align_vectors(a, b)},
         lambda: Rotation.align_vectors(a, b), 1.0),
        ("align_vectors, sets of 8 (scipy: loop)", {np.float32: lambda: jm.align_vectors(a8_32, b8_32),
                                                    np.float64: lambda: jm.align_vectors(a8, b8)},
         scipy_loop, len(a8) / SUBSET),
        ("random_quats", {np.float32: lambda: jm.random_quats(n, generator),
                          np.float64: lambda: jm.random_quats(n, generator, np.float64)},
         lambda: Rotation.random(n, generator), 1.0),
        ("random_quats, out= reused", {
            np.float32: lambda: jm.random_quats(n, generator, out=reused[np.float32]),
            np.float64: lambda: jm.random_quats(n, generator, np.float64, out=reused[np.float64])},
         lambda: Rotation.random(n, generator), 1.0),
    ]


def main():
    args, rng = start(__doc__.splitlines()[0], "1,024 elements only")
    sizes = [1024] if args.quick else [1024, 1 << 20]
    paths = jm.available_isas()
    running = jm.isa()
    for n in sizes:
        big = n > 10**5
        print(f"\n{n:,} elements: ns per element (medians of CPU time); 'x scipy' = scipy time / jointmath time"
              f" on the {running} path, timed back to back")
        print("| operation | dtype | " + " | ".join(paths) + " | scipy | x scipy |")
        print("|---|---|" + "---:|" * (len(paths) + 2))
        for label, calls, scipy_call, scale in cases(rng, n):
            scipy_ns = median_seconds(scipy_call, min_time=0.5, repeats=3 if big else 15, cpu=True) * scale / n * 1e9
            for dtype, call in calls.items():
                per_path = []
                for name in paths:
                    _core._set_isa(name)
                    per_path.append(median_seconds(call, repeats=5 if big else 15, cpu=True) / n * 1e9)
                _core._set_isa(running)
                ratio = median_ratio(scipy_call, call, min_time=1.0 if big else 0.4, rounds=7 if big else 21, cpu=True) * scale
                cells = " | ".join(f"{ns:.2f}" for ns in per_path)
                print(f"| {label} | {np.dtype(dtype).name} | {cells} | {scipy_ns:.1f} | {ratio:.1f} |", flush=True)


if __name__ == "__main__":
    main()
