"""ISA dispatch: the paths built and available, the path chosen at import (JOINTMATH_ISA or the
best the CPU runs), switching paths at run time."""
import os
import platform

import pytest

import jointmath as jm
from jointmath import _core

from adversarial import run_python


# the paths built on each CPU architecture, from the baseline up (csrc/isas.h, which setup.py reads)
X86_PATHS, ARM64_PATHS = ["scalar", "sse", "avx2", "avx512"], ["scalar", "neon"]
BUILT_PATHS = {"x86_64": X86_PATHS, "AMD64": X86_PATHS, "aarch64": ARM64_PATHS, "arm64": ARM64_PATHS}.get(
    platform.machine(), ["scalar"])


def test_available_paths():
    paths = jm.available_isas()
    assert paths[0] == "scalar"
    assert paths == [p for p in BUILT_PATHS if p in paths]  # a subset, in order
    assert jm.isa() in paths
    if BUILT_PATHS[-1] == "neon":  # no runtime detection on arm64: NEON is baseline
        assert paths == BUILT_PATHS


def test_fixture_switches_the_running_path(isa):
    assert jm.isa() == isa


@pytest.mark.parametrize("name", BUILT_PATHS[:2])
def test_forcing_a_path_at_import(name):
    if name not in jm.available_isas():
        pytest.skip(f"this CPU cannot run the {name} path")
    proc = run_python("-c", "import jointmath; print(jointmath.isa())", env={**os.environ, "JOINTMATH_ISA": name})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == name


def test_unknown_forced_path_fails_at_import_with_a_clear_message():
    name = "avx2" if "neon" in BUILT_PATHS else "neon"  # a path of another architecture
    proc = run_python("-c", "import jointmath", env={**os.environ, "JOINTMATH_ISA": name})
    assert proc.returncode != 0
    built = ", ".join(BUILT_PATHS)
    assert f"JOINTMATH_ISA='{name}' is not a jointmath ISA path; expected one of {built}" in proc.stderr


def test_default_is_the_best_available_path():
    env = {k: v for k, v in os.environ.items() if k != "JOINTMATH_ISA"}
    proc = run_python("-c", "import jointmath; print(jointmath.isa())", env=env)
    assert proc.stdout.strip() == jm.available_isas()[-1]


def test_set_isa_rejects_bad_names():
    with pytest.raises(ValueError, match="isa='avx1024' is not a jointmath ISA path"):
        _core._set_isa("avx1024")
    with pytest.raises(TypeError, match="isa must be a str"):
        _core._set_isa(3)
