"""python -m jointmath --selfcheck: check each kernel family (conversions both ways and float64,
joint blends and quaternion blends with a per-element t, 10- and 20-bit packing, products and
forward kinematics, Euler angles, sign continuity at any size, rotation extraction; rotations and
translations) against the float64 reference on generated data, on every ISA path this CPU runs
(JOINTMATH_ISA only picks the path left running), and print a timing table per path.

Exit status 0 when every check holds its stated bound, 1 otherwise, 2 for a usage error (an
unknown option, --joints below 1, a negative --seed).
"""
import argparse
import sys
import time

import numpy as np

import jointmath as jm
from jointmath import _core, bvh, data, reference

__all__ = ["main"]


def _random_joints(rng, n):
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return jm.make_joints(q.astype(np.float32), rng.uniform(-1, 1, (n, 3)))


def _angle(q0, q1):
    return reference.angle_between(q0, q1).max(initial=0.0)


def _checks(joints, skeleton, rng):
    """[(name, measured error, bound, function to time)] for the running path: every kernel
    family against jointmath.reference, with the bound its documentation states (float32
    unless named float64), rotations and translations both; forward kinematics on frames of
    the hierarchy `skeleton` (parents)."""
    n = joints.shape[0]
    q, q64 = joints["q"], joints["q"].astype(np.float64)
    mats = jm.joints_to_mats(joints)
    back = jm.mats_to_joints(mats)
    blend = joints[::-1].copy()
    slerped, lerped = jm.slerp_joints(joints, blend, 0.3), jm.lerp_joints(joints, blend, 0.3)
    ref_slerped, ref_lerped = reference.slerp_joints(joints, blend, 0.3), reference.lerp_joints(joints, blend, 0.3)
    # a per-element t read through a view (every second value of a table), as users hold it
    t = rng.uniform(0, 1, (n, 2)).astype(np.float32)[:, 1]
    codes10, codes20 = jm.pack_quats(q), jm.pack_quats(q, bits=20)
    composed = jm.compose_mats(mats, mats[::-1].copy())
    angles = rng.uniform(-180, 180, (n, 3)).astype(np.float32)
    frames = n // len(skeleton)
    skeleton_joints = joints[:frames * len(skeleton)].reshape(frames, len(skeleton))
    # well-conditioned matrices (rotations times an SPD stretch of condition <= 2) for extraction
    stretch = np.eye(3) + 0.3 * np.tanh(rng.standard_normal((n, 3, 3)))
    a = (reference.quat_to_matrix(q) @ (stretch @ np.swapaxes(stretch, 1, 2))).astype(np.float32)
    out_m, out_j = np.empty_like(mats), np.empty_like(joints)
    # sign continuity over frames of the skeleton's width: random signs, and sizes from 2^-100 to
    # 2^60 (exact scales: float32 dot products down to 2^-200 underflow and take the double path)
    chain = (skeleton_joints["q"] * rng.choice(np.float32([-1, 1]), (frames, len(skeleton), 1))
             * np.exp2(rng.integers(-100, 61, (frames, len(skeleton), 1))).astype(np.float32))
    continuous = jm.make_continuous(chain)
    units = continuous / np.abs(continuous).max(axis=-1, keepdims=True)  # exact
    opposite = int(np.sum(np.einsum("fjk,fjk->fj", units[1:].astype(np.float64), units[:-1].astype(np.float64)) < 0)
                   + np.sum(np.abs(continuous) != np.abs(chain)))

    def translation_error(got, expected):
        return np.abs(got["t"][..., :3] - expected["t"][..., :3]).max(initial=0.0)

    return [
        ("joints_to_mats  max abs element error", np.abs(mats["m"] - reference.joints_to_mats(joints)["m"]).max(),
         5e-7, lambda: jm.joints_to_mats(joints, out=out_m)),
        ("mats_to_joints  max angle error (rad)", _angle(back["q"], reference.mats_to_joints(mats)["q"]),
         1e-6, lambda: jm.mats_to_joints(mats, out=out_j)),
        ("mats_to_joints  max translation error", translation_error(back, joints), 0.0, None),
        ("quat_to_matrix  float64 max abs element error", np.abs(jm.quat_to_matrix(q64) - reference.quat_to_matrix(q64)).max(),
         1e-15, lambda: jm.quat_to_matrix(q64)),
        ("slerp_joints    max abs component error", np.abs(slerped["q"] - ref_slerped["q"]).max(),
         5e-7, lambda: jm.slerp_joints(joints, blend, 0.3, out=out_j)),
        # translations (1 - t) a + t b in float32, |a|, |b| <= 1: within 2 ulp of 1
        ("slerp_joints    max translation error", translation_error(slerped, ref_slerped), 2.5e-7, None),
        ("lerp_joints     max abs component error", np.abs(lerped["q"] - ref_lerped["q"]).max(),
         3e-7, lambda: jm.lerp_joints(joints, blend, 0.3, out=out_j)),
        ("lerp_joints     max translation error", translation_error(lerped, ref_lerped), 2.5e-7, None),
        ("slerp           per-element t, max abs component error", np.abs(jm.slerp(q, blend["q"], t) - reference.slerp(q, blend["q"], t)).max(),
         5e-7, lambda: jm.slerp(q, blend["q"], t)),
        ("nlerp           per-element t, max abs component error", np.abs(jm.nlerp(q, blend["q"], t) - reference.nlerp(q, blend["q"], t)).max(),
         3e-7, lambda: jm.nlerp(q, blend["q"], t)),
        # the format's bound is stated for the unpacked quaternion normalised (it is unit to 1.7e-7)
        ("pack_quats      10-bit max angle error (deg)", np.degrees(_angle(jm.unpack_quats(codes10), q)),
         np.degrees(2 * np.arccos(1 - 3 / (2 * 1022**2))), lambda: jm.pack_quats(q)),
        ("pack_quats      20-bit max angle error (deg)", np.degrees(_angle(jm.unpack_quats(codes20), q)),
         2e-4, None),
        ("compose_mats    max abs element error", np.abs(composed["m"] - reference.compose_mats(mats, mats[::-1])["m"]).max(),
         # a few ulp of the largest product term: |R| <= 1 and |t| <= 1 here, terms up to 2
         4 * 2.0**-23 * 2, lambda: jm.compose_mats(mats, mats, out=out_m)),
        ("forward_kinematics max abs element error", np.abs(jm.forward_kinematics(skeleton_joints, skeleton)["m"]
                                                           - reference.forward_kinematics(skeleton_joints, skeleton)["m"]).max(initial=0.0),
         # each joint down a chain adds the error of one conversion and one product (a few ulp of
         # the largest term): 9 joints deep here, world translations up to 9
         9 * 9 * 4 * 2.0**-23, lambda: jm.forward_kinematics(skeleton_joints, skeleton)),
        ("euler_to_quat   max angle error (rad)", _angle(jm.euler_to_quat(angles, "ZXY", degrees=True),
                                                         reference.euler_to_quat(angles, "ZXY", degrees=True)),
         1e-6, lambda: jm.euler_to_quat(angles, "ZXY", degrees=True)),
        ("make_continuous neighbours left opposite, values changed", opposite, 0,
         lambda: jm.make_continuous(chain)),
        ("extract_rotation max angle error (rad)", _angle(jm.extract_rotation(a), reference.matrix_to_quat(reference.polar_rotation(a))),
         # max(1e-6, 1e-6 s1 / (s2 + s3)) rad, and s1 <= s2 + s3 for these matrices
         1e-6, lambda: jm.extract_rotation(a)),
    ]


def _median_ns_per_joint(func, n, repeats=9):
    func()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples)) / n * 1e9


def _at_least(low):
    """An argparse type: an integer >= low, else a usage error saying so."""
    def integer(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}")
        return value

    return integer


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jointmath --selfcheck", description=__doc__, allow_abbrev=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--joints", type=_at_least(1), default=20_011,
                        help="joints of generated data (default 20011: no multiple of any vector width, so every "
                             "path's last partial block runs)")
    parser.add_argument("--seed", type=_at_least(0), default=0, help="random seed, an integer >= 0 (default 0)")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    joints = _random_joints(rng, args.joints)
    # forward kinematics runs on the generated joints as frames of the sample clip's hierarchy
    skeleton = bvh.load(data.sample_clip_path()).parents
    running = jm.isa()
    print(f"jointmath {jm.__version__}: running path {running}; this CPU runs {', '.join(jm.available_isas())}")
    print(f"checking every kernel on every path against the float64 reference ({args.joints:,} random joints)\n")

    failed = False
    timings = {}
    try:
        for isa in jm.available_isas():
            _core._set_isa(isa)
            for name, err, bound, func in _checks(joints, skeleton, np.random.default_rng(args.seed)):
                ok = err <= bound
                failed |= not ok
                print(f"  {isa:<7} {name:<55} {err:10.3g}  bound {bound:.3g}  {'ok' if ok else 'FAILED'}")
                if func is not None:
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
