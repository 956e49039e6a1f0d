"""Euler-channel continuity: the raw rotation channels computed from a clip's joints continue
from frame to frame as a file's do (the Euler solution nearer the frame before, whole turns
followed, gimbal lock carried through), and the frames a loaded clip still holds as read keep
the file's values."""
import numpy as np

from ._bvh_format import _joints_from_motion, _layout, _motion_from_joints, _rotation_columns, position_base
from ._euler import euler_to_quat
from ._records import JOINT_QUAT

__all__ = ["CONTINUED_ANGLE_MAX", "EULER_JUMP", "channel_values"]


#: A rotation channel computed from joints continues from the frame before by whole turns up to
#: this many degrees: float32 spaces values below it as finely as it does quat_to_euler's own
#: values from 128 to 180, so a save keeps its 1e-6 rad round trip. A value that would reach it
#: is written as its own (within +-180: a jump of a whole turn at that frame only), and the
#: channel continues from there.
CONTINUED_ANGLE_MAX = 256.0
#: Rotation channels computed from joints take, of a joint's two Euler solutions, the one nearer
#: the frame before, unless both lie this many degrees or more from it (the three angles' steps,
#: each modulo 360, summed): no solution continues the curve there (a T-pose first frame, a cut),
#: and quat_to_euler's (middle angle within +-90) is taken. Near gimbal lock the outer angles of
#: a continuous motion swing by tens of degrees a frame (01_01's root: 90 at its passage).
EULER_JUMP = 180.0


def channel_values(joints, offsets, channels, loaded=None, positions="offset+channel"):
    """(F, C) float32 raw channel values of (F, J) JOINT_QUAT `joints` (Clip.motion, which
    describes them): `offsets` (J, 3) and `channels` checked as a Clip holds them; `loaded` the
    (F, C) values the file held when the clip was read, or None; `positions` the convention of
    the position channels (position_base). The frames whose joints `loaded` still gives exactly
    keep its values; the others are computed and continued from their neighbours."""
    offsets = position_base(offsets, channels, positions)
    n_frames, n_joints = len(joints), len(channels)
    n_channels = sum(len(c) for c in channels)
    if loaded is not None and loaded.shape == (n_frames, n_channels):
        # the file's values for every frame they still give exactly
        frame_bytes = (n_frames, n_joints * JOINT_QUAT.itemsize)
        unchanged = (_joints_from_motion(loaded, offsets, channels).view(np.uint8).reshape(frame_bytes)
                     == np.ascontiguousarray(joints).view(np.uint8).reshape(frame_bytes)).all(axis=1)
        if unchanged.all():
            return loaded.copy()
        motion = loaded.copy()
        edited = ~unchanged
        motion[edited] = _motion_from_joints(joints[edited], offsets, channels)
    else:
        motion = _motion_from_joints(joints, offsets, channels)
        edited = np.ones(n_frames, bool)
    columns = _rotation_columns(channels)
    _continue_through_lock(motion, channels, edited)
    _nearest_solutions(motion, columns, edited)
    _continue_turns(motion, columns, edited)
    return motion


def _wrapped(degrees):
    """Angles moved by whole turns into [-180, 180]."""
    return degrees - 360 * np.rint(degrees / 360)


def _since_last_kept(counts, edited):
    """Cumulative sums of counts (F, K) over the frames, restarting at each frame not edited
    (whose counts are 0): the counts since the frame before each edited stretch. edited: (F,),
    or (F, K) for restarts of their own per column."""
    total = np.cumsum(counts, axis=0)
    if edited.all():  # no restart (a first frame's counts are 0)
        return total
    edited = edited.reshape(len(edited), -1)
    last_kept = np.maximum.accumulate(np.where(edited, 0, np.arange(len(edited))[:, None]), axis=0)
    return total - np.take_along_axis(total, np.broadcast_to(last_kept, total.shape), axis=0)


def _continue_through_lock(motion, channels, edited):
    """In place: at gimbal lock (middle angle +-90) quat_to_euler sets the third angle to 0 and the
    first carries the whole rotation about the two aligned axes, so a joint entering or holding a
    lock would jump in both outer channels. In the edited frames at lock, each joint's third angle
    becomes the one of its last frame before the lock and the first angle takes the rest (a +- c
    is what the rotation fixes there: the sign whose angles give the same rotation, within 1e-6
    rad, is used; a frame where neither does keeps its angles)."""
    frames = np.arange(len(motion))[:, None]
    for order, (_, columns) in _layout(channels)[0].items():
        columns = np.asarray(columns)  # (n, 3)
        angles = motion[:, columns].astype(np.float64)  # (F, n, 3)
        lock = (np.abs(np.abs(angles[..., 1]) - 90) < 1e-4) & (angles[..., 2] == 0) & edited[:, None]
        before = np.maximum.accumulate(np.where(lock, -1, frames), axis=0)  # the last frame not at lock
        lock &= before >= 0
        if not lock.any():
            continue
        frame, joint = np.nonzero(lock)
        found = angles[frame, joint]
        kept = angles[before[frame, joint], joint, 2]
        q = euler_to_quat(found, order, degrees=True)
        done = np.zeros(len(frame), bool)
        for sign in (1.0, -1.0):
            moved = found.copy()
            moved[:, 0] -= sign * kept
            moved[:, 2] = kept
            moved_q = euler_to_quat(moved, order, degrees=True)
            same = np.minimum(np.linalg.norm(moved_q - q, axis=-1), np.linalg.norm(moved_q + q, axis=-1)) < 5e-7
            take = same & ~done
            found[take], done = moved[take], done | take
        motion[frame[:, None], columns[joint]] = _wrapped(found).astype(np.float32)


def _nearest_solutions(motion, columns, edited):
    """In place: each joint's Euler angles (a, b, c) in the edited frames replaced by the other
    solution of the same rotation, (a + 180, 180 - b, c + 180) in [-180, 180], where that one
    lies nearer the frame before as it ends up, by the sum of the three differences, each modulo
    360 (whole turns are _continue_turns' part): Blender's "compatible Euler". The identity holds
    for every Tait-Bryan order, intrinsic or extrinsic (those are the intrinsic ones reversed):
    Ri(a + 180) Rj(180 - b) Rk(c + 180) = Ri(a) [Ri(180) Rj(180 - b) Ri(180)^-1] Ri(180) Rk(180)
    Rk(c) = Ri(a) Rj(b - 180) Rj(180) Rk(c), since a half turn about axis i reverses rotations
    about j and two half turns about perpendicular axes make one about the third. `columns`
    lists each joint's three rotation columns in its order; a first frame and the frames not
    edited keep their angles (quat_to_euler's: middle angle within +-90). Where both solutions
    lie EULER_JUMP or more from the frame before, the motion itself jumps there (a T-pose first
    frame, a cut): the frame takes quat_to_euler's solution, and the choice restarts from it."""
    if not columns or len(motion) < 2:
        return
    triples = np.asarray(columns).reshape(-1, 3)
    angles = motion[:, triples]  # (F, K, 3)
    # solution 0 of frame f lies as far from solution 0 of frame f - 1 as solution 1 from
    # solution 1 (the differences are the same up to sign), and as far from solution 1 as
    # solution 1 from solution 0: a frame takes the other solution than its predecessor (flips)
    # where that cross distance is the shorter
    step = np.abs(_wrapped(np.diff(angles, axis=0)))
    same = step.sum(axis=-1)
    cross = 360 - step[..., 0] - step[..., 2] + np.abs(_wrapped(angles[1:, :, 1] + angles[:-1, :, 1] - 180))
    jumps = np.zeros(angles.shape[:2], bool)
    jumps[1:] = np.minimum(same, cross) >= EULER_JUMP
    flips = np.zeros(angles.shape[:2], np.int32)
    flips[1:] = (cross < same) & edited[1:, None]
    flips[jumps] = 0
    if not flips.any():  # the usual case: quat_to_euler's solutions are continuous
        return
    frames, joints = np.nonzero(_since_last_kept(flips, edited[:, None] & ~jumps) % 2)
    cells = (frames[:, None], triples[joints])
    other = motion[cells].astype(np.float64) + [180, 0, 180]  # computed in float64, rounded once
    other[:, 1] = 180 - other[:, 1]
    motion[cells] = _wrapped(other)


def _continue_turns(motion, columns, edited):
    """In place: the rotation channels (motion[:, columns], degrees) of the edited frames moved
    by whole turns to within 180 degrees of the frame before (as it ends up), from the last frame
    not edited on (a first frame keeps its value). A value that would then reach
    +-CONTINUED_ANGLE_MAX keeps its own (within +-180: the one jump of a whole turn that the
    channel makes there), and the channel continues from it. Frames not edited never change."""
    if not columns or len(motion) < 2:
        return
    columns = np.asarray(columns)
    turns = np.zeros((len(motion), len(columns)))  # turns[f]: whole turns from frame f - 1 to f
    turns[1:] = np.rint((motion[1:, columns] - motion[:-1, columns]) / np.float32(360))
    turns[~edited] = 0
    turning = np.flatnonzero(turns.any(axis=0))
    if not turning.size:  # the usual case: no channel crosses +-180 in an edited frame
        return
    columns, turns = columns[turning], turns[:, turning]
    values = motion[:, columns].astype(np.float64)
    continued = values - 360 * _since_last_kept(turns, edited)
    # checked as written (float32): 255.99999 rounds to 256
    for c in np.flatnonzero((np.abs(continued.astype(np.float32)) >= CONTINUED_ANGLE_MAX).any(axis=0)):
        continued[:, c] = _turned_back(values[:, c], turns[:, c], edited)
    motion[:, columns] = continued.astype(np.float32)


def _turned_back(values, turns, edited):
    """One channel continued as _continue_turns does, frame by frame: within each run of frames
    that share one count of turns (from a turn, or from the start of a stretch of edited frames,
    to the next or to the stretch's end), the first value that would reach
    +-CONTINUED_ANGLE_MAX and the rest of the run keep their own, and the count restarts."""
    values = values.copy()
    begins_stretch = edited & ~np.concatenate([[False], edited[:-1]])
    frames = np.arange(len(values))
    next_kept = np.minimum.accumulate(np.where(edited, len(values), frames)[::-1])[::-1]
    begins = np.flatnonzero((turns != 0) | begins_stretch)
    count = 0.0
    for begin, end in zip(begins, np.append(begins[1:], len(values))):
        count = turns[begin] + (0.0 if begins_stretch[begin] else count)
        run = values[begin:min(end, next_kept[begin])]  # a view: updated in place
        run -= 360 * count
        beyond = np.flatnonzero(np.abs(run.astype(np.float32)) >= CONTINUED_ANGLE_MAX)  # as written
        if beyond.size:
            run[beyond[0]:] += 360 * count
            count = 0.0
    return values
