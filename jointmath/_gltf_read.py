"""Reading glTF 2.0: a skinned, animated .gltf or .glb into a Clip, in plain JSON and struct code.
Every index, size and offset the file states is checked before it is used: a bad file is a
ValueError naming the file and what is wrong, never an IndexError or a read out of bounds."""
import base64
import binascii
import json
import math
import numbers
import os
import struct

import numpy as np

from . import _core
from ._bvh_clip import Clip
from ._bvh_format import POSITION_CONVENTIONS, _POSITIONS, _channel_problem
from ._records import JOINT_QUAT

__all__ = ["load"]

_COMPONENTS = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_DEFAULT_CHANNELS = ("Zrotation", "Xrotation", "Yrotation")
_WITH_POSITIONS = ("Xposition", "Yposition", "Zposition") + _DEFAULT_CHANNELS
#: The most joint-frames load() samples (an hour at 120 fps of 69 joints): a few GB of work arrays.
_MAX_SAMPLES = 3 * 10 ** 7
#: A joint's scale (its node's, or its animation's) may differ from 1 by this much.
_SCALE_TOLERANCE = 1e-5


def load(path, fps=None, skin=None, animation=None):
    """Read a skinned, animated glTF 2.0 file (.gltf or .glb) into a Clip.

    The skin's joints become the clip's joints (parents before children, depth-first from the
    skin's roots in the skin's order), their rest translations the OFFSETs; a node below a joint
    that is no joint, has no children and no mesh becomes an End Site. Every animation channel
    of a joint is sampled on one time grid, the first key to the last at the file's own rate
    (inferred from the sampler times) or at `fps`: rotations with jointmath.slerp between keys
    (normalised), translations linearly; STEP samplers hold each key, CUBICSPLINE samplers are
    evaluated as glTF defines them (cubic Hermite with the file's tangents, rotations then
    normalised). A grid time within float32 rounding of a key takes that key exactly. Joints
    without a channel keep their node's rest transform. A static transform on nodes above the
    skeleton's root (an armature node) is folded into the root, a uniform scale there into every
    translation.

    Parameters
    ----------
    path : str or os.PathLike
        A .glb file, or a .gltf whose buffers are embedded (``data:`` URIs) or files beside it.
    fps : real number, optional
        Frames per second of the clip. Default: the file's own rate, from the sampler with the
        most keys (its keys' count over their span, snapped to a whole number within 1e-5
        relative), or the frame time recorded by jointmath.gltf.save when the file has one.
    skin : int or str, optional
        The skin to read (its index, or its name): default the first. ``clip.notes`` names the
        one taken when the file holds several.
    animation : int or str, optional
        The animation to read (its index, or its name): default the first. A file without an
        animation gives one frame of the rest pose.

    Returns
    -------
    Clip
        Named after the animation (else the file's stem). Each joint gets the BVH channels that
        jointmath.gltf.save recorded, or Zrotation Xrotation Yrotation, with position channels
        in front wherever its translation moves; ``notes`` says which skin and animation were
        taken when there was a choice, and what was ignored (channels of nodes outside the
        skin, morph weights).

    Raises
    ------
    TypeError
        For a path that is not a str or os.PathLike, an fps that is not a real number, or a
        skin or animation that is neither an int nor a str.
    ValueError
        Naming the file: for a file that is not glTF 2.0 (JSON or GLB), an index, offset or
        size out of range, a buffer that cannot be read, a skin or animation not in the file,
        a joint scale other than 1, keys that do not increase, non-finite values, an unknown
        interpolation, or an fps that is not positive and finite.
    OSError
        When the file (or a buffer file beside it) cannot be read.

    See Also
    --------
    save, jointmath.bvh.load

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from jointmath import bvh, data, gltf
    >>> clip = bvh.load(data.sample_clip_path())
    >>> path = os.path.join(tempfile.mkdtemp(), "walk.gltf")
    >>> gltf.save(clip, path)
    >>> again = gltf.load(path)
    >>> bool(np.allclose(again.positions(), clip.positions(), atol=1e-4))
    True
    >>> gltf.load(path, fps=30).n_frames  # resampled: 3.17 s at 30 fps
    96
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    if fps is not None:
        if isinstance(fps, (bool, np.bool_)) or not isinstance(fps, numbers.Real):
            raise TypeError(f"fps must be a real number of frames per second, got {type(fps).__name__}")
        try:
            rate = float(fps)
        except OverflowError:
            rate = math.inf
        if not (math.isfinite(rate) and rate > 0):
            raise ValueError(f"fps must be positive and finite, got {fps!r}")
        fps = rate
    for name, value in (("skin", skin), ("animation", animation)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, str, np.integer))):
            raise TypeError(f"{name} must be an index (int) or a name (str), got {type(value).__name__}")
    source = os.fspath(path)
    with open(source, "rb") as f:
        data = f.read()
    reader = _Reader(source, data)
    try:
        return reader.clip(fps, skin, animation)
    except (KeyError, IndexError, TypeError, AttributeError, OverflowError, struct.error) as error:
        # a structure the checks above did not foresee: still the file's fault, said as such
        raise ValueError(f"{source}: not a glTF file jointmath can read ({type(error).__name__}: {error})") from None


def _is_index(value):
    return isinstance(value, int) and not isinstance(value, bool)


class _Reader:
    def __init__(self, source, data):
        self.source = source
        self.folder = os.path.dirname(os.path.abspath(source))
        self.binary_chunk = None
        self.document = self._parse(data)
        self.buffers = {}
        self.animation_name = None  # the animation's name and extras, once tracks() read them
        self.animation_extras = {}
        self.rate = 30.0  # frames per second, once grid() chose it

    def error(self, message):
        return ValueError(f"{self.source}: {message}")

    # ------------------------------------------------------------------ container --

    def _parse(self, data):
        if data[:4] == b"glTF":
            if len(data) < 20:
                raise self.error("a GLB file shorter than its header")
            _, version, length = struct.unpack_from("<III", data)
            if version != 2:
                raise self.error(f"GLB version {version}, expected 2")
            if length > len(data) or length < 20:
                raise self.error(f"the GLB header says {length} bytes, the file holds {len(data)}")
            chunk_length, chunk_type = struct.unpack_from("<II", data, 12)
            if chunk_type != 0x4E4F534A or 20 + chunk_length > length:
                raise self.error("the GLB's first chunk is not a whole JSON chunk")
            text = data[20:20 + chunk_length]
            position = 20 + chunk_length + (-chunk_length % 4)
            if position + 8 <= length:
                chunk_length, chunk_type = struct.unpack_from("<II", data, position)
                if chunk_type == 0x004E4942:
                    if position + 8 + chunk_length > length:
                        raise self.error("the GLB's BIN chunk runs past the end of the file")
                    self.binary_chunk = data[position + 8:position + 8 + chunk_length]
        else:
            text = data
        try:
            document = json.loads(text.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            raise self.error(f"not glTF: neither a GLB file nor JSON ({type(error).__name__}: {error})") from None
        if not isinstance(document, dict):
            raise self.error("not glTF: the JSON is not an object")
        version = document.get("asset", {}).get("version") if isinstance(document.get("asset"), dict) else None
        if not isinstance(version, str) or not version.startswith("2."):
            raise self.error(f"not glTF 2.0: asset.version is {version!r}")
        return document

    def array(self, key):
        value = self.document.get(key, [])
        if not isinstance(value, list):
            raise self.error(f"'{key}' is not an array")
        return value

    def item(self, key, index, what):
        items = self.array(key)
        if not _is_index(index) or not 0 <= index < len(items):
            raise self.error(f"{what} refers to {key}[{index!r}], which the file does not have ({len(items)} of them)")
        if not isinstance(items[index], dict):
            raise self.error(f"{key}[{index}] is not an object")
        return items[index]

    def buffer(self, index):
        if not _is_index(index):
            raise self.error(f"a bufferView's buffer {index!r} is not an index")
        if index in self.buffers:
            return self.buffers[index]
        buffer = self.item("buffers", index, "a bufferView")
        uri = buffer.get("uri")
        if uri is None:
            if index != 0 or self.binary_chunk is None:
                raise self.error(f"buffers[{index}] has no uri and is not the GLB's BIN chunk")
            data = self.binary_chunk
        elif not isinstance(uri, str):
            raise self.error(f"buffers[{index}].uri is not a string")
        elif uri.startswith("data:"):
            head, _, payload = uri.partition(",")
            if not head.endswith(";base64"):
                raise self.error(f"buffers[{index}]: a data: URI that is not base64")
            try:
                data = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError) as error:
                raise self.error(f"buffers[{index}]: its base64 data cannot be decoded ({error})") from None
        else:
            from urllib.parse import unquote
            relative = unquote(uri)
            if os.path.isabs(relative) or "://" in uri:
                raise self.error(f"buffers[{index}].uri {uri!r} is not a path relative to the file")
            try:
                with open(os.path.join(self.folder, relative), "rb") as f:
                    data = f.read()
            except OSError as error:
                raise self.error(f"buffers[{index}]: cannot read {uri!r} ({error.strerror or error})") from None
        length = buffer.get("byteLength")
        if not _is_index(length) or length > len(data):
            raise self.error(f"buffers[{index}].byteLength is {length!r} but the data holds {len(data)} bytes")
        self.buffers[index] = data[:length]
        return self.buffers[index]

    def accessor(self, index, what):
        """(count, width) float64 values of an accessor, normalized integers decoded."""
        accessor = self.item("accessors", index, what)
        kind, component, count = accessor.get("type"), accessor.get("componentType"), accessor.get("count")
        if not isinstance(kind, str) or kind not in _WIDTHS or not _is_index(component) \
                or component not in _COMPONENTS or not _is_index(count) or count < 1:
            raise self.error(f"accessors[{index}]: type {kind!r}, componentType {component!r} or count {count!r} "
                             f"is not valid")
        width, dtype = _WIDTHS[kind], np.dtype(_COMPONENTS[component]).newbyteorder("<")
        element = width * dtype.itemsize
        if "bufferView" in accessor:
            view = self.item("bufferViews", accessor["bufferView"], f"accessors[{index}]")
            data = self.buffer(view.get("buffer"))
            view_offset, view_length = view.get("byteOffset", 0), view.get("byteLength")
            stride = view.get("byteStride", element)
            offset = accessor.get("byteOffset", 0)
            if not all(_is_index(v) for v in (view_offset, view_length, stride, offset)) \
                    or view_offset + view_length > len(data) or stride < element:
                raise self.error(f"bufferViews[{accessor['bufferView']}] (of accessors[{index}]) lies outside its "
                                 f"buffer or has a stride shorter than an element")
            if offset % dtype.itemsize or (view_offset + offset) % dtype.itemsize:
                raise self.error(f"accessors[{index}].byteOffset {offset} is not a multiple of its component size")
            if offset + stride * (count - 1) + element > view_length:
                raise self.error(f"accessors[{index}]: {count} elements run past the end of their bufferView")
            raw = np.frombuffer(data, np.uint8, count=stride * (count - 1) + element, offset=view_offset + offset)
            rows = np.lib.stride_tricks.as_strided(raw, (count, element), (stride, 1))
            values = np.ascontiguousarray(rows).view(dtype).reshape(count, width)
        else:
            values = np.zeros((count, width), dtype)
        values = values.astype(np.float64)
        if accessor.get("normalized"):
            if dtype.kind == "f":
                raise self.error(f"accessors[{index}] is normalized but of floats")
            info = np.iinfo(dtype)
            values = np.maximum(values / info.max, -1.0)
        if "sparse" in accessor:
            values = self._sparse(accessor["sparse"], values, index, width, dtype, accessor.get("normalized"))
        if not np.isfinite(values).all():
            raise self.error(f"accessors[{index}] holds non-finite values")
        return values

    def _sparse(self, sparse, values, index, width, dtype, normalized):
        if not isinstance(sparse, dict) or not isinstance(sparse.get("indices"), dict) \
                or not isinstance(sparse.get("values"), dict):
            raise self.error(f"accessors[{index}].sparse is not valid")
        count = sparse.get("count")
        if not _is_index(count) or not 1 <= count <= len(values):
            raise self.error(f"accessors[{index}].sparse.count {count!r} is not valid")
        parts = []
        for key, part_dtype, part_width in (("indices", None, 1), ("values", dtype, width)):
            part = sparse[key]
            component = part.get("componentType")
            part_dtype = np.dtype(_COMPONENTS[component] if _is_index(component) and component in _COMPONENTS
                                  else np.float64) if key == "indices" else part_dtype
            if key == "indices" and part_dtype.kind != "u":
                raise self.error(f"accessors[{index}].sparse.indices: componentType is not an unsigned integer")
            view = self.item("bufferViews", part.get("bufferView"), f"accessors[{index}].sparse")
            data = self.buffer(view.get("buffer"))
            start = view.get("byteOffset", 0)
            offset = part.get("byteOffset", 0)
            size = count * part_width * part_dtype.itemsize
            if not all(_is_index(v) for v in (start, offset, view.get("byteLength"))) \
                    or offset + size > view["byteLength"] or start + view["byteLength"] > len(data) \
                    or (start + offset) % part_dtype.itemsize:
                raise self.error(f"accessors[{index}].sparse.{key} lies outside its bufferView or is misaligned")
            parts.append(np.frombuffer(data, part_dtype.newbyteorder("<"), count=count * part_width,
                                       offset=start + offset).reshape(count, part_width).astype(np.float64))
        indices, replacement = parts[0][:, 0].astype(np.int64), parts[1]
        if (indices >= len(values)).any() or (np.diff(indices) <= 0).any():
            raise self.error(f"accessors[{index}].sparse.indices are not increasing indices below its count")
        if normalized:
            replacement = np.maximum(replacement / np.iinfo(dtype).max, -1.0)
        values = values.copy()
        values[indices] = replacement
        return values

    # ------------------------------------------------------------------ choices --

    def choose(self, key, wanted, label):
        items = self.array(key)
        if not items:
            return None, None
        if wanted is None:
            index = 0
        elif isinstance(wanted, str):
            named = [k for k, item in enumerate(items) if isinstance(item, dict) and item.get("name") == wanted]
            if not named:
                names = [item.get("name") for item in items if isinstance(item, dict)]
                raise self.error(f"no {label} named {wanted!r}; the file's {key}: {names}")
            index = named[0]
        else:
            index = int(wanted)
            if not 0 <= index < len(items):
                raise self.error(f"{label}={index}, but the file holds {len(items)} {key}")
        item = self.item(key, index, label)
        note = None
        if len(items) > 1:
            names = ", ".join(f"{k}: {item.get('name', '')!r}" if isinstance(item, dict) else str(k)
                              for k, item in enumerate(items))
            note = f"{self.source}: took {label} {index} ({item.get('name', '')!r}) of {len(items)} ({names}); " \
                   f"pass {label}= to choose another"
        return index, note

    # ------------------------------------------------------------------ nodes --

    def node_transform(self, k):
        """(translation (3,), rotation (4,) x y z w, scale (3,)) float64 of node k at rest."""
        node = self.item("nodes", k, "a skin or animation")
        if "matrix" in node:
            m = np.array(node["matrix"], np.float64) if isinstance(node["matrix"], list) else None
            if m is None or m.shape != (16,) or not np.isfinite(m).all():
                raise self.error(f"nodes[{k}].matrix is not 16 finite numbers")
            m = m.reshape(4, 4).T  # column-major
            scale = np.linalg.norm(m[:3, :3], axis=0)
            if not (scale > 0).all():
                raise self.error(f"nodes[{k}].matrix is singular")
            rotation = np.asarray(_core.matrix_to_quat(np.ascontiguousarray(m[:3, :3] / scale)), np.float64)
            return m[:3, 3].copy(), rotation / np.linalg.norm(rotation), scale
        values = []
        for key, default in (("translation", [0, 0, 0]), ("rotation", [0, 0, 0, 1]), ("scale", [1, 1, 1])):
            value = node.get(key, default)
            array = np.array(value, np.float64) if isinstance(value, list) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in value) else None
            if array is None or array.shape != (len(default),) or not np.isfinite(array).all():
                raise self.error(f"nodes[{k}].{key} is not {len(default)} finite numbers")
            values.append(array)
        norm = np.linalg.norm(values[1])
        if norm == 0:
            raise self.error(f"nodes[{k}].rotation is zero")
        values[1] /= norm
        return tuple(values)

    def clip(self, fps, wanted_skin, wanted_animation):
        skin_index, skin_note = self.choose("skins", wanted_skin, "skin")
        if skin_index is None:
            raise self.error("holds no skin: jointmath.gltf.load reads a skinned skeleton's animation")
        skin = self.item("skins", skin_index, "skin")
        joint_nodes = skin.get("joints")
        nodes = self.array("nodes")
        if not isinstance(joint_nodes, list) or not joint_nodes or not all(
                _is_index(k) and 0 <= k < len(nodes) for k in joint_nodes) or len(set(joint_nodes)) != len(joint_nodes):
            raise self.error(f"skins[{skin_index}].joints is not a list of distinct node indices")
        parent_node = {}
        for k, node in enumerate(nodes):
            if not isinstance(node, dict):
                raise self.error(f"nodes[{k}] is not an object")
            children = node.get("children", [])
            if not isinstance(children, list):
                raise self.error(f"nodes[{k}].children is not an array")
            for c in children:
                if not _is_index(c) or not 0 <= c < len(nodes) or c in parent_node or c == k:
                    raise self.error(f"nodes[{k}].children: {c!r} is not a node index, or a node with two parents")
                parent_node[c] = k
        joint_set = set(joint_nodes)

        def joint_ancestor(k):
            """The nearest ancestor of node k that is a joint (or None), and the nodes between."""
            between, seen = [], {k}
            p = parent_node.get(k)
            while p is not None and p not in joint_set:
                if p in seen:
                    raise self.error(f"nodes[{p}] is its own ancestor")
                seen.add(p)
                between.append(p)
                p = parent_node.get(p)
            return p, between

        ancestry = {}
        for k in joint_nodes:
            ancestry[k] = joint_ancestor(k)
        children = {k: [] for k in joint_nodes}
        roots = []
        for k in joint_nodes:
            p = ancestry[k][0]
            (children[p] if p is not None else roots).append(k)
        order = []
        stack = list(reversed(roots))
        while stack:
            k = stack.pop()
            order.append(k)
            stack.extend(reversed(children[k]))
        if len(order) != len(joint_nodes):
            raise self.error(f"skins[{skin_index}]: its joints' hierarchy has a cycle")
        position = {k: j for j, k in enumerate(order)}
        parents = np.array([position[ancestry[k][0]] if ancestry[k][0] is not None else -1 for k in order], np.int64)
        names = []
        for j, k in enumerate(order):
            name = nodes[k].get("name")
            names.append(name if isinstance(name, str) and name else f"joint{j}")

        animation_index, animation_note = self.choose("animations", wanted_animation, "animation")
        notes = [n for n in (skin_note, animation_note) if n]
        rest = [self.node_transform(k) for k in order]
        for j, (_, _, scale) in enumerate(rest):
            if np.abs(scale - 1).max() > _SCALE_TOLERANCE:
                raise self.error(f"joint {names[j]!r} (nodes[{order[j]}]) has scale {scale.tolist()}: a Clip "
                                 f"holds rotations and translations only")
        tracks = {}  # (node, path) -> (times, values, interpolation)
        if animation_index is not None:
            animation = self.item("animations", animation_index, "animation")
            tracks = self.tracks(animation, animation_index, joint_set, notes)
        times = self.grid(tracks, fps, animation_index, len(order))
        n_frames = len(times)
        q = np.empty((n_frames, len(order), 4))
        t = np.empty((n_frames, len(order), 3))
        for j, k in enumerate(order):
            translation, rotation, _ = rest[j]
            t[:, j] = self.sample(tracks[(k, "translation")], times, False) if (k, "translation") in tracks \
                else translation
            q[:, j] = self.sample(tracks[(k, "rotation")], times, True) if (k, "rotation") in tracks else rotation
            if (k, "scale") in tracks:
                s = self.sample(tracks[(k, "scale")], times, False)
                if np.abs(s - 1).max() > _SCALE_TOLERANCE:
                    raise self.error(f"joint {names[j]!r} (nodes[{k}]) has animated scale: a Clip holds rotations "
                                     f"and translations only")
        offsets = np.array([r[0] for r in rest])
        scale_of = np.ones(len(order))  # the uniform scale above each joint's root, applied to its translations
        rest_rotations = np.array([r[1] for r in rest])
        # static nodes between a joint and its joint parent (or above a root): folded into the joint
        for j, k in enumerate(order):
            between = ancestry[k][1]
            if not between:
                continue
            for b in between:
                if any((b, path) in tracks for path in ("translation", "rotation", "scale")):
                    raise self.error(f"nodes[{b}] between joints (or above the skeleton's root) is animated: "
                                     f"jointmath.gltf.load reads animations of the skin's joints")
            prefix_t, prefix_q, prefix_s = np.zeros(3), np.array([0.0, 0, 0, 1]), 1.0
            for b in reversed(between):  # from the top down: prefix = prefix * node(b)
                bt, bq, bs = self.node_transform(b)
                if np.abs(bs - bs[0]).max() > _SCALE_TOLERANCE * abs(bs[0]):
                    raise self.error(f"nodes[{b}] above joint {names[j]!r} has a non-uniform scale {bs.tolist()}")
                if parents[j] >= 0 and abs(bs[0] - 1) > _SCALE_TOLERANCE:
                    raise self.error(f"nodes[{b}] between joints has scale {bs.tolist()}: only the nodes above the "
                                     f"skeleton's root may scale it")
                prefix_t = prefix_t + prefix_s * _rotate(prefix_q, bt)
                prefix_q, prefix_s = _multiply(prefix_q, bq), prefix_s * bs[0]
            t[:, j] = prefix_t + prefix_s * _rotate(prefix_q, t[:, j])
            q[:, j] = _multiply(prefix_q, q[:, j])
            offsets[j] = prefix_t + prefix_s * _rotate(prefix_q, offsets[j])
            rest_rotations[j] = _multiply(prefix_q, rest_rotations[j])
            if parents[j] < 0 and prefix_s != 1.0:  # every translation below the root scales with it
                below = self.descendants(j, parents)
                t[:, below] *= prefix_s
                offsets[below] *= prefix_s
                scale_of[j] = prefix_s
                scale_of[below] = prefix_s
        end_sites, end_offsets = [], []
        for j, k in enumerate(order):
            for c in nodes[k].get("children", []):
                node = nodes[c]
                if c in joint_set or node.get("children") or "mesh" in node or "camera" in node or any(
                        (c, path) in tracks for path in ("translation", "rotation", "scale")):
                    continue
                end_sites.append(j)
                end_offsets.append(self.node_transform(c)[0] * scale_of[j])
        frame_time = 1.0 / self.rate
        channels = self.bvh_channels(order, t, offsets)
        extras = self.animation_extras
        convention = extras.get("position_channels") if extras.get("position_channels") in POSITION_CONVENTIONS \
            else "offset+channel"
        joints = np.empty((n_frames, len(order)), JOINT_QUAT)
        joints["q"] = q.astype(np.float32)
        joints["t"][..., :3] = t.astype(np.float32)
        joints["t"][..., 3] = 0
        name = self.animation_name or os.path.splitext(os.path.basename(self.source))[0]
        return Clip(names=names, parents=parents, offsets=offsets, channels=channels, frame_time=frame_time,
                    joints=joints, end_sites=np.array(end_sites, np.int64),
                    end_offsets=np.array(end_offsets, np.float64).reshape(-1, 3), name=name,
                    position_channels=convention, notes=notes)

    @staticmethod
    def descendants(j, parents):
        inside = np.zeros(len(parents), bool)
        inside[j] = True
        for c in range(j + 1, len(parents)):
            if parents[c] >= 0 and inside[parents[c]]:
                inside[c] = True
        inside[j] = False
        return np.flatnonzero(inside)

    def bvh_channels(self, order, t, offsets):
        """Each joint's BVH channels: those save() recorded (if valid), else Zrotation Xrotation
        Yrotation; position channels in front on every axis where the translation moves."""
        nodes = self.array("nodes")
        scale = max(1.0, float(np.abs(offsets).max()) if offsets.size else 1.0)
        channels = []
        for j, k in enumerate(order):
            extras = nodes[k].get("extras")
            recorded = extras.get("bvh_channels") if isinstance(extras, dict) else None
            if isinstance(recorded, list) and all(isinstance(c, str) for c in recorded) \
                    and _channel_problem(tuple(recorded)) is None \
                    and sum(c.endswith("rotation") for c in recorded) == 3:
                found = tuple(recorded)
            else:
                found = _DEFAULT_CHANNELS
            moved = np.abs(t[:, j] - offsets[j].astype(np.float32).astype(np.float64)).max(axis=0) > 1e-6 * scale \
                if len(t) else np.zeros(3, bool)
            missing = tuple(name for name, axis in _POSITIONS.items() if moved[axis] and name not in found)
            if missing:
                found = tuple(n for n in _POSITIONS if n in found or n in missing) + tuple(
                    c for c in found if c not in _POSITIONS)
            channels.append(found)
        return channels

    # ------------------------------------------------------------------ animation --

    def tracks(self, animation, animation_index, joint_set, notes):
        self.animation_name = animation.get("name") if isinstance(animation.get("name"), str) else None
        extras = animation.get("extras")
        self.animation_extras = extras if isinstance(extras, dict) else {}
        samplers = animation.get("samplers", [])
        channels = animation.get("channels", [])
        if not isinstance(samplers, list) or not isinstance(channels, list):
            raise self.error(f"animations[{animation_index}]: samplers or channels is not an array")
        tracks, ignored = {}, 0
        for c, channel in enumerate(channels):
            where = f"animations[{animation_index}].channels[{c}]"
            if not isinstance(channel, dict) or not isinstance(channel.get("target"), dict):
                raise self.error(f"{where} is not an object with a target")
            target = channel["target"]
            node, path = target.get("node"), target.get("path")
            if path not in ("translation", "rotation", "scale", "weights"):
                raise self.error(f"{where}.target.path is {path!r}")
            if node is not None and not _is_index(node):
                raise self.error(f"{where}.target.node {node!r} is not a node index")
            if node is None or node not in joint_set or path == "weights":
                ignored += 1
                continue
            sampler_index = channel.get("sampler")
            if not _is_index(sampler_index) or not 0 <= sampler_index < len(samplers) \
                    or not isinstance(samplers[sampler_index], dict):
                raise self.error(f"{where}.sampler {sampler_index!r} is not one of the animation's samplers")
            sampler = samplers[sampler_index]
            interpolation = sampler.get("interpolation", "LINEAR")
            if interpolation not in ("LINEAR", "STEP", "CUBICSPLINE"):
                raise self.error(f"{where}: interpolation {interpolation!r} is not LINEAR, STEP or CUBICSPLINE")
            times = self.accessor(sampler.get("input"), f"{where}'s sampler input")
            if times.shape[1] != 1:
                raise self.error(f"{where}: the sampler's input is not SCALAR times")
            times = times[:, 0]
            if (np.diff(times) <= 0).any():
                raise self.error(f"{where}: the sampler's times do not strictly increase")
            values = self.accessor(sampler.get("output"), f"{where}'s sampler output")
            width = 4 if path == "rotation" else 3
            per_key = 3 if interpolation == "CUBICSPLINE" else 1
            if values.shape != (len(times) * per_key, width):
                raise self.error(f"{where}: {len(times)} keys need {len(times) * per_key} {path} values of {width} "
                                 f"components, the output holds {values.shape[0]} of {values.shape[1]}")
            if path == "rotation":
                keys = values[1::3] if per_key == 3 else values
                if not (np.linalg.norm(keys, axis=1) > 0).all():
                    raise self.error(f"{where}: a zero rotation quaternion")
            if (node, path) in tracks:
                raise self.error(f"{where}: a second {path} channel for nodes[{node}]")
            tracks[(node, path)] = (times, values, interpolation)
        if ignored:
            notes.append(f"{self.source}: {ignored} animation channel(s) of nodes outside the skin, or of morph "
                         f"weights, ignored")
        return tracks

    def grid(self, tracks, fps, animation_index, n_joints):
        """The times to sample at (float64), and self.rate."""
        if not tracks:
            self.rate = float(fps) if fps is not None else 30.0
            return np.zeros(1)
        start = min(times[0] for times, _, _ in tracks.values())
        end = max(times[-1] for times, _, _ in tracks.values())
        if fps is not None:
            rate = float(fps)
        else:
            recorded = self.animation_extras.get("frame_time")
            densest = max((times for times, _, _ in tracks.values()), key=len)
            if len(densest) < 2:
                rate = 30.0
            else:
                rate = (len(densest) - 1) / (densest[-1] - densest[0])
                if isinstance(recorded, (int, float)) and not isinstance(recorded, bool) and recorded > 0 \
                        and math.isfinite(recorded) and abs(rate * recorded - 1) < 1e-4:
                    rate = 1.0 / recorded
                elif abs(rate - round(rate)) <= 1e-5 * rate:
                    rate = float(round(rate))
        if not (math.isfinite(rate) and rate > 0):
            raise self.error(f"animations[{animation_index}]: no frame rate follows from its times")
        span = (end - start) * rate
        count = int(math.floor(span + 1e-3)) + 1
        if count * n_joints > _MAX_SAMPLES:
            raise self.error(f"animations[{animation_index}] lasts {end - start:g} s: {count} frames at {rate:g} fps "
                             f"of {n_joints} joints is more than jointmath.gltf.load samples ({_MAX_SAMPLES:.0e} "
                             f"joint-frames); pass a lower fps")
        self.rate = rate
        return start + np.arange(count) / rate

    def sample(self, track, grid, rotation):
        """(len(grid), width) values of one track at the grid's times."""
        times, values, interpolation = track
        cubic = interpolation == "CUBICSPLINE"
        keys = values[1::3] if cubic else values
        if rotation:
            keys = keys / np.linalg.norm(keys, axis=1, keepdims=True)
        if len(times) == 1:
            return np.broadcast_to(keys[0], (len(grid), keys.shape[1])).copy()
        # a grid time within float32 rounding of a key is that key
        tolerance = 4 * np.finfo(np.float32).eps * max(abs(times[0]), abs(times[-1]), 1e-3)
        k = np.clip(np.searchsorted(times, grid, side="right") - 1, 0, len(times) - 2)
        span = times[k + 1] - times[k]
        u = np.clip((grid - times[k]) / span, 0.0, 1.0)
        u[np.abs(grid - times[k]) <= tolerance] = 0.0
        u[np.abs(grid - times[k + 1]) <= tolerance] = 1.0
        if interpolation == "STEP":
            return np.where((u >= 1.0)[:, None], keys[k + 1], keys[k])
        if cubic:
            out_tangent, in_tangent = values[2::3][k], values[0::3][k + 1]
            u2, u3 = u * u, u * u * u
            result = ((2 * u3 - 3 * u2 + 1)[:, None] * keys[k] + ((u3 - 2 * u2 + u) * span)[:, None] * out_tangent
                      + (-2 * u3 + 3 * u2)[:, None] * keys[k + 1] + ((u3 - u2) * span)[:, None] * in_tangent)
            if rotation:
                norms = np.linalg.norm(result, axis=1, keepdims=True)
                if not (norms > 0).all():
                    raise self.error("a CUBICSPLINE rotation passes through zero")
                result = result / norms
            return result
        if rotation:
            result = np.asarray(_core.slerp(keys[k], keys[k + 1], u), np.float64)
            return result / np.linalg.norm(result, axis=1, keepdims=True)
        return keys[k] + u[:, None] * (keys[k + 1] - keys[k])


def _multiply(a, b):
    """Hamilton products of (..., 4) quaternions (x, y, z, w), float64."""
    ax, ay, az, aw = np.moveaxis(np.asarray(a, np.float64), -1, 0)
    bx, by, bz, bw = np.moveaxis(np.asarray(b, np.float64), -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def _rotate(q, v):
    """(..., 3) vectors v rotated by the unit quaternion q (4,), float64."""
    u, w = np.asarray(q[:3], np.float64), float(q[3])
    v = np.asarray(v, np.float64)
    t = 2 * np.cross(u, v)
    return v + w * t + np.cross(u, t)
