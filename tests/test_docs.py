"""The documentation site builds with warnings as errors: a broken reference, a docstring that is
not valid reStructuredText, a public name missing from the API reference or a failing cell of
the executed guide fails the suite.

The build runs on a copy of docs/ (and the files it includes), so the checkout is not written,
against the jointmath under test (an in-place build too), as `python -m sphinx -W --keep-going -b
html docs docs/_build/html` does from the checkout's root.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import jointmath

ROOT = Path(__file__).resolve().parents[1]  # the checkout or the unpacked sdist
INCLUDED = ["CHANGELOG.md", "benchmarks/README.md"]  # files outside docs/ that pages include


def test_docs_build_with_warnings_as_errors(tmp_path):
    shutil.copytree(ROOT / "docs", tmp_path / "docs",
                    ignore=shutil.ignore_patterns("_build", "generated", "jupyter_execute"))
    for name in INCLUDED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    package_root = str(Path(jointmath.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=package_root, JOINTMATH_ISA=jointmath.isa(), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           str(tmp_path / "docs"), str(tmp_path / "html")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"the docs build failed:\n{done.stdout[-5000:]}\n{done.stderr[-5000:]}"
    assert (tmp_path / "html" / "api" / "generated" / "jointmath.slerp_joints.html").is_file()


PAGES = sorted((ROOT / "docs").rglob("*.md"))
BLOCKS = [(f"{page.relative_to(ROOT / 'docs')}:{n + 1}", block) for page in PAGES
          for n, block in enumerate(re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M))]


@pytest.mark.parametrize("block", [b for _, b in BLOCKS], ids=[name for name, _ in BLOCKS])
def test_docs_python_blocks_run(block, tmp_path):
    """Every ```python block of the docs' pages runs as written, on its own, in an empty folder."""
    package_root = str(Path(jointmath.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=package_root, JOINTMATH_ISA=jointmath.isa(), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"docs python block failed:\n{block}\n{done.stderr}"
