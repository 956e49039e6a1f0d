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

__all__ = ["main"]


def _random_joints(rng, n):
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return jm.make_joints(q.astype(np.float32), rng.uniform(-1, 1, (n, 3)))


def _checks(joints, rng):
    """[(name, measured error, bound, function to time)] for the running path: every kernel
    family against jointmath.reference, with the bound its documentation states."""
    n = joints.shape[0]
    mats = jm.joints_to_mats(joints)
    back = jm.mats_to_joints(mats)
    blend = joints[::-1].copy()
    slerped = jm.slerp_joints(joints, blend, 0.3)
    codes = jm.pack_quats(joints["q"])
    composed = jm.compose_mats(mats, mats[::-1].copy())
    angles = rng.uniform(-180, 180, (n, 3)).astype(np.float32)
    # well-conditioned matrices (rotations times an SPD stretch of condition <= 2) for extraction
    stretch = np.eye(3) + 0.3 * np.tanh(rng.standard_normal((n, 3, 3)))
    a = (reference.quat_to_matrix(joints["q"]) @ (stretch @ np.swapaxes(stretch, 1, 2))).astype(np.float32)
    out_m, out_j = np.empty_like(mats), np.empty_like(joints)
    return [
        ("joints_to_mats  max abs element error", np.abs(mats["m"] - reference.joints_to_mats(joints)["m"]).max(),
         5e-7, lambda: jm.joints_to_mats(joints, out=out_m)),
        ("mats_to_joints  max angle error (rad)", reference.angle_between(back["q"], reference.mats_to_joints(mats)["q"]).max(),
         1e-6, lambda: jm.mats_to_joints(mats, out=out_j)),
        ("slerp_joints    max abs component error", np.abs(slerped["q"] - reference.slerp_joints(joints, blend, 0.3)["q"]).max(),
         5e-7, lambda: jm.slerp_joints(joints, blend, 0.3, out=out_j)),
        ("pack_quats      worst |q . unpacked|", 1 - np.abs(np.sum(jm.unpack_quats(codes) * joints["q"].astype(np.float64), -1)).min(),
         3 / (2 * 1022**2), lambda: jm.pack_quats(joints["q"])),
        ("compose_mats    max abs element error", np.abs(composed["m"] - reference.compose_mats(mats, mats[::-1])["m"]).max(),
         1e-5, lambda: jm.compose_mats(mats, mats, out=out_m)),
        ("euler_to_quat   max angle error (rad)", reference.angle_between(jm.euler_to_quat(angles, "ZXY", degrees=True), reference.euler_to_quat(angles, "ZXY", degrees=True)).max(),
         1e-6, lambda: jm.euler_to_quat(angles, "ZXY", degrees=True)),
        ("extract_rotation max angle error (rad)", reference.angle_between(jm.extract_rotation(a), reference.matrix_to_quat(reference.polar_rotation(a))).max(),
         1e-5, lambda: jm.extract_rotation(a)),
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
    parser = argparse.ArgumentParser(prog="python -m jointmath --selfcheck", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--joints", type=int, default=20_000, help="joints of generated data (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    if args.joints < 1:
        parser.error("--joints must be at least 1")

    rng = np.random.default_rng(args.seed)
    joints = _random_joints(rng, args.joints)
    running = jm.isa()
    print(f"jointmath {jm.__version__}: running path {running}; this CPU runs {', '.join(jm.available_isas())}")
    print(f"checking every kernel on every path against the float64 reference ({args.joints:,} random joints)\n")

    failed = False
    timings = {}
    try:
        for isa in jm.available_isas():
            _core._set_isa(isa)
            for name, err, bound, func in _checks(joints, np.random.default_rng(args.seed)):
                ok = err <= bound
                failed |= not ok
                print(f"  {isa:<7} {name:<42} {err:10.3g}  bound {bound:.3g}  {'ok' if ok else 'FAILED'}")
                timings.setdefault(name.split()[0], {})[isa] = _median_ns_per_joint(func, args.joints)
    finally:
        _core._set_isa(running)

    isas = jm.available_isas()
    print(f"\nns per item (median of 9 calls on {args.joints:,} items)")
    print(f"  {'kernel':<17}" + "".join(f"{isa:>10}" for isa in isas) + f"{'speed-up':>10}")
    for kernel, by_isa in timings.items():
        best = min(by_isa.values())
        print(f"  {kernel:<17}" + "".join(f"{by_isa[isa]:10.2f}" for isa in isas) + f"{by_isa['scalar'] / best:9.1f}x")
    print("\nall checks passed" if not failed else "\nSOME CHECKS FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
