"""glTF 2.0 files: a Clip saved as a skinned skeleton with one animation, and a skinned,
animated glTF or GLB file loaded back into a Clip.

Plain JSON and struct code: no dependency. pygltflib and trimesh (the ``test`` extra) are what
the tests read our files with, to check that other readers take them. The modules behind it, one
concern each: _gltf_write (save) and _gltf_read (load).
"""
from ._gltf_read import load
from ._gltf_write import ROTATION_FORMATS, save

__all__ = ["load", "save"]
