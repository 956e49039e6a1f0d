"""Pure-NumPy float64 versions of jointmath's kernels.

The tests compare every ISA path against these functions; users may call them too (they are
slower, but they are plain NumPy and compute in float64). Conventions as in the package:
quaternions (x, y, z, w), active row-major rotation matrices (v' = R v).
"""
import numpy as np

#: float64 twins of jointmath.JOINT_QUAT / JOINT_MAT, the record results of this module.
JOINT_QUAT64 = np.dtype([("q", np.float64, (4,)), ("t", np.float64, (4,))])
JOINT_MAT64 = np.dtype([("m", np.float64, (3, 4))])


def quat_to_matrix(q):
    """(..., 4) quaternions -> (..., 3, 3) rotation matrices of q / |q|, in float64."""
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = np.moveaxis(q, -1, 0)
    s = 2.0 / (x * x + y * y + z * z + w * w)
    xx, yy, zz = x * x * s, y * y * s, z * z * s
    xy, xz, yz = x * y * s, x * z * s, y * z * s
    wx, wy, wz = w * x * s, w * y * s, w * z * s
    r = np.stack(
        [1 - (yy + zz), xy - wz, xz + wy,
         xy + wz, 1 - (xx + zz), yz - wx,
         xz - wy, yz + wx, 1 - (xx + yy)],
        axis=-1,
    )
    return r.reshape(q.shape[:-1] + (3, 3))


def matrix_to_quat(m):
    """(..., 3, 3) rotation matrices -> (..., 4) unit quaternions, in float64.

    Largest-divisor method: the largest of 4x², 4y², 4z², 4w² (computed from the diagonal; the
    first on ties) gives its component as a square root, positive, and the others follow from
    the off-diagonal sums and differences. The matrix is not orthogonalised.
    """
    m = np.asarray(m, dtype=np.float64)
    r = np.moveaxis(m.reshape(m.shape[:-2] + (9,)), -1, 0)
    t = np.stack([
        1 + r[0] - r[4] - r[8],
        1 - r[0] + r[4] - r[8],
        1 - r[0] - r[4] + r[8],
        1 + r[0] + r[4] + r[8],
    ])
    xy, xz, yz = r[1] + r[3], r[2] + r[6], r[5] + r[7]
    wx, wy, wz = r[7] - r[5], r[2] - r[6], r[3] - r[1]
    # candidates[case, component]: 4 * component * (divisor component)
    candidates = np.stack([
        np.stack([t[0], xy, xz, wx]),
        np.stack([xy, t[1], yz, wy]),
        np.stack([xz, yz, t[2], wz]),
        np.stack([wx, wy, wz, t[3]]),
    ])
    case = np.argmax(np.where(np.isnan(t), -np.inf, t), axis=0)
    q = np.take_along_axis(candidates, case[None, None], axis=0)[0]
    q = np.moveaxis(q, 0, -1)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def joints_to_mats(joints):
    """JOINT_QUAT records -> JOINT_MAT64 records (float64), same shape."""
    joints = np.asarray(joints)
    mats = np.empty(joints.shape, JOINT_MAT64)
    mats["m"][..., :3] = quat_to_matrix(joints["q"])
    mats["m"][..., 3] = joints["t"][..., :3]
    return mats


def mats_to_joints(mats):
    """JOINT_MAT records -> JOINT_QUAT64 records (float64), same shape; t[3] = 0."""
    mats = np.asarray(mats)
    joints = np.zeros(mats.shape, JOINT_QUAT64)
    joints["q"] = matrix_to_quat(mats["m"][..., :3])
    joints["t"][..., :3] = mats["m"][..., 3]
    return joints


# ------------------------------------------------------------ interpolation (interp) --


def _endpoints(q0, q1, t, q):
    """q with t = 0 replaced by q0 and t = 1 by q1, exactly (t has a trailing axis of 1)."""
    return np.where(t == 0, q0, np.where(t == 1, q1, q))


def slerp(q0, q1, t):
    """Spherical linear interpolation of (..., 4) quaternions in float64, with broadcasting.

    Shortest arc: q1 is negated where q0 . q1 < 0. t (scalar or array broadcasting with the
    leading shape) in [0, 1]; t = 0 gives q0 and t = 1 gives q1 exactly. Exactly parallel or
    antipodal pairs take the lerp weights. The textbook formula: w0 = sin((1 - t) omega) / sin
    omega, w1 = sin(t omega) / sin omega with omega = atan2(sqrt((1 - c)(1 + c)), c), c = |q0 . q1|.
    """
    q0 = np.asarray(q0, np.float64)
    q1 = np.asarray(q1, np.float64)
    t = np.asarray(t, np.float64)[..., None]
    d = np.sum(q0 * q1, axis=-1, keepdims=True)
    c = np.minimum(np.abs(d), 1.0)
    omega = np.arctan2(np.sqrt((1 - c) * (1 + c)), c)
    sin_omega = np.sin(omega)
    parallel = sin_omega == 0
    safe = np.where(parallel, 1.0, sin_omega)
    w0 = np.where(parallel, 1 - t, np.sin((1 - t) * omega) / safe)
    w1 = np.where(parallel, t, np.sin(t * omega) / safe) * np.where(d < 0, -1.0, 1.0)
    return _endpoints(q0, q1, t, w0 * q0 + w1 * q1)


def nlerp(q0, q1, t):
    """Normalised linear interpolation normalize((1 - t) q0 +- t q1) in float64 (shortest arc,
    broadcasting and exact endpoints as slerp)."""
    q0 = np.asarray(q0, np.float64)
    q1 = np.asarray(q1, np.float64)
    t = np.asarray(t, np.float64)[..., None]
    d = np.sum(q0 * q1, axis=-1, keepdims=True)
    q = (1 - t) * q0 + t * np.where(d < 0, -1.0, 1.0) * q1
    return _endpoints(q0, q1, t, q / np.linalg.norm(q, axis=-1, keepdims=True))


def _blend_joints(quat_func, joints, blend, t, index):
    joints = np.asarray(joints)
    blend = np.asarray(blend)
    out = np.empty(joints.shape, JOINT_QUAT64)
    out["q"] = joints["q"]
    out["t"] = joints["t"]
    sel = (Ellipsis,) if index is None else (Ellipsis, np.asarray(index))
    a, b = joints[sel], blend[sel]
    field_sel = sel + (slice(None),)  # the same records, in the (..., 4) field arrays
    out["q"][field_sel] = quat_func(a["q"], b["q"], t)
    ta, tb = a["t"].astype(np.float64), b["t"].astype(np.float64)
    out["t"][field_sel] = np.where(t == 1, tb, (1 - t) * ta + t * tb)
    return out


def slerp_joints(joints, blend, t, index=None):
    """JOINT_QUAT records -> JOINT_QUAT64: q slerped, translation lerped, in float64; with
    ``index``, only those positions along the last axis, the others copied from joints."""
    return _blend_joints(slerp, joints, blend, t, index)


def lerp_joints(joints, blend, t, index=None):
    """As slerp_joints with nlerp for the rotation."""
    return _blend_joints(nlerp, joints, blend, t, index)
