"""Every test runs once per ISA path this CPU can run (the autouse `isa` fixture)."""
import numpy as np
import pytest

import jointmath
from jointmath import _core


@pytest.fixture(autouse=True, params=jointmath.available_isas())
def isa(request):
    """Switches the C core to one path for the test, and back afterwards."""
    before = jointmath.isa()
    _core._set_isa(request.param)
    yield request.param
    _core._set_isa(before)


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
