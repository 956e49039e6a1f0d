"""The compressed clip's encoder: tracks, quantization steps chosen against ACL's object-space
error and certified on every joint at every frame, and the Rice streams of the integers.

Every decision is reproducible: float64 NumPy element-wise arithmetic (+ - * / sqrt, correctly
rounded everywhere), integers, and the C error measure of jointmath/_codec.c (float64 scalar
code without FMA contraction), so the same clip gives the same bytes on every ISA path and
machine. See docs/families/compression.md for how it works and docs/design/compression.md for
the evidence behind the choices.
"""
import numpy as np

from . import _core

BLOCK = 128          # values per Rice block (csrc/codec_types.h JM_CODEC_BLOCK)
MAX_K = 24
ZERO_BLOCK = 31
ESCAPE = 24
MAX_VALUE = 1 << 24

CONSTANT, QUANTIZED, RAW, QUANTIZED4 = 0, 1, 2, 3
STREAM_RICE, STREAM_RAW32 = 0, 1

TRACK_DTYPE = np.dtype([("rot_mode", "<i4"), ("trans_mode", "<i4"), ("rot_row", "<i4"), ("trans_row", "<i4"),
                        ("rot", "<f4", 4), ("trans", "<f4", 4), ("rot_step", "<f4"), ("trans_step", "<f4")])

# the translation step against the rotation steps' scale (see docs/design/compression.md)
TRANSLATION_WEIGHT = 1.0
# frames tried as a rotation track's reference (fractions of the clip): the one whose residuals
# stay farthest from w = 0, where the reconstruction of w loses accuracy
REFERENCE_CANDIDATES = (0.0, 0.25, 0.5, 0.75, 1.0)
MIN_RESIDUAL_W = 0.3  # below this a rotation track quantizes all four components (QUANTIZED4)


def _quat_product(a, b):
    """Hamilton product of (..., 4) float64 (x, y, z, w) quaternions."""
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def _reach(joints, parents, shell):
    """(J,) float64: for each joint, a bound on the distance from it to any virtual vertex of
    its subtree (its own included): the longest chain of its descendants' largest translation
    lengths, plus shell."""
    t = joints["t"][..., :3].astype(np.float64)
    length = np.sqrt((t * t).sum(axis=-1)).max(axis=0) if len(t) else np.zeros(len(parents))
    far = np.zeros(len(parents))
    for j in range(len(parents) - 1, 0 - 1, -1):
        p = parents[j]
        if p >= 0:
            far[p] = max(far[p], far[j] + length[j])
    return far + shell


class _Tracks:
    """The clip split into tracks: each joint's rotation and translation modes, references and
    the float64 residuals the quantized tracks quantize."""

    def __init__(self, joints, parents, shell, error):
        n_frames, n_joints = joints.shape
        q32, t32 = joints["q"], joints["t"][..., :3]
        self.n_frames, self.n_joints = n_frames, n_joints
        self.tracks = np.zeros(n_joints, TRACK_DTYPE)
        self.reach = _reach(joints, parents, shell)
        self.rot_residuals, self.trans_residuals = {}, {}  # joint -> (3 or 4, F) float64
        self.raw_rows = {}  # first row -> (k, F) int32 bit patterns
        row = 0
        for j in range(n_joints):
            tr = self.tracks[j]
            q = q32[:, j]
            if (q == q[0]).all():
                tr["rot_mode"], tr["rot"] = CONSTANT, q[0]
            else:
                residual, ref = self._rotation_residual(q)
                if residual is None:  # the quaternions themselves, made sign-continuous
                    q64 = q.astype(np.float64)
                    dots = (q64[1:] * q64[:-1]).sum(axis=1)
                    signs = np.cumprod(np.concatenate([[1.0], np.where(dots < 0, -1.0, 1.0)]))
                    tr["rot_mode"], tr["rot_row"] = QUANTIZED4, row
                    self.rot_residuals[j] = (q64 * signs[:, None]).T.copy()
                    row += 4
                else:
                    tr["rot_mode"], tr["rot_row"], tr["rot"] = QUANTIZED, row, ref
                    self.rot_residuals[j] = residual
                    row += 3
            t = t32[:, j]
            # a translation that moves by less than error / 64 (a resampled constant, rounded by
            # the interpolation) is stored as its first value; the certificate measures it
            spread = t.max(axis=0).astype(np.float64) - t.min(axis=0).astype(np.float64)
            if (t == t[0]).all() or spread.max() <= error / 64:
                tr["trans_mode"], tr["trans"][:3] = CONSTANT, t[0]
            else:
                tr["trans_mode"], tr["trans_row"], tr["trans"][:3] = QUANTIZED, row, t[0]
                self.trans_residuals[j] = (t.astype(np.float64) - t[0].astype(np.float64)).T.copy()
                row += 3
        self.n_rows = row

    def _rotation_residual(self, q):
        """(residual xyz (3, F) float64, reference float32[4]) with the residual's w >= 0, or
        (None, None) when no candidate reference keeps every residual's w >= MIN_RESIDUAL_W."""
        n = len(q)
        q64 = q.astype(np.float64)
        best = None
        for frac in REFERENCE_CANDIDATES:
            ref = q[min(int(frac * (n - 1)), n - 1)]
            dots = np.abs((q64 * ref.astype(np.float64)).sum(axis=1))
            worst = dots.min()
            if best is None or worst > best[0]:
                best = (worst, ref)
        ref = best[1]
        r = _quat_product(np.array([-ref[0], -ref[1], -ref[2], ref[3]], np.float64), q64)
        r = np.where(r[:, 3:4] < 0, -r, r)
        if r[:, 3].min() < MIN_RESIDUAL_W:
            return None, None
        return r[:, :3].T.copy(), ref.copy()

    def subsampled(self, stride):
        """The same tracks at every stride-th frame (the step search's)."""
        sub = _Tracks.__new__(_Tracks)
        sub.__dict__.update(self.__dict__)
        sub.n_frames = len(range(0, self.n_frames, stride))
        sub.rot_residuals = {j: np.ascontiguousarray(r[:, ::stride]) for j, r in self.rot_residuals.items()}
        sub.trans_residuals = {j: np.ascontiguousarray(r[:, ::stride]) for j, r in self.trans_residuals.items()}
        sub.raw_rows = {row: np.ascontiguousarray(b[:, ::stride]) for row, b in self.raw_rows.items()}
        return sub

    def values(self, rot_steps, trans_steps):
        """(rows, F) int32 integers at these per-joint steps (float32 values, as the decoder
        reads them), or None when a value leaves +-MAX_VALUE."""
        values = np.zeros((self.n_rows, self.n_frames), np.int32)
        for j, residual in self.rot_residuals.items():
            n = np.rint(residual / np.float64(rot_steps[j]))
            if np.abs(n).max() > MAX_VALUE:
                return None
            row = self.tracks[j]["rot_row"]
            values[row:row + len(n)] = n
        for j, residual in self.trans_residuals.items():
            n = np.rint(residual / np.float64(trans_steps[j]))
            if np.abs(n).max() > MAX_VALUE:
                return None
            row = self.tracks[j]["trans_row"]
            values[row:row + 3] = n
        for row, bits in self.raw_rows.items():
            values[row:row + len(bits)] = bits
        return values

    def with_steps(self, rot_steps, trans_steps):
        tracks = self.tracks.copy()
        quantized_rot = (tracks["rot_mode"] == QUANTIZED) | (tracks["rot_mode"] == QUANTIZED4)
        quantized_trans = tracks["trans_mode"] == QUANTIZED
        tracks["rot_step"] = np.where(quantized_rot, rot_steps, 0)
        tracks["trans_step"] = np.where(quantized_trans, trans_steps, 0)
        return tracks


def _steps(tracks, scale, joint_scale):
    """float32 steps of the rotations and translations for the global scale `scale` (an error in
    clip units) and per-joint factors."""
    rot = (np.float64(scale) * joint_scale / tracks.reach).astype(np.float32)
    trans = (np.float64(scale) * TRANSLATION_WEIGHT * joint_scale).astype(np.float32)
    return rot, trans


def _measure(tracks, joints, parents, shell, rot_steps, trans_steps):
    """(values, track table, (F, J) errors) at these steps, or None when a value is out of range."""
    values = tracks.values(rot_steps, trans_steps)
    if values is None:
        return None
    table = tracks.with_steps(rot_steps, trans_steps)
    decoded = _core._codec_reconstruct(values, table.tobytes(), tracks.n_joints)
    return values, table, _core._codec_errors(joints, decoded, parents, shell)


def _make_lossless(tracks, joints):
    """Every moving track raw: zero error, the fallback that always certifies."""
    raw = _Tracks.__new__(_Tracks)
    raw.__dict__.update(tracks.__dict__)
    raw.tracks = tracks.tracks.copy()
    raw.rot_residuals, raw.trans_residuals, raw.raw_rows = {}, {}, {}
    row = 0
    for j in range(tracks.n_joints):
        tr = raw.tracks[j]
        if tr["rot_mode"] != CONSTANT:
            tr["rot_mode"], tr["rot_row"] = RAW, row
            raw.raw_rows[row] = np.ascontiguousarray(joints["q"][:, j].T).view(np.int32)
            row += 4
        if tr["trans_mode"] != CONSTANT:
            tr["trans_mode"], tr["trans_row"] = RAW, row
            raw.raw_rows[row] = np.ascontiguousarray(joints["t"][:, j, :3].T).view(np.int32)
            row += 3
    raw.n_rows = row
    return raw


SEARCH_STRIDE = 4  # the step search measures every 4th frame; the certificate measures them all


def _passes(measured, error):
    return measured is not None and measured[2].max() <= error


def certified_tracks(joints, parents, error, shell):
    """(tracks, values, table, errors): the loosest steps found whose decoded clip is within
    `error` at every joint of every frame (ACL's metric), measured on exactly what the decoder
    gives. Falls back to raw tracks (zero error) when no step passes."""
    parents = np.ascontiguousarray(parents, np.int64)
    joints = np.ascontiguousarray(joints)
    tracks = _Tracks(joints, parents, shell, error)
    joint_scale = np.ones(tracks.n_joints)
    # the search: a rotation step s moves a vertex at distance D by up to about s D and a chain
    # of them adds up; from the error itself, step down until the sampled frames pass, then
    # bisect (geometrically) between the last failing and the passing scale
    sampled = _Tracks.subsampled(tracks, SEARCH_STRIDE) if tracks.n_frames >= 8 * SEARCH_STRIDE else tracks
    sampled_joints = np.ascontiguousarray(joints[::SEARCH_STRIDE]) if sampled is not tracks else joints

    def passes(t, j, scale):
        rot, trans = _steps(tracks, scale, joint_scale)
        return _passes(_measure(t, j, parents, shell, rot, trans), error)

    scale, failing = float(error), None
    for _ in range(40):
        if passes(sampled, sampled_joints, scale):
            break
        failing, scale = scale, scale * 0.7
    if failing is not None:
        lo, hi = scale, failing
        for _ in range(4):
            mid = float(np.sqrt(lo * hi))
            if passes(sampled, sampled_joints, mid):
                lo = mid
            else:
                hi = mid
        scale = lo
    # the certificate: every frame; where a frame the search did not see fails, step down
    for _ in range(60):
        rot, trans = _steps(tracks, scale, joint_scale)
        measured = _measure(tracks, joints, parents, shell, rot, trans)
        if _passes(measured, error):
            return (tracks, *measured)
        scale *= 0.9
    raw = _make_lossless(tracks, joints)
    rot, trans = _steps(raw, scale, joint_scale)
    return (raw, *_measure(raw, joints, parents, shell, rot, trans))


# ------------------------------------------------------------------------- Rice streams --

def rice_streams(values, row_is_raw):
    """The bytes of every row: Rice streams (jointmath/_codec_write.c picks each block's
    predictor order and Rice parameter by their exact cost), or little-endian int32 for raw rows."""
    coded = _core._codec_write_rows(np.ascontiguousarray(values[~row_is_raw]))
    streams, k = [], 0
    for r in range(len(values)):
        if row_is_raw[r]:
            streams.append(values[r].astype("<i4").tobytes())
        else:
            streams.append(coded[k])
            k += 1
    return streams
