"""Every ```python block of README.md runs as written, on its own, in a fresh interpreter (its
own imports; data from the sample clip inside the package), in an empty temporary directory."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import jointmath

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)


def test_readme_is_short_and_has_its_quick_start():
    """The README is for users: at most 150 lines, the rest lives in the docs site (docs/)."""
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150
    assert BLOCKS and "jm.slerp_joints" in BLOCKS[0] and "jm.compress" in BLOCKS[0]


@pytest.mark.parametrize("number", range(len(BLOCKS)), ids=lambda n: f"block{n + 1}")
def test_readme_block_runs(number, tmp_path):
    # the interpreter imports the jointmath under test (an in-place build too), on the path it runs
    package_root = str(Path(jointmath.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=package_root, JOINTMATH_ISA=jointmath.isa(), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-c", BLOCKS[number]], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"README python block {number + 1} failed:\n{BLOCKS[number]}\n{done.stderr}"


def test_readme_commands_run_on_every_python_the_package_accepts():
    """The README's first commands use `python -P` (Python 3.11 on): the package must not accept
    an older Python (pip would install it on 3.9, then the command fail with "Unknown option: -P"),
    nor build wheels for one."""
    import tomllib

    project = tomllib.loads((README.parent / "pyproject.toml").read_text(encoding="utf-8"))
    commands = re.search(r"^```bash\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M).group(1)
    assert "python -P -m jointmath" in commands and "python -P -m pytest" in commands
    oldest = re.fullmatch(r">=\s*3\.(\d+)", project["project"]["requires-python"])
    assert oldest and int(oldest.group(1)) >= 11, project["project"]["requires-python"]
    wheels = [int(m) for m in re.findall(r"cp3(\d+)-", project["tool"]["cibuildwheel"]["build"])]
    assert wheels and min(wheels) >= int(oldest.group(1)), project["tool"]["cibuildwheel"]["build"]
