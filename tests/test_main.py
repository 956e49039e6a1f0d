"""The mocap processing command (python -m jointmath). Every test here runs once, on the best
path (the `once` fixture skips the other ISA parameters): they run whole pipelines or start
processes, and the kernels themselves are tested per path in the family test files."""
import json
import os
import shutil

import numpy as np
import pytest

import jointmath
from jointmath import _job, bvh
from jointmath.__main__ import main

DATA = "/work/shared/data/mocap"


@pytest.fixture
def once(isa):
    if isa != jointmath.available_isas()[-1]:
        pytest.skip("runs once, on the best path")


def test_sample_is_a_small_valid_clip(once):
    assert os.path.getsize(_job.sample_path()) <= 300_000
    clip = bvh.load(_job.sample_path())
    assert clip.n_frames == 381 and clip.n_joints > 20
    assert os.path.exists(_job.sample_path() + ".source.txt")


def test_default_run_on_embedded_clip(once, capsys):
    assert main([]) == 0
    text = capsys.readouterr().out
    assert "381 frames" in text and "summary: 1 clips processed, 0 failed" in text


def test_directory_with_broken_file_and_report(once, tmp_path, capsys):
    data = tmp_path / "in"
    data.mkdir()
    for name in ("01_01.bvh", "Boxing_Toes.bvh"):
        shutil.copy(os.path.join(DATA, name), data / name)
    (data / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    out = tmp_path / "out"
    assert main([str(data), "--out", str(out), "--bits", "20"]) == 1
    text = capsys.readouterr().out
    assert "FAILED" in text and "broken.bvh" in text
    report = json.loads((out / "report.json").read_text())
    assert len(report["clips"]) == 2 and len(report["failed"]) == 1
    for r in report["clips"]:
        assert r["compression_ratio"] > 1
        assert len(r["angle_error_max"]) == r["joints"]
        assert max(r["angle_error_max"]) < 1e-3
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

    files = [_job.sample_path(), os.path.join(DATA, "Boxing_Toes.bvh")]
    local = run_local(files, 10, None, None)
    with local_cluster() as cluster:
        remote = run_dask(files, 10, None, None, cluster.scheduler_address)
        with Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 2
            environs = client.run(lambda: {k: os.environ.get(k) for k in WORKER_ENVIRON})
            clip = client.submit(bvh.load, _job.sample_path(), pure=False).result()
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
