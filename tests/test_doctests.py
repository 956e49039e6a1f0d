"""The Examples of every public docstring run, on every ISA path, and print what they show.

The docstrings of jointmath.__all__ and of its public modules (jointmath.bvh ...: the module, its
public names and their methods) are collected with doctest.DocTestFinder; each runs under the `isa` fixture, once per
path. Floats in the examples are printed rounded (np.round), so every path prints the same.
"""
import doctest
import inspect
import os
import re
from pathlib import Path

import numpy as np
import pytest

import jointmath


def public_objects():
    """(qualified name, object) of every public name of jointmath and of its public modules."""
    found = []
    for name in jointmath.__all__:
        if name == "reference":  # the float64 oracle of the tests
            continue
        obj = getattr(jointmath, name)
        found.append((f"jointmath.{name}", obj))
        if inspect.ismodule(obj):  # jointmath.bvh ...: the module and its public names
            found += [(f"jointmath.{name}.{n}", getattr(obj, n)) for n in obj.__all__]
    return found


def collect():
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests, seen = [], set()
    for name, obj in public_objects():
        if not (inspect.ismodule(obj) or inspect.isroutine(obj) or inspect.isclass(obj)):
            continue  # the record dtypes: documented in docs/api/records.rst, which the docs build checks
        module = inspect.getmodule(obj) or jointmath
        for test in finder.find(obj, name, module=module if inspect.ismodule(obj) else False,
                                globs={}):
            if test.examples and test.name not in seen:
                seen.add(test.name)
                tests.append(test)
    return sorted(tests, key=lambda t: t.name)


TESTS = collect()


def returns_a_value(function):
    """True for a C function (each returns a value) and a Python one with a `return <value>`."""
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return True
    return re.search(r"^\s+return \S", source, re.M) is not None


def test_every_public_function_has_examples():
    """numpydoc form: Parameters and Raises (when it takes arguments), Returns (when it returns a value)
    and Examples with >>> lines."""
    lacking = []
    for name, obj in public_objects():
        if not inspect.isroutine(obj):
            continue
        doc = inspect.getdoc(obj) or ""
        takes_arguments = bool(inspect.signature(obj).parameters)
        sections = ["Examples"] + (["Parameters", "Raises"] if takes_arguments else [])
        if returns_a_value(obj):  # numpydoc: no Returns section for a function that returns None
            sections.append("Returns")
        missing = [s for s in sections if not re.search(rf"^{s}\n-{{{len(s)}}}$", doc, re.M)]
        if missing or ">>> " not in doc:
            lacking.append(f"{name}: {', '.join(missing) or 'no >>> line'}")
    assert not lacking, "docstrings not in numpydoc form:\n" + "\n".join(lacking)


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_docstring_examples(isa, test, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that saves a file writes it here
    # an example that starts `python -m jointmath` runs the jointmath under test (an in-place
    # build too, which the new folder would hide), on the path under test
    package_root = str(Path(jointmath.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    monkeypatch.setenv("JOINTMATH_ISA", isa)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    with np.printoptions(legacy=False):
        result = runner.run(test, out=report.append, clear_globs=True)
    assert result.failed == 0, f"on the {isa} path:\n" + "".join(report)
