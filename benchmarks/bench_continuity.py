"""make_continuous against the plain NumPy sign continuity it replaces, (35,776 x 31) quaternions.

The NumPy version is the plain float32 one: the dot product of each frame with the previous
one, then the cumulative product of the signs along time. Both are timed back to back in every
round (benchmarks/timing.py) on every path; the goal is >= 2x faster than NumPy.

    python benchmarks/bench_continuity.py
"""
import numpy as np

import jointmath as jm
from jointmath import _core
from timing import median_ratio, median_seconds


def numpy_continuity(q):
    """Plain NumPy float32 sign continuity along axis 0 of (F, J, 4)."""
    dots = np.einsum("fjk,fjk->fj", q[1:], q[:-1])
    signs = np.cumprod(np.where(dots < 0, np.float32(-1), np.float32(1)), axis=0)
    out = np.empty_like(q)
    out[0] = q[0]
    np.multiply(q[1:], signs[..., None], out=out[1:])
    return out


def main():
    rng = np.random.default_rng(0)
    frames, joints = 35_776, 31
    q = rng.standard_normal((frames, joints, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    assert np.array_equal(jm.make_continuous(q), numpy_continuity(q))
    n = frames * joints
    numpy_ns = median_seconds(lambda: numpy_continuity(q)) / n * 1e9
    print(f"(35,776 x 31) float32 quaternions; plain NumPy: {numpy_ns:.2f} ns per joint\n")
    print("| path | float32 ns/joint | speed-up over NumPy (same run) | float64 ns/joint |")
    print("|---|---:|---:|---:|")
    q64 = q.astype(np.float64)
    before = jm.isa()
    try:
        for name in jm.available_isas():
            _core._set_isa(name)
            ns = median_seconds(lambda: jm.make_continuous(q)) / n * 1e9
            ratio = median_ratio(lambda: numpy_continuity(q), lambda: jm.make_continuous(q), rounds=11)
            ns64 = median_seconds(lambda: jm.make_continuous(q64)) / n * 1e9
            print(f"| {name} | {ns:.2f} | {ratio:.2f}x | {ns64:.2f} |")
    finally:
        _core._set_isa(before)


if __name__ == "__main__":
    main()
