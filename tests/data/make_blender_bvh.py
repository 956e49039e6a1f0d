"""Writes 01_01_blender.bvh: the first 120 frames of 01_01.bvh (cut by jointmath.bvh), imported
into Blender 3.4 (Debian's package, headless) and exported again by Blender's own BVH add-on,
both at scale 1 with native rotation orders. Blender writes every bone that is not connected to
its parent with 6 channels whose position values are its whole local translation (the "channel"
convention), and in its own axes (Z up): a point (x, y, z) of 01_01.bvh is (x, -z, y) in the
export. Run `python tests/data/make_blender_bvh.py` (needs `blender` on the PATH) from the
repository root with jointmath importable."""
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
'''

if __name__ == "__main__":
    clip = bvh.load(HERE / "01_01.bvh")
    with tempfile.TemporaryDirectory() as folder:
        cut = os.path.join(folder, "01_01_first120.bvh")
        bvh.save(dataclasses.replace(clip, joints=clip.joints[:FRAMES].copy()), cut)
        script = os.path.join(folder, "export.py")
        Path(script).write_text(BLENDER_SCRIPT)
        subprocess.run(["blender", "-b", "--factory-startup", "--python", script, "--", cut,
                        str(HERE / "01_01_blender.bvh"), str(FRAMES)], check=True, stdout=sys.stderr)
