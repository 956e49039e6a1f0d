"""Fixtures shared by the whole suite.

Layout: tests/kernels/ holds the kernel tests, which run once per ISA path this CPU can run (the
autouse fixture in tests/kernels/conftest.py). The tests at this level (the command, BVH files
and clips, packaging, typing, the notebook, dispatch) run once, on the path the process starts
on; the few of them that must run on every path ask for the `isa` fixture by name. The helpers
(adversarial.py, extract64_oracle.py, longdouble_oracle.py) and the clips in data/ serve both.
"""
import numpy as np
import pytest

import jointmath
from jointmath import _core


@pytest.fixture(params=jointmath.available_isas())
def isa(request):
    """Switches the C core to one path for the test, and back afterwards."""
    before = jointmath.isa()
    _core._set_isa(request.param)
    yield request.param
    _core._set_isa(before)


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
