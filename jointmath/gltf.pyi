from os import PathLike
from typing import Literal, Optional, SupportsFloat, Union

from .bvh import Clip

__all__ = ["load", "save"]

ROTATION_FORMATS: tuple[str, str]

def save(clip: Clip, path: Union[str, PathLike[str]],
         rotations: Literal["float", "normalized16"] = "float") -> None: ...
def load(path: Union[str, PathLike[str]], fps: Optional[SupportsFloat] = None,
         skin: Optional[Union[int, str]] = None, animation: Optional[Union[int, str]] = None) -> Clip: ...
