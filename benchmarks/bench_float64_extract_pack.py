"""float64 rotation extraction and packing: the float64 kernels against the float32 kernels of the
same path (float64 / float32 time, back to back in every round) at 1,024 and 1,048,576 elements,
on every ISA path, and against the float64 NumPy routes they replace (the NumPy implementation of
the extraction method, tests/extract64_oracle.py, and jointmath.reference.pack_quats).

extract_rotation: warm start, 3 Mueller updates (tol=0: the same work in both dtypes), and the
default Newton method from a cold start (float32 tol 2e-7, float64 tol 1e-12: each dtype's own
default, so float64 may take more updates). pack_quats: 32- and 64-bit codes.
Run: python benchmarks/bench_float64_extract_pack.py [--quick] [--best]

--best: each float64 / float32 ratio is the ratio of the two minimum times over short batches
(bench_float64.best_seconds), for a machine loaded by other work, where medians of back-to-back
ratios wander.
"""
import os
import sys

import numpy as np

import jointmath as jm
from jointmath import _core, reference
from bench_float64 import best_seconds
from timing import median_ratio, median_seconds, start

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from extract64_oracle import extract_rotation64  # noqa: E402  (the former float64 product route)


def deformed(rng, n, max_condition):
    r = reference.quat_to_matrix(rng.standard_normal((n, 4)))
    v = reference.quat_to_matrix(rng.standard_normal((n, 4)))
    kappa = np.exp(rng.uniform(0, np.log(max_condition), n))
    s = np.stack([np.ones(n), rng.uniform(1, kappa), kappa], 1)
    return r @ v @ (s[:, :, None] * np.swapaxes(v, 1, 2))


def cases(rng, n):
    a64 = deformed(rng, n, 10)
    q64 = reference.matrix_to_quat(reference.polar_rotation(a64)) if n <= 1 << 16 else rng.standard_normal((n, 4))
    q64 = q64 / np.linalg.norm(q64, axis=1, keepdims=True)
    a32, q32 = a64.astype(np.float32), q64.astype(np.float32)
    out32, out64 = np.empty((n, 4), np.float32), np.empty((n, 4))
    return {
        "extract, 3 Mueller updates": (
            lambda: jm.extract_rotation(a32, q32, method="muller", max_iter=3, tol=0, out=out32),
            lambda: jm.extract_rotation(a64, q64, method="muller", max_iter=3, tol=0, out=out64),
            lambda: extract_rotation64(a64, q64, False, 3, 0.0, False)),
        "extract, Newton, cold start": (
            lambda: jm.extract_rotation(a32, out=out32),
            lambda: jm.extract_rotation(a64, out=out64),
            lambda: extract_rotation64(a64, None, True, 200, None, False)),
        "pack_quats, 32-bit": (lambda: jm.pack_quats(q32, 10), lambda: jm.pack_quats(q64, 10),
                               lambda: reference.pack_quats(q64, 10)),
        "pack_quats, 64-bit": (lambda: jm.pack_quats(q32, 20), lambda: jm.pack_quats(q64, 20),
                               lambda: reference.pack_quats(q64, 20)),
    }


def main():
    args, rng = start(__doc__, "only 1,024 elements",
                      [("--best", dict(action="store_true", help="ratios of minimum times instead of medians"))])
    sizes = [1024] if args.quick else [1024, 1 << 20]
    before = jm.isa()
    for n in sizes:
        funcs = cases(rng, n)
        print(f"\nn = {n:,}: float64 time / float32 time on each path; float64 ns per element "
              f"(best path); NumPy float64 route / float64 kernel (best path)")
        print(f"  {'':<30}" + "".join(f"{isa:>9}" for isa in jm.available_isas()) + f"{'ns f64':>9}{'x numpy':>10}")
        for label, (f32, f64, numpy_route) in funcs.items():
            ratios = []
            for isa in jm.available_isas():
                _core._set_isa(isa)
                if args.best:
                    ratios.append(best_seconds(f64) / best_seconds(f32))
                else:
                    ratios.append(median_ratio(f64, f32, rounds=15 if n > 1 << 16 else 31))
            _core._set_isa(before)
            t64 = median_seconds(f64)
            slow = n > 1 << 16 and "Newton" in label
            t_numpy = median_seconds(numpy_route, min_time=0, repeats=1 if slow else 5)
            print(f"  {label:<30}" + "".join(f"{r:>9.2f}" for r in ratios) + f"{t64 / n * 1e9:>9.2f}{t_numpy / t64:>10.0f}")


if __name__ == "__main__":
    main()
