"""examples/mocap_batch.ipynb runs from top to bottom (nbclient; pip install ".[notebook]")."""
import os
from pathlib import Path

import pytest

import jointmath

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_example_notebook_runs(monkeypatch, tmp_path):
    notebook = nbformat.read(EXAMPLES / "mocap_batch.ipynb", as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), \
        "the notebook is committed without outputs"
    code = "".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "tests" not in code and "01_01" not in code, "its clips come from jointmath.data, not by name or path"
    # the kernel imports the jointmath under test (an in-place build too), on the path it runs
    package_root = str(Path(jointmath.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    monkeypatch.setenv("JOINTMATH_ISA", jointmath.isa())
    monkeypatch.delenv("JOINTMATH_CLIPS", raising=False)
    # run from a folder of its own: its clips come from the package, not from files beside it
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError naming the cell that failed
    outputs = "".join(o.get("text", "") for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs)
    assert "max rotation change through the file" in outputs
    html = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs
            if "text/html" in o.get("data", {})]
    assert html and "<table>" in html[0]["data"]["text/html"]
    # the players: the clip, then the clip before and after compression side by side
    players = [o["data"]["text/html"] for o in html if o["data"]["text/html"].startswith("<iframe srcdoc=")]
    assert len(players) == 2 and "jm-view" in players[0]
    assert "original: " in players[1] and "compressed: " in players[1]
    assert any("image/png" in o.get("data", {}) for cell in notebook.cells if cell.cell_type == "code"
               for o in cell.outputs), "no figure"
