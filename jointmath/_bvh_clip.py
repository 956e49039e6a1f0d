"""The Clip: a skeleton and its frames, checked on construction and on every use, with what a
clip knows about itself (world transforms, positions, height, end effectors) and resampling."""
import dataclasses
import html
import numbers
from dataclasses import dataclass, field

import numpy as np

from . import _core
from ._bvh_continuity import channel_values
from ._bvh_format import _ROTATIONS, _checked_channels, _real_array, checked_convention
from ._records import checked_joints, refuse_masked

__all__ = ["Clip", "resample"]


def _empty_end_sites():
    return np.zeros(0, np.int64)


def _empty_end_offsets():
    return np.zeros((0, 3), np.float64)


def _checked_parents(parents, n_joints):
    """parents as an int64 (J,) array, after checking parents-before-children (-1 for a root)."""
    refuse_masked(parents, "parents")
    array = np.asarray(parents)
    if array.ndim != 1 or array.shape[0] != n_joints:
        raise ValueError(f"parents must hold one index per joint ({n_joints}), got shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"parents must be integers, got dtype {array.dtype}")
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:  # would wrap to negative
        j = int(np.argmax(array > np.iinfo(np.int64).max))
        raise ValueError(f"parents must list parents before children (parents[j] < j, -1 for a root): "
                         f"parents[{j}] = {int(array[j])}")
    array = array.astype(np.int64)
    bad = np.flatnonzero((array < -1) | (array >= np.arange(n_joints)))
    if bad.size:
        j = int(bad[0])
        raise ValueError(f"parents must list parents before children (parents[j] < j, -1 for a root): "
                         f"parents[{j}] = {int(array[j])}")
    return array


def _checked_skeleton(clip):
    """(parents, offsets, end_sites, end_offsets) of clip checked and converted as Clip() stores
    them (TypeError / ValueError naming the field); the methods that compute from the skeleton
    use these too, so that a field assigned since construction is checked before it is used,
    never wrapped or broadcast as NumPy would read it (an End Site at -1 taken as the last joint)."""
    n_joints = len(clip.names)
    parents = _checked_parents(clip.parents, n_joints)
    offsets = _real_array(clip.offsets, "offsets")
    if offsets.shape != (n_joints, 3):
        raise ValueError(f"offsets must have shape ({n_joints}, 3), one per joint, got shape {offsets.shape}")
    if not np.isfinite(offsets).all():
        raise ValueError("offsets must be finite")
    refuse_masked(clip.end_sites, "end_sites")
    end_sites = np.asarray(clip.end_sites)
    if end_sites.ndim != 1 or (end_sites.size and end_sites.dtype.kind not in "iu"):
        raise ValueError(f"end_sites must be a 1-D array of joint indices, got {end_sites.dtype} of shape "
                         f"{end_sites.shape}")
    end_sites = end_sites.astype(np.int64)
    end_offsets = _real_array(clip.end_offsets, "end_offsets")
    if end_offsets.shape != (len(end_sites), 3):
        raise ValueError(f"end_offsets must have shape ({len(end_sites)}, 3), one per End Site, "
                         f"got shape {end_offsets.shape}")
    if ((end_sites < 0) | (end_sites >= n_joints)).any():
        raise ValueError(f"end_sites must be joint indices in [0, {n_joints}), got {end_sites.tolist()}")
    if not np.isfinite(end_offsets).all():
        raise ValueError("end_offsets must be finite")
    return parents, offsets, end_sites, end_offsets


def _frame_seconds(value):
    """frame_time as a float: any real number (a Python or NumPy number, a 0-d array, a Fraction),
    positive and finite; TypeError for anything else (a str, a bool), naming it."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_, np.timedelta64)) or not isinstance(value, numbers.Real):
        raise TypeError(f"frame_time must be a real number of seconds, got {type(value).__name__}")
    try:
        seconds = float(value)
    except OverflowError:  # an int or Fraction beyond a double
        seconds = float("inf")
    if not (np.isfinite(seconds) and seconds > 0):
        raise ValueError(f"frame_time must be a positive number of seconds, got {value!r}")
    return seconds


def _checked_frames(clip):
    """clip.joints checked as Clip() checks it: a JOINT_QUAT array of shape (frames, joints)."""
    checked_joints(clip.joints)
    if clip.joints.ndim != 2 or clip.joints.shape[1] != len(clip.names):
        raise ValueError(f"joints must have shape (frames, {len(clip.names)}), got shape {clip.joints.shape}")
    return clip.joints


@dataclass(eq=False, repr=False)
class Clip:
    """A motion clip: a skeleton and its frames. Plain NumPy arrays and lists; pickles.

    The skeleton and ``joints`` are the whole truth: ``motion`` (the raw BVH channel values) is
    computed from them on access, and save() writes what ``joints`` holds, so a clip edited
    through ``joints`` (in place or with ``dataclasses.replace(clip, joints=...)``) saves as
    edited.

    Parameters
    ----------
    names : sequence of str
        Joint names, J of them, parents before children (file order).
    parents : array_like of int
        (J,) the parent's index of each joint, -1 for a root; stored as int64.
    offsets : array_like of float
        (J, 3) each joint's OFFSET; stored as float64.
    channels : sequence of sequences of str
        J tuples of channel names as in the file ("Xposition", "Zrotation", ...); each joint
        has 0 or 3 rotation channels and any of the 3 position channels.
    frame_time : real number
        Seconds per frame, positive and finite; stored as a float.
    joints : numpy.ndarray
        (F, J) JOINT_QUAT: each joint's local rotation (from its Euler channels) and
        translation (OFFSET + position channels, or the position channels alone on their axes
        where ``position_channels`` is "channel"). Kept as given, not copied.
    end_sites : array_like of int, optional
        (E,) the joint each End Site hangs from (default: none); stored as int64.
    end_offsets : array_like of float, optional
        (E, 3) each End Site's OFFSET; stored as float64.
    name : str, optional
        A label for displays (load() uses the file's stem).
    position_channels : {"offset+channel", "channel"}, optional
        The BVH convention of the position channels, which ``motion`` and save() use: added to
        the OFFSET (default; CMU files), or each joint's whole local translation on their axes
        (Blender's exports). load() records the one it read the file with. The joints are the
        same motion either way; only the channel values differ.
    notes : list of str, optional
        What a reader decided that the user should know, in words (load() says so when it took
        the position channels as whole translations; jointmath.gltf.load which skin and
        animation it read). Not compared by ``==``.

    Raises
    ------
    TypeError
        For a field of the wrong type (names that are not str, joints not of dtype
        JOINT_QUAT, a frame_time that is not a real number ...), naming the field.
    ValueError
        For fields that do not fit each other or the format: no joint, a parent after its
        child, shapes that disagree, an unknown or repeated channel, other than 0 or 3
        rotation channels, a frame_time that is not positive and finite, non-finite offsets,
        an unknown position_channels.

    See Also
    --------
    load, save, resample

    Notes
    -----
    ``joints`` is kept as given (a long capture is not held twice), while the skeleton fields
    are converted into arrays and lists of the clip's own: a clip made with
    ``dataclasses.replace(clip, ...)`` or ``Clip(joints=j, ...)`` shares its frames with ``clip``
    or ``j`` (pass ``joints=clip.joints.copy()`` for frames of its own). Fields may be assigned
    after construction; every method checks the ones it uses again (save() all of them). A clip
    as load() returned it also keeps the file's channel values (copies and pickles too), which
    ``motion`` and save() give for every frame whose joints are unchanged; a clip made with
    replace() or Clip() computes them from ``joints`` (the same rotations and Euler branches,
    float32 rounding apart).

    Equality: ``a == b`` is True when every field but ``notes`` is equal (arrays element by
    element, so a NaN is never equal); clips are not hashable. ``repr`` is one line; notebooks show the
    skeleton as a table (``_repr_html_``).

    Examples
    --------
    A two-joint arm, one frame, the elbow bent a quarter turn about Z:

    >>> import numpy as np
    >>> import jointmath as jm
    >>> from jointmath import bvh
    >>> q = jm.euler_to_quat([[[0, 0, 0], [0, 0, 90]]], "XYZ", degrees=True)
    >>> joints = jm.make_joints(q, [[[0, 0, 0], [0, 1, 0]]])
    >>> arm = bvh.Clip(names=["Shoulder", "Elbow"], parents=[-1, 0], offsets=[[0, 0, 0], [0, 1, 0]],
    ...                channels=[("Xrotation", "Yrotation", "Zrotation")] * 2, frame_time=1 / 30,
    ...                joints=joints, end_sites=[1], end_offsets=[[0, 1, 0]], name="arm")
    >>> arm
    <Clip 'arm': 2 joints, 1 frames at 30 fps, 0 s>
    >>> arm.positions().round(6).tolist()  # the joints, then the End Site tip
    [[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 1.0, 0.0]]]
    """

    names: list
    parents: np.ndarray
    offsets: np.ndarray
    channels: list
    frame_time: float
    joints: np.ndarray
    end_sites: np.ndarray = field(default_factory=_empty_end_sites)
    end_offsets: np.ndarray = field(default_factory=_empty_end_offsets)
    name: str = ""
    position_channels: str = "offset+channel"
    notes: list = field(default_factory=list)

    def __post_init__(self):
        if isinstance(self.names, (str, bytes)) or not hasattr(self.names, "__iter__"):
            raise TypeError(f"names must be a sequence of str, one per joint, got {type(self.names).__name__}")
        self.names = list(self.names)
        for j, name in enumerate(self.names):
            if not isinstance(name, str):
                raise TypeError(f"names[{j}] must be a str, got {type(name).__name__}")
        self.names = [str(n) for n in self.names]  # np.str_ as str
        n_joints = len(self.names)
        if not n_joints:
            raise ValueError("names must list at least one joint, got none")
        self.parents, self.offsets, self.end_sites, self.end_offsets = _checked_skeleton(self)
        self.channels = _checked_channels(self.channels, self.names)
        self.frame_time = _frame_seconds(self.frame_time)
        self.position_channels = checked_convention(self.position_channels, "position_channels")
        if isinstance(self.notes, (str, bytes)) or not hasattr(self.notes, "__iter__"):
            raise TypeError(f"notes must be a list of str, got {type(self.notes).__name__}")
        self.notes = [str(n) for n in self.notes]
        _checked_frames(self)

    # ------------------------------------------------------------------ derived values --

    @property
    def orders(self):
        """Each joint's rotation order, from its channels.

        Returns
        -------
        list of str
            "ZXY" for a joint with the channels Zrotation Xrotation Yrotation (intrinsic, as
            euler_to_quat reads uppercase orders); "" for a joint without rotation channels,
            which the Euler functions refuse: convert the joints that have an order.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> clip.orders[:2]
        ['ZYX', 'ZYX']
        """
        return ["".join(_ROTATIONS[c] for c in ch if c in _ROTATIONS) for ch in self.channels]

    @property
    def fps(self):
        """Frames per second, 1 / frame_time.

        Returns
        -------
        float

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> round(clip.fps, 3)
        120.0
        """
        return 1.0 / _frame_seconds(self.frame_time)

    @property
    def n_frames(self):
        """The number of frames, F: ``joints.shape[0]``.

        Returns
        -------
        int

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> clip.n_frames
        381
        """
        return self.joints.shape[0]

    @property
    def n_joints(self):
        """The number of joints, J: ``len(names)``.

        Returns
        -------
        int

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> clip.n_joints
        31
        """
        return len(self.names)

    @property
    def duration(self):
        """Seconds from the first frame to the last.

        Returns
        -------
        float
            (n_frames - 1) * frame_time; 0.0 for a clip of one frame or none.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> round(clip.duration, 3)
        3.167
        """
        return max(self.n_frames - 1, 0) * _frame_seconds(self.frame_time)

    @property
    def motion(self):
        """The raw BVH channel values, computed from ``joints``.

        Rotation channels: quat_to_euler of each joint's rotation in its order (degrees), or the
        other Euler solution of the same rotation, (a + 180, 180 - b, c + 180), where that one
        lies nearer the frame before (Blender's "compatible Euler": a middle angle passing
        beyond +-90 stays continuous, as a file's does); each value then moved by whole turns to
        within 180 degrees of the frame before, so that a curve does not jump by 360. A value
        that would reach +-CONTINUED_ANGLE_MAX is written as its own instead (within +-180: the
        one whole-turn jump, at that frame) and the channel continues from it. At gimbal lock
        (middle angle +-90) the third angle keeps its value from the frame before the lock and
        the first takes the rest (quat_to_euler sets the third to 0 there). Position
        channels: translation - OFFSET, or the translation itself where
        ``position_channels`` is "channel". The frames of a clip as load() returned it whose joints
        are unchanged keep the file's values exactly (edit a few frames in place and only those
        are computed, continuing from their neighbours).

        Returns
        -------
        numpy.ndarray
            (F, C) float32, C the number of channels of all joints in file order; a new array
            each time.

        Raises
        ------
        TypeError, ValueError
            For a field assigned since construction that Clip() would refuse.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> clip.motion.shape
        (381, 96)
        >>> import numpy as np
        >>> original = clip.motion
        >>> clip.joints["q"][10, 5] *= -1  # the same rotation as -q: frame 10 is computed again
        >>> edited = clip.motion
        >>> bool((edited[9] == original[9]).all()), bool(np.allclose(edited[10], original[10], atol=1e-3))
        (True, True)
        """
        offsets, channels = _checked_skeleton(self)[1], _checked_channels(self.channels, self.names)
        return channel_values(_checked_frames(self), offsets, channels, getattr(self, "_loaded_motion", None),
                              checked_convention(self.position_channels, "position_channels"))

    def world(self):
        """World transforms of every joint (jointmath.forward_kinematics).

        Returns
        -------
        numpy.ndarray
            (F, J) JOINT_MAT: each joint's 3x4 world matrix, translation in column 3.

        Raises
        ------
        TypeError, ValueError
            For a field assigned since construction that Clip() would refuse.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> world = clip.world()
        >>> import jointmath as jm
        >>> world.shape, world.dtype == jm.JOINT_MAT
        ((381, 31), True)
        """
        return _core.forward_kinematics(_checked_frames(self), _checked_skeleton(self)[0])

    def positions(self, end_sites=True):
        """World positions of the joints and the End Site tips.

        Parameters
        ----------
        end_sites : bool, optional
            Whether the End Site tips follow the joints (default True).

        Returns
        -------
        numpy.ndarray
            (F, J + E, 3) float32: the J joints, then the E End Site tips in ``end_sites`` order;
            (F, J, 3) with end_sites=False.

        Raises
        ------
        TypeError, ValueError
            For a field assigned since construction that Clip() would refuse; TypeError for an
            ``end_sites`` that is not a bool.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> clip.positions().shape, clip.positions(end_sites=False).shape
        ((381, 38, 3), (381, 31, 3))
        """
        if not isinstance(end_sites, (bool, np.bool_)):
            raise TypeError(f"end_sites must be a bool (True or False), got {type(end_sites).__name__}")
        parents, _, sites, site_offsets = _checked_skeleton(self)
        world = _core.forward_kinematics(_checked_frames(self), parents)["m"]
        joints = world[..., 3]
        if not end_sites or len(sites) == 0:
            return np.ascontiguousarray(joints)
        return np.concatenate([joints, _end_site_positions(world, sites, site_offsets).astype(np.float32)], axis=1)

    def rest_positions(self):
        """Positions of the joints and End Sites in the rest pose.

        The rest pose has every rotation the identity and every translation its OFFSET.

        Returns
        -------
        numpy.ndarray
            (J + E, 3) float64: the joints, then the End Sites.

        Raises
        ------
        TypeError, ValueError
            For a field assigned since construction that Clip() would refuse.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> clip.rest_positions().shape
        (38, 3)
        """
        parents, offsets, sites, site_offsets = _checked_skeleton(self)
        position = np.zeros((self.n_joints, 3))
        for j, p in enumerate(parents.tolist()):
            position[j] = offsets[j] + (position[p] if p >= 0 else 0)
        return np.concatenate([position, position[sites] + site_offsets])

    def height(self, axis=1):
        """The rest-pose skeleton's extent along an axis.

        Parameters
        ----------
        axis : int, optional
            0, 1 or 2 (X, Y or Z): a Python or NumPy integer or a 0-d integer array. Default 1,
            Y, BVH's up axis.

        Returns
        -------
        float
            max - min of ``rest_positions()`` along `axis`.

        Raises
        ------
        TypeError
            For an axis that is not an integer (a bool, a float, a masked array).
        ValueError
            For an axis other than 0, 1 or 2.

        See Also
        --------
        skeleton_height : the unit the command reports errors in.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> round(clip.height(), 3), round(clip.height(axis=0), 3)
        (25.651, 26.068)
        """
        refuse_masked(axis, "axis")
        if isinstance(axis, np.ndarray) and axis.ndim == 0 and axis.dtype.kind in "iu":
            axis = int(axis)
        if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"axis must be an int, 0, 1 or 2 (X, Y or Z), got {type(axis).__name__}")
        if axis not in (0, 1, 2):
            raise ValueError(f"axis must be 0, 1 or 2 (X, Y or Z), got {axis!r}")
        along = self.rest_positions()[:, axis]
        return float(along.max() - along.min())

    def skeleton_height(self):
        """The skeleton's size in its rest pose: the unit errors are reported in.

        Returns
        -------
        float
            ``height()``, the extent along Y (BVH's up axis); for a skeleton whose Y extent is
            0 (one lying in another plane) the larger of its X and Z extents. 0.0 only for a
            skeleton whose joints and End Sites all lie at one point.

        Raises
        ------
        TypeError, ValueError
            For a skeleton field assigned since construction that Clip() would refuse.

        Examples
        --------
        >>> import numpy as np
        >>> import jointmath as jm
        >>> from jointmath import bvh
        >>> joints = jm.make_joints(np.tile([0.0, 0.0, 0.0, 1.0], (1, 2, 1)), [[[0, 0, 0], [3, 0, 0]]])
        >>> lying = bvh.Clip(names=["Hips", "Leg"], parents=[-1, 0], offsets=[[0, 0, 0], [3, 0, 0]],
        ...                  channels=[(), ()], frame_time=1 / 30, joints=joints)
        >>> lying.height(), lying.skeleton_height()
        (0.0, 3.0)
        """
        height = self.height()
        return height if height > 0 else max(self.height(axis) for axis in (0, 2))

    @property
    def bare_leaves(self):
        """The joints that are nobody's parent and have no End Site.

        A skeleton written without End Sites ends in such joints (its hands, feet and head);
        they are end effectors themselves (``end_effectors``).

        Returns
        -------
        list of int
            Their indices, in joint order.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> clip.bare_leaves  # every leaf of this skeleton has its End Site
        []
        >>> import dataclasses, numpy as np
        >>> bare = dataclasses.replace(clip, end_sites=[], end_offsets=np.zeros((0, 3)))
        >>> [bare.names[j] for j in bare.bare_leaves][:3]
        ['LeftToeBase', 'RightToeBase', 'Head']
        """
        parents, _, end_sites, _ = _checked_skeleton(self)
        used = set(parents.tolist()) | set(end_sites.tolist())
        return [j for j in range(self.n_joints) if j not in used]

    @property
    def end_effectors(self):
        """The names of the clip's end effectors.

        Returns
        -------
        list of str
            Its End Site tips in ``end_sites`` order ("Head End Site"; a joint with several
            numbers them "Hand End Site 2" ...), then its ``bare_leaves`` by name.

        See Also
        --------
        end_effector_columns : where they are among ``positions()``.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> clip.end_effectors[:3]
        ['LeftToeBase End Site', 'RightToeBase End Site', 'Head End Site']
        """
        tips = _checked_skeleton(self)[2].tolist()
        names = []
        for k, j in enumerate(tips):
            repeat = tips[:k].count(j)
            names.append(f"{self.names[j]} End Site" + (f" {repeat + 1}" if repeat else ""))
        return names + [self.names[j] for j in self.bare_leaves]

    @property
    def end_effector_columns(self):
        """Where the ``end_effectors`` are among the columns of ``positions()``.

        Returns
        -------
        numpy.ndarray
            (len(end_effectors),) intp: the End Site tips' columns (J, J + 1, ...), then the
            bare leaves' own joint indices.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> tips = clip.positions()[:, clip.end_effector_columns]
        >>> tips.shape == (clip.n_frames, len(clip.end_effectors), 3)
        True
        """
        n_sites = len(_checked_skeleton(self)[2])
        return np.array([*range(self.n_joints, self.n_joints + n_sites), *self.bare_leaves], np.intp)

    # ------------------------------------------------------------------------- viewing --

    def plot(self, frame=0, ax=None, *, up="y", color=None, end_sites=True, linewidth=2.0):
        """Draw one frame as a stick figure with matplotlib.

        One line per bone (each joint to its parent, each End Site tip to its joint) on 3D
        axes with equal units on the three axes and the clip's up axis up.

        Parameters
        ----------
        frame : int, optional
            The frame to draw (default 0); a negative one counts from the end.
        ax : mpl_toolkits.mplot3d.axes3d.Axes3D, optional
            3D axes to draw on (``projection="3d"``): the view grows to hold what was drawn on
            them before, so several frames share one figure. Default: a new figure's, titled
            with the clip's name, the frame and its time.
        up : {"x", "y", "z"}, optional
            The clip's up axis, drawn up. A clip does not record one; default "y", BVH's
            convention.
        color : matplotlib color, optional
            The bones' colour (default "C0").
        end_sites : bool, optional
            Draw the bones to the End Site tips (default True).
        linewidth : float, optional
            The bones' width in points (default 2).

        Returns
        -------
        mpl_toolkits.mplot3d.axes3d.Axes3D
            The axes drawn on: ``len(ax.lines)`` more lines, one per bone.

        Raises
        ------
        ImportError
            When matplotlib is not installed (``pip install "jointmath[plot]"``).
        TypeError
            For a frame that is not an int, an ax that is not 3D axes, an `up` that is not a
            str, an end_sites that is not a bool.
        ValueError
            For a frame outside the clip, an up other than "x", "y" or "z", or a field that
            Clip() would refuse.

        See Also
        --------
        player : the whole clip, played in a notebook or a browser.

        Examples
        --------
        >>> import matplotlib.pyplot as plt
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> ax = clip.plot(frame=100)
        >>> len(ax.lines), len(clip.names) - 1 + len(clip.end_sites)  # one line per bone
        (37, 37)
        >>> ax.get_aspect(), ax.get_zlabel()  # Y, the clip's up axis, is up
        ('equal', 'Y')
        >>> plt.close(ax.figure)
        """
        from ._plot import plot_clip

        return plot_clip(self, frame, ax, up=up, color=color, end_sites=end_sites, linewidth=linewidth)

    def player(self, **options):
        """A self-contained HTML player of this clip, for a notebook or a browser.

        ``clip.player(...)`` is ``jointmath.player(clip, ...)``: see :func:`jointmath.player`
        for the page and its options.

        Parameters
        ----------
        **options
            jointmath.player's keyword arguments: titles, layout, up, width, height,
            encoding, end_sites, autoplay, loop, follow.

        Returns
        -------
        jointmath.Player
            The page: shown by notebooks, written by ``.save(path)``.

        Raises
        ------
        TypeError, ValueError
            As jointmath.player raises them.

        Examples
        --------
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> clip.player(autoplay=True)
        <Player: 1 clip, 381 frames at 120 fps, 3.17 s, int16>
        """
        from ._player import player

        return player(self, **options)

    # ----------------------------------------------------------------- comparison, display --

    def __eq__(self, other):
        if not isinstance(other, Clip):
            return NotImplemented
        return (self.names == other.names and self.channels == other.channels and self.name == other.name
                and self.position_channels == other.position_channels
                and self.frame_time == other.frame_time and self.joints.shape == other.joints.shape
                and np.array_equal(self.parents, other.parents) and np.array_equal(self.offsets, other.offsets)
                and np.array_equal(self.end_sites, other.end_sites)
                and np.array_equal(self.end_offsets, other.end_offsets)
                and np.array_equal(self.joints["q"], other.joints["q"])
                and np.array_equal(self.joints["t"], other.joints["t"]))

    __hash__ = None  # type: ignore[assignment]  # a Clip is mutable: not hashable

    def __repr__(self):
        return (f"<Clip {self.name!r}: {self.n_joints} joints, {self.n_frames} frames at {self.fps:.6g} fps, "
                f"{self.duration:.6g} s>")

    def _repr_html_(self, max_rows=200):
        rows = []
        for j in range(min(self.n_joints, max_rows)):
            p = int(self.parents[j])
            rows.append("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
                j, self.names[j], self.names[p] if p >= 0 else "", self.orders[j] or "-",
                " ".join(self.channels[j]), " ".join(f"{v:.6g}" for v in self.offsets[j]))) + "</tr>")
        if self.n_joints > max_rows:
            rows.append(f"<tr><td colspan='6'>... {self.n_joints - max_rows} more joints</td></tr>")
        head = "".join(f"<th>{h}</th>" for h in ("#", "joint", "parent", "order", "channels", "offset"))
        return (f"<div><b>Clip {html.escape(repr(self.name))}</b>: {self.n_joints} joints, "
                f"{len(self.end_sites)} End Sites, {self.n_frames} frames, {self.fps:.6g} fps, "
                f"{self.duration:.6g} s, height {self.height():.6g}"
                f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def _end_site_positions(world, end_sites, end_offsets):
    """(F, E, 3) float64 world positions of End Site tips: each End Site's OFFSET (end_offsets,
    (E, 3)) through the (F, J, 3, 4) world matrices `world` of its joint (end_sites, (E,))."""
    parent = world[:, end_sites]
    return np.einsum("fejk,ek->fej", parent[..., :3].astype(np.float64), end_offsets) + parent[..., 3]


def resample(clip, fps):
    """The clip at another frame rate.

    Frames at exact multiples of 1 / fps cover the same duration; rotations are slerped and
    translations lerped between the source frames around each new time
    (jointmath.resample_joints). Any ratio works (120 -> 30, 120 -> 100, 30 -> 60).

    Parameters
    ----------
    clip : Clip
        The clip to resample.
    fps : real number
        The new frames per second, positive and finite.

    Returns
    -------
    Clip
        A new clip with its own copy of the skeleton (editing one clip's offsets leaves the
        other's alone) and frame_time 1 / fps; it saves as BVH like any clip.

    Raises
    ------
    TypeError
        For a clip that is not a Clip, or an fps that is not a real number.
    ValueError
        For an fps that is not positive and finite, a clip of no frames, a field Clip() would
        refuse, or an output that would not fit in memory.

    Examples
    --------
    >>> from jointmath import bvh, data
    >>> clip = bvh.load(data.sample_clip_path())
    >>> at30 = bvh.resample(clip, 30)
    >>> at30.n_frames, round(at30.fps, 6), at30.duration <= clip.duration < at30.duration + at30.frame_time
    (95, 30.0, True)
    """
    if not isinstance(clip, Clip):
        raise TypeError(f"clip must be a jointmath.bvh.Clip, got {type(clip).__name__}")
    parents, offsets, end_sites, end_offsets = _checked_skeleton(clip)  # new arrays: a copy of the skeleton
    joints = _core.resample_joints(_checked_frames(clip), _frame_seconds(clip.frame_time), fps)
    return dataclasses.replace(clip, joints=joints, frame_time=1.0 / float(fps), names=list(clip.names),
                               parents=parents, offsets=offsets, channels=list(clip.channels), end_sites=end_sites,
                               end_offsets=end_offsets)
