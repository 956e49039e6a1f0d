"""Clip.plot and jointmath.player without a browser: the figure's axes and bones, the page's size,
the positions it embeds (decoded here as the page decodes them, against a float64 oracle), what
it refuses, and Player.save. tests/test_player_browser.py plays the page in Chromium."""
import base64
import dataclasses
import html
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import jointmath as jm
from jointmath import bvh, reference

DATA = Path(__file__).resolve().parent / "data"
PAGE_FIXED_PART = 40_000  # bytes: the page's template, titles and skeletons, whatever the frames


@pytest.fixture(scope="module")
def clip():
    return bvh.load(jm.data.sample_clip_path())


def oracle_positions(clip):
    """(F, J + E, 3) float64 world positions from the float64 reference forward kinematics."""
    world = reference.forward_kinematics(clip.joints, clip.parents)["m"]
    parent = world[:, clip.end_sites]
    tips = np.einsum("fejk,ek->fej", parent[..., :3], clip.end_offsets) + parent[..., 3]
    return np.concatenate([world[..., 3], tips], axis=1)


def embedded(page_html):
    """The JSON block of a player's page."""
    block = re.search(r'<script type="application/json" id="jm-data">(.*?)</script>', page_html, re.S).group(1)
    return json.loads(block)


def decoded(entry):
    """(F, P, 3) float64 positions of one clip's entry, decoded as the page's script decodes them."""
    raw = base64.b64decode(entry["data"])
    if entry["encoding"] == "float32":
        return np.frombuffer(raw, "<f4").astype(np.float64).reshape(entry["frames"], entry["points"], 3)
    levels = np.frombuffer(raw, "<i2").astype(np.float64).reshape(entry["frames"], entry["points"], 3) + 32768
    return np.asarray(entry["origin"]) + levels * np.asarray(entry["step"])


# ------------------------------------------------------------------------------ plot --

@pytest.fixture
def plt():
    """matplotlib.pyplot drawing off screen (matplotlib is in the test extra)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot


def test_plot_draws_one_line_per_bone_on_equal_axes_with_y_up(clip, plt):
    ax = clip.plot(frame=200)
    try:
        assert ax.name == "3d" and ax.get_aspect() == "equal"
        spans = [np.ptp(limits) for limits in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim())]
        np.testing.assert_allclose(spans, spans[0], rtol=1e-9)
        assert len(ax.lines) == (clip.parents >= 0).sum() + len(clip.end_sites)
        # each line joins a point and its parent: (clip Z, clip X, clip Y) on matplotlib's (x, y, z), Y up
        expected = oracle_positions(clip)[200]
        drawn = {tuple(np.round(np.array(line.get_data_3d())[:, 1][[1, 2, 0]], 3)) for line in ax.lines}
        assert drawn == {tuple(np.round(p, 3)) for p in expected[1:]}  # every point but the root is a child
        assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_zlabel()) == ("Z", "X", "Y")
        bottom, top = ax.get_zlim()
        assert bottom <= expected[:, 1].min() and expected[:, 1].max() <= top
    finally:
        plt.close(ax.figure)


@pytest.mark.parametrize("up, labels", [("z", ("X", "Y", "Z")), ("X", ("Y", "Z", "X"))])
def test_plot_puts_the_given_up_axis_up(clip, plt, up, labels):
    ax = clip.plot(-1, up=up, end_sites=False)
    try:
        assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_zlabel()) == labels
        assert len(ax.lines) == (clip.parents >= 0).sum()
    finally:
        plt.close(ax.figure)


def test_plot_draws_on_given_axes_and_adds_to_them(clip, plt):
    fig = plt.figure()
    try:
        ax = fig.add_subplot(projection="3d")
        assert clip.plot(0, ax=ax, color="red") is ax
        assert clip.plot(10, ax=ax) is ax
        assert len(ax.lines) == 2 * 37 and ax.get_title() == ""
        # the view holds every frame drawn on it, the walk's first and last
        clip.plot(-1, ax=ax)
        limits = np.array([ax.get_xlim(), ax.get_ylim(), ax.get_zlim()])
        ends = oracle_positions(clip)[[0, -1]].reshape(-1, 3)[:, [2, 0, 1]]
        assert (limits[:, 0] <= ends.min(axis=0)).all() and (ends.max(axis=0) <= limits[:, 1]).all()
        np.testing.assert_allclose(np.ptp(limits, axis=1), np.ptp(limits[0]), rtol=1e-9)
        with pytest.raises(TypeError, match="ax must be matplotlib 3D axes"):
            clip.plot(0, ax=fig.add_subplot(2, 1, 1))
    finally:
        plt.close(fig)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"frame": 381}, ValueError, r"frame must be in \[-381, 381\)"),
    ({"frame": -382}, ValueError, "frame must be in"),
    ({"frame": 1.0}, TypeError, "frame must be an int"),
    ({"frame": True}, TypeError, "frame must be an int"),
    ({"up": "w"}, ValueError, "up must be 'x', 'y' or 'z'"),
    ({"up": 1}, TypeError, "up must be 'x', 'y' or 'z'"),
    ({"end_sites": "yes"}, TypeError, "end_sites must be a bool"),
])
def test_plot_refuses_bad_arguments(clip, plt, kwargs, error, message):
    before = len(plt.get_fignums())
    with pytest.raises(error, match=message):
        clip.plot(**kwargs)
    assert len(plt.get_fignums()) == before  # no figure left behind


def test_plot_without_matplotlib_names_the_extra(clip, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import matplotlib.pyplot fails
    with pytest.raises(ImportError, match=r'matplotlib.*jointmath\[plot\]'):
        clip.plot()


def test_plot_of_a_clip_without_frames_says_so(clip):
    empty = dataclasses.replace(clip, joints=clip.joints[:0])
    with pytest.raises(ValueError, match="no frames"):
        empty.plot()


# ---------------------------------------------------------------------------- player --


@pytest.mark.parametrize("encoding, factor", [("int16", 0.67), ("float32", 1.34)])
def test_page_size_is_within_the_bound(encoding, factor):
    """<= 1.5x the float32 world positions plus a fixed part, for the page and its notebook form."""
    long = bvh.load(DATA / "01_01.bvh")
    for clips in ([long], [long, bvh.resample(long, 30)]):
        page = jm.player(clips, encoding=encoding)
        floats = sum(c.positions().nbytes for c in clips)
        assert len(page.html.encode()) <= factor * floats + PAGE_FIXED_PART
        assert len(page._repr_html_().encode()) <= factor * floats + PAGE_FIXED_PART
    assert len(page.html.encode()) <= 1.5 * floats + PAGE_FIXED_PART


def test_int16_positions_decode_within_half_a_step(clip):
    entry = embedded(clip.player().html)["clips"][0]
    expected = oracle_positions(clip)
    extent = np.ptp(clip.positions().reshape(-1, 3).astype(np.float64), axis=0)
    step = extent / 65535
    np.testing.assert_allclose(entry["step"], step, rtol=1e-12)
    error = np.abs(decoded(entry) - clip.positions())
    assert (error <= step / 2 * (1 + 1e-9)).all()
    # and against the float64 oracle: the quantization plus the float32 forward kinematics
    fk_bound = 2e-6 * np.abs(expected).max()
    assert (np.abs(decoded(entry) - expected) <= step / 2 + fk_bound).all()


def test_float32_positions_decode_exactly(clip):
    entry = embedded(clip.player(encoding="float32", end_sites=False).html)["clips"][0]
    assert entry["points"] == clip.n_joints
    np.testing.assert_array_equal(decoded(entry), clip.positions(end_sites=False))


def test_page_holds_the_skeleton_rates_and_options(clip):
    slow = bvh.resample(clip, 30)
    page = jm.player([clip, slow], titles=["a", "b"], layout="overlay", up="z", autoplay=True, loop=False,
                     follow=True, width=300, height=200)
    data = embedded(page.html)
    assert [c["title"] for c in data["clips"]] == ["a", "b"]
    assert [c["fps"] for c in data["clips"]] == [clip.fps, slow.fps]
    assert [c["frames"] for c in data["clips"]] == [clip.n_frames, slow.n_frames]
    assert data["clips"][0]["parents"] == clip.parents.tolist() + clip.end_sites.tolist()
    assert data["axes"] == [1, 2, 0]  # (right, up, towards the viewer): clip Z up
    assert (data["layout"], data["autoplay"], data["loop"], data["follow"]) == ("overlay", True, False, True)
    assert (page.width, page.height) == (300, 240)  # one panel, and the controls below it
    assert (jm.player([clip, slow], width=300).width) == 600  # side by side


def test_page_needs_no_network(clip):
    page = clip.player().html
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert not re.search(r"\b(fetch|XMLHttpRequest|import\s*\(|WebSocket)\b", page)
    assert page.count("<script") == 2  # the data and the player, both inline


def test_titles_cannot_break_out_of_the_page(clip):
    nasty = '</script><script>alert(1)</script> & "quotes"'
    page = clip.player(titles=[nasty]).html
    assert "</script><script>alert" not in page
    assert embedded(page)["clips"][0]["title"] == nasty
    assert f"<title>{html.escape(nasty)}</title>" in page


def test_notebook_form_is_one_isolated_iframe(clip):
    page = clip.player()
    shown = page._repr_html_()
    assert shown.startswith("<iframe") and shown.endswith("</iframe>") and shown.count("<iframe") == 1
    srcdoc = re.search(r'srcdoc="([^"]*)"', shown).group(1)
    assert html.unescape(srcdoc) == page.html
    assert 'sandbox="allow-scripts"' in shown and f'width="{page.width}"' in shown


def test_default_titles_are_the_clip_names(clip):
    unnamed = dataclasses.replace(clip, name="")
    data = embedded(jm.player([clip, unnamed]).html)
    assert [c["title"] for c in data["clips"]] == [clip.name, "clip 2"]


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((), {}, TypeError, "missing"),
    (([],), {}, ValueError, "at least one Clip"),
    (("clip.bvh",), {}, TypeError, "clips must be a Clip or a sequence"),
    (([None],), {}, TypeError, r"clips\[0\] must be a jointmath.bvh.Clip"),
    ((None,), {"titles": ["a", "b"]}, ValueError, "one title per clip"),
    ((None,), {"titles": [1]}, TypeError, r"titles\[0\] must be a str"),
    ((None,), {"layout": "grid"}, ValueError, "layout must be 'side' or 'overlay'"),
    ((None,), {"encoding": "int8"}, ValueError, "encoding must be"),
    ((None,), {"up": "up"}, ValueError, "up must be"),
    ((None,), {"width": 10}, ValueError, "width must be between"),
    ((None,), {"height": 200.0}, TypeError, "height must be an int"),
    ((None,), {"autoplay": 1}, TypeError, "autoplay must be a bool"),
])
def test_player_refuses_bad_arguments(clip, args, kwargs, error, message):
    args = tuple(clip if a is None else a for a in args)
    with pytest.raises(error, match=message):
        jm.player(*args, **kwargs)


def test_player_refuses_clips_it_cannot_show(clip):
    with pytest.raises(ValueError, match=r"clips\[1\].*no frames"):
        jm.player([clip, dataclasses.replace(clip, joints=clip.joints[:0])])
    broken = clip.joints[:5].copy()
    broken["t"][3, 0, 0] = np.inf
    with pytest.raises(ValueError, match="non-finite world positions in frame 3"):
        jm.player(dataclasses.replace(clip, joints=broken))


def test_player_leaves_the_clip_as_it_was(clip):
    joints = clip.joints.copy()
    clip.player()
    assert np.array_equal(clip.joints["q"], joints["q"]) and np.array_equal(clip.joints["t"], joints["t"])


def test_save_writes_the_page_atomically(clip, tmp_path, monkeypatch):
    page = clip.player()
    target = tmp_path / "walk.html"
    assert page.save(target) == str(target)
    assert target.read_text(encoding="utf-8") == page.html
    # a save that fails half way leaves the old file whole and no temporary file behind
    target.write_text("old page")

    def failing_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="No space left"):
        page.save(str(target))
    assert target.read_text() == "old page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["walk.html"]


@pytest.mark.parametrize("path, error, message", [
    (b"walk.html", TypeError, "path must be a str or os.PathLike"),
    (None, TypeError, "path must be a str or os.PathLike"),
    ("walk.bvh", ValueError, "path must name an .html or .htm file"),
    ("folder.html", IsADirectoryError, "is a folder"),
    ("missing/walk.html", FileNotFoundError, "missing"),
])
def test_save_refuses_bad_paths(clip, tmp_path, monkeypatch, path, error, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.html").mkdir()
    with pytest.raises(error, match=message):
        clip.player().save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.html"]
