"""Compressed clips: compress() under a certified object-space error bound, the CompressedClip it
returns (bytes, sampling, statistics), decompress() and load_compressed()."""
import copy
import dataclasses
import math
import numbers
import os
import tempfile
from typing import NamedTuple

import numpy as np

from . import _codec_encode as _enc
from . import _codec_format as _fmt
from . import _core
from ._bvh_clip import Clip, _checked_frames, _checked_skeleton, _frame_seconds
from ._records import JOINT_QUAT

__all__ = ["CompressedClip", "CompressionStats", "TrackRate", "compress", "decompress", "load_compressed"]

#: ACL's default error and shell distance (centimetres) for a 170 cm human, which compress()
#: scales to a clip by its skeleton_height() / 170.
ACL_ERROR_CM, ACL_SHELL_CM, HUMAN_HEIGHT_CM = 0.01, 3.0, 170.0

# BVH channel names in the skeleton record: two letters each ("Xp" Xposition, "Zr" Zrotation)
_CHANNEL_NAMES = {a + k[0]: a + k for a in "XYZ" for k in ("position", "rotation")}
_CHANNEL_CODES = {name: code for code, name in _CHANNEL_NAMES.items()}


def _float32_up(x):
    """x as the float32 at or above it (statistics stored short, never below the measure)."""
    f = np.float32(x)
    return float(f if float(f) >= x else np.nextafter(f, np.float32(np.inf)))


_MODE_NAMES = {_enc.CONSTANT: "constant", _enc.QUANTIZED: "quantized", _enc.RAW: "raw", _enc.QUANTIZED4: "quantized4"}


class TrackRate(NamedTuple):
    """What one track costs: the joint, which track ("rotation" or "translation"), its mode
    ("constant": one value stored once; "quantized": integers on a step, Rice-coded;
    "quantized4": a rotation's four quaternion components on a step, Rice-coded; "raw": the
    float32 values), the quantization step (0.0 unless quantized: of the residual quaternion's
    x, y, z, or the quaternion's four components, for a rotation; in clip units for a
    translation) and the bits it takes per frame in
    the file."""

    joint: str
    track: str
    mode: str
    step: float
    bits_per_frame: float


@dataclasses.dataclass(frozen=True)
class CompressionStats:
    """The certified errors of a compressed clip (ACL's object-space metric, clip units) and its
    size.

    Attributes
    ----------
    max_error : float
        The largest error over every joint and frame; <= the clip's ``error``.
    p99_error : float
        The 99th percentile of the errors of every joint at every frame.
    joint_max_error : numpy.ndarray
        (J,) float64, the largest error of each joint over the frames.
    bytes_per_joint_sample : float
        ``nbytes`` / (frames x joints).
    bit_rates : tuple of TrackRate
        Every track's mode, step and bits per frame, joint by joint (rotation, translation).
    """

    max_error: float
    p99_error: float
    joint_max_error: np.ndarray
    bytes_per_joint_sample: float
    bit_rates: tuple


def _positive(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number in the clip's units, got {type(value).__name__}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite (clip units), got {value!r}")
    return value


def _refuse_non_finite(joints, names):
    finite = np.isfinite(joints["q"]).all(axis=-1) & np.isfinite(joints["t"][..., :3]).all(axis=-1)
    if not finite.all():
        f, j = (int(i[0]) for i in np.nonzero(~finite))
        raise ValueError(f"clip has a NaN or infinite value at joint {j} ({names[j]!r}), frame {f}: "
                         f"compress clips of finite values")
    zero = (joints["q"] == 0).all(axis=-1)
    if zero.any():
        f, j = (int(i[0]) for i in np.nonzero(zero))
        raise ValueError(f"clip has a zero quaternion (no rotation) at joint {j} ({names[j]!r}), frame {f}")


def compress(clip, error=None, shell=None):
    """A clip compressed under a certified error bound.

    The error is ACL's object-space metric: for every joint at every frame, both the clip's and
    the decoded local transforms are taken through the chain above the joint to object space,
    virtual vertices are placed at distance `shell` along the joint's local x, y and z axes, and
    the error is the largest distance between a vertex and its decoded self. compress() decodes
    the result exactly as decompress() will, measures every joint at every frame in float64 and
    spends more bits until the largest error is at most `error`: the bound holds on every sample.

    Parameters
    ----------
    clip : jointmath.bvh.Clip
        The clip; every rotation and translation finite.
    error : float, optional
        The largest error allowed, in the clip's units, positive. Default: ACL's 0.01 cm scaled
        to the clip as ``0.01 * clip.skeleton_height() / 170`` (a 170 cm human).
    shell : float, optional
        The distance of the virtual vertices from their joint, in the clip's units, positive.
        Default: ACL's 3 cm scaled the same way, ``3 * clip.skeleton_height() / 170``.

    Returns
    -------
    CompressedClip
        Its ``stats`` hold the errors measured and the bit rates chosen.

    Raises
    ------
    TypeError
        For a clip that is not a Clip, or an error or shell that is not a real number.
    ValueError
        For an error or shell that is not positive and finite, a clip of no frames, a clip with
        a NaN or infinite value or a zero quaternion (naming the joint and frame), a skeleton of zero size when error
        or shell is left to its default, or a field Clip() would refuse.

    See Also
    --------
    decompress, load_compressed, CompressedClip

    Notes
    -----
    The same clip and arguments give the same bytes on every ISA path and machine: the
    encoder's decisions use integer and correctly rounded float64 arithmetic only. How it works:
    docs/families/compression.md.

    Examples
    --------
    >>> import jointmath as jm
    >>> from jointmath import bvh, data
    >>> clip = bvh.load(data.sample_clip_path())
    >>> c = jm.compress(clip)
    >>> c.stats.max_error <= c.error, c.nbytes < clip.joints.nbytes // 8
    (True, True)
    >>> round(c.error * 170 / clip.skeleton_height(), 6)  # 0.01 cm on a 170 cm human
    0.01
    """
    if not isinstance(clip, Clip):
        raise TypeError(f"clip must be a jointmath.bvh.Clip, got {type(clip).__name__}")
    parents, offsets, end_sites, end_offsets = _checked_skeleton(clip)
    joints = _checked_frames(clip)
    frame_time = _frame_seconds(clip.frame_time)
    if error is None or shell is None:
        height = clip.skeleton_height()
        if not height > 0:
            raise ValueError("clip's skeleton has no size (skeleton_height() is 0): pass error and shell")
    error = _positive(error, "error") if error is not None else ACL_ERROR_CM * height / HUMAN_HEIGHT_CM
    shell = _positive(shell, "shell") if shell is not None else ACL_SHELL_CM * height / HUMAN_HEIGHT_CM
    if joints.shape[0] == 0:
        raise ValueError("clip has no frames: nothing to compress")
    if joints.shape[0] >= 1 << 31:
        raise ValueError(f"clip has {joints.shape[0]} frames; at most 2**31 - 1")
    joints = np.ascontiguousarray(joints)
    _refuse_non_finite(joints, clip.names)
    tracks, values, table, errors = _enc.certified_tracks(joints, parents, error, shell)
    raw_rows = np.zeros(tracks.n_rows, bool)
    for row, bits in tracks.raw_rows.items():
        raw_rows[row:row + len(bits)] = True
    streams = _enc.rice_streams(values, raw_rows)
    meta = {
        "skeleton": {"names": list(clip.names), "parents": parents.tolist(), "offsets": offsets.tolist(),
                     "channels": [" ".join(_CHANNEL_CODES[n] for n in c) for c in clip.channels], "end_sites": end_sites.tolist(),
                     "end_offsets": end_offsets.tolist(), "name": str(clip.name)},
        "stats": {"max_error": _float32_up(errors.max()), "p99_error": _float32_up(np.percentile(errors, 99)),
                  "joint_max_error": [_float32_up(e) for e in errors.max(axis=0)]},
    }
    b = _fmt.pack(dict(n_frames=joints.shape[0], n_joints=joints.shape[1], frame_time=frame_time, error=error,
                       shell=shell, meta=meta, tracks=table, streams=streams))
    return CompressedClip._from_bytes(b, "bytes")


class CompressedClip:
    """A clip compressed by compress(): its bytes, what they decode to, and their statistics.

    Attributes
    ----------
    error, shell : float
        The error bound and the virtual-vertex distance it was compressed with (clip units).
    frame_time : float
        Seconds per frame.
    num_frames, num_joints : int
    names : list of str
        The joints' names.
    nbytes : int
        The size of ``tobytes()``: the whole file, skeleton and all.
    stats : CompressionStats
        The errors measured when it was compressed, and the bit rates.

    Examples
    --------
    >>> import jointmath as jm
    >>> from jointmath import bvh, data
    >>> c = jm.compress(bvh.load(data.sample_clip_path()))
    >>> c.num_frames, c.num_joints, c.names[0]
    (381, 31, 'Hips')
    >>> jm.CompressedClip.frombytes(c.tobytes()).tobytes() == c.tobytes()
    True
    """

    __slots__ = ("_bytes", "_parts", "_frames", "_stats", "_skeleton")

    def __init__(self):
        raise TypeError("CompressedClip is made by jointmath.compress(), CompressedClip.frombytes() or "
                        "jointmath.load_compressed()")

    @classmethod
    def _from_bytes(cls, b, source):
        parts = _fmt.unpack(b, source)
        self = object.__new__(cls)
        self._bytes = bytes(b)
        self._parts = parts
        self._frames = None
        self._stats = None
        self._skeleton = self._skeleton_clip(source)  # the skeleton record checked as Clip() checks one
        stats = parts["meta"].get("stats") if isinstance(parts["meta"], dict) else None
        try:
            joint_max = np.array(stats["joint_max_error"], np.float64)
            max_error, p99 = float(stats["max_error"]), float(stats["p99_error"])
            ok = joint_max.shape == (parts["n_joints"],)
        except (TypeError, KeyError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"{source}: not a valid compressed clip: its statistics record is malformed")
        self._stats = CompressionStats(max_error, p99, joint_max, len(self._bytes) / (parts["n_frames"] * parts["n_joints"]),
                                       self._bit_rates())
        return self

    def _skeleton_clip(self, source="bytes", joints=None):
        p = self._parts
        s = p["meta"].get("skeleton") if isinstance(p["meta"], dict) else None
        if joints is None:
            joints = np.zeros((0, p["n_joints"]), JOINT_QUAT)
        try:
            return Clip(names=s["names"], parents=s["parents"], offsets=np.array(s["offsets"], np.float64).reshape(-1, 3),
                        channels=[tuple(_CHANNEL_NAMES[n] for n in c.split()) for c in s["channels"]], frame_time=p["frame_time"], joints=joints,
                        end_sites=np.array(s["end_sites"], np.int64),
                        end_offsets=np.array(s["end_offsets"], np.float64).reshape(-1, 3), name=str(s["name"]))
        except (TypeError, KeyError, ValueError, IndexError, AttributeError) as exc:
            raise ValueError(f"{source}: not a valid compressed clip: its skeleton record is invalid ({exc})") from None

    def _clip_of(self, joints):
        """A Clip of the checked skeleton and `joints` (a new (F, J) JOINT_QUAT array), made
        without checking the skeleton again: a shallow copy of the frameless clip checked when
        the bytes were loaded, with arrays and lists of its own."""
        clip = copy.copy(self._skeleton)
        for name, value in list(vars(clip).items()):
            if isinstance(value, (np.ndarray, list)):
                setattr(clip, name, value.copy())
        clip.joints = joints
        return clip

    def _bit_rates(self):
        p = self._parts
        tracks, names = p["tracks"], p["meta"]["skeleton"]["names"]
        counts = _fmt.track_rows(tracks)
        ends = np.concatenate([[0], np.cumsum(p["stream_nbytes"], dtype=np.int64)])
        rates = []
        for j, (rot_count, trans_count) in enumerate(counts.tolist()):
            for track, mode, row, step, count in (
                    ("rotation", int(tracks["rot_mode"][j]), int(tracks["rot_row"][j]), float(tracks["rot_step"][j]), rot_count),
                    ("translation", int(tracks["trans_mode"][j]), int(tracks["trans_row"][j]),
                     float(tracks["trans_step"][j]), trans_count)):
                bits = 8 * int(ends[row + count] - ends[row]) / p["n_frames"] if count else 0.0
                rates.append(TrackRate(names[j], track, _MODE_NAMES[mode],
                                       step if mode in (_enc.QUANTIZED, _enc.QUANTIZED4) else 0.0, bits))
        return tuple(rates)

    # ------------------------------------------------------------------------ attributes --
    @property
    def error(self):
        """The error bound it was compressed with (clip units)."""
        return self._parts["error"]

    @property
    def shell(self):
        """The virtual-vertex distance of the error metric (clip units)."""
        return self._parts["shell"]

    @property
    def frame_time(self):
        """Seconds per frame."""
        return self._parts["frame_time"]

    @property
    def num_frames(self):
        """The number of frames."""
        return self._parts["n_frames"]

    @property
    def num_joints(self):
        """The number of joints."""
        return self._parts["n_joints"]

    @property
    def names(self):
        """The joints' names (a new list)."""
        return list(self._parts["meta"]["skeleton"]["names"])

    @property
    def nbytes(self):
        """The size of tobytes(): the whole file, skeleton and tables included."""
        return len(self._bytes)

    @property
    def stats(self):
        """The errors measured when it was compressed, and the bit rates."""
        return self._stats

    def __reduce__(self):  # pickles (to worker processes) as its bytes
        return (CompressedClip.frombytes, (self._bytes,))

    def __repr__(self):
        return (f"<CompressedClip {self._parts['meta']['skeleton']['name']!r}: {self.num_joints} joints, "
                f"{self.num_frames} frames, {self.nbytes} bytes, error <= {self.error:.6g}>")

    # ----------------------------------------------------------------------------- bytes --
    def tobytes(self):
        """The compressed clip's bytes (docs/formats.md, "Compressed clip (.jmc)").

        Returns
        -------
        bytes
        """
        return self._bytes

    @classmethod
    def frombytes(cls, b):
        """A compressed clip from the bytes tobytes() gave.

        Parameters
        ----------
        b : bytes-like
            The bytes of a compressed clip.

        Returns
        -------
        CompressedClip

        Raises
        ------
        TypeError
            For an object that is not bytes-like.
        ValueError
            For bytes that are not a valid compressed clip (truncated, corrupted, foreign, of a
            future format version), naming what is wrong.

        Examples
        --------
        >>> import jointmath as jm
        >>> jm.CompressedClip.frombytes(b"not a clip")
        Traceback (most recent call last):
        ...
        ValueError: bytes: not a valid compressed clip: it does not start with the compressed-clip magic number (a foreign file?)
        """
        try:
            memoryview(b)
        except TypeError:
            raise TypeError(f"b must be bytes-like, got {type(b).__name__}") from None
        self = cls._from_bytes(b, "bytes")
        self._validate("bytes")
        return self

    def save(self, path):
        """Write the bytes to `path` atomically (a temporary file in the same folder, then
        renamed over `path`: never a partial file, nothing left behind on error).

        Parameters
        ----------
        path : str or os.PathLike
            The file, by convention ending in ``.jmc``.
        """
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".", suffix=".jmc.tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self._bytes)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    # ---------------------------------------------------------------------------- decode --
    def _decode(self, source):
        p = self._parts
        try:
            return _core._codec_decode(self._bytes, p["streams"], p["tracks"].tobytes(), p["n_frames"], p["n_joints"])
        except ValueError as exc:
            raise ValueError(f"{source}: not a valid compressed clip: {exc}") from None

    def _validate(self, source):
        """Decode once and drop the frames: bytes that load are bytes that decode (never a clip
        that fails later), while a loaded clip holds only its bytes until it is sampled."""
        self._decode(source)

    def _frames_or_decode(self, source="bytes"):
        """The decoded frames, kept from the first call (read-only)."""
        if self._frames is None:
            frames = self._decode(source)
            frames.flags.writeable = False
            self._frames = frames
        return self._frames

    def sample(self, times, out=None):
        """The poses at any times, interpolated between the decoded frames.

        Parameters
        ----------
        times : float or array_like of float
            Seconds from the first frame, finite. Times before 0 or after the last frame are
            clamped to the clip (the first or last pose), as engines hold a clip's ends.
        out : numpy.ndarray, optional
            A C-contiguous writeable JOINT_QUAT array of shape ``times.shape + (num_joints,)``.

        Returns
        -------
        numpy.ndarray
            JOINT_QUAT records of shape ``times.shape + (num_joints,)``: each joint's rotation
            slerped (jointmath.slerp_joints) and translation lerped between the two frames
            around the time; a time on a frame gives that decoded frame exactly.

        Raises
        ------
        ValueError
            For a time that is NaN or infinite, or an out of the wrong shape.
        TypeError
            For times that are not real numbers, or an out of the wrong dtype.

        Notes
        -----
        The first call decodes the whole clip (decompress) and keeps its frames (the size of
        the uncompressed clip), so that each later call costs a slerp of one pose; a clip that
        is never sampled holds only its bytes.

        Examples
        --------
        >>> import jointmath as jm
        >>> from jointmath import bvh, data
        >>> clip = bvh.load(data.sample_clip_path())
        >>> c = jm.compress(clip)
        >>> c.sample(0.5).shape, c.sample([[0.0, 0.1], [0.2, 0.3]]).shape
        ((31,), (2, 2, 31))
        >>> bool((c.sample(100.0) == c.sample(clip.duration)).all())  # clamped to the last frame
        True
        """
        frames = self._frames if self._frames is not None else self._frames_or_decode()
        if out is None and type(times) is float:
            return _core._codec_sample(frames, self._parts["frame_time"], times, None)
        return self._sample_checked(frames, times, out)

    def _sample_checked(self, frames, times, out):
        t = np.asarray(times)
        if t.dtype.kind not in "iuf" or isinstance(times, (bool, np.bool_)):
            raise TypeError(f"times must be real numbers of seconds, got {t.dtype if t.dtype.kind != 'O' else type(times).__name__}")
        t = np.asarray(t, np.float64)
        if not t.flags.c_contiguous:
            t = t.copy()
        if not np.isfinite(t).all():
            raise ValueError("times must be finite seconds")
        shape = t.shape + (self.num_joints,)
        if out is not None:
            if not isinstance(out, np.ndarray) or out.dtype != JOINT_QUAT:
                raise TypeError("out must be a numpy array of dtype jointmath.JOINT_QUAT")
            if out.shape != shape or not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError(f"out must be a C-contiguous writeable array of shape {shape}, got {out.shape}")
        return _core._codec_sample(frames, self._parts["frame_time"], t, out)


def decompress(c):
    """The clip a CompressedClip decodes to.

    Parameters
    ----------
    c : CompressedClip

    Returns
    -------
    jointmath.bvh.Clip
        The same skeleton, joint names, channels (rotation orders) and frame time; ``joints``
        the decoded frames, each joint within ``c.error`` of the original (ACL's metric).

    Raises
    ------
    TypeError
        For a c that is not a CompressedClip.

    Notes
    -----
    Every call decodes the bytes into a new array (the frames ``c.sample()`` keeps are neither
    reused nor kept for it): the clip's joints and skeleton are its own, and ``c`` holds no more
    than before.

    Examples
    --------
    >>> import jointmath as jm
    >>> from jointmath import bvh, data
    >>> clip = bvh.load(data.sample_clip_path())
    >>> back = jm.decompress(jm.compress(clip))
    >>> back.names == clip.names, back.joints.shape == clip.joints.shape
    (True, True)
    """
    if not isinstance(c, CompressedClip):
        raise TypeError(f"c must be a jointmath.CompressedClip, got {type(c).__name__}")
    return c._clip_of(c._decode("bytes"))


def load_compressed(path):
    """A compressed clip from a file written by CompressedClip.save().

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    CompressedClip

    Raises
    ------
    ValueError
        For a file that is not a valid compressed clip (truncated, corrupted, foreign, of a
        future format version), naming the file and what is wrong.
    OSError
        For a file that cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> import jointmath as jm
    >>> from jointmath import bvh, data
    >>> c = jm.compress(bvh.load(data.sample_clip_path()))
    >>> path = os.path.join(tempfile.mkdtemp(), "walk.jmc")
    >>> c.save(path)
    >>> jm.load_compressed(path).tobytes() == c.tobytes()
    True
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        b = f.read()
    self = CompressedClip._from_bytes(b, repr(path))
    self._validate(repr(path))
    return self
