"""Speed of the mocap command, `python -m jointmath`, timed as whole processes (interpreter start,
imports and all), as a user runs it.

1. frames/s per stage on one clip (tests/data/01_01.bvh, CMU 01_01: 2,752 frames x 31 joints);
2. 8 copies of that clip: this build against a baseline build (--baseline DIR: a checkout built
   in place, e.g. of the previous release), each command alternated with the other, median of --rounds;
   with and without --check, since the baseline always checked against float64;
3. --dask local (one thread per core) against one process on the same 8 clips, and on 64 clips
   (whole processes: interpreter start and imports are part of the cost), plus, for the work
   alone, 64 clips on 2 threads of this process and on an already running 2-worker cluster; and
   the bound these set on --dask local (Amdahl): the one-process run less its work alone is the
   part no thread shares.

Run from a clean clone after the README's install (`pip install .`): this build is the jointmath
this script imports. Baseline, a git revision REV in a folder of your choice (BASE below):
    mkdir BASE && git archive REV | tar -x -C BASE && (cd BASE && python setup.py build_ext --inplace)
    python benchmarks/bench_main.py --baseline BASE
Absolute times on a shared machine are noise: the ratios are taken round by round.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import jointmath
from jointmath import _job

CLIP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data", "01_01.bvh")
THIS_BUILD = os.path.dirname(os.path.dirname(os.path.abspath(jointmath.__file__)))


def command_seconds(args, build, cwd):
    """Wall seconds of `python -m jointmath ARGS` in a new process importing jointmath from `build`."""
    env = dict(os.environ, PYTHONPATH=build)
    env.pop("JOINTMATH_ISA", None)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "jointmath", *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"python -m jointmath {' '.join(args)} (from {build}) failed:\n{done.stderr}")
    return seconds


def paired(a, b, rounds):
    """(median seconds of a(), of b(), median of the per-round ratio b / a): a and b alternate."""
    first, second = [], []
    a(), b()  # warm the file cache and the imports
    for _ in range(rounds):
        first.append(a())
        second.append(b())
    return statistics.median(first), statistics.median(second), statistics.median(
        y / x for x, y in zip(first, second))


def copies(folder, n):
    os.makedirs(folder, exist_ok=True)
    for k in range(n):
        shutil.copy(CLIP, os.path.join(folder, f"copy{k:02d}.bvh"))
    return folder


def stages():
    r = _job.process_file(CLIP, check=True)
    print(f"one clip, {r['source_frames']} frames x {r['joints']} joints, in this process ({jointmath.isa()} path)")
    print(f"  {'stage':20s} {'frames/s':>12s} {'share':>7s}")
    total = sum(r["seconds"].values())
    for name, fps in r["frames_per_second"].items():
        print(f"  {name:20s} {fps:12,.0f} {100 * r['seconds'][name] / total:6.1f}%")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", metavar="DIR", help="an in-place build to compare with (e.g. of the previous release)")
    parser.add_argument("--rounds", type=int, default=5, help="timed runs of each command (default 5)")
    parser.add_argument("--no-dask", action="store_true", help="skip the dask.distributed figures")
    args = parser.parse_args()
    stages()
    with tempfile.TemporaryDirectory() as tmp:
        eight = copies(os.path.join(tmp, "eight"), 8)
        print(f"\nwhole process, 8 copies of 01_01 (median of {args.rounds}; ratio: per round)")
        if args.baseline:
            for extra in ([], ["--check"]):
                this, base, ratio = paired(lambda: command_seconds([eight, *extra], THIS_BUILD, tmp),
                                           lambda: command_seconds([eight], args.baseline, tmp), args.rounds)
                label = "this build" + (" --check" if extra else "")
                print(f"  {label:<26}{this:8.3f} s   baseline {base:8.3f} s   baseline / this {ratio:5.2f}x")
        else:
            seconds = statistics.median(command_seconds([eight], THIS_BUILD, tmp) for _ in range(args.rounds))
            print(f"  this build                {seconds:8.3f} s   (no --baseline given)")
        if args.no_dask:
            return
        sixty_four = copies(os.path.join(tmp, "sixty_four"), 64)
        one_process = {}
        for folder, n in ((eight, 8), (sixty_four, 64)):
            one, dask, ratio = paired(lambda: command_seconds([folder], THIS_BUILD, tmp),
                                      lambda: command_seconds([folder, "--dask", "local"], THIS_BUILD, tmp),
                                      args.rounds)
            one_process[n] = one
            print(f"  {n} clips: one process {one:8.3f} s   --dask local {dask:8.3f} s   "
                  f"speed-up {1 / ratio:5.2f}x (whole processes)")
        single, threaded = running_cluster(sixty_four, args.rounds)
        one = one_process[64]
        serial = one - single
        print(f"  64 clips, what bounds --dask local: the whole one-process run less its work alone leaves "
              f"{serial:.3f} s that no thread shares (interpreter, imports, output, exit); with it, the work's "
              f"2-thread speed-up above gives {one / (serial + threaded):4.2f}x, a perfect 2x on the work "
              f"{one / (serial + single / 2):4.2f}x")


def running_cluster(folder, rounds):
    """64 clips in this process on one thread vs on 2 threads, and vs on a running 2-worker local
    cluster (a client per run). Returns the medians (one thread, 2 threads) of the work alone."""
    from jointmath.__main__ import _keep_clip_arrays_on_the_heap, local_cluster, run_dask, run_local, run_threads

    _keep_clip_arrays_on_the_heap()  # the command's own malloc settings, so the work alone is what it runs
    jobs = [{"path": os.path.join(folder, name)} for name in sorted(os.listdir(folder))]

    def timed(run, *args):
        start = time.perf_counter()
        run(jobs, *args, bar=False)
        return time.perf_counter() - start

    single, threaded, ratio = paired(lambda: timed(run_local), lambda: timed(run_threads, 2), rounds)
    print(f"  64 clips in this process: one thread {single:8.3f} s   2 threads {threaded:8.3f} s   "
          f"speed-up {1 / ratio:5.2f}x (the work alone)")
    work = single, threaded
    with local_cluster() as cluster:
        run_dask(jobs[:2], cluster.scheduler_address, bar=False)  # the workers' imports

        def one():
            start = time.perf_counter()
            run_local(jobs, bar=False)
            return time.perf_counter() - start

        def dask():
            start = time.perf_counter()
            run_dask(jobs, cluster.scheduler_address, bar=False)
            return time.perf_counter() - start

        single, distributed, ratio = paired(one, dask, rounds)
    print(f"  64 clips on a running cluster: one process {single:8.3f} s   2 workers {distributed:8.3f} s   "
          f"speed-up {1 / ratio:5.2f}x (the work alone)")
    return work


if __name__ == "__main__":
    main()
