"""Paired timing of every kernel of this checkout's C core against another build's.

Run from a checkout built in place:

    PYTHONPATH=. python benchmarks/compare_builds.py OTHER_CHECKOUT [--n 4096] [--rounds 31]

OTHER_CHECKOUT is another jointmath checkout built in place (for instance a `git worktree` of the
previous release, then `python setup.py build_ext --inplace`). Its C core is loaded beside this
one, and every public kernel is timed on both, back to back in every round, on every ISA path this
CPU runs. Each figure is this build's time over the other's (1.000: the same speed): the geometric
mean of the median ratios measured in both orders, so that whichever call of a pair runs first
gains nothing.
"""
import argparse
import sys

import numpy as np

import jointmath as jm
from jointmath import _core
from timing import load_baseline, median_ratio


def calls(n, rng):
    """[(label, name in _core, positional arguments, keyword arguments)]: each public kernel."""
    q32 = rng.standard_normal((n, 4)).astype(np.float32)
    q32 /= np.linalg.norm(q32, axis=1, keepdims=True)
    q64 = q32.astype(np.float64)
    p32 = rng.standard_normal((n, 4)).astype(np.float32)
    p32 /= np.linalg.norm(p32, axis=1, keepdims=True)
    t32 = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    joints, blend = jm.make_joints(q32, t32), jm.make_joints(p32, t32)
    mats = jm.joints_to_mats(joints)
    m32, m64 = jm.quat_to_matrix(q32), jm.quat_to_matrix(q64)
    angles = rng.uniform(-3, 3, (n, 3)).astype(np.float32)
    frames = n // 31
    clip = jm.make_joints(q32[: frames * 31].reshape(frames, 31, 4),
                          t32[: frames * 31].reshape(frames, 31, 3)) if frames else None
    parents = np.arange(-1, 30)
    index = np.arange(0, n, 2)
    rows = [
        ("joints_to_mats", "joints_to_mats", (joints,), {}),
        ("mats_to_joints", "mats_to_joints", (mats,), {}),
        ("quat_to_matrix f32", "quat_to_matrix", (q32,), {}),
        ("quat_to_matrix f64", "quat_to_matrix", (q64,), {}),
        ("matrix_to_quat f32", "matrix_to_quat", (m32,), {}),
        ("matrix_to_quat f64", "matrix_to_quat", (m64,), {}),
        ("pack_quats 10", "pack_quats", (q32,), {"bits": 10}),
        ("pack_quats 20", "pack_quats", (q32,), {"bits": 20}),
        ("pack_quats f64", "pack_quats", (q64,), {}),
        ("pack_joints", "pack_joints", (joints,), {}),
        ("slerp_joints", "slerp_joints", (joints, blend, 0.3), {}),
        ("lerp_joints", "lerp_joints", (joints, blend, 0.3), {}),
        ("slerp_joints index/2", "slerp_joints", (joints, blend, 0.3), {"index": index}),
        ("lerp_joints index/2", "lerp_joints", (joints, blend, 0.3), {"index": index}),
        ("slerp f32", "slerp", (q32, p32, 0.3), {}),
        ("nlerp f32", "nlerp", (q32, p32, 0.3), {}),
        ("slerp f64", "slerp", (q64, p32.astype(np.float64), 0.3), {}),
        ("nlerp f64", "nlerp", (q64, p32.astype(np.float64), 0.3), {}),
        ("euler_to_quat f32", "euler_to_quat", (angles, "ZYX"), {}),
        ("quat_to_euler f32", "quat_to_euler", (q32, "ZYX"), {}),
        ("euler_to_quat f64", "euler_to_quat", (angles.astype(np.float64), "ZYX"), {}),
        ("quat_to_euler f64", "quat_to_euler", (q64, "ZYX"), {}),
        ("compose_mats", "compose_mats", (mats, mats), {}),
        ("make_continuous f32", "make_continuous", (q32.reshape(-1, 1, 4),), {}),
        ("make_continuous f64", "make_continuous", (q64.reshape(-1, 1, 4),), {}),
    ]
    if clip is not None:
        rows.append(("forward_kinematics", "forward_kinematics", (clip, parents), {}))
    rows += [
        ("extract_rotation f32", "extract_rotation", (m32 * 1.1,), {}),
        ("extract_rotation f64", "extract_rotation", (m64 * 1.1,), {}),
    ]
    return rows


def resolve(core, name):
    """extract_rotation is a Python wrapper around the core: time the wrapper with either core."""
    if name == "extract_rotation":
        from jointmath import _extract

        def run(*args, **kwargs):
            saved = _extract._core
            _extract._core = core
            try:
                return _extract.extract_rotation(*args, **kwargs)
            finally:
                _extract._core = saved
        return run
    return getattr(core, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", help="another jointmath checkout, built in place")
    parser.add_argument("--n", type=int, default=4096, help="joints (or quaternions) per call")
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--min-time", type=float, default=0.3, help="seconds per ratio")
    parser.add_argument("--only", default="", help="comma-separated labels to run (default: all)")
    args = parser.parse_args()
    other = load_baseline(args.other)
    rng = np.random.default_rng(0)
    isas = jm.available_isas()
    print(f"this / {args.other}, n = {args.n:,}, median of {args.rounds} paired rounds, both orders")
    print(f"{'kernel':<24}" + "".join(f"{isa:>10}" for isa in isas))
    wanted = {label.strip() for label in args.only.split(",") if label.strip()}
    before = jm.isa()
    try:
        for label, name, pos, kw in calls(args.n, rng):
            if wanted and label not in wanted:
                continue
            ours, theirs = resolve(_core, name), resolve(other, name)
            cells = []
            for isa in isas:
                _core._set_isa(isa)
                other._set_isa(isa)
                a, b = (lambda: ours(*pos, **kw)), (lambda: theirs(*pos, **kw))
                try:
                    # thread CPU time: time spent waiting for a core counts on neither side
                    ratio = (median_ratio(a, b, args.min_time, args.rounds, cpu=True)
                             / median_ratio(b, a, args.min_time, args.rounds, cpu=True)) ** 0.5
                    cells.append(f"{ratio:>10.3f}")
                except Exception as exc:  # a kernel the other build lacks or calls differently
                    cells.append(f"{type(exc).__name__:>10}")
            print(f"{label:<24}" + "".join(cells), flush=True)
    finally:
        _core._set_isa(before)
        other._set_isa(before)


if __name__ == "__main__":
    sys.exit(main())
