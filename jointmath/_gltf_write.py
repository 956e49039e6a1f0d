"""Writing glTF 2.0: a Clip as a node hierarchy, a skin and one animation, in plain JSON and
struct code (no dependency), as .gltf (JSON with its buffer embedded as a data: URI) or .glb
(binary: a JSON chunk and a BIN chunk)."""
import base64
import dataclasses
import json
import os
import struct

import numpy as np

from . import _core
from ._bvh_clip import Clip
from ._files import write_atomic

__all__ = ["ROTATION_FORMATS", "save"]

#: The rotation encodings save() writes: float32, or signed 16-bit normalized (glTF's SHORT with
#: normalized=true, c = round(f * 32767), read back as max(c / 32767, -1)).
ROTATION_FORMATS = ("float", "normalized16")

_FLOAT, _SHORT = 5126, 5122


def save(clip, path, rotations="float"):
    """Write a Clip as glTF 2.0: a skeleton, its skin and one animation.

    The skeleton is a node per joint (named as the joint, its rest translation the OFFSET, no
    rest rotation), children under their parents, the roots in the scene; each End Site is a
    leaf node under its joint ("<joint> End Site"), outside the skin. The skin lists the joint
    nodes with inverse bind matrices from the rest pose (every rotation the identity, every
    translation its OFFSET). The animation, named after the clip, has a translation and a
    rotation channel per joint, LINEAR samplers whose times are frame * frame_time (strictly
    increasing, min and max set); a channel whose value is the same in every frame is written
    once, as a single key at time 0. Rotations are unit quaternions (x, y, z, w), each frame in
    the hemisphere of the frame before (readers that interpolate component-wise take the short
    way). The BVH details glTF has no place for (each joint's channels, the frame time and the
    position convention) go into ``extras``, which other readers ignore and load() uses.

    Parameters
    ----------
    clip : jointmath.bvh.Clip
        The clip to write (every field is checked again).
    path : str or os.PathLike
        Ending in ``.glb``: one binary file. Ending in ``.gltf``: one JSON file with the binary
        data embedded as a base64 ``data:`` URI (self-contained, a third larger than .glb).
        Written atomically, as bvh.save writes.
    rotations : {"float", "normalized16"}, optional
        "float" (default): float32 quaternions. "normalized16": signed 16-bit normalized
        components, c = round(f * 32767) of the float32 unit quaternion f (exactly, ties to
        even, by a C kernel that writes the same codes on every path), half the size; each
        rotation is then within 2 asin(1/32767) = 6.1e-5 rad of the clip's (every component
        off by at most half a step, ``|q - q'| <= 1/32767`` for the four together), plus
        float32 rounding.

    Raises
    ------
    TypeError
        For a clip that is not a Clip, a path that is not a str or os.PathLike, or rotations
        that is not a str.
    ValueError
        For a path with another suffix, an unknown `rotations`, a clip field Clip() would
        refuse, a clip of no frames, or a zero or non-finite rotation or a non-finite
        translation (naming the frame and joint).
    OSError
        When the file cannot be written.

    See Also
    --------
    load, jointmath.bvh.save

    Examples
    --------
    >>> import os, tempfile
    >>> from jointmath import bvh, data, gltf
    >>> clip = bvh.load(data.sample_clip_path())
    >>> folder = tempfile.mkdtemp()
    >>> gltf.save(clip, os.path.join(folder, "walk.glb"))
    >>> again = gltf.load(os.path.join(folder, "walk.glb"))
    >>> again.n_frames, again.names == clip.names, again.frame_time == clip.frame_time
    (381, True, True)
    """
    if not isinstance(clip, Clip):
        raise TypeError(f"clip must be a jointmath.bvh.Clip, got {type(clip).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike ending in .gltf or .glb, got {type(path).__name__}")
    if not isinstance(rotations, str):
        raise TypeError(f"rotations must be a str, 'float' or 'normalized16', got {type(rotations).__name__}")
    if rotations not in ROTATION_FORMATS:
        raise ValueError(f"rotations must be 'float' or 'normalized16', got {rotations!r}")
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in (".gltf", ".glb"):
        raise ValueError(f"path must end in .gltf or .glb (the format is chosen by the suffix), got {os.fspath(path)!r}")
    clip = dataclasses.replace(clip)  # every field checked again by Clip itself
    if clip.n_frames == 0:
        raise ValueError("clip has no frames: a glTF animation needs at least one key")
    document, binary = _document(clip, rotations)
    if suffix == ".glb":
        content = _glb(document, binary)
    else:
        document["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(binary).decode("ascii")
        content = json.dumps(document, separators=(",", ":"), allow_nan=False).encode("utf-8")
    write_atomic(os.fspath(path), lambda f: f.write(content))


class _Buffer:
    """The one binary buffer: bufferViews appended at 4-byte aligned offsets, an accessor each."""

    def __init__(self):
        self.parts, self.size = [], 0
        self.views, self.accessors = [], []

    def accessor(self, array, kind, component, normalized=False, bounds=False):
        data = np.ascontiguousarray(array).tobytes()
        self.views.append({"buffer": 0, "byteOffset": self.size, "byteLength": len(data)})
        padding = -len(data) % 4
        self.parts.append(data + b"\x00" * padding)
        self.size += len(data) + padding
        accessor = {"bufferView": len(self.views) - 1, "componentType": component, "count": int(len(array)),
                    "type": kind}
        if normalized:
            accessor["normalized"] = True
        if bounds:
            values = np.asarray(array, np.float64).reshape(len(array), -1)
            accessor["min"], accessor["max"] = values.min(axis=0).tolist(), values.max(axis=0).tolist()
        self.accessors.append(accessor)
        return len(self.accessors) - 1

    def bytes(self):
        return b"".join(self.parts)


def _hemisphere_continuous(q):
    """(F, J, 4) unit float64 quaternions, each frame's sign that of the frame before's side."""
    q = q.copy()
    if len(q) > 1:
        dots = np.einsum("fjk,fjk->fj", q[1:], q[:-1])
        flips = np.cumsum(dots < 0, axis=0) % 2
        q[1:][flips == 1] *= -1
    return q


def _document(clip, rotations):
    """(glTF JSON as a dict without the buffer's uri, the binary buffer) of a checked clip."""
    joints = clip.joints
    q = joints["q"].astype(np.float64)
    t = joints["t"][..., :3].astype(np.float64)
    norms = np.sqrt(np.einsum("fjk,fjk->fj", q, q))
    bad = ~(np.isfinite(norms) & (norms > 0)) | ~np.isfinite(t).all(axis=-1)
    if bad.any():
        f, j = np.unravel_index(np.argmax(bad), bad.shape)
        raise ValueError(f"clip.joints hold a zero or non-finite rotation or a non-finite translation in frame {f}, "
                         f"joint {j} ({clip.names[j]!r}): glTF cannot hold it")
    # unit in float64, then float32: within 6e-8 of unit, what both rotation formats start from
    q = _hemisphere_continuous(q / norms[..., None])
    buffer = _Buffer()
    nodes = [{"name": name, "extras": {"bvh_channels": list(ch)}} for name, ch in zip(clip.names, clip.channels)]
    for j, offset in enumerate(clip.offsets):
        if offset.any():
            nodes[j]["translation"] = [float(v) for v in offset.astype(np.float32)]
    roots = []
    for j, p in enumerate(clip.parents.tolist()):
        (nodes[p].setdefault("children", []) if p >= 0 else roots).append(j)
    for k, (j, offset) in enumerate(zip(clip.end_sites.tolist(), clip.end_offsets)):
        nodes[j].setdefault("children", []).append(len(nodes))
        nodes.append({"name": clip.end_effectors[k], "translation": [float(v) for v in offset.astype(np.float32)]})
    # inverse bind matrices: the rest pose's world transform is a translation by the rest position
    rest = clip.rest_positions()[:clip.n_joints].astype(np.float32)
    inverse_bind = np.tile(np.eye(4, dtype=np.float32), (clip.n_joints, 1, 1))
    inverse_bind[:, 3, :3] = -rest  # column-major: the translation is the 4th column, stored last
    skin = {"joints": list(range(clip.n_joints)),
            "inverseBindMatrices": buffer.accessor(inverse_bind.reshape(-1, 16), "MAT4", _FLOAT)}
    if len(roots) == 1:
        skin["skeleton"] = roots[0]
    times = (np.arange(clip.n_frames) * clip.frame_time).astype(np.float32)
    if clip.n_frames > 1 and not (np.diff(times) > 0).all():
        raise ValueError(f"clip has {clip.n_frames} frames of {clip.frame_time!r} s: their times are not strictly "
                         f"increasing in float32, as glTF stores them")
    all_times = single_time = None
    samplers, channels = [], []
    for j in range(clip.n_joints):
        for path, values in (("translation", t[:, j].astype(np.float32)), ("rotation", q[:, j].astype(np.float32))):
            constant = bool((values == values[0]).all())
            if constant:
                if single_time is None:
                    single_time = buffer.accessor(times[:1], "SCALAR", _FLOAT, bounds=True)
                values, time_accessor = values[:1], single_time
            else:
                if all_times is None:
                    all_times = buffer.accessor(times, "SCALAR", _FLOAT, bounds=True)
                time_accessor = all_times
            if path == "rotation":
                if rotations == "normalized16":  # c = round(f * 32767), exactly, in C on every path
                    output = buffer.accessor(_core._pack_snorm16(values), "VEC4", _SHORT, normalized=True)
                else:
                    output = buffer.accessor(values, "VEC4", _FLOAT)
            else:
                output = buffer.accessor(values, "VEC3", _FLOAT)
            samplers.append({"input": time_accessor, "output": output, "interpolation": "LINEAR"})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": j, "path": path}})
    binary = buffer.bytes()
    from . import __version__
    document = {
        "asset": {"version": "2.0", "generator": f"jointmath {__version__}"},
        "scene": 0,
        "scenes": [{"name": clip.name, "nodes": roots}],
        "nodes": nodes,
        "skins": [skin],
        "animations": [{"name": clip.name, "samplers": samplers, "channels": channels,
                        "extras": {"frame_time": clip.frame_time, "position_channels": clip.position_channels}}],
        "accessors": buffer.accessors,
        "bufferViews": buffer.views,
        "buffers": [{"byteLength": len(binary)}],
    }
    return document, binary


def _glb(document, binary):
    """The GLB container: a 12-byte header, the JSON chunk padded with spaces to 4 bytes, the BIN
    chunk padded with zeros."""
    text = json.dumps(document, separators=(",", ":"), allow_nan=False).encode("utf-8")
    text += b" " * (-len(text) % 4)
    binary += b"\x00" * (-len(binary) % 4)
    chunks = struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(binary), 0x004E4942) + binary
    return struct.pack("<III", 0x46546C67, 2, 12 + len(chunks)) + chunks
