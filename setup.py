"""Build of jointmath's C core.

Each kernel family in csrc/ is compiled once per ISA path of the target architecture with that
path's target flags and the matching JM_ISA macro; the objects are linked into one extension next
to csrc/dispatch.c (built with baseline flags only), which picks a path at import time. x86-64:
scalar, sse, avx2, avx512; arm64: scalar, neon (NEON is baseline there); any other CPU: scalar.
No -march=native anywhere, so the module runs on any CPU of its architecture. GCC and clang
(Linux, macOS) or MSVC (Windows).
"""
import glob
import os
import platform
import re
import sys
import sysconfig

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNEL_FAMILIES = ["csrc/convert.c", "csrc/pack.c", "csrc/extract.c", "csrc/compose.c", "csrc/slerp.c", "csrc/partial_body.c",
                   "csrc/joint_index.c", "csrc/euler.c", "csrc/continuity.c"]
KERNEL_FAMILIES += ["csrc/codec.c"]

# the target's CPU from the platform tag the wheel is built for (honours cross builds such as
# cibuildwheel's macOS x86_64 build on an arm64 runner): linux-x86_64, macosx-11.0-arm64, win-amd64
TARGET = sysconfig.get_platform().rsplit("-", 1)[-1].lower()
if TARGET == "universal2":
    # python.org's macOS Pythons build fat binaries, but the x86 and arm64 kernels need different
    # flags per file: build this Mac's architecture only
    TARGET = platform.machine().lower()
    os.environ["ARCHFLAGS"] = "-arch " + TARGET
X86 = TARGET in ("x86_64", "amd64", "i686", "i386", "win32")
ARM64 = TARGET in ("aarch64", "arm64")

HERE = os.path.dirname(os.path.abspath(__file__))
# the headers every kernel family includes (a change rebuilds them all)
KERNEL_HEADERS = sorted(glob.glob("csrc/*.h") + glob.glob("csrc/simd/*.h"))

# Target flags of each ISA path, by name: GCC/clang, MSVC. The scalar path is honest scalar code
# (no auto-vectorisation): the baseline the SIMD paths are measured against. MSVC compiles SSE4.1
# intrinsics without a flag.
ISA_FLAGS = {
    "scalar": (["-fno-tree-vectorize"], []),
    "sse": (["-msse4.1"], []),
    "avx2": (["-mavx2", "-mfma"], ["/arch:AVX2"]),
    "avx512": (["-mavx2", "-mfma", "-mavx512f", "-mavx512dq", "-mavx512bw", "-mavx512vl"], ["/arch:AVX512"]),
    "neon": ([], []),  # baseline on arm64
}


def isa_targets(arch):
    """name -> (JM_ISA value, GCC/clang flags, MSVC flags) of the paths csrc/isas.h lists for arch
    ("X86", "ARM64" or "OTHER"), in its order (the dispatch table's)."""
    with open(os.path.join(HERE, "csrc", "isas.h")) as f:
        text = f.read()
    values = dict(re.findall(r"^#define JM_ISA_([A-Z0-9]+) (\d+)$", text, re.M))
    names = re.findall(r"X\((\w+)\)", re.search(r"^#define JM_ISAS_%s\(X\) (.*)$" % arch, text, re.M).group(1))
    return {name: (values[name.upper()], *ISA_FLAGS[name]) for name in names}


ISA_TARGETS = isa_targets("X86" if X86 else "ARM64" if ARM64 else "OTHER")

# -ffp-contract=off: a multiply and an add stay two roundings unless a kernel asks for an FMA, so
# the paths round alike where bit-identical results are promised (packing); MSVC does not contract
# under its default /fp:precise.
# -fno-math-errno: sqrtf / lrintf become single instructions (errno is never read).
COMMON_FLAGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-fno-strict-aliasing", "-ffp-contract=off", "-fno-math-errno"]
MSVC_FLAGS = ["/O2", "/std:c11", "/W3"]
EXTRA_FLAGS = os.environ.get("JOINTMATH_CFLAGS", "").split()  # e.g. sanitizers, see README
# A release build ships the binary without debug information: -g0 after Python's own -g, and the
# linker strips the symbol tables (-s; macOS's ld: -S, debug symbols only). `build_ext --debug`
# or any JOINTMATH_CFLAGS (sanitizer runs: their reports need the symbols) keeps them.
RELEASE_CFLAGS = ["-g0"]
RELEASE_LDFLAGS = ["-Wl,-S"] if sys.platform == "darwin" else ["-s"]


class BuildPerIsa(build_ext):
    """Compiles KERNEL_FAMILIES once per ISA and links the objects into the extension."""

    def build_extension(self, ext):
        msvc = self.compiler.compiler_type == "msvc"
        release = not msvc and not self.debug and not EXTRA_FLAGS
        common = (MSVC_FLAGS if msvc else COMMON_FLAGS) + (RELEASE_CFLAGS if release else []) + EXTRA_FLAGS
        objects = []
        for isa, (value, flags, msvc_flags) in ISA_TARGETS.items():
            objects += self.compiler.compile(
                KERNEL_FAMILIES,
                output_dir=os.path.join(self.build_temp, isa),
                macros=[("JM_ISA", value)],
                include_dirs=["csrc"],
                extra_postargs=common + (msvc_flags if msvc else flags),
                depends=KERNEL_HEADERS,
            )
        ext.extra_objects = objects
        ext.extra_compile_args = common
        ext.extra_link_args = (RELEASE_LDFLAGS if release else []) + EXTRA_FLAGS
        if not msvc:
            ext.libraries = ["m"]  # sin, cos, frexp, ldexp ... of the kernels; part of the C runtime on Windows
        super().build_extension(ext)


core = Extension(
    "jointmath._core",
    sources=["jointmath/_core.c", "jointmath/_convert.c", "jointmath/_pack.c", "jointmath/_extract.c", "jointmath/_compose.c",
             "jointmath/_interp.c", "jointmath/_euler.c", "jointmath/_motion.c", "jointmath/_arrays.c", "csrc/dispatch.c"]
            + ["jointmath/_codec.c", "jointmath/_codec_write.c"],
    include_dirs=["csrc", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_23_API_VERSION")],
    # the per-ISA kernel objects are built in build_extension: list their sources here too, so
    # that editing a kernel rebuilds the extension
    depends=KERNEL_FAMILIES + KERNEL_HEADERS + ["jointmath/_core.h"],
)

# only when run (pip's build backend and `python setup.py ...` run it as __main__): the benchmarks that
# compile csrc/ beside the extension import this file for COMMON_FLAGS and ISA_TARGETS
if __name__ == "__main__":
    setup(ext_modules=[core], cmdclass={"build_ext": BuildPerIsa})
