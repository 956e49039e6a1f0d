from os import PathLike
from typing import Literal, Optional, Sequence, SupportsFloat, SupportsIndex, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import bvh as bvh
from . import data as data
from . import gltf as gltf
from . import reference as reference
from ._codec import CompressedClip as CompressedClip
from ._core import _Floats, _Records
from ._core import available_isas as available_isas
from ._core import compose_mats as compose_mats
from ._core import euler_to_quat as euler_to_quat
from ._core import forward_kinematics as forward_kinematics
from ._core import isa as isa
from ._core import joint_index as joint_index
from ._core import joints_to_mats as joints_to_mats
from ._core import lerp_joints as lerp_joints
from ._core import make_continuous as make_continuous
from ._core import make_joints as make_joints
from ._core import matrix_to_quat as matrix_to_quat
from ._core import mats_to_joints as mats_to_joints
from ._core import nlerp as nlerp
from ._core import pack_joints as pack_joints
from ._core import pack_quats as pack_quats
from ._core import quat_to_euler as quat_to_euler
from ._core import quat_to_matrix as quat_to_matrix
from ._core import resample_joints as resample_joints
from ._core import slerp as slerp
from ._core import slerp_joints as slerp_joints
from ._core import unpack_joints as unpack_joints
from ._core import unpack_quats as unpack_quats
from ._core import align_vectors as align_vectors
from ._core import quat_mean as quat_mean
from ._core import random_quats as random_quats

__version__: str
# rotation algebra
from ._core import quat_multiply as quat_multiply
from ._core import quat_conjugate as quat_conjugate
from ._core import quat_inverse as quat_inverse
from ._core import rotate_vectors as rotate_vectors
from ._core import quat_to_rotvec as quat_to_rotvec
from ._core import rotvec_to_quat as rotvec_to_quat
from ._core import quat_angle as quat_angle
from ._core import quat_angle_between as quat_angle_between
from ._core import swing_twist as swing_twist
from ._core import quat_to_6d as quat_to_6d
from ._core import sixd_to_quat as sixd_to_quat

__all__ = [
    "CompressedClip",
    "JOINT_MAT",
    "JOINT_QUAT",
    "PACKED_JOINT",
    "PACKED_JOINT64",
    "Player",
    "align_vectors",
    "available_isas",
    "compress",
    "bvh",
    "compose_mats",
    "data",
    "decompress",
    "euler_to_quat",
    "extract_rotation",
    "forward_kinematics",
    "gltf",
    "isa",
    "joint_index",
    "joints_to_mats",
    "lerp_joints",
    "load_compressed",
    "load_packed",
    "make_continuous",
    "make_joints",
    "matrix_to_quat",
    "mats_to_joints",
    "nlerp",
    "pack_joints",
    "pack_quats",
    "player",
    "quat_mean",
    "quat_to_euler",
    "quat_to_matrix",
    "random_quats",
    "reference",
    "resample_joints",
    "save_packed",
    "slerp",
    "slerp_joints",
    "translations",
    "unpack_joints",
    "unpack_quats",
    # rotation algebra
    "quat_multiply",
    "quat_conjugate",
    "quat_inverse",
    "rotate_vectors",
    "quat_to_rotvec",
    "rotvec_to_quat",
    "quat_angle",
    "quat_angle_between",
    "swing_twist",
    "quat_to_6d",
    "sixd_to_quat",
]

JOINT_QUAT: np.dtype[np.void]
JOINT_MAT: np.dtype[np.void]
PACKED_JOINT: np.dtype[np.void]
PACKED_JOINT64: np.dtype[np.void]

_WithCounts = tuple[_Floats, Union[NDArray[np.int32], np.int32]]  # return_iterations=True: the update counts too

def translations(joints: _Records) -> NDArray[np.float32]: ...
@overload
def extract_rotation(a: ArrayLike, q0: Optional[ArrayLike] = None, *, method: str = "newton",
                     max_iter: SupportsIndex = 200, tol: Optional[SupportsFloat] = None, out: Optional[_Floats] = None,
                     return_iterations: Literal[False] = False) -> _Floats: ...
@overload
def extract_rotation(a: ArrayLike, q0: Optional[ArrayLike] = None, *, method: str = "newton",
                     max_iter: SupportsIndex = 200, tol: Optional[SupportsFloat] = None, out: Optional[_Floats] = None,
                     return_iterations: Literal[True]) -> _WithCounts: ...
@overload
def extract_rotation(a: ArrayLike, q0: Optional[ArrayLike] = None, *, method: str = "newton",
                     max_iter: SupportsIndex = 200, tol: Optional[SupportsFloat] = None, out: Optional[_Floats] = None,
                     return_iterations: bool) -> Union[_Floats, _WithCounts]: ...
def load_packed(path: Union[str, PathLike[str]]) -> bvh.Clip: ...

class Player:
    html: str
    width: int
    height: int
    def __init__(self, page: str, width: int, height: int, summary: str) -> None: ...
    def _repr_html_(self) -> str: ...
    def save(self, path: Union[str, PathLike[str]]) -> str: ...

def player(clips: Union[bvh.Clip, Sequence[bvh.Clip]], *, titles: Optional[Sequence[str]] = None,
           layout: Literal["side", "overlay"] = "side", up: Literal["x", "y", "z", "X", "Y", "Z"] = "y",
           width: int = 480, height: int = 360, encoding: Literal["int16", "float32"] = "int16",
           end_sites: bool = True, autoplay: bool = False, loop: bool = True, follow: bool = False) -> Player: ...
def save_packed(clip: bvh.Clip, path: Union[str, PathLike[str]], packed: Optional[_Records] = None,
                bits: Literal[10, 20] = 10) -> Union[str, PathLike[str]]: ...
def compress(clip: bvh.Clip, error: Optional[SupportsFloat] = None, shell: Optional[SupportsFloat] = None) -> CompressedClip: ...
def decompress(c: CompressedClip) -> bvh.Clip: ...
def load_compressed(path: Union[str, PathLike[str]]) -> CompressedClip: ...
