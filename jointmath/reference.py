"""Pure-NumPy float64 versions of jointmath's kernels.

The tests compare every ISA path against these functions; users may call them too (they are
slower, but they are plain NumPy and compute in float64). Conventions as in the package:
quaternions (x, y, z, w), active row-major rotation matrices (v' = R v).
"""
from fractions import Fraction

import numpy as np

__all__ = ["JOINT_MAT64", "JOINT_QUAT64", "align_vectors", "angle_between", "compose_mats", "euler_to_quat",
           "extract_rotation", "forward_kinematics", "invalid_quats", "joints_to_mats", "lerp_joints",
           "matrix_to_quat", "mats_to_joints", "nlerp", "pack_quats", "polar_rotation", "quat_angle",
           "quat_conjugate", "quat_inverse", "quat_mean", "quat_multiply", "quat_to_6d", "quat_to_euler",
           "quat_to_matrix", "quat_to_rotvec", "rotate_vectors", "rotvec_to_quat", "sixd_to_quat", "slerp",
           "slerp_joints", "swing_twist", "unpack_quats"]

#: float64 twins of jointmath.JOINT_QUAT / JOINT_MAT, the record results of this module.
JOINT_QUAT64 = np.dtype([("q", np.float64, (4,)), ("t", np.float64, (4,))])
JOINT_MAT64 = np.dtype([("m", np.float64, (3, 4))])


def _scale_pow2(x, axes):
    """x times the power of two that puts its largest |element| over `axes` in [1, 2): exact
    (np.ldexp never forms the factor, so subnormal inputs, down to 2^-1074, reach [1, 2) too);
    zeros stay zero, inf and NaN stay what they are."""
    _, exponent = np.frexp(np.max(np.abs(x), axis=axes, keepdims=True))
    return np.ldexp(x, 1 - exponent)


def quat_to_matrix(q):
    """(..., 4) quaternions -> (..., 3, 3) rotation matrices of q / |q|, in float64.

    q is first scaled by a power of two (exact), so any finite non-zero q, subnormal to
    DBL_MAX, gives its rotation; a zero quaternion gives NaN (silently, as the float32 kernels)."""
    q = _scale_pow2(np.asarray(q, dtype=np.float64), -1)
    x, y, z, w = np.moveaxis(q, -1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
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


def angle_between(q0, q1):
    """Angle in radians of the rotation taking q0 to q1 (quaternions, (..., 4), any scale),
    modulo sign: q and -q are the same rotation. Computed in float64 as
    4 atan2(|q0 - q1|, |q0 + q1|) on the normalised, sign-aligned pair (|q0 - q1| and |q0 + q1|
    are 2 sin and 2 cos of a quarter of the angle), which stays accurate for tiny angles
    (2 acos(q0 . q1) loses half the digits there)."""
    q0 = _scale_pow2(np.asarray(q0, np.float64), -1)
    q1 = _scale_pow2(np.asarray(q1, np.float64), -1)
    q0 = q0 / np.linalg.norm(q0, axis=-1, keepdims=True)
    q1 = q1 / np.linalg.norm(q1, axis=-1, keepdims=True)
    q1 = q1 * np.where(np.sum(q0 * q1, axis=-1) < 0, -1.0, 1.0)[..., None]
    return 4 * np.arctan2(np.linalg.norm(q0 - q1, axis=-1), np.linalg.norm(q0 + q1, axis=-1))


def quat_multiply(p, q):
    """Hamilton product p * q of (..., 4) quaternions (x, y, z, w), in float64."""
    p = np.asarray(p, np.float64)
    q = np.asarray(q, np.float64)
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    return np.concatenate([pw * qv + qw * pv + np.cross(pv, qv), pw * qw - np.sum(pv * qv, -1, keepdims=True)], -1)




# ------------------------------------------------------------------ rotation extraction --


def polar_rotation(a):
    """(..., 3, 3) matrices -> (..., 3, 3) float64 rotations closest to them in the Frobenius
    norm: A = U diag(s) V^T by SVD, R = U diag(1, 1, det(U V^T)) V^T. The determinant fix flips
    the direction of the smallest singular value when U V^T is a reflection (det A < 0), so R
    is always a proper rotation. Rank-deficient A has no unique answer; SVD picks one."""
    u, _, vt = np.linalg.svd(np.asarray(a, dtype=np.float64))
    flip = np.linalg.det(u @ vt) < 0
    u[..., :, 2] *= np.where(flip, -1.0, 1.0)[..., None]
    return u @ vt


def extract_rotation(a, q0=None, max_iter=200, tol=None, return_iterations=False):
    """The rotation closest to each (..., 3, 3) matrix, by the iteration of Mueller et al. 2016,
    in float64: R <- exp(omega) R, omega = sum_i r_i x a_i / (|sum_i r_i . a_i| + 1e-9) (columns
    of R and A; where det A < 0 the denominator's |f| is raised to |H|_F, H = f I - sym(A R^T),
    so that no step overshoots the maximum), as the paper's loop - R formed from q, the exponential map by sin and cos, q
    normalised after every step - run on all matrices at once with a per-matrix stop.

    Semantics shared with jointmath.extract_rotation: A is first scaled by the power of two that
    puts its largest |element| in [1, 2) (exact; the answer does not change, the 1e-9 guard
    becomes relative to A's size); the start is q0 / |q0| (identity for q0 = 0, q0 broadcasts
    against A's batch shape) or, without q0, the normalised largest-divisor quaternion of A
    scaled to Frobenius norm sqrt(3) (so that c R starts at R; A = 0 starts at the identity); a
    matrix stops before an update when |omega| < tol (default 1e-12) or after max_iter updates;
    a NaN omega is applied once and stops. Returns (..., 4) quaternions, and int32 update counts
    when return_iterations."""
    tol = 1e-12 if tol is None else tol  # jointmath.extract_rotation's float64 default too
    a = np.asarray(a, dtype=np.float64)
    batch = a.shape[:-2] if q0 is None else np.broadcast_shapes(a.shape[:-2], np.shape(q0)[:-1])
    a = np.broadcast_to(a, batch + (3, 3)).reshape(-1, 3, 3)
    with np.errstate(invalid="ignore", over="ignore"):
        a = _scale_pow2(a, (1, 2))
        if q0 is None:
            norm = np.linalg.norm(a, axis=(1, 2))
            # A = 0 starts from the identity (its largest-divisor quaternion is a half turn)
            unit = np.where((norm > 0)[:, None, None], a * (np.sqrt(3) / np.where(norm > 0, norm, 1))[:, None, None],
                            np.eye(3))
            q = matrix_to_quat(unit)
        else:
            q = np.broadcast_to(np.asarray(q0, dtype=np.float64), batch + (4,)).reshape(-1, 4)
            is_zero = ~np.any(q != 0, axis=1)
            q = _scale_pow2(q, 1)
            q = q / np.linalg.norm(q, axis=1, keepdims=True)
            q[is_zero] = (0, 0, 0, 1)
    iterations = np.zeros(len(a), np.int32)
    active = np.ones(len(a), bool)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        r, m = quat_to_matrix(q[idx]), a[idx]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            torque = np.cross(r, m, axis=-2).sum(-1)  # sum over columns i of r_i x a_i
            f = np.sum(r * m, axis=(1, 2))
            # det A < 0: |f| raised to |H|_F, H = f I - (M + M^T) / 2, M = A R^T (no overshoot)
            mt = m @ r.transpose(0, 2, 1)
            h = f[:, None, None] * np.eye(3) - (mt + mt.transpose(0, 2, 1)) / 2
            denominator = np.where(np.linalg.det(m) < 0, np.maximum(np.abs(f), np.linalg.norm(h, axis=(1, 2))),
                                   np.abs(f))
            omega = torque / (denominator + 1e-9)[:, None]
            theta = np.linalg.norm(omega, axis=1)
            half = theta / 2
            # sin(theta/2) omega / theta, without dividing by theta = 0
            dq = np.concatenate([omega * (0.5 * np.sinc(half / np.pi))[:, None], np.cos(half)[:, None]], 1)
            new = quat_multiply(dq, q[idx])
            new /= np.linalg.norm(new, axis=1, keepdims=True)
        update = ~(theta < tol)
        q[idx[update]] = new[update]
        iterations[idx[update]] += 1
        active[idx[~(theta >= tol)]] = False
    q = q.reshape(batch + (4,))
    return (q, iterations.reshape(batch)[()]) if return_iterations else q  # one matrix: a NumPy scalar


# ------------------------------------------------------------------ packing --


def invalid_quats(q):
    """Boolean (...) mask of the quaternions that cannot be packed: zero or not finite."""
    q = np.asarray(q)
    return ~np.isfinite(q).all(axis=-1) | (q == 0).all(axis=-1)


def pack_quats(q, bits=10):
    """float64 version of jointmath.pack_quats (same layout and the same exact rounding; q must
    be valid, see invalid_quats).

    Each field is round(c * M) + M, M = 2^(bits - 1) - 1, c = other / largest, rounded to nearest
    (ties to even) from the exact real quotient of the given floats: fl(fl(c) * M) is within
    2^-52 M of it, so it rounds alike unless it lies within 2^-30 of a half-integer; those
    (ties, and one field in ~10^9 otherwise) are rounded by exact rational arithmetic. The
    IEEE quotient is scale-invariant over the whole float64 range, denormals included.
    """
    q = np.asarray(q, dtype=np.float64)
    m = 2 ** (bits - 1) - 1
    index = np.argmax(np.abs(q), axis=-1)
    largest = np.take_along_axis(q, index[..., None], axis=-1)
    other = q[np.arange(4) != index[..., None]].reshape(q.shape[:-1] + (3,))
    with np.errstate(under="ignore"):
        scaled = other / largest * m
    levels = np.rint(scaled)
    for at in zip(*np.nonzero(np.abs(scaled - np.floor(scaled) - 0.5) < 2.0**-30)):
        levels[at] = round(Fraction(float(other[at])) * m / Fraction(float(largest[at[:-1]][0])))
    fields = (levels + m).astype(np.uint64)
    code = (index.astype(np.uint64) << np.uint64(3 * bits)) | (fields[..., 0] << np.uint64(2 * bits)) \
        | (fields[..., 1] << np.uint64(bits)) | fields[..., 2]
    return code.astype(np.uint32 if bits == 10 else np.uint64)


def unpack_quats(p):
    """float64 version of jointmath.unpack_quats (uint32 codes: 10-bit fields, uint64: 20-bit):
    c = (code - M) / M, the never-written code 2^bits - 1 clamped to +1."""
    p = np.asarray(p)
    bits = 10 if p.dtype == np.uint32 else 20
    code = p.astype(np.uint64)
    m = 2 ** (bits - 1) - 1
    index = ((code >> np.uint64(3 * bits)) & np.uint64(3)).astype(np.intp)
    fields = np.stack([(code >> np.uint64(s)) & np.uint64(2**bits - 1) for s in (2 * bits, bits, 0)], axis=-1)
    c = np.minimum((fields.astype(np.float64) - m) / m, 1.0)
    q = np.ones(p.shape + (4,))
    others = np.arange(4) != index[..., None]
    q[others] = c.reshape(-1)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


# ------------------------------------------------------------------ Euler angles --

_AXES = {"x": 0, "y": 1, "z": 2}


def _euler_axes(order):
    """(axes, intrinsic) of a Tait-Bryan order: "XYZ" intrinsic ... "zyx" extrinsic."""
    if not isinstance(order, str) or len(order) != 3 or not (order.isupper() or order.islower()) \
            or sorted(order.lower()) != ["x", "y", "z"]:
        raise ValueError(f"order must be one of the six Tait-Bryan orders, XYZ XZY YXZ YZX ZXY ZYX "
                         f"(intrinsic) or the same in lowercase (extrinsic), got {order!r}")
    return [_AXES[c] for c in order.lower()], order.isupper()


def euler_to_quat(angles, order, degrees=False):
    """(..., 3) Tait-Bryan angles -> (..., 4) unit quaternions, in float64.

    Uppercase orders are intrinsic ("ZXY": R = Rz(a0) Rx(a1) Ry(a2), as BVH channels and scipy's
    from_euler("ZXY")), lowercase extrinsic ("zxy": R = Ry(a2) Rx(a1) Rz(a0)).
    """
    axes, intrinsic = _euler_axes(order)
    angles = np.asarray(angles, np.float64)
    # degrees: whole turns of the half angle (720 degrees) removed first, exactly, so that any finite
    # angle converts without the rounding of a huge angle * pi / 180
    half = (np.radians(np.fmod(angles, 720.0)) if degrees else angles) / 2
    elementary = np.zeros(angles.shape + (4,))
    for k, axis in enumerate(axes):
        elementary[..., k, axis] = np.sin(half[..., k])
        elementary[..., k, 3] = np.cos(half[..., k])
    e0, e1, e2 = elementary[..., 0, :], elementary[..., 1, :], elementary[..., 2, :]
    return quat_multiply(quat_multiply(e0, e1), e2) if intrinsic else quat_multiply(quat_multiply(e2, e1), e0)


def quat_to_euler(q, order, degrees=False):
    """(..., 4) quaternions -> (..., 3) Tait-Bryan angles in [-180, 180) degrees (or radians), float64.

    The angles of `order` (see euler_to_quat) that give back the rotation of q, with the
    middle angle in [-90, 90]. At gimbal lock (middle angle within 1e-7 rad of +-90 degrees)
    the third angle is set to 0 and the first carries the whole remaining rotation, as scipy's
    as_euler does. q is first scaled by a power of two (exact), so any finite non-zero q,
    subnormal to DBL_MAX, gives the angles of q / |q|; a zero quaternion gives NaN angles.
    """
    axes, intrinsic = _euler_axes(order)
    q = _scale_pow2(np.asarray(q, np.float64), -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    i, j, k = axes if not intrinsic else axes[::-1]
    sign = (i - j) * (j - k) * (k - i) // 2
    a = q[..., 3] - q[..., j]
    b = q[..., i] + q[..., k] * sign
    c = q[..., j] + q[..., 3]
    d = q[..., k] * sign - q[..., i]
    half_sum, half_diff = np.arctan2(b, a), np.arctan2(d, c)
    middle = 2 * np.arctan2(np.hypot(c, d), np.hypot(a, b))
    near_zero = np.abs(middle) <= 1e-7
    near_pi = np.abs(middle - np.pi) <= 1e-7
    regular = ~(near_zero | near_pi)
    first, third = (0, 2) if not intrinsic else (2, 0)
    angles = np.zeros(q.shape[:-1] + (3,))
    angles[..., 0] = np.where(near_zero, 2 * half_sum, 2 * half_diff * (1 if intrinsic else -1))
    angles[..., first] = np.where(regular, half_sum - half_diff, angles[..., first])
    angles[..., third] = np.where(regular, half_sum + half_diff, angles[..., third]) * sign
    angles[..., 1] = middle - np.pi / 2
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return np.degrees(angles) if degrees else angles


# ------------------------------------------------------------------ transforms --


def compose_mats(a, b):
    """JOINT_MAT a * b -> JOINT_MAT64 (R = Ra Rb, t = Ra tb + ta), float64; shapes broadcast."""
    ma = np.asarray(a)["m"].astype(np.float64)
    mb = np.asarray(b)["m"].astype(np.float64)
    ma, mb = np.broadcast_arrays(ma, mb)
    out = np.empty(ma.shape[:-2], JOINT_MAT64)
    out["m"][..., :3] = ma[..., :3] @ mb[..., :3]
    out["m"][..., 3] = np.einsum("...ij,...j->...i", ma[..., :3], mb[..., 3]) + ma[..., 3]
    return out


def forward_kinematics(joints, parents):
    """World JOINT_MAT64 transforms of (..., J) JOINT_QUAT local joints, parents before children."""
    local = joints_to_mats(joints)
    world = np.empty_like(local)
    for j, p in enumerate(parents):
        world[..., j] = local[..., j] if p < 0 else compose_mats(world[..., p], local[..., j])
    return world


# ------------------------------------------------------------ interpolation (interp) --


def _arc_sign(d):
    """-1 where the shortest arc from q0 to q1 ends at -q1 (dot product d < 0), else +1."""
    return np.where(d < 0, -1.0, 1.0)


def _endpoints(q0, q1, t, sign, q):
    """q with t = 0 replaced by q0 and t = 1 by the end of the arc, sign * q1, exactly (t and sign
    have a trailing axis of 1)."""
    return np.where(t == 0, q0, np.where(t == 1, sign * q1, q))


def slerp(q0, q1, t):
    """Spherical linear interpolation of (..., 4) unit quaternions in float64, with broadcasting.

    Shortest arc: q1 is negated where q0 . q1 < 0. t (scalar or array broadcasting with the
    leading shape) in [0, 1]; t = 0 gives q0 and t = 1 the end of the arc, q1 or -q1 (where
    q0 . q1 < 0), exactly. Exactly parallel or antipodal pairs take the lerp weights. The
    textbook formula: w0 = sin((1 - t) omega) / sin omega, w1 = sin(t omega) / sin omega with
    omega = atan2(sqrt((1 - c)(1 + c)), c), c = |q0 . q1|. Inputs are not normalised.
    """
    q0 = np.asarray(q0, np.float64)
    q1 = np.asarray(q1, np.float64)
    t = np.asarray(t, np.float64)[..., None]
    d = np.sum(q0 * q1, axis=-1, keepdims=True)
    sign = _arc_sign(d)
    c = np.minimum(np.abs(d), 1.0)
    omega = np.arctan2(np.sqrt((1 - c) * (1 + c)), c)
    sin_omega = np.sin(omega)
    parallel = sin_omega == 0
    safe = np.where(parallel, 1.0, sin_omega)
    w0 = np.where(parallel, 1 - t, np.sin((1 - t) * omega) / safe)
    w1 = np.where(parallel, t, np.sin(t * omega) / safe) * sign
    return _endpoints(q0, q1, t, sign, w0 * q0 + w1 * q1)


def _mantissa_exponent(q):
    """q = m 2^e per quaternion of (..., 4) q: m with its largest |component| in [0.5, 1), e an
    integer (..., 1) array (exact: ldexp; zero quaternions get m = 0, e = 0)."""
    _, e = np.frexp(np.max(np.abs(q), axis=-1, keepdims=True))
    return np.ldexp(q, -e), e


def nlerp(q0, q1, t):
    """Normalised linear interpolation normalize((1 - t) q0 +- t q1) in float64 (shortest arc,
    broadcasting and exact endpoints as slerp), for q0, q1 of any finite scale.

    The sum is formed from mantissas and exponents: with q = m 2^e and w = (1 - t) or t, each term
    w m 2^e is rescaled by 2^-E, E the larger term's exponent, with ldexp; nothing overflows or
    underflows unless it is negligible against the other term. q0 = q1 = 0 gives NaN."""
    q0 = np.asarray(q0, np.float64)
    q1 = np.asarray(q1, np.float64)
    t = np.asarray(t, np.float64)[..., None]
    m0, e0 = _mantissa_exponent(q0)
    m1, e1 = _mantissa_exponent(q1)
    sign = _arc_sign(np.sum(m0 * m1, axis=-1, keepdims=True))
    terms = [(1 - t, m0, e0), (t * sign, m1, e1)]
    live = [(w != 0) & np.any(m != 0, axis=-1, keepdims=True) for w, m, _ in terms]  # NaN counts as live
    top = np.maximum(*[np.where(on, np.frexp(w)[1] + e, -(1 << 20)) for on, (w, _, e) in zip(live, terms)])
    with np.errstate(under="ignore"):
        q = sum(np.where(on, np.ldexp(w, np.where(on, e - top, 0)) * m, 0.0) for on, (w, m, e) in zip(live, terms))
    with np.errstate(invalid="ignore"):
        return _endpoints(q0, q1, t, sign, q / np.linalg.norm(q, axis=-1, keepdims=True))


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


# ---------------------------------------------------------------------- rotation algebra --
# float64, or np.longdouble where the input is np.longdouble (the tests' extended-precision oracle
# of the float64 kernels: the same formulas, evaluated wider).


def _real(x):
    """x as a float64 array, or as it is when it is np.longdouble."""
    x = np.asarray(x)
    return x if x.dtype == np.longdouble else x.astype(np.float64)


def _unit(x):
    """x / |x| over the last axis after an exact power-of-two scaling (any finite non-zero scale)."""
    x = _scale_pow2(_real(x), -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True))


def _batch_broadcast(a, b):
    """a (..., m) and b (..., n) broadcast over their leading dims"""
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    return np.broadcast_to(a, shape + a.shape[-1:]), np.broadcast_to(b, shape + b.shape[-1:])


def quat_conjugate(q):
    """(..., 4) -> (-x, -y, -z, w)."""
    q = _real(q)
    return np.concatenate([-q[..., :3], q[..., 3:]], -1)


def quat_inverse(q):
    """(..., 4) -> conj(q) / |q|^2 for any finite non-zero q (scaled by a power of two first, then
    scaled back with ldexp); a zero quaternion gives NaN."""
    q = _real(q)
    _, e = np.frexp(np.max(np.abs(q), axis=-1, keepdims=True))
    m = np.ldexp(q, -e)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.ldexp(quat_conjugate(m) / np.sum(m * m, axis=-1, keepdims=True), -e)


def rotate_vectors(q, v, inverse=False):
    """(..., 4), (..., 3) -> (..., 3): R v (or R^T v) with R the rotation of q / |q|, from the unit
    quaternion by v + 2 w (u x v) + 2 u x (u x v)."""
    q, v = _batch_broadcast(_unit(q), _real(v))
    u, w = q[..., :3], q[..., 3:]
    if inverse:
        u = -u
    c = np.cross(u, v)
    return v + 2 * w * c + 2 * np.cross(u, c)


def quat_angle(q):
    """(..., 4) -> the rotation angle in [0, pi] of q / |q|: 2 atan2(|(x, y, z)|, |w|)."""
    q = _unit(q)
    return 2 * np.arctan2(np.sqrt(np.sum(q[..., :3] ** 2, axis=-1)), np.abs(q[..., 3]))


def quat_to_rotvec(q, degrees=False):
    """(..., 4) -> (..., 3) rotation vectors, as scipy's as_rotvec: q / |q| in scipy's canonical
    sign (negated where w < 0, or w = 0 and the first non-zero of x, y, z is negative),
    theta = 2 atan2(|v|, w), v theta / sin(theta / 2) with the series 2 + theta^2/12 +
    7 theta^4/2880 for small angles."""
    q = _unit(q)
    x, y, z, w = np.moveaxis(q, -1, 0)
    flip = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    q = np.where(flip[..., None], -q, q)
    theta = 2 * np.arctan2(np.sqrt(np.sum(q[..., :3] ** 2, axis=-1)), q[..., 3])
    small = theta <= 1e-3
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(small, 2 + theta ** 2 / 12 + 7 * theta ** 4 / 2880, theta / np.sin(theta / 2))
    r = q[..., :3] * scale[..., None]
    return np.degrees(r) if degrees else r


def rotvec_to_quat(v, degrees=False):
    """(..., 3) -> (..., 4): (v sin(theta/2) / theta, cos(theta/2)), theta = |v|, as scipy's
    from_rotvec (the series 1/2 - theta^2/48 + theta^4/3840 for small angles)."""
    v = _real(v)
    if degrees:
        v = v * (np.pi / 180 if v.dtype != np.longdouble else np.longdouble("3.14159265358979323846264338") / 180)
    theta = np.sqrt(np.sum(v * v, axis=-1))
    small = theta <= 1e-3
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(small, 0.5 - theta ** 2 / 48 + theta ** 4 / 3840, np.sin(theta / 2) / theta)
    return np.concatenate([v * scale[..., None], np.cos(theta / 2)[..., None]], -1)


def swing_twist(q, axis):
    """(..., 4), (..., 3) -> (swing, twist), unit (..., 4) each, q / |q| = swing * twist, twist =
    (p u, w) / |(p, w)| with u = axis / |axis| and p = u . (x, y, z); the identity twist where
    p = w = 0."""
    q, u = _batch_broadcast(_unit(q), _unit(axis))
    p = np.sum(u * q[..., :3], axis=-1, keepdims=True)
    twist = np.concatenate([p * u, q[..., 3:]], -1)
    norm = np.sqrt(np.sum(twist * twist, axis=-1, keepdims=True))
    singular = norm == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        twist = np.where(singular, np.array([0, 0, 0, 1], twist.dtype), twist / np.where(singular, 1, norm))
    return quat_multiply(q, quat_conjugate(twist)), twist


def quat_to_6d(q):
    """(..., 4) -> (..., 6): the first two columns of the rotation matrix of q / |q|, column 0 then
    column 1 (Zhou et al. 2019)."""
    r = _real(quat_to_matrix(q)) if _real(q).dtype != np.longdouble else _ld_matrix(_unit(q))
    return np.concatenate([r[..., :, 0], r[..., :, 1]], -1)


def _ld_matrix(q):
    """the rotation matrix of a unit quaternion, in q's precision"""
    x, y, z, w = np.moveaxis(q, -1, 0)
    r = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                  2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                  2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)
    return r.reshape(r.shape[:-1] + (3, 3))


def sixd_to_quat(x):
    """(..., 6) -> (..., 4): Gram-Schmidt as Zhou et al. 2019 (b1 = a1 / |a1|, b2 the normalised
    part of a2 orthogonal to b1, b3 = b1 x b2), then matrix_to_quat of [b1 b2 b3] (columns), in
    float64."""
    x = _real(x)
    b1 = _unit(x[..., :3])
    a2 = _scale_pow2(x[..., 3:], -1)
    b2 = _unit(a2 - np.sum(b1 * a2, axis=-1, keepdims=True) * b1)
    b3 = np.cross(b1, b2)
    return matrix_to_quat(np.stack([b1, b2, b3], -1).astype(np.float64))


# ------------------------------------------------------------------------------ fitting --


def _canonical(q):
    """q or -q with w >= 0 (w = 0: the first non-zero of x, y, z positive), (..., 4)."""
    q = np.array(q, np.float64)
    lead = np.where(q[..., 3:] != 0, q[..., 3:], 0.0)
    for k in range(3):
        lead = np.where(lead != 0, lead, q[..., k:k + 1])
    return np.where(lead < 0, -q, q)


def quat_mean(q, weights=None, axis=None):
    """The weighted mean rotation of (..., 4) quaternions over the leading dims `axis` (None: all),
    sign-invariant: the eigenvector of the largest eigenvalue of sum w q q^T / |q|^2, by
    numpy.linalg.eigh in float64; w >= 0 in the result."""
    q = _scale_pow2(np.asarray(q, np.float64), -1)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    lead = q.shape[:-1]
    w = np.ones(lead) if weights is None else np.broadcast_to(np.asarray(weights, np.float64), lead)
    axes = tuple(range(len(lead))) if axis is None else tuple(np.atleast_1d(axis) % max(len(lead), 1))
    k = np.einsum("...i,...j->...ij", q * w[..., None], q)
    k = k.sum(axis=axes) if axes else k
    _, v = np.linalg.eigh(k)
    return _canonical(v[..., -1])


def _minimal_rotation(a, b):
    """The rotation of least angle taking direction b to direction a (float64 (3,) each; for
    opposite vectors half a turn about e_i x a, i the smallest |a_i|)."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    axis = np.cross(b, a)
    if not axis.any() and a @ b < 0:
        axis = np.cross(np.eye(3)[np.argmin(np.abs(a))], a)
        return np.append(axis / np.linalg.norm(axis), 0.0)
    angle = np.arctan2(np.linalg.norm(axis), a @ b)
    axis = axis / np.linalg.norm(axis) if axis.any() else axis
    return np.append(np.sin(angle / 2) * axis, np.cos(angle / 2))


def _align_one(a, b, w):
    """align_vectors of one set: (quaternion, rssd) in float64."""
    n = len(a)
    primary = [0] if n == 1 else list(np.flatnonzero(np.isinf(w)))
    if primary:
        p = primary[0]
        q = _minimal_rotation(a[p], b[p])
        u = a[p] / np.linalg.norm(a[p])
        others = np.arange(n) != p
        c = quat_to_matrix(q) @ b[others].T
        sin_sum = w[others] @ (np.cross(c.T, a[others]) @ u)
        cos_sum = w[others] @ (np.sum(c.T * a[others], axis=1) - (c.T @ u) * (a[others] @ u))
        phi = np.arctan2(sin_sum, cos_sum)
        q = quat_multiply(np.append(np.sin(phi / 2) * u, np.cos(phi / 2)), q)
        keep = np.ones(n, bool) if n == 1 and not np.isinf(w[0]) else ~np.isinf(w)
    else:  # Kabsch: the SVD of B = sum w a b^T, its reflection removed
        u, s, vt = np.linalg.svd((w[:, None] * a).T @ b)
        d = np.sign(np.linalg.det(u @ vt)) or 1.0
        q = matrix_to_quat(u @ np.diag([1.0, 1.0, d]) @ vt)
        keep = np.ones(n, bool)
    residual = a[keep] - b[keep] @ quat_to_matrix(q).T
    return _canonical(q), np.sqrt(np.sum(w[keep] * np.sum(residual**2, axis=1)))


def align_vectors(a, b, weights=None):
    """The rotations C minimising sum w |a - C b|^2 over (..., N, 3) sets (leading dims broadcast),
    as scipy's Rotation.align_vectors: (quaternions (..., 4) with w >= 0, rssd (...)), float64;
    the general case by Kabsch's SVD, one pair or an infinite weight as scipy's primary-vector
    rule (least-angle rotation, then the best turn about the primary vector)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    a, b = (x[None] if x.ndim == 1 else x for x in (a, b))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n = a.shape[-2]
    a = np.broadcast_to(a, batch + (n, 3)).reshape(-1, n, 3)
    b = np.broadcast_to(b, batch + (n, 3)).reshape(-1, n, 3)
    w = np.ones(batch + (n,)) if weights is None else np.asarray(weights, np.float64)
    w = np.broadcast_to(w, batch + (n,)).reshape(-1, n)
    results = [_align_one(a[i], b[i], w[i]) for i in range(len(a))]
    q = np.array([r[0] for r in results]).reshape(batch + (4,))
    rssd = np.array([r[1] for r in results]).reshape(batch)
    return q, rssd
