"""Shared by the benchmark scripts: median timings, per-ISA runs and the table format.

Absolute times on shared machines are noise; every figure that matters is a ratio between
two measurements taken in the same run, which is what these helpers print.
"""
import glob
import importlib.util
import os
import statistics
import time

import jointmath
from jointmath import _core


def _batch(func, seconds):
    """Calls per batch so that a batch of func() lasts >= seconds (func warmed up first)."""
    func()  # warm up (page faults, caches)
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            func()
        if time.perf_counter() - t0 >= seconds:
            return number
        number *= 2


def _time_batch(func, number, clock=time.perf_counter):
    t0 = clock()
    for _ in range(number):
        func()
    return (clock() - t0) / number


def median_seconds(func, min_time=0.2, repeats=15, cpu=False):
    """Median wall time of one call of func(), over `repeats` batches lasting >= min_time/repeats
    (cpu=True: the thread's CPU time, as median_ratio)."""
    number = _batch(func, min_time / repeats)
    clock = time.thread_time if cpu else time.perf_counter
    return statistics.median(_time_batch(func, number, clock) for _ in range(repeats))


def median_ratio(numerator, denominator, min_time=0.4, rounds=31, cpu=False):
    """Median over rounds of time(numerator()) / time(denominator()), the two timed back to back
    in every round: a slow spell of a shared machine then slows both sides of the ratio.
    cpu=True times the thread's CPU time instead of the wall clock: the time the thread waited
    for a core (a machine with more runnable work than cores) then counts on neither side."""
    clock = time.thread_time if cpu else time.perf_counter
    n_num, n_den = _batch(numerator, min_time / rounds / 2), _batch(denominator, min_time / rounds / 2)
    return statistics.median(_time_batch(numerator, n_num, clock) / _time_batch(denominator, n_den, clock)
                             for _ in range(rounds))


def per_isa(func):
    """{isa name: median seconds of func()} for every path this CPU runs."""
    before = jointmath.isa()
    try:
        result = {}
        for name in jointmath.available_isas():
            _core._set_isa(name)
            result[name] = median_seconds(func)
        return result
    finally:
        _core._set_isa(before)


def print_table(title, n, rows, baseline):
    """rows: [(label, seconds)]; prints ns per item and each row's ratio to `baseline`'s time."""
    base = dict(rows)[baseline]
    print(f"\n{title}  (n = {n:,})")
    print(f"  {'':<34}{'ns/item':>10}{'x ' + baseline:>22}")
    for label, seconds in rows:
        print(f"  {label:<34}{seconds / n * 1e9:>10.3f}{seconds / base:>22.2f}")


def start(description, quick_help, extra_options=()):
    """The command line every size-sweeping benchmark shares: parses --quick (help text
    quick_help) and any (flag, add_argument keywords) in extra_options, prints the running and
    available paths, returns (args, a seeded generator)."""
    import argparse

    import numpy as np

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    for flag, options in extra_options:
        parser.add_argument(flag, **options)
    args = parser.parse_args()
    print(f"running path: {jointmath.isa()}; available: {', '.join(jointmath.available_isas())}")
    return args, np.random.default_rng(0)


def load_baseline(directory):
    """The C core of the jointmath checkout built in place at `directory`, a module beside ours."""
    paths = glob.glob(os.path.join(directory, "jointmath", "_core*.so"))
    if not paths:
        raise SystemExit(f"{directory}: no built jointmath/_core*.so (build that checkout in place first)")
    spec = importlib.util.spec_from_file_location("jointmath._core", paths[0])  # PyInit__core
    core = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(core)
    core._register_dtypes(jointmath.JOINT_QUAT, jointmath.JOINT_MAT, jointmath.PACKED_JOINT, jointmath.PACKED_JOINT64)
    return core
