"""python -m jointmath's default format (jmc: jointmath.compress under a bound in cm), its report
and plot, --format packed's compressed archives, save_packed beside load_packed, and the BVH ->
ACL SJSON converter of the benchmarks. Run once: whole pipelines (the codec itself is tested per
path in its own tests)."""
import dataclasses
import gzip
import json
import lzma
import os
import re
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import jointmath
from jointmath import _report, bvh
from jointmath.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CMU_SCALE = 2.54 / 0.45  # cm per unit of CMU's clips


@pytest.fixture(scope="module")
def run_01_01(tmp_path_factory):
    """The command once on the repository's CMU clip: --error 0.05 cm under CMU's unit scale, a
    plot. (the stdout, report.json, the output folder)."""
    out = tmp_path_factory.mktemp("out")
    import contextlib
    import io

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        status = main([str(DATA / "01_01.bvh"), "--out", str(out), "--error", "0.05", "--unit-scale", "2.54/0.45",
                       "--plot", str(out / "ratio.png")])
    assert status == 0
    return stdout.getvalue(), json.loads((out / "report.json").read_text()), out


def test_command_writes_a_jmc_within_the_requested_bound(run_01_01):
    _, report, out = run_01_01
    [clip] = report["clips"]
    assert clip["outputs"] == {"compressed": str(out / "01_01.jmc")}
    compressed = jointmath.load_compressed(out / "01_01.jmc")
    source = bvh.load(DATA / "01_01.bvh")
    assert (compressed.num_frames, compressed.num_joints) == (source.n_frames, source.n_joints)
    assert compressed.nbytes == clip["bytes"] == os.path.getsize(out / "01_01.jmc")
    bound = 0.05 / CMU_SCALE  # the requested cm in clip units
    assert clip["error_bound"] == pytest.approx(bound, rel=1e-12)
    assert compressed.error <= bound * (1 + 1e-6)
    assert compressed.stats.max_error <= compressed.error  # certified on every sample
    assert clip["max_error"] == pytest.approx(compressed.stats.max_error) and clip["max_error"] <= bound
    decoded = jointmath.decompress(compressed)
    assert decoded.names == source.names


def test_report_fields(run_01_01):
    text, report, out = run_01_01
    [clip] = report["clips"]
    frames, joints = 2752, 31
    raw = frames * joints * 10 * 4  # 10 float32 per joint-sample, as ACL counts them
    source = (DATA / "01_01.bvh").read_bytes()
    assert clip["raw_float32_bytes"] == raw and clip["floats_per_joint_sample"] == 10
    assert clip["ratio_float32"] == pytest.approx(raw / clip["bytes"])
    assert clip["bytes_per_joint_sample"] == pytest.approx(clip["bytes"] / (frames * joints))
    assert clip["source_bytes"] == len(source)
    assert clip["gzip9_bytes"] == len(gzip.compress(source, compresslevel=9, mtime=0))
    assert clip["xz9_bytes"] == len(lzma.compress(source, preset=9))
    assert clip["ratio_xz9"] == pytest.approx(clip["xz9_bytes"] / clip["bytes"])
    assert clip["unit_scale_cm"] == pytest.approx(CMU_SCALE) and clip["unit_scale_from"] == "--unit-scale"
    assert clip["max_error_cm"] == pytest.approx(clip["max_error"] * CMU_SCALE)
    assert clip["p99_error_cm"] == pytest.approx(clip["p99_error"] * CMU_SCALE)
    assert 0 < clip["p99_error"] <= clip["max_error"]
    assert len(clip["joint_max_error"]) == joints and max(clip["joint_max_error"]) == pytest.approx(clip["max_error"])
    assert report["total"]["bytes"] == clip["bytes"] and report["total"]["joint_samples"] == frames * joints
    assert report["format"] == "jmc" and report["error_cm"] == 0.05 and report["shell_cm"] == 3.0
    assert report["plots"] == [{"path": str(out / "ratio.png"), "clips": [str(DATA / "01_01.bvh")]}]
    assert (out / "ratio.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (out / "errors.png").exists()  # the packing-error plots are --format packed's
    for words in ("bytes per joint-sample", "raw float32", "gzip -9", "xz -9", "(5.644 cm per unit: --unit-scale)",
                  "certified error (every sample): max", "total:"):
        assert words in text


def test_default_scale_takes_the_skeleton_for_a_human(capsys):
    """Without --unit-scale, --error and --shell (defaults 0.01 cm and 3 cm) become clip units by
    the skeleton's height against 170 cm, and the report says so."""
    path = jointmath.data.sample_clip_path()
    assert main([path]) == 0
    text = capsys.readouterr().out
    height = bvh.load(path).skeleton_height()
    assert "skeleton height taken as 170 cm" in text
    shown = float(re.search(r"bound: error 0.01 cm = ([0-9.e-]+) units", text).group(1))
    assert shown == pytest.approx(0.01 * height / 170, rel=1e-3)


def test_totals_over_clips():
    clips = [{"format": "jmc", "frames": 10, "joints": 2, "bytes": 50, "raw_float32_bytes": 800,
              "gzip9_bytes": 300, "xz9_bytes": 200, "source_bytes": 1000, "max_error_cm": 0.01, "p99_error_cm": 0.004,
              "max_error": 0.002, "p99_error": 0.0008, "unit_scale_cm": 5.0},
             {"format": "jmc", "frames": 5, "joints": 4, "bytes": 150, "raw_float32_bytes": 800,
              "gzip9_bytes": 500, "xz9_bytes": 400, "source_bytes": 2000, "max_error_cm": 0.008, "p99_error_cm": 0.006,
              "max_error": 0.0016, "p99_error": 0.0012, "unit_scale_cm": 5.0}]
    total = _report.totals(clips)
    assert total["bytes"] == 200 and total["joint_samples"] == 40 and total["bytes_per_joint_sample"] == 5.0
    assert total["ratio_float32"] == 8.0 and total["ratio_gzip9"] == 4.0 and total["ratio_xz9"] == 3.0
    assert total["max_error_cm"] == 0.01 and total["p99_error_cm"] == 0.006 and total["max_error"] == 0.002
    assert _report.totals([]) is None


@pytest.mark.parametrize("args", [["--format", "packed", "--error", "0.1"], ["--format", "packed", "--shell", "2"],
                                  ["--check"], ["--bits", "20"], ["--error", "0"], ["--error", "-1"],
                                  ["--shell", "nan"], ["--format", "zip"]])
def test_options_that_do_not_go_together_are_usage_errors(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main([jointmath.data.sample_clip_path(), *args])
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_format_packed_writes_a_compressed_npz(tmp_path, capsys):
    path = jointmath.data.sample_clip_path()
    assert main([path, "--format", "packed", "--bits", "20", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    archive = tmp_path / "sample_01_01.npz"
    with zipfile.ZipFile(archive) as z:
        assert all(info.compress_type == zipfile.ZIP_DEFLATED for info in z.infolist())
    report = json.loads((tmp_path / "report.json").read_text())
    [clip] = report["clips"]
    assert clip["format"] == "packed" and clip["bytes"] == os.path.getsize(archive)
    assert clip["bytes"] < clip["frames"] * clip["joints"] * 20  # smaller than the records it holds
    assert "bytes per joint-sample" in text and "xz -9" in text
    again = jointmath.load_packed(archive)
    source = bvh.load(path)
    np.testing.assert_array_equal(again.joints["t"], source.joints["t"])


def _small_clip(frames=3):
    q = jointmath.euler_to_quat(np.stack([np.zeros((frames, 3)), np.linspace([0, 0, 10], [0, 30, 80], frames)], 1),
                                "ZXY", degrees=True)
    t = np.array([[0.0, 1.0, 0.0], [0.0, 2.0, 0.5]]) + np.zeros((frames, 1, 3))
    t[:, 0] = np.linspace([0, 1, 0], [3, 1, 0.25], frames)
    return bvh.Clip(names=["Hips", "Arm"], parents=[-1, 0], offsets=[[0, 1, 0], [0, 2, 0.5]],
                    channels=[("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"),
                              ("Zrotation", "Xrotation", "Yrotation")],
                    frame_time=1 / 30, joints=jointmath.make_joints(q, t), end_sites=[1], end_offsets=[[0, 1, 0]],
                    name="small")


def test_save_packed_round_trip(tmp_path):
    clip = _small_clip()
    for bits in (10, 20):
        path = jointmath.save_packed(clip, tmp_path / f"c{bits}.npz", bits=bits)
        assert path == tmp_path / f"c{bits}.npz"
        again = jointmath.load_packed(path)
        assert again.names == clip.names and again.frame_time == clip.frame_time
        np.testing.assert_array_equal(again.joints["t"], clip.joints["t"])
        # the rotations as unpack_joints gives them back (independent float64 angle check)
        q0, q1 = clip.joints["q"].astype(np.float64), again.joints["q"].astype(np.float64)
        angle = 2 * np.arccos(np.clip(np.abs(np.sum(q0 * q1, axis=-1)), 0, 1))
        assert angle.max() < (2e-3 if bits == 10 else 3e-6)
    packed = jointmath.pack_joints(clip.joints, 20)
    with open(tmp_path / "file.npz", "wb") as f:  # a file open for writing
        jointmath.save_packed(clip, f, packed=packed)
    np.testing.assert_array_equal(jointmath.unpack_joints(packed)["t"], jointmath.load_packed(tmp_path / "file.npz").joints["t"])


def test_save_packed_refuses_what_load_packed_refuses(tmp_path):
    clip = _small_clip()
    target = tmp_path / "c.npz"
    target.write_bytes(b"earlier")
    cases = [
        (dataclasses.replace(clip, names=["Hips", ""]), ValueError, "cannot be written as BVH"),
        (dataclasses.replace(clip, frame_time=7200.0), ValueError, "frame_time must be between"),
    ]
    bad_t = clip.joints.copy()
    bad_t["t"][1, 1, 0] = 5.0  # Arm has no position channels: its translation must be its OFFSET
    cases.append((dataclasses.replace(clip, joints=bad_t), ValueError, "load_packed reads back"))
    for bad, error, words in cases:
        with pytest.raises(error, match=words):
            jointmath.save_packed(bad, target)
        assert target.read_bytes() == b"earlier"  # nothing written, nothing replaced
    with pytest.raises(TypeError, match="clip must be a jointmath.bvh.Clip"):
        jointmath.save_packed("walk.bvh", target)
    with pytest.raises(TypeError, match="packed must be a PACKED_JOINT or PACKED_JOINT64"):
        jointmath.save_packed(clip, target, packed=clip.joints)
    with pytest.raises(ValueError, match=r"packed must be \(frames, 2\)"):
        jointmath.save_packed(clip, target, packed=jointmath.pack_joints(clip.joints[:, :1]))
    with pytest.raises(ValueError, match="bits must be 10 or 20"):
        jointmath.save_packed(clip, target, bits=12)
    assert sorted(os.listdir(tmp_path)) == ["c.npz"] and target.read_bytes() == b"earlier"


def _parse_sjson(text):
    """ACL's simplified JSON (key = value, no commas needed, // comments) as Python values."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[{}\[\]=,]|[^\s{}\[\]=,"]+', re.sub(r"//[^\n]*", "", text))
    pos = 0

    def value():
        nonlocal pos
        token = tokens[pos]
        pos += 1
        if token == "{":
            return members("}")
        if token == "[":
            items = []
            while tokens[pos] != "]":
                if tokens[pos] == ",":
                    pos += 1
                    continue
                items.append(value())
            pos += 1
            return items
        if token.startswith('"'):
            return json.loads(token)
        if token in ("true", "false"):
            return token == "true"
        return float(token)

    def members(end):
        nonlocal pos
        result = {}
        while pos < len(tokens) and tokens[pos] != end:
            if tokens[pos] == ",":
                pos += 1
                continue
            key = tokens[pos]
            assert tokens[pos + 1] == "=", f"expected = after {key}"
            pos += 2
            result[key] = value()
        pos += 1
        return result

    return members(None)


def test_bvh_to_acl_sjson_writes_a_valid_raw_clip(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import bvh_to_acl_sjson as converter

    clip = _small_clip()
    scale = 2.0
    with open(tmp_path / "small.acl.sjson", "w") as f:
        assert converter.write_acl_sjson(clip, f, scale) == scale
    parsed = _parse_sjson((tmp_path / "small.acl.sjson").read_text())
    assert parsed["version"] == 5 and "settings" not in parsed  # ACL's default settings
    assert parsed["clip"]["num_samples"] == 3 and parsed["clip"]["sample_rate"] == pytest.approx(30)
    bones = parsed["bones"]
    assert [b["name"] for b in bones] == ["Hips", "Arm"] and [b["parent"] for b in bones] == ["", "Hips"]
    assert all(b["vertex_distance"] == 3.0 for b in bones)  # ACL's default shell, cm
    np.testing.assert_allclose([b["bind_translation"] for b in bones], clip.offsets * scale)
    assert [b["bind_rotation"] for b in bones] == [[0, 0, 0, 1]] * 2
    for j, track in enumerate(parsed["tracks"]):
        assert track["name"] == clip.names[j]
        # every float32 written so that it reads back exactly
        np.testing.assert_array_equal(np.array(track["rotations"], np.float32), clip.joints["q"][:, j])
        np.testing.assert_allclose(track["translations"], clip.joints["t"][:, j, :3].astype(np.float64) * scale,
                                   rtol=1e-7)
    assert converter.default_unit_scale(clip) == pytest.approx(170 / clip.skeleton_height())
