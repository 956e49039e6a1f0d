"""BVH reading and writing, on the real CMU clips and synthetic edge cases (the Euler angle kernels:
tests/kernels/test_euler.py)."""
import io
import mmap
import os
import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import jointmath as jm
from jointmath import bvh
from jointmath import reference as ref

from adversarial import run_python

DATA = Path(__file__).resolve().parent / "data"
Rotation = pytest.importorskip("scipy.spatial.transform").Rotation

SMALL = """HIERARCHY
ROOT Hips
{
\tOFFSET 1.0 2.0 3.0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 5.5 0
\t\tCHANNELS 3 Xrotation Yrotation Zrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 2 0
\t\t}
\t}
\tJOINT Leg
\t{
\t\tOFFSET .5 -1e1 0
\t\tCHANNELS 6 Yrotation Xposition Zrotation Yposition Xrotation Zposition
\t}
}
MOTION
Frames: 2
Frame Time: .0333333
0 0 0 10 20 30 1 2 3 45 1.5 -90 2.5 30 -3.5
1.5e0 -2 .25 -10 -20 -30 4 5 6 0 0 0 0 0 0
"""


def channel_quat(order, angles):
    return Rotation.from_euler(order, angles, degrees=True).as_quat()


def test_small_file_structure_and_values():
    clip = bvh.load(io.StringIO(SMALL))
    assert clip.names == ["Hips", "Spine", "Leg"]
    assert clip.parents.tolist() == [-1, 0, 0]
    assert clip.orders == ["ZXY", "XYZ", "YZX"] and clip.name == "<file>"
    np.testing.assert_array_equal(clip.offsets, [[1, 2, 3], [0, 5.5, 0], [0.5, -10, 0]])
    assert clip.end_sites.tolist() == [1] and clip.end_offsets.tolist() == [[0, 2, 0]]
    assert clip.frame_time == 0.0333333 and clip.fps == pytest.approx(30.00003)
    assert clip.motion.dtype == np.float32 and clip.motion.shape == (2, 15)
    j = clip.joints
    assert j.shape == (2, 3) and j.dtype == jm.JOINT_QUAT
    # translation = OFFSET + position channels (a missing one counts 0), 4th lane 0
    np.testing.assert_allclose(j["t"][0, 0], [1, 2, 3, 0])
    np.testing.assert_allclose(j["t"][1, 0], [2.5, 0, 3.25, 0])
    np.testing.assert_allclose(j["t"][0, 1], [0, 5.5, 0, 0])
    np.testing.assert_allclose(j["t"][0, 2], [0.5 + 1.5, -10 + 2.5, 0 - 3.5, 0])
    # rotations: channel order, intrinsic (scipy's uppercase from_euler)
    assert ref.angle_between(j["q"][0, 0], channel_quat("ZXY", [10, 20, 30])) < 1e-6
    assert ref.angle_between(j["q"][0, 1], channel_quat("XYZ", [1, 2, 3])) < 1e-6
    assert ref.angle_between(j["q"][0, 2], channel_quat("YZX", [45, -90, 30])) < 1e-6


def test_line_endings_and_binary_files(tmp_path):
    crlf = SMALL.replace("\n", "\r\n").encode()
    path = tmp_path / "crlf.bvh"
    path.write_bytes(crlf)
    a, b = bvh.load(path), bvh.load(io.BytesIO(crlf))
    expected = bvh.load(io.StringIO(SMALL))
    for clip in (a, b):
        np.testing.assert_array_equal(clip.motion, expected.motion)
        np.testing.assert_array_equal(clip.joints, expected.joints)
    spaced = SMALL.replace("Frames: 2", "Frames:\t\t2").replace("Frame Time: ", "Frame Time:    ")
    np.testing.assert_array_equal(bvh.load(io.StringIO(spaced)).motion, expected.motion)
    # a UTF-8 byte-order mark (text or binary mode) and blank lines between frames are accepted
    bom = "\ufeff" + SMALL.replace("-3.5\n", "-3.5\n\n")
    for source in (io.StringIO(bom), io.BytesIO(bom.encode())):
        np.testing.assert_array_equal(bvh.load(source).joints, expected.joints)


def test_rotation_only_root_and_no_frames():
    text = """HIERARCHY
ROOT R
{
  OFFSET 0 0 0
  CHANNELS 3 Yrotation Xrotation Zrotation
}
MOTION
Frames: 0
Frame Time: 0.01
"""
    clip = bvh.load(io.StringIO(text))
    assert clip.joints.shape == (0, 1) and clip.motion.shape == (0, 3)
    one = bvh.load(io.StringIO(text.replace("Frames: 0", "Frames: 1") + "90 0 0\n"))
    assert ref.angle_between(one.joints["q"][0, 0], channel_quat("YXZ", [90, 0, 0])) < 1e-6
    np.testing.assert_array_equal(one.joints["t"][0, 0], 0)


MALFORMED = [
    ("", 0, "unexpected end of file, expected HIERARCHY"),
    ("HIERARCHY\nJOINT A\n", 2, "JOINT outside a joint"),
    (SMALL.replace("OFFSET 1.0 2.0 3.0", "OFFSET 1.0 2.0"), 4, "OFFSET needs 3 numbers, got 2"),
    (SMALL.replace("OFFSET 1.0 2.0 3.0", "OFFSET 1.0 2.0 x"), 4, "OFFSET: not a number"),
    (SMALL.replace("CHANNELS 3 Xrotation", "CHANNELS 4 Xrotation"), 9, "CHANNELS says 4 but lists 3"),
    (SMALL.replace("Xrotation Yrotation Zrotation", "Xrotation Yrotation Wrotation"), 9, "unknown channel 'Wrotation'"),
    (SMALL.replace("Xrotation Yrotation Zrotation", "Xrotation Yrotation Xposition"), 9,
     "a joint needs 0 or 3 rotation channels, got 2"),
    (SMALL.replace("\t}\n}\nMOTION", "\t}\nMOTION"), 20, "MOTION before every joint was closed"),
    (SMALL.replace("Frames: 2", "Frames: two"), 22, "Frames: not a whole number"),
    (SMALL.replace("Frame Time: .0333333", "Frame Time: 0"), 23, "Frame Time must be positive"),
    (SMALL.replace("45 1.5 -90", "45 1.5"), 24, "a frame needs 15 values, got 14"),
    (SMALL.replace("-10 -20 -30", "-10 -2O -30"), 25, "not a number: '-2O'"),
    (SMALL.replace("Frames: 2", "Frames: 3"), 25, "Frames: 3 but the file ends after 2 frames"),
    (SMALL[: SMALL.index("MOTION")], 20, "unexpected end of file, expected MOTION"),
    # parser findings from fuzzing: each names its own line
    (SMALL.replace("45 1.5 -90", "45 1e39 -90"), 24, "not a finite float32: '1e39'"),
    (SMALL.replace("45 1.5 -90", "45 inf -90"), 24, "not a number: 'inf'"),
    (SMALL.replace("45 1.5 -90", "45 nan -90"), 24, "not a number: 'nan'"),
    (SMALL.replace("CHANNELS 3 Xrotation", "CHANNELS \u00b2 Xrotation"), 9, "CHANNELS needs a count"),
    (SMALL.replace("45 1.5 -90", "45 \uff11.5 -90"), 24, "not a number: '\uff11.5'"),
    (SMALL.replace("4 5 6 0", "4 1_000 6 0"), 25, "not a number: '1_000'"),
    (SMALL.replace("Frames: 2", "Frames: 1_000"), 22, "Frames: not a whole number"),
    (SMALL.replace("Frames: 2", "Frames: \uff12"), 22, "Frames: not a whole number"),
    (SMALL.replace("Frame Time: .0333333", "Frame Time: 1e-320"), 23, "Frame Time must be between 1e-06 and 3600"),
    (SMALL.replace("Frame Time: .0333333", "Frame Time: inf"), 23, "Frame Time: not a number"),
    (SMALL.replace("Frame Time: .0333333", "Frame Time: -0.01"), 23, "Frame Time must be positive"),
    (SMALL.replace("OFFSET 1.0 2.0 3.0", "OFFSET 1.0 2.0 1e400"), 4, "OFFSET: not a finite float32"),
    (SMALL.replace("OFFSET 1.0 2.0 3.0", "OFFSET 1.0 2.0 nan"), 4, "OFFSET: not a number"),
    # beyond float32 (loaded as inf before, with only NumPy's cast warning)
    (SMALL.replace("OFFSET 1.0 2.0 3.0", "OFFSET 1.0 2.0 -1e39"), 4, "OFFSET: not a finite float32"),
    (SMALL.replace("OFFSET 0 2 0", "OFFSET 0 340282356779733661637539395458142568448 0"), 12,
     "OFFSET: not a finite float32"),  # 2^128 - 2^103: halfway to 2^128, rounds to inf
    # more frames than the file has bytes (OverflowError before, which stopped a batch)
    (SMALL.replace("Frames: 2", "Frames: 99999999999999999999"), 25,
     "Frames: 99999999999999999999 but the file ends after 2 frames"),
]


@pytest.mark.parametrize("text, line, message", MALFORMED)
def test_malformed_files_name_the_line(text, line, message):
    with pytest.raises(ValueError, match=f"<file>:{line}: .*{message}" if line else message):
        bvh.load(io.BytesIO(text.encode()))


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028"])
def test_only_newline_and_return_end_lines(separator):
    """Other characters Python's splitlines() treats as breaks stay inside their line, so the
    line numbers of later errors are right."""
    text = SMALL.replace("ROOT Hips", f"ROOT Hips{separator}").replace("-10 -20 -30", "-10 -2O -30")
    with pytest.raises(ValueError, match="<file>:25: not a number: '-2O'"):
        bvh.load(io.BytesIO(text.encode()))
    # \r alone ends a line like \n and \r\n (old Mac files), mixed in one file too
    mixed = SMALL.replace("\n", "\r", 5).replace("-10 -20 -30", "-10 -2O -30")
    with pytest.raises(ValueError, match="<file>:25: not a number: '-2O'"):
        bvh.load(io.BytesIO(mixed.encode()))
    np.testing.assert_array_equal(bvh.load(io.BytesIO(SMALL.replace("\n", "\r").encode())).joints,
                                  bvh.load(io.StringIO(SMALL)).joints)


def test_cp1252_name_is_read_with_a_warning():
    text = SMALL.replace("JOINT Leg", "JOINT Leg\u00e9").encode("cp1252")
    with pytest.warns(bvh.BVHWarning, match=r"<file>:15: not UTF-8; the HIERARCHY was read as cp1252"):
        clip = bvh.load(io.BytesIO(text))
    assert clip.names[2] == "Leg\u00e9"
    np.testing.assert_array_equal(clip.joints, bvh.load(io.StringIO(SMALL)).joints)
    # an error later in such a file still names its line
    with pytest.warns(bvh.BVHWarning), pytest.raises(ValueError, match="<file>:25: not a number: '-2O'"):
        bvh.load(io.BytesIO(text.replace(b"-10 -20 -30", b"-10 -2O -30")))


def test_huge_frame_count_of_a_short_file_is_truncated_not_allocated():
    with pytest.raises(ValueError, match=r"<file>:25: Frames: 1000000000000 but the file ends after 2 frames"):
        bvh.load(io.StringIO(SMALL.replace("Frames: 2", "Frames: 1000000000000")))


def test_extra_frame_lines_warn_and_are_dropped():
    text = SMALL + "9 9 9 9 9 9 9 9 9 9 9 9 9 9 9\n"
    with pytest.warns(bvh.BVHWarning, match="Frames: 2 but the file holds 3 frame lines"):
        clip = bvh.load(io.StringIO(text))
    np.testing.assert_array_equal(clip.motion, bvh.load(io.StringIO(SMALL)).motion)


def test_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match="path_or_file must be a path, an open file or a Traversable, got int"):
        bvh.load(3)
    with pytest.raises(FileNotFoundError):
        bvh.load(tmp_path / "missing.bvh")
    (tmp_path / "binary.bvh").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="binary.bvh:1: not a text file"):
        bvh.load(tmp_path / "binary.bvh")


def test_paths_are_read_into_memory_not_mapped(tmp_path, monkeypatch):
    """A file at a path is read into memory, never memory-mapped (reading a map of a file that
    another program truncates meanwhile kills the process with SIGBUS): loads, failed loads and
    an empty file all work with mmap unavailable, and name the file."""
    def no_mmap(*args, **kwargs):
        raise AssertionError("bvh.load memory-mapped the file")

    monkeypatch.setattr(mmap, "mmap", no_mmap)
    expected = bvh.load(io.StringIO(SMALL))
    (tmp_path / "bom.bvh").write_bytes(b"\xef\xbb\xbf" + SMALL.encode())
    np.testing.assert_array_equal(bvh.load(tmp_path / "bom.bvh").joints, expected.joints)
    (tmp_path / "bad.bvh").write_bytes(SMALL.replace("-3.5", "-3.5x").encode())
    with pytest.raises(ValueError, match=r"bad.bvh:24: not a number: '-3.5x'"):
        bvh.load(tmp_path / "bad.bvh")
    (tmp_path / "empty.bvh").write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty.bvh:0: unexpected end of file, expected HIERARCHY"):
        bvh.load(tmp_path / "empty.bvh")


TRUNCATED_WHILE_PARSED = """
import os, shutil, sys
from jointmath import _bvh_read, bvh
source, path = sys.argv[1:]
shutil.copyfile(source, path)
parse_hierarchy = _bvh_read._parse_hierarchy


def truncate_then_parse(lines):  # another program truncates the file (as open(path, "wb") does)
    os.truncate(path, 4096)
    return parse_hierarchy(lines)


_bvh_read._parse_hierarchy = truncate_then_parse
clip = bvh.load(path)
_bvh_read._parse_hierarchy = parse_hierarchy
assert clip.joints.tobytes() == bvh.load(source).joints.tobytes(), "not the clip as read"
print(clip.joints.shape)
"""


def test_a_file_truncated_while_it_is_parsed_loads_as_read(tmp_path):
    """01_01.bvh truncated to 4 KB by another program after load() read it, while it parses: the
    clip as read, and the process lives. When load() memory-mapped the file, the parser read
    pages past the new end and the process died of SIGBUS (a crash Python cannot catch;
    python -m jointmath died without its report). In a subprocess, so that a crash fails the
    test; run on the best path (reader code)."""
    done = run_python("-c", TRUNCATED_WHILE_PARSED, str(DATA / "01_01.bvh"), str(tmp_path / "live.bvh"))
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr}"
    assert done.stdout.split() == ["(2752,", "31)"]


def test_a_file_rewritten_while_it_is_read_raises(tmp_path, monkeypatch):
    """A file that another program rewrites while load() reads it (its size or modification
    time changed between the read's start and end) raises ValueError naming it, never a clip
    mixed from two versions; the next load reads the new file."""
    path = tmp_path / "live.bvh"
    path.write_bytes(SMALL.encode())
    fstat, calls = os.fstat, []

    def fstat_then_rewrite(fd):  # the exporter saves again (open "wb", then write) after the read began
        calls.append(fd)
        status = fstat(fd)
        if len(calls) == 1:
            path.write_bytes(SMALL.replace("Frames: 2", "Frames: 1").rsplit("1.5e0", 1)[0].encode())
        return status

    monkeypatch.setattr(os, "fstat", fstat_then_rewrite)
    with pytest.raises(ValueError, match=r"live.bvh: the file changed while it was read"):
        bvh.load(path)
    assert bvh.load(path).n_frames == 1


def test_save_load_round_trip_and_pickle(tmp_path):
    clip = bvh.load(io.StringIO(SMALL))
    path = tmp_path / "out.bvh"
    bvh.save(clip, path)
    again = bvh.load(path)
    for name in ("names", "orders", "channels"):
        assert getattr(again, name) == getattr(clip, name)
    for name in ("parents", "offsets", "end_sites", "end_offsets", "motion", "joints"):
        np.testing.assert_array_equal(getattr(again, name), getattr(clip, name))
    assert again.frame_time == clip.frame_time
    restored = pickle.loads(pickle.dumps(clip))
    np.testing.assert_array_equal(restored.joints, clip.joints)


@pytest.mark.parametrize("name, frames, joints, fps, order", [
    ("01_01.bvh", 2752, 31, 120.0, "ZYX"),
    ("zxy_extra_frame.bvh", 150, 21, 100.0, "ZXY"),
])
def test_real_clips(name, frames, joints, fps, order):
    with warnings.catch_warnings():
        # zxy_extra_frame.bvh holds one frame line more than it declares (see BVHWarning)
        warnings.simplefilter("ignore" if name == "zxy_extra_frame.bvh" else "error")
        clip = bvh.load(DATA / name)
    assert (clip.n_frames, clip.n_joints) == (frames, joints)
    assert clip.fps == pytest.approx(fps, rel=1e-5)
    assert set(clip.orders) == {order}
    assert clip.parents[0] == -1 and (clip.parents[1:] < np.arange(1, joints)).all()
    # every joint's rotation in every frame against scipy's from_euler on the raw channels
    column = 0
    for j, channels in enumerate(clip.channels):
        rotation = [column + k for k, c in enumerate(channels) if c.endswith("rotation")]
        expected = channel_quat(clip.orders[j], clip.motion[:, rotation].astype(np.float64))
        assert ref.angle_between(clip.joints["q"][:, j], expected).max() < 1e-6
        column += len(channels)
    out = io.StringIO()
    bvh.save(clip, out)
    out.seek(0)
    again = bvh.load(out)
    np.testing.assert_array_equal(again.motion, clip.motion)
    np.testing.assert_array_equal(again.joints, clip.joints)


# ------------------------------------------------------------ the README's Euler recipe --

PROP = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Prop
  {
    OFFSET 0 10 0
    CHANNELS 0
  }
}
MOTION
Frames: 2
Frame Time: 0.033333
0 0 0 10 20 30
1 0 0 15 25 35
"""


def test_readme_euler_recipe_on_a_joint_without_rotation_channels():
    """The docs' per-joint Euler recipe (docs/families/euler.md) runs on a clip with a joint without rotation channels
    (its Clip.orders entry is ""): the angles of the joints that have an order, as the file holds
    them. Before, the recipe passed clip.orders itself and raised ValueError ("... got ''").
    Passing clip.orders with a "" still raises, naming the joint and saying why."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "families" / "euler.md").read_text(encoding="utf-8")
    recipe = [line for line in page.splitlines() if line.startswith(("rotated = ", "euler = "))]
    assert len(recipe) == 2, recipe
    clip = bvh.load(io.StringIO(PROP))
    assert clip.orders == ["ZXY", ""]
    names = {"clip": clip, "jm": jm}
    exec("\n".join(recipe), names)
    assert names["rotated"] == [0]
    np.testing.assert_allclose(names["euler"], [[[10, 20, 30]], [[15, 25, 35]]], atol=1e-4)
    with pytest.raises(ValueError, match=r"got '' for joint 1 \(a bvh.Clip's orders hold '' for a joint without "
                                         r"rotation channels: leave such joints out\)"):
        jm.quat_to_euler(clip.joints["q"], clip.orders, degrees=True)


def test_mutated_files_load_or_name_a_line(rng):
    """Random byte edits anywhere in a file: a clip or a ValueError with file:line, nothing else."""
    original = SMALL.encode()
    alphabet = np.frombuffer(b"0123456789.-+eE \t\r\n_x\x00\xff\xc2\x85\x0c{}", np.uint8)
    for _ in range(400):
        data = bytearray(original)
        for _ in range(int(rng.integers(1, 4))):
            data[int(rng.integers(len(data)))] = int(rng.choice(alphabet))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", bvh.BVHWarning)
                clip = bvh.load(io.BytesIO(bytes(data)))
        except ValueError as e:
            assert re.match(r"<file>:\d+: ", str(e)), str(e)
        else:
            assert np.isfinite(clip.joints["q"]).all() and np.isfinite(clip.joints["t"]).all()
