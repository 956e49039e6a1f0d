"""The type stubs (jointmath/*.pyi, py.typed): mypy checks a small typed program against them,
stubtest checks them against the runtime, and each public module exports what its __all__ lists
and nothing it merely imports."""
import ast
import dataclasses
import importlib
import importlib.resources.abc
import os
import site
import subprocess
import sys
import textwrap
import types
import zipfile
from pathlib import Path

import pytest

import jointmath
from jointmath import bvh

PACKAGE = Path(jointmath.__file__).resolve().parent
README = Path(__file__).resolve().parents[1] / "README.md"
# the README's own line that loads the embedded sample
README_LOAD = next(line.split("  #")[0] for line in README.read_text(encoding="utf-8").splitlines()
                   if line.startswith("clip = bvh.load("))

GOOD = '''
import dataclasses
from fractions import Fraction
from importlib import resources

import numpy as np
import jointmath as jm
from jointmath import *
from jointmath import bvh

q = np.array([[0.0, 0.0, 0.0, 1.0]], np.float32)
joints = jm.make_joints(q, np.zeros((1, 3)))
mats = jm.joints_to_mats(joints)
back = jm.mats_to_joints(mats, out=np.empty_like(joints))
upper = jm.joint_index([0], 1)
half = jm.slerp_joints(joints, joints, 0.5, index=upper)
m = jm.quat_to_matrix(q)
codes = jm.pack_quats(q, bits=20)
unpacked = jm.unpack_quats(jm.pack_quats(q))
rotation, iterations = jm.extract_rotation(m, return_iterations=True)
clip: bvh.Clip = bvh.load("walk.bvh")
height: float = clip.frame_time * clip.n_frames
name: str = jm.isa()
paths: list[str] = jm.available_isas()
version: str = jm.__version__
packed_clip: bvh.Clip = jm.load_packed("walk.npz")
world = clip.world()
points = clip.positions(end_sites=False)
rest = clip.rest_positions()
tall: float = clip.height()
seconds: float = clip.duration
label: str = clip.name
orders: list[str] = clip.orders
motion = clip.motion
again = bvh.Clip(clip.names, clip.parents, clip.offsets, clip.channels, clip.frame_time, clip.joints)
hand = bvh.Clip(names=["root"], parents=[-1], offsets=[[0.0, 0.0, 0.0]],
                channels=[("Zrotation", "Xrotation", "Yrotation")], frame_time=0.01, joints=joints, name="hand")
edited = dataclasses.replace(clip, joints=clip.joints[:1].copy())
same: bool = edited == clip
page: jm.Player = jm.player([clip, edited], titles=["a", "b"], layout="overlay", up="z")
saved: str = page.save("walk.html")
shown: str = clip.player(autoplay=True).html
axes = clip.plot(0, up="y")
# the names of `from jointmath import *`
star = quat_to_matrix(q), make_joints(q), bvh.Clip, reference.slerp(q, q, 0.5)
# any real number, integer or bool as the README says each argument takes it
flag: bool = bool(np.random.default_rng().integers(2))
either = jm.extract_rotation(m, return_iterations=flag, max_iter=np.int64(3), tol=Fraction(1, 10**6))
continuous = jm.make_continuous(q, np.int64(0))
index = jm.joint_index([0], np.int64(2))
quarter = jm.slerp_joints(joints, joints, Fraction(1, 4)), jm.lerp_joints(joints, joints, np.float32(0.25))
codes32 = jm.pack_quats(q, bits=np.int64(10)), jm.pack_joints(joints, bits=np.array(20))
slower = bvh.resample(clip, np.float32(30)), jm.resample_joints(joints, Fraction(1, 120), np.array(30.0))
timed = bvh.Clip(clip.names, clip.parents, clip.offsets, clip.channels, Fraction(1, 120), clip.joints)
up = clip.height(np.int64(1))
# BVH position conventions and glTF
blender: bvh.Clip = bvh.load("walk.bvh", positions="channel")
convention: str = blender.position_channels
said: list[str] = blender.notes
bvh.save(blender, "walk_again.bvh", positions="offset+channel")
jm.gltf.save(clip, "walk.glb", rotations="normalized16")
from_gltf: bvh.Clip = jm.gltf.load("walk.glb", fps=Fraction(30), skin="body", animation=0)
# jointmath.reference, the float64 oracle users may call
angle = jm.reference.angle_between(q, jm.reference.slerp(q, q, 0.5))
polar = jm.reference.extract_rotation(m, max_iter=3)
counted, updates = jm.reference.extract_rotation(m, return_iterations=True)
world64 = jm.reference.forward_kinematics(joints, [-1])
tight = jm.reference.extract_rotation(m, tol=np.float32(1e-6)), jm.reference.extract_rotation(m, tol=Fraction(1, 10**6))
codes64 = jm.reference.pack_quats(q, bits=np.int64(20))
''' + README_LOAD + "\n"

BAD = '''
import numpy as np
import jointmath as jm
from jointmath import bvh

count: int = jm.isa()
clip = bvh.load("walk.bvh")
joints: str = clip.names
jm.pack_quats(np.zeros((1, 4), np.float32), bits=12)
jm.slerp_joints()
jm.unpack_quats([5])
'''


def test_mypy_checks_callers_against_the_stubs(tmp_path):
    pytest.importorskip("mypy")
    (tmp_path / "good.py").write_text(textwrap.dedent(GOOD))
    (tmp_path / "bad.py").write_text(textwrap.dedent(BAD))
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                           sys.executable, "good.py", "bad.py"], cwd=tmp_path, env=_env_for_mypy(), capture_output=True,
                          text=True, timeout=600)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    # no error in good.py nor in any file of jointmath mypy reads (its stubs, or its sources)
    assert all(e.startswith("bad.py:") for e in errors), done.stdout
    # each wrong call in bad.py is caught, by line: str for int, list for str, bits 12, no arguments,
    # a list of ints as codes (the dtype says the code format: refused at run time too)
    assert sorted({int(e.split(":")[1]) for e in errors}) == [6, 8, 9, 10, 11], done.stdout


def test_stubtest_finds_the_stubs_true_to_the_runtime(tmp_path):
    """mypy's stubtest: every public name of every module is in its stub, with the runtime's
    signature, and each stub's __all__ is the runtime's."""
    pytest.importorskip("mypy")
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "jointmath"], cwd=tmp_path, env=_env_for_mypy(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", ["jointmath", "jointmath.bvh", "jointmath.gltf", "jointmath.reference"])
def test_stub_all_is_the_runtime_all(name):
    """A stub's __all__ is what `from module import *` gives a type checker: the runtime's list."""
    module = importlib.import_module(name)
    stub = ast.parse(Path(module.__file__).with_suffix(".pyi").read_text())
    (value,) = [node.value for node in stub.body if isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["__all__"]]
    assert ast.literal_eval(value) == module.__all__


def test_load_reads_a_traversable_that_is_no_path(tmp_path):
    """bvh.load takes the README's resources.files(...) / "file.bvh" (typed as an importlib
    Traversable) and so any Traversable, also one that is not os.PathLike: a zipfile.Path."""
    sample = PACKAGE / "data" / "sample_01_01.bvh"
    with zipfile.ZipFile(tmp_path / "clips.zip", "w") as archive:
        archive.write(sample, "clips/walk.bvh")
    member = zipfile.Path(tmp_path / "clips.zip", "clips/walk.bvh")
    assert not isinstance(member, os.PathLike)
    clip = bvh.load(member)
    assert clip == dataclasses.replace(bvh.load(sample), name="walk")

    class Resource(importlib.resources.abc.Traversable):  # a Traversable whose str() is no path
        name = "run.bvh"

        def read_bytes(self):
            return sample.read_bytes()

        def iterdir(self): return iter(())  # noqa: E704
        def is_dir(self): return False  # noqa: E704
        def is_file(self): return True  # noqa: E704
        def joinpath(self, *parts): raise FileNotFoundError(parts)  # noqa: E704
        def open(self, mode="r", *args, **kwargs): raise NotImplementedError  # noqa: E704
        __truediv__ = joinpath

    assert bvh.load(Resource()).name == "run"  # the file's stem, from .name (it was str(obj)'s)


@pytest.mark.parametrize("name", ["jointmath", "jointmath.bvh", "jointmath.reference", "jointmath.__main__"])
def test_public_modules_export_their_all_and_no_imports(name):
    module = importlib.import_module(name)
    assert sorted(module.__all__) == sorted(set(module.__all__))
    for export in module.__all__:
        value = getattr(module, export)
        assert not isinstance(value, types.ModuleType) or value.__name__.startswith("jointmath."), export
        assert not export.startswith("_")
    namespace = {}
    exec(f"from {name} import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(module.__all__)
    for imported in ("np", "os", "io", "sys", "json", "warnings", "dataclass", "field", "Fraction"):
        assert imported not in module.__all__


def test_stubs_name_what_the_package_has():
    """Every name jointmath.__all__ lists is in __init__.pyi, every function of bvh.__all__ in
    bvh.pyi, and the version is the one the package metadata was built from."""
    stub = (PACKAGE / "__init__.pyi").read_text()
    for name in jointmath.__all__:
        assert f"def {name}(" in stub or f"{name}:" in stub or f"as {name}\n" in stub, name
    bvh_stub = (PACKAGE / "bvh.pyi").read_text()
    for name in jointmath.bvh.__all__:
        assert f"def {name}(" in bvh_stub or f"class {name}" in bvh_stub, name
    # every field, property and method of Clip, and the fields in their order
    clip_stub = bvh_stub.split("class Clip:")[1].split("\ndef ")[0]
    fields = [f.name for f in dataclasses.fields(jointmath.bvh.Clip)]
    assert [line.split(":")[0].strip() for line in clip_stub.splitlines()
            if line.startswith("    ") and not line.startswith("     ") and ":" in line
            and not line.strip().startswith(("def ", "@"))] == fields
    for name in [n for n in dir(jointmath.bvh.Clip) if not n.startswith("_") and n not in fields]:
        assert f"def {name}(" in clip_stub, name
    assert (PACKAGE / "py.typed").exists()
    assert jointmath.__version__.count(".") >= 2


def _env_for_mypy():
    """The environment in which mypy and stubtest find this jointmath, its stubs and its sources."""
    env = dict(os.environ)
    if str(PACKAGE.parent) not in site.getsitepackages() + [site.getusersitepackages()]:
        # a checkout built in place (an installed one is found as it is)
        env["MYPYPATH"] = env["PYTHONPATH"] = str(PACKAGE.parent)
    return env

