"""How much memory jointmath lets one call or one clip take: the RAM policy, in one place.

resample_joints refuses an output larger than this machine's memory (the C boundary is given
the figure at import: jointmath/_interp.c), and the command refuses a resampling whose pipeline
would take more than half of it (jointmath/_job.py), before allocating anything.
"""
import os

from . import _core

__all__ = ["physical_memory", "pipeline_budget"]


def physical_memory():
    """Bytes of RAM on this machine, or 0 where the OS does not say."""
    try:
        pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 0
    return pages * page if pages > 0 and page > 0 else 0


def pipeline_budget():
    """Bytes one clip's pipeline may take: half the physical memory (8 GiB where unknown)."""
    return physical_memory() // 2 or 8 << 30


_core._set_memory_limit(physical_memory())  # resample_joints' bound (jointmath/_interp.c)
