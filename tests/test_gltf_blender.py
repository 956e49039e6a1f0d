"""Blender reads the glTF files jointmath writes: Blender 3.4's glTF add-on (headless) imports
them as an armature with one action, whose bones' heads, frame by frame, are the clip's joint
world positions (in Blender's axes, Z up: (x, y, z) -> (x, -z, y)). Needs `blender` with NumPy in
its Python (Debian: apt-get install blender python3-numpy)."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from jointmath import bvh, gltf

DATA = Path(__file__).resolve().parent / "data"

IMPORT_SCRIPT = r'''
import json, sys
import bpy
source, target, fps, frames = sys.argv[sys.argv.index("--") + 1:]
bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps = int(fps)  # the importer turns seconds into frames at the scene's rate
bpy.ops.import_scene.gltf(filepath=source)
(armature,) = [o for o in scene.objects if o.type == "ARMATURE"]
heads = []
for frame in range(int(frames)):
    scene.frame_set(frame)
    heads.append([list(armature.matrix_world @ bone.head) for bone in armature.pose.bones])
json.dump({"names": [bone.name for bone in armature.pose.bones], "heads": heads,
           "actions": len(bpy.data.actions)}, open(target, "w"))
'''


def _blender_env():
    """The environment without pyenv's or a virtualenv's PATH entries: Blender's Python finds its
    packages (NumPy) from the system's."""
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if "pyenv" not in p and "venv" not in p)
    return dict(os.environ, PATH=path)


@pytest.mark.skipif(shutil.which("blender") is None, reason="Blender is not installed (Debian: apt-get install "
                                                            "blender python3-numpy)")
@pytest.mark.parametrize("name, rotations, bound", [("walk.glb", "float", 1e-5), ("walk.gltf", "normalized16", 2e-4)])
def test_blender_imports_our_files_at_the_clips_positions(tmp_path, name, rotations, bound):
    clip = bvh.load(DATA / "01_01.bvh")
    clip.joints = clip.joints[:60].copy()
    gltf.save(clip, tmp_path / name, rotations=rotations)
    script = tmp_path / "import.py"
    script.write_text(IMPORT_SCRIPT)
    done = subprocess.run(["blender", "-b", "--factory-startup", "--python-exit-code", "1", "--python", str(script),
                           "--", str(tmp_path / name), str(tmp_path / "heads.json"), "120", "60"],
                          capture_output=True, text=True, timeout=600, env=_blender_env())
    assert done.returncode == 0 and (tmp_path / "heads.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    found = json.loads((tmp_path / "heads.json").read_text())
    assert found["actions"] == 1 and sorted(found["names"]) == sorted(clip.names)
    heads = np.array(found["heads"])[:, [found["names"].index(n) for n in clip.names]]
    world = clip.positions(end_sites=False).astype(np.float64)
    in_blender_axes = np.stack([world[..., 0], -world[..., 2], world[..., 1]], axis=-1)
    assert np.abs(heads - in_blender_axes).max() <= bound * clip.height()
