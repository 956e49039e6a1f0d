"""Adversarial inputs shared by the tests: sizes around the vector widths, awkward memory
layouts, and the numerically hard quaternions and matrices; and a fresh interpreter to run code
in (run_python), for calls that may crash or must start clean, also under a memory limit
(run_under_memory_limit)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jointmath

# subprocesses start where the jointmath under test lives (an in-place build or site-packages),
# so they import the same package as this process
PACKAGE_PARENT = str(Path(jointmath.__file__).resolve().parents[1])


def run_python(*arguments, env=None):
    """Runs python with arguments in a fresh interpreter, returns the finished process."""
    return subprocess.run([sys.executable, *arguments], capture_output=True, text=True, cwd=PACKAGE_PARENT,
                          env=env if env is not None else os.environ.copy(), timeout=300)

# the memory limit of run_under_memory_limit, in the child after its setup
_MEMORY_LIMIT = """
import re, resource
size = int(re.search(r"VmSize:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) << 10
limit = size + ({headroom} << 20)  # as ulimit -v or a batch scheduler sets it
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    np.empty(100 << 20, np.uint8)  # more than the limit leaves
    print("RLIMIT_AS not enforced")  # an emulator (qemu-user) keeps the guest's memory in its own space
    raise SystemExit
except MemoryError:
    pass
"""


def run_under_memory_limit(setup, calls, headroom_mb):
    """What `calls` print in a fresh interpreter (numpy as np, jointmath as jm) run after `setup`
    under RLIMIT_AS, headroom_mb above what the process then holds; skips the test where the
    limit cannot be set or is not enforced (not Linux, AddressSanitizer's reserved address space,
    qemu-user)."""
    if not sys.platform.startswith("linux") or "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("needs Linux's /proc and RLIMIT_AS (AddressSanitizer reserves terabytes of address space)")
    script = "import numpy as np\nimport jointmath as jm\n" + setup + _MEMORY_LIMIT.format(headroom=headroom_mb) + calls
    done = run_python("-c", script)
    assert done.returncode == 0, done.stderr
    if done.stdout.startswith("RLIMIT_AS not enforced"):
        pytest.skip("RLIMIT_AS is not enforced here (an emulator)")
    return done.stdout


#: counts around every vector width (1, 4, 8, 16 lanes) and a long run with a tail
SIZES = [0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 1000]


def random_unit_quats(rng, n, dtype=np.float32):
    """n random unit quaternions, uniformly distributed over rotations, normalised in float64."""
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return q.astype(dtype)


def hard_quats(rng, dtype=np.float32):
    """Quaternions where conversions are fragile: axes, half turns, near-identity, ties."""
    s = np.sqrt(0.5)
    base = [
        [0, 0, 0, 1], [0, 0, 0, -1], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0],  # identity, 180° turns
        [s, s, 0, 0], [s, 0, s, 0], [0, s, s, 0], [s, 0, 0, s], [0, s, 0, s], [0, 0, s, s],  # ties
        [0.5, 0.5, 0.5, 0.5], [-0.5, 0.5, -0.5, 0.5],
        [1e-4, 0, 0, 1], [0, 1e-4, 1, 0], [1e-7, 1e-7, 1e-7, 1],
    ]
    # 180° rotations about random axes (w = 0: trace = -1)
    axes = rng.standard_normal((32, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    half_turns = np.concatenate([axes, np.zeros((32, 1))], axis=1)
    # near the case boundaries of the largest-divisor method: two components of equal magnitude
    # up to a tiny perturbation
    near = rng.standard_normal((256, 4))
    i = rng.integers(0, 4, 256)
    j = (i + rng.integers(1, 4, 256)) % 4
    near[np.arange(256), j] = np.abs(near[np.arange(256), i]) * (1 + rng.uniform(-1e-6, 1e-6, 256))
    near *= rng.choice([-1, 1], size=near.shape)
    q = np.concatenate([np.array(base, float), half_turns, near])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q.astype(dtype)


def layouts(a):
    """The same values in awkward layouts: sliced (strided), read-only, unaligned, Fortran."""
    out = {"contiguous": a}
    doubled = np.repeat(a, 2, axis=0)
    out["strided"] = doubled[::2]
    out["reversed"] = a[::-1].copy()[::-1]
    ro = a.copy()
    ro.flags.writeable = False
    out["readonly"] = ro
    raw = np.zeros(a.nbytes + 1, np.uint8)
    unaligned = raw[1:].view(a.dtype).reshape(a.shape)
    unaligned[...] = a
    out["unaligned"] = unaligned
    if a.ndim >= 2:
        out["fortran"] = np.asfortranarray(a)
    return out


def assert_threads_agree(compute, n_threads=6, repeats=2):
    """compute() from n_threads threads at once (each `repeats` times) gives exactly what one
    sequential call gives; compute returns an array or a tuple of arrays. Inputs should be large
    enough for the kernels to release the GIL."""
    import threading

    def as_tuple(value):
        return value if isinstance(value, tuple) else (value,)

    expected = as_tuple(compute())
    results, errors = [None] * n_threads, []

    def work(i):
        try:
            for _ in range(repeats):
                results[i] = as_tuple(compute())
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for got in results:
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)


def every_scale_quats64(rng):
    """Quaternions of every binary scale from 2^-1074 to DBL_MAX, exact (small integers times a
    power of two), including ones with subnormal and zero components."""
    ints = rng.integers(-(2 ** 20), 2 ** 20, (64, 4)).astype(np.float64)
    ints[ints[:, 0] == 0, 0] = 1
    out = [ints * 2.0 ** -20 * 2.0 ** e for e in range(-1054, 1004, 37)]
    out.append(np.array([[5e-324, 0, 0, 0], [5e-324, -5e-324, 5e-324, 5e-324], [1e-310, 3e-320, 0, -5e-324],
                         [1.7976931348623157e308, -1.7976931348623157e308, 1e308, 0],
                         [1.7976931348623157e308, 1.7976931348623157e308, 1.7976931348623157e308,
                          1.7976931348623157e308]]))
    return np.concatenate(out)
