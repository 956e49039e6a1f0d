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
    names = ["load"] + (["resample"] if job.get("fps") else [])
    if job.get("format", "packed") == "jmc":
        names += ["compress"]
    else:
        names += ["forward_kinematics", "pack", "unpack", "errors"] + (["check"] if job.get("check") else [])
    return names + ["source sizes"] + ["write " + k for k in (job.get("outputs") or {})]


def _report_warnings(result):
    for w in result.get("warnings", ()):
        say(f"warning: {w}")


def _clip_bar(items, total, bar):
    """`items` in a progress bar of `total` clips on stderr (tqdm), or as they are when bar is
    false or tqdm is missing."""
    tqdm = _tqdm() if bar else None
    return tqdm(items, total=total, file=sys.stderr, unit="clip") if tqdm is not None else items


def run_local(jobs, bar=True):
    """Run process_file(**job) for each job in this process, one after another.

    Parameters
    ----------
    jobs : list of dict
        process_file's keyword arguments per clip ("path", and optionally "format", "bits", "fps",
        "outputs", "check", "error_cm", "shell_cm", "unit_scale").
    bar : bool, optional
        A progress bar on stderr (tqdm, when installed): per clip, or per stage for a single
        clip. Reader warnings are printed above it.

    Returns
    -------
    list of dict
        process_file's results, in job order.

    Examples
    --------
    >>> from jointmath import data
    >>> from jointmath.__main__ import run_local
    >>> [result] = run_local([{"path": data.sample_clip_path(), "bits": 20}], bar=False)
    >>> result["frames"], result["bits"], result["compression_ratio"]
    (381, 20, 1.6)
    """
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
    """Run process_file(**job) for each job on threads of this process.

    The kernels, the reader's C part and NumPy release the GIL for most of a clip's time, so the
    threads run on as many cores. On an error or Ctrl-C the clips not started are dropped and
    the running ones finish.

    Parameters
    ----------
    jobs : list of dict
        process_file's keyword arguments per clip.
    threads : int
        How many threads; one (or one job) runs run_local.
    bar : bool, optional
        A progress bar per clip on stderr (tqdm, when installed); reader warnings are printed
        above it as their clips finish.

    Returns
    -------
    list of dict
        process_file's results, in job order.

    Examples
    --------
    >>> from jointmath import data
    >>> from jointmath.__main__ import run_threads
    >>> results = run_threads([{"path": data.sample_clip_path()}, {"path": data.sample_clip_path(), "fps": 30}], 2,
    ...                       bar=False)
    >>> [r["frames"] for r in results]
    [381, 95]
    """
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
    """A dask.distributed LocalCluster on 127.0.0.1 for run_dask from Python.

    Its workers are processes of one thread each, running the ISA path this process runs
    (JOINTMATH_ISA set to jointmath.isa() for them) with WORKER_ENVIRON's malloc settings. Where
    the OS has it, they are forked from a forkserver that has imported NumPy and distributed once
    (Dask's default, spawn, imports them again in each worker); the forkserver starts after the
    settings are in the environment, so they hold in the workers as with spawn. ``--dask local``
    runs threads instead (docs/design/command-runners.md).

    Parameters
    ----------
    n_workers : int, optional
        How many worker processes.

    Returns
    -------
    distributed.LocalCluster
        Close it (a ``with`` block) when done.

    Raises
    ------
    ImportError
        Without dask.distributed (pip install "jointmath[dask]").

    Examples
    --------
    >>> from jointmath import data
    >>> from jointmath.__main__ import local_cluster, run_dask
    >>> with local_cluster(n_workers=1) as cluster:  # doctest: +SKIP
    ...     [result] = run_dask([{"path": data.sample_clip_path()}], cluster.scheduler_address, bar=False)
    >>> result["frames"]  # doctest: +SKIP
    381
    """
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
    """A dask.distributed Client of the scheduler at `address`.

    Parameters
    ----------
    address : str
        A scheduler's address, e.g. tcp://HOST:8786.

    Returns
    -------
    distributed.Client

    Raises
    ------
    ValueError
        Saying what is wrong: dask.distributed not installed (pip install "jointmath[dask]"), an
        address it cannot parse, or no scheduler answering there within Dask's connect timeout
        (distributed.comm.timeouts.connect, 30 s by default).

    Examples
    --------
    >>> from jointmath.__main__ import connect
    >>> try:
    ...     connect("nowhere")
    ... except ValueError as exc:
    ...     print("refused")
    refused
    """
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
    """Run process_file(**job) for each job on Dask, or on threads for "local".

    One dask.distributed future per file on the scheduler at `address`. Jobs go to a scheduler
    with absolute paths, made here: the workers must see the files where this process sees them
    (a shared file system); the results name them so. For address "local" the jobs run on one
    thread per core of this process (run_threads), faster here than a local process cluster
    (docs/design/command-runners.md); a note on stderr says what runs.

    Parameters
    ----------
    jobs : list of dict
        process_file's keyword arguments per clip.
    address : str or distributed.Client
        "local", a scheduler's address (connected and closed here), or a connected Client (left
        open).
    bar : bool, optional
        A progress bar per clip on stderr (tqdm, when installed); reader warnings are printed
        above it.

    Returns
    -------
    list of dict
        process_file's results, in job order.

    Raises
    ------
    ValueError
        For an address that connect() refuses.

    Examples
    --------
    >>> from jointmath import data
    >>> from jointmath.__main__ import run_dask
    >>> [result] = run_dask([{"path": data.sample_clip_path()}], "local", bar=False)
    >>> result["frames"]
    381
    """
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
