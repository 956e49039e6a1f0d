"""float64 kernels: quat_to_matrix, matrix_to_quat, euler_to_quat, quat_to_euler on float64 arrays
(NumPy's default dtype) against the same functions on float32 arrays and scipy's Rotation (float64),
ns per element, at 1,024 and 1,048,576 elements.
Run: python benchmarks/bench_float64.py [--quick] [--best] [--baseline DIR]

Every time is a median over batches; each ratio (scipy / float64, float64 / float32) is the median
of ratios of the two timed back to back in every round (timing.median_ratio), so that a slow spell
of a shared machine slows both sides. The public functions are timed (their argument checks included,
which at 1,024 elements are part of the cost; each call allocates its result), then, for the
float64 / float32 ratio closer to the kernels alone, the conversions into a preallocated out=.
Then the float64 time of every path. At 1,048,576 elements a fresh result above glibc's 32 MiB mmap threshold (quat_to_matrix
both dtypes, matrix_to_quat and euler_to_quat float64) is new memory on every call: its page faults
are part of the time, as they are for scipy.

--best: every time is the minimum over batches instead (best_seconds below) and each ratio the
ratio of two minima: on a machine shared with other work the median of a loaded minute says more
about the other work than about the code, while the minimum is the uncontended cost.

--baseline DIR: only quat_to_matrix and matrix_to_quat on float64 into a preallocated out=, this
build's time / the time of the jointmath built in place at DIR, per path (bench_convert.py's
paired median ratios, both orders; with --best the ratio of the two minima).
"""
import time

import numpy as np

import jointmath as jm
from jointmath import _core
from timing import median_ratio, median_seconds, per_isa, start

try:
    from scipy.spatial.transform import Rotation
except ImportError:  # scipy is optional: its column is skipped
    Rotation = None


def cases(n, rng):
    """(name, jointmath call on an array, its float64 input, scipy call on float64, the call into
    a preallocated out (array, out), the result's shape)."""
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    m = jm.quat_to_matrix(q)
    angles = rng.uniform(-180, 180, (n, 3))
    return [
        ("quat_to_matrix", jm.quat_to_matrix, q, lambda a: Rotation.from_quat(a).as_matrix(),
         lambda a, out: jm.quat_to_matrix(a, out=out), (n, 3, 3)),
        ("matrix_to_quat", jm.matrix_to_quat, m, lambda a: Rotation.from_matrix(a).as_quat(),
         lambda a, out: jm.matrix_to_quat(a, out=out), (n, 4)),
        ("euler_to_quat ZXY", lambda a: jm.euler_to_quat(a, "ZXY", degrees=False), angles,
         lambda a: Rotation.from_euler("ZXY", a).as_quat(), lambda a, out: jm.euler_to_quat(a, "ZXY", out=out),
         (n, 4)),
        ("quat_to_euler ZXY", lambda a: jm.quat_to_euler(a, "ZXY", degrees=False), q,
         lambda a: Rotation.from_quat(a).as_euler("ZXY"), lambda a, out: jm.quat_to_euler(a, "ZXY", out=out),
         (n, 3)),
    ]


def best_seconds(func, batch_time=2e-4, max_batches=300, budget=1.5):
    """Minimum over batches of the mean time of one call of func(). Batches are short (about
    batch_time, or one call when a call is longer) so that some of them run between the time
    slices other processes take; as many as fit in `budget` seconds, 5 to max_batches."""
    t0 = time.perf_counter()
    func()  # warm up
    call = time.perf_counter() - t0
    number = max(1, int(batch_time / max(call, 1e-9)))
    batches = int(min(max_batches, max(5, budget / (number * max(call, 1e-9)))))
    best = float("inf")
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(number):
            func()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def bench_size(n, rng, best):
    print(f"\nn = {n:,}  (ns per element; running path {jm.isa()})")
    print(f"  {'':<20}{'float64':>10}{'float32':>10}{'scipy':>10}{'scipy/f64':>11}{'f64/f32':>9}"
          f"{'kernel f64':>12}{'kernel f32':>12}{'f64/f32':>9}")
    for name, func, x64, scipy_func, entry, out_shape in cases(n, rng):
        x32 = x64.astype(np.float32)
        out64, out32 = np.empty(out_shape), np.empty(out_shape, np.float32)
        public64, public32 = (lambda: func(x64)), (lambda: func(x32))
        kernel64, kernel32 = (lambda: entry(x64, out64)), (lambda: entry(x32, out32))
        seconds = best_seconds if best else median_seconds
        t64, t32, k64, k32 = (seconds(f) for f in (public64, public32, kernel64, kernel32))
        ts = seconds(lambda: scipy_func(x64)) if Rotation is not None else float("nan")
        if best:
            ratios = ts / t64, t64 / t32, k64 / k32
        else:
            ratios = (median_ratio(lambda: scipy_func(x64), public64) if Rotation is not None else float("nan"),
                      median_ratio(public64, public32), median_ratio(kernel64, kernel32))
        ns = 1e9 / n
        print(f"  {name:<20}{t64 * ns:>10.2f}{t32 * ns:>10.2f}{ts * ns:>10.1f}{ratios[0]:>10.1f}x"
              f"{ratios[1]:>8.2f}x{k64 * ns:>12.2f}{k32 * ns:>12.2f}{ratios[2]:>8.2f}x")


def bench_paths(n, rng, best):
    print(f"\nfloat64 per path, n = {n:,} (ns per element, public functions)")
    names, running = jm.available_isas(), jm.isa()
    print(f"  {'':<20}" + "".join(f"{isa:>10}" for isa in names))
    for name, func, x64, _, _, _ in cases(n, rng):
        if best:
            times = {}
            for isa in names:
                _core._set_isa(isa)
                times[isa] = best_seconds(lambda: func(x64))
            _core._set_isa(running)
        else:
            times = per_isa(lambda: func(x64))
        print(f"  {name:<20}" + "".join(f"{times[isa] * 1e9 / n:>10.2f}" for isa in names))


def bench_baseline(n, rng, directory, best):
    """float64 quat_to_matrix / matrix_to_quat into out=, this build / the build at directory, per
    path: bench_convert's paired median ratios, or with best the ratio of the two minima."""
    from bench_convert import print_baseline_ratios
    from timing import load_baseline

    baseline = load_baseline(directory)
    for name, _, x64, _, _, out_shape in cases(n, rng)[:2]:
        out = np.empty(out_shape)
        print(f"\nfloat64 {name}, out= given")
        if not best:
            print_baseline_ratios(name, n, x64, out, baseline)
            continue
        ours, theirs = getattr(_core, name), getattr(baseline, name)
        print(f"  this / baseline build, ratio of minima (ns per element: this, baseline), n = {n:,}:")
        running = jm.isa()
        for isa in jm.available_isas():
            _core._set_isa(isa)
            baseline._set_isa(isa)
            t_ours = best_seconds(lambda: ours(x64, out=out))
            t_theirs = best_seconds(lambda: theirs(x64, out=out))
            print(f"    {isa:<10}{t_ours / t_theirs:>8.3f}{t_ours * 1e9 / n:>9.2f}{t_theirs * 1e9 / n:>9.2f}")
        _core._set_isa(running)


def main():
    args, rng = start(__doc__, "only 1,024 elements",
                      [("--best", dict(action="store_true", help="minimum times instead of medians")),
                       ("--baseline", dict(metavar="DIR", help="a jointmath checkout built in place: paired "
                                                               "float64 conversion ratios to it"))])
    sizes = [1024] if args.quick else [1024, 1 << 20]
    if args.baseline:
        for n in sizes:
            bench_baseline(n, rng, args.baseline, args.best)
        return
    for n in sizes:
        bench_size(n, rng, args.best)
    for n in sizes:
        bench_paths(n, rng, args.best)


if __name__ == "__main__":
    main()
