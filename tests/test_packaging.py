"""The package as it ships: the sdist holds what its tests need, the compiled extension carries no
debug information, and the metadata states the licence. (.ci/run builds the wheel from the sdist,
installs it in a fresh virtual environment and runs the sdist's tests there.)"""
import struct
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import jointmath
from jointmath import _core

ROOT = Path(__file__).resolve().parent.parent  # the checkout or the unpacked sdist


def _files_under(folder):
    return sorted(str(p.relative_to(ROOT)).replace("\\", "/") for p in (ROOT / folder).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def test_sdist_holds_the_tests_their_data_and_the_licence(tmp_path):
    """Every file of tests/ (conftest.py, adversarial.py, tests/data ...), the C sources, the type
    stubs, the example notebook (tests run it) and LICENSE are in the sdist; the metadata names the licence by SPDX expression."""
    pytest.importorskip("build")
    # --no-isolation: the test environment's setuptools (the test extra pins >= 77) builds it, so
    # the test needs no network (it runs in offline build environments too)
    done = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (archive,) = tmp_path.glob("jointmath-*.tar.gz")
    with tarfile.open(archive) as tar:
        prefix = f"jointmath-{jointmath.__version__}/"
        names = {m.name[len(prefix):] for m in tar.getmembers() if m.isfile()}
        metadata = tar.extractfile(prefix + "PKG-INFO").read().decode()
    needed = _files_under("tests") + _files_under("csrc") + _files_under("examples") + [
        "LICENSE", "README.md", "pyproject.toml", "setup.py", "MANIFEST.in", "jointmath/py.typed",
        "jointmath/__init__.pyi", "jointmath/_core.pyi", "jointmath/bvh.pyi", "jointmath/reference.pyi",
        "jointmath/data/sample_01_01.bvh", "jointmath/_player.html"]
    needed += [str(p.relative_to(ROOT)) for p in (ROOT / "jointmath").glob("*.[ch]")]
    assert {"tests/conftest.py", "tests/adversarial.py", "tests/data/01_01.bvh"} <= set(needed)
    assert sorted(set(needed) - names) == []
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    assert f"Version: {jointmath.__version__}" in metadata


def _elf_sections(path):
    """Section names of an ELF64 little-endian file (the section header table and its string table)."""
    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not an ELF64 little-endian file"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        name, offset, size = struct.unpack_from("<I20xQQ", data, shoff + i * shentsize)
        return name, offset, size

    _, strings_at, _ = header(shstrndx)
    names = []
    for i in range(shnum):
        name = header(i)[0]
        names.append(data[strings_at + name:data.index(b"\0", strings_at + name)].decode())
    return names


def _under_address_sanitizer():
    """True in the README's sanitizer recipe (libasan preloaded): that build keeps its symbols on purpose."""
    try:
        with open("/proc/self/maps") as maps:
            return any("libasan" in line for line in maps)
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the ELF section table (Linux builds)")
@pytest.mark.skipif(_under_address_sanitizer(), reason="the sanitizer build keeps its debug information for its reports")
def test_extension_ships_without_debug_information():
    """setup.py builds with -g0 and links with -s unless asked for a debug build: no .debug_*
    sections and no full symbol table (.symtab), only the dynamic symbols an extension needs."""
    sections = _elf_sections(_core.__file__)
    assert ".dynsym" in sections and ".text" in sections
    assert [s for s in sections if s.startswith(".debug") or s == ".symtab"] == []


def test_import_without_the_built_extension_says_what_to_do(tmp_path):
    """`import jointmath` from a source tree without the built extension raises an ImportError
    that says how to build or install it, chained to the ModuleNotFoundError it replaces."""
    import shutil

    source = Path(jointmath.__file__).resolve().parent
    shutil.copytree(source, tmp_path / "jointmath", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    code = ("try:\n    import jointmath\nexcept ImportError as exc:\n"
            "    print(type(exc).__name__, type(exc.__cause__).__name__, exc.__cause__.name)\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    first, message = done.stdout.split("\n", 1)
    assert first == "ImportError ModuleNotFoundError jointmath._core"
    assert "not built" in message and "pip install ." in message and "setup.py build_ext --inplace" in message
    assert str(tmp_path / "jointmath") in message
