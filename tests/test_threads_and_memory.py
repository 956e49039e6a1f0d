"""The C boundary under threads and memory limits: the GIL released around large calls, an index
changed by another thread, a thread with the smallest stack, results and working memory too large
to allocate under RLIMIT_AS. The boundary code is the same on every path: these tests run once,
most of them in a fresh interpreter (a crash fails the test there)."""
import os
import re

import numpy as np
import pytest

import jointmath as jm
from jointmath import _core

from adversarial import run_python, run_under_memory_limit


def test_an_index_check_too_large_to_allocate_says_how_large():
    """An index in another order is checked with a table of one byte per position up to its
    largest; a table too large to allocate (joint_index's n_joints may be any size) raises the
    ValueError saying how large (it was a bare MemoryError). Under RLIMIT_AS in a subprocess."""
    # 2^20 entries: their copy (8 MB) fits, the table of positions up to 2^26 (64 MB) does not
    printed = run_under_memory_limit("index = np.broadcast_to(np.intp(1 << 26), (1 << 20,))  # not increasing\n",
                                     "try:\n    jm.joint_index(index, (1 << 26) + 1)\nexcept ValueError as e:\n"
                                     "    print(e)\n", 40)
    assert re.fullmatch(r"an array of shape \(67108865,\) \(1-byte elements\) needs [0-9.e+]+ bytes, more than can be "
                        r"allocated\s*", printed), printed


INDEX_RACE = """
import sys, threading
import numpy as np
import jointmath as jm
n = int(sys.argv[1])
joints = np.zeros(n, jm.JOINT_QUAT)
joints["q"][:, 3] = 1
blend = joints.copy()
blend["q"][:, 0], blend["t"][:, 0] = 1, 2
good = np.arange(0, n, 2)
far = good + (1 << 40)
index, expected, stop = good.copy(), jm.slerp_joints(joints, blend, 0.5, index=good), False


def writer():
    while not stop:  # NumPy copies more than 500 entries without the GIL
        np.copyto(index, far)
        np.copyto(index, good)


thread = threading.Thread(target=writer)
thread.start()
sys.setswitchinterval(1e-6)
blended = refused = 0
try:
    for _ in range(int(sys.argv[2])):
        try:
            result = jm.slerp_joints(joints, blend, 0.5, index=index)
        except ValueError:
            refused += 1
        else:
            assert result.tobytes() == expected.tobytes()
            blended += 1
finally:
    stop = True
    thread.join()
print(blended, refused)
"""


@pytest.mark.parametrize("n_joints, calls", [(1024, 100_000), (8192, 5_000)])
def test_index_changed_by_another_thread(n_joints, calls):
    """Another thread overwrites the index during the calls (NumPy's copies run without the GIL),
    between every second joint and positions far out of range: each call blends the joints it
    checked or raises ValueError, and never reads a position it did not check. Before the calls
    copied a short index (below 4,096 records) before checking it, the kernel could read a
    position changed after the check: 100,000 calls of 1,024 joints crashed (SIGSEGV) in each of
    four runs. In a subprocess, so that a crash fails the test."""
    done = run_python("-c", INDEX_RACE, str(n_joints), str(calls))
    assert done.returncode == 0, done.stderr
    blended, refused = map(int, done.stdout.split())
    assert blended + refused == calls


SMALL_THREAD_STACK = """
import sys
import threading
import numpy as np
import jointmath as jm
for size in (int(sys.argv[1]) << k for k in range(4)):  # the smallest this platform allows (arm64: 128 KB)
    try:
        threading.stack_size(size)
        break
    except ValueError:
        pass
n = 2048
joints = np.zeros((2, n), jm.JOINT_QUAT)
joints["q"][..., 3] = 1
blend = joints.copy()
blend["q"][..., 0], blend["t"][..., 0] = 1, 2
results = []


def work():
    # the largest index copied to the stack, one beyond it, and one of the frames run as one flat
    # index (fewer than 256 entries: its chunks on the stack as well)
    for m in (1024, n // 2 + 1, 255):
        index = np.arange(m)
        results.append(jm.slerp_joints(joints, blend, 0.5, index=index)[:, index].tobytes())
        results.append(jm.joint_index(index, n).tobytes())
        results.append(jm.slerp_joints(joints[:, :m], blend[:, :m], 0.5).tobytes())
        results.append(index.tobytes())


thread = threading.Thread(target=work)
thread.start()
thread.join()
assert len(results) == 12, "wrong results"
for k in range(0, 12, 4):
    assert results[k] == results[k + 2] and results[k + 1] == results[k + 3], "wrong results"
print("ok")
"""


def test_index_in_a_thread_with_the_smallest_stack():
    """The calls copy a plain index to the stack up to 1,024 entries (8 KB), and a short index over
    several frames runs in chunks on the stack (5 KB): in a thread with the smallest stack Python
    allows (32 KB on x86-64 Linux) they run and blend as in the main thread.
    A copy of up to 4,096 entries (32 KB) on the stack crashed there (SIGSEGV; still with 40 KB).
    In a subprocess, so that a crash fails the test. Under
    AddressSanitizer (the sanitizer recipe preloads it), whose stack frames are many times larger
    (the indexed blends' frame grows from under 9 KB to about 290 KB with its redzones), the
    thread gets 16 times the stack."""
    stack = 32768 * (16 if "libasan" in os.environ.get("LD_PRELOAD", "") else 1)
    done = run_python("-c", SMALL_THREAD_STACK, str(stack))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok"]


PER_JOINT_ORDERS_SETUP = """
angles = np.random.default_rng(0).uniform(-180, 180, (100_000, 31, 3)).astype(np.float32)  # 37 MB
orders = ["ZYX", "XYZ"] * 15 + ["YZX"]
expected = jm.euler_to_quat(angles, orders)  # 50 MB; a group of 15 joints: 18 MB of angles, 24 MB of quaternions
out = np.empty_like(expected)
"""


PER_JOINT_ORDERS_CALLS = """
try:
    jm.euler_to_quat(angles, orders)
except ValueError as e:
    print(e)
assert jm.euler_to_quat(angles, orders, out=out) is out and np.array_equal(out, expected), "wrong result"
"""


def test_per_joint_orders_allocate_as_the_package_does():
    """Per-joint Euler orders under a memory limit (RLIMIT_AS, 55 MB above what the process
    holds): without out=, the new result (50 MB) and a group's copy do not fit and raise the
    package's ValueError saying the shape and bytes; with out= (given) the call fits, since it
    writes each order's joints into out through temporaries of one group's size. Before, the
    groups were copied by NumPy indexing (MemoryError) and out= got a whole temporary result
    first.
    In a subprocess (the limit is the process's)."""
    printed = run_under_memory_limit(PER_JOINT_ORDERS_SETUP, PER_JOINT_ORDERS_CALLS, 55)
    assert re.fullmatch(r"an array of shape \(100000, \d+, [34]\) \(4-byte elements\) needs [0-9.e+]+ bytes, more than "
                        r"can be allocated\s*", printed), printed


def _large_calls():
    """One large call per C boundary (name, zero-argument function)."""
    n = 1 << 20
    joints = np.zeros(n, jm.JOINT_QUAT)
    joints["q"][:, 3] = 1
    mats = np.zeros(n, jm.JOINT_MAT)
    mats["m"][:, 0, 0] = mats["m"][:, 1, 1] = mats["m"][:, 2, 2] = 1
    quats = np.ascontiguousarray(joints["q"])
    eye = np.broadcast_to(np.eye(3, dtype=np.float32), (n, 3, 3)).copy()
    codes = jm.pack_quats(quats)
    return [
        ("joints_to_mats", lambda: jm.joints_to_mats(joints)),
        ("quat_to_matrix", lambda: jm.quat_to_matrix(quats)),
        ("compose_mats", lambda: jm.compose_mats(mats, mats)),
        ("forward_kinematics", lambda: jm.forward_kinematics(joints.reshape(-1, 2), np.array([-1, 0]))),
        ("pack_quats", lambda: jm.pack_quats(quats)),
        ("unpack_quats", lambda: jm.unpack_quats(codes)),
        ("extract_rotation", lambda: jm.extract_rotation(eye)),
        ("slerp_joints", lambda: jm.slerp_joints(joints, joints, 0.5)),
        ("slerp", lambda: jm.slerp(quats, quats, 0.5)),
        ("euler_to_quat", lambda: jm.euler_to_quat(np.zeros((n, 3), np.float32), "XYZ")),
        ("quat_to_euler", lambda: jm.quat_to_euler(quats, "XYZ")),
        ("make_joints", lambda: jm.make_joints(quats)),
        ("pack_joints", lambda: jm.pack_joints(joints)),
        ("unpack_joints", lambda: jm.unpack_joints(jm.pack_joints(joints[:1]).repeat(n))),
        ("resample_joints", lambda: jm.resample_joints(joints.reshape(-1, 2), 1 / 30, 30)),
    ]


def _small_calls():
    """The same boundaries as _large_calls on one record each (name, zero-argument function)."""
    joints = jm.make_joints([[0, 0, 0, 1]])
    quats = np.array([[0, 0, 0, 1]], np.float32)
    mats = jm.joints_to_mats(joints)
    return [
        ("joints_to_mats", lambda: jm.joints_to_mats(joints)),
        ("quat_to_matrix", lambda: jm.quat_to_matrix(quats)),
        ("compose_mats", lambda: jm.compose_mats(mats, mats)),
        ("forward_kinematics", lambda: jm.forward_kinematics(joints.reshape(1, 1), np.array([-1]))),
        ("pack_quats", lambda: jm.pack_quats(quats)),
        ("unpack_quats", lambda: jm.unpack_quats(jm.pack_quats(quats))),
        ("extract_rotation", lambda: jm.extract_rotation(np.eye(3, dtype=np.float32))),
        ("slerp_joints", lambda: jm.slerp_joints(joints, joints, 0.5)),
        ("slerp", lambda: jm.slerp(quats, quats, 0.5)),
        ("euler_to_quat", lambda: jm.euler_to_quat(np.zeros((1, 3), np.float32), "XYZ")),
        ("quat_to_euler", lambda: jm.quat_to_euler(quats, "XYZ")),
        ("make_joints", lambda: jm.make_joints(quats)),
        ("pack_joints", lambda: jm.pack_joints(joints)),
        ("unpack_joints", lambda: jm.unpack_joints(jm.pack_joints(joints))),
        ("resample_joints", lambda: jm.resample_joints(jm.make_joints([[[0, 0, 0, 1]]] * 2), 1 / 30, 30)),
    ]


@pytest.mark.parametrize("index", range(15))
def test_gil_is_released_around_large_kernels(index):
    # Every boundary releases the GIL through one helper that counts the releases
    # (_core._gil_releases): a large call must release it, a one-record call must not. Counting
    # is deterministic, unlike watching whether another thread got a core during the call. The
    # boundary code is the same on every path: the best one is enough.
    (name, large), (small_name, small) = _large_calls()[index], _small_calls()[index]
    assert name == small_name
    before = _core._gil_releases()
    large()
    assert _core._gil_releases() > before, f"{name} kept the GIL on 2^20 records"
    before = _core._gil_releases()
    small()
    assert _core._gil_releases() == before, f"{name} released the GIL for one record"
