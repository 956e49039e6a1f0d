"""glibc's malloc settings for the command and its Dask workers: clip-sized arrays stay on the
heap and are reused, instead of being mapped, faulted and unmapped for every clip."""
import os

__all__ = ["WORKER_ENVIRON", "keep_clip_arrays_on_the_heap"]


# Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536, which also pins glibc's mmap
# threshold at 128 KiB: every clip-sized array is then mapped, page-faulted, zeroed and unmapped
# afresh, and freed heap is returned to the system at once (the stages measured 20-45 % slower
# than in a plain process; benchmarks/bench_main.py: 1.1-1.25x the single-process throughput
# with 2 workers instead of 1.6-1.8x). Workers of our local cluster keep clip-sized arrays on
# the heap and reuse it; a cluster given by address runs with its own settings.
WORKER_ENVIRON = {"MALLOC_MMAP_THRESHOLD_": 1 << 26, "MALLOC_TRIM_THRESHOLD_": 1 << 28}

def keep_clip_arrays_on_the_heap():
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
