"""Partial-body blending kernels of several builds side by side, called from Python on NumPy
arrays (x86-64 or arm64, gcc):

    python benchmarks/partial_body_numpy.py JOINTS ROUNDS NAME=TREE [NAME=TREE ...]

TREE is a checkout holding csrc/ (this one, or one made by `git worktree add DIR COMMIT`, or a
copy of csrc/ with a change to try); NAME labels it. Each tree's csrc/interp.c is compiled for
every path this CPU runs with the flags of this checkout's setup.py into a shared object, and its
kernels are called through ctypes on the joint lists as the public call gets them: NumPy arrays of
JOINT_QUAT (made by make_joints, in the huge pages NumPy asks for), indexes as intp arrays. Per
path, every round times each build's calls (every second joint, a random half, the first half and
the full call; in place and with a separate out) each right after the first build's full call of
the same kind, in thread CPU time, and prints the medians of the ratios. Environment:
PATHS=avx2,avx512 times only those paths; IN_PLACE_ONLY=1 only the calls in place; GAP_KIB=K puts
the list blended in place K KiB after the end of `blend`, both in one NumPy buffer (the ratios in
place move with where the two lists lie: benchmarks/partial_body_placement.py). Example, this
checkout against a changed copy of its csrc/:

    mkdir ../try && cp -r csrc ../try/   # then edit ../try/csrc/interp.c
    PYTHONPATH=. python benchmarks/partial_body_numpy.py 1048576 21 base=. try=../try
"""

import ctypes
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

import numpy as np

import jointmath as jm
from partial_body_placement import joint_list, placed

T = 0.3


def setup_module():
    """This checkout's setup.py as a module (its setup() runs only as __main__): the flags it
    compiles the kernels with."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "setup.py")
    spec = importlib.util.spec_from_file_location("jointmath_setup", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(tree, paths, work):
    """A shared object of tree's csrc/interp.c for the paths, its internal calls bound to itself,
    compiled as setup.py's release build compiles it (with Python's -fwrapv, -DNDEBUG and -fPIC)."""
    setup = setup_module()
    python_flags = [f for f in sysconfig.get_config_var("CFLAGS").split() if f in ("-fwrapv", "-fno-wrapv")]
    common = [*python_flags, "-DNDEBUG", "-fPIC", *setup.COMMON_FLAGS, *setup.RELEASE_CFLAGS]
    objects = []
    for isa in paths:
        value, flags, _ = setup.ISA_TARGETS[isa]
        obj = os.path.join(work, f"{isa}.o")
        subprocess.run(["gcc", *common, f"-I{tree}/csrc", f"-DJM_ISA={value}", *flags, "-c", f"{tree}/csrc/interp.c",
                        "-o", obj], check=True)
        objects.append(obj)
    shared = os.path.join(work, "interp.so")
    subprocess.run(["gcc", "-shared", "-Wl,-Bsymbolic", *objects, "-lm", "-o", shared], check=True)
    return ctypes.CDLL(shared)


def kernels(lib, isa):
    p, s, z = ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_size_t
    full, indexed = getattr(lib, f"jm_slerp_joints_{isa}"), getattr(lib, f"jm_slerp_joints_indexed_{isa}")
    full.argtypes = [p, s, p, s, p, s, z, ctypes.c_float]
    indexed.argtypes = [p, s, p, s, p, s, z, z, p, z, ctypes.c_float]
    return full, indexed


def main():
    if len(sys.argv) < 4 or platform.machine() not in ("x86_64", "AMD64", "aarch64", "arm64"):
        sys.exit(__doc__)
    n, rounds = int(sys.argv[1]), int(sys.argv[2])
    trees = dict(spec.split("=", 1) for spec in sys.argv[3:])
    paths = os.environ.get("PATHS", ",".join(jm.available_isas())).split(",")
    modes = (True,) if os.environ.get("IN_PLACE_ONLY") == "1" else (False, True)
    rng = np.random.default_rng(0)
    joints, blend, out = joint_list(rng, n), joint_list(rng, n), np.empty(n, jm.JOINT_QUAT)
    if "GAP_KIB" in os.environ:  # blend and the list blended in place in one buffer, gap KiB apart
        in_place, blend, _ = placed(os.environ["GAP_KIB"], joints, blend)
    else:
        in_place = joints.copy()
    indexes = {"every 2nd": np.arange(0, n, 2), "random half": np.sort(rng.choice(n, n // 2, replace=False)),
               "first half": np.arange(n // 2)}
    offsets = ", ".join(str(x.ctypes.data % 64) for x in (joints, blend, out, in_place))
    print(f"{n:,} joints, byte offsets from 64-byte lines (joints, blend, out, in place) {offsets}; "
          f"medians of {rounds} rounds, each call over the first build's full call of its kind")
    with tempfile.TemporaryDirectory() as work:
        libs = {}
        for name, tree in trees.items():
            os.mkdir(os.path.join(work, name))
            libs[name] = build(tree, paths, os.path.join(work, name))
        b = blend.ctypes.data
        for isa in paths:
            calls = {}  # (build, label, in place) -> call
            for name, lib in libs.items():
                full, indexed = kernels(lib, isa)
                for in_place_call in modes:
                    a, o = (in_place, in_place) if in_place_call else (joints, out)
                    a, o = a.ctypes.data, o.ctypes.data
                    for label, index in indexes.items():
                        calls[name, label, in_place_call] = (
                            lambda f=indexed, a=a, o=o, i=index: f(a, 32, b, 32, o, 32, 1, n, i.ctypes.data, len(i), T))
                    calls[name, "full", in_place_call] = lambda f=full, a=a, o=o: f(a, 32, b, 32, o, 32, n, T)
            first = next(iter(libs))
            ratios = {key: [] for key in calls}
            for _ in range(rounds):
                for key, call in calls.items():
                    base = calls[first, "full", key[2]]
                    start = time.thread_time()
                    base()
                    base_time = time.thread_time() - start
                    start = time.thread_time()
                    call()
                    ratios[key].append((time.thread_time() - start) / base_time)
            print(isa)
            for name in libs:
                for in_place_call in modes:
                    row = "  ".join(f"{label} {statistics.median(ratios[name, label, in_place_call]):.3f}"
                                    for label in (*indexes, "full"))
                    print(f"  {name:<10} {'in place' if in_place_call else 'out=    '}  {row}")


if __name__ == "__main__":
    main()
