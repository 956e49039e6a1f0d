"""glTF 2.0: jointmath.gltf.save and load, checked by round trips against the BVH clips, by other
readers (pygltflib, trimesh) against the glTF 2.0 rules that apply, on a file built here from
first principles with pygltflib, and by mutated files (every one loads or raises ValueError)."""
import base64
import copy
import dataclasses
import json
import math
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from jointmath import bvh, gltf

DATA = Path(__file__).resolve().parent / "data"


def _pygltflib():
    """pygltflib, the test extra's independent glTF reader and writer."""
    return pytest.importorskip("pygltflib", reason="pygltflib (the test extra) reads and builds files independently")

#: normalized16's bound (rad): each component within half a step of 1/32767, so |q - q'| <= 1/32767
#: for the four together, and the rotation angle between q and q' / |q'| within 2 asin(1/32767);
#: float32 rounding of the decoded quaternion adds well under 1e-6.
NORMALIZED16_BOUND = 2 * math.asin(1 / 32767) + 1e-6


def _angles(a, b):
    """Rotation angles (rad) between quaternion arrays, in float64, either sign."""
    a = a.astype(np.float64) / np.linalg.norm(a.astype(np.float64), axis=-1, keepdims=True)
    b = b.astype(np.float64) / np.linalg.norm(b.astype(np.float64), axis=-1, keepdims=True)
    sign = np.where(np.einsum("...k,...k->...", a, b) < 0, -1.0, 1.0)[..., None]
    b = b * sign
    return 4 * np.arctan2(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))


@pytest.fixture(scope="module")
def walk():
    clip = bvh.load(DATA / "01_01.bvh")
    return dataclasses.replace(clip, joints=clip.joints[:300].copy())


@pytest.fixture(scope="module")
def clips(walk):
    return {"walk": walk, "zxy": bvh.load(DATA / "zxy_extra_frame.bvh"), "blender": bvh.load(DATA / "01_01_blender.bvh")}


# ------------------------------------------------------------------------------------ round trip --

@pytest.mark.filterwarnings("ignore::jointmath.bvh.BVHWarning")
@pytest.mark.parametrize("name", ["walk", "zxy", "blender"])
@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
@pytest.mark.parametrize("rotations", ["float", "normalized16"])
def test_round_trip_keeps_rotations_and_positions(clips, tmp_path, name, suffix, rotations):
    clip = clips[name]
    path = tmp_path / f"{name}{suffix}"
    gltf.save(clip, path, rotations=rotations)
    again = gltf.load(path)
    assert again.names == clip.names and again.parents.tolist() == clip.parents.tolist()
    assert again.n_frames == clip.n_frames and again.frame_time == clip.frame_time
    assert again.channels == clip.channels and again.position_channels == clip.position_channels
    np.testing.assert_allclose(again.offsets, clip.offsets, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(again.end_offsets, clip.end_offsets, rtol=1e-6, atol=1e-6)
    bound = 1e-6 if rotations == "float" else NORMALIZED16_BOUND
    assert _angles(again.joints["q"], clip.joints["q"]).max() <= bound
    expected = clip.positions().astype(np.float64)
    scale = clip.skeleton_height()
    error = np.linalg.norm(again.positions() - expected, axis=-1)
    if rotations == "float":
        assert error.max() <= 1e-5 * scale
    else:  # a rotation off by at most the bound moves a point r away by at most bound * r
        assert (error <= NORMALIZED16_BOUND * _levers(clip) + 1e-5 * scale).all()
    # what comes back also saves as BVH
    bvh.save(again, tmp_path / "again.bvh")


def _levers(clip):
    """(F, J + E): for each joint and End Site tip, the sum over its ancestors (parent up to the
    root) of their distance to it, frame by frame: how far rotation errors of the ancestors can
    move it, per radian."""
    points = clip.positions().astype(np.float64)
    first_ancestors = [*clip.parents.tolist(), *clip.end_sites.tolist()]  # a joint's parent, an End Site's joint
    levers = np.zeros(points.shape[:2])
    for point, ancestor in enumerate(first_ancestors):
        while ancestor >= 0:
            levers[:, point] += np.linalg.norm(points[:, point] - points[:, ancestor], axis=-1)
            ancestor = int(clip.parents[ancestor])
    return levers


def test_normalized16_is_smaller_and_float_exact_per_frame(walk, tmp_path):
    gltf.save(walk, tmp_path / "f.glb")
    gltf.save(walk, tmp_path / "s.glb", rotations="normalized16")
    assert (tmp_path / "s.glb").stat().st_size < 0.75 * (tmp_path / "f.glb").stat().st_size
    again = gltf.load(tmp_path / "f.glb")
    assert again.joints["t"].tobytes() == walk.joints["t"].tobytes()  # float32 translations kept exactly


def test_resampled_at_another_rate(walk, tmp_path):
    gltf.save(walk, tmp_path / "w.glb")
    at30 = gltf.load(tmp_path / "w.glb", fps=30)
    reference = bvh.resample(walk, 30)
    assert at30.n_frames == reference.n_frames and at30.fps == 30
    assert _angles(at30.joints["q"], reference.joints["q"]).max() < 1e-5
    np.testing.assert_allclose(at30.positions(), reference.positions(), atol=1e-4 * walk.height())


# ---------------------------------------------------------------------- other readers, the rules --

def _decoded(document, binary, index):
    """An accessor's values as numpy reads them from the spec's rules (no sparse in our files)."""
    accessor = document.accessors[index]
    view = document.bufferViews[accessor.bufferView]
    dtype = {5126: np.float32, 5122: np.int16}[accessor.componentType]
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[accessor.type]
    start = (view.byteOffset or 0) + (accessor.byteOffset or 0)
    values = np.frombuffer(binary, dtype, count=accessor.count * width, offset=start).reshape(accessor.count, width)
    if accessor.normalized:
        return np.maximum(values / 32767.0, -1.0)
    return values.astype(np.float64)


@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
@pytest.mark.parametrize("rotations", ["float", "normalized16"])
def test_other_readers_and_the_spec_rules(walk, tmp_path, suffix, rotations):
    path = tmp_path / f"w{suffix}"
    gltf.save(walk, path, rotations=rotations)
    document = _pygltflib().GLTF2().load(str(path))
    if suffix == ".glb":
        raw = path.read_bytes()
        magic, version, length = struct.unpack_from("<4sII", raw)
        assert (magic, version, length) == (b"glTF", 2, len(raw)) and length % 4 == 0
        json_length = struct.unpack_from("<I", raw, 12)[0]
        bin_length = struct.unpack_from("<I", raw, 20 + json_length)[0]
        assert json_length % 4 == 0 and bin_length % 4 == 0
        binary = document.binary_blob()
    else:
        uri = document.buffers[0].uri
        assert uri.startswith("data:application/octet-stream;base64,")
        binary = base64.b64decode(uri.split(",", 1)[1])
    assert document.asset.version == "2.0" and len(binary) >= document.buffers[0].byteLength
    sizes = {5126: 4, 5122: 2}
    for view in document.bufferViews:
        assert view.byteOffset % 4 == 0 and view.byteOffset + view.byteLength <= document.buffers[0].byteLength
    for accessor in document.accessors:
        view = document.bufferViews[accessor.bufferView]
        width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[accessor.type]
        element = width * sizes[accessor.componentType]
        assert (accessor.byteOffset or 0) % sizes[accessor.componentType] == 0
        assert (accessor.byteOffset or 0) + accessor.count * element <= view.byteLength
    # the skin: every joint, inverse bind matrices from the rest pose
    skin = document.skins[0]
    assert skin.joints == list(range(walk.n_joints))
    inverse_bind = _decoded(document, binary, skin.inverseBindMatrices).reshape(-1, 4, 4).transpose(0, 2, 1)
    rest = np.tile(np.eye(4), (walk.n_joints, 1, 1))
    rest[:, :3, 3] = walk.rest_positions()[:walk.n_joints]
    np.testing.assert_allclose(inverse_bind @ rest, np.tile(np.eye(4), (walk.n_joints, 1, 1)), atol=1e-5)
    # the animation: LINEAR samplers, inputs with min/max, strictly increasing, unit rotations
    animation = document.animations[0]
    assert len(animation.channels) == 2 * walk.n_joints
    targets = {(c.target.node, c.target.path) for c in animation.channels}
    assert targets == {(j, p) for j in range(walk.n_joints) for p in ("translation", "rotation")}
    single_keys = 0
    for channel in animation.channels:
        sampler = animation.samplers[channel.sampler]
        assert sampler.interpolation == "LINEAR"
        times = _decoded(document, binary, sampler.input)[:, 0]
        accessor = document.accessors[sampler.input]
        assert accessor.min == [times.min()] and accessor.max == [times.max()]
        assert (np.diff(times) > 0).all()
        values = _decoded(document, binary, sampler.output)
        assert len(values) == len(times)
        single_keys += len(times) == 1
        if channel.target.path == "rotation":
            norms = np.linalg.norm(values, axis=1)
            assert np.abs(norms - 1).max() <= (1e-6 if rotations == "float" else 2 / 32767)
            if rotations == "normalized16":
                assert document.accessors[sampler.output].componentType == 5122
                assert document.accessors[sampler.output].normalized
    assert single_keys >= walk.n_joints - 1  # the joints' constant translations, written once
    # trimesh reads the same hierarchy and places the rest pose where the clip does
    trimesh = pytest.importorskip("trimesh", reason="trimesh (the test extra) reads the files independently")
    scene = trimesh.load(str(path))
    for j, name in enumerate(walk.names):
        matrix, _ = scene.graph.get(name)
        np.testing.assert_allclose(matrix[:3, 3], walk.rest_positions()[j], atol=1e-5)


# ------------------------------------------------------------------ a file built independently --

def _quat_z(angle):
    return [0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)]


def _independent_glb(path, two_of_each=False, cubic=False, armature_scale=1.0):
    """A skinned, animated GLB built here with pygltflib from the spec alone: an armature node
    (translated and turned a quarter about Y) above a 3-joint chain (Root, Upper, Lower) and
    an End node. Root's translation: keys at 0, 1, 2 s; Upper's rotation about Z: 0, 90, 180
    degrees at 0, 1, 2 s (LINEAR); Lower's rotation: STEP, 0 then 45 degrees at 0 and 1 s."""
    pygltflib = _pygltflib()
    blob = bytearray()
    views, accessors = [], []

    def add(array, kind, component=5126, bounds=False):
        data = np.ascontiguousarray(array).tobytes()
        views.append(pygltflib.BufferView(buffer=0, byteOffset=len(blob), byteLength=len(data)))
        blob.extend(data + b"\x00" * (-len(data) % 4))
        accessor = pygltflib.Accessor(bufferView=len(views) - 1, componentType=component, count=len(array), type=kind)
        if bounds:
            accessor.min, accessor.max = [float(np.min(array))], [float(np.max(array))]
        accessors.append(accessor)
        return len(accessors) - 1

    times3 = add(np.array([0, 1, 2], np.float32), "SCALAR", bounds=True)
    times2 = add(np.array([0, 1], np.float32), "SCALAR", bounds=True)
    root_t = np.array([[0, 1, 0], [2, 1, 0], [2, 3, 0]], np.float32)
    if cubic:  # in-tangent, value, out-tangent per key
        tangents = np.array([[1, 0, 0]] * 3, np.float32)
        root_t = np.concatenate([tangents[:, None], root_t[:, None], tangents[:, None]], axis=1).reshape(-1, 3)
    root_out = add(root_t, "VEC3")
    upper_out = add(np.array([_quat_z(0), _quat_z(math.pi / 2), _quat_z(math.pi)], np.float32), "VEC4")
    lower_out = add(np.array([_quat_z(0), _quat_z(math.pi / 4)], np.float32), "VEC4")
    inverse_bind = np.tile(np.eye(4, dtype=np.float32), (3, 1, 1))
    inverse_bind[:, 3, 1] = [-1, -3, -5]  # rest world positions (0, 1, 0), (0, 3, 0), (0, 5, 0) below the armature
    ibm = add(inverse_bind.reshape(3, 16), "MAT4")
    armature = pygltflib.Node(name="Armature", children=[1], translation=[10, 0, 0],
                              rotation=[0, math.sin(math.pi / 4), 0, math.cos(math.pi / 4)], scale=[armature_scale] * 3)
    nodes = [armature, pygltflib.Node(name="Root", children=[2], translation=[0, 1, 0]),
             pygltflib.Node(name="Upper", children=[3], translation=[0, 2, 0]),
             pygltflib.Node(name="Lower", children=[4], translation=[0, 2, 0]),
             pygltflib.Node(name="End", translation=[0, 1, 0])]
    samplers = [pygltflib.AnimationSampler(input=times3, output=root_out,
                                           interpolation="CUBICSPLINE" if cubic else "LINEAR"),
                pygltflib.AnimationSampler(input=times3, output=upper_out, interpolation="LINEAR"),
                pygltflib.AnimationSampler(input=times2, output=lower_out, interpolation="STEP")]
    channels = [pygltflib.AnimationChannel(sampler=0, target=pygltflib.AnimationChannelTarget(node=1, path="translation")),
                pygltflib.AnimationChannel(sampler=1, target=pygltflib.AnimationChannelTarget(node=2, path="rotation")),
                pygltflib.AnimationChannel(sampler=2, target=pygltflib.AnimationChannelTarget(node=3, path="rotation"))]
    skins = [pygltflib.Skin(name="body", joints=[1, 2, 3], inverseBindMatrices=ibm, skeleton=1)]
    animations = [pygltflib.Animation(name="move", samplers=samplers, channels=channels)]
    if two_of_each:
        skins.insert(0, pygltflib.Skin(name="arm only", joints=[2, 3]))
        animations.insert(0, pygltflib.Animation(name="still", samplers=[samplers[0]], channels=[channels[0]]))
    document = pygltflib.GLTF2(asset=pygltflib.Asset(version="2.0"), scene=0, scenes=[pygltflib.Scene(nodes=[0])],
                               nodes=nodes, skins=skins, animations=animations, accessors=accessors,
                               bufferViews=views, buffers=[pygltflib.Buffer(byteLength=len(blob))])
    document.set_binary_blob(bytes(blob))
    document.save_binary(str(path))
    return path


def _world_oracle(root_t, upper_angle, lower_angle, scale=1.0):
    """World positions (Root, Upper, Lower) of the independent file: armature (10, 0, 0) + R_y(90) * scale."""
    def rot_z(a, v):
        return np.array([math.cos(a) * v[0] - math.sin(a) * v[1], math.sin(a) * v[0] + math.cos(a) * v[1], v[2]])
    root = np.asarray(root_t, np.float64)
    upper = root + np.array([0, 2, 0])
    lower = upper + rot_z(upper_angle, [0, 2, 0])
    points = np.array([root, upper, lower])
    armature = np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0]], np.float64)  # R_y(90)
    return scale * points @ armature.T + [10, 0, 0]


@pytest.mark.parametrize("scale", [1.0, 0.01])
def test_independent_glb_loads_correctly(tmp_path, scale):
    clip = gltf.load(_independent_glb(tmp_path / "chain.glb", armature_scale=scale), fps=2)
    assert clip.names == ["Root", "Upper", "Lower"] and clip.parents.tolist() == [-1, 0, 1]
    assert clip.n_frames == 5 and clip.fps == 2 and clip.name == "move" and clip.notes == []
    assert clip.end_sites.tolist() == [2]
    np.testing.assert_allclose(clip.end_offsets, [[0, scale, 0]], rtol=1e-7)
    for f, time in enumerate(np.arange(5) / 2):
        key = min(int(time), 1)
        u = time - key
        keys = np.array([[0, 1, 0], [2, 1, 0], [2, 3, 0]], np.float64)
        root_t = keys[key] + u * (keys[key + 1] - keys[key])
        expected = _world_oracle(root_t, time * math.pi / 2, math.pi / 4 if time >= 1 else 0, scale)
        np.testing.assert_allclose(clip.positions(end_sites=False)[f], expected, atol=2e-6)
    # STEP: the Lower joint holds 0 until 1 s, then 45 degrees
    lower = clip.joints["q"][:, 2].astype(np.float64)
    assert _angles(lower[:2], np.array([_quat_z(0)] * 2)).max() < 1e-6
    assert _angles(lower[2:], np.array([_quat_z(math.pi / 4)] * 3)).max() < 1e-6
    # the file's own rate: 1 key per second
    assert gltf.load(tmp_path / "chain.glb").n_frames == 3


def test_cubicspline_sampler(tmp_path):
    clip = gltf.load(_independent_glb(tmp_path / "cubic.glb", cubic=True), fps=4)
    keys = np.array([[0, 1, 0], [2, 1, 0], [2, 3, 0]], np.float64)
    tangent = np.array([1.0, 0, 0])
    for f in range(clip.n_frames):
        time = f / 4
        k = min(int(time), 1)
        u = time - k
        hermite = ((2 * u ** 3 - 3 * u ** 2 + 1) * keys[k] + (u ** 3 - 2 * u ** 2 + u) * tangent
                   + (-2 * u ** 3 + 3 * u ** 2) * keys[k + 1] + (u ** 3 - u ** 2) * tangent)
        armature = np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0]], np.float64)
        np.testing.assert_allclose(clip.positions()[f, 0], armature @ hermite + [10, 0, 0], atol=2e-6)


def test_several_skins_and_animations_named_in_notes(tmp_path):
    path = _independent_glb(tmp_path / "two.glb", two_of_each=True)
    first = gltf.load(path)
    assert first.names == ["Upper", "Lower"] and first.name == "still"
    assert any("skin 0 ('arm only') of 2" in n for n in first.notes)
    assert any("animation 0 ('still') of 2" in n for n in first.notes)
    chosen = gltf.load(path, skin="body", animation=1, fps=2)
    assert chosen.names == ["Root", "Upper", "Lower"] and chosen.name == "move"
    assert any("skin 1 ('body')" in n for n in chosen.notes)
    with pytest.raises(ValueError, match="two.glb.*no skin named 'legs'"):
        gltf.load(path, skin="legs")
    with pytest.raises(ValueError, match="two.glb.*animation=5"):
        gltf.load(path, animation=5)


def test_blender_export_loads_to_the_positions_of_the_clip_it_came_from(tmp_path):
    """tests/data/01_01_blender.glb: the first 120 frames of 01_01.bvh through Blender 3.4's BVH
    import and glTF export (tests/data/make_blender_files.py): bones with rest rotations of their
    own, an armature node, scale channels of 1. The joints' world positions are the clip's."""
    original = bvh.load(DATA / "01_01.bvh")
    exported = gltf.load(DATA / "01_01_blender.glb")
    assert sorted(exported.names) == sorted(original.names) and exported.n_frames == 120
    assert exported.fps == 120 and exported.notes == []
    order = [exported.names.index(name) for name in original.names]
    world = exported.positions(end_sites=False)[:, order]
    assert np.abs(world - original.positions(end_sites=False)[:120]).max() <= 1e-5 * original.height()
    # and goes on as BVH (the rest rotations of Blender's bones are in the joints' rotations)
    bvh.save(exported, tmp_path / "from_blender.bvh")
    again = bvh.load(tmp_path / "from_blender.bvh")
    assert np.abs(again.positions() - exported.positions()).max() <= 1e-5 * original.height()


# ------------------------------------------------------------------------------ bad arguments --

def test_bad_arguments(walk, tmp_path):
    with pytest.raises(TypeError, match="clip"):
        gltf.save("clip", tmp_path / "a.glb")
    with pytest.raises(ValueError, match="rotations"):
        gltf.save(walk, tmp_path / "a.glb", rotations="half")
    with pytest.raises(ValueError, match=r"\.gltf or \.glb"):
        gltf.save(walk, tmp_path / "a.fbx")
    with pytest.raises(ValueError, match="no frames"):
        gltf.save(dataclasses.replace(walk, joints=walk.joints[:0]), tmp_path / "a.glb")
    broken = walk.joints.copy()
    broken["q"][3, 4] = 0
    with pytest.raises(ValueError, match="frame 3, joint 4"):
        gltf.save(dataclasses.replace(walk, joints=broken), tmp_path / "a.glb")
    assert not (tmp_path / "a.glb").exists()
    gltf.save(walk, tmp_path / "a.glb")
    with pytest.raises(TypeError, match="fps"):
        gltf.load(tmp_path / "a.glb", fps="30")
    with pytest.raises(ValueError, match="fps"):
        gltf.load(tmp_path / "a.glb", fps=0)
    assert gltf.load(tmp_path / "a.glb", fps=Fraction(60)).fps == 60
    with pytest.raises(TypeError, match="skin"):
        gltf.load(tmp_path / "a.glb", skin=1.5)
    (tmp_path / "b.gltf").write_text("{}")
    with pytest.raises(ValueError, match="b.gltf.*not glTF 2.0"):
        gltf.load(tmp_path / "b.gltf")
    (tmp_path / "c.gltf").write_text('{"asset": {"version": "2.0"}, "nodes": [{}]}')
    with pytest.raises(ValueError, match="c.gltf.*no skin"):
        gltf.load(tmp_path / "c.gltf")


def test_scale_on_a_joint_is_refused_naming_it(walk, tmp_path):
    gltf.save(walk, tmp_path / "w.gltf")
    document = json.loads((tmp_path / "w.gltf").read_text())
    document["nodes"][2]["scale"] = [2, 2, 2]
    (tmp_path / "scaled.gltf").write_text(json.dumps(document))
    with pytest.raises(ValueError, match=r"scaled.gltf: joint 'LeftUpLeg' \(nodes\[2\]\) has scale \[2.0, 2.0, 2.0\]"):
        gltf.load(tmp_path / "scaled.gltf")


def test_node_matrices_read_as_their_trs(walk, tmp_path):
    """A node's transform as a column-major matrix reads as the same translation and rotation."""
    gltf.save(walk, tmp_path / "w.gltf")
    document = json.loads((tmp_path / "w.gltf").read_text())
    half = math.sqrt(0.5)
    trs, matrices = copy.deepcopy(document), copy.deepcopy(document)
    for k in (2, 3):  # LeftUpLeg and LeftLeg, rotated at rest a quarter turn about Y (their channels animate it)
        trs["nodes"][k]["rotation"] = [0, half, 0, half]
        translation = document["nodes"][k].get("translation", [0, 0, 0])
        matrices["nodes"][k].pop("translation", None)
        matrices["nodes"][k]["matrix"] = [0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, *translation, 1]
    for k in (4, 5):  # joints without rotation channels in the file: their rest rotation counts
        for source in (trs, matrices):
            source["animations"][0]["channels"] = [c for c in source["animations"][0]["channels"]
                                                   if c["target"] != {"node": k, "path": "rotation"}]
        trs["nodes"][k]["rotation"] = [0, half, 0, half]
        translation = document["nodes"][k].get("translation", [0, 0, 0])
        matrices["nodes"][k].pop("translation", None)
        matrices["nodes"][k]["matrix"] = [0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, *translation, 1]
    (tmp_path / "trs.gltf").write_text(json.dumps(trs))
    (tmp_path / "matrices.gltf").write_text(json.dumps(matrices))
    a, b = gltf.load(tmp_path / "trs.gltf"), gltf.load(tmp_path / "matrices.gltf")
    assert _angles(a.joints["q"], b.joints["q"]).max() < 1e-6
    np.testing.assert_allclose(a.positions(), b.positions(), atol=1e-5)
    assert _angles(a.joints["q"][:, 4], np.array([[0, half, 0, half]])).max() < 1e-6


def test_side_buffer_file(walk, tmp_path):
    gltf.save(walk, tmp_path / "w.gltf")
    document = json.loads((tmp_path / "w.gltf").read_text())
    uri = document["buffers"][0]["uri"]
    (tmp_path / "w data.bin").write_bytes(base64.b64decode(uri.split(",", 1)[1]))
    document["buffers"][0]["uri"] = "w%20data.bin"
    (tmp_path / "side.gltf").write_text(json.dumps(document))
    assert gltf.load(tmp_path / "side.gltf").joints.tobytes() == gltf.load(tmp_path / "w.gltf").joints.tobytes()
    (tmp_path / "w data.bin").unlink()
    with pytest.raises(ValueError, match="side.gltf.*cannot read 'w%20data.bin'"):
        gltf.load(tmp_path / "side.gltf")


# ------------------------------------------------------------------------------------ fuzzing --

def _mutate_json(document, rng):
    """A copy of document with one value somewhere replaced, removed or retyped."""
    document = copy.deepcopy(document)
    paths = []

    def walk(node, path):
        paths.append(path)
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, path + [key])
        elif isinstance(node, list):
            for k, value in enumerate(node[:6]):
                walk(value, path + [k])
    walk(document, [])
    path = paths[int(rng.integers(1, len(paths)))]
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    choice = int(rng.integers(0, 9))
    replacements = [None, -1, 0, 2 ** 40, 1.5, "x", [], {}, float("nan")]
    if choice == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    elif choice == 1 and isinstance(parent[path[-1]], (int, float)) and not isinstance(parent[path[-1]], bool):
        parent[path[-1]] = parent[path[-1]] + int(rng.integers(-3, 4)) * (1 if rng.random() < 0.5 else 1000)
    else:
        parent[path[-1]] = replacements[int(rng.integers(0, len(replacements)))]
    return document


def _mutate_bytes(data, rng):
    data = bytearray(data)
    kind = int(rng.integers(0, 3))
    if kind == 0:  # flip bytes
        for _ in range(int(rng.integers(1, 8))):
            data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
    elif kind == 1:  # truncate
        data = data[:int(rng.integers(0, len(data)))]
    else:  # a header or chunk length changed
        offset = int(rng.choice([8, 12, 16]))
        if offset + 4 <= len(data):
            struct.pack_into("<I", data, offset, int(rng.integers(0, 2 ** 32)))
    return bytes(data)


def _glb_parts(data):
    """(JSON document, BIN chunk) of a GLB file."""
    json_length = struct.unpack_from("<I", data, 12)[0]
    document = json.loads(data[20:20 + json_length])
    start = 20 + json_length
    return document, data[start + 8:start + 8 + struct.unpack_from("<I", data, start)[0]]


def _glb_of(document, binary):
    text = json.dumps(document).encode()
    text += b" " * (-len(text) % 4)
    chunks = struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(binary), 0x004E4942) + binary
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


def test_mutated_files_load_or_raise_value_error_naming_the_file(tmp_path):
    """600 mutants of three files (ours as .glb, ours with normalized16 rotations as .gltf, and
    Blender's .glb): bytes flipped, files cut, lengths changed, JSON values removed, retyped or
    moved. Each loads into a Clip or raises a ValueError naming its file."""
    source = bvh.load(DATA / "01_01.bvh")
    small = dataclasses.replace(source, joints=source.joints[:4].copy())
    gltf.save(small, tmp_path / "seed.glb")
    gltf.save(small, tmp_path / "seed.gltf", rotations="normalized16")
    glb = (tmp_path / "seed.glb").read_bytes()
    document = json.loads((tmp_path / "seed.gltf").read_text())
    blender_document, blender_binary = _glb_parts((DATA / "01_01_blender.glb").read_bytes())
    rng = np.random.default_rng(50)
    outcomes = {"loaded": 0, "refused": 0}
    for k in range(600):
        kind = k % 4
        if kind == 0:
            name = tmp_path / f"mutant{k}.glb"
            name.write_bytes(_mutate_bytes(glb, rng))
        elif kind == 1:
            name = tmp_path / f"mutant{k}.gltf"
            name.write_text(json.dumps(_mutate_json(document, rng)))
        elif kind == 2:
            name = tmp_path / f"mutant{k}.glb"
            name.write_bytes(_glb_of(_mutate_json(blender_document, rng), blender_binary))
        else:
            name = tmp_path / f"mutant{k}.glb"
            name.write_bytes(_mutate_bytes(_glb_of(blender_document, blender_binary), rng))
        try:
            loaded = gltf.load(name)
        except ValueError as error:
            assert str(name) in str(error), error
            outcomes["refused"] += 1
        else:
            assert isinstance(loaded, bvh.Clip)
            outcomes["loaded"] += 1
        name.unlink()
    assert outcomes["loaded"] > 50 and outcomes["refused"] > 200, outcomes
