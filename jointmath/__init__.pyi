from os import PathLike
from typing import Literal, Optional, Sequence, SupportsFloat, SupportsIndex, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import bvh as bvh
from . import reference as reference
from ._core import available_isas as available_isas
from ._core import compose_mats as compose_mats
from ._core import isa as isa
from ._core import joint_index as joint_index
from ._core import joints_to_mats as joints_to_mats
from ._core import lerp_joints as lerp_joints
from ._core import mats_to_joints as mats_to_joints
from ._core import slerp_joints as slerp_joints

__version__: str
__all__ = [
    "JOINT_MAT",
    "JOINT_QUAT",
    "PACKED_JOINT",
    "PACKED_JOINT64",
    "available_isas",
    "bvh",
    "compose_mats",
    "euler_to_quat",
    "extract_rotation",
    "forward_kinematics",
    "isa",
    "joint_index",
    "joints_to_mats",
    "lerp_joints",
    "load_packed",
    "make_continuous",
    "make_joints",
    "matrix_to_quat",
    "mats_to_joints",
    "nlerp",
    "pack_joints",
    "pack_quats",
    "quat_to_euler",
    "quat_to_matrix",
    "reference",
    "resample_joints",
    "slerp",
    "slerp_joints",
    "translations",
    "unpack_joints",
    "unpack_quats",
]

_Floats = NDArray[np.floating]  # results: float32 or float64, as the input
_Records = NDArray[np.void]
_Orders = Union[str, Sequence[str], NDArray[np.str_]]  # one order, or one per joint

JOINT_QUAT: np.dtype[np.void]
JOINT_MAT: np.dtype[np.void]
PACKED_JOINT: np.dtype[np.void]
PACKED_JOINT64: np.dtype[np.void]

def make_joints(q: ArrayLike, t: Optional[ArrayLike] = None) -> _Records: ...
def translations(joints: _Records) -> NDArray[np.float32]: ...
def quat_to_matrix(q: ArrayLike, out: Optional[_Floats] = None) -> _Floats: ...
def matrix_to_quat(m: ArrayLike, out: Optional[_Floats] = None) -> _Floats: ...
def pack_quats(q: ArrayLike, bits: Literal[10, 20] = 10) -> NDArray[np.unsignedinteger]: ...
def unpack_quats(p: Union[NDArray[np.unsignedinteger], np.unsignedinteger, Sequence[np.unsignedinteger]]) -> NDArray[np.float32]: ...
def pack_joints(joints: _Records, bits: Literal[10, 20] = 10) -> _Records: ...
def unpack_joints(packed: _Records) -> _Records: ...
@overload
def extract_rotation(a: ArrayLike, q0: Optional[ArrayLike] = None, *, method: str = "newton",
                     max_iter: SupportsIndex = 200, tol: Optional[SupportsFloat] = None, out: Optional[_Floats] = None,
                     return_iterations: Literal[False] = False) -> _Floats: ...
@overload
def extract_rotation(a: ArrayLike, q0: Optional[ArrayLike] = None, *, method: str = "newton",
                     max_iter: SupportsIndex = 200, tol: Optional[SupportsFloat] = None, out: Optional[_Floats] = None,
                     return_iterations: Literal[True]) -> tuple[_Floats, Union[NDArray[np.int32], np.int32]]: ...
def euler_to_quat(angles: ArrayLike, order: _Orders, degrees: bool = False, out: Optional[_Floats] = None) -> _Floats: ...
def quat_to_euler(q: ArrayLike, order: _Orders, degrees: bool = False, out: Optional[_Floats] = None) -> _Floats: ...
def forward_kinematics(joints: _Records, parents: ArrayLike) -> _Records: ...
def make_continuous(q: ArrayLike, axis: int = 0, prev: Optional[ArrayLike] = None) -> _Floats: ...
def resample_joints(joints: _Records, frame_time: SupportsFloat, fps: SupportsFloat) -> _Records: ...
def slerp(q0: ArrayLike, q1: ArrayLike, t: Union[float, ArrayLike], out: Optional[_Floats] = None) -> _Floats: ...
def nlerp(q0: ArrayLike, q1: ArrayLike, t: Union[float, ArrayLike], out: Optional[_Floats] = None) -> _Floats: ...
def load_packed(path: Union[str, PathLike[str]]) -> bvh.Clip: ...
