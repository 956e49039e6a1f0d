"""The mocap processing command (python -m jointmath). Every test here runs once, on the best
path (the `once` fixture skips the other ISA parameters): they run whole pipelines or start
processes, and the kernels themselves are tested per path in the family test files."""
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import jointmath
from jointmath import _job, bvh
from jointmath.__main__ import main

DATA = str(Path(__file__).resolve().parent / "data")


@pytest.fixture
def once(isa):
    if isa != jointmath.available_isas()[-1]:
        pytest.skip("runs once, on the best path")


def test_sample_is_a_small_valid_clip(once):
    assert os.path.getsize(_job.sample_path()) <= 300_000
    clip = bvh.load(_job.sample_path())
    assert clip.n_frames == 381 and clip.n_joints > 20
    assert os.path.exists(_job.sample_path() + ".source.txt")


def test_packed_archive_round_trip_and_old_format_refused(once, tmp_path):
    clip = bvh.load(_job.sample_path())
    result, packed, clip = _job.process_clip(clip)
    path = _job.save_packed(str(tmp_path / "clip.npz"), clip, packed)
    back = jointmath.load_packed(path)
    np.testing.assert_array_equal(back.joints, jointmath.unpack_joints(packed))
    # an archive of the earlier centred format has no pack_format entry: refused, not misread
    with np.load(path) as data:
        fields = {k: data[k] for k in data.files if k != "pack_format"}
    np.savez(tmp_path / "old.npz", **fields)
    with pytest.raises(ValueError, match=r"holds packed format 1, this jointmath reads format 2 only"):
        jointmath.load_packed(tmp_path / "old.npz")
    np.savez(tmp_path / "future.npz", **fields, pack_format=np.array(3))
    with pytest.raises(ValueError, match="holds packed format 3"):
        jointmath.load_packed(tmp_path / "future.npz")


def test_default_run_on_embedded_clip(once, capsys):
    assert main([]) == 0
    text = capsys.readouterr().out
    assert "381 frames" in text and "summary: 1 clips processed, 0 failed" in text


def test_directory_with_broken_file_and_report(once, tmp_path, capsys):
    data = tmp_path / "in"
    data.mkdir()
    for name in ("01_01.bvh", "zxy_extra_frame.bvh"):
        shutil.copy(os.path.join(DATA, name), data / name)
    (data / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    out = tmp_path / "out"
    assert main([str(data), "--out", str(out), "--bits", "20"]) == 1
    captured = capsys.readouterr()
    text = captured.out
    assert "FAILED" in text and "broken.bvh" in text
    assert "3/3" in captured.err  # the tqdm bar (test extra), on stderr
    assert (out / "errors.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # matplotlib (test extra)
    report = json.loads((out / "report.json").read_text())
    assert len(report["clips"]) == 2 and len(report["failed"]) == 1
    for r in report["clips"]:
        assert r["compression_ratio"] > 1
        assert len(r["angle_error_max"]) == r["joints"]
        assert max(r["angle_error_max"]) < 1e-3
        # positions in cm over a skeleton of ~100 cm: packing moves the hands by millimetres,
        # the float32 kinematics itself by far less
        assert 0 < r["end_effector_error_max"] < 2.0
        assert 0 <= r["forward_kinematics_error_max"] < 1e-3
        assert set(r["seconds"]) >= {"load", "continuity", "forward_kinematics", "pack", "unpack", "check"}
    clip = jointmath.load_packed(out / "01_01.npz")
    original = bvh.load(os.path.join(DATA, "01_01.bvh"))
    assert clip.joints.shape == original.joints.shape and clip.names == original.names
    assert np.allclose(clip.joints["t"], original.joints["t"], atol=1e-5)


def test_dask_local_cluster_matches(once, tmp_path):
    """One 2-worker cluster on 127.0.0.1: the command's results match the single-process run,
    a Clip loaded on a worker comes back whole (it pickles), and the workers run with
    WORKER_ENVIRON (the glibc settings the scale-out speed depends on)."""
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client

    from jointmath.__main__ import WORKER_ENVIRON, local_cluster, run_dask, run_local

    files = [_job.sample_path(), os.path.join(DATA, "zxy_extra_frame.bvh")]
    local = run_local(files, 10, None, None)
    with local_cluster() as cluster:
        remote = run_dask(files, 10, None, None, cluster.scheduler_address)
        with Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 2
            environs = client.run(lambda: {k: os.environ.get(k) for k in WORKER_ENVIRON})
            worker_isas = set(client.run(jointmath.isa).values())
            clip = client.submit(bvh.load, _job.sample_path(), pure=False).result()
    # the workers run this process's path, whatever JOINTMATH_ISA the session was started with
    assert worker_isas == {jointmath.isa()}
    for a, b in zip(local, remote):
        for key in ("frames", "joints", "angle_error_max", "angle_error_mean",
                    "end_effector_error_max", "compression_ratio"):
            assert a[key] == b[key]
    assert all(env == {k: str(v) for k, v in WORKER_ENVIRON.items()} for env in environs.values())
    expected = bvh.load(_job.sample_path())
    assert clip.names == expected.names and clip.frame_time == expected.frame_time
    np.testing.assert_array_equal(clip.joints, expected.joints)
    np.testing.assert_array_equal(clip.parents, expected.parents)


def test_dask_option_of_the_command(once, tmp_path, capsys):
    """--dask local: the report's results are those of the single-process command."""
    pytest.importorskip("dask.distributed")
    reports = []
    for extra in ([], ["--dask", "local"]):
        out = tmp_path / ("dask" if extra else "single")
        assert main([_job.sample_path(), "--out", str(out), *extra]) == 0
        reports.append(json.loads((out / "report.json").read_text())["clips"])
    capsys.readouterr()
    for key in ("frames", "angle_error_max", "end_effector_error_max", "compression_ratio"):
        assert reports[0][0][key] == reports[1][0][key]


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


def test_array_functions_inside_dask_array(once):
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


def test_without_matplotlib_and_tqdm(once, tmp_path, capsys, monkeypatch):
    """Both are optional: a note instead of the plot, no bar, the rest of the output as usual."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    out = tmp_path / "out"
    assert main([_job.sample_path(), _job.sample_path(), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "note: matplotlib is not installed, no plot written" in captured.out
    assert "2/2" not in captured.err
    assert not (out / "errors.png").exists() and (out / "report.json").exists()
