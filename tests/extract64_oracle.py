"""An independent float64 oracle of csrc/extract.c's two methods, in NumPy (the tests only).

The same start, scaling, updates and stops as the kernels (see their comments), written with
NumPy's float64 linear algebra: np.linalg.solve for the Newton step, eigh for the Ritz update's
axis, np.cos / np.sinc for the turn. Its iteration counts and results are what the float64 kernel
is compared with (tests/kernels/test_extract.py, its float64 section).
"""
import numpy as np

from jointmath.reference import matrix_to_quat

CURVATURE_MARGIN = 2.0**-14  # csrc/extract.c's, relative to A scaled to a largest |element| in [1, 2)


def _pow2_scale(x, axes):
    """The power of two putting the largest |element| over `axes` in [1, 2) (1 for zeros)."""
    _, exponent = np.frexp(np.max(np.abs(x), axis=axes))
    return np.ldexp(1.0, np.where(np.isfinite(exponent), 1 - exponent, 0))


def _davenport(a):
    """K with q^T K q = trace(R(q)^T A), (n, 4, 4), from (n, 3, 3)."""
    s = a + np.swapaxes(a, 1, 2)
    t = np.trace(a, axis1=1, axis2=2)
    k = np.stack([a[:, 2, 1] - a[:, 1, 2], a[:, 0, 2] - a[:, 2, 0], a[:, 1, 0] - a[:, 0, 1]], 1)
    out = np.empty((len(a), 4, 4))
    out[:, :3, :3] = s - t[:, None, None] * np.eye(3)
    out[:, :3, 3] = out[:, 3, :3] = k
    out[:, 3, 3] = t
    return out


def _tangent_basis(q):
    """(n, 4, 3): columns b_i = (e_i, 0) * q, the half turns of R about the axes."""
    x, y, z, w = q.T
    return np.stack([np.stack([w, -z, y, -x], 1), np.stack([z, w, -x, -y], 1), np.stack([-y, x, w, -z], 1)], 2)


def _turn(q, omega):
    """q turned by the rotation vector omega (space frame), (n, 4)."""
    theta = np.linalg.norm(omega, axis=1)
    dv = omega * (0.5 * np.sinc(theta / (2 * np.pi)))[:, None]
    dw = np.cos(theta / 2)
    v, w = q[:, :3], q[:, 3]
    return np.concatenate([dw[:, None] * v + w[:, None] * dv + np.cross(dv, v),
                           (dw * w - np.sum(dv * v, 1))[:, None]], 1)


def _ritz(q, torque, curvature):
    """The Ritz update: the best quaternion in the plane of q and the half turn about N's lowest
    eigenvector; (gain, new q)."""
    eigenvalues, vectors = np.linalg.eigh(curvature)
    n = vectors[:, :, 0]
    half = eigenvalues[:, 0] / 2
    t = np.sum(torque * n, 1)
    r = np.hypot(half, t)
    q_side = half >= 0
    c_q = np.where(q_side, half + r, t)
    c_b = np.where(q_side, t, r - half)
    new = c_q[:, None] * q + c_b[:, None] * np.einsum("nij,nj->ni", _tangent_basis(q), n)
    return r - half, new / np.linalg.norm(new, axis=1, keepdims=True)


def extract_rotation64(a, q0, newton, max_iter, tol, return_iterations):
    """What jointmath.extract_rotation computes for float64 a: method Newton (newton true) or
    Mueller; tol None is 1e-12."""
    tol = 1e-12 if tol is None else float(tol)
    a = np.asarray(a, dtype=np.float64)
    batch = a.shape[:-2] if q0 is None else np.broadcast_shapes(a.shape[:-2], np.shape(q0)[:-1])
    a = np.broadcast_to(a, batch + (3, 3)).reshape(-1, 3, 3)
    with np.errstate(invalid="ignore", over="ignore"):
        a = a * _pow2_scale(a, (1, 2))[:, None, None]
        norm2 = np.sum(a * a, axis=(1, 2))
        cofactors = np.cross(a[:, [1, 2, 0]], a[:, [2, 0, 1]])  # rows of adj(A)^T
        determined = np.sum(cofactors * cofactors, axis=(1, 2)) > 2.0**-24 * norm2 * norm2
        if q0 is None:
            nonzero = norm2 > 0
            unit = np.where(nonzero[:, None, None], a * np.sqrt(3 / np.where(nonzero, norm2, 1))[:, None, None],
                            np.eye(3))
            q = matrix_to_quat(unit)
        else:
            q = np.broadcast_to(np.asarray(q0, dtype=np.float64), batch + (4,)).reshape(-1, 4)
            is_zero = ~np.any(q != 0, axis=1)
            q = q * _pow2_scale(q, 1)[:, None]
            q = np.where(is_zero[:, None], [0.0, 0.0, 0.0, 1.0], q / np.linalg.norm(q, axis=1, keepdims=True))
    k = _davenport(a)
    iterations = np.zeros(len(a), np.int32)
    active = np.ones(len(a), bool)
    eye = np.eye(3)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        qi, ki = q[idx], k[idx]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            b = _tangent_basis(qi)
            p = np.einsum("nij,nj->ni", ki, qi)
            f = np.sum(qi * p, 1)
            torque = np.einsum("nij,ni->nj", b, p)
            omega = torque / (np.abs(f) + 1e-9)[:, None]
            small = np.sum(omega * omega, 1) < tol * tol
            stop = small.copy()
            newton_lanes = np.zeros(len(idx), bool)
            candidates = determined[idx] & small
            if newton or candidates.any():
                curvature = f[:, None, None] * eye - np.einsum("nki,nkl,nlj->nij", b, ki, b)
                finite = np.isfinite(curvature).all(axis=(1, 2))
                curvature[~finite] = eye
            if newton:
                lowest = np.linalg.eigvalsh(curvature)[:, 0]
                newton_lanes = determined[idx] & finite & (lowest > CURVATURE_MARGIN)
                safe = np.where(newton_lanes[:, None, None], curvature, eye)
                eps = 2 * np.linalg.solve(safe, torque[:, :, None])[:, :, 0]
                threshold = 2 * tol * (1 + np.abs(f) * np.trace(np.linalg.inv(safe), axis1=1, axis2=2))
                omega = np.where(newton_lanes[:, None], eps, omega)
                stop = np.where(newton_lanes, np.linalg.norm(eps, axis=1) < threshold, small)
                candidates = determined[idx] & finite & ~newton_lanes
            next_q = _turn(qi, omega)
            ritz = np.zeros(len(idx), bool)
            if candidates.any():
                gain, ritz_q = _ritz(qi[candidates], torque[candidates], curvature[candidates])
                ritz[candidates] = gain > CURVATURE_MARGIN
                next_q[candidates] = np.where((gain > CURVATURE_MARGIN)[:, None], ritz_q, next_q[candidates])
            stop &= ~ritz
            # Mueller lanes stop before updating, Newton lanes after; NaN updates once, then stops
            update = ~(stop & ~newton_lanes)
            stop |= ~np.isfinite(omega).all(axis=1)
            next_q /= np.linalg.norm(next_q, axis=1, keepdims=True)
        q[idx[update]] = next_q[update]
        iterations[idx[update]] += 1
        active[idx[stop]] = False
    q = q.reshape(batch + (4,))
    return (q, iterations.reshape(batch)) if return_iterations else q
