"""jointmath.player: clips as a self-contained HTML page that plays them on a canvas.

The page is the template _player.html (package data) with one JSON block of data: per clip its
world positions (Clip.positions, our forward kinematics) as base64, int16 quantized over the
clip's box by default (2 bytes a coordinate: with base64's 4/3, 2/3 of the float32 positions)
or float32 as computed, and the parent of each point. No server, no network, no library: the
page is one file, and a notebook shows it in an iframe of its own (srcdoc), so that its script
and styles cannot meet the notebook's or another player's."""
import base64
import html
import json
import os
from importlib import resources

import numpy as np

from ._bvh_clip import Clip
from ._files import write_atomic
from ._skeleton_view import axes_with_up, checked_up, parents_of_points

__all__ = ["Player", "player"]

LAYOUTS = ("side", "overlay")
ENCODINGS = ("int16", "float32")
INT16_LEVELS = 65535  # steps between the box's low and high ends: int16's range
CONTROLS_HEIGHT = 40  # pixels below the canvas: the play button, the slider and the frame


def _template():
    return resources.files(__package__).joinpath("_player.html").read_text(encoding="utf-8")


def _pixels(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int number of pixels, got {type(value).__name__}")
    if not 16 <= value <= 8192:
        raise ValueError(f"{name} must be between 16 and 8192 pixels, got {value}")
    return int(value)


def _flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _encoded(positions, encoding):
    """The JSON entries of (F, P, 3) float32 positions: base64 data and, for int16, the box's
    low end (origin) and the step per axis, so that a coordinate is origin + (q + 32768) * step."""
    if encoding == "float32":
        return {"encoding": "float32", "data": base64.b64encode(positions.astype("<f4").tobytes()).decode("ascii")}
    values = positions.astype(np.float64).reshape(-1, 3)
    low, high = values.min(axis=0), values.max(axis=0)
    step = (high - low) / INT16_LEVELS
    levels = np.where(step > 0, (values - low) / np.where(step > 0, step, 1), 0)
    quantized = (np.rint(levels) - 32768).astype("<i2")
    return {"encoding": "int16", "origin": low.tolist(), "step": step.tolist(),
            "data": base64.b64encode(quantized.tobytes()).decode("ascii")}


def _checked_clips(clips):
    if isinstance(clips, Clip):
        return [clips]
    if isinstance(clips, (str, bytes)) or not hasattr(clips, "__iter__"):
        raise TypeError(f"clips must be a Clip or a sequence of Clips, got {type(clips).__name__}")
    clips = list(clips)
    if not clips:
        raise ValueError("clips must hold at least one Clip, got none")
    for n, clip in enumerate(clips):
        if not isinstance(clip, Clip):
            raise TypeError(f"clips[{n}] must be a jointmath.bvh.Clip, got {type(clip).__name__}")
    return clips


def _checked_titles(titles, clips):
    if titles is None:
        return [clip.name or f"clip {n + 1}" for n, clip in enumerate(clips)]
    if isinstance(titles, str):
        titles = [titles]
    if isinstance(titles, bytes) or not hasattr(titles, "__iter__"):
        raise TypeError(f"titles must be a sequence of str, one per clip, got {type(titles).__name__}")
    titles = list(titles)
    if len(titles) != len(clips):
        raise ValueError(f"titles must hold one title per clip ({len(clips)}), got {len(titles)}")
    for n, title in enumerate(titles):
        if not isinstance(title, str):
            raise TypeError(f"titles[{n}] must be a str, got {type(title).__name__}")
    return titles


class Player:
    """A self-contained HTML page that plays clips: what :func:`jointmath.player` and
    :meth:`jointmath.bvh.Clip.player` return.

    A notebook (Jupyter, VS Code) shows it as an output of its own (an iframe holding the
    page); :meth:`save` writes the page to a file any browser opens, without a server or a
    network.

    Attributes
    ----------
    html : str
        The whole page.
    width, height : int
        The size it takes in a notebook, in pixels (the canvas and its controls).

    See Also
    --------
    player : makes one.

    Examples
    --------
    >>> from jointmath import bvh, data
    >>> clip = bvh.load(data.sample_clip_path())
    >>> page = clip.player()
    >>> page
    <Player: 1 clip, 381 frames at 120 fps, 3.17 s, int16>
    >>> page.html.startswith("<!DOCTYPE html>"), "<iframe" in page._repr_html_()
    (True, True)
    """

    def __init__(self, page, width, height, summary):
        self.html = page
        self.width = width
        self.height = height
        self._summary = summary

    def __repr__(self):
        return f"<Player: {self._summary}>"

    def _repr_html_(self):
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" width="{self.width}" '
                f'height="{self.height}" style="border:0; max-width:100%" sandbox="allow-scripts" '
                f'title="jointmath player"></iframe>')

    def save(self, path):
        """Write the page to an HTML file.

        The file is written atomically (a temporary file in the same folder, renamed over
        `path` once complete), so a failed save leaves no partial file and the file it would
        replace as it was.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write, ending in ``.html`` or ``.htm``; its folder must exist.

        Returns
        -------
        str
            The path written, as given (``os.fspath``).

        Raises
        ------
        TypeError
            For a path that is neither a str nor an os.PathLike.
        ValueError
            For a path that does not end in ``.html`` or ``.htm``.
        IsADirectoryError
            For a path that names a folder.
        FileNotFoundError
            For a folder that does not exist.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> page = bvh.load(data.sample_clip_path()).player()
        >>> page.save("walk.html")
        'walk.html'
        >>> page.save("walk.bvh")
        Traceback (most recent call last):
        ...
        ValueError: path must name an .html or .htm file, got 'walk.bvh'
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike naming an .html file, got {type(path).__name__}")
        path = os.fspath(path)
        if not isinstance(path, str):  # a PathLike of bytes
            raise TypeError(f"path must be a str or os.PathLike naming an .html file, got bytes {path!r}")
        if os.path.isdir(path):
            raise IsADirectoryError(f"path {path!r} is a folder: name the .html file to write in it")
        if not path.lower().endswith((".html", ".htm")):
            raise ValueError(f"path must name an .html or .htm file, got {path!r}")
        write_atomic(path, lambda f: f.write(self.html), text=True)
        return path


def player(clips, *, titles=None, layout="side", up="y", width=480, height=360, encoding="int16",
           end_sites=True, autoplay=False, loop=True, follow=False):
    """A self-contained HTML player of one clip or several.

    The page draws each clip's skeleton on a canvas from its world positions (forward
    kinematics of every frame, computed here and embedded in the page), with a play/pause
    button, a frame slider and the time; drag the view to orbit it (then the space bar plays or
    pauses and the arrow keys step a frame), tick "follow" to keep the root in the middle. Frames are chosen from the time elapsed, so each clip plays at its own
    frame rate whatever the display's (a long clip too: the page decodes the positions once).
    It needs no server, no network and no library; notebooks (Jupyter, VS Code) show it as an
    output, and :meth:`Player.save` writes it to a file.

    Parameters
    ----------
    clips : Clip or sequence of Clip
        The clips to play together, from time 0 each at its own rate (a shorter one holds its
        last frame); they need not share a skeleton or a rate.
    titles : sequence of str, optional
        One title per clip (default: each clip's name, else "clip 1", "clip 2" ...).
    layout : {"side", "overlay"}, optional
        "side" (default): one panel per clip, side by side, each centred on its clip at one
        common scale; "overlay": all clips in one panel, in different colours.
    up : {"x", "y", "z"}, optional
        The clips' up axis. A clip does not record one; default "y", BVH's convention (and
        glTF's).
    width, height : int, optional
        Each panel's size in pixels (default 480 x 360).
    encoding : {"int16", "float32"}, optional
        How positions are embedded: "int16" (default) quantized over each clip's bounding
        box, within half a step, (box extent along the axis) / 65535 / 2, of the float32
        positions, in 2/3 of their size; "float32" exactly, in 4/3 of their size (base64).
    end_sites : bool, optional
        Draw the bones to the End Site tips (default True).
    autoplay : bool, optional
        Start playing when shown (default False: frame 0 until Play).
    loop : bool, optional
        Start again after the last frame (default True).
    follow : bool, optional
        Start with "follow" ticked: the view keeps each clip's root in the middle, at the
        scale of the skeleton rather than of the whole clip's box (default False).

    Returns
    -------
    Player
        The page: ``.html``, ``.save(path)``, shown by notebooks.

    Raises
    ------
    TypeError
        For clips that are not Clips, titles that are not str, a size that is not an int, a
        flag that is not a bool, an `up` that is not a str.
    ValueError
        For no clip, a clip of no frames or with non-finite world positions, titles not one
        per clip, an unknown layout, encoding or up axis, a size outside 16 to 8192 pixels;
        or a field of a clip that Clip() would refuse.

    See Also
    --------
    jointmath.bvh.Clip.plot : one frame as a matplotlib figure.

    Examples
    --------
    >>> import jointmath as jm
    >>> from jointmath import bvh, data
    >>> clip = bvh.load(data.sample_clip_path())
    >>> slower = bvh.resample(clip, 30)
    >>> page = jm.player([clip, slower], titles=["120 fps", "30 fps"])
    >>> page
    <Player: 2 clips, 381 frames at 120 fps, 3.17 s, int16>
    >>> page.save("compare.html")
    'compare.html'

    The page's size: about 2/3 of the clips' float32 world positions, plus the player itself.

    >>> floats = (clip.positions().nbytes + slower.positions().nbytes)
    >>> len(page.html) < 0.7 * floats + 30_000
    True
    """
    clips = _checked_clips(clips)
    titles = _checked_titles(titles, clips)
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be 'side' or 'overlay', got {layout!r}")
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be 'int16' or 'float32', got {encoding!r}")
    up_index = checked_up(up)
    width, height = _pixels(width, "width"), _pixels(height, "height")
    end_sites, autoplay, loop, follow = (_flag(end_sites, "end_sites"), _flag(autoplay, "autoplay"),
                                         _flag(loop, "loop"), _flag(follow, "follow"))
    entries = []
    for n, (clip, title) in enumerate(zip(clips, titles)):
        positions = clip.positions(end_sites=end_sites)
        if positions.shape[0] == 0:
            raise ValueError(f"clips[{n}] ({clip.name!r}) has no frames to play")
        finite = np.isfinite(positions).all(axis=(1, 2))
        if not finite.all():
            raise ValueError(f"clips[{n}] ({clip.name!r}) has non-finite world positions in frame "
                             f"{int(np.argmin(finite))}")
        entries.append({"title": title, "fps": clip.fps, "frames": int(positions.shape[0]),
                        "points": int(positions.shape[1]),
                        "parents": parents_of_points(clip, end_sites).tolist(),
                        **_encoded(positions, encoding)})
    data = {"layout": layout, "axes": list(axes_with_up(up_index, 1)), "width": width, "height": height,
            "autoplay": autoplay, "loop": loop, "follow": follow,
            "clips": entries}
    # inside <script>: "<" as \u003c, so that no title can close the element
    block = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    head, rest = _template().split("__TITLE__")
    middle, tail = rest.split("__DATA__")
    page = head + html.escape(" | ".join(titles)) + middle + block + tail
    first = clips[0]
    count = f"{len(clips)} clip{'s' if len(clips) > 1 else ''}"
    summary = f"{count}, {first.n_frames} frames at {first.fps:.6g} fps, {first.duration:.3g} s, {encoding}"
    panels = 1 if layout == "overlay" else len(clips)
    return Player(page, width * panels, height + CONTROLS_HEIGHT, summary)
