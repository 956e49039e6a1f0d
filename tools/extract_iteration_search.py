"""Search for matrices on which extract_rotation needs many updates, on every ISA path.

Random 3x3 matrices A = U diag(s) V^T: U, V uniform random rotations, s1 = 1, s3 = 1/kappa with
log10(kappa) uniform on [0, log10(max_kappa)], s2 log-uniform between them, det A of either sign
(s3 negated in half of them), times a random power of two in [2^-8, 2^8]. Each chunk runs
through extract_rotation (cold start, defaults, return_iterations=True) on every path the CPU
has; the tool reports the matrices per path, the histogram of the update counts, the largest count
per path, the largest difference between two paths' counts for the same matrix, and saves the
hardest matrices found (largest count on any path, largest difference) to --save (an .npy file of
float32 or float64 3x3 matrices, the regression set of tests/kernels/test_extract_iterations.py).

Run: PYTHONPATH=. python tools/extract_iteration_search.py --count 10000000 [--dtype float64]
     [--max-kappa 1e4] [--seed 0] [--save hardest.npy] [--keep 64]
"""
import argparse
import time

import numpy as np

import jointmath as jm
from jointmath import _core


def random_rotations(rng, n):
    """n uniform random rotation matrices (float64), from normalised Gaussian quaternions."""
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    return np.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
    ], axis=1).reshape(n, 3, 3)


def random_matrices(rng, n, max_kappa, dtype):
    """n matrices of condition 1 ... max_kappa, both determinant signs, random scale."""
    log_kappa = rng.uniform(0, np.log10(max_kappa), n)
    s3 = 10.0 ** -log_kappa
    s2 = 10.0 ** (-log_kappa * rng.uniform(0, 1, n))
    sign = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    s = np.stack([np.ones(n), s2, s3 * sign], axis=1)
    scale = np.ldexp(1.0, rng.integers(-8, 9, n))
    a = random_rotations(rng, n) * s[:, None, :] @ random_rotations(rng, n)
    return (a * scale[:, None, None]).astype(dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="matrices per path")
    parser.add_argument("--chunk", type=int, default=500_000)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--max-kappa", type=float, default=1e4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--method", default="newton", choices=["newton", "muller"])
    parser.add_argument("--save", help="write the hardest matrices to this .npy file")
    parser.add_argument("--keep", type=int, default=64, help="how many hardest matrices to keep")
    args = parser.parse_args()

    paths = jm.available_isas()
    before = jm.isa()
    rng = np.random.default_rng(args.seed)
    histogram = {isa: np.zeros(1 << 16, np.int64) for isa in paths}
    worst_spread = 0
    spread_histogram = np.zeros(1 << 16, np.int64)
    kept, kept_score = np.zeros((0, 3, 3), args.dtype), np.zeros(0, np.int64)
    done, start = 0, time.perf_counter()
    try:
        while done < args.count:
            n = min(args.chunk, args.count - done)
            a = random_matrices(rng, n, args.max_kappa, np.dtype(args.dtype))
            counts = []
            for isa in paths:
                _core._set_isa(isa)
                _, it = jm.extract_rotation(a, method=args.method, return_iterations=True)
                histogram[isa] += np.bincount(it, minlength=1 << 16)[: 1 << 16]
                counts.append(it.astype(np.int64))
            counts = np.array(counts)
            spread = counts.max(0) - counts.min(0)
            worst_spread = max(worst_spread, int(spread.max()))
            spread_histogram += np.bincount(spread, minlength=1 << 16)[: 1 << 16]
            # the hardest: the most updates on any path, ties broken by the spread between paths
            score = counts.max(0) * 1000 + spread
            top = np.argsort(score)[-args.keep:]
            kept = np.concatenate([kept, a[top]])
            kept_score = np.concatenate([kept_score, score[top]])
            order = np.argsort(kept_score, kind="stable")[-args.keep:]
            kept, kept_score = kept[order], kept_score[order]
            done += n
    finally:
        _core._set_isa(before)

    print(f"{args.dtype}, method {args.method}, kappa 1 ... {args.max_kappa:g}, seed {args.seed}, "
          f"{done:,} matrices per path, {time.perf_counter() - start:.0f} s")
    print("path     max updates  median  matrices at each count (count: matrices)")
    for isa in paths:
        h = histogram[isa]
        nonzero = np.flatnonzero(h)
        median = int(np.searchsorted(np.cumsum(h), done / 2))
        top = ", ".join(f"{c}: {h[c]:,}" for c in nonzero[-6:])
        print(f"{isa:8} {nonzero[-1]:11d}  {median:6d}  {top}")
    print(f"largest difference between two paths' counts for one matrix: {worst_spread}")
    print("matrices by that difference (difference: matrices): "
          + ", ".join(f"{d}: {spread_histogram[d]:,}" for d in np.flatnonzero(spread_histogram)))
    if args.save:
        np.save(args.save, kept)
        print(f"saved the {len(kept)} hardest matrices to {args.save} "
              f"(most updates {kept_score.max() // 1000}, spread {kept_score.max() % 1000})")


if __name__ == "__main__":
    main()
