"""Build of jointmath's C core.

Each kernel family in csrc/ is compiled once per ISA with that ISA's target flags and the
matching JM_ISA macro; the objects are linked into one extension next to csrc/dispatch.c (built
with baseline flags only), which picks a path at import time. No -march=native anywhere, so the
module runs on any x86-64 CPU.
"""
import os

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNEL_FAMILIES = ["csrc/convert.c", "csrc/pack.c", "csrc/extract.c", "csrc/compose.c", "csrc/interp.c", "csrc/euler.c"]

# name -> (JM_ISA value, target flags)
ISA_TARGETS = {
    "scalar": ("0", ["-fno-tree-vectorize"]),  # honest scalar code: the baseline the SIMD paths are measured against
    "sse": ("1", ["-msse4.1"]),
    "avx2": ("2", ["-mavx2", "-mfma"]),
    "avx512": ("3", ["-mavx2", "-mfma", "-mavx512f", "-mavx512dq", "-mavx512bw", "-mavx512vl"]),
}

# -ffp-contract=off: a multiply and an add stay two roundings unless a kernel asks for an FMA, so
# the paths round alike where bit-identical results are promised (packing).
# -fno-math-errno: sqrtf / lrintf become single instructions (errno is never read).
COMMON_FLAGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-fno-strict-aliasing", "-ffp-contract=off", "-fno-math-errno"]
EXTRA_FLAGS = os.environ.get("JOINTMATH_CFLAGS", "").split()  # e.g. sanitizers, see README


class BuildPerIsa(build_ext):
    """Compiles KERNEL_FAMILIES once per ISA and links the objects into the extension."""

    def build_extension(self, ext):
        objects = []
        for isa, (value, flags) in ISA_TARGETS.items():
            objects += self.compiler.compile(
                KERNEL_FAMILIES,
                output_dir=os.path.join(self.build_temp, isa),
                macros=[("JM_ISA", value)],
                include_dirs=["csrc"],
                extra_postargs=COMMON_FLAGS + flags + EXTRA_FLAGS,
                depends=["csrc/simd.h", "csrc/jointmath.h", "csrc/quat_math.h"],
            )
        ext.extra_objects = objects
        super().build_extension(ext)


core = Extension(
    "jointmath._core",
    sources=["jointmath/_core.c", "jointmath/_convert.c", "jointmath/_pack.c", "jointmath/_extract.c", "jointmath/_compose.c",
             "jointmath/_interp.c", "jointmath/_euler.c", "csrc/dispatch.c"],
    include_dirs=["csrc", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_23_API_VERSION")],
    extra_compile_args=COMMON_FLAGS + EXTRA_FLAGS,
    extra_link_args=EXTRA_FLAGS,
    libraries=["m"],  # the libm slerp baseline (csrc/interp.c)
    # the per-ISA kernel objects are built in build_extension: list their sources here too, so
    # that editing a kernel rebuilds the extension
    depends=KERNEL_FAMILIES + ["csrc/simd.h", "csrc/jointmath.h", "csrc/quat_math.h", "jointmath/_core.h"],
)

setup(ext_modules=[core], cmdclass={"build_ext": BuildPerIsa})
