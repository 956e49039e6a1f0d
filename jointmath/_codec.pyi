import dataclasses
from os import PathLike
from typing import NamedTuple, Optional, SupportsFloat, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import bvh

__all__ = ["CompressedClip", "CompressionStats", "TrackRate", "compress", "decompress", "load_compressed"]

ACL_ERROR_CM: float
ACL_SHELL_CM: float
HUMAN_HEIGHT_CM: float

class TrackRate(NamedTuple):
    joint: str
    track: str
    mode: str
    step: float
    bits_per_frame: float

@dataclasses.dataclass(frozen=True)
class CompressionStats:
    max_error: float
    p99_error: float
    joint_max_error: NDArray[np.float64]
    bytes_per_joint_sample: float
    bit_rates: tuple[TrackRate, ...]

class CompressedClip:
    def __init__(self) -> None: ...
    @property
    def error(self) -> float: ...
    @property
    def shell(self) -> float: ...
    @property
    def frame_time(self) -> float: ...
    @property
    def num_frames(self) -> int: ...
    @property
    def num_joints(self) -> int: ...
    @property
    def names(self) -> list[str]: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def stats(self) -> CompressionStats: ...
    def tobytes(self) -> bytes: ...
    @classmethod
    def frombytes(cls, b: Union[bytes, bytearray, memoryview]) -> "CompressedClip": ...
    def save(self, path: Union[str, PathLike[str]]) -> None: ...
    def sample(self, times: ArrayLike, out: Optional[NDArray[np.void]] = None) -> NDArray[np.void]: ...

def compress(clip: bvh.Clip, error: Optional[SupportsFloat] = None, shell: Optional[SupportsFloat] = None) -> CompressedClip: ...
def decompress(c: CompressedClip) -> bvh.Clip: ...
def load_compressed(path: Union[str, PathLike[str]]) -> CompressedClip: ...
