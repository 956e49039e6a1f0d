"""The runners of `python -m jointmath`: process_file for each clip in this thread, on threads of
this process, or on a dask.distributed scheduler; results in job order, reader warnings and a
progress bar (tqdm, when installed) on stderr."""
import os
import sys

from . import _job
from ._heap import WORKER_ENVIRON

__all__ = ["connect", "local_cluster", "run_dask", "run_local", "run_threads", "say"]


def _tqdm():
    try:
        from tqdm import tqdm  # type: ignore[import-untyped]  # tqdm ships no type information
    except ImportError:
        return None
    return tqdm

def say(text):
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
        say(f"warning: {w}")

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
        say(f"note: --dask local: {len(jobs)} clip{'s' * (len(jobs) != 1)} on {threads} "
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
