"""jointmath: batch joint math for skeletal animation and motion capture on NumPy arrays.

Quaternions are (x, y, z, w). Record arrays use JOINT_QUAT (q, t) and JOINT_MAT (3x4 matrix).
The C core picks the best SIMD path for this CPU at import; JOINTMATH_ISA=scalar|sse|avx2|avx512
(x86-64) or scalar|neon (arm64) forces one.
"""
try:
    from ._core import available_isas, isa, joints_to_mats, mats_to_joints
except ModuleNotFoundError as exc:  # a source checkout without the built extension
    if exc.name != __name__ + "._core":
        raise
    raise ImportError(
        f"jointmath's C extension (jointmath._core) is not built: {__path__[0]} holds jointmath's sources only. "
        f"Install jointmath (`pip install .` in the checkout) and import it from another folder, or build the "
        f"extension in place (`python setup.py build_ext --inplace`)."
    ) from exc
from . import _memory  # noqa: F401  (gives the C core this machine's memory size)
from ._records import JOINT_MAT, JOINT_QUAT, make_joints, translations
from ._core import make_continuous, matrix_to_quat, quat_to_matrix
from ._core import pack_quats, unpack_quats
from ._records import PACKED_JOINT, PACKED_JOINT64
from ._core import pack_joints, unpack_joints
from ._extract import extract_rotation
from ._euler import euler_to_quat, quat_to_euler
from ._core import compose_mats
from ._core import forward_kinematics, resample_joints
from . import bvh, data
from . import gltf
from ._core import joint_index, lerp_joints, slerp_joints
from ._core import nlerp, slerp
from ._packed import load_packed
from ._player import Player, player
# rotation algebra (jointmath/_algebra.c)
from ._core import quat_angle, quat_angle_between, quat_conjugate, quat_inverse, quat_multiply
from ._core import quat_to_6d, quat_to_rotvec, rotate_vectors, rotvec_to_quat, sixd_to_quat, swing_twist
from ._core import align_vectors, quat_mean, random_quats
from ._packed import save_packed
from ._codec import CompressedClip, compress, decompress, load_compressed

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
__version__ = "0.1.0"


def __getattr__(name):
    """jointmath.reference, the float64 oracle of the tests, is imported on first use: the product
    never computes through it, so programs and the command start without it."""
    if name == "reference":
        import importlib

        return importlib.import_module(".reference", __name__)
    raise AttributeError(f"module 'jointmath' has no attribute {name!r}")
