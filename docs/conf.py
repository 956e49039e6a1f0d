"""Sphinx configuration: python -m sphinx -W --keep-going -b html docs docs/_build/html"""
import os
import sys
from pathlib import Path

# The jointmath this build documents: the checkout's own when it is built in place, else the
# installed one (pip install ".[docs]"). The executed notebooks' kernels import the same one.
ROOT = Path(__file__).resolve().parents[1]
if any(p.suffix in (".so", ".pyd") for p in (ROOT / "jointmath").glob("_core.*")):
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
else:  # `python -m sphinx` from the root puts the unbuilt source folder first: the installed one instead
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]
os.environ.setdefault("MPLBACKEND", "Agg")

import jointmath  # noqa: E402

project = "jointmath"
copyright = "the jointmath authors"
author = "the jointmath authors"
release = version = jointmath.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

autosummary_generate = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
nb_execution_mode = "force"            # the guide's notebooks run at every build
nb_execution_raise_on_error = True     # a failing example fails the build
nb_execution_timeout = 120

html_theme = "pydata_sphinx_theme"
html_title = f"jointmath {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path = []


def check_api_covers_public_names(app):
    """A warning (an error under -W) for a public name the API reference does not list."""
    import re

    from sphinx.util import logging

    import inspect

    listed = set()
    for page in (Path(app.srcdir) / "api").glob("*.rst"):
        listed |= set(re.findall(r"[\w.]+", page.read_text(encoding="utf-8")))
    public = [f"jointmath.{n}" for n in jointmath.__all__]
    for name in jointmath.__all__:  # the public modules' own names (the float64 oracle apart)
        module = getattr(jointmath, name)
        if inspect.ismodule(module) and name != "reference":
            public += [f"jointmath.{name}.{n}" for n in module.__all__]
    for name in public:
        if name.split(".")[-1] not in listed and name not in listed:
            logging.getLogger(__name__).warning(f"public name {name} is not in the API reference (docs/api/)")


def setup(app):
    app.connect("builder-inited", check_api_covers_public_names)
