"""python -m jointmath [FILES/DIRS ...] [--out DIR]: compress BVH motion capture clips.

Per clip: load -> optional resampling (--fps) -> forward kinematics -> packing (--bits) ->
unpacking -> errors (-> float64 check with --check). Prints a table per
clip (frames, seconds and frames/s of each stage, each counting the frames it processed),
the compression ratio, the packing error (rotation angle per joint; end-effector positions, at
the End Site tips, as a fraction of the skeleton's rest-pose height and in clip units, or in cm
with --unit-scale; the worst joints by name; positions compared in float64, so the figure is the
packing's alone) and a summary. Directories give their *.bvh files (not recursive; anything that
is not a regular file is skipped with a note; a directory that cannot be listed is FAILED and
the other clips go on). With no files it runs on the embedded sample clip (CMU 01_01 excerpt).

--out DIR writes, for each clip at its path relative to the inputs' common folder (inputs
whose names there are the same up to case or extension, walk.bvh and walk.BVH, are numbered
walk-1, walk-2 ... in the order of their paths, skipping any other input's own name):
  DIR/<clip>.npz   the compressed clip (read it back with jointmath.load_packed: signs made
                   continuous along the frames, as packing keeps none)
  DIR/<clip>.bvh   with --bvh: the processed clip as BVH (resampled, decoded from the packed form)
and DIR/report.json (every clip, its outputs and figures; strict JSON: a figure that could not
be measured, not finite, is null) and DIR/errors.png, one errors-N.png per skeleton when the
clips have several (needs matplotlib). Every file is written to a temporary name in the same
folder and renamed, so none is ever left half-written; a clip whose output cannot be written is
reported FAILED and the others go on. Nothing is deleted: the files an earlier run wrote into DIR
(as the report.json it left lists them) that this run did not write again are listed in a note
and in report.json under "stale_outputs" (never a file no report names, such as your own clips).
--dask ADDRESS processes the files on a dask.distributed scheduler (pip install "jointmath[dask]"),
sent as absolute paths: the workers must see the files at the same paths (a shared file system);
--dask local on one thread per core of this process (faster here than a local process cluster).
--selfcheck runs the kernel self-check instead (see --selfcheck --help).
Exit status: 0 when every clip was processed, 1 when any failed or none was found, 2 for a
usage error (an unknown or abbreviated option, a bad value, an empty --out, a --dask address
without a scheduler or without dask installed).
"""
import argparse
import collections
import json
import math
import os
import stat
import sys
import tempfile

from . import _job
from .bvh import FRAME_TIME_RANGE
from ._files import write_atomic

__all__ = ["MAX_FPS", "MIN_FPS", "WORKER_ENVIRON", "connect", "find_clips", "local_cluster", "main",
           "plan_outputs", "run_dask", "run_local", "run_threads", "stale_outputs"]

#: Highest --fps accepted: above any capture rate, resampling only makes a clip bigger (and at
#: 1e6 frames/s a 20-second clip would need tens of GB).
MAX_FPS = 10_000.0

#: Lowest --fps accepted: the smallest rate whose frame time 1 / fps is a finite float.
MIN_FPS = math.nextafter(1 / sys.float_info.max, math.inf)


def _fps(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= MAX_FPS and math.isfinite(1 / value)):
        raise argparse.ArgumentTypeError(f"must be a frame rate from {MIN_FPS:.2g} (the smallest whose frame time "
                                         f"1/fps is finite) to {MAX_FPS:,.0f}, got {text!r}")
    return value


def _folder(text):
    if not text:
        raise argparse.ArgumentTypeError("must name a folder, got an empty string")
    return text


def _unit_scale(text):
    """Centimetres per clip unit: a number or a fraction such as 2.54/0.45 (CMU's clips)."""
    try:
        parts = [float(p) for p in text.split("/")]
        value = parts[0] / parts[1] if len(parts) == 2 else parts[0] if len(parts) == 1 else None
    except (ValueError, ZeroDivisionError):
        value = None
    if value is None or not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of cm per clip unit (e.g. 2.54/0.45), "
                                         f"got {text!r}")
    return value


def find_clips(paths):
    """(files, notes, failed): the BVH files of file and directory arguments (a directory gives
    its *.bvh, sorted, not recursive), each once; a note for every one skipped: anything that is
    not a regular file (a FIFO or a device would block or never end) and repeated paths; and a
    failed result ({"file", "error", "outputs", "warnings"}, as process_file returns for a clip
    it cannot read) for every directory that cannot be listed (no permission, an I/O error). A
    path that does not exist is kept: it is reported FAILED like any unreadable clip."""
    files, notes, failed, seen = [], [], [], set()

    def add(path):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            notes.append(f"skipped {path}: not a regular file")
        elif os.path.abspath(path) in seen:
            notes.append(f"skipped {path}: given twice")
        else:
            seen.add(os.path.abspath(path))
            files.append(path)

    for path in paths:
        if not os.path.isdir(path):
            add(path)
            continue
        try:
            names = sorted(os.listdir(path))
        except OSError as exc:
            failed.append({"file": path, "error": f"cannot list the folder: {type(exc).__name__}: {exc}",
                           "outputs": {}, "warnings": []})
            continue
        for name in names:
            if name.lower().endswith(".bvh"):
                add(os.path.join(path, name))
    return files, notes, failed


def _output_stems(relative):
    """The output name (without extension) of each input path `relative` (relative to the
    inputs' common folder): its own name without the extension, unless another input's is the
    same up to case (walk.bvh, walk.BVH, Walk.bvh: one name on a case-insensitive file system).
    Those inputs are numbered, walk-1, walk-2 ..., in the code-point order of their paths,
    skipping every name some input has as its own (walk-2.bvh keeps walk-2) and every number
    given before. So an input whose own name no other input shares always keeps it, a numbered
    one never takes another input's own name, and no name depends on the order of the inputs."""
    own = [os.path.splitext(rel)[0] for rel in relative]
    sharing = collections.Counter(stem.casefold() for stem in own)
    taken = set(sharing)
    stems = list(own)
    for i in sorted(range(len(own)), key=lambda i: relative[i]):
        if sharing[own[i].casefold()] > 1:
            k = 1
            while f"{own[i]}-{k}".casefold() in taken:
                k += 1
            stems[i] = f"{own[i]}-{k}"
            taken.add(stems[i].casefold())
    return stems


def plan_outputs(files, out, bvh=False):
    """{"packed": path[, "bvh": path]} per file: OUT/<_output_stems name> + .npz / .bvh, the path
    relative to the files' common folder, so inputs with the same name in different folders
    keep apart (and names the same up to case are numbered: _output_stems). Raises ValueError
    when an output would replace one of the inputs: the same path, or the same file reached
    another way (a symbolic link on either side, a hard link)."""
    absolute = [os.path.abspath(f) for f in files]
    try:
        base = os.path.commonpath([os.path.dirname(a) for a in absolute]) if absolute else ""
        relative = [os.path.relpath(a, base) for a in absolute]
    except ValueError:  # different drives (Windows)
        relative = [os.path.basename(a) for a in absolute]
    plans = []
    inputs = set(os.path.normcase(os.path.realpath(a)) for a in absolute)
    input_files = set()  # (device, inode) of the inputs that exist
    for a in absolute:
        try:
            info = os.stat(a)
            input_files.add((info.st_dev, info.st_ino))
        except OSError:
            pass

    def replaces_an_input(target):
        if os.path.normcase(os.path.realpath(target)) in inputs:
            return True
        try:
            info = os.stat(target)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) in input_files

    for stem in _output_stems(relative):
        plan = {"packed": os.path.join(out, stem + ".npz")}
        if bvh:
            plan["bvh"] = os.path.join(out, stem + ".bvh")
        for target in plan.values():
            if replaces_an_input(target):
                raise ValueError(f"{target} would replace an input clip; choose another --out folder")
        plans.append(plan)
    return plans


def _looks_like_output(name):
    """True for a file name this command writes into --out: *.npz, *.bvh, errors*.png."""
    name = name.lower()
    return name.endswith((".npz", ".bvh")) or (name.startswith("errors") and name.endswith(".png"))


def stale_outputs(out, written, inputs=()):
    """The files an earlier run wrote into `out` (as the report.json it left there lists them:
    each clip's outputs, its plots and what it listed as stale itself) that are still there and
    that this run did not write (`written`) nor read (`inputs`): a .bvh of an earlier --bvh run,
    errors-2.png of more skeletons, the .npz of a clip that failed this time, which no longer
    match this run. Only files named like outputs (*.npz, *.bvh, errors*.png) inside `out` are
    listed, and only from such a report: a folder without one (or with an unreadable one) has
    none, so the user's own clips beside the outputs are never listed. Call it before this run
    writes its report.json. Sorted paths; nothing is deleted."""
    def key(path):
        return os.path.normcase(os.path.realpath(path))

    try:
        with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
            earlier = json.load(f)
    except (OSError, ValueError):
        return []
    if not isinstance(earlier, dict):
        return []
    listed = []
    for entry in (earlier.get("clips") or []) + (earlier.get("failed") or []) + (earlier.get("plots") or []):
        if isinstance(entry, dict):
            paths = entry.get("outputs") if isinstance(entry.get("outputs"), dict) else {"plot": entry.get("path")}
            listed += list(paths.values())
    listed += earlier.get("stale_outputs") or []
    root = key(out)
    known = {key(path) for path in (*written, *inputs)}
    stale = set()
    for path in listed:
        if not isinstance(path, str) or not _looks_like_output(os.path.basename(path)):
            continue
        resolved = key(path)
        if (resolved not in known and os.path.commonpath([root, resolved]) == root and resolved != root
                and os.path.isfile(path)):
            stale.add(path)
    return sorted(stale)


def _check_out(out):
    """None when files can be created in `out` (made if missing), else the reason."""
    try:
        os.makedirs(out, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        return f"cannot write there ({type(exc).__name__}: {exc.strerror or exc})"
    return None


def _tqdm():
    try:
        from tqdm import tqdm  # type: ignore[import-untyped]  # tqdm ships no type information
    except ImportError:
        return None
    return tqdm


def _say(text):
    """A line on stderr that does not break a running progress bar."""
    tqdm = _tqdm()
    if tqdm is not None:
        tqdm.write(text, file=sys.stderr)
    else:
        print(text, file=sys.stderr)


def _stages(job):
    names = ["load"] + (["resample"] if job.get("fps") else []) + [
        "forward_kinematics", "pack", "unpack", "errors"] + (["check"] if job.get("check") else [])
    return names + ["write " + k for k in (job.get("outputs") or {})]


def _report_warnings(result):
    for w in result.get("warnings", ()):
        _say(f"warning: {w}")


def _clip_bar(items, total, bar):
    """`items` in a progress bar of `total` clips on stderr (tqdm), or as they are when bar is
    false or tqdm is missing."""
    tqdm = _tqdm() if bar else None
    return tqdm(items, total=total, file=sys.stderr, unit="clip") if tqdm is not None else items


def run_local(jobs, bar=True):
    """process_file(**job) for each job in this process, results in order. A progress bar per
    file (tqdm, on stderr), or per stage for a single clip; reader warnings are printed above
    the bar."""
    tqdm = _tqdm() if bar else None
    results = []
    if tqdm is not None and len(jobs) == 1:
        with tqdm(total=len(_stages(jobs[0])), desc=os.path.basename(jobs[0]["path"]), file=sys.stderr,
                  leave=False, mininterval=0) as stages:  # few updates: draw each
            def progress(name):
                stages.set_postfix_str(name, refresh=False)
                stages.update()
            results.append(_job.process_file(**jobs[0], progress=progress))
    else:
        for job in _clip_bar(jobs, len(jobs), tqdm is not None and len(jobs) > 1):
            results.append(_job.process_file(**job))
            _report_warnings(results[-1])
        return results
    _report_warnings(results[-1])
    return results


def _cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every OS
        return os.cpu_count() or 1


def run_threads(jobs, threads, bar=True):
    """process_file(**job) for each job on `threads` threads of this process, results in job
    order: the kernels, the reader's C part and NumPy release the GIL for most of a clip's time,
    so the threads run on as many cores. One thread: run_local. A progress bar per clip (tqdm,
    on stderr); reader warnings are printed above it as their clips finish."""
    if threads <= 1 or len(jobs) <= 1:
        return run_local(jobs, bar)
    from concurrent.futures import ThreadPoolExecutor, as_completed

    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        futures = [pool.submit(_job.process_file, **job) for job in jobs]
        for future in _clip_bar(as_completed(futures), len(futures), bar):
            _report_warnings(future.result())
        return [future.result() for future in futures]
    finally:  # on an error or Ctrl-C the clips not started are dropped, the running ones finish
        pool.shutdown(wait=True, cancel_futures=True)


# Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536, which also pins glibc's mmap
# threshold at 128 KiB: every clip-sized array is then mapped, page-faulted, zeroed and unmapped
# afresh, and freed heap is returned to the system at once (the stages measured 20-45 % slower
# than in a plain process; benchmarks/bench_main.py: 1.1-1.25x the single-process throughput
# with 2 workers instead of 1.6-1.8x). Workers of our local cluster keep clip-sized arrays on
# the heap and reuse it; a cluster given by address runs with its own settings.
WORKER_ENVIRON = {"MALLOC_MMAP_THRESHOLD_": 1 << 26, "MALLOC_TRIM_THRESHOLD_": 1 << 28}


def _keep_clip_arrays_on_the_heap():
    """WORKER_ENVIRON's glibc settings for this process, through mallopt: what the command runs
    under (its threads then reuse heap memory instead of mapping, faulting and unmapping every
    clip-sized array, which also interrupts the other threads to flush their TLBs: --dask local
    on 64 clips measured 1.20x one process without, 1.46x with). Left alone when the user set
    either variable, and off glibc. True when applied."""
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):  # not a POSIX system, or not glibc
        glibc = False
    if any(name in os.environ for name in WORKER_ENVIRON) or not glibc:
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h>
    return bool(mallopt(m_mmap_threshold, WORKER_ENVIRON["MALLOC_MMAP_THRESHOLD_"])
                and mallopt(m_trim_threshold, WORKER_ENVIRON["MALLOC_TRIM_THRESHOLD_"]))


def local_cluster(n_workers=2):
    """A dask.distributed LocalCluster on 127.0.0.1: n_workers processes of one thread each,
    running the ISA path this process runs (JOINTMATH_ISA set to jointmath.isa() for them), for
    run_dask(jobs, cluster.scheduler_address) from Python (--dask local runs threads instead).

    Where the OS has it, the workers are forked from a forkserver that has imported NumPy and
    distributed once (Dask's default, spawn, starts each worker as a new interpreter that imports
    them again: 3.4 s against 1.5 s for the cluster's start on a 2-core machine). The forkserver
    is a new process started after the WORKER_ENVIRON settings are in the environment, so they
    hold in the workers as with spawn."""
    import multiprocessing

    import dask
    from dask.distributed import LocalCluster

    import jointmath

    config = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_ENVIRON.items()}
    if "forkserver" in multiprocessing.get_all_start_methods():
        config["distributed.worker.multiprocessing-method"] = "forkserver"
    with dask.config.set(config):
        # env: set in each worker process over an inherited JOINTMATH_ISA (the config cannot be)
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                            env={"JOINTMATH_ISA": jointmath.isa()})


def connect(address):
    """A dask.distributed Client of the scheduler at `address` (e.g. tcp://HOST:8786). Raises
    ValueError saying what is wrong: dask.distributed not installed (pip install
    "jointmath[dask]"), an address it cannot parse, or no scheduler answering there within
    Dask's connect timeout (distributed.comm.timeouts.connect, 30 s by default)."""
    try:
        from dask.distributed import Client
        from distributed.comm import get_address_host_port
    except ImportError as exc:
        raise ValueError(f'needs dask.distributed, which is not installed ({exc}); pip install "jointmath[dask]", '
                         f'or use --dask local (threads of this process, no Dask needed)') from None
    try:  # parsed before any Client: one that fails on its address leaves Dask's event loop broken for the next
        get_address_host_port(address)
    except ValueError as exc:
        raise ValueError(f"not a scheduler address ({exc}); expected local or a scheduler's address such as "
                         f"tcp://HOST:8786") from None
    try:
        return Client(address)
    except OSError as exc:  # a timeout included
        raise ValueError(f"no scheduler answered there ({exc})") from None


def _absolute(job):
    """`job` with its clip and output paths absolute, resolved in this process's working folder:
    a worker would resolve a relative path in its own."""
    outputs = job.get("outputs")
    return dict(job, path=os.path.abspath(job["path"]),
                outputs=outputs and {kind: os.path.abspath(target) for kind, target in outputs.items()})


def run_dask(jobs, address, bar=True):
    """process_file(**job) for each job, results in job order: one dask.distributed future per
    file on the scheduler at `address` (or through `address`, a connected Client, left open), or
    for address "local" on one thread per core of this process (run_threads). Jobs go to a
    scheduler with absolute paths, made here (the workers see the files where this process sees
    them: a shared file system); the results name them so. A local process cluster was measured
    slower than one process on this job (a 2-worker LocalCluster takes ~1.5 s to start, and its
    workers reached only 1.1x one process on the work itself: benchmarks/README.md), threads
    1.75-1.85x on 2 cores; a note on stderr says what runs. Raises ValueError for an address
    that connect() refuses."""
    if address == "local":
        threads = min(_cores(), len(jobs))
        _say(f"note: --dask local: {len(jobs)} clip{'s' * (len(jobs) != 1)} on {threads} "
             f"thread{'s' * (threads != 1)} of this process (the kernels release the GIL; no cluster to start)")
        return run_threads(jobs, threads, bar)
    if isinstance(address, str):
        with connect(address) as client:
            return run_dask(jobs, client, bar)
    from dask.distributed import as_completed

    futures = [address.submit(_job.process_file, **_absolute(job), pure=False) for job in jobs]
    for _, result in _clip_bar(as_completed(futures, with_results=True), len(futures), bar):
        _report_warnings(result)
    return address.gather(futures)


def _length(value, height, unit_scale):
    """'0.0847 units (0.28 % of height)' or with unit_scale '0.48 cm (0.28 % of height)'; 'not
    measurable' for a value that is not finite."""
    if not math.isfinite(value):
        return "not measurable"
    text = f"{value * unit_scale:.3g} cm" if unit_scale else f"{value:.3g} units"
    return text + (f" ({100 * value / height:.2g} % of height)" if height else "")


def _not_finite(result):
    """The keys of a clip's result whose figures hold a NaN or an infinity (a figure that could
    not be measured, e.g. float32 world positions beyond float32's range under --check): those
    report.json holds as null."""
    return [key for key, value in result.items() if not key.startswith("_") and _job.json_ready(value) != value]


def _print_clip(r, unit_scale):
    height = r["skeleton_height"]
    print(f"\n{r['file']}: {r['frames']} frames x {r['joints']} joints"
          + (f" (resampled from {r['source_frames']})" if r["frames"] != r["source_frames"] else "")
          + f", compression {r['compression_ratio']:.2f}x ({r['bits']}-bit)")
    unmeasured = _not_finite(r)
    if unmeasured:
        print(f"  warning: not measurable for this clip (not finite, e.g. positions beyond float32's range; null in "
              f"report.json): {', '.join(unmeasured)}")
    print(f"  {'stage':20s} {'frames':>8s} {'seconds':>10s} {'frames/s':>12s}")
    for name, sec in r["seconds"].items():
        fps = r["frames_per_second"][name]
        print(f"  {name:20s} {r['stage_frames'][name]:8d} {sec:10.5f} {fps if fps is not None else float('inf'):12.0f}")
    print(f"  skeleton height (rest pose): {_length(height, 0, unit_scale)}")
    print(f"  packing rotation error: max {max(r['angle_error_max'], default=0):.3g} rad, mean "
          f"{sum(r['angle_error_mean']) / max(len(r['angle_error_mean']), 1):.3g} rad")
    print(f"  end-effector position error: max {_length(r['end_effector_error_max'], height, unit_scale)}, "
          f"mean {_length(r['end_effector_error_mean'], height, unit_scale)}")
    print("  worst joints: " + ", ".join(f"{w['name']} {_length(w['position_error_max'], height, unit_scale)}"
                                         for w in r["worst_joints"]))
    if "forward_kinematics_error_max" in r:
        print(f"  check: float32 forward kinematics vs float64: max "
              f"{_length(r['forward_kinematics_error_max'], height, unit_scale)}")
    for kind, path in r["outputs"].items():
        print(f"  wrote {path}")


def _skeletons(results):
    """Results grouped by skeleton (joint names and parents), in order of first appearance."""
    groups = {}
    for r in results:
        groups.setdefault((tuple(r["names"]), tuple(r["parents"])), []).append(r)
    return list(groups.values())


def _label(text):
    """`text` as matplotlib shows it literally: the bytes of a file name that are not UTF-8 as
    U+FFFD, and `$` as a dollar sign, not the start of a formula."""
    return str(text).encode("utf-8", "surrogateescape").decode("utf-8", "replace").replace("$", r"\$")


def _error_figure(group):
    """The Figure of one skeleton's clips (results with the same joint names and parents): the
    max position error per joint by joint name (a bar for the worst clip, a dot per clip when
    there are several) and the position error over time of the worst end effectors of the worst
    clip, both as % of the skeleton height (clip units if a height is 0), y from 0."""
    import numpy as np
    from matplotlib.figure import Figure

    names = group[0]["names"]
    relative = all(r["skeleton_height"] for r in group)
    unit = "% of skeleton height" if relative else "clip units"

    def scaled(r, values):
        return np.asarray(values, np.float64) * (100 / r["skeleton_height"] if relative else 1.0)

    per_clip = np.array([scaled(r, r["position_error_max"]) for r in group])
    worst = group[int(np.argmax(per_clip.max(axis=1, initial=0.0)))]
    fig = Figure(figsize=(max(8.0, 0.3 * len(names) + 2), 8), layout="constrained")
    top, bottom = fig.subplots(2, 1)
    x = np.arange(len(names))
    top.bar(x, per_clip.max(axis=0), color="tab:blue", alpha=0.5,
            label="worst clip" if len(group) > 1 else _label(os.path.basename(worst["file"])))
    if len(group) > 1:
        for row in per_clip:
            top.plot(x, row, ".", color="black", markersize=3)
        top.plot([], [], ".", color="black", label="each clip")
    top.set_xticks(x, [_label(n) for n in names], rotation=90, fontsize=7)
    top.set_xlim(-0.6, len(names) - 0.4)
    top.set_ylim(bottom=0)
    top.set_xlabel("joint")
    top.set_ylabel(f"max position error ({unit})")
    top.set_title(f"Packing error per joint ({worst['bits']}-bit): skeleton of {len(names)} joints "
                  f"(root {_label(names[0])}), {len(group)} clip{'s' if len(group) > 1 else ''}")
    top.legend(loc="upper left")
    series = worst["_series"]
    for name, errors in zip(series["names"], series["errors"]):
        bottom.plot(np.arange(len(errors)) * worst["frame_time"], scaled(worst, errors), linewidth=0.8,
                    label=_label(name))
    bottom.set_ylim(bottom=0)
    bottom.set_xlabel("time (s)")
    bottom.set_ylabel(f"position error ({unit})")
    bottom.set_title(f"Worst end effectors over time: {_label(os.path.basename(worst['file']))}")
    if series["names"]:
        bottom.legend(loc="upper left")
    return fig


def _plot(results, out):
    """One PNG per skeleton (_error_figure): errors.png, or errors-1.png, errors-2.png ... when
    the clips have several skeletons. Returns [{"path", "clips"}]; [] with a note when
    matplotlib is not installed."""
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        print("note: matplotlib is not installed, no plot written")
        return []
    groups = _skeletons(results)
    plots = []
    for k, group in enumerate(groups, 1):
        path = os.path.join(out, "errors.png" if len(groups) == 1 else f"errors-{k}.png")
        try:  # a figure that cannot be drawn costs that figure, never the report after it
            fig = _error_figure(group)
            write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=90))
        except (OSError, ValueError, TypeError, RuntimeError) as exc:
            print(f"FAILED to write {path}: {type(exc).__name__}: {exc}")
            continue
        plots.append({"path": path, "clips": [r["file"] for r in group]})
    return plots


def _parser():
    # allow_abbrev=False: an abbreviation such as --self would be taken for --selfcheck by the
    # parser but not by main's dispatch, and run the job instead
    parser = argparse.ArgumentParser(prog="python -m jointmath", description=__doc__, allow_abbrev=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="BVH files or directories (default: the embedded sample)")
    parser.add_argument("--bits", type=int, choices=(10, 20), default=10, help="packing size per component")
    parser.add_argument("--fps", type=_fps, default=None, help=f"resample to N frames per second ({MIN_FPS:.2g} <= "
                                                                f"N <= {MAX_FPS:,.0f})")
    parser.add_argument("--out", type=_folder, default=None,
                        help="folder for the .npz clips, report.json and errors.png")
    parser.add_argument("--bvh", action="store_true", help="also write each processed clip as BVH (needs --out)")
    parser.add_argument("--check", action="store_true",
                        help="also check the float32 forward kinematics against float64 (a 'check' stage)")
    parser.add_argument("--unit-scale", type=_unit_scale, default=None, metavar="CM",
                        help="centimetres per clip unit, to print errors in cm (CMU: 2.54/0.45)")
    parser.add_argument("--dask", default=None, metavar="local|ADDRESS",
                        help="run on a dask.distributed scheduler at ADDRESS, or 'local': one thread per core here")
    parser.add_argument("--selfcheck", action="store_true", help="run the kernel self-check instead")
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--selfcheck" in argv:
        from . import _selfcheck
        return _selfcheck.main([a for a in argv if a != "--selfcheck"])
    for stream in (sys.stdout, sys.stderr):
        # a file name whose bytes are not UTF-8 (held as surrogates) prints as caf\xe9.bvh, not
        # a UnicodeEncodeError halfway through the run
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = _parser()
    args = parser.parse_args(argv)
    if args.bvh and args.out is None:
        parser.error("--bvh needs --out DIR")
    if args.bvh and args.fps is not None and 1.0 / args.fps > FRAME_TIME_RANGE[1]:
        parser.error(f"--fps {args.fps:g} with --bvh: BVH holds at most {FRAME_TIME_RANGE[1]:g} seconds a frame "
                     f"(--fps {1 / FRAME_TIME_RANGE[1]:.6g} or more)")
    if args.paths:
        files, notes, unlisted = find_clips(args.paths)
    else:
        files, notes, unlisted = [_job.sample_path()], [], []
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not files:
        for r in unlisted:
            print(f"FAILED {r['file']}: {r['error']}", file=sys.stderr)
        print(f"error: no BVH clips found in {', '.join(args.paths)} (a directory gives its *.bvh files)",
              file=sys.stderr)
        return 1
    plans = [None] * len(files)
    if args.out is not None:
        problem = _check_out(args.out)
        if problem is not None:
            parser.error(f"--out {args.out}: {problem}")
        try:
            plans = plan_outputs(files, args.out, args.bvh)
        except ValueError as exc:
            parser.error(f"--out {args.out}: {exc}")
    jobs = [{"path": f, "bits": args.bits, "fps": args.fps, "outputs": plan, "check": args.check}
            for f, plan in zip(files, plans)]
    if args.dask is None:
        results = run_local(jobs)
    elif args.dask == "local":
        results = run_dask(jobs, "local")
    else:
        try:
            client = connect(args.dask)
        except ValueError as exc:
            parser.error(f"--dask {args.dask}: {exc}")
        with client:
            results = run_dask(jobs, client)
    good = [r for r in results if "error" not in r]
    bad = unlisted + [r for r in results if "error" in r]
    for r in good:
        _print_clip(r, args.unit_scale)
    for r in bad:
        print(f"\nFAILED {r['file']}: {r['error']}")
        for path in r["outputs"].values():
            print(f"  wrote {path}")
    frames = sum(r["frames"] for r in good)
    print(f"\nsummary: {len(good)} clips processed, {len(bad)} failed, {len(notes)} skipped, {frames} frames")
    if args.out is not None:
        plots = _plot(good, args.out) if good else []
        written = [target for r in results for target in r["outputs"].values()] + [p["path"] for p in plots]
        stale = stale_outputs(args.out, written, files)
        if stale:
            print(f"note: files in {args.out} that an earlier run wrote and this run did not write again (left as "
                  f"they are, listed in report.json under stale_outputs):")
            for stale_path in stale:
                print(f"  {stale_path}")
        report = {"clips": [{k: v for k, v in r.items() if not k.startswith("_")} for r in good], "failed": bad,
                  "skipped": notes, "plots": plots, "stale_outputs": stale, "bits": args.bits, "fps": args.fps,
                  "check": args.check, "unit_scale_cm": args.unit_scale}
        path = os.path.join(args.out, "report.json")
        try:
            _job.write_json(path, report)
        except OSError as exc:
            print(f"FAILED to write {path}: {type(exc).__name__}: {exc}")
            return 1
        for plot in plots:
            print(f"wrote {plot['path']}")
        print(f"wrote {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    _keep_clip_arrays_on_the_heap()
    sys.exit(main())
