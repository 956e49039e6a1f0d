"""extract_rotation: the rotation closest to arbitrary 3x3 matrices (Mueller et al. 2016)."""
from . import _core

#: default max_iter; the default tol is 2e-7 for float32 (the smallest that float32 rounding
#: lets well-conditioned matrices reach) and 1e-12 for float64 (set in jointmath/_extract.c)
DEFAULT_MAX_ITER = 200


def extract_rotation(a, q0=None, *, max_iter=DEFAULT_MAX_ITER, tol=None, out=None, return_iterations=False):
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
    paper's recommendation), which is near the answer only for nearly orthogonal A.
    max_iter: int >= 0 (float32: <= 2**24), most updates per matrix (default 200).
    tol: float >= 0, a matrix stops when |omega| < tol (rad) before updating; default 2e-7 for
    float32 (the smallest that float32 rounding lets well-conditioned matrices reach) and 1e-12
    for float64. tol=0 runs max_iter updates.
    out: optional writeable (..., 4) array of the result dtype (float32 for JOINT_MAT); it is
    returned. It may be q0 itself (warm start updated in place).
    return_iterations: also return the int32 (...) count of updates each matrix took.

    Returns (..., 4) unit quaternions in a's dtype (float32 for JOINT_MAT), or (q, iterations).
    The sign follows the start: q is the product of the applied update rotations and q0.

    Before iterating, A is scaled by the power of two that puts its largest |element| in [1, 2):
    exact, the answer does not change, and any finite A gives a finite result. A = 0 returns the
    start unchanged (a unit float32 q0 bit for bit). NaN in one matrix or q0 gives NaN there
    only.

    Convergence is linear: for A = R S (S symmetric, eigenvalues s1 >= s2 >= s3 > 0) the error
    about the axis of s1 shrinks by s1 / (s1 + s2 + s3) per update, so ill-conditioned matrices
    are slow. Measured cold-start updates to reach the default float32 tol (median / 99th
    percentile, random S of that condition number, bench_extract.py): condition 1: 0 / 0,
    2: 14 / 20, 10: 57 / 83, 100: 483 / 700, 1000: 4,000+ (max_iter hit). Warm-start from the
    previous frame instead, and bound max_iter (3 is typical per simulation step).

    Accuracy, float32, default tol and max_iter: condition number <= 10 matches the SVD polar
    rotation within 1e-5 rad (99.9 % of matrices; <= 1e-4 rad all); a rotation matrix comes back
    within 1e-6 rad; | |q| - 1 | <= 5e-7. float64 computes the same iteration in NumPy
    (jointmath.reference.extract_rotation).

    Raises TypeError for a, q0, out of the wrong type or dtype and for non-integer max_iter or
    non-real tol; ValueError for wrong shapes, shapes that do not broadcast, max_iter or tol out
    of range, or a read-only out.
    """
    return _core._extract_rotation(a, q0, max_iter, tol, out, return_iterations)
