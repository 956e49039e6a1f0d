"""slerp / nlerp on plain (..., 4) quaternion arrays: implemented in C (jointmath/_interp.c),
re-exported here for the modules that build on them."""
from ._core import nlerp, slerp

__all__ = ["nlerp", "slerp"]
