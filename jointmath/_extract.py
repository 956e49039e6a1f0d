"""extract_rotation: the rotation closest to arbitrary 3x3 matrices (Mueller et al. 2016)."""
from . import _core

#: default max_iter; the default tol is 2e-7 for float32 (the smallest that float32 rounding
#: lets well-conditioned matrices reach) and 1e-12 for float64 (Newton's last step is then far
#: below float64 rounding of the answer; Mueller's stops within about 1e-12 kappa), both set in
#: jointmath/_extract.c
DEFAULT_MAX_ITER = 200


def extract_rotation(a, q0=None, *, method="newton", max_iter=DEFAULT_MAX_ITER, tol=None, out=None,
                     return_iterations=False):
    """The rotation closest to each matrix, as a unit quaternion.

    Finds the proper rotation R (det +1) maximising trace(R^T A), that is minimising
    ``||A - R||_F``: the rotational part of the polar decomposition for det A > 0, and still a
    proper rotation for det A <= 0 and for rank-deficient A, where the directions A does not
    determine carry over from the start. Both methods turn R <- exp(omega) R from the start:

    - ``method="newton"`` (default): Newton steps omega = H^-1 tau on the torque
      tau = sum_i r_i x a_i (columns r_i of R, a_i of A) with the curvature
      H = trace(M) I - (M + M^T) / 2, M = A R^T, where H is safely positive definite;
      elsewhere (far from the answer) the Ritz update, the best rotation about H's lowest
      eigenvector. Converges quadratically.
    - ``method="muller"``: the update of Mueller et al. 2016,
      ``omega = tau / (|trace(R^T A)| + 1e-9)``. Linear, but the cheapest per update: the one
      for per-frame warm starts with a small ``max_iter``. Where det A < 0 the denominator is
      raised to ``|H|_F`` (the paper's step overshoots there).

    Neither returns a stationary point that is not the maximum: before a matrix stops, the
    second-order condition (H positive semidefinite) is checked, and a saddle is left by a
    Ritz update (a half turn about the eigenvector of the largest eigenvalue). The exception
    is ``"newton"`` near a multiple of a reflection (see Limits), where a whole set of
    rotations is within the bound of the maximum and any of them may be returned.

    Parameters
    ----------
    a : array_like, shape (..., 3, 3), or ndarray of JOINT_MAT
        The matrices. float32 and float16 compute in float32; float64, integers and bools
        in float64. A JOINT_MAT array's 3x3 part is used (in float32). Any layout, byte
        order or alignment; never modified.
    q0 : array_like, shape (..., 4), optional
        Starting quaternions ``(x, y, z, w)``, e.g. the previous frame's result; broadcast
        against ``a``'s batch shape and converted to its dtype; need not be unit (0 starts
        from the identity). Without ``q0`` the start is the normalised matrix-to-quaternion
        of A.
    method : {"newton", "muller"}, optional
        The update (a str; None is a TypeError).
    max_iter : int, optional
        The most updates per matrix, in [0, 2**24] (default 200).
    tol : float, optional
        A real number in [0, 1e30]; default 2e-7 for float32 and 1e-12 for float64.
        ``"muller"``: a matrix stops when ``|omega| < tol``, before updating. ``"newton"``: a
        matrix stops after the step with ``|omega| < 2 tol (1 + |trace(R^T A)| tr(H^-1))``, tol
        times an estimate of the conditioning sigma1 / (sigma2 + sigma3), doubled (the
        rounding of the torque alone makes steps of one estimate). ``tol=0`` runs
        ``max_iter`` updates.
    out : ndarray, shape (..., 4), optional
        A writeable array of the result dtype (float32 for JOINT_MAT) to fill; it is
        returned. It may be ``q0`` itself (a warm start updated in place).
    return_iterations : bool (Python's or NumPy's), optional
        Also return the int32 count of updates each matrix took (Newton, Ritz and Mueller
        updates count 1 each).

    Returns
    -------
    q : ndarray, shape (..., 4)
        Unit quaternions in ``a``'s dtype (float32 for JOINT_MAT). The sign follows the start
        and the updates.
    iterations : ndarray of int32, shape (...)
        Only with ``return_iterations=True``; a NumPy scalar for one matrix.

    Raises
    ------
    TypeError
        For complex, object or string ``a`` or ``q0`` (naming it), a masked array, an ``out``
        of the wrong type or dtype, a non-str ``method``, a non-integer ``max_iter``, a
        non-real ``tol`` (bools are neither) or a ``return_iterations`` that is not a bool.
    ValueError
        For wrong shapes, batch shapes that do not broadcast, an unknown method,
        ``max_iter`` or ``tol`` out of range, a read-only ``out``, a result too large to
        allocate.

    See Also
    --------
    matrix_to_quat : the quaternion of a matrix that is already a rotation.

    Notes
    -----
    A is first scaled by the power of two that puts its largest ``|element|`` in [1, 2): exact,
    so any finite A gives a finite result. A = 0 returns the start unchanged. NaN or inf in
    one matrix or ``q0`` gives NaN for that matrix only.

    float32, default ``tol`` and ``max_iter``, cold start, every path: with ``"newton"`` every
    matrix of condition <= 1,000 is within max(1e-6, 1e-6 sigma1 / (sigma2 + sigma3)) rad of
    the SVD polar rotation, in a median of 4 updates or fewer (at most 20, near-reflections
    included); rotation
    matrices within 2.7e-7 rad; ``| |q| - 1 | <= 3.1e-7``. ``"muller"`` converges linearly (the
    error about the axis of sigma1 shrinks by sigma1 / (sigma1 + sigma2 + sigma3) per update).
    float64 runs the same methods in float64 kernels: ``"newton"`` within
    2e-15 sigma1 / (sigma2 + sigma3) rad of an extended-precision polar rotation, in at most
    20 updates at condition <= 10,000. Every ISA path (scalar, SSE, AVX2, AVX-512, NEON) computes
    the same bits: the results and the update counts do not depend on the CPU.

    Limits: ``"newton"`` needs the curvature's eigenvalues above 2**-14 of A's scale (2**-40
    in float64); det A < 0 with sigma2 - sigma3 below about 3e-5 of the largest element (two
    rotations nearly tie) takes Newton steps about the other two axes only and returns a
    proper rotation whose trace(R^T A) is within 2 (sigma2 - sigma3) of the maximum; near a
    multiple of a reflection (det A < 0, all three singular values within about 3e-4 of the
    largest element in float32, 2e-5 in float64), where every rotation of a near-flat set is
    within 2 (sigma1 - sigma3) of the maximum and the updates crawl along it, ``"newton"``
    stops as soon as what is left to gain is far below that: trace(R^T A) within
    2 (sigma1 - sigma3) + 2 (sigma2 - sigma3) of the maximum, not within the angle bounds
    above. Rank <= 1 A takes Mueller's updates. The kernels run without the
    GIL when matrices * (max_iter + 1) >= 16,384.

    Examples
    --------
    >>> import numpy as np, jointmath as jm
    >>> turn = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]], np.float32)   # 90 degrees about z
    >>> stretched = turn * np.float32([2.0, 0.5, 1.0])   # A = R S, S = diag(2, 0.5, 1)
    >>> np.round(jm.extract_rotation(stretched), 5) + 0.0
    array([0.     , 0.     , 0.70711, 0.70711], dtype=float32)

    A warm start, three Mueller updates, in place:

    >>> q = jm.extract_rotation(stretched[None].repeat(4, 0))
    >>> q, n = jm.extract_rotation(stretched, q[0], method="muller", max_iter=3, return_iterations=True)
    >>> np.round(q, 5) + 0.0, int(n) <= 3
    (array([0.     , 0.     , 0.70711, 0.70711], dtype=float32), True)
    """
    return _core._extract_rotation(a, q0, max_iter, tol, out, return_iterations, method)
