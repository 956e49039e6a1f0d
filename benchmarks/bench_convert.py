"""Quaternion <-> 3x4 joint matrix conversion: per-joint times on every ISA path, against the
project's scalar path, the NumPy reference, scipy's Rotation, and a plain copy of 48 bytes per
joint (the memory bound). Run: python benchmarks/bench_convert.py [--quick] [--baseline DIR]

--baseline DIR: DIR is another checkout of jointmath built in place (e.g. `git archive` of an
older commit, then `python setup.py build_ext --inplace`); its C core is loaded beside this one
and each path's time is also given as a ratio to that build's, the two timed back to back in
every round (median over rounds), so a change's cost is measured in one run.
"""

import numpy as np

import jointmath as jm
from jointmath import reference

from jointmath import _core
from timing import load_baseline, median_ratio, median_seconds, per_isa, print_table, start

try:
    from scipy.spatial.transform import Rotation
except ImportError:  # scipy is optional: its rows are skipped
    Rotation = None


def random_joints(n, rng):
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return jm.make_joints(q.astype(np.float32), rng.uniform(-1, 1, (n, 3)))


def print_baseline_ratios(func_name, n, src, out, baseline):
    """this build's time / the baseline build's, per path, for _core.<func_name>(src, out=out):
    the geometric mean of the median ratios timed in both orders (whichever of a back-to-back
    pair runs first was measurably favoured on a loaded machine; both orders cancel that)"""
    ours, theirs = getattr(_core, func_name), getattr(baseline, func_name)
    print(f"  vs baseline build (this / baseline; 1.000 = the same speed), n = {n:,}:")
    before = jm.isa()
    try:
        for isa in jm.available_isas():
            _core._set_isa(isa)
            baseline._set_isa(isa)
            a, b = (lambda: ours(src, out=out)), (lambda: theirs(src, out=out))
            ratio = (median_ratio(a, b, min_time=1.0) / median_ratio(b, a, min_time=1.0)) ** 0.5
            print(f"    {isa:<10}{ratio:>8.3f}")
    finally:
        _core._set_isa(before)


def bench_size(n, rng, with_reference, baseline=None):
    joints = random_joints(n, rng)
    mats = jm.joints_to_mats(joints)
    out_mats = np.empty(n, jm.JOINT_MAT)
    out_joints = np.empty(n, jm.JOINT_QUAT)
    copy_src = np.empty(n * 48, np.uint8)
    copy_dst = np.empty_like(copy_src)
    copy_src[:] = 1
    copy_time = median_seconds(lambda: np.copyto(copy_dst, copy_src))

    for title, func, src, out, ref_func, scipy_func in [
        ("joints_to_mats (quat -> 3x4)", jm.joints_to_mats, joints, out_mats, reference.joints_to_mats,
         lambda q: Rotation.from_quat(q).as_matrix()),
        ("mats_to_joints (3x4 -> quat)", jm.mats_to_joints, mats, out_joints, reference.mats_to_joints,
         lambda m: Rotation.from_matrix(m).as_quat()),
    ]:
        rows = [(f"jointmath {isa}", t) for isa, t in per_isa(lambda: func(src, out=out)).items()]
        if with_reference:
            rows.append(("numpy reference (float64)", median_seconds(lambda: ref_func(src))))
        if Rotation is not None:
            # scipy gets plain float64 arrays, its native input
            plain = src["q"].astype(np.float64) if src.dtype == jm.JOINT_QUAT else src["m"][:, :, :3].astype(np.float64)
            rows.append(("scipy Rotation", median_seconds(lambda: scipy_func(plain))))
        rows.append(("numpy copy, 48 B/joint", copy_time))
        print_table(title, n, rows, "jointmath scalar")
        best = min(t for label, t in rows if label.startswith("jointmath"))
        scipy_t = dict(rows).get("scipy Rotation")
        summary = f"  best path: {dict(rows)['jointmath scalar'] / best:.1f}x scalar, {best / copy_time:.2f}x the copy"
        if scipy_t:
            summary += (f", {scipy_t / best:.0f}x faster than scipy"
                        f" (the copy alone: {scipy_t / copy_time:.0f}x)")
        print(summary)
        if baseline is not None:
            print_baseline_ratios(func.__name__, n, src, out, baseline)


def bench_call_overhead():
    one = random_joints(1, np.random.default_rng(1))
    out = np.empty(1, jm.JOINT_MAT)
    ufunc_in = np.ones(1, np.float32)
    ufunc_out = np.empty_like(ufunc_in)
    t_call = median_seconds(lambda: jm.joints_to_mats(one, out=out))
    t_ufunc = median_seconds(lambda: np.add(ufunc_in, ufunc_in, out=ufunc_out))
    print("\ncall overhead, 1 joint")
    print(f"  joints_to_mats(one, out=out)        {t_call * 1e6:8.3f} us")
    print(f"  np.add(a, a, out=b) on 1 float      {t_ufunc * 1e6:8.3f} us")


def main():
    args, rng = start(__doc__, "only 1,024 joints", [("--baseline", dict(metavar="DIR", help="a jointmath checkout "
                                                                         "built in place, timed beside this one"))])
    baseline = load_baseline(args.baseline) if args.baseline else None
    bench_size(1024, rng, with_reference=True, baseline=baseline)
    if not args.quick:
        bench_size(1 << 20, rng, with_reference=True, baseline=baseline)
    bench_call_overhead()


if __name__ == "__main__":
    main()
