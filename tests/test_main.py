"""The mocap processing command (python -m jointmath) with the fixed-rate packing (--format packed),
and what every format shares (inputs, outputs, runners, the report). These tests run once (one asks
for every path): they run whole pipelines or start processes, and the kernels themselves are tested
per path in tests/kernels/. The default format (jmc, jointmath.compress) is tested in
test_command_compress.py."""
import dataclasses
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jointmath
from jointmath import _core, _files, _job, _memory, _packed, _report, _runners, bvh
from jointmath import __main__ as command
from jointmath.__main__ import main as command_main

DATA = str(Path(__file__).resolve().parent / "data")




def main(argv):
    """The command with the fixed-rate packing (--format packed), the pipeline these tests check."""
    return command_main(["--format", "packed", *argv])


def test_sample_is_a_small_valid_clip():
    assert os.path.getsize(jointmath.data.sample_clip_path()) <= 300_000
    clip = bvh.load(jointmath.data.sample_clip_path())
    assert clip.n_frames == 381 and clip.n_joints > 20
    assert os.path.exists(jointmath.data.sample_clip_path() + ".source.txt")


def loaded_joints(packed):
    """The joints load_packed gives for `packed`: unpacked, signs made continuous along the frames."""
    joints = jointmath.unpack_joints(packed)
    joints["q"] = jointmath.make_continuous(joints["q"], 0)
    return joints


def test_packed_archive_round_trip_and_old_format_refused(tmp_path):
    clip = bvh.load(jointmath.data.sample_clip_path())
    result, packed, clip, _ = _job.process_clip(clip)
    path = _packed.save_packed(clip, str(tmp_path / "clip.npz"), packed=packed)
    back = jointmath.load_packed(path)
    np.testing.assert_array_equal(back.joints, loaded_joints(packed))
    # an archive of the earlier centred format has no pack_format entry: refused, not misread
    with np.load(path) as data:
        fields = {k: data[k] for k in data.files if k != "pack_format"}
    np.savez(tmp_path / "old.npz", **fields)
    with pytest.raises(ValueError, match=r"is not a packed clip archive of format 2: it lacks pack_format .*centred quantiser"):
        jointmath.load_packed(tmp_path / "old.npz")
    np.savez(tmp_path / "future.npz", **fields, pack_format=np.array(3))
    with pytest.raises(ValueError, match="holds packed format 3"):
        jointmath.load_packed(tmp_path / "future.npz")


def copy_clips(folder, *names):
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(os.path.join(DATA, name), folder / name)
    return folder


def test_default_run_on_embedded_clip(capsys):
    assert main([]) == 0
    text = capsys.readouterr().out
    assert "381 frames" in text and "summary: 1 clips processed, 0 failed" in text


def test_directory_with_broken_file_and_report(tmp_path, capsys):
    data = copy_clips(tmp_path / "in", "01_01.bvh", "zxy_extra_frame.bvh")
    (data / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    out = tmp_path / "out"
    assert main([str(data), "--out", str(out), "--bits", "20"]) == 1
    captured = capsys.readouterr()
    text = captured.out
    assert "FAILED" in text and "broken.bvh" in text
    assert "3/3" in captured.err  # the tqdm bar (test extra), on stderr
    report = json.loads((out / "report.json").read_text())
    assert len(report["clips"]) == 2 and len(report["failed"]) == 1
    for r in report["clips"]:
        assert r["compression_ratio"] > 1
        assert len(r["angle_error_max"]) == len(r["position_error_max"]) == r["joints"]
        assert max(r["angle_error_max"]) < 1e-3
        # 20-bit packing moves the hands by far less than a millimetre on a skeleton of ~1.5 m
        assert 0 < r["end_effector_error_max_fraction"] < 1e-4
        assert set(r["seconds"]) == {"load", "forward_kinematics", "pack", "unpack", "errors"}
        assert "_series" not in r  # the per-frame series feed the plot, not the report
    clip = jointmath.load_packed(out / "01_01.npz")
    original = bvh.load(os.path.join(DATA, "01_01.bvh"))
    assert clip.joints.shape == original.joints.shape and clip.names == original.names
    assert np.allclose(clip.joints["t"], original.joints["t"], atol=1e-5)


def test_outputs_reload_as_packed_archive_and_bvh(tmp_path, capsys):
    """--out with --bvh and --fps: the .npz reloads with load_packed, the .bvh with bvh.load, both
    the resampled clip decoded from its packed form; the report and the output name both files."""
    out = tmp_path / "out"
    assert main([os.path.join(DATA, "zxy_extra_frame.bvh"), "--out", str(out), "--bvh", "--fps", "60"]) == 0
    text = capsys.readouterr().out
    packed = jointmath.load_packed(out / "zxy_extra_frame.npz")
    as_bvh = bvh.load(out / "zxy_extra_frame.bvh")
    with pytest.warns(bvh.BVHWarning):
        source = bvh.load(os.path.join(DATA, "zxy_extra_frame.bvh"))  # 150 frames at 100 fps: 1.49 s
    assert packed.joints.shape == as_bvh.joints.shape == (90, source.n_joints)
    assert as_bvh.frame_time == pytest.approx(1 / 60) and packed.frame_time == pytest.approx(1 / 60)
    assert as_bvh.names == source.names and as_bvh.channels == source.channels
    angle = jointmath.reference.angle_between(as_bvh.joints["q"], packed.joints["q"])
    assert angle.max() < 1e-4  # only the Euler angles' 9 digits between the two
    np.testing.assert_allclose(as_bvh.joints["t"], packed.joints["t"], atol=1e-4)
    report = json.loads((out / "report.json").read_text())
    assert report["clips"][0]["outputs"] == {"packed": str(out / "zxy_extra_frame.npz"),
                                             "bvh": str(out / "zxy_extra_frame.bvh")}
    for path in (*report["clips"][0]["outputs"].values(), str(out / "report.json"), str(out / "errors.png")):
        assert f"wrote {path}" in text
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]


def test_a_pose_of_one_frame_resamples_and_saves(tmp_path, capsys):
    """A clip of one frame (a T-pose file) goes through --fps like any clip: one frame out."""
    clip = bvh.load(os.path.join(DATA, "01_01.bvh"))
    pose = tmp_path / "pose.bvh"
    bvh.save(dataclasses.replace(clip, joints=clip.joints[:1].copy()), pose)
    out = tmp_path / "out"
    assert main([str(pose), "--out", str(out), "--bvh", "--fps", "30"]) == 0
    assert "1 clips processed, 0 failed" in capsys.readouterr().out
    packed, as_bvh = jointmath.load_packed(out / "pose.npz"), bvh.load(out / "pose.bvh")
    assert packed.joints.shape == as_bvh.joints.shape == (1, clip.n_joints)
    assert as_bvh.frame_time == pytest.approx(1 / 30)
    assert jointmath.reference.angle_between(packed.joints["q"], clip.joints["q"][:1]).max() < 2e-3


def test_each_stage_counts_its_own_frames():
    """With resampling, the stages before it divide by the source frames, the others by the
    output frames (the load of 381 frames is 381 frames, whatever --fps says)."""
    r = _job.process_file(jointmath.data.sample_clip_path(), fps=30, check=True)
    assert r["source_frames"] == 381 and r["frames"] == 95  # 380 frame times of 1/120 s: 3.167 s
    assert r["stage_frames"] == {"load": 381, "resample": 95, "forward_kinematics": 95,
                                 "pack": 95, "unpack": 95, "errors": 95, "check": 95}
    for name, seconds in r["seconds"].items():
        assert r["frames_per_second"][name] == pytest.approx(r["stage_frames"][name] / seconds)


def test_errors_a_person_can_read(capsys):
    """Skeleton height from the rest pose, end-effector error as a fraction of it and in cm with
    --unit-scale, the worst joints by name."""
    clip = bvh.load(jointmath.data.sample_clip_path())
    # the rest pose by hand: each joint's OFFSET added down the chain, End Sites included
    rest = {}
    for j, p in enumerate(clip.parents):
        rest[j] = clip.offsets[j] + (rest[int(p)] if p >= 0 else 0)
    ys = [v[1] for v in rest.values()] + [rest[int(p)][1] + o[1] for p, o in zip(clip.end_sites, clip.end_offsets)]
    height = max(ys) - min(ys)
    r = _job.process_file(jointmath.data.sample_clip_path())
    assert r["skeleton_height"] == pytest.approx(height)
    assert 25 < height < 30  # CMU units of 2.54/0.45 cm: a person of about 1.5 m
    assert r["end_effector_error_max_fraction"] == pytest.approx(r["end_effector_error_max"] / height)
    assert 0 < r["end_effector_error_max_fraction"] < 0.01  # 10-bit: well under 1 % of the height
    errors = np.array(r["position_error_max"])
    worst = [w["name"] for w in r["worst_joints"]]
    assert worst == [clip.names[j] for j in np.argsort(-errors, kind="stable")[:3]]
    assert set(worst) <= set(clip.names) and r["worst_joints"][0]["position_error_max"] == errors.max()
    # the end effectors are the End Site tips (every leaf joint of this clip has one): the leaf
    # joint's own packing error moves its tip, not the joint itself
    leaves = [j for j in range(clip.n_joints) if j not in set(clip.parents.tolist())]
    assert sorted(clip.end_sites.tolist()) == leaves
    assert r["end_effectors"] == [clip.names[j] + " End Site" for j in clip.end_sites]
    _, _, processed, unpacked = _job.process_clip(clip)
    tips = slice(clip.n_joints, None)
    before, after = processed.positions()[:, tips], dataclasses.replace(processed, joints=unpacked).positions()[:, tips]
    tip_error = np.sqrt(((after.astype(np.float64) - before) ** 2).sum(axis=-1))
    assert r["end_effector_error_max"] == pytest.approx(tip_error.max(), rel=1e-3)
    assert r["end_effector_error_mean"] == pytest.approx(tip_error.mean(), rel=1e-3)
    assert r["end_effector_error_max"] > max(errors[j] for j in leaves) * 1.01
    assert main([jointmath.data.sample_clip_path(), "--unit-scale", "2.54/0.45"]) == 0
    text = capsys.readouterr().out
    cm = r["end_effector_error_max"] * 2.54 / 0.45
    assert f"end-effector position error: max {cm:.3g} cm ({100 * r['end_effector_error_max_fraction']:.2g} % " \
           f"of height)" in text
    assert "worst joints: " + worst[0] in text


def test_end_effectors_without_end_sites_and_with_two():
    """A skeleton written without End Sites measures its leaf joints; a joint with two End Sites
    names them apart."""
    clip = bvh.load(jointmath.data.sample_clip_path())
    leaves = [j for j in range(clip.n_joints) if j not in set(clip.parents.tolist())]
    bare, *_ = _job.process_clip(dataclasses.replace(clip, end_sites=[], end_offsets=np.zeros((0, 3))))
    assert bare["end_effectors"] == [clip.names[j] for j in leaves]
    assert bare["end_effector_error_max"] == pytest.approx(max(bare["position_error_max"][j] for j in leaves))
    head = clip.names.index("Head")
    two, *_ = _job.process_clip(dataclasses.replace(clip, end_sites=[head, head], end_offsets=[[0, 2, 0], [1, 0, 0]]))
    assert two["end_effectors"] == ["Head End Site", "Head End Site 2"] + [clip.names[j] for j in leaves if j != head]


def test_check_against_float64(capsys):
    """--check adds a 'check' stage: the float32 kinematics against the float64 world positions
    of the errors stage (_core._positions64, plain C in double: the joints, then the End Site
    tips, as Clip.positions() orders them), which match the reference oracle to double's
    rounding, for quaternions of any scale."""
    with pytest.warns(bvh.BVHWarning):
        clip = bvh.load(os.path.join(DATA, "zxy_extra_frame.bvh"))

    def oracle(joints):
        world = jointmath.reference.forward_kinematics(joints, clip.parents)["m"]
        tips = world[:, clip.end_sites]
        return np.concatenate([world[..., 3], np.einsum("fejk,ek->fej", tips[..., :3], clip.end_offsets)
                               + tips[..., 3]], axis=1)

    positions = _core._positions64(clip.joints, clip.parents, clip.end_sites, clip.end_offsets)
    assert positions.shape == (clip.n_frames, clip.n_joints + len(clip.end_sites), 3)
    assert positions.dtype == np.float64
    np.testing.assert_allclose(positions, oracle(clip.joints), rtol=0, atol=1e-9)
    np.testing.assert_allclose(positions, clip.positions(), rtol=0, atol=1e-3)  # the float32 route's order
    scaled = clip.joints.copy()
    scaled["q"][::2] *= np.float32(1e-20)
    scaled["q"][1::2] *= np.float32(1e20)
    np.testing.assert_allclose(_core._positions64(scaled, clip.parents, clip.end_sites, clip.end_offsets),
                               oracle(scaled), rtol=0, atol=1e-9)
    for bad, error in (((clip.joints["q"], clip.parents), TypeError), ((clip.joints, clip.parents[:3]), ValueError),
                       ((clip.joints, clip.parents, [99], [[0, 0, 0]]), ValueError),
                       ((clip.joints, clip.parents, [1], [[0, 0]]), ValueError)):
        bad = bad + (clip.end_sites, clip.end_offsets)[len(bad) - 2:]
        with pytest.raises(error, match="joints|parents|end_"):
            _core._positions64(*bad)
    r = _job.process_file(os.path.join(DATA, "zxy_extra_frame.bvh"), check=True)
    assert 0 < r["forward_kinematics_error_max"] < 1e-3
    assert "check" not in _job.process_file(jointmath.data.sample_clip_path())["seconds"]  # off by default
    assert main([jointmath.data.sample_clip_path(), "--check"]) == 0
    assert "check: float32 forward kinematics vs float64: max" in capsys.readouterr().out


def test_one_error_figure_per_skeleton(tmp_path, capsys):
    """Two skeletons: two files, each with the joint names on its x axis, a title, axis labels
    and y from 0; the report says which clips each holds."""
    data = copy_clips(tmp_path / "in", "zxy_extra_frame.bvh")
    shutil.copy(jointmath.data.sample_clip_path(), data / "sample.bvh")
    out = tmp_path / "out"
    assert main([str(data), "--out", str(out)]) == 0
    capsys.readouterr()
    report = json.loads((out / "report.json").read_text())
    assert [p["path"] for p in report["plots"]] == [str(out / "errors-1.png"), str(out / "errors-2.png")]
    assert [p["clips"] for p in report["plots"]] == [[str(data / "sample.bvh")], [str(data / "zxy_extra_frame.bvh")]]
    for plot in report["plots"]:
        assert Path(plot["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    results = [_job.process_file(str(data / n)) for n in ("sample.bvh", "zxy_extra_frame.bvh")]
    assert len(_report._skeletons(results)) == 2
    for r in results:
        top, bottom = _report._error_figure([r]).axes
        assert [t.get_text() for t in top.get_xticklabels()] == r["names"]
        assert top.get_ylim()[0] == 0 and bottom.get_ylim()[0] == 0
        assert top.get_title() and bottom.get_title()
        assert "% of skeleton height" in top.get_ylabel() and top.get_xlabel() == "joint"
        assert bottom.get_xlabel() == "time (s)"
        assert [line.get_label() for line in bottom.get_lines()] == r["_series"]["names"]
        assert len(r["_series"]["names"]) == 3 and set(r["_series"]["names"]) <= set(r["end_effectors"])
    # one skeleton over several clips: one errors.png
    out2 = tmp_path / "out2"
    assert main([jointmath.data.sample_clip_path(), str(data / "sample.bvh"), "--out", str(out2)]) == 0
    assert json.loads((out2 / "report.json").read_text())["plots"][0]["path"] == str(out2 / "errors.png")


def test_progress_bars_and_warnings_above_them(capsys):
    """A bar per file for several clips, per stage for one; the reader's warning is written as a
    line of its own (tqdm.write), not through the warnings module into the bar."""
    zxy = os.path.join(DATA, "zxy_extra_frame.bvh")
    assert main([jointmath.data.sample_clip_path(), zxy]) == 0
    err = capsys.readouterr().err
    assert "2/2" in err
    # tqdm.write clears the bar's line (\r), writes the warning, and draws the bar again under it
    assert f"\rwarning: {zxy}:280: Frames: 150 but the file holds 151 frame lines; the last 1 (up to this line) are ignored\n" in err
    assert "BVHWarning" not in err
    assert main([zxy]) == 0
    err = capsys.readouterr().err
    assert "6/6" in err  # load, forward_kinematics, pack, unpack, errors, source sizes
    assert "\rwarning: " in err


@pytest.mark.parametrize("format", ["packed", "jmc"])
def test_clip_notes_are_printed_once_under_the_clip(format, tmp_path, capsys, monkeypatch):
    """Clip.notes (here: "auto" read Blender's position channels as whole local translations)
    are a line each under the clip's first line, without the file's name the note starts with,
    once, on stdout with the table; report.json keeps them whole, failed clips too."""
    data = copy_clips(tmp_path / "in", "01_01_blender.bvh", "01_01.bvh")
    blender = str(data / "01_01_blender.bvh")
    [note] = bvh.load(blender).notes
    assert note.startswith(f"{blender}: position channels read as whole local translations")
    out = tmp_path / "out"
    assert command_main(["--format", format, str(data), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    text = captured.out
    assert text.count("note:") == 1 and note not in captured.err
    table = text[text.index(f"\n{blender}: 120 frames x 31 joints"):].splitlines()
    assert table[2] == "  note: " + note[len(blender) + 2:]
    report = json.loads((out / "report.json").read_text())
    assert {os.path.basename(r["file"]): r["notes"] for r in report["clips"]} == {"01_01.bvh": [],
                                                                                  "01_01_blender.bvh": [note]}
    # a clip that fails after it was read keeps its notes
    monkeypatch.setattr(_job, "source_sizes", lambda path: 1 / 0)
    assert command_main(["--format", format, blender]) == 1
    text = capsys.readouterr().out
    assert f"\nFAILED {blender}: ZeroDivisionError: division by zero\n  note: position channels read as" in text
    assert text.count("note:") == 1


def test_same_names_in_two_folders_keep_apart(tmp_path, capsys):
    for folder in ("a", "b"):
        copy_clips(tmp_path / "in" / folder, "zxy_extra_frame.bvh")
    out = tmp_path / "out"
    a, b = tmp_path / "in" / "a" / "zxy_extra_frame.bvh", tmp_path / "in" / "b" / "zxy_extra_frame.bvh"
    assert main([str(a), str(b), "--out", str(out), "--bvh"]) == 0
    capsys.readouterr()
    report = json.loads((out / "report.json").read_text())
    outputs = [r["outputs"] for r in report["clips"]]
    assert outputs == [{"packed": str(out / d / "zxy_extra_frame.npz"), "bvh": str(out / d / "zxy_extra_frame.bvh")}
                       for d in ("a", "b")]
    assert all(os.path.isfile(p) for o in outputs for p in o.values())
    # names that only differ in case stay apart too (case-insensitive file systems): numbered in
    # the order of their paths
    plans = command.plan_outputs(["x/Walk.bvh", "x/walk.bvh", "x/walk.BVH"], "out")
    assert [p["packed"] for p in plans] == [os.path.join("out", n) for n in ("Walk-1.npz", "walk-3.npz", "walk-2.npz")]


def test_output_names_do_not_depend_on_the_argument_order(tmp_path, capsys):
    """A clip whose own output name no other input shares keeps it, whatever the order; the
    inputs that share one are numbered past every input's own name: walk.BVH given before
    walk-2.bvh took walk-2.npz, and load_packed("walk-2.npz") returned walk.BVH's motion."""
    names = ["walk.bvh", "walk.BVH", "walk-2.bvh", "walk-1.bvh", "Run.bvh", "a/run.bvh"]
    expected = ["walk-4", "walk-3", "walk-2", "walk-1", "Run", "a/run"]  # walk.BVH < walk.bvh in code points
    for order in itertools.permutations(range(len(names))):
        plans = command.plan_outputs([os.path.join("x", names[k]) for k in order], "out", bvh=True)
        assert [p["packed"] for p in plans] == [os.path.join("out", expected[k] + ".npz") for k in order]
        assert [p["bvh"] for p in plans] == [os.path.join("out", expected[k] + ".bvh") for k in order]
    # the reported case, end to end: each .npz holds its own clip (walk.BVH is the sample, 381 frames)
    folder = copy_clips(tmp_path / "in", "zxy_extra_frame.bvh")
    for name, source in (("walk.bvh", folder / "zxy_extra_frame.bvh"), ("walk.BVH", Path(jointmath.data.sample_clip_path())),
                         ("walk-2.bvh", folder / "zxy_extra_frame.bvh")):
        shutil.copy(source, folder / name)
    out = tmp_path / "out"
    assert main([str(folder / n) for n in ("walk.bvh", "walk.BVH", "walk-2.bvh")] + ["--out", str(out)]) == 0
    capsys.readouterr()
    assert [jointmath.load_packed(out / f"{n}.npz").n_frames for n in ("walk-1", "walk-2", "walk-3")] == [381, 150, 150]


def test_out_checked_before_the_first_clip(tmp_path, capsys, monkeypatch):
    """--out naming a file, or a folder that cannot be created: exit 2 with usage before any clip
    is read; an output that would replace an input: the same."""
    calls = []
    monkeypatch.setattr(_job, "process_file", lambda *a, **k: calls.append(a))
    (tmp_path / "file").write_text("x")
    for out in (tmp_path / "file", tmp_path / "file" / "sub"):
        with pytest.raises(SystemExit) as exit_:
            main([jointmath.data.sample_clip_path(), "--out", str(out)])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert "usage:" in err and f"--out {out}: cannot write there" in err
    data = copy_clips(tmp_path / "in", "zxy_extra_frame.bvh")
    with pytest.raises(SystemExit) as exit_:
        main([str(data), "--out", str(data), "--bvh"])
    assert exit_.value.code == 2 and "would replace an input clip" in capsys.readouterr().err
    assert calls == []
    assert (data / "zxy_extra_frame.bvh").read_bytes() == Path(DATA, "zxy_extra_frame.bvh").read_bytes()


def test_failed_write_marks_that_clip_and_the_run_goes_on(tmp_path, capsys):
    """An output path taken by a directory: that clip FAILED (exit 1), the next clips processed,
    report.json written and listing both."""
    data = tmp_path / "in"
    copy_clips(data, "zxy_extra_frame.bvh")
    shutil.copy(jointmath.data.sample_clip_path(), data / "a_sample.bvh")
    out = tmp_path / "out"
    (out / "a_sample.npz").mkdir(parents=True)
    assert main([str(data), "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "FAILED" in text and "a_sample.bvh" in text and "IsADirectoryError" in text
    report = json.loads((out / "report.json").read_text())
    assert [r["file"] for r in report["failed"]] == [str(data / "a_sample.bvh")]
    assert [r["file"] for r in report["clips"]] == [str(data / "zxy_extra_frame.bvh")]
    assert (out / "zxy_extra_frame.npz").is_file() and (out / "a_sample.npz").is_dir()
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]


def test_atomic_write_never_leaves_a_truncated_file(tmp_path):
    """A write that dies halfway leaves the earlier file as it was and no temporary file."""
    target = tmp_path / "clip.npz"
    target.write_bytes(b"earlier complete file")

    def dies_halfway(f):
        f.write(b"half of the new")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        _files.write_atomic(str(target), dies_halfway)
    assert target.read_bytes() == b"earlier complete file" and os.listdir(tmp_path) == ["clip.npz"]
    clip = bvh.load(jointmath.data.sample_clip_path())
    result, packed, clip, _ = _job.process_clip(clip)
    _packed.save_packed(clip, target, packed=packed)
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_files.umask())
    loaded = jointmath.load_packed(target)
    np.testing.assert_array_equal(loaded.joints, loaded_joints(packed))
    assert loaded.name == "clip"  # the file's stem, as bvh.load names a clip
    # through a symbolic link: the file it names is replaced, the link stays
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    _files.write_atomic(str(link), lambda f: f.write(b"through the link"))
    assert link.is_symlink() and target.read_bytes() == b"through the link"


def test_outputs_never_replace_an_input_reached_another_way(tmp_path):
    """--out through a symbolic link to the inputs' folder, or an input that is a link (or a hard
    link) to where an output would go: a usage error, and the input is left as it was."""
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(os.path.join(DATA, "zxy_extra_frame.bvh"), data / "clip.bvh")
    before = (data / "clip.bvh").read_bytes()
    (tmp_path / "alias").symlink_to(data)
    for out in (tmp_path / "alias", data):
        with pytest.raises(ValueError, match="would replace an input clip"):
            command.plan_outputs([str(data / "clip.bvh")], str(out), bvh=True)
    (tmp_path / "out").mkdir()
    os.link(data / "clip.bvh", tmp_path / "out" / "clip.bvh")
    with pytest.raises(ValueError, match="would replace an input clip"):
        command.plan_outputs([str(data / "clip.bvh")], str(tmp_path / "out"), bvh=True)
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "clip.bvh").symlink_to(tmp_path / "out2" / "clip.bvh")
    with pytest.raises(ValueError, match="would replace an input clip"):
        command.plan_outputs([str(tmp_path / "links" / "clip.bvh")], str(tmp_path / "out2"), bvh=True)
    with pytest.raises(SystemExit):
        main([str(data), "--out", str(tmp_path / "alias"), "--bvh"])
    assert (data / "clip.bvh").read_bytes() == before and os.listdir(data) == ["clip.bvh"]


def test_names_matplotlib_would_misread_still_plot(tmp_path, capsys):
    """A file name that is not UTF-8 and joint names with `$` (a formula to matplotlib): the
    figures are drawn with the names as they are, and the report is written."""
    data = tmp_path / "data"
    data.mkdir()
    odd = os.path.join(os.fsencode(data), b"caf\xe9.bvh")
    shutil.copy(os.path.join(DATA, "zxy_extra_frame.bvh"), odd)
    text = open(os.path.join(DATA, "01_01.bvh"), encoding="utf-8").read()
    (data / "dollar.bvh").write_text(text.replace("JOINT LHipJoint", "JOINT L$\\Hip$"), encoding="utf-8")
    out = tmp_path / "out"
    assert main([str(data), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert len(report["clips"]) == 2 and len(report["plots"]) == 2
    assert all(os.path.getsize(p["path"]) > 0 for p in report["plots"])
    assert "L$\\Hip$" in report["clips"][1]["names"] or "L$\\Hip$" in report["clips"][0]["names"]
    assert _report._label("L$\\Hip$") == "L\\$\\Hip\\$"
    assert _report._label(os.fsdecode(b"caf\xe9")) == "caf\ufffd"


def test_fps_that_bvh_cannot_hold_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["python -m jointmath"])
    with pytest.raises(SystemExit) as exc:
        main([os.path.join(DATA, "zxy_extra_frame.bvh"), "--out", str(tmp_path), "--bvh", "--fps", "1e-4"])
    assert exc.value.code == 2 and "BVH holds at most 3600 seconds a frame" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []
    # nor a packed clip (load_packed refuses what BVH cannot hold, and save_packed what load_packed
    # refuses): without --out such a rate only gives figures
    with pytest.raises(SystemExit) as exc:
        main([os.path.join(DATA, "zxy_extra_frame.bvh"), "--out", str(tmp_path), "--fps", "1e-4"])
    assert exc.value.code == 2 and "a packed clip holds at most 3600 seconds a frame" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []
    assert main([os.path.join(DATA, "zxy_extra_frame.bvh"), "--fps", "1e-4"]) == 0


@pytest.mark.parametrize("args", [["--fps", "0"], ["--fps", "-5"], ["--fps", "nan"], ["--fps", "inf"],
                                  ["--fps", "1e6"], ["--fps", "fast"], ["--fps", "1e-320"], ["--bogus"],
                                  ["--unit-scale", "0"], ["--unit-scale", "2.54/0"], ["--bits", "12"], ["--bvh"],
                                  ["--out", ""], ["--bvh", "--out", ""], ["--selfch"], ["--self"], ["--unit", "2"],
                                  ["--dask", "foo"], ["--dask", ""]])
def test_usage_errors_exit_2_with_usage(args, capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(_job, "process_file", lambda *a, **k: calls.append(a))
    with pytest.raises(SystemExit) as exit_:
        main([jointmath.data.sample_clip_path(), *args])
    assert exit_.value.code == 2
    assert "usage: python -m jointmath" in capsys.readouterr().err
    assert calls == []


def test_resampling_beyond_memory_fails_that_clip(monkeypatch, capsys):
    """A frame rate within bounds that still would not fit (a long clip): that clip FAILED with
    the size it needed, before allocating it; the other clips go on."""
    monkeypatch.setattr(_memory, "pipeline_budget", lambda: 50 << 20)
    assert main([jointmath.data.sample_clip_path(), os.path.join(DATA, "zxy_extra_frame.bvh"), "--fps", "5000"]) == 1
    text = capsys.readouterr().out
    assert "FAILED" in text and "GiB of working memory" in text and "choose a lower --fps" in text
    assert "summary: 1 clips processed, 1 failed" in text


def run_command(*args, cwd, timeout=120):
    """python -m jointmath --format packed in a fresh process running in `cwd`, importing the
    jointmath this test imported (an in-place build or the installed package, never the
    uncompiled checkout)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(jointmath.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "jointmath", "--format", "packed", *map(str, args)],
                          capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_fifo_named_bvh_is_skipped_not_waited_on(tmp_path):
    """A FIFO named *.bvh in a folder, or given by name, is skipped with a note (opening it would
    block forever: the command runs in a process of its own, with a timeout)."""
    data = copy_clips(tmp_path / "in", "zxy_extra_frame.bvh")
    os.mkfifo(data / "pipe.bvh")
    done = run_command(data, data / "pipe.bvh", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"note: skipped {data / 'pipe.bvh'}: not a regular file" in done.stderr
    assert "summary: 1 clips processed, 0 failed, 2 skipped" in done.stdout


def test_clip_without_frames_fails_alone(tmp_path, capsys):
    """A valid clip of 0 frames has nothing to compress: FAILED with that reason, no output
    written for it, the next clip processed."""
    text = Path(DATA, "zxy_extra_frame.bvh").read_text()
    (tmp_path / "empty.bvh").write_text(text[:text.index("MOTION")] + "MOTION\nFrames: 0\nFrame Time: 0.01\n")
    shutil.copy(jointmath.data.sample_clip_path(), tmp_path / "sample.bvh")
    out = tmp_path / "out"
    assert main([str(tmp_path), "--out", str(out), "--bvh"]) == 1
    assert "FAILED " + str(tmp_path / "empty.bvh") + ": ValueError: the clip has no frames" in capsys.readouterr().out
    assert sorted(os.listdir(out)) == ["errors.png", "report.json", "sample.bvh", "sample.npz"]


def test_no_clips_is_an_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no clips here")
    assert main([str(tmp_path / "empty")]) == 1
    assert f"error: no BVH clips found in {tmp_path / 'empty'}" in capsys.readouterr().err


def test_dask_local_runs_threads_never_a_cluster(capsys, monkeypatch):
    """--dask local: one thread per core of this process (one core: the plain loop), never a
    process cluster (slower on this job: see run_dask); the same results, and a note that says
    what runs."""
    monkeypatch.setattr(_runners, "local_cluster", lambda *a, **k: pytest.fail("started a cluster"))
    jobs = [{"path": p} for p in (jointmath.data.sample_clip_path(), os.path.join(DATA, "zxy_extra_frame.bvh"))]
    local = command.run_local(jobs)
    for cores, note in ((1, "2 clips on 1 thread of this process"), (2, "2 clips on 2 threads of this process")):
        monkeypatch.setattr(_runners, "_cores", lambda: cores)
        threaded = command.run_dask(jobs, "local")
        assert note in capsys.readouterr().err
        for a, b in zip(local, threaded):
            assert a["file"] == b["file"] and a["angle_error_max"] == b["angle_error_max"]


def test_threads_give_the_results_of_one_thread_in_job_order(tmp_path, capsys):
    """run_threads (what --dask local uses below a cluster's start): every clip's figures and
    outputs as in one thread, in job order, and each clip's reader warnings with that clip only
    (they are collected per read, not through the process-wide warnings filters, which threads
    would share)."""
    zxy = os.path.join(DATA, "zxy_extra_frame.bvh")
    paths = [jointmath.data.sample_clip_path(), zxy, os.path.join(DATA, "01_01.bvh")] * 3
    plans = [{"packed": str(tmp_path / f"{k}.npz")} for k in range(len(paths))]
    jobs = [{"path": p, "outputs": plan} for p, plan in zip(paths, plans)]
    one = command.run_local([dict(j, outputs=None) for j in jobs], bar=False)
    threaded = command.run_threads(jobs, 2, bar=True)
    assert [r["file"] for r in threaded] == paths
    for a, b in zip(one, threaded):
        for key in ("frames", "angle_error_max", "position_error_max", "end_effector_error_max", "worst_joints"):
            assert a[key] == b[key]
        expected = ["Frames: 150 but the file holds 151 frame lines"] if a["file"] == zxy else []
        assert [w.split(": ", 1)[1][:46] for w in b["warnings"]] == expected
    for plan, result in zip(plans, threaded):
        assert result["outputs"] == plan
        np.testing.assert_array_equal(jointmath.load_packed(plan["packed"]).joints,
                                      jointmath.load_packed(plans[paths.index(result["file"])]["packed"]).joints)
    err = capsys.readouterr().err
    assert f"{len(paths)}/{len(paths)}" in err and err.count("\rwarning: ") == 3


def test_packing_angles_in_c(rng):
    """The errors stage's rotation angles (C, without the GIL): 2 atan2(|v|, |w|) of
    conj(a.q) b.q, evaluated here in extended precision, for tiny angles (packing), any angle,
    any scale and either sign; bad arguments are refused."""
    shape = (300, 7)
    a = jointmath.make_joints(rng.standard_normal(shape + (4,)) * rng.uniform(1e-3, 1e3, shape + (1,)))
    b = a.copy()
    tiny = rng.standard_normal(shape + (4,)) * 10.0 ** rng.integers(-7, -2, shape + (1,))
    b["q"] = (a["q"] + tiny * np.abs(a["q"]).max(axis=-1, keepdims=True)) * rng.choice([-1.0, 2.0], shape + (1,))
    b["q"][::5] = rng.standard_normal((60, 7, 4))  # any angle
    p, q = a["q"].astype(np.longdouble), b["q"].astype(np.longdouble)
    v = p[..., 3:] * q[..., :3] - q[..., 3:] * p[..., :3] - np.cross(p[..., :3], q[..., :3])
    w = np.abs((p * q).sum(axis=-1))
    expected = 2 * np.arctan2(np.sqrt((v * v).sum(axis=-1)), w)
    angles = _core._packing_angles(a, b)
    assert angles.shape == shape and angles.dtype == np.float64
    np.testing.assert_allclose(angles, expected.astype(np.float64), rtol=1e-12, atol=1e-300)
    for bad in ((a, b[:, :3]), (a[:, ::2], b[:, ::2]), (a["q"], b["q"]), (a, [1, 2])):
        with pytest.raises((ValueError, TypeError), match="_packing_angles"):
            _core._packing_angles(*bad)


def test_threads_pass_an_unexpected_error_on(monkeypatch):
    """An exception process_file does not turn into a failed clip (a bug, or KeyboardInterrupt in
    the command) leaves run_threads as it leaves the one-thread loop."""
    def process_file(path, **kwargs):
        if path == "bad":
            raise RuntimeError("unexpected")
        return {"file": path, "warnings": []}

    monkeypatch.setattr(_job, "process_file", process_file)
    jobs = [{"path": p} for p in ["a", "bad"] + [f"c{k}" for k in range(20)]]
    for run in (lambda: command.run_threads(jobs, 2, bar=False), lambda: command.run_local(jobs, bar=False)):
        with pytest.raises(RuntimeError, match="unexpected"):
            run()


def test_command_process_keeps_clip_arrays_on_the_heap(tmp_path):
    """python -m jointmath sets glibc's mmap and trim thresholds of WORKER_ENVIRON for its own
    process (mallopt; in a new interpreter here, not in the test process), unless the user set
    either variable."""
    import platform

    code = "from jointmath.__main__ import _keep_clip_arrays_on_the_heap as f; print(f())"
    base = {k: v for k, v in os.environ.items() if k not in command.WORKER_ENVIRON}
    base["PYTHONPATH"] = os.pathsep.join([str(Path(jointmath.__file__).resolve().parent.parent),
                                          os.environ.get("PYTHONPATH", "")])  # as run_command
    # under the sanitizer recipe (libasan preloaded) malloc is ASan's, whose mallopt refuses
    glibc = platform.libc_ver()[0] == "glibc" and "libasan" not in os.environ.get("LD_PRELOAD", "")
    for extra, expected in (({}, glibc), ({"MALLOC_TRIM_THRESHOLD_": "65536"}, False)):
        done = subprocess.run([sys.executable, "-c", code], env={**base, **extra}, cwd=tmp_path,
                              capture_output=True, text=True, check=True)
        assert done.stdout.strip() == str(expected)
    source = Path(command.__file__).read_text()
    assert '__name__ == "__main__":\n    _keep_clip_arrays_on_the_heap()' in source


@pytest.fixture
def environ_restored():
    """Dask's nannies put the workers' pre-spawn variables (WORKER_ENVIRON's glibc settings,
    PYTHONHASHSEED) into this process's os.environ and leave them there: put it back as it was,
    so that the tests after a cluster's (and the interpreters they start) do not run under them."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_dask_local_cluster_matches(environ_restored, tmp_path):
    """One 2-worker cluster on 127.0.0.1: the command's results match the single-process run,
    a Clip loaded on a worker comes back whole (it pickles), and the workers run with
    WORKER_ENVIRON (the glibc settings the scale-out speed depends on)."""
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client

    from jointmath.__main__ import WORKER_ENVIRON, local_cluster, run_dask, run_local

    jobs = [{"path": p} for p in (jointmath.data.sample_clip_path(), os.path.join(DATA, "zxy_extra_frame.bvh"))]
    local = run_local(jobs)
    with local_cluster() as cluster:
        remote = run_dask(jobs, cluster.scheduler_address)
        with Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 2
            environs = client.run(lambda: {k: os.environ.get(k) for k in WORKER_ENVIRON})
            worker_isas = set(client.run(jointmath.isa).values())
            clip = client.submit(bvh.load, jointmath.data.sample_clip_path(), pure=False).result()
    # the workers run this process's path, whatever JOINTMATH_ISA the session was started with
    assert worker_isas == {jointmath.isa()}
    for a, b in zip(local, remote):
        for key in ("frames", "joints", "angle_error_max", "angle_error_mean", "position_error_max",
                    "end_effector_error_max", "compression_ratio", "warnings"):
            assert a[key] == b[key]
    assert all(env == {k: str(v) for k, v in WORKER_ENVIRON.items()} for env in environs.values())
    expected = bvh.load(jointmath.data.sample_clip_path())
    assert clip.names == expected.names and clip.frame_time == expected.frame_time
    np.testing.assert_array_equal(clip.joints, expected.joints)
    np.testing.assert_array_equal(clip.parents, expected.parents)


def test_dask_option_of_the_command(tmp_path, capsys, monkeypatch):
    """--dask local through the command: the clips on 2 threads, the report's results and
    outputs those of the single-thread command, in the same order."""
    monkeypatch.setattr(_runners, "_cores", lambda: 2)
    data = copy_clips(tmp_path / "in", "zxy_extra_frame.bvh")
    shutil.copy(jointmath.data.sample_clip_path(), data / "a.bvh")
    shutil.copy(jointmath.data.sample_clip_path(), data / "b.bvh")
    files = [str(data / n) for n in ("a.bvh", "b.bvh", "zxy_extra_frame.bvh")]
    reports = []
    for extra in ([], ["--dask", "local"]):
        out = tmp_path / ("dask" if extra else "single")
        assert main([str(data), "--out", str(out), *extra]) == 0
        reports.append(json.loads((out / "report.json").read_text())["clips"])
    assert "--dask local: 3 clips on 2 threads of this process" in capsys.readouterr().err
    assert [r["file"] for r in reports[1]] == files
    for a, b in zip(*reports):
        for key in ("frames", "angle_error_max", "end_effector_error_max", "compression_ratio", "warnings"):
            assert a[key] == b[key]
        assert open(a["outputs"]["packed"], "rb").read() == open(b["outputs"]["packed"], "rb").read()


def continuous_in_chunks(q):
    """make_continuous over a dask array chunked along frames (axis 0): each chunk is aligned to
    the last frame of the one before it through `prev` (the README's recipe)."""
    import dask
    import dask.array as da

    blocks, prev = [], None
    for block, rows in zip(q.to_delayed().ravel(), q.chunks[0]):
        fixed = dask.delayed(jointmath.make_continuous)(block, 0, prev)
        blocks.append(da.from_delayed(fixed, (rows,) + q.shape[1:], q.dtype))
        prev = fixed[-1]
    return da.concatenate(blocks)


def test_array_functions_inside_dask_array():
    """(frames, joints, 4) quaternions chunked along frames: map_blocks with the array functions
    and the chunked make_continuous give exactly the one-shot results, with read-only chunks."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(7)
    q = rng.standard_normal((20_000, 31, 4))
    q = (q / np.linalg.norm(q, axis=-1, keepdims=True)).astype(np.float32)
    q *= np.where(rng.random((20_000, 31, 1)) < 0.3, -1, 1).astype(np.float32)  # exporter sign noise
    q.flags.writeable = False
    lazy = da.from_array(q, chunks=(3_000, 31, 4))
    mats = lazy.map_blocks(jointmath.quat_to_matrix, drop_axis=2, new_axis=[2, 3],
                           chunks=lazy.chunks[:2] + ((3,), (3,)), dtype=np.float32)
    continuous = continuous_in_chunks(lazy)
    with_scheduler = {"scheduler": "threads"}
    np.testing.assert_array_equal(mats.compute(**with_scheduler), jointmath.quat_to_matrix(q))
    whole = jointmath.make_continuous(q, 0)
    np.testing.assert_array_equal(continuous.compute(**with_scheduler), whole)
    # without prev the chunk boundaries would break: the recipe is what makes it right
    naive = lazy.map_blocks(jointmath.make_continuous, 0, dtype=np.float32).compute(**with_scheduler)
    assert not np.array_equal(naive, whole)


def test_without_matplotlib_and_tqdm(tmp_path, capsys, monkeypatch):
    """Both are optional: a note instead of the plot, no bar, the rest of the output as usual."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    out = tmp_path / "out"
    assert main([jointmath.data.sample_clip_path(), os.path.join(DATA, "zxy_extra_frame.bvh"), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "note: matplotlib is not installed, no plot written" in captured.out
    assert "2/2" not in captured.err
    assert not (out / "errors.png").exists() and (out / "report.json").exists()


def test_any_failure_of_one_clip_leaves_the_others_and_the_report(tmp_path, monkeypatch, capsys):
    """A clip whose processing fails in a way nobody planned for (here an OverflowError, as a
    'Frames:' count beyond C's integers raised before) is reported FAILED; the batch went down
    with a traceback, without report.json, before."""
    data = copy_clips(tmp_path / "in", "zxy_extra_frame.bvh")
    (data / "huge.bvh").write_text((data / "zxy_extra_frame.bvh").read_text().replace("Frames: 150",
                                                                                    "Frames: 99999999999999999999"))
    (data / "odd.bvh").write_text((data / "zxy_extra_frame.bvh").read_text())
    read = bvh._read

    def failing_read(path, notes):
        if path.endswith("odd.bvh"):
            raise OverflowError("an unplanned failure")
        return read(path, notes)

    monkeypatch.setattr(bvh, "_read", failing_read)
    out = tmp_path / "out"
    assert main([str(data), "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "OverflowError: an unplanned failure" in text and "huge.bvh" in text
    assert "Frames: 99999999999999999999 but the file ends after 151 frames" in text
    report = json.loads((out / "report.json").read_text())
    assert len(report["clips"]) == 1 and len(report["failed"]) == 2


def test_lowest_fps_has_a_finite_frame_time(capsys):
    """--fps down to MIN_FPS, the smallest rate whose frame time 1/fps is finite, runs (one frame
    out); below it the rate is a usage error that says what range works (every clip FAILED on a
    frame time of inf before)."""
    assert math.isfinite(1 / command.MIN_FPS) and not math.isfinite(1 / math.nextafter(command.MIN_FPS, 0))
    assert main([jointmath.data.sample_clip_path(), "--fps", repr(command.MIN_FPS)]) == 0
    assert "1 frames x 31 joints (resampled from 381)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main([jointmath.data.sample_clip_path(), "--fps", "1e-320"])
    assert exit_.value.code == 2
    assert "must be a frame rate from 5.6e-309 (the smallest whose frame time 1/fps is finite) to 10,000" in \
        capsys.readouterr().err


@pytest.mark.parametrize("args", [["--selfch"], ["--self"], ["--selfcheck", "--seed", "-1"],
                                  ["--selfcheck", "--joints", "0"], ["--selfcheck", "--see", "1"],
                                  ["--selfcheck", "--joints", "many"]])
def test_selfcheck_abbreviations_and_bad_options_are_usage_errors(args, capsys, monkeypatch):
    """An abbreviation of --selfcheck ran the compression job (exit 0) and --seed -1 a NumPy
    traceback (exit 1): now both are usage errors, exit 2, before any work."""
    from jointmath import _selfcheck

    monkeypatch.setattr(_job, "process_file", lambda *a, **k: pytest.fail("ran the job"))
    monkeypatch.setattr(_selfcheck, "_checks", lambda *a, **k: pytest.fail("ran the self-check"))
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "usage: python -m jointmath" in err
    assert "must be an integer >=" in err or "unrecognized arguments" in err


def test_dask_address_problems_are_usage_errors(capsys, monkeypatch):
    """--dask with an address Dask cannot parse, with no scheduler answering, or without dask
    installed: exit 2 with what is wrong with --dask (a traceback and exit 1 before), no clip
    processed."""
    import socket

    monkeypatch.setattr(_job, "process_file", lambda *a, **k: pytest.fail("ran the job"))

    def usage_error(address):
        with pytest.raises(SystemExit) as exit_:
            main([jointmath.data.sample_clip_path(), "--dask", address])
        assert exit_.value.code == 2
        return capsys.readouterr().err

    if pytest.importorskip("dask.distributed"):
        import dask

        assert "--dask foo: not a scheduler address (missing port number" in usage_error("foo")
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with dask.config.set({"distributed.comm.timeouts.connect": "0.5s"}):
            assert f"--dask tcp://127.0.0.1:{port}: no scheduler answered there" in \
                usage_error(f"tcp://127.0.0.1:{port}")
    for name in ("dask", "dask.distributed", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    err = usage_error("tcp://127.0.0.1:8786")
    assert "--dask tcp://127.0.0.1:8786: needs dask.distributed" in err and 'pip install "jointmath[dask]"' in err


def test_scheduler_gets_absolute_paths(environ_restored, tmp_path, monkeypatch, capsys):
    """--dask ADDRESS with relative paths: a worker in another working folder (where another
    clip has the same relative name) processes the clip this process names and writes where
    this process's --out is (before, it read its own clips/box.bvh and wrote into its own
    folder, and the report described that clip, exit 0)."""
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client

    client_folder, worker_folder = copy_clips(tmp_path / "client" / "clips"), copy_clips(tmp_path / "worker" / "clips")
    shutil.copy(jointmath.data.sample_clip_path(), client_folder / "box.bvh")  # 381 frames
    shutil.copy(os.path.join(DATA, "zxy_extra_frame.bvh"), worker_folder / "box.bvh")  # 150 frames
    monkeypatch.chdir(tmp_path / "client")
    with command.local_cluster(n_workers=1) as cluster:
        with Client(cluster) as client:
            client.run(os.chdir, str(tmp_path / "worker"))
            assert set(client.run(os.getcwd).values()) == {str(tmp_path / "worker")}
        assert main([os.path.join("clips", "box.bvh"), "--out", "res", "--dask", cluster.scheduler_address]) == 0
    assert "381 frames x 31 joints" in capsys.readouterr().out
    report = json.loads((tmp_path / "client" / "res" / "report.json").read_text())
    (clip,) = report["clips"]
    assert clip["file"] == str(client_folder / "box.bvh") and clip["frames"] == 381
    assert clip["outputs"] == {"packed": str(tmp_path / "client" / "res" / "box.npz")}
    assert jointmath.load_packed(clip["outputs"]["packed"]).n_frames == 381
    assert not (tmp_path / "worker" / "res").exists()


def test_folder_that_cannot_be_listed_fails_alone(tmp_path, monkeypatch, capsys):
    """A directory argument whose listing fails (PermissionError) is a FAILED entry with the
    reason, the other clips are processed and the report written, exit 1 (a traceback before)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    good = copy_clips(tmp_path / "good", "zxy_extra_frame.bvh")
    listdir = os.listdir

    def failing_listdir(path="."):
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return listdir(path)

    monkeypatch.setattr(os, "listdir", failing_listdir)
    out = tmp_path / "out"
    assert main([str(locked), str(good), "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert f"FAILED {locked}: cannot list the folder: PermissionError: [Errno 13] Permission denied" in text
    assert "summary: 1 clips processed, 1 failed" in text
    report = json.loads((out / "report.json").read_text())
    assert [r["file"] for r in report["clips"]] == [str(good / "zxy_extra_frame.bvh")]
    assert [r["file"] for r in report["failed"]] == [str(locked)]
    assert main([str(locked)]) == 1  # nothing else: the reason, then no clips found
    err = capsys.readouterr().err
    assert f"FAILED {locked}: cannot list the folder" in err and "error: no BVH clips found" in err


def strict_json(path):
    """The JSON file at `path`, read as strict readers (jq, JSON.parse) do: no NaN or Infinity."""
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(Path(path).read_text(), parse_constant=refuse)


def test_report_is_strict_json_and_unmeasurable_figures_say_so(tmp_path, capsys):
    """Offsets near float32's limit: the packing errors, measured in float64, stay finite (the
    run printed 'inf units' before); the float32 kinematics of --check overflows: that figure is
    null in report.json (NaN / Infinity before, which is not JSON) and the clip's table says it
    cannot be measured."""
    chain = "".join(f"{'  ' * k}JOINT J{k}\n{'  ' * k}{{\n{'  ' * k}  OFFSET 0 3e38 0\n"
                    f"{'  ' * k}  CHANNELS 3 Zrotation Xrotation Yrotation\n" for k in range(1, 3))
    ends = "".join(f"{'  ' * k}}}\n" for k in range(2, 0, -1))
    (tmp_path / "far.bvh").write_text(
        "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
        "Yrotation\n" + chain + "      End Site\n      {\n        OFFSET 0 3e38 0\n      }\n" + ends +
        "}\nMOTION\nFrames: 2\nFrame Time: 0.5\n0 0 0 10 20 30 40 50 60 1 2 3\n0 0 0 10 20 30 40 50 60 4 5 6\n")
    out = tmp_path / "out"
    assert main([str(tmp_path / "far.bvh"), "--out", str(out), "--check"]) == 0
    text = capsys.readouterr().out
    (clip,) = strict_json(out / "report.json")["clips"]
    assert clip["forward_kinematics_error_max"] is None
    figures = [clip["end_effector_error_max"], clip["skeleton_height"], *clip["position_error_max"]]
    assert all(math.isfinite(x) for x in figures) and clip["end_effector_error_max"] > 0
    assert "warning: not measurable for this clip" in text and "forward_kinematics_error_max" in text
    assert "check: float32 forward kinematics vs float64: max not measurable" in text
    assert "inf" not in text and "nan" not in text
    assert _report.json_ready({"a": [1.0, float("nan")], "b": {"c": float("-inf")}, "d": "x"}) == \
        {"a": [1.0, None], "b": {"c": None}, "d": "x"}


def test_packing_error_is_not_float32_noise(isa):
    """At 20 bits the reported position errors (per joint and at the end effectors) are the
    packing's alone, on every path: within 1 % of a float64 recomputation through the oracle
    (measured with float32 kinematics they were 9-12 % above it, differing by path)."""
    with pytest.warns(bvh.BVHWarning):
        source = bvh.load(os.path.join(DATA, "zxy_extra_frame.bvh"))
    r, _, clip, unpacked = _job.process_clip(source, bits=20, fps=30)
    before, after = (jointmath.reference.forward_kinematics(j, clip.parents)["m"] for j in (clip.joints, unpacked))
    per_joint = np.linalg.norm(after[..., 3] - before[..., 3], axis=-1).max(axis=0)
    assert len(clip.end_sites) == 5  # every leaf has its End Site: the end effectors are their tips

    def tips(world):
        m = world[:, clip.end_sites]
        return np.einsum("fejk,ek->fej", m[..., :3], clip.end_offsets) + m[..., 3]

    effector = np.linalg.norm(tips(after) - tips(before), axis=-1)
    np.testing.assert_allclose(r["position_error_max"], per_joint, rtol=1e-2, atol=1e-9)
    assert r["end_effector_error_max"] == pytest.approx(effector.max(), rel=1e-2)
    assert r["end_effector_error_mean"] == pytest.approx(effector.mean(), rel=1e-2)


def test_rerun_lists_outputs_it_did_not_write(tmp_path, capsys):
    """A second run into the same --out deletes nothing, but notes and reports (stale_outputs)
    the files there that look like outputs and that it did not write: the first run's .bvh
    files and per-skeleton plots, and the .npz of a clip that fails this time; never an input."""
    data = copy_clips(tmp_path / "in", "zxy_extra_frame.bvh")
    shutil.copy(jointmath.data.sample_clip_path(), data / "walk.bvh")
    out = tmp_path / "out"
    assert main([str(data), "--out", str(out), "--bvh", "--fps", "30"]) == 0
    first = sorted(os.listdir(out))
    assert first == ["errors-1.png", "errors-2.png", "report.json", "walk.bvh", "walk.npz", "zxy_extra_frame.bvh",
                     "zxy_extra_frame.npz"]
    (data / "walk.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")  # fails this time
    capsys.readouterr()
    assert main([str(data), "--out", str(out)]) == 1
    text = capsys.readouterr().out
    stale = [str(out / n) for n in ("errors-1.png", "errors-2.png", "walk.bvh", "walk.npz", "zxy_extra_frame.bvh")]
    assert strict_json(out / "report.json")["stale_outputs"] == stale
    assert f"note: files in {out} that an earlier run wrote and this run did not write again" in text
    assert "\n".join(f"  {path}" for path in stale) in text
    assert sorted(os.listdir(out)) == sorted(first + ["errors.png"])  # nothing deleted
    # outputs beside the clips: a folder without an earlier report lists nothing (walk.bvh, a
    # clip of the user's not processed this time, was listed as an earlier run's output)
    assert main([str(data / "zxy_extra_frame.bvh"), "--out", str(data)]) == 0
    assert strict_json(data / "report.json")["stale_outputs"] == []
    capsys.readouterr()
    assert main([str(data / "zxy_extra_frame.bvh"), "--out", str(tmp_path / "new")]) == 0
    assert strict_json(tmp_path / "new" / "report.json")["stale_outputs"] == []
    assert "did not write again" not in capsys.readouterr().out
