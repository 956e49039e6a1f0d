"""Rotation extraction (Mueller et al. 2016): time per matrix and per matrix-iteration on every
ISA path (warm start, 3 iterations of method='muller'), against the project's scalar path, NumPy's
batched SVD polar decomposition (the usual way), the float64 paper loop in NumPy, and a plain copy
of the bytes read and written (the memory bound); then the convergence figures of both methods:
iterations and error against condition number from a cold start, the saddle reproductions on every
path, det A < 0 with a small sigma2 - sigma3 gap, mirrored rotations (updates, shortfall, cost), and
the paper's experiment (A = I from random and near starts).
Run: python benchmarks/bench_extract.py [--quick]
"""

import numpy as np

import jointmath as jm
from jointmath import reference

from jointmath import _core
from timing import median_ratio, median_seconds, per_isa, print_table, start

ITERATIONS = 3


def random_quats(rng, n):
    q = rng.standard_normal((n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def deformed(rng, n, max_condition):
    """A = R S, S symmetric positive definite with eigenvalues 1, uniform, kappa (kappa
    log-uniform up to max_condition)."""
    r = reference.quat_to_matrix(random_quats(rng, n))
    v = reference.quat_to_matrix(random_quats(rng, n))
    kappa = np.exp(rng.uniform(0, np.log(max_condition), n))
    s = np.stack([np.ones(n), rng.uniform(1, kappa), kappa], 1)
    return (r @ v @ (s[:, :, None] * np.swapaxes(v, 1, 2))).astype(np.float32)


def near(rng, q, max_angle):
    """q turned by a random rotation of at most max_angle."""
    axis = rng.standard_normal((len(q), 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    half = rng.uniform(0, max_angle, (len(q), 1)) / 2
    return reference.quat_multiply(np.concatenate([axis * np.sin(half), np.cos(half)], 1), q)


def bench_size(n, rng):
    a = deformed(rng, n, 10)
    q0 = near(rng, reference.matrix_to_quat(reference.polar_rotation(a)), 0.3).astype(np.float32)
    mats = np.zeros(n, jm.JOINT_MAT)
    mats["m"][:, :, :3] = a
    out = np.empty((n, 4), np.float32)
    copy_src = np.ones(n * 68, np.uint8)  # the bytes read and written: A 36, q0 16, q 16
    copy_dst = np.empty_like(copy_src)

    def run():
        jm.extract_rotation(a, q0, method="muller", max_iter=ITERATIONS, tol=0, out=out)

    rows = [(f"jointmath {isa}", t) for isa, t in per_isa(run).items()]
    rows.append(("jointmath best, JOINT_MAT records",
                 median_seconds(lambda: jm.extract_rotation(mats, q0, method="muller", max_iter=ITERATIONS, tol=0,
                                                            out=out))))
    rows.append(("jointmath best, method='newton'",
                 median_seconds(lambda: jm.extract_rotation(a, q0, max_iter=ITERATIONS, tol=0, out=out))))
    slow = n > 100_000  # the NumPy rows take seconds per call there: fewer repeats
    repeats = 3 if slow else 15
    rows.append(("numpy SVD polar (U V^T, det fix)",
                 median_seconds(lambda: reference.polar_rotation(a), min_time=0, repeats=repeats)))
    rows.append(("numpy paper loop (float64)",
                 median_seconds(lambda: reference.extract_rotation(a, q0, ITERATIONS, 0.0), min_time=0,
                                repeats=repeats)))
    rows.append(("numpy copy, 68 B/matrix", median_seconds(lambda: np.copyto(copy_dst, copy_src))))
    print_table(f"extract_rotation, warm start, {ITERATIONS} iterations (ns per matrix)", n, rows, "jointmath scalar")
    times = dict(rows)
    paths = [label for label in times if label.startswith("jointmath ") and "best" not in label]
    best_label = min(paths, key=times.get)
    best = times[best_label]
    per_iteration = ", ".join(
        f"{label.split()[1]} {times[label] / n / ITERATIONS * 1e9:.2f}"
        for label in paths)
    print(f"  ns per matrix per iteration: {per_iteration}")
    print(f"  best path ({best_label.split()[1]}): {times['jointmath scalar'] / best:.1f}x scalar, "
          f"{times['numpy SVD polar (U V^T, det fix)'] / best:.0f}x faster than the SVD polar decomposition, "
          f"{best / times['numpy copy, 68 B/matrix']:.1f}x the copy")


def bench_condition(rng):
    print("\ncold start, default tol and max_iter: updates and error against the SVD polar rotation by"
          " condition number (4,000 matrices each, active path); bound = max(1e-6, 1e-6 s1 / (s2 + s3))")
    print(f"  {'method':>7}{'condition':>10}{'median':>8}{'99th %':>8}{'max':>7}{'max error (rad)':>17}"
          f"{'max error / bound':>19}{'> 1e-3 rad':>12}")
    for method in ("newton", "muller"):
        for kappa in (1, 2, 5, 10, 30, 100, 1000):
            a = fixed_condition(rng, 4000, kappa)
            s = np.linalg.svd(a.astype(np.float64), compute_uv=False)
            q, iterations = jm.extract_rotation(a, method=method, return_iterations=True)
            err = reference.angle_between(q, reference.matrix_to_quat(reference.polar_rotation(a)))
            ratio = err / np.maximum(1e-6, 1e-6 * s[:, 0] / (s[:, 1] + s[:, 2]))
            p50, p99 = np.percentile(iterations, [50, 99])
            print(f"  {method:>7}{kappa:>10}{p50:>8.0f}{p99:>8.0f}{iterations.max():>7}{err.max():>17.1e}"
                  f"{ratio.max():>19.2f}{(err > 1e-3).mean():>11.1%}")


def saddle_cases(rng, n):
    """The two saddle reproductions: A = U diag(1, m, 1/100) V^T (U, V random rotations, m
    log-uniform in [1/100, 1]), and symmetric A = W diag(1, -m, -1/100) W^T, where the cold start
    lands on the saddle R = I whenever A's largest-divisor case is w."""
    u, v, w = (reference.quat_to_matrix(random_quats(rng, n)) for _ in range(3))
    m = np.exp(rng.uniform(np.log(1e-2), 0, n))
    s = np.stack([np.ones(n), m, np.full(n, 1e-2)], 1)
    random_uv = (u * s[:, None, :]) @ np.swapaxes(v, 1, 2)
    symmetric = (w * (s * [1, -1, -1])[:, None, :]) @ np.swapaxes(w, 1, 2)
    return {"U diag(1, m, 1/100) V^T": random_uv.astype(np.float32),
            "W diag(1, -m, -1/100) W^T": symmetric.astype(np.float32)}


def bench_saddle(rng, n=20000):
    print(f"\nsaddles: matrices coming back more than 3 rad from the SVD polar rotation (cold start, {n:,} each,"
          " max_iter=100000)")
    cases = saddle_cases(rng, n)
    for label, a in cases.items():
        polar = reference.matrix_to_quat(reference.polar_rotation(a))
        counts = []
        for method in ("newton", "muller"):
            for isa in jm.available_isas():
                _core._set_isa(isa)
                q = jm.extract_rotation(a, method=method, max_iter=100000)
                counts.append(f"{method} {isa} {(reference.angle_between(q, polar) > 3).sum()}")
            q = jm.extract_rotation(a.astype(np.float64), method=method, max_iter=100000)
            counts.append(f"{method} float64 {(reference.angle_between(q, polar) > 3).sum()}")
        _core._set_isa(jm.available_isas()[-1])
        print(f"  {label}: {', '.join(counts)}")


def bench_small_gap(rng, n=4000):
    print("\ndet A < 0, sigma = (1, 0.5, -(0.5 - gap)), default method and max_iter, by gap:"
          " updates (median / max), error against the SVD polar rotation, trace(R^T A) short of the maximum")
    u = reference.quat_to_matrix(random_quats(rng, n))
    v = reference.quat_to_matrix(random_quats(rng, n))
    for gap in (1e-2, 1e-3, 1e-4, 3e-5, 1e-6, 0.0):
        s = np.array([1.0, 0.5, -(0.5 - gap)])
        a = ((u * s) @ np.swapaxes(v, 1, 2)).astype(np.float32)
        sigma = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        q, iterations = jm.extract_rotation(a, return_iterations=True)
        err = reference.angle_between(q, reference.matrix_to_quat(reference.polar_rotation(a)))
        short = sigma[:, 0] + sigma[:, 1] - sigma[:, 2] - np.einsum("nij,nij->n", reference.quat_to_matrix(q), a)
        print(f"  gap {gap:7.0e}: updates {np.median(iterations):.0f} / {iterations.max()}, error max {err.max():.1e}"
              f" rad (median {np.median(err):.1e}), short of the maximum by at most {short.max():.1e}")


def bench_mirrored(rng, n=5000):
    print(f"\nmirrored rotations R diag(1, 1, -1) ({n:,}, cold start, max_iter 200), per path and method:"
          " updates (max), matrices at max_iter, trace(R^T A) short of the maximum (worst); then ns per matrix"
          " (1,024) of a cold start and of 3 Mueller updates")
    u = reference.quat_to_matrix(random_quats(rng, n))
    v = reference.quat_to_matrix(random_quats(rng, n))
    mirrored = ((u * [1.0, 1.0, -1.0]) @ np.swapaxes(v, 1, 2)).astype(np.float32)
    a64 = mirrored.astype(np.float64)
    sigma = np.linalg.svd(a64, compute_uv=False)
    best = sigma[:, 0] + sigma[:, 1] - sigma[:, 2]
    small = mirrored[:1024]
    small_q = jm.extract_rotation(small)
    for isa in jm.available_isas():
        _core._set_isa(isa)
        figures = []
        for method in ("newton", "muller"):
            q, iterations = jm.extract_rotation(mirrored, method=method, return_iterations=True)
            short = best - np.einsum("nij,nij->n", reference.quat_to_matrix(q), a64)
            figures.append(f"{method} {iterations.max()}, {(iterations >= 200).sum()}, {short.max():.1e}")
        cold = median_seconds(lambda: jm.extract_rotation(small)) / len(small) * 1e9
        warm = median_seconds(lambda: jm.extract_rotation(small, small_q, method="muller", max_iter=ITERATIONS))
        print(f"  {isa:7s} {'; '.join(figures)}; cold {cold:.1f} ns, 3 Mueller updates {warm / len(small) * 1e9:.1f} ns")
    _core._set_isa(jm.available_isas()[-1])


def fixed_condition(rng, n, kappa):
    """A = R S with S of condition number exactly kappa (eigenvalues 1, uniform, kappa)."""
    r = reference.quat_to_matrix(random_quats(rng, n))
    v = reference.quat_to_matrix(random_quats(rng, n))
    s = np.stack([np.ones(n), rng.uniform(1, kappa, n), np.full(n, float(kappa))], 1)
    return (r @ v @ (s[:, :, None] * np.swapaxes(v, 1, 2))).astype(np.float32)


def euler_quats(angles):
    """Quaternions of R = Rz(c) Ry(b) Rx(a) for rows (a, b, c), radians: extrinsic "xyz"."""
    return reference.euler_to_quat(angles, "xyz", degrees=False)

def bench_paper_experiment(rng, n):
    identity = np.broadcast_to(np.eye(3, dtype=np.float32), (n, 3, 3))
    print(f"\nthe paper's experiment, A = I, {n:,} starts: share with ||A - R||_F^2 < 0.001 after k updates")
    for title, q0 in [
        ("Euler angles in [-pi/3, pi/3]", euler_quats(rng.uniform(-np.pi / 3, np.pi / 3, (n, 3)))),
        ("random rotations", random_quats(rng, n)),
    ]:
        q0 = q0.astype(np.float32)
        shares = []
        for k in range(1, 9):
            q = jm.extract_rotation(identity, q0, method="muller", max_iter=k, tol=0)
            frobenius2 = 8 * np.sin(reference.angle_between(q, [0, 0, 0, 1]) / 2) ** 2
            shares.append(f"{k}: {100 * (frobenius2 < 0.001).mean():.1f}%")
        q, iterations = jm.extract_rotation(identity, q0, method="muller", return_iterations=True)
        worst = reference.angle_between(q, [0, 0, 0, 1]).max()
        print(f"  {title}: {', '.join(shares)}")
        print(f"    default tol: median {np.median(iterations):.0f}, max {iterations.max()} updates;"
              f" largest angle left {worst:.1e} rad")


def bench_against_build(path, rng, n=1024):
    """Paired ratios, per path, of this build's warm start (method='muller', 3 updates) to another
    build's jointmath/_core*.so (e.g. an older commit built in place in a temporary directory),
    timed back to back in every round."""
    import glob
    import importlib.util

    so = glob.glob(f"{path}/jointmath/_core*.so")[0]
    spec = importlib.util.spec_from_file_location("jointmath._core", so)
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    a = deformed(rng, n, 10)
    q0 = near(rng, reference.matrix_to_quat(reference.polar_rotation(a)), 0.3).astype(np.float32)
    out = np.empty((n, 4), np.float32)
    print(f"\nwarm start, {ITERATIONS} updates, {n:,} matrices: time of this build / time of {so}"
          " (median of 101 paired rounds)")
    for isa in jm.available_isas():
        _core._set_isa(isa)
        other._set_isa(isa)
        ratio = median_ratio(lambda: _core._extract_rotation(a, q0, ITERATIONS, 0, out, False, "muller"),
                             lambda: other._extract_rotation(a, q0, ITERATIONS, 0, out, False), min_time=4, rounds=101)
        print(f"  {isa}: {ratio:.3f}")
    _core._set_isa(jm.available_isas()[-1])


def main():
    args, rng = start(__doc__, "only 1,024 matrices, no convergence tables",
                      [("--against", dict(metavar="DIR", help="another build's directory (its jointmath/_core*.so):"
                                                        " paired warm-start time ratios, then exit"))])
    if args.against:
        bench_against_build(args.against, rng)
        return
    bench_size(1024, rng)
    if args.quick:
        return
    bench_size(1 << 20, rng)
    bench_condition(rng)
    bench_saddle(rng)
    bench_small_gap(rng)
    bench_mirrored(rng)
    bench_paper_experiment(rng, 1_000_000)


if __name__ == "__main__":
    main()
