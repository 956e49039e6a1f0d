"""extract_rotation's update counts on every path this CPU runs, compared matrix by matrix: the
measured agreement (docs/design/extraction.md#counts-across-paths) holds on a random batch of the
search's distribution and on the hardest matrices tools/extract_iteration_search.py found."""
import importlib.util
import pathlib

import numpy as np
import pytest

import jointmath as jm
from jointmath import _core

from kernels.test_extract_iterations import HARDEST_FLOAT32, HARDEST_FLOAT64


def counts_on_every_path(a):
    before = jm.isa()
    try:
        counts = []
        for isa in jm.available_isas():
            _core._set_isa(isa)
            counts.append(jm.extract_rotation(a, return_iterations=True)[1])
    finally:
        _core._set_isa(before)
    return np.array(counts)


def random_matrices(n, dtype):
    path = pathlib.Path(__file__).parents[1] / "tools" / "extract_iteration_search.py"
    spec = importlib.util.spec_from_file_location("extract_iteration_search", path)
    search = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(search)
    return search.random_matrices(np.random.default_rng(5151), n, 1e4, np.dtype(dtype))


@pytest.mark.parametrize("dtype, most_apart", [(np.float32, 0.005), (np.float64, 0.0005)])
def test_counts_agree_within_one_update_on_almost_every_matrix(dtype, most_apart):
    counts = counts_on_every_path(random_matrices(20000, dtype))
    spread = counts.max(0) - counts.min(0)
    assert np.mean(spread > 1) <= most_apart, np.bincount(spread)


def test_the_hardest_matrices_that_are_no_near_reflection_agree_within_a_few_updates():
    for a, within in ((HARDEST_FLOAT32, 12), (HARDEST_FLOAT64, 3)):
        a64 = a.astype(np.float64)
        sigma = np.linalg.svd(a64, compute_uv=False)
        near_reflection = (np.linalg.det(a64) < 0) & (sigma[:, 0] - sigma[:, 2] < 1e-4 * np.abs(a64).max(axis=(1, 2)))
        counts = counts_on_every_path(a)[:, ~near_reflection]
        assert (counts.max(0) - counts.min(0) <= within).all(), counts
