"""python -m jointmath [FILES/DIRS ...]: process BVH motion capture clips.

Per clip: load -> local quaternions -> sign continuity -> forward kinematics -> optional
resampling (--fps) -> packing (--bits) -> unpacking -> checks against the float64 reference.
Prints a table per clip (frames, joints, seconds and frames/s per stage, compression ratio,
max/mean packing angle error, end-effector position error in the clip's units) and a summary.
With no files it runs on the embedded sample clip (CMU 01_01 excerpt).

--out DIR writes DIR/<clip>.npz (read back with jointmath.load_packed), DIR/report.json
and DIR/errors.png (per-joint error; needs matplotlib, a note is printed otherwise).
--dask local | ADDRESS processes the files with dask.distributed (pip install .[dask]).
--selfcheck runs the kernel self-check instead (see --selfcheck --help).
Exit status 1 when any file failed, 0 otherwise.
"""
import argparse
import json
import os
import sys

from . import _job


def _files(paths):
    """BVH files from file and directory arguments (directories: their *.bvh, sorted)."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            found += sorted(os.path.join(path, n) for n in os.listdir(path) if n.lower().endswith(".bvh"))
        else:
            found.append(path)
    return found


def _progress(items, total):
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, total=total, disable=total < 2, file=sys.stderr)


def run_local(files, bits, fps, out):
    return [r for r in _progress((_job.process_file(f, bits, fps, out) for f in files), len(files))]


# Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536, which also pins glibc's mmap
# threshold at 128 KiB: every clip-sized array is then mapped, page-faulted, zeroed and unmapped
# afresh, and freed heap is returned to the system at once (the stages measured 20-45 % slower
# than in a plain process; benchmarks/bench_main.py: 1.1-1.25x the single-process throughput
# with 2 workers instead of 1.6-1.8x). Workers of our local cluster keep clip-sized arrays on
# the heap and reuse it; a cluster given by address runs with its own settings.
WORKER_ENVIRON = {"MALLOC_MMAP_THRESHOLD_": 1 << 26, "MALLOC_TRIM_THRESHOLD_": 1 << 28}


def local_cluster(n_workers=2):
    """A dask.distributed LocalCluster on 127.0.0.1: n_workers processes of one thread each,
    running the ISA path this process runs (JOINTMATH_ISA set to jointmath.isa() for them)."""
    import dask
    from dask.distributed import LocalCluster

    import jointmath

    environ = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_ENVIRON.items()}
    with dask.config.set(environ):
        # env: set in each worker process over an inherited JOINTMATH_ISA (the config cannot be)
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                            env={"JOINTMATH_ISA": jointmath.isa()})


def run_dask(files, bits, fps, out, address):
    """The same per-file function over dask.distributed futures (address "local": a
    local_cluster() for this run); results in file order."""
    from dask.distributed import Client, as_completed

    cluster = local_cluster() if address == "local" else None
    try:
        with Client(cluster if cluster is not None else address) as client:
            futures = [client.submit(_job.process_file, f, bits, fps, out, pure=False) for f in files]
            for _ in _progress(as_completed(futures), len(futures)):
                pass
            return client.gather(futures)
    finally:
        if cluster is not None:
            cluster.close()


def _print_clip(r):
    print(f"\n{r['file']}: {r['frames']} frames x {r['joints']} joints, "
          f"compression {r['compression_ratio']:.2f}x ({r['bits']}-bit)")
    print(f"  {'stage':20s} {'seconds':>10s} {'frames/s':>12s}")
    for name, sec in r["seconds"].items():
        fps = r["frames_per_second"][name]
        print(f"  {name:20s} {sec:10.5f} {fps if fps is not None else float('inf'):12.0f}")
    print(f"  packing angle error (rad): max {max(r['angle_error_max']):.3g}, "
          f"mean {sum(r['angle_error_mean']) / len(r['angle_error_mean']):.3g}")
    print(f"  end-effector position error after packing: max {r['end_effector_error_max']:.3g}, "
          f"mean {r['end_effector_error_mean']:.3g} (forward kinematics alone: max "
          f"{r['forward_kinematics_error_max']:.3g}; vs the float64 reference)")


def _plot(results, path):
    """PNG of the per-joint max packing error of every clip (a Figure of its own: the caller's
    matplotlib state is left alone). None, with a note, when matplotlib is not installed."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        print("note: matplotlib is not installed, no plot written")
        return None
    fig = Figure(figsize=(10, 4))
    ax = fig.subplots()
    for r in results:
        ax.plot(r["angle_error_max"], marker=".", label=os.path.basename(r["file"]))
    ax.set_xlabel("joint")
    ax.set_ylabel("max packing angle error (rad)")
    ax.legend()
    fig.savefig(path)
    return path


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--selfcheck" in argv:
        from . import _selfcheck
        return _selfcheck.main([a for a in argv if a != "--selfcheck"])
    parser = argparse.ArgumentParser(prog="python -m jointmath", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="BVH files or directories (default: the embedded sample)")
    parser.add_argument("--bits", type=int, choices=(10, 20), default=10, help="packing size per component")
    parser.add_argument("--fps", type=float, default=None, help="resample to N frames per second")
    parser.add_argument("--out", default=None, help="directory for .npz clips, report.json, errors.png")
    parser.add_argument("--dask", default=None, metavar="local|ADDRESS", help="run with dask.distributed")
    parser.add_argument("--selfcheck", action="store_true", help="run the kernel self-check instead")
    args = parser.parse_args(argv)
    files = _files(args.paths) if args.paths else [_job.sample_path()]
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    if args.dask:
        results = run_dask(files, args.bits, args.fps, args.out, args.dask)
    else:
        results = run_local(files, args.bits, args.fps, args.out)
    good = [r for r in results if "error" not in r]
    bad = [r for r in results if "error" in r]
    for r in good:
        _print_clip(r)
    for r in bad:
        print(f"\nFAILED {r['file']}: {r['error']}")
    frames = sum(r["frames"] for r in good)
    print(f"\nsummary: {len(good)} clips processed, {len(bad)} failed, {frames} frames")
    if args.out:
        with open(os.path.join(args.out, "report.json"), "w") as f:
            json.dump({"clips": good, "failed": bad, "bits": args.bits, "fps": args.fps}, f, indent=1)
        if good:
            _plot(good, os.path.join(args.out, "errors.png"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
