"""Clip.plot: one frame of a clip as a stick figure on matplotlib's 3D axes (matplotlib is
imported on the first call, so jointmath never needs it otherwise)."""
import dataclasses

import numpy as np

from ._skeleton_view import UP_AXES, axes_with_up, bones, checked_frame, checked_up

__all__ = ["plot_clip"]

MISSING_MATPLOTLIB = ('Clip.plot needs matplotlib, which is not installed: pip install matplotlib, '
                      'or jointmath with its plot extra: pip install "jointmath[plot]"')


def _matplotlib():
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(MISSING_MATPLOTLIB) from error
    return plt


def plot_clip(clip, frame=0, ax=None, *, up="y", color=None, end_sites=True, linewidth=2.0):
    """Draw frame `frame` of `clip` on `ax` (a new figure's 3D axes when None) and return the
    axes; the parameters are Clip.plot's."""
    up_index = checked_up(up)
    if not isinstance(end_sites, (bool, np.bool_)):
        raise TypeError(f"end_sites must be a bool, got {type(end_sites).__name__}")
    plt = _matplotlib()
    if ax is not None and getattr(ax, "name", None) != "3d":  # mpl_toolkits.mplot3d's Axes3D
        raise TypeError(f"ax must be matplotlib 3D axes (projection='3d'), got {type(ax).__name__}")
    index = checked_frame(frame, clip.n_frames)
    # one frame through forward kinematics, not the whole clip
    one = dataclasses.replace(clip, joints=clip.joints[index:index + 1])
    order = axes_with_up(up_index, 2)  # matplotlib's 3D axes have Z up
    points = one.positions(end_sites=bool(end_sites))[0].astype(np.float64)[:, order]
    if ax is None:
        ax = plt.figure().add_subplot(projection="3d")
        ax.set_title(f"{clip.name or 'clip'}: frame {index} ({index * clip.frame_time:.3f} s)")
    drawn_before = bool(ax.lines)  # frames drawn on these axes before: the view keeps them in
    color = "C0" if color is None else color
    for child, parent in bones(clip, bool(end_sites)).tolist():
        segment = points[[parent, child]]
        ax.plot(segment[:, 0], segment[:, 1], segment[:, 2], color=color, linewidth=linewidth,
                solid_capstyle="round")
    # a cube around the figure: equal units on the three axes
    low, high = points.min(axis=0), points.max(axis=0)
    if drawn_before:
        limits = np.array([ax.get_xlim(), ax.get_ylim(), ax.get_zlim()])
        low, high = np.minimum(low, limits[:, 0]), np.maximum(high, limits[:, 1])
    centre, half = (low + high) / 2, max(float((high - low).max()) / 2, 1e-12) * 1.05
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel(UP_AXES[order[0]].upper())
    ax.set_ylabel(UP_AXES[order[1]].upper())
    ax.set_zlabel(UP_AXES[order[2]].upper())
    return ax
