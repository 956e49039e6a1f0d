"""Every kernel test runs once per ISA path this CPU can run."""
import pytest


@pytest.fixture(autouse=True)
def every_isa(isa):
    """The test runs on each path in turn (the `isa` fixture of tests/conftest.py)."""
    return isa
