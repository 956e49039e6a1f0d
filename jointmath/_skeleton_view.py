"""What the viewers (Clip.plot, jointmath.player) share: the clip's up axis and its bones.

A clip does not record which axis is up: BVH's convention is Y up (CMU, Blender's exporter and
glTF all write Y up), so the viewers take ``up="y"`` unless told otherwise. Changing the view is
a cyclic permutation of the axes (a rotation, never a mirror), so the handedness is kept."""
import numpy as np

__all__ = ["axes_with_up", "bones", "checked_frame", "checked_up", "parents_of_points"]

UP_AXES = ("x", "y", "z")


def checked_up(up):
    """`up` as 0, 1 or 2 (X, Y or Z); TypeError / ValueError naming `up` for anything but
    "x", "y" or "z" (either case)."""
    if not isinstance(up, str):
        raise TypeError(f"up must be 'x', 'y' or 'z' (the clip's up axis), got {type(up).__name__}")
    if up.lower() not in UP_AXES:
        raise ValueError(f"up must be 'x', 'y' or 'z' (the clip's up axis), got {up!r}")
    return UP_AXES.index(up.lower())


def axes_with_up(up, position):
    """The clip's axes (indices 0, 1, 2) cyclically permuted so that axis `up` (0, 1 or 2)
    comes at `position`: (2, 0, 1) for up=1 at position 2 (matplotlib's Z up), (0, 1, 2) for
    up=1 at position 1 (the player's Y up)."""
    return tuple((up - position + k) % 3 for k in range(3))


def bones(clip, end_sites=True):
    """(B, 2) int64: (child, parent) column pairs of ``clip.positions(end_sites)``, one per bone:
    every joint with a parent, then every End Site tip with its joint."""
    parents = np.asarray(clip.parents, np.int64)
    children = np.flatnonzero(parents >= 0)
    pairs = [np.stack([children, parents[children]], axis=1)]
    if end_sites:
        sites = np.asarray(clip.end_sites, np.int64)
        pairs.append(np.stack([clip.n_joints + np.arange(len(sites)), sites], axis=1))
    return np.concatenate(pairs).astype(np.int64).reshape(-1, 2)


def parents_of_points(clip, end_sites=True):
    """(P,) int64: the parent column of each column of ``clip.positions(end_sites)`` (-1 for a root)."""
    parents = np.asarray(clip.parents, np.int64)
    if not end_sites:
        return parents.copy()
    return np.concatenate([parents, np.asarray(clip.end_sites, np.int64)])


def checked_frame(frame, n_frames):
    """`frame` as an index in [0, n_frames): an integer, negative ones counting from the end as
    NumPy's do; TypeError / ValueError naming `frame`."""
    if isinstance(frame, np.ndarray) and frame.ndim == 0 and frame.dtype.kind in "iu":
        frame = int(frame)
    if isinstance(frame, (bool, np.bool_)) or not isinstance(frame, (int, np.integer)):
        raise TypeError(f"frame must be an int, got {type(frame).__name__}")
    if n_frames == 0:
        raise ValueError("the clip has no frames to show")
    if not -n_frames <= frame < n_frames:
        raise ValueError(f"frame must be in [{-n_frames}, {n_frames}) for a clip of {n_frames} frames, got {frame}")
    return int(frame) % n_frames
