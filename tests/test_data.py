"""jointmath.data: the clips embedded in the package, found from any working folder."""
import os
import shutil

import pytest

import jointmath
from jointmath import bvh, data


def test_sample_clip_path_names_the_embedded_clip_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = data.sample_clip_path()
    assert os.path.isabs(path) and os.path.isfile(path) and path.endswith(".bvh")
    assert os.path.isfile(path + ".source.txt")  # its attribution beside it
    assert bvh.load(path).n_frames == 381
    assert jointmath.data is data and "data" in jointmath.__all__


def test_clip_paths_lists_the_embedded_clips_or_a_folders(tmp_path):
    embedded = data.clip_paths()
    assert data.sample_clip_path() in embedded and embedded == sorted(embedded)
    assert all(p.lower().endswith(".bvh") and os.path.isfile(p) for p in embedded)
    for name in ("b.bvh", "a.BVH", "notes.txt"):
        shutil.copy(data.sample_clip_path(), tmp_path / name)
    (tmp_path / "folder.bvh").mkdir()  # not a file: left out
    assert data.clip_paths(tmp_path) == [str(tmp_path / "a.BVH"), str(tmp_path / "b.bvh")]
    assert data.clip_paths(str(tmp_path)) == data.clip_paths(tmp_path)
    with pytest.raises(FileNotFoundError):
        data.clip_paths(tmp_path / "missing")
    with pytest.raises(NotADirectoryError):
        data.clip_paths(tmp_path / "notes.txt")
