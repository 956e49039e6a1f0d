from dataclasses import dataclass
from os import PathLike
from typing import IO, Union

import numpy as np
from numpy.typing import NDArray

__all__ = ["BVHWarning", "Clip", "joints_from_motion", "load", "resample", "save"]

class BVHWarning(UserWarning): ...

@dataclass
class Clip:
    names: list[str]
    parents: NDArray[np.int64]
    offsets: NDArray[np.float64]
    channels: list[tuple[str, ...]]
    orders: list[str]
    end_sites: NDArray[np.int64]
    end_offsets: NDArray[np.float64]
    frame_time: float
    motion: NDArray[np.float32]
    joints: NDArray[np.void]
    @property
    def fps(self) -> float: ...
    @property
    def n_frames(self) -> int: ...
    @property
    def n_joints(self) -> int: ...

def load(path_or_file: Union[str, PathLike[str], IO[str], IO[bytes]]) -> Clip: ...
def save(clip: Clip, path_or_file: Union[str, PathLike[str], IO[str]]) -> None: ...
def resample(clip: Clip, fps: float) -> Clip: ...
def joints_from_motion(motion: NDArray[np.float32], offsets: NDArray[np.float64],
                       channels: list[tuple[str, ...]]) -> NDArray[np.void]: ...
