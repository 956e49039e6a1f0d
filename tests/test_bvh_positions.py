"""BVH position-channel conventions: "offset+channel" (CMU, jointmath's own files) and "channel"
(Blender's exporter, the Bandai-Namco dataset), chosen by load(positions=...) or decided by
"auto", recorded on the clip and written back by save()."""
import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest

from jointmath import bvh

DATA = Path(__file__).resolve().parent / "data"
Rotation = pytest.importorskip("scipy.spatial.transform").Rotation

# name, parent, OFFSET: a small body whose joints below the root all have OFFSETs
BODY = [("Hips", -1, (0.0, 90.0, 0.0)), ("Spine", 0, (0.0, 12.0, 1.0)), ("Head", 1, (0.0, 30.0, 0.0)),
        ("LeftUpLeg", 0, (9.0, -4.0, 0.0)), ("LeftLeg", 3, (0.0, -41.0, 1.5)), ("LeftFoot", 4, (0.0, -39.0, -2.0)),
        ("RightUpLeg", 0, (-9.0, -4.0, 0.0)), ("RightLeg", 6, (0.0, -41.0, 1.5)), ("RightFoot", 7, (0.0, -39.0, -2.0))]
POSITIONS = ("Xposition", "Yposition", "Zposition")
ROTATIONS = ("Zrotation", "Xrotation", "Yrotation")


def _motion(n_frames, seed):
    """(F, J, 3) local translations (each OFFSET plus a small motion; the root travels) and
    (F, J, 3) ZXY Euler angles in degrees, float32-representable (six decimals)."""
    rng = np.random.default_rng(seed)
    offsets = np.array([o for _, _, o in BODY])
    frames = np.arange(n_frames)[:, None, None]
    translation = offsets + 0.02 * np.sin(frames * 0.3 + rng.uniform(0, 6, (1, len(BODY), 3)))
    translation[:, 0] += np.stack([frames[:, 0, 0] * 0.5, 3 * np.sin(frames[:, 0, 0] * 0.2), 0 * frames[:, 0, 0]], -1)
    angles = 40 * np.sin(frames * 0.1 + rng.uniform(0, 6, (1, len(BODY), 3)))
    return np.round(translation, 4), np.round(angles, 4)


def _text(translation, angles, convention, every_joint_positions=True):
    """A BVH file of BODY in `convention`: every joint with 6 channels (the Bandai-Namco shape)
    or only the root; written here with "%.6f", as other tools write."""
    lines = ["HIERARCHY"]
    depth = []
    for j, (name, parent, offset) in enumerate(BODY):
        while depth and depth[-1] != parent:
            depth.pop()
            lines.append("}")
        lines += [f"{'ROOT' if parent < 0 else 'JOINT'} {name}", "{", "OFFSET %.6f %.6f %.6f" % offset]
        channels = POSITIONS + ROTATIONS if parent < 0 or every_joint_positions else ROTATIONS
        lines.append(f"CHANNELS {len(channels)} {' '.join(channels)}")
        depth.append(j)
    for j in reversed(depth):
        if j == depth[-1]:
            lines += ["End Site", "{", "OFFSET 0 -3 0", "}"]
        lines.append("}")
    lines += ["MOTION", f"Frames: {len(translation)}", "Frame Time: 0.0333333"]
    offsets = np.array([o for _, _, o in BODY])
    for f in range(len(translation)):
        values = []
        for j, (_, parent, _) in enumerate(BODY):
            if parent < 0 or every_joint_positions:
                t = translation[f, j] - (offsets[j] if convention == "offset+channel" else 0)
                values += list(t)
            values += list(angles[f, j])
        lines.append(" ".join("%.6f" % v for v in values))
    return "\n".join(lines) + "\n"


def _world_oracle(translation, angles):
    """(F, J, 3) float64 world positions of BODY, composed here with scipy's rotations."""
    world_r, world_t = [None] * len(BODY), [None] * len(BODY)
    for j, (_, parent, _) in enumerate(BODY):
        local = Rotation.from_euler("ZXY", angles[:, j], degrees=True)
        if parent < 0:
            world_r[j], world_t[j] = local, translation[:, j]
        else:
            world_r[j] = world_r[parent] * local
            world_t[j] = world_t[parent] + world_r[parent].apply(translation[:, j])
    return np.stack(world_t, axis=1)


def _load(text, **kwargs):
    return bvh.load(io.StringIO(text), **kwargs)


@pytest.mark.parametrize("convention", ["offset+channel", "channel"])
def test_every_joint_with_positions_decided_and_read_as_written(convention):
    translation, angles = _motion(40, seed=1)
    text = _text(translation, angles, convention)
    clip = _load(text)
    assert clip.position_channels == convention
    expected = _world_oracle(translation, angles)
    scale = float(np.abs(expected).max())
    assert np.abs(clip.positions(end_sites=False) - expected).max() <= 1e-5 * scale
    explicit = _load(text, positions=convention)
    assert explicit.joints.tobytes() == clip.joints.tobytes()
    if convention == "channel":  # said once, on the clip
        assert len(clip.notes) == 1 and "positions='channel'" in clip.notes[0] and "<file>" in clip.notes[0]
    else:
        assert clip.notes == []


def test_bandai_shape_hips_at_hip_height_not_doubled():
    """Every joint's 6 channels hold its whole local translation: the hips stand at ~90, where
    the old reading (OFFSET + channel) put them at ~180 and doubled every bone."""
    translation, angles = _motion(30, seed=2)
    text = _text(translation, angles, "channel")
    hips_height = _load(text).positions()[:, 0, 1]
    assert np.all(np.abs(hips_height - 90) < 4)
    wrong = _load(text, positions="offset+channel").positions()[:, 0, 1]
    assert np.all(np.abs(wrong - 180) < 4)


@pytest.mark.parametrize("convention", ["offset+channel", "channel"])
def test_save_writes_the_convention_read_with_the_same_numbers(convention):
    translation, angles = _motion(25, seed=3)
    text = _text(translation, angles, convention)
    clip = _load(text)
    out = io.StringIO()
    bvh.save(clip, out)
    written = out.getvalue()
    header = written.split("MOTION")[0]
    assert header.count("CHANNELS 6") == len(BODY)
    given = np.array([line.split() for line in text.split("Frame Time: 0.0333333\n")[1].splitlines()], np.float32)
    saved = np.array([line.split() for line in written.split("Frame Time: ")[1].splitlines()[1:]], np.float32)
    np.testing.assert_array_equal(saved, given)  # the same numbers, as float32 reads them
    again = _load(written)
    assert again.position_channels == convention and again.joints.tobytes() == clip.joints.tobytes()
    # a second round trip gives the same text
    out2 = io.StringIO()
    bvh.save(again, out2)
    assert out2.getvalue() == written


def test_save_in_the_other_convention_on_request():
    translation, angles = _motion(10, seed=4)
    clip = _load(_text(translation, angles, "channel"))
    out = io.StringIO()
    bvh.save(clip, out, positions="offset+channel")
    again = _load(out.getvalue())
    assert again.position_channels == "offset+channel"
    np.testing.assert_allclose(again.positions(), clip.positions(), atol=1e-4)
    first = np.array(out.getvalue().split("Frame Time: ")[1].splitlines()[1].split(), np.float64)
    assert np.abs(first[6:9]).max() < 0.1  # the Spine's position channels: changes near zero
    replaced = dataclasses.replace(clip, position_channels="offset+channel")  # the same joints, other numbers
    assert np.abs(replaced.motion[:, 6:9]).max() < 0.1 and replaced != clip


def test_undecided_file_keeps_the_old_reading_and_says_so():
    translation, angles = _motion(10, seed=5)
    lines = _text(translation, angles, "channel").splitlines()
    start = lines.index("Frame Time: 0.0333333") + 1
    for f in range(start, len(lines)):  # the LeftLeg's channels as changes, the rest as whole translations
        values = lines[f].split()
        values[4 * 6 + 1] = "0.000000"
        lines[f] = " ".join(values)
    clip = _load("\n".join(lines) + "\n")
    assert clip.position_channels == "offset+channel"
    assert len(clip.notes) == 1 and "undecided" in clip.notes[0]


@pytest.mark.parametrize("root_y, expected", [(90.0, "channel"), (0.5, "offset+channel"), (45.0, "offset+channel")])
def test_root_alone_decides_on_its_offset_axes(root_y, expected):
    text = ("HIERARCHY\nROOT Hips\n{\nOFFSET 0 90 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
            "Yrotation\nJOINT Spine\n{\nOFFSET 0 10 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\n"
            "OFFSET 0 5 0\n}\n}\n}\nMOTION\nFrames: 3\nFrame Time: 0.1\n"
            + "".join(f"{100 * f} {root_y + f} {-50 * f} 0 0 0 0 0 0\n" for f in range(3)))
    clip = _load(text)
    assert clip.position_channels == expected
    assert bool(clip.notes) == (root_y == 45.0 or expected == "channel")


def test_cmu_clip_reads_as_before():
    clip = bvh.load(DATA / "01_01.bvh")
    assert clip.position_channels == "offset+channel" and clip.notes == []


def test_blender_export_loads_to_the_positions_of_the_clip_it_came_from():
    """tests/data/01_01_blender.bvh: the first 120 frames of 01_01.bvh through Blender 3.4's BVH
    import and export (tests/data/make_blender_files.py). Blender writes Z up: (x, y, z) -> (x, -z, y)."""
    original = bvh.load(DATA / "01_01.bvh")
    exported = bvh.load(DATA / "01_01_blender.bvh")
    assert exported.position_channels == "channel" and len(exported.notes) == 1
    assert exported.names == original.names and exported.n_frames == 120
    source = original.positions()[:120].astype(np.float64)
    in_blender_axes = np.stack([source[..., 0], -source[..., 2], source[..., 1]], axis=-1)
    height = original.height()
    assert np.abs(exported.positions() - in_blender_axes).max() <= 1e-5 * height
    # the old reading put joints far off (feet and toes worst)
    wrong = bvh.load(DATA / "01_01_blender.bvh", positions="offset+channel")
    assert np.abs(wrong.positions() - in_blender_axes).max() > 0.3 * height
    # saved back: the same numbers, as float32 reads them
    out = io.StringIO()
    bvh.save(exported, out)
    text = (DATA / "01_01_blender.bvh").read_text()
    given = np.array([line.split() for line in text.split("Frame Time:")[1].splitlines()[1:]], np.float32)
    saved = np.array([line.split() for line in out.getvalue().split("Frame Time:")[1].splitlines()[1:]], np.float32)
    np.testing.assert_array_equal(saved, given)


def test_joints_from_motion_positions():
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")]
    added = bvh.joints_from_motion([[1, 2, 3, 0, 0, 0]], [[10, 20, 30]], channels)
    whole = bvh.joints_from_motion([[1, 2, 3, 0, 0, 0]], [[10, 20, 30]], channels, positions="channel")
    assert added["t"][0, 0, :3].tolist() == [11, 22, 33] and whole["t"][0, 0, :3].tolist() == [1, 2, 3]
    partial = bvh.joints_from_motion([[2, 0, 0, 0]], [[10, 20, 30]], [("Yposition",) + channels[0][3:]],
                                     positions="channel")
    assert partial["t"][0, 0, :3].tolist() == [10, 2, 30]  # axes without a channel keep the OFFSET


@pytest.mark.parametrize("call", [
    lambda: _load("", positions="whole"),
    lambda: bvh.save(bvh.load(DATA / "01_01.bvh"), io.StringIO(), positions="auto"),
    lambda: bvh.joints_from_motion([[0, 0, 0]], [[0, 0, 0]], [("Zrotation", "Xrotation", "Yrotation")],
                                   positions="offset"),
])
def test_unknown_convention_is_a_value_error_naming_it(call):
    with pytest.raises(ValueError, match="positions"):
        call()


def test_convention_types_and_clip_field_checked():
    with pytest.raises(TypeError, match="positions"):
        _load("", positions=1)
    clip = bvh.load(DATA / "01_01.bvh")
    with pytest.raises(ValueError, match="position_channels"):
        dataclasses.replace(clip, position_channels="both")
    with pytest.raises(TypeError, match="notes"):
        dataclasses.replace(clip, notes=5)
    clip.position_channels = "sideways"  # assigned since construction: checked on use
    with pytest.raises(ValueError, match="position_channels"):
        clip.motion
