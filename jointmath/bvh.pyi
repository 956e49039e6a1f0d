import sys
from dataclasses import dataclass
from os import PathLike
from typing import IO, Any, Sequence, SupportsFloat, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:
    from importlib.abc import Traversable

__all__ = ["BVHWarning", "Clip", "joints_from_motion", "load", "resample", "save"]

FRAME_TIME_RANGE: tuple[float, float]
MAX_INDENT: int
CONTINUED_ANGLE_MAX: float
EULER_JUMP: float

class BVHWarning(UserWarning): ...

@dataclass(init=False, eq=False, repr=False)
class Clip:
    names: list[str]
    parents: NDArray[np.int64]
    offsets: NDArray[np.float64]
    channels: list[tuple[str, ...]]
    frame_time: float
    joints: NDArray[np.void]
    end_sites: NDArray[np.int64]
    end_offsets: NDArray[np.float64]
    name: str
    def __init__(self, names: Sequence[str], parents: ArrayLike, offsets: ArrayLike,
                 channels: Sequence[Sequence[str]], frame_time: SupportsFloat,
                 joints: NDArray[np.void], end_sites: ArrayLike = ...,
                 end_offsets: ArrayLike = ..., name: str = "") -> None: ...
    def __post_init__(self) -> None: ...
    @property
    def orders(self) -> list[str]: ...
    @property
    def fps(self) -> float: ...
    @property
    def n_frames(self) -> int: ...
    @property
    def n_joints(self) -> int: ...
    @property
    def duration(self) -> float: ...
    @property
    def motion(self) -> NDArray[np.float32]: ...
    def world(self) -> NDArray[np.void]: ...
    def positions(self, end_sites: bool = True) -> NDArray[np.float32]: ...
    def rest_positions(self) -> NDArray[np.float64]: ...
    def height(self, axis: Union[int, np.integer[Any]] = 1) -> float: ...
    def __eq__(self, other: object) -> bool: ...

def load(path_or_file: Union[str, PathLike[str], Traversable, IO[str], IO[bytes]]) -> Clip: ...
def save(clip: Clip, path_or_file: Union[str, PathLike[str], IO[str], IO[bytes]]) -> None: ...
def resample(clip: Clip, fps: SupportsFloat) -> Clip: ...
def joints_from_motion(motion: ArrayLike, offsets: ArrayLike, channels: Sequence[Sequence[str]]) -> NDArray[np.void]: ...
