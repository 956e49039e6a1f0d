"""Writes 01_01_blender.bvh and 01_01_blender.glb: the first 120 frames of 01_01.bvh (cut by
jointmath.bvh), imported into Blender 3.4 (Debian's package, headless) with its BVH add-on at
scale 1 with native rotation orders, then exported again by Blender's BVH add-on and by its glTF
2.0 add-on (GLB, skin and animation).

Blender's BVH export writes every bone that is not connected to its parent with 6 channels whose
position values are its whole local translation (the "channel" convention), and in Blender's
axes (Z up): a point (x, y, z) of 01_01.bvh is (x, -z, y) there. Its glTF export is Y up, as
01_01.bvh: the joints' world positions are the clip's, each bone with a rest rotation of its own
and translation, rotation and scale channels.

Run `python tests/data/make_blender_files.py` from the repository root with jointmath
importable; it needs `blender` on the PATH and, for the glTF add-on, NumPy in Blender's Python
(Debian: apt-get install blender python3-numpy)."""
import dataclasses
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from jointmath import bvh

FRAMES = 120
HERE = Path(__file__).parent

BLENDER_SCRIPT = r'''
import builtins, sys
import bpy
_open = builtins.open
def _open_without_U(file, mode="r", *args, **kwargs):  # Blender 3.4's importer opens with "rU", gone in Python 3.11
    return _open(file, mode.replace("U", ""), *args, **kwargs)
builtins.open = _open_without_U
source, target, frames = sys.argv[sys.argv.index("--") + 1:]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_anim.bvh(filepath=source, global_scale=1.0, frame_start=1, use_fps_scale=False,
                        update_scene_fps=True, update_scene_duration=True, rotate_mode="NATIVE")
bpy.ops.export_anim.bvh(filepath=target, frame_start=1, frame_end=int(frames), global_scale=1.0,
                        rotate_mode="NATIVE", root_transform_only=False)
bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, int(frames)
bpy.ops.export_scene.gltf(filepath=target[:-len(".bvh")] + ".glb", export_format="GLB", export_animations=True,
                          export_skins=True)
'''

if __name__ == "__main__":
    clip = bvh.load(HERE / "01_01.bvh")
    with tempfile.TemporaryDirectory() as folder:
        cut = os.path.join(folder, "01_01_first120.bvh")
        bvh.save(dataclasses.replace(clip, joints=clip.joints[:FRAMES].copy()), cut)
        script = os.path.join(folder, "export.py")
        Path(script).write_text(BLENDER_SCRIPT)
        # Blender's Python finds its packages (NumPy) from the system's PATH, not a virtualenv's or pyenv's
        path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if "pyenv" not in p and "venv" not in p)
        subprocess.run(["blender", "-b", "--factory-startup", "--python", script, "--", cut,
                        str(HERE / "01_01_blender.bvh"), str(FRAMES)], check=True, stdout=sys.stderr,
                       env=dict(os.environ, PATH=path))
