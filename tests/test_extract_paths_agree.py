"""extract_rotation computes the same bits on every path: its kernels use only correctly rounded
operations (multiply-adds rounded twice, square roots and divisions, no fused multiply-add, no
reciprocal estimates) in one order (docs/design/extraction.md#counts-across-paths), so the
quaternions and the update counts of every path this CPU runs are identical, matrix by matrix.
Checked on a fixed-seed batch of 100,000 matrices of tools/extract_iteration_search.py's
distribution per dtype, the hardest matrices that search found, near-reflections, mirrored
rotations, rank-deficient, scaled and non-finite matrices, warm starts, both methods and the
JOINT_MAT layout; and, against digests of their results, that the hardest matrices and the near-reflections give the same
bits on any CPU (an arm64 build's scalar and neon paths included)."""
import hashlib
import importlib.util
import pathlib

import numpy as np
import pytest

import jointmath as jm
from jointmath import _core

from kernels.test_extract_iterations import (HARDEST_FLOAT32, HARDEST_FLOAT64, NEAR_REFLECTIONS_FLOAT32,
                                            NEAR_REFLECTIONS_FLOAT64)

several_paths = pytest.mark.skipif(len(jm.available_isas()) < 2,
                                   reason="this CPU runs one path only: nothing to compare")


def on_every_path(*args, **kwargs):
    """{path: (quaternions, counts)} of extract_rotation(*args, **kwargs) on every path."""
    before = jm.isa()
    try:
        results = {}
        for isa in jm.available_isas():
            _core._set_isa(isa)
            results[isa] = jm.extract_rotation(*args, return_iterations=True, **kwargs)
        return results
    finally:
        _core._set_isa(before)


def assert_identical(results):
    """The same quaternion bits and counts on every path; NaN where one path gives NaN (the sign
    and payload of a NaN follow the operand order an instruction happens to take)."""
    (first, (q_first, it_first)), *others = results.items()
    bits = np.uint32 if q_first.dtype == np.float32 else np.uint64
    for isa, (q, it) in others:
        apart = np.abs(it.astype(np.int64) - it_first)
        assert (it == it_first).all(), (
            f"{isa} against {first}: {np.count_nonzero(apart)} of {it.size} counts differ, up to {apart.max()}")
        nan = np.isnan(q)
        assert (nan == np.isnan(q_first)).all(), f"{isa} against {first}: NaN in different places"
        differ = ((q.view(bits) != q_first.view(bits)) & ~nan).any(axis=-1)
        assert not differ.any(), f"{isa} against {first}: {np.count_nonzero(differ)} of {differ.size} results differ"


def search_matrices(n, dtype, seed):
    path = pathlib.Path(__file__).parents[1] / "tools" / "extract_iteration_search.py"
    spec = importlib.util.spec_from_file_location("extract_iteration_search", path)
    search = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(search)
    return search, search.random_matrices(np.random.default_rng(seed), n, 1e4, np.dtype(dtype))


def special_matrices(dtype, rng, n=2000):
    """Near-reflections (det A < 0, all three singular values within 1e-7 ... 1e-2 of each other),
    mirrored rotations, near-ties (sigma2 - sigma3 small), rank one and two, zero, huge, tiny and
    non-finite matrices."""
    search, _ = search_matrices(1, dtype, 0)
    u, v = search.random_rotations(rng, n), search.random_rotations(rng, n)
    gaps = 10.0 ** rng.uniform(-7, -2, (n, 2))
    near_reflection = np.stack([np.ones(n), 1 - gaps[:, 0], -(1 - gaps[:, 1])], axis=1)
    near_tie = np.stack([np.ones(n), rng.uniform(0.1, 1, n), np.zeros(n)], axis=1)
    near_tie[:, 2] = -(near_tie[:, 1] - gaps[:, 0])
    rank = np.stack([np.ones(n), np.where(rng.uniform(size=n) < 0.5, 0.0, 10.0 ** rng.uniform(-8, 0, n)),
                     np.zeros(n)], axis=1)
    mirrored = np.tile([1.0, 1.0, -1.0], (n, 1))
    sets = [(u * s[:, None, :]) @ v for s in (near_reflection, near_tie, rank, mirrored)]
    finfo = np.finfo(dtype)
    edge = np.stack([np.zeros((3, 3)), np.eye(3) * float(finfo.max) / 4, np.eye(3) * float(finfo.tiny),
                     np.full((3, 3), np.nan), np.where(np.eye(3) > 0, np.inf, 0.0), -np.eye(3)])
    a = np.concatenate(sets + [sets[0] * np.ldexp(1.0, rng.integers(-60, 60, n))[:, None, None], edge])
    with np.errstate(over="ignore"):
        return a.astype(dtype)


@several_paths
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_random_batch_is_bit_identical_on_every_path(dtype):
    _, a = search_matrices(100_000, dtype, 5151)
    assert_identical(on_every_path(a))


@several_paths
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("method", ["newton", "muller"])
def test_hard_and_special_matrices_are_bit_identical_on_every_path(dtype, method):
    rng = np.random.default_rng(51)
    hardest = (HARDEST_FLOAT32 if dtype == np.float32 else HARDEST_FLOAT64).astype(dtype)
    a = np.concatenate([hardest, HARDEST_FLOAT64.astype(dtype), special_matrices(dtype, rng)])
    assert_identical(on_every_path(a, method=method))
    # warm starts: unit, off-unit, zero and NaN q0
    q0 = rng.standard_normal((len(a), 4))
    q0[::3] /= np.linalg.norm(q0[::3], axis=1, keepdims=True)
    q0[1::7], q0[2::11] = 0, np.nan
    assert_identical(on_every_path(a, q0.astype(dtype), method=method, max_iter=50))


@several_paths
def test_joint_mat_records_are_bit_identical_on_every_path():
    _, a = search_matrices(20_000, np.float32, 52)
    mats = np.zeros(len(a), jm.JOINT_MAT)
    mats["m"][:, :, :3] = a
    mats["m"][:, :, 3] = np.random.default_rng(3).standard_normal((len(a), 3))
    results = on_every_path(mats)
    assert_identical(results)
    q, counts = results[jm.available_isas()[0]]
    q_matrices, counts_matrices = jm.extract_rotation(a, return_iterations=True)
    assert (q.view(np.uint32) == q_matrices.view(np.uint32)).all() and (counts == counts_matrices).all()


def hardest_matrices(dtype):
    """The hardest matrices of the search and the near-reflections, both sets in one dtype."""
    sets = (HARDEST_FLOAT32, HARDEST_FLOAT64, NEAR_REFLECTIONS_FLOAT32, NEAR_REFLECTIONS_FLOAT64)
    return np.concatenate([a.astype(dtype) for a in sets])


# sha256 of the quaternions' bytes (little-endian) then the int32 counts' of the hardest matrices,
# cold start, defaults: the same on every path of every CPU. A change of the method changes them:
# recompute with digest() below on any one path and check the counts still meet the maxima of
# tests/kernels/test_extract_iterations.py.
DIGESTS = {
    ("float32", "newton"): "92e9cf81500569b82c6fb50d06f114826a52a9beb69be546664c5efaa8242b7f",
    ("float32", "muller"): "1e3fe87484fae3df279a31997e50f68923744d8a715ee28662d2cb3b4ca2c05f",
    ("float64", "newton"): "04db05bc563cd8c53f48c936b4c7c60098db8d0d16424a8a6f7a9e5ab9e73dd0",
    ("float64", "muller"): "159783b36f24a9be7fc5d49e7b569257e2c520727d857fa23fb58ccb71977794",
}


def digest(a, method):
    q, counts = jm.extract_rotation(a, method=method, return_iterations=True)
    return hashlib.sha256(q.astype(q.dtype.newbyteorder("<")).tobytes()
                          + counts.astype("<i4").tobytes()).hexdigest()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("method", ["newton", "muller"])
def test_the_hardest_matrices_give_the_same_bits_on_any_cpu(dtype, method):
    a = hardest_matrices(dtype)
    before = jm.isa()
    try:
        for isa in jm.available_isas():
            _core._set_isa(isa)
            assert digest(a, method) == DIGESTS[dtype, method], isa
    finally:
        _core._set_isa(before)
