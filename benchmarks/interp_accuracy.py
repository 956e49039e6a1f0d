"""Measures the accuracy bounds written in csrc/interp.c, on every ISA path.

Run: python benchmarks/interp_accuracy.py [--pairs N]   (default 10,000,000 random pairs)

Random unit quaternion pairs (uniform over rotations, rounded to float32) with random t in
[0, 1], plus nearly parallel, antipodal and nearly antipodal pairs: max abs component error of
slerp / nlerp (float32 kernels, per-element t) against the float64 jointmath.reference, the same
for the slerp with one t per call (the fixed-t weights of slerp_joints and of slerp with a scalar
t; one call per 10,000 pairs, each with its own random t), and the max | |q| - 1 |. Pairs whose dot product is within 1e-6 of 0 are left out of the maximum: the
shorter arc is a tie there that float rounding decides (tests/test_interp.py accepts either arc
for them); their number is printed.
"""
import argparse

import numpy as np

import jointmath as jm
from jointmath import _core, reference

CHUNK = 1_000_000
SAME_T = 10_000


def unit(q):
    return (q / np.linalg.norm(q, axis=-1, keepdims=True)).astype(np.float32)


def pairs(rng, n):
    """n random pairs; one chunk in ten is nearly parallel / antipodal at 1e-3 ... 1e-7."""
    q0 = unit(rng.standard_normal((n, 4)))
    q1 = unit(rng.standard_normal((n, 4)))
    near = rng.random(n) < 0.1
    eps = 10.0 ** rng.integers(-7, -2, n)[:, None]
    sign = rng.choice([-1.0, 1.0], n)[:, None]
    q1[near] = unit(sign[near] * (q0[near] + eps[near] * rng.standard_normal((near.sum(), 4))))
    return q0, q1, rng.random(n).astype(np.float32)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=10_000_000)
    args = parser.parse_args()
    worst = {isa: {"slerp": 0.0, "slerp one t": 0.0, "nlerp": 0.0, "norm": 0.0} for isa in jm.available_isas()}
    ties = 0
    rng = np.random.default_rng(2026)
    for start in range(0, args.pairs, CHUNK):
        q0, q1, t = pairs(rng, min(CHUNK, args.pairs - start))
        keep = np.abs(np.sum(q0.astype(np.float64) * q1, axis=-1)) >= 1e-6
        ties += int((~keep).sum())
        one_t = np.repeat(t[::SAME_T], SAME_T)[:len(t)]  # one t per run of SAME_T pairs
        expected = {"slerp": reference.slerp(q0, q1, t), "nlerp": reference.nlerp(q0, q1, t),
                    "slerp one t": reference.slerp(q0, q1, one_t)}
        for isa in worst:
            _core._set_isa(isa)
            for name, func in (("slerp", jm.slerp), ("nlerp", jm.nlerp)):
                out = func(q0, q1, t)
                w = worst[isa]
                w[name] = max(w[name], float(np.abs(out - expected[name])[keep].max()))
                norm_err = np.abs(np.linalg.norm(out.astype(np.float64), axis=-1) - 1).max()
                w["norm"] = max(w["norm"], float(norm_err))
            out = np.concatenate([jm.slerp(q0[i:i + SAME_T], q1[i:i + SAME_T], float(one_t[i]))
                                  for i in range(0, len(t), SAME_T)])
            w = worst[isa]
            w["slerp one t"] = max(w["slerp one t"], float(np.abs(out - expected["slerp one t"])[keep].max()))
            norm_err = np.abs(np.linalg.norm(out.astype(np.float64), axis=-1) - 1).max()
            w["norm"] = max(w["norm"], float(norm_err))
    print(f"{args.pairs:,} pairs with random t ({ties} dot-product ties left out)")
    print(f"  {'path':<8}{'slerp max abs err':>20}{'slerp, one t':>16}{'nlerp max abs err':>20}{'max | |q| - 1 |':>18}")
    for isa, w in worst.items():
        print(f"  {isa:<8}{w['slerp']:>20.3g}{w['slerp one t']:>16.3g}{w['nlerp']:>20.3g}{w['norm']:>18.3g}")


if __name__ == "__main__":
    main()
