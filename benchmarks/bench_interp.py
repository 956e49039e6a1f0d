"""Slerp / nlerp between joint lists and quaternion arrays: per-joint times on every ISA path,
against the commonly used libm slerp (acos, sin; the project's scalar baseline), scipy's pairwise
route r0 * Rotation.from_rotvec(t * (r0.inv() * r1).as_rotvec()), and a plain copy of 64 bytes
per joint (the memory bound: two joint lists in); float64 slerp / nlerp against the float32
kernels and scipy's per-element route. Run: python benchmarks/bench_interp.py [--quick] [--float64]
[--partial-body [--rounds N]] [--placements [--rounds N]] (--float64: only the float64 section;
--partial-body: only the index= ratios per path, 1,024 and 1,048,576 joints, then over 2,752 and
35,776 frames of 31 joints as a clip holds them; --placements: only every second joint of 1,024
with out= over the full call, at each of the 64 placements of the three lists within 64-byte
lines; --quick: 1,024 joints and 2,752 frames)
"""

import ctypes
import importlib.util
import os
import shutil
import subprocess

import numpy as np

import jointmath as jm
from jointmath import _core

from timing import median_ratio, median_seconds, per_isa, print_table, start

try:
    from scipy.spatial.transform import Rotation
except ImportError:  # scipy is optional: its rows are skipped
    Rotation = None

T = 0.3
SCIPY = "scipy r0*from_rotvec(t*(r0.inv()*r1)..)"


def libm_slerp():
    """benchmarks/libm_slerp.c compiled into build/ as setup.py compiles the scalar path, as a
    function (joints, blend, t, out) -> None; None without a C compiler (the row is skipped)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("jointmath_setup", os.path.join(here, os.pardir, "setup.py"))
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    compiler = os.environ.get("CC", "cc").split()
    if not shutil.which(compiler[-1]):
        return None
    shared = os.path.join(here, os.pardir, "build", "libm_slerp.so")
    os.makedirs(os.path.dirname(shared), exist_ok=True)
    subprocess.run([*compiler, "-shared", "-fPIC", *setup.COMMON_FLAGS, *setup.ISA_TARGETS["scalar"][1],
                    os.path.join(here, "libm_slerp.c"), "-lm", "-o", shared], check=True)
    kernel = ctypes.CDLL(shared).libm_slerp_joints
    p, s = ctypes.c_void_p, ctypes.c_ssize_t
    kernel.argtypes = [p, s, p, s, p, s, ctypes.c_size_t, ctypes.c_float]
    kernel.restype = None

    def slerp(joints, blend, t, out):
        kernel(joints.ctypes.data, joints.strides[0], blend.ctypes.data, blend.strides[0], out.ctypes.data,
               out.strides[0], len(out), t)
    return slerp


LIBM_SLERP = libm_slerp()


def random_quats(n, rng):
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q.astype(np.float32)


def isa_rows(prefix, func):
    return [(f"{prefix} {isa}", t) for isa, t in per_isa(func).items()]


def best_full(rows):
    """(seconds, isa) of the fastest full slerp_joints row (not an indexed one)."""
    return min((t, label.split()[1]) for label, t in rows if label.split()[0] == "slerp_joints" and len(label.split()) == 2)


def joint_lists(n, rng):
    return [jm.make_joints(random_quats(n, rng), rng.uniform(-1, 1, (n, 3))) for _ in range(2)]


def bench_joints(n, rng):
    joints, blend = joint_lists(n, rng)
    out = np.empty(n, jm.JOINT_QUAT)
    copy_src = np.ones(n * 64, np.uint8)
    copy_dst = np.empty_like(copy_src)
    copy_time = median_seconds(lambda: np.copyto(copy_dst, copy_src))
    every_second = np.arange(0, n, 2)

    rows = isa_rows("slerp_joints", lambda: jm.slerp_joints(joints, blend, T, out=out))
    rows += isa_rows("lerp_joints", lambda: jm.lerp_joints(joints, blend, T, out=out))
    rows += isa_rows("slerp_joints index=::2", lambda: jm.slerp_joints(joints, blend, T, index=every_second, out=out))
    in_place = joints.copy()  # out=joints, as the seed's routine (values drift, cost does not)
    rows += isa_rows("  same, out=joints", lambda: jm.slerp_joints(in_place, blend, T, index=every_second,
                                                                  out=in_place))
    if LIBM_SLERP is not None:
        rows.append(("libm slerp (acos, sin), scalar", median_seconds(lambda: LIBM_SLERP(joints, blend, T, out))))
    if Rotation is not None:
        q0, q1 = joints["q"].astype(np.float64), blend["q"].astype(np.float64)
        r0, r1 = Rotation.from_quat(q0), Rotation.from_quat(q1)
        rows.append((SCIPY, median_seconds(lambda: r0 * Rotation.from_rotvec(T * (r0.inv() * r1).as_rotvec()))))
        rows.append(("  same from and to quaternions", median_seconds(lambda: (
            Rotation.from_quat(q0) * Rotation.from_rotvec(T * (Rotation.from_quat(q0).inv() * Rotation.from_quat(q1))
                                                         .as_rotvec())).as_quat())))
    rows.append(("numpy copy, 64 B/joint", copy_time))
    print_table("joint lists (JOINT_QUAT), t = 0.3, out= given", n, rows, "slerp_joints scalar")

    d = dict(rows)
    slerp_best, best_isa = best_full(rows)
    print(f"  best slerp_joints path ({best_isa}):", end="")
    if LIBM_SLERP is not None:
        print(f" {d['libm slerp (acos, sin), scalar'] / slerp_best:.1f}x faster than the libm slerp,", end="")
    print(f" {slerp_best / copy_time:.2f}x the copy", end="")
    if Rotation is not None:
        print(f", {d[SCIPY] / slerp_best:.0f}x faster than scipy's route on prebuilt Rotations "
              f"({d['  same from and to quaternions'] / slerp_best:.0f}x from and to quaternions)", end="")
    print()
    bench_partial_body(n, joints, blend)


def bench_partial_body(n, joints, blend, rounds=31):
    """A table per size: on every path, slerp_joints with an index (every second joint, the first
    half, a random half; separate out= and in place) against the full call, in place against the
    full call in place, and against the call's own data movement; each index as a plain array
    (copied and checked on every call) and as a
    joint_index (checked once); then ns per joint of the full and every-second-joint calls."""
    print(f"\n  partial-body blending, n = {n:,}: medians of {rounds} rounds, each ratio's two calls timed back to "
          "back in every round, in thread CPU time. Indexed with a separate out= also copies the unselected "
          "joints; every second joint lies in every 64-byte cache line of the lists; the first half is one run "
          "of joints. Data movement: np.maximum on float32 views of the same bytes (both lists read, out "
          "written; in place, out is joints).")
    out = np.empty(n, jm.JOINT_QUAT)
    in_place = joints.copy()  # out=joints, as the seed's routine (values drift, cost does not)
    # where the lists start within a 64-byte line moves these ratios (NumPy aligns to 16 bytes)
    offsets = ", ".join(f"{name} {x.__array_interface__['data'][0] % 64}" for name, x in
                        (("joints", joints), ("blend", blend), ("out", out), ("in place", in_place)))
    print(f"  byte offsets from 64-byte alignment: {offsets}")
    plain = {"every second joint": np.arange(0, n, 2), "first half": np.arange(n // 2),
             "random half": np.sort(np.random.default_rng(1).choice(n, n // 2, replace=False))}
    index_forms = {"array": plain, "joint_index": {name: jm.joint_index(idx, n) for name, idx in plain.items()}}
    floats = [x.view(np.float32) for x in (joints, blend, out, in_place)]
    movement = lambda: np.maximum(floats[0], floats[1], out=floats[2])  # noqa: E731
    movement_in_place = lambda: np.maximum(floats[3], floats[1], out=floats[3])  # noqa: E731
    paths = jm.available_isas()
    table, ns = {}, {}  # {row label: {path: ratio}}, {path: {call: ns per joint}}
    before = jm.isa()
    for isa in paths:
        _core._set_isa(isa)
        full = lambda: jm.slerp_joints(joints, blend, T, out=out)  # noqa: E731
        full_in_place = lambda: jm.slerp_joints(in_place, blend, T, out=in_place)  # noqa: E731

        def call(index, in_place_call):
            if in_place_call:
                return lambda: jm.slerp_joints(in_place, blend, T, index=index, out=in_place)
            return lambda: jm.slerp_joints(joints, blend, T, index=index, out=out)

        def row(label, numerator, denominator):
            table.setdefault(label, {})[isa] = median_ratio(numerator, denominator, rounds=rounds, cpu=True)

        row("slerp / nlerp, full calls", full, lambda: jm.lerp_joints(joints, blend, T, out=out))
        for form, forms in index_forms.items():
            for name, index in forms.items():
                row(f"{name} ({form}) / full, out=", call(index, False), full)
                row(f"{name} ({form}) in place / full, out=", call(index, True), full)
            for name in ("every second joint", "random half"):
                row(f"{name} ({form}) in place / full in place", call(forms[name], True), full_in_place)
            row(f"every second joint ({form}) / data movement, out=", call(forms["every second joint"], False),
                movement)
            row(f"every second joint ({form}) in place / data movement in place",
                call(forms["every second joint"], True), movement_in_place)
        row("full / data movement, out=", full, movement)
        row("full in place / data movement in place", full_in_place, movement_in_place)
        every_second = index_forms["joint_index"]["every second joint"]
        ns[isa] = {name: median_seconds(f, cpu=True) * 1e9 / n for name, f in (
            ("full", full), ("full in place", full_in_place), ("every second joint", call(every_second, False)),
            ("in place", call(every_second, True)))}
    _core._set_isa(before)
    print("\n  | ratio | " + " | ".join(paths) + " |\n  |---|" + "---:|" * len(paths))
    for label, by_path in table.items():
        print(f"  | {label} | " + " | ".join(f"{by_path[p]:.2f}" for p in paths) + " |")
    print("  ns per joint (medians, to compare builds; every second joint as a joint_index): " + "; ".join(
        f"{p}: " + ", ".join(f"{k} {v:.2f}" for k, v in ns[p].items()) for p in paths), flush=True)


def bench_arrays(n, rng):
    q0, q1 = random_quats(n, rng), random_quats(n, rng)
    t = rng.uniform(0, 1, n).astype(np.float32)
    out = np.empty_like(q0)
    rows = isa_rows("slerp(q0, q1, t[i])", lambda: jm.slerp(q0, q1, t, out=out))
    rows += isa_rows("nlerp(q0, q1, t[i])", lambda: jm.nlerp(q0, q1, t, out=out))
    rows.append(("numpy reference slerp (float64)", median_seconds(lambda: jm.reference.slerp(q0, q1, t))))
    print_table("quaternion arrays (..., 4) float32, per-element t", n, rows, "slerp(q0, q1, t[i]) scalar")


SCIPY_PAIRWISE = "scipy per-element route, float64"


def scipy_pairwise(q0, q1, t):
    """scipy's route to slerp(q0[i], q1[i], t[i]) for every i at once, from and to quaternions:
    r0 * exp(t log(r0^-1 r1)), the rotation vectors of Rotation (what Slerp does per key pair,
    vectorised over the pairs; Slerp itself takes one pair of keys per object)."""
    r0 = Rotation.from_quat(q0)
    return (r0 * Rotation.from_rotvec(t[:, None] * (r0.inv() * Rotation.from_quat(q1)).as_rotvec())).as_quat()


def bench_float64(n, rng):
    """float64 slerp / nlerp against the float32 kernels (ratios of back-to-back medians per path)
    and against scipy's per-element route."""
    q0, q1 = random_quats(n, rng).astype(np.float64), random_quats(n, rng).astype(np.float64)
    q0 /= np.linalg.norm(q0, axis=1, keepdims=True)
    q1 /= np.linalg.norm(q1, axis=1, keepdims=True)
    t = rng.uniform(0, 1, n)
    a32, b32, t32 = q0.astype(np.float32), q1.astype(np.float32), t.astype(np.float32)
    out64, out32 = np.empty_like(q0), np.empty_like(a32)
    calls = {"slerp t[i]": (lambda: jm.slerp(q0, q1, t, out=out64), lambda: jm.slerp(a32, b32, t32, out=out32)),
             "slerp t=0.3": (lambda: jm.slerp(q0, q1, T, out=out64), lambda: jm.slerp(a32, b32, T, out=out32)),
             "nlerp t[i]": (lambda: jm.nlerp(q0, q1, t, out=out64), lambda: jm.nlerp(a32, b32, t32, out=out32))}
    rows = []
    for name, (f64, f32) in calls.items():
        rows += isa_rows(f"{name} float64", f64)
        rows += isa_rows(f"{name} float32", f32)
    m = min(n, 1 << 16)  # scipy's route costs microseconds per pair: timed on the first m pairs
    if Rotation is not None:
        rows.append((SCIPY_PAIRWISE, median_seconds(lambda: scipy_pairwise(q0[:m], q1[:m], t[:m])) * n / m))
    print_table("float64 quaternion arrays (..., 4), out= given", n, rows, "slerp t[i] float64 scalar")
    print("  float64 / float32 time, medians of 31 back-to-back ratios"
          + (f"; scipy's route / float64 slerp t[i] on the first {m:,} pairs, median of 11" if Rotation else "") + ":")
    before = jm.isa()
    for isa in jm.available_isas():
        _core._set_isa(isa)
        ratios = ", ".join(f"{name} {median_ratio(f64, f32):.2f}" for name, (f64, f32) in calls.items())
        line = f"    {isa}: {ratios}"
        if Rotation is not None:
            scipy_ratio = median_ratio(lambda: scipy_pairwise(q0[:m], q1[:m], t[:m]),
                                       lambda: jm.slerp(q0[:m], q1[:m], t[:m], out=out64[:m]), rounds=11)
            line += f"; scipy's route {scipy_ratio:.0f}x"
        print(line)
    _core._set_isa(before)


def bench_clip_layout(frames, joints, blend, rounds=31):
    """Partial-body blending as a clip holds it: frames of 31 joints (CMU's skeleton), an index
    of 15 or 16 of them (the first half: the upper body; every second joint; a random 15) as a
    joint_index, on every path, against the full call (with out=, and in place against the full
    call in place)."""
    n_joints = 31
    joints, blend = joints.reshape(frames, n_joints), blend.reshape(frames, n_joints)
    print(f"\n  partial-body blending over {frames:,} frames of {n_joints} joints: medians of {rounds} rounds, "
          "each ratio's two calls timed back to back, thread CPU time; indexes as joint_index.")
    out, in_place = np.empty_like(joints), joints.copy()
    indexes = {"first half": np.arange(n_joints // 2), "every second joint": np.arange(0, n_joints, 2),
               "random 15": np.sort(np.random.default_rng(1).choice(n_joints, 15, replace=False))}
    indexes = {name: jm.joint_index(idx, n_joints) for name, idx in indexes.items()}
    paths, table, before = jm.available_isas(), {}, jm.isa()
    for isa in paths:
        _core._set_isa(isa)
        full = lambda: jm.slerp_joints(joints, blend, T, out=out)  # noqa: E731
        full_in_place = lambda: jm.slerp_joints(in_place, blend, T, out=in_place)  # noqa: E731
        for name, index in indexes.items():
            table.setdefault(f"{name} / full, out=", {})[isa] = median_ratio(
                lambda: jm.slerp_joints(joints, blend, T, index=index, out=out), full, rounds=rounds, cpu=True)
            table.setdefault(f"{name} in place / full in place", {})[isa] = median_ratio(
                lambda: jm.slerp_joints(in_place, blend, T, index=index, out=in_place), full_in_place,
                rounds=rounds, cpu=True)
    _core._set_isa(before)
    print("\n  | ratio | " + " | ".join(paths) + " |\n  |---|" + "---:|" * len(paths))
    for label, by_path in table.items():
        print(f"  | {label} | " + " | ".join(f"{by_path[p]:.2f}" for p in paths) + " |", flush=True)


def placed_joints(n, offset, rng=None):
    """n joint records starting `offset` bytes past a 64-byte boundary (random unit quaternions
    and translations when rng is given, else uninitialised)."""
    buffer = np.empty(n * jm.JOINT_QUAT.itemsize + 128, np.uint8)
    start = -buffer.__array_interface__["data"][0] % 64 + offset
    x = buffer[start:start + n * jm.JOINT_QUAT.itemsize].view(jm.JOINT_QUAT)
    if rng is not None:
        x[...] = jm.make_joints(random_quats(n, rng), rng.uniform(-1, 1, (n, 3)))
    return x


def bench_placements(rng, rounds=11, n=1024):
    """Every second joint of n with a separate out=, over the full call, at each placement of
    joints, blend and out at 0, 16, 32 or 48 bytes past a 64-byte line (NumPy aligns to 16
    bytes, so a program gets any of them): per path and index form, the median and largest
    ratio over the 64 placements and how many are <= 0.7 (the goal)."""
    print(f"\n  every second joint of {n:,} with out= / the full call, at 64 placements of the lists: medians of "
          f"{rounds} rounds per placement, thread CPU time")
    index = np.arange(0, n, 2)
    forms = {"joint_index": jm.joint_index(index, n), "array": index}
    offsets = (0, 16, 32, 48)
    placements = [(j, b, o) for j in offsets for b in offsets for o in offsets]
    lists = {p: (placed_joints(n, p[0], rng), placed_joints(n, p[1], rng), placed_joints(n, p[2])) for p in placements}
    print("  | path, index | median | largest (joints, blend, out) | <= 0.7 |\n  |---|---:|---|---:|")
    before = jm.isa()
    for isa in jm.available_isas():
        _core._set_isa(isa)
        for form, idx in forms.items():
            ratios = {}
            for p, (joints, blend, out) in lists.items():
                full = lambda: jm.slerp_joints(joints, blend, T, out=out)  # noqa: E731
                ratios[p] = median_ratio(lambda: jm.slerp_joints(joints, blend, T, index=idx, out=out), full,
                                         rounds=rounds, cpu=True)
            worst = max(ratios, key=ratios.get)
            print(f"  | {isa}, {form} | {np.median(list(ratios.values())):.3f} | {ratios[worst]:.3f} {worst} | "
                  f"{sum(r <= 0.7 for r in ratios.values())} of {len(ratios)} |", flush=True)
    _core._set_isa(before)


def main():
    args, rng = start(__doc__, "only 1,024 joints", [
        ("--float64", dict(action="store_true", help="only the float64 section")),
        ("--partial-body", dict(action="store_true", help="only the partial-body (index=) ratios per path")),
        ("--placements", dict(action="store_true", help="only every second joint of 1,024 with out= at 64 "
                              "placements of the lists")),
        ("--rounds", dict(type=int, default=None, help="rounds per partial-body ratio (default 31; 11 for "
                          "--placements)"))])
    if args.placements:
        bench_placements(rng, rounds=args.rounds or 11)
        return
    args.rounds = args.rounds or 31
    for n in [1024] if args.quick else [1024, 1 << 20]:
        if args.partial_body:
            bench_partial_body(n, *joint_lists(n, rng), rounds=args.rounds)
            continue
        if not args.float64:
            bench_joints(n, rng)
            bench_arrays(n, rng)
        bench_float64(n, rng)
    if args.partial_body:
        for frames in [2752] if args.quick else [2752, 35776]:
            bench_clip_layout(frames, *joint_lists(frames * 31, rng), rounds=args.rounds)


if __name__ == "__main__":
    main()
