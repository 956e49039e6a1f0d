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

    Finds the proper rotation R (det +1) maximising trace(R^T A), i.e. minimising ||A - R||_F:
    the rotational part of the polar decomposition for det A > 0, and still a proper rotation for
    det A <= 0 and for rank-deficient A, where the directions A does not determine carry over
    from the start. Both methods turn R <- exp(omega) R from the start (space frame):

    - method="newton" (default): Newton steps omega = H^-1 tau on the torque tau = sum_i r_i x a_i
      (columns r_i of R, a_i of A) with the curvature H = trace(M) I - (M + M^T) / 2, M = A R^T,
      where H is safely positive definite; elsewhere (far from the answer) the Ritz update, the
      best rotation about H's lowest eigenvector (up to a half turn). Converges quadratically.
    - method="muller": the update of Mueller et al. 2016, omega = tau / (|trace(R^T A)| + 1e-9).
      Linear: cheapest per update, the choice for per-frame warm starts with a small max_iter.
      Where det A < 0 the denominator is raised to |H|_F (the paper's step overshoots there, up
      to 2x: mirrored matrices oscillated or moved away from the maximum).

    Neither returns a stationary point that is not the maximum: before a matrix stops, the
    second-order condition (H positive semidefinite: every pair of eigenvalues of sym(A R^T)
    sums to >= 0) is checked, and a saddle is left by the Ritz update (a half turn about the
    eigenvector of the largest eigenvalue).

    a: array_like (..., 3, 3) (float32 and float16 compute in float32; float64, integers and bools
    in float64, as NumPy's ufuncs), or a JOINT_MAT array (...) whose 3x3 part is used (computed
    in float32). Any layout, byte order or alignment; never modified.
    q0: optional array_like (..., 4) starting quaternions (x, y, z, w), e.g. the previous frame's
    result; broadcast against a's batch shape; converted to a's dtype (a float64 q0 for float32 a
    first scaled by powers of two into float32's range: any finite size keeps its direction); need
    not be unit (q0 = 0 starts from the identity). Without q0 the start is the normalised matrix->quaternion of A (the
    paper's recommendation) scaled to the Frobenius norm of a rotation, sqrt(3), so that any
    positive multiple of a rotation starts at that rotation (A = 0: the identity).
    method: "newton" (default) or "muller" (a str: None is a TypeError).
    max_iter: int in [0, 2**24], the most updates per matrix (default 200): a Python or NumPy
    integer or a 0-d integer array.
    tol: a real number >= 0 (a Python or NumPy number, a 0-d array, a Fraction, anything with
    __float__; not a bool), default 2e-7 for float32 and 1e-12 for float64. "muller": a matrix stops
    when |omega| < tol, before updating (tol=0 runs max_iter updates). "newton": a matrix stops
    after the Newton step with |omega| < tol (1 + |trace(R^T A)| tr(H^-1)) (tol times an
    estimate, within 3x and high, of the conditioning sigma1 / (sigma2 + sigma3): the level
    where rounding leaves the steps); tol=0 runs max_iter updates.
    out: optional writeable (..., 4) array of the result dtype (float32 for JOINT_MAT); it is
    returned. It may be q0 itself (warm start updated in place).
    return_iterations: also return the int32 (...) count of updates each matrix took (for
    "newton": Newton steps, Ritz updates and Mueller updates, each counts 1); for one matrix a
    NumPy int32 scalar, as ufuncs return 0-d results.

    Returns (..., 4) unit quaternions in a's dtype (float32 for JOINT_MAT), or (q, iterations).
    The sign follows the start and the updates (either sign of a quaternion is the same rotation).

    Before iterating, A is scaled by the power of two that puts its largest |element| in [1, 2):
    exact, the answer does not change, and any finite A gives a finite result. A = 0 returns the
    start unchanged (bit for bit a float32 q0 with | |q0|^2 - 1 | <= 2^-21). NaN or inf in one
    matrix or q0 gives NaN for that matrix only (after 1 update).

    Accuracy and iterations, float32, default tol and max_iter, cold start (bench_extract.py,
    4,000 matrices A = R S per condition number, eigenvalues 1, uniform, kappa; every ISA path,
    tests/test_extract.py checks the bounds): "newton": every matrix with kappa <= 1,000 within
    max(1e-6, 1e-6 sigma1 / (sigma2 + sigma3)) rad of the SVD polar rotation (the float32
    conditioning of the polar factor; measured at most 0.25 of that bound); updates median /
    99th percentile / max: kappa 1: 1 / 1 / 1, 10: 4 / 6 / 8, 100: 4 / 6 / 9, 1000: 4 / 6 / 9.
    "muller" converges linearly (the error about the axis of s1 shrinks by s1 / (s1 + s2 + s3)
    per update): kappa 10: 27 / 74 / 95, 100: median 33, 99th percentile ~400, beyond max_iter
    for many matrices past kappa ~30; from starts within +-pi/3 of A = I, 95.7 % reach
    ||A - R||_F^2 < 0.001 in 3 updates (the paper's experiment). Rotation matrices: within
    2.7e-7 rad; | |q| - 1 | <= 3.1e-7.

    Limits: "newton" needs the curvature's eigenvalues 2 (sigma_j + sigma_k) (sigma3 negative for
    det A < 0) above 2^-14 of A's scale; rank <= 1 A (no unique answer) and det A < 0 with
    sigma2 - sigma3 below about 3e-5 of the largest |element| (two rotations nearly tie for the
    maximum) take Mueller's updates there: they run up to max_iter updates (no hang) and return
    a proper rotation whose trace(R^T A) is within 2 (sigma2 - sigma3) of the maximum, turned
    about the nearly undetermined axis by whatever the start left.

    float64 runs the same methods in float64 SIMD kernels: the same starts, updates, stops and
    saddle check; a q0 with | |q0|^2 - 1 | < 2^-49 is used bit for bit, results have
    | |q| - 1 | < 2^-50. Accuracy, float64, default tol 1e-12, cold start, condition up to 1e4,
    every path (tests/test_float64_extract.py): "newton" within 2e-15 sigma1 / (sigma2 + sigma3)
    rad of an extended-precision polar rotation (measured 7.8e-16 of it) and within 1.2e-14 of
    it from numpy.linalg.svd's polar rotation (measured 1.08e-14, the SVD's own error);
    rotation matrices within 2e-15 rad; Newton updates median 4, at most 10. "muller" stops on
    |omega| < tol, about tol (sigma1 + sigma2 + sigma3) / (sigma2 + sigma3) rad from the answer.
    The kernels run without the GIL when matrices * (max_iter + 1) >= 16,384.

    Raises TypeError for complex, object or string a or q0 (naming it), a masked array, out of
    the wrong type or dtype, a non-str method (None included), a non-integer max_iter or a
    non-real tol (bools are neither); ValueError for wrong shapes, batch shapes that do not
    broadcast, an unknown method, max_iter or tol out of range (tol must be in [0, 1e30];
    either reported as given), a read-only out, or a result too large to allocate (saying how
    large).
    """
    return _core._extract_rotation(a, q0, max_iter, tol, out, return_iterations, method)
