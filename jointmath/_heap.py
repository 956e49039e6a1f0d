"""glibc's malloc settings for the command and its Dask workers: clip-sized arrays stay on the
heap and are reused, instead of being mapped, faulted and unmapped for every clip."""
import os

__all__ = ["WORKER_ENVIRON", "keep_clip_arrays_on_the_heap"]


#: glibc's malloc settings for the command and the workers of local_cluster(): clip-sized arrays
#: stay on the heap and are reused (Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536,
#: which maps, faults and unmaps every one; docs/design/command-runners.md). A cluster given by
#: address runs with its own settings.
WORKER_ENVIRON = {"MALLOC_MMAP_THRESHOLD_": 1 << 26, "MALLOC_TRIM_THRESHOLD_": 1 << 28}


def keep_clip_arrays_on_the_heap():
    """Apply WORKER_ENVIRON's glibc settings to this process, through mallopt.

    What the command runs under: its threads then reuse heap memory instead of mapping, faulting
    and unmapping every clip-sized array (docs/design/command-runners.md). Left alone when the
    user set either variable, and off glibc.

    Returns
    -------
    bool
        True when applied.
    """
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
