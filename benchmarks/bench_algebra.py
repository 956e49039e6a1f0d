"""Rotation algebra: every element-wise function against scipy's equivalent, a memory copy of its
bytes and np.add's one-element call, ratios measured in one run.

For each function, float32 with out= given, on the running path (JOINTMATH_ISA picks another):
  - ns per element at 1,024 and 1,048,576 elements (median, thread CPU time);
  - "x scipy": scipy's time / ours, scipy from arrays to arrays as a user holding arrays calls it
    (Rotation.from_quat ... as_quat; scipy computes in float64), the two timed back to back in
    every round (goal >= 20 at both sizes);
  - "x copy" at 1,048,576: ours / np.copyto of as many bytes as the call moves (goal <= 1.5): the
    copy reads and writes (input + output bytes) / 2 each, the kernel's own traffic;
  - "x np.add" of one element: one call on one record / np.add on two (4,) float32 (goal <= 3).
--paths adds ns per element at 1,024 on every path.

    PYTHONPATH=. python benchmarks/bench_algebra.py [--quick] [--paths]
"""
import numpy as np
from scipy.spatial.transform import Rotation

import jointmath as jm
from timing import median_ratio, median_seconds, per_isa, start


def scipy_swing_twist(q, axis):
    """the decomposition with scipy's Rotation and NumPy: the twist from the projection, the swing
    as q twist^-1"""
    u = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    r = Rotation.from_quat(q)
    qn = r.as_quat()
    twist = np.concatenate([np.sum(qn[:, :3] * u, -1, keepdims=True) * u, qn[:, 3:]], -1)
    t = Rotation.from_quat(twist)
    return (r * t.inv()).as_quat(), t.as_quat()


def scipy_sixd_to_quat(x):
    """Gram-Schmidt in NumPy, then Rotation.from_matrix"""
    b1 = x[:, :3] / np.linalg.norm(x[:, :3], axis=-1, keepdims=True)
    a2 = x[:, 3:] - np.sum(b1 * x[:, 3:], -1, keepdims=True) * b1
    b2 = a2 / np.linalg.norm(a2, axis=-1, keepdims=True)
    return Rotation.from_matrix(np.stack([b1, b2, np.cross(b1, b2)], -1)).as_quat()


def cases(rng, n):
    """[(name, ours(), scipy(), bytes read + written per element, one-element call)]"""
    q = rng.standard_normal((n, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    p = np.roll(q, 1, axis=0)
    v = rng.standard_normal((n, 3)).astype(np.float32)
    x = jm.quat_to_6d(q)
    q64, p64, v64, x64 = (a.astype(np.float64) for a in (q, p, v, x))
    out4, out3, out1, out6 = (np.empty((n,) + s, np.float32) for s in ((4,), (3,), (), (6,)))
    st = (np.empty((n, 4), np.float32), np.empty((n, 4), np.float32))
    q1, v1, x1 = q[0].copy(), v[0].copy(), x[0].copy()
    z = np.float32([0, 0, 1])
    return [
        ("quat_multiply", lambda: jm.quat_multiply(p, q, out=out4),
         lambda: (Rotation.from_quat(p64) * Rotation.from_quat(q64)).as_quat(), 48, lambda: jm.quat_multiply(q1, q1)),
        ("quat_conjugate", lambda: jm.quat_conjugate(q, out=out4),
         lambda: Rotation.from_quat(q64).inv().as_quat(), 32, lambda: jm.quat_conjugate(q1)),
        ("quat_inverse", lambda: jm.quat_inverse(q, out=out4),
         lambda: Rotation.from_quat(q64).inv().as_quat(), 32, lambda: jm.quat_inverse(q1)),
        ("rotate_vectors", lambda: jm.rotate_vectors(q, v, out=out3),
         lambda: Rotation.from_quat(q64).apply(v64), 40, lambda: jm.rotate_vectors(q1, v1)),
        ("quat_to_rotvec", lambda: jm.quat_to_rotvec(q, out=out3),
         lambda: Rotation.from_quat(q64).as_rotvec(), 28, lambda: jm.quat_to_rotvec(q1)),
        ("rotvec_to_quat", lambda: jm.rotvec_to_quat(v, out=out4),
         lambda: Rotation.from_rotvec(v64).as_quat(), 28, lambda: jm.rotvec_to_quat(v1)),
        ("quat_angle", lambda: jm.quat_angle(q, out=out1),
         lambda: Rotation.from_quat(q64).magnitude(), 20, lambda: jm.quat_angle(q1)),
        ("quat_angle_between", lambda: jm.quat_angle_between(p, q, out=out1),
         lambda: (Rotation.from_quat(p64).inv() * Rotation.from_quat(q64)).magnitude(), 36,
         lambda: jm.quat_angle_between(q1, q1)),
        ("swing_twist", lambda: jm.swing_twist(q, z, out=st),
         lambda: scipy_swing_twist(q64, np.array([0.0, 0, 1])), 48, lambda: jm.swing_twist(q1, z)),
        ("quat_to_6d", lambda: jm.quat_to_6d(q, out=out6),
         lambda: Rotation.from_quat(q64).as_matrix()[:, :, :2], 40, lambda: jm.quat_to_6d(q1)),
        ("sixd_to_quat", lambda: jm.sixd_to_quat(x, out=out4),
         lambda: scipy_sixd_to_quat(x64), 40, lambda: jm.sixd_to_quat(x1)),
    ]


def main():
    args, rng = start(__doc__.splitlines()[0], "1,024 elements only",
                      [("--paths", dict(action="store_true", help="ns per element at 1,024 on every path"))])
    sizes = [1024] if args.quick else [1024, 1 << 20]
    a4 = np.ones(4, np.float32)
    results = {}
    for n in sizes:
        rounds = 31 if n <= 1024 else 7
        for name, ours, theirs, traffic, one in cases(rng, n):
            row = results.setdefault(name, {})
            row[n] = median_seconds(ours, cpu=True) / n * 1e9
            row[n, "scipy"] = median_ratio(theirs, ours, rounds=rounds, cpu=True)
            if n == 1 << 20:
                half = np.ones(n * traffic // 2, np.uint8)
                dst = np.empty_like(half)
                row["copy"] = median_ratio(ours, lambda: np.copyto(dst, half), rounds=rounds, cpu=True)
            if n == sizes[0]:
                row["call"] = median_ratio(one, lambda: np.add(a4, a4), rounds=31, cpu=True)
                if args.paths:
                    row["paths"] = {isa: t / n * 1e9 for isa, t in per_isa(ours).items()}
    big = 1 << 20
    print(f"\nfloat32, out= given, path {jm.isa()}: ns per element, ratios measured in this run")
    head = f"  {'function':<20}{'ns 1K':>8}{'x scipy 1K':>12}"
    if not args.quick:
        head += f"{'ns 1M':>8}{'x scipy 1M':>12}{'x copy 1M':>11}"
    print(head + f"{'x np.add 1':>12}")
    for name, row in results.items():
        line = f"  {name:<20}{row[1024]:>8.2f}{row[1024, 'scipy']:>12.0f}"
        if not args.quick:
            line += f"{row[big]:>8.2f}{row[big, 'scipy']:>12.0f}{row['copy']:>11.2f}"
        print(line + f"{row['call']:>12.2f}")
    if args.paths:
        isas = jm.available_isas()
        print("\nns per element at 1,024, every path")
        print(f"  {'function':<20}" + "".join(f"{i:>9}" for i in isas))
        for name, row in results.items():
            print(f"  {name:<20}" + "".join(f"{row['paths'][i]:>9.2f}" for i in isas))


if __name__ == "__main__":
    main()
