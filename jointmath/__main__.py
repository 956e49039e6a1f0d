"""python -m jointmath: compress BVH motion capture clips (python -m jointmath --help).

The command in modules of one concern each: _cli (options and the run), _plan (inputs and
outputs), _runners (one thread, threads, Dask), _heap (malloc settings), _report (tables, plots,
report.json), _job (one clip's pipeline), _compressed_job (the default format: compress under a
bound in cm), _sizes (raw float32 and gzip -9 / xz -9 sizes). The names below are the ones programs use.
"""
import sys

from ._cli import MAX_FPS, MIN_FPS, main
from ._heap import WORKER_ENVIRON
from ._heap import keep_clip_arrays_on_the_heap as _keep_clip_arrays_on_the_heap
from ._plan import find_clips, plan_outputs, stale_outputs
from ._runners import connect, local_cluster, run_dask, run_local, run_threads

__all__ = ["MAX_FPS", "MIN_FPS", "WORKER_ENVIRON", "connect", "find_clips", "local_cluster", "main",
           "plan_outputs", "run_dask", "run_local", "run_threads", "stale_outputs"]

if __name__ == "__main__":
    _keep_clip_arrays_on_the_heap()
    sys.exit(main())
