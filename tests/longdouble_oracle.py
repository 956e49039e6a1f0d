"""The extended-precision oracle of the float64 kernel tests (quat_to_matrix, matrix_to_quat,
euler_to_quat, quat_to_euler): the same mathematics evaluated in np.longdouble (80-bit extended
precision on x86: 64-bit mantissa, 15-bit exponent, so no scaling is needed even for 2^-1074 or
DBL_MAX inputs), never jointmath.reference's float64 code. Tests that need it carry
`needs_extended_precision`: where np.longdouble is plain float64 (MSVC, Apple arm64) they skip."""

import numpy as np
import pytest

LD = np.longdouble
EXTENDED = np.finfo(LD).nmant >= 60
needs_extended_precision = pytest.mark.skipif(
    not EXTENDED, reason="np.longdouble is not an extended-precision type on this platform (the float64 oracle)")
PI = LD("3.14159265358979323846264338327950288")
AXES = {"x": 0, "y": 1, "z": 2}


def ld_quat_to_matrix(q):
    """(..., 4) -> (..., 3, 3): the rotation of q / |q| in extended precision."""
    x, y, z, w = np.moveaxis(np.asarray(q).astype(LD), -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = 1 / (x * x + y * y + z * z + w * w)
        r = np.stack([(w * w + x * x - y * y - z * z) * h, 2 * (x * y - w * z) * h, 2 * (x * z + w * y) * h,
                      2 * (x * y + w * z) * h, (w * w - x * x + y * y - z * z) * h, 2 * (y * z - w * x) * h,
                      2 * (x * z - w * y) * h, 2 * (y * z + w * x) * h, (w * w - x * x - y * y + z * z) * h], -1)
    return r.reshape(r.shape[:-1] + (3, 3))


def ld_normalize(q):
    q = np.asarray(q).astype(LD)
    return q / np.sqrt(np.sum(q * q, axis=-1, keepdims=True))


def ld_angle(q0, q1):
    """Angle (rad) of the rotation between q0 and q1, modulo sign, in extended precision."""
    q0, q1 = ld_normalize(q0), ld_normalize(q1)
    q1 = q1 * np.where(np.sum(q0 * q1, axis=-1) < 0, -1, 1)[..., None].astype(LD)
    d = np.sqrt(np.sum((q0 - q1) ** 2, axis=-1))
    s = np.sqrt(np.sum((q0 + q1) ** 2, axis=-1))
    return (4 * np.arctan2(d, s)).astype(np.float64)


def ld_matrix_to_quat(m):
    """(..., 3, 3) -> (..., 4): the largest-divisor quaternion of m, normalised, in extended precision."""
    r = np.moveaxis(np.asarray(m).astype(LD).reshape(np.shape(m)[:-2] + (9,)), -1, 0)
    t = np.stack([1 + r[0] - r[4] - r[8], 1 - r[0] + r[4] - r[8], 1 - r[0] - r[4] + r[8], 1 + r[0] + r[4] + r[8]])
    xy, xz, yz = r[1] + r[3], r[2] + r[6], r[5] + r[7]
    wx, wy, wz = r[7] - r[5], r[2] - r[6], r[3] - r[1]
    candidates = np.stack([np.stack([t[0], xy, xz, wx]), np.stack([xy, t[1], yz, wy]),
                           np.stack([xz, yz, t[2], wz]), np.stack([wx, wy, wz, t[3]])])
    case = np.argmax(t, axis=0)
    q = np.moveaxis(np.take_along_axis(candidates, case[None, None], axis=0)[0], 0, -1)
    return ld_normalize(q)


def ld_quat_multiply(p, q):
    px, py, pz, pw = np.moveaxis(p, -1, 0)
    qx, qy, qz, qw = np.moveaxis(q, -1, 0)
    return np.stack([pw * qx + px * qw + py * qz - pz * qy, pw * qy + py * qw + pz * qx - px * qz,
                     pw * qz + pz * qw + px * qy - py * qx, pw * qw - px * qx - py * qy - pz * qz], -1)


def ld_euler_to_quat(angles, order, degrees):
    """(..., 3) Tait-Bryan angles -> (..., 4) quaternions in extended precision (the definition:
    uppercase intrinsic R = R0 R1 R2, lowercase extrinsic R = R2 R1 R0)."""
    a = np.asarray(angles).astype(LD)
    # degrees: whole turns off first (fmod is exact), so PI's rounding is not multiplied by a big
    # angle; radians: sinl / cosl reduce their argument exactly
    half = np.fmod(a, 720) * (PI / 360) if degrees else a / 2
    e = []
    for k, c in enumerate(order.lower()):
        ek = np.zeros(a.shape[:-1] + (4,), LD)
        ek[..., AXES[c]] = np.sin(half[..., k])
        ek[..., 3] = np.cos(half[..., k])
        e.append(ek)
    if order.isupper():
        return ld_quat_multiply(ld_quat_multiply(e[0], e[1]), e[2])
    return ld_quat_multiply(ld_quat_multiply(e[2], e[1]), e[0])


# ------------------------------------------------------------------ quat_to_matrix --



# ------------------------------------------------------------------ matrix_to_quat --


# ------------------------------------------------------------------ product path --


# ------------------------------------------------------------------ euler_to_quat --


# ------------------------------------------------------------------ quat_to_euler --
