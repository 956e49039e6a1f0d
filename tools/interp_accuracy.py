"""Measures the accuracy bounds written in csrc/slerp.c and csrc/slerp_lanes.h, on every ISA path.

Run: python tools/interp_accuracy.py [--pairs N] [--scaled-pairs M] [--float64-pairs K]
(defaults 10,000,000, 1,000,000 and 1,000,000 random pairs; --float64-only runs only the last part)

Random unit quaternion pairs (uniform over rotations, rounded to float32) with random t in
[0, 1], plus nearly parallel, antipodal and nearly antipodal pairs: max abs component error of
slerp / nlerp (float32 kernels, per-element t) against the float64 jointmath.reference, the same
for the slerp with one t per call (the fixed-t weights of slerp_joints and of slerp with a scalar
t; one call per 10,000 pairs, each with its own random t), and the max | |q| - 1 |. Pairs whose dot product is within 1e-6 of 0 are left out of the maximum: the
shorter arc is a tie there that float rounding decides (tests/kernels/test_interp.py accepts either arc
for them); their number is printed.

Then the end of the arc: at t = 1 every function must return exactly -q1 where q0 . q1 < 0 and
q1 where it is > 0 (the last sample of slerp(q0, q1, linspace(0, 1, n)) on the same hemisphere as
the others); the number of pairs that do not, per function and path. And nlerp / lerp_joints on
inputs of any scale: q0 and q1 multiplied by random finite scales m 2^e (m in [1, 2), e in
[-149, 126], random signs), the same scale for both or one each, against the float64
reference on the same float32 inputs: max abs component error and the number of non-finite
results; the float64 nlerp (jointmath.nlerp on float64) on unit pairs scaled by one power of two
2^e, e in [-1000, 1000], against the unscaled result.

Last the float64 kernels (slerp_quats_f64, nlerp_quats_f64) against an extended-precision
(np.longdouble) slerp / nlerp, not jointmath.reference: unit pairs in float64 (a tenth of them
nearly parallel / antipodal at 1e-3 ... 1e-15 in each chunk) with a random t each and with one t for all, and
nlerp with each input scaled by its own random power of two 2^-1074 ... 2^1022; ties (|q0 . q1|
< 1e-12 |q0| |q1|) are left out.
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
    parser.add_argument("--scaled-pairs", type=int, default=1_000_000)
    parser.add_argument("--float64-pairs", type=int, default=1_000_000)
    parser.add_argument("--float64-only", action="store_true")
    args = parser.parse_args()
    if args.float64_only:
        float64_accuracy(args.float64_pairs, np.random.default_rng(2026))
        return
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
    arc_ends(args.scaled_pairs, rng)
    any_scale(args.scaled_pairs, rng)
    float64_accuracy(args.float64_pairs, rng)


def one_t_calls(func, q0, q1, t):
    """func(q0, q1, t) with a scalar t, SAME_T pairs per call."""
    return np.concatenate([func(q0[i:i + SAME_T], q1[i:i + SAME_T], t) for i in range(0, len(q0), SAME_T)])


def joint_calls(func, q0, q1, t, indexed=False):
    """The rotations of func(joints, blend, t) on joint lists of SAME_T joints (the last one
    shorter); indexed: with an index that lists every joint (the indexed kernel on every pair)."""
    def call(a, b, tt):
        index = {"index": np.arange(len(a))} if indexed else {}
        return func(jm.make_joints(a), jm.make_joints(b), tt, **index)["q"]
    return one_t_calls(call, q0, q1, t)


END_FUNCS = {
    "slerp, t array": lambda q0, q1: jm.slerp(q0, q1, np.ones(len(q0), np.float32)),
    "slerp, t = 1": lambda q0, q1: one_t_calls(jm.slerp, q0, q1, 1.0),
    "nlerp, t array": lambda q0, q1: jm.nlerp(q0, q1, np.ones(len(q0), np.float32)),
    "slerp_joints": lambda q0, q1: joint_calls(jm.slerp_joints, q0, q1, 1.0),
    "lerp_joints": lambda q0, q1: joint_calls(jm.lerp_joints, q0, q1, 1.0),
    "slerp_joints, index of every joint": lambda q0, q1: joint_calls(jm.slerp_joints, q0, q1, 1.0, indexed=True),
}


def arc_ends(n, rng):
    """Per path and function, the pairs (of n, dot-product ties left out) whose t = 1 result is not
    exactly the arc's end sign(q0 . q1) q1; and how many of the pairs have q0 . q1 < 0."""
    q0, q1, _ = pairs(rng, n)
    d = np.sum(q0.astype(np.float64) * q1, axis=-1)
    keep = np.abs(d) >= 1e-6
    end = np.where(d[:, None] < 0, -q1, q1)
    counts = {}
    for isa in jm.available_isas():
        _core._set_isa(isa)
        counts[isa] = {name: int((~(func(q0, q1) == end).all(axis=-1) & keep).sum()) for name, func in END_FUNCS.items()}
    print(f"\nt = 1: results that are not exactly sign(q0 . q1) q1, of {int(keep.sum()):,} pairs "
          f"({int((d[keep] < 0).sum()):,} with q0 . q1 < 0)")
    print(f"  {'path':<8}" + "".join(f"{name:>24}" for name in END_FUNCS))
    for isa, c in counts.items():
        print(f"  {isa:<8}" + "".join(f"{c[name]:>24,}" for name in END_FUNCS))


def scaled(rng, q, same=None):
    """q times random finite scales m 2^e with random signs (one per quaternion, or `same`)."""
    s = same if same is not None else (rng.uniform(1, 2, len(q)) * np.exp2(rng.integers(-149, 127, len(q)))
                                       * rng.choice([-1.0, 1.0], len(q)))
    return (q * s[:, None]).astype(np.float32), s


def any_scale(n, rng):
    """nlerp and lerp_joints on scaled inputs against the float64 reference; float64 nlerp."""
    q0, q1, t = pairs(rng, n)
    inputs = {}
    a, s = scaled(rng, q0)
    inputs["same scale"] = (a, scaled(rng, q1, s)[0])
    inputs["one scale each"] = (scaled(rng, q0)[0], scaled(rng, q1)[0])
    print(f"\nnlerp on inputs of any scale ({n:,} pairs each; ties left out): max abs component error against the "
          f"float64 reference / non-finite results")
    print(f"  {'path':<8}" + "".join(f"{name + ', ' + f:>34}" for name in inputs for f in ("nlerp", "lerp_joints")))
    for isa in jm.available_isas():
        _core._set_isa(isa)
        row = ""
        for a, b in inputs.values():
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            cos = np.sum(a64 * b64, -1) / (np.linalg.norm(a64, axis=-1) * np.linalg.norm(b64, axis=-1))
            keep = np.abs(cos) >= 1e-6
            for out, expected in ((jm.nlerp(a, b, t), reference.nlerp(a, b, t)),
                                  (joint_calls(jm.lerp_joints, a, b, float(t[0])), reference.nlerp(a, b, t[0]))):
                err = np.abs(out - expected).max(axis=-1)
                row += f"{float(np.nan_to_num(err[keep], nan=np.inf).max()):>26.3g} / {int((~np.isfinite(out)).any(-1).sum()):>5}"
        print(f"  {isa:<8}{row}")
    e = rng.integers(-1000, 1000, n)[:, None]
    unit = reference.nlerp(q0.astype(np.float64), q1.astype(np.float64), t)
    out = jm.nlerp(np.ldexp(q0.astype(np.float64), e), np.ldexp(q1.astype(np.float64), e), t)
    print(f"  float64 nlerp, one scale 2^e for both, e in [-1000, 1000]: max abs difference to the unscaled "
          f"result {np.abs(out - unit).max():.3g}")


def ld_blend(kind, q0, q1, t):
    """slerp or nlerp along the shortest arc in np.longdouble (angle 2 atan2(|a - b|, |a + b|)),
    and the mask of decided arcs (|q0 . q1| >= 1e-12 |q0| |q1|)."""
    ld = np.longdouble
    a, b = q0.astype(ld), q1.astype(ld)
    d = np.sum(a * b, -1, keepdims=True)
    decided = (np.abs(d) >= 1e-12 * np.sqrt(np.sum(a * a, -1, keepdims=True) * np.sum(b * b, -1, keepdims=True)))[..., 0]
    b = b * np.where(d < 0, -1, 1).astype(ld)
    t = np.asarray(t).astype(ld)[..., None]
    if kind == "nlerp":
        s = (1 - t) * a + t * b
        return s / np.sqrt(np.sum(s * s, -1, keepdims=True)), decided
    omega = 2 * np.arctan2(np.sqrt(np.sum((a - b) ** 2, -1, keepdims=True)), np.sqrt(np.sum((a + b) ** 2, -1, keepdims=True)))
    s = np.sin(omega)
    safe = np.where(s == 0, 1, s)
    w0, w1 = np.where(s == 0, 1 - t, np.sin((1 - t) * omega) / safe), np.where(s == 0, t, np.sin(t * omega) / safe)
    return w0 * a + w1 * b, decided


def float64_accuracy(n, rng):
    """The float64 kernels against the extended-precision slerp / nlerp (see the module docstring)."""
    names = ("slerp", "slerp, one t", "nlerp", "nlerp, scaled")
    worst = {isa: dict.fromkeys(names, 0.0) for isa in jm.available_isas()}
    for start in range(0, n, CHUNK // 4):
        m = min(CHUNK // 4, n - start)
        q0, q1 = (rng.standard_normal((m, 4)) for _ in range(2))
        q0 /= np.linalg.norm(q0, axis=-1, keepdims=True)
        q1 /= np.linalg.norm(q1, axis=-1, keepdims=True)
        near = slice(m - m // 10, m)  # a tenth of each chunk
        eps = 10.0 ** -rng.integers(3, 16, (m // 10, 1))
        q1[near] = q0[near] * rng.choice([-1.0, 1.0], (m // 10, 1)) + eps * q1[near]
        q1[near] /= np.linalg.norm(q1[near], axis=-1, keepdims=True)
        t, one_t = rng.uniform(0, 1, m), float(rng.uniform(0, 1))
        s0, s1 = (np.exp2(rng.integers(-1074, 1023, (m, 1)).astype(np.float64)) for _ in range(2))
        a, b = q0 * s0, q1 * s1
        live = (np.abs(a).max(-1) > 0) & (np.abs(b).max(-1) > 0)  # the smallest scales can round a quaternion to 0
        cases = {"slerp": (jm.slerp, q0, q1, t), "slerp, one t": (jm.slerp, q0, q1, one_t),
                 "nlerp": (jm.nlerp, q0, q1, t), "nlerp, scaled": (jm.nlerp, a[live], b[live], t[live])}
        expected = {name: ld_blend(func.__name__, x, y, tt) for name, (func, x, y, tt) in cases.items()}
        for isa in worst:
            _core._set_isa(isa)
            for name, (func, x, y, tt) in cases.items():
                want, decided = expected[name]
                err = np.abs(func(x, y, tt) - want).max(-1)[decided]
                worst[isa][name] = max(worst[isa][name], float(np.nan_to_num(err, nan=np.inf).max(initial=0)))
    print(f"\nfloat64 kernels, {n:,} pairs: max abs component error against an extended-precision slerp / nlerp")
    print(f"  {'path':<8}" + "".join(f"{name:>16}" for name in names))
    for isa, w in worst.items():
        print(f"  {isa:<8}" + "".join(f"{w[name]:>16.3g}" for name in names))


if __name__ == "__main__":
    main()
