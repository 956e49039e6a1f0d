"""extract_rotation: the rotation closest to arbitrary 3x3 matrices (Mueller et al. 2016)."""
from . import _core

#: default max_iter; the default tol is 2e-7 for float32 (the smallest that float32 rounding
#: lets well-conditioned matrices reach, set in jointmath/_extract.c) and 1e-12 for float64
#: (jointmath.reference.extract_rotation's)
DEFAULT_MAX_ITER = 200


def extract_rotation(a, q0=None, *, method="newton", max_iter=DEFAULT_MAX_ITER, tol=None, out=None,
                     return_iterations=False):
    """The rotation closest to each matrix, as a unit quaternion (Mueller et al. 2016).

    Finds the proper rotation R (det +1) minimising ||A - R||_F by the paper's iteration
    R <- exp(omega) R, omega = sum_i r_i x a_i / (|sum_i r_i . a_i| + 1e-9) (columns r_i of R,
    a_i of A): the rotational part of the polar decomposition for det A > 0, and still a proper
    rotation for det A <= 0 and for rank-deficient A, where the directions A does not determine
    carry over from the start.

    a: float32/float64 array (..., 3, 3), or a JOINT_MAT array (...) whose 3x3 part is used
    (computed in float32). Any layout; never modified.
    q0: optional (..., 4) starting quaternions (x, y, z, w), e.g. the previous frame's result;
    broadcast against a's batch shape; converted to a's dtype; need not be unit (q0 = 0 starts
    from the identity). Without q0 the start is the normalised matrix->quaternion of A (the
    paper's recommendation) scaled to the Frobenius norm of a rotation, sqrt(3), so that any
    positive multiple of a rotation starts at that rotation (A = 0: the identity); near the
    answer only for nearly orthogonal A.
    max_iter: int in [0, 2**24], the most updates per matrix (default 200).
    tol: float >= 0, a matrix stops when |omega| < tol (rad) before updating; default 2e-7 for
    float32 (the smallest that float32 rounding lets well-conditioned matrices reach) and 1e-12
    for float64. tol=0 runs max_iter updates.
    out: optional writeable (..., 4) array of the result dtype (float32 for JOINT_MAT); it is
    returned. It may be q0 itself (warm start updated in place).
    return_iterations: also return the int32 (...) count of updates each matrix took.

    Returns (..., 4) unit quaternions in a's dtype (float32 for JOINT_MAT), or (q, iterations).
    The sign follows the start: q is the product of q0 and the applied updates, each with a
    non-negative w, except that a step beyond pi (only far from the answer) may flip it.

    Before iterating, A is scaled by the power of two that puts its largest |element| in [1, 2):
    exact, the answer does not change, and any finite A gives a finite result. A = 0 returns the
    start unchanged (bit for bit a float32 q0 with | |q0|^2 - 1 | <= 2^-21). NaN or inf in one
    matrix or q0 gives NaN for that matrix only.

    Convergence is linear: for A = R S (S symmetric positive definite, eigenvalues s1 >= s2 >= s3)
    the error about the axis of s1 shrinks by s1 / (s1 + s2 + s3) per update, so ill-conditioned
    matrices are slow. Measured float32 cold-start updates to the default tol (median / 99th
    percentile / max of 4,000 random A = R S with eigenvalues 1, uniform, kappa; bench_extract.py):
    kappa 1: 0 / 0 / 0, 2: 16 / 20 / 21, 5: 23 / 42 / 53, 10: 27 / 74 / 95, 30: 31 / 177 / 248,
    100: 33 / 414 / 694, 1000: 35 / 1045 / 6000: beyond condition ~30 the default max_iter=200
    stops some matrices short of tol. So warm-start from the previous frame or time step whenever
    there is one and bound max_iter (the paper uses 3 per simulation step): from starts within
    +-pi/3 (Euler angles) of the answer, 95.7 % of A = I reach ||A - R||_F^2 < 0.001 in 3 updates
    (the paper's experiment, 10^6 starts; 99.6 % in 4); from random starts all converge (to
    3e-7 rad in 15 updates median, 35 at most).

    Accuracy, float32, default tol and max_iter (measured over 20,000 random matrices per case,
    every ISA path): condition number <= 10: within 1.5e-6 rad of the SVD polar rotation;
    condition 100 (max_iter=1000): 1.0e-5 rad (the error left at the stop is about
    tol (kappa + 2) / 2); rotation matrices (cold start): within 2.7e-7 rad; | |q| - 1 | <= 3.1e-7.
    float64 runs the same iteration in NumPy (jointmath.reference.extract_rotation).

    The float32 kernels run without the GIL when matrices * (max_iter + 1) >= 16,384.

    Raises TypeError for a, q0, out of the wrong type or dtype, a non-integer max_iter or a
    non-real tol; ValueError for wrong shapes, batch shapes that do not broadcast, max_iter or
    tol out of range (tol must be finite, <= 1e30), or a read-only out.
    """
    return _core._extract_rotation(a, q0, max_iter, tol, out, return_iterations, method)
