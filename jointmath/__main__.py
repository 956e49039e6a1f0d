"""python -m jointmath: check every kernel against the float64 reference on generated data and
print a per-joint timing table for every ISA path this CPU runs.

Exit status 0 when every check holds its stated bound, 1 otherwise.
"""
import argparse
import sys
import time

import numpy as np

import jointmath as jm
from jointmath import _core, reference


def _random_joints(rng, n):
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return jm.make_joints(q.astype(np.float32), rng.uniform(-1, 1, (n, 3)))


def _checks(joints):
    """[(name, measured error, bound, function to time)] for the running path."""
    mats = jm.joints_to_mats(joints)
    q_err = np.abs(mats["m"] - reference.joints_to_mats(joints)["m"]).max()
    back = jm.mats_to_joints(mats)
    m_err = reference.angle_between(back["q"], reference.mats_to_joints(mats)["q"]).max()
    out_m = np.empty_like(mats)
    out_j = np.empty_like(joints)
    return [
        ("joints_to_mats  max abs element error", q_err, 5e-7, lambda: jm.joints_to_mats(joints, out=out_m)),
        ("mats_to_joints  max angle error (rad)", m_err, 1e-6, lambda: jm.mats_to_joints(mats, out=out_j)),
    ]


def _median_ns_per_joint(func, n, repeats=9):
    func()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples)) / n * 1e9


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jointmath", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--joints", type=int, default=100_000, help="joints of generated data (default 100000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    if args.joints < 1:
        parser.error("--joints must be at least 1")

    joints = _random_joints(np.random.default_rng(args.seed), args.joints)
    running = jm.isa()
    print(f"jointmath {jm.__version__}: running path {running}; this CPU runs {', '.join(jm.available_isas())}")
    print(f"checking every kernel on every path against the float64 reference ({args.joints:,} random joints)\n")

    failed = False
    timings = {}
    try:
        for isa in jm.available_isas():
            _core._set_isa(isa)
            for name, err, bound, func in _checks(joints):
                ok = err <= bound
                failed |= not ok
                print(f"  {isa:<7} {name:<40} {err:10.3g}  bound {bound:g}  {'ok' if ok else 'FAILED'}")
                timings.setdefault(name.split()[0], {})[isa] = _median_ns_per_joint(func, args.joints)
    finally:
        _core._set_isa(running)

    isas = jm.available_isas()
    print(f"\nns per joint (median of 9 calls on {args.joints:,} joints)")
    print(f"  {'kernel':<16}" + "".join(f"{isa:>10}" for isa in isas) + f"{'speed-up':>10}")
    for kernel, by_isa in timings.items():
        best = min(by_isa.values())
        print(f"  {kernel:<16}" + "".join(f"{by_isa[isa]:10.2f}" for isa in isas) + f"{by_isa['scalar'] / best:9.1f}x")
    print("\nall checks passed" if not failed else "\nSOME CHECKS FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
