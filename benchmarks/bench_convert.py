"""Quaternion <-> 3x4 joint matrix conversion: per-joint times on every ISA path, against the
project's scalar path, the NumPy reference, scipy's Rotation, and a plain copy of 48 bytes per
joint (the memory bound). Run: python benchmarks/bench_convert.py [--quick]
"""

import numpy as np

import jointmath as jm
from jointmath import reference

from timing import median_seconds, per_isa, print_table, start

try:
    from scipy.spatial.transform import Rotation
except ImportError:  # scipy is optional: its rows are skipped
    Rotation = None


def random_joints(n, rng):
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return jm.make_joints(q.astype(np.float32), rng.uniform(-1, 1, (n, 3)))


def bench_size(n, rng, with_reference):
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
    args, rng = start(__doc__, "only 1,024 joints")
    bench_size(1024, rng, with_reference=True)
    if not args.quick:
        bench_size(1 << 20, rng, with_reference=True)
    bench_call_overhead()


if __name__ == "__main__":
    main()
