/*
 * fit.c - rotations fitted to data: the weighted mean of quaternions (jointmath.quat_mean), the
 * rotation that best maps one vector set onto another (jointmath.align_vectors), and uniformly
 * distributed random rotations (jointmath.random_quats).
 *
 * Compiled once per ISA (see simd/common.h). The two fits reduce each set to a symmetric 4x4
 * matrix K accumulated in double (JM_WD items per vector) and take K's dominant eigenvector in
 * double: batched means by certified matrix powers, JM_WD sets per vector, the rest by cyclic
 * Jacobi sweeps (docs/design/fitting.md). random_quats is Shoemake's method on a counter-based
 * stream, JM_WD rotations per vector. float32 and float64 come from one template,
 * fit_template.h, included twice below.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "jointmath.h"
#include "simd/common.h"

/* Jacobi sweeps stop when the off-diagonal sum of squares is below this times the diagonal's:
   the off-diagonal elements are then below 2^-56 of the matrix, under the rounding of a sweep. */
#define JACOBI_OFF_DIAGONAL 0x1p-112
#define JACOBI_MAX_SWEEPS 32 /* cyclic Jacobi converges quadratically: 4x4 needs about 4-6 */

/* q or -q: w >= 0 (w = 0: the first non-zero of x, y, z positive). */
static void canonical_sign(double q[4]) {
    int negate = q[3] < 0.0;
    if (q[3] == 0.0)
        negate = q[0] != 0.0 ? q[0] < 0.0 : q[1] != 0.0 ? q[1] < 0.0 : q[2] < 0.0;
    if (negate)
        for (int k = 0; k < 4; k++)
            q[k] = -q[k];
}

/* From the eigenvalues (diagonal) and eigenvectors (the columns of v) of a symmetric 4x4 matrix:
   the eigenvector of the largest one, normalised, with the canonical sign, and the two largest
   eigenvalues. Ties go to w, then z, y, x (K = 0: the identity). */
static void eigen_result(const double diagonal[4], const double v[4][4], double q[4], double *lambda1,
                         double *lambda2) {
    int top = 3;
    for (int i = 2; i >= 0; i--)
        if (diagonal[i] > diagonal[top])
            top = i;
    double second = -INFINITY;
    for (int i = 0; i < 4; i++)
        if (i != top && diagonal[i] > second)
            second = diagonal[i];
    *lambda1 = diagonal[top];
    *lambda2 = second;
    double n2 = 0.0;
    for (int i = 0; i < 4; i++)
        n2 += v[i][top] * v[i][top];
    const double scale = 1.0 / sqrt(n2);
    for (int i = 0; i < 4; i++)
        q[i] = v[i][top] * scale;
    canonical_sign(q);
}

/*
 * The eigenvector of the largest eigenvalue of the symmetric 4x4 matrix k (destroyed), as a unit
 * quaternion with w >= 0 (w = 0: the first non-zero of x, y, z positive), with the largest and
 * second largest eigenvalues. Cyclic Jacobi rotations (backward stable: the eigenvector is
 * within about 1e-16 ||K|| / (lambda1 - lambda2) rad of the exact one). Ties between the
 * largest eigenvalues are broken towards w, then z, y, x, so that K = 0 gives the identity.
 * A NaN or infinite element gives NaN.
 */
static void dominant_eigenvector(double k[4][4], double q[4], double *lambda1, double *lambda2) {
    double v[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
    double norm = 0.0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            norm += k[i][j] * k[i][j];
    if (!isfinite(norm)) {
        q[0] = q[1] = q[2] = q[3] = *lambda1 = *lambda2 = NAN;
        return;
    }
    for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; sweep++) {
        double off = 0.0, diagonal = 0.0;
        for (int i = 0; i < 4; i++) {
            diagonal += k[i][i] * k[i][i];
            for (int j = i + 1; j < 4; j++)
                off += k[i][j] * k[i][j];
        }
        if (!(off > JACOBI_OFF_DIAGONAL * diagonal))
            break;
        for (int p = 0; p < 3; p++)
            for (int r = p + 1; r < 4; r++) {
                const double kpr = k[p][r];
                if (kpr == 0.0)
                    continue;
                /* the rotation that zeroes k[p][r], its angle below pi/4 (the smaller root) */
                const double theta = (k[r][r] - k[p][p]) / (2.0 * kpr);
                const double t = fabs(theta) > 0x1p500 ? 0.5 / theta
                                                       : copysign(1.0, theta) / (fabs(theta) + sqrt(theta * theta + 1.0));
                const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int i = 0; i < 4; i++) { /* columns p and r */
                    const double kip = k[i][p], kir = k[i][r];
                    k[i][p] = c * kip - s * kir;
                    k[i][r] = s * kip + c * kir;
                }
                for (int i = 0; i < 4; i++) { /* rows p and r */
                    const double kpi = k[p][i], kri = k[r][i];
                    k[p][i] = c * kpi - s * kri;
                    k[r][i] = s * kpi + c * kri;
                }
                k[p][r] = k[r][p] = 0.0;
                for (int i = 0; i < 4; i++) {
                    const double vip = v[i][p], vir = v[i][r];
                    v[i][p] = c * vip - s * vir;
                    v[i][r] = s * vip + c * vir;
                }
            }
    }
    const double diagonal[4] = {k[0][0], k[1][1], k[2][2], k[3][3]};
    eigen_result(diagonal, v, q, lambda1, lambda2);
}

/*
 * dominant_eigenvector of JM_WD matrices at once, matrix l in lane l: k[i][j][l] (both triangles),
 * results to q[l], eigenvalues to lambda1[l], lambda2[l]. The same rotations in every lane; sweeps
 * go on while a lane's off-diagonal part is not yet small (a converged lane then turns by angles of
 * about 0, a lane of NaN stays NaN). A rotation whose angle's tangent would need theta^2 beyond
 * DBL_MAX is skipped (t = 0, k[p][r] below 2^-500 of the diagonal gap: dropped).
 */
static void dominant_eigenvectors_lanes(const double k_in[4][4][JM_WD], double q[JM_WD][4], double lambda1[JM_WD],
                                        double lambda2[JM_WD]) {
    vd k[4][4], v[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            k[i][j] = vd_loadu(k_in[i][j]);
            v[i][j] = vd_set1(i == j ? 1.0 : 0.0);
        }
    const vd zero = vd_set1(0.0), one = vd_set1(1.0), sign_bit = vd_set1(-0.0);
    for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; sweep++) {
        vd off = zero, diagonal = zero;
        for (int i = 0; i < 4; i++) {
            diagonal = vd_add(diagonal, vd_mul(k[i][i], k[i][i]));
            for (int j = i + 1; j < 4; j++)
                off = vd_add(off, vd_mul(k[i][j], k[i][j]));
        }
        if (!md_any(vd_gt(off, vd_mul(vd_set1(JACOBI_OFF_DIAGONAL), diagonal))))
            break;
        for (int p = 0; p < 3; p++)
            for (int r = p + 1; r < 4; r++) {
                const vd kpr = k[p][r];
                const vd theta = vd_div(vd_sub(k[r][r], k[p][p]), vd_add(kpr, kpr));
                const vd theta_sign = vd_and(theta, sign_bit);
                const vd magnitude = vd_xor(theta, theta_sign);
                vd t = vd_xor(vd_div(one, vd_add(magnitude, vd_sqrt(vd_add(vd_mul(theta, theta), one)))), theta_sign);
                t = vd_select(vd_eq(kpr, zero), zero, t);
                const vd c = vd_div(one, vd_sqrt(vd_add(vd_mul(t, t), one))), s = vd_mul(t, c);
                for (int i = 0; i < 4; i++) {
                    const vd kip = k[i][p], kir = k[i][r];
                    k[i][p] = vd_sub(vd_mul(c, kip), vd_mul(s, kir));
                    k[i][r] = vd_add(vd_mul(s, kip), vd_mul(c, kir));
                }
                for (int i = 0; i < 4; i++) {
                    const vd kpi = k[p][i], kri = k[r][i];
                    k[p][i] = vd_sub(vd_mul(c, kpi), vd_mul(s, kri));
                    k[r][i] = vd_add(vd_mul(s, kpi), vd_mul(c, kri));
                }
                k[p][r] = k[r][p] = zero;
                for (int i = 0; i < 4; i++) {
                    const vd vip = v[i][p], vir = v[i][r];
                    v[i][p] = vd_sub(vd_mul(c, vip), vd_mul(s, vir));
                    v[i][r] = vd_add(vd_mul(s, vip), vd_mul(c, vir));
                }
            }
    }
    double diagonal[JM_WD][4], columns[4][JM_WD][4];
    vd_store_quads((char *)diagonal, sizeof diagonal[0], k[0][0], k[1][1], k[2][2], k[3][3]);
    for (int i = 0; i < 4; i++) /* columns[i][l] = row i of lane l's v */
        vd_store_quads((char *)columns[i], sizeof columns[i][0], v[i][0], v[i][1], v[i][2], v[i][3]);
    for (int l = 0; l < JM_WD; l++) {
        double vl[4][4];
        for (int i = 0; i < 4; i++)
            memcpy(vl[i], columns[i][l], sizeof vl[i]);
        eigen_result(diagonal[l], vl, q[l], &lambda1[l], &lambda2[l]);
        double norm = 0.0; /* a NaN or infinite element: NaN, as dominant_eigenvector */
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                norm += k_in[i][j][l] * k_in[i][j][l];
        if (!isfinite(norm))
            q[l][0] = q[l][1] = q[l][2] = q[l][3] = lambda1[l] = lambda2[l] = NAN;
    }
}

/*
 * The dominant eigenvectors of JM_WD positive semidefinite 4x4 matrices (matrix l in lane l, both
 * triangles), by powers: P = K^32 from five squarings (each scaled by its trace), v the column of
 * P with the largest diagonal element, then v <- P v twice (normalised): the other eigenvectors'
 * parts shrink by (lambda2 / lambda1)^96. A lane is kept (its bit set in the returned mask, its
 * unit eigenvector with w >= 0 in q[l]) only when its residual certifies it: with
 * lambda = v^T K v and r = K v - lambda v, the angle to the exact eigenvector is at most
 * (|r| + its rounding, about 2^-50 trace K) / (lambda1 - lambda2), and
 * lambda1 - lambda2 >= 2 lambda - trace K (lambda <= lambda1, and lambda2 <= trace - lambda1 as
 * the eigenvalues are >= 0); kept when |r| <= 2^-48 (2 lambda - trace K), so within about
 * 2^-48 + 2^-50 trace K / (lambda1 - lambda2) rad, the Jacobi sweeps' bound in form. The other
 * lanes (eigenvalues close, NaN, infinities: a few sets in a hundred of a typical mean) are
 * left to Jacobi. No division or square root per rotation: several times cheaper than the sweeps.
 */
static unsigned dominant_eigenvectors_by_powers(const double k_in[4][4][JM_WD], double q[JM_WD][4]) {
    vd k[4][4], p[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            p[i][j] = k[i][j] = vd_loadu(k_in[i][j]);
    const vd one = vd_set1(1.0);
    for (int squaring = 0; squaring < 5; squaring++) {
        const vd scale = vd_div(one, vd_add(vd_add(p[0][0], p[1][1]), vd_add(p[2][2], p[3][3])));
        vd s[4][4];
        for (int i = 0; i < 4; i++)
            for (int j = i; j < 4; j++) {
                const vd e = vd_add(vd_add(vd_mul(p[i][0], p[0][j]), vd_mul(p[i][1], p[1][j])),
                                    vd_add(vd_mul(p[i][2], p[2][j]), vd_mul(p[i][3], p[3][j])));
                s[i][j] = s[j][i] = vd_mul(e, vd_mul(scale, scale));
            }
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                p[i][j] = s[i][j];
    }
    vd v[4], best = p[0][0];
    for (int i = 0; i < 4; i++)
        v[i] = p[i][0];
    for (int j = 1; j < 4; j++) {
        const vdmask larger_diagonal = vd_gt(p[j][j], best);
        best = vd_select(larger_diagonal, p[j][j], best);
        for (int i = 0; i < 4; i++)
            v[i] = vd_select(larger_diagonal, p[i][j], v[i]);
    }
    for (int step = 0; step < 3; step++) { /* step 0 only normalises the column */
        vd u[4];
        for (int i = 0; i < 4; i++)
            u[i] = step == 0 ? v[i]
                             : vd_add(vd_add(vd_mul(p[i][0], v[0]), vd_mul(p[i][1], v[1])),
                                      vd_add(vd_mul(p[i][2], v[2]), vd_mul(p[i][3], v[3])));
        const vd inverse_norm = vd_div(one, vd_sqrt(vd_add(vd_add(vd_mul(u[0], u[0]), vd_mul(u[1], u[1])),
                                                           vd_add(vd_mul(u[2], u[2]), vd_mul(u[3], u[3])))));
        for (int i = 0; i < 4; i++)
            v[i] = vd_mul(u[i], inverse_norm);
    }
    vd kv[4];
    for (int i = 0; i < 4; i++)
        kv[i] = vd_add(vd_add(vd_mul(k[i][0], v[0]), vd_mul(k[i][1], v[1])),
                       vd_add(vd_mul(k[i][2], v[2]), vd_mul(k[i][3], v[3])));
    const vd lambda = vd_add(vd_add(vd_mul(v[0], kv[0]), vd_mul(v[1], kv[1])), vd_add(vd_mul(v[2], kv[2]), vd_mul(v[3], kv[3])));
    vd residual2 = vd_set1(0.0);
    for (int i = 0; i < 4; i++) {
        const vd r = vd_sub(kv[i], vd_mul(lambda, v[i]));
        residual2 = vd_add(residual2, vd_mul(r, r));
    }
    const vd trace = vd_add(vd_add(k[0][0], k[1][1]), vd_add(k[2][2], k[3][3]));
    const vd gap_bound = vd_mul(vd_sub(vd_add(lambda, lambda), trace), vd_set1(0x1p-48));
    const vdmask certified = md_and(vd_gt(gap_bound, vd_set1(0.0)), vd_ge(vd_mul(gap_bound, gap_bound), residual2));
    double certified_lanes[JM_WD];
    vd_store_quads((char *)q, sizeof q[0], v[0], v[1], v[2], v[3]);
    const vd flags = vd_select(certified, one, vd_set1(0.0));
    memcpy(certified_lanes, &flags, sizeof certified_lanes);
    unsigned mask = 0;
    for (int l = 0; l < JM_WD; l++)
        if (certified_lanes[l] == 1.0) {
            canonical_sign(q[l]);
            mask |= 1u << l;
        }
    return mask;
}

/* K of the weighted sum B = sum w a b^T (Davenport's q-method, the active rotation a = C b):
   the eigenvector of K's largest eigenvalue is the quaternion of the C maximising tr(C^T B). */
static void davenport_matrix(const double bm[3][3], double k[4][4]) {
    const double trace = bm[0][0] + bm[1][1] + bm[2][2];
    const double z[3] = {bm[2][1] - bm[1][2], bm[0][2] - bm[2][0], bm[1][0] - bm[0][1]};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            k[i][j] = bm[i][j] + bm[j][i] - (i == j ? trace : 0.0);
        k[i][3] = k[3][i] = z[i];
    }
    k[3][3] = trace;
}

/* The rotation matrix of the unit quaternion q (x, y, z, w), v' = R v. */
static void quat_matrix(const double q[4], double m[3][3]) {
    const double x = q[0], y = q[1], z = q[2], w = q[3];
    m[0][0] = 1 - 2 * (y * y + z * z);
    m[0][1] = 2 * (x * y - z * w);
    m[0][2] = 2 * (x * z + y * w);
    m[1][0] = 2 * (x * y + z * w);
    m[1][1] = 1 - 2 * (x * x + z * z);
    m[1][2] = 2 * (y * z - x * w);
    m[2][0] = 2 * (x * z - y * w);
    m[2][1] = 2 * (y * z + x * w);
    m[2][2] = 1 - 2 * (x * x + y * y);
}

/* The Hamilton product p q (apply q, then p), (x, y, z, w). */
static void quat_product(const double p[4], const double q[4], double out[4]) {
    out[0] = p[3] * q[0] + p[0] * q[3] + p[1] * q[2] - p[2] * q[1];
    out[1] = p[3] * q[1] - p[0] * q[2] + p[1] * q[3] + p[2] * q[0];
    out[2] = p[3] * q[2] + p[0] * q[1] - p[1] * q[0] + p[2] * q[3];
    out[3] = p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2];
}

/* max(a, b) without a libm call (fmax's NaN rule keeps it out of line): a NaN argument may be
   dropped, which only the scale decisions see (a NaN input still gives NaN results). */
static inline double larger(double a, double b) { return a > b ? a : b; }

/* The power of two 2^e with max |v[k]| * 2^-e in [0.5, 1) (0 for zero, inf or NaN). */
static int exponent_of(double largest) {
    int e = 0;
    if (largest > 0.0 && isfinite(largest))
        frexp(largest, &e);
    return e;
}

/* 2^-e as two factors f[0] f[1] that are normal doubles for any e of exponent_of (|e| <= 1074):
   x * f[0] * f[1] is x * 2^-e, exact unless the result is subnormal (then rounded, as ldexp). */
static void power_of_two_factors(int e, double f[2]) {
    const int k[2] = {-e / 2, -e - (-e / 2)}; /* |k| <= 537: normal */
    for (int i = 0; i < 2; i++) { /* 2^k from its bits: ldexp is a libm call per set */
        const uint64_t bits = (uint64_t)(k[i] + 1023) << 52;
        memcpy(&f[i], &bits, sizeof bits);
    }
}

/* v / |v| for a double[3] of any finite non-zero scale (scaled by a power of two first); 0 for
   a zero vector. */
static double unit_vector(const double v[3], double u[3]) {
    const int e = exponent_of(larger(fabs(v[0]), larger(fabs(v[1]), fabs(v[2]))));
    double s[3], n2 = 0.0;
    for (int i = 0; i < 3; i++) {
        s[i] = ldexp(v[i], -e);
        n2 += s[i] * s[i];
    }
    const double n = sqrt(n2);
    for (int i = 0; i < 3; i++)
        u[i] = s[i] / n;
    return n;
}

/*
 * The rotation of least angle taking the unit vector b to the unit vector a, as scipy's
 * align_vectors returns it for one pair: the axis b x a, or for exactly opposite vectors the
 * axis e_i x a with i the index of a's smallest |component| (the first of equals). The scalar
 * part 1 + a.b is taken as |a + b|^2 / 2, exact to rounding near pi where 1 + a.b cancels.
 */
static void minimal_rotation(const double a[3], const double b[3], double q[4]) {
    q[0] = b[1] * a[2] - b[2] * a[1];
    q[1] = b[2] * a[0] - b[0] * a[2];
    q[2] = b[0] * a[1] - b[1] * a[0];
    const double s[3] = {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
    q[3] = 0.5 * (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    if (q[0] == 0.0 && q[1] == 0.0 && q[2] == 0.0 && a[0] * b[0] + a[1] * b[1] + a[2] * b[2] < 0.0) {
        int i = 0;
        for (int k = 1; k < 3; k++)
            if (fabs(a[k]) < fabs(a[i]))
                i = k;
        const double e[3] = {i == 0, i == 1, i == 2};
        q[0] = e[1] * a[2] - e[2] * a[1];
        q[1] = e[2] * a[0] - e[0] * a[2];
        q[2] = e[0] * a[1] - e[1] * a[0];
        q[3] = 0.0;
    }
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++)
        q[k] /= n;
}

/* Sets whose two largest Davenport eigenvalues are this close relative to their sum have no
   unique optimal rotation (scipy's test s2 + s3 < 1e-16 s1 on the singular values of B, with a
   margin for the rounding of lambda1 - lambda2 = 2 (s2 + s3)). */
#define DEGENERATE_GAP 0x1p-40

/* align_vectors takes rssd^2 = S - 2 lambda1 (S the weighted sum of squares) from its first pass
   when it is at least this fraction of S (at most 4 bits lost to the subtraction), and sums it
   directly otherwise. */
#define RSSD_CANCELLATION_LIMIT 0x1p-4

/*
 * The words of random_quats' stream: word j of the stream keyed by `key` is SplitMix64's
 * output for the counter key + (j + 1) * gamma (Steele, Lea and Flood 2014, the mixer of
 * Stafford's variant 13: passes BigCrush). Counter-based, so any block of quaternions is
 * computed on its own, in any lanes, with the same bits; one word of the caller's Generator
 * keys a call (its stream advances by one word), where drawing every word from the Generator
 * would cost more than scipy's whole per-rotation budget allows (docs/design/fitting.md).
 */
#define STREAM_GAMMA 0x9e3779b97f4a7c15u
static inline uint64_t stream_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}
static inline uint64_t stream_word(uint64_t key, uint64_t j) { return stream_mix(key + (j + 1) * STREAM_GAMMA); }

/* sin and cos of x, |x| <= pi/4: the minimax polynomials of Cephes' sin.c and cos.c (Moshier),
   x + x^3 P(x^2) and 1 - x^2/2 + x^4 Q(x^2), within about 1 ulp; plain multiplies and adds (no
   FMA: the same bits on every path). */
static inline void sincos_quarter(vd x, vd *s, vd *c) {
    const vd x2 = vd_mul(x, x);
    vd p = vd_set1(1.58962301576546568060e-10);
    p = vd_add(vd_mul(p, x2), vd_set1(-2.50507477628578072866e-8));
    p = vd_add(vd_mul(p, x2), vd_set1(2.75573136213857245213e-6));
    p = vd_add(vd_mul(p, x2), vd_set1(-1.98412698295895385996e-4));
    p = vd_add(vd_mul(p, x2), vd_set1(8.33333333332211858878e-3));
    p = vd_add(vd_mul(p, x2), vd_set1(-1.66666666666666307295e-1));
    *s = vd_add(x, vd_mul(vd_mul(p, x2), x));
    vd r = vd_set1(-1.13585365213876817300e-11);
    r = vd_add(vd_mul(r, x2), vd_set1(2.08757008419747316778e-9));
    r = vd_add(vd_mul(r, x2), vd_set1(-2.75573141792967388112e-7));
    r = vd_add(vd_mul(r, x2), vd_set1(2.48015872888517045348e-5));
    r = vd_add(vd_mul(r, x2), vd_set1(-1.38888888888730564116e-3));
    r = vd_add(vd_mul(r, x2), vd_set1(4.16666666666665929218e-2));
    *c = vd_add(vd_sub(vd_set1(1.0), vd_mul(vd_set1(0.5), x2)), vd_mul(vd_mul(r, x2), x2));
}

/* (2 m + 1) 2^-53 for the 52-bit m, in (0, 1), exactly: 1 + m 2^-52 built from its bits, less 1
   (exact, Sterbenz), plus 2^-53 (exact: an odd integer below 2^53 times 2^-53). The bits rather
   than an int64 conversion, which SSE and AVX2 lack (the compiler emulates it). */
static inline double odd_multiple(uint64_t m) {
    return (jm_double_from_bits(0x3ff0000000000000u | m) - 1.0) + 0x1p-53;
}

/* From one stream word: an angle uniform on the circle as x in (-pi/4, pi/4) (2 pi times an odd
   multiple of 2^-55 in (-1/8, 1/8), from bits 10..61) plus k quarter turns (bits 62..63), with
   the swap flag (2.0 or 0.0) and the sign masks that turn (sin x, cos x) into (sin, cos) of
   x + k pi/2 (cos_sign: NULL when the cosine's sign is not needed). */
static inline void quarter_angle(uint64_t word, double *x, double *swap, double *sin_sign, double *cos_sign) {
    /* (2 m + 1 - 2^52) 2^-53 exactly: 1 + m 2^-52 from its bits, less 3/2 (exact, Sterbenz), plus
       2^-53 (exact: an odd integer below 2^52 times 2^-53); times pi/2 (double(2 pi) / 4): one
       rounding, the same as (2 m + 1 - 2^52) times 2 pi 2^-55 */
    const uint64_t m = (word >> 10) & (((uint64_t)1 << 52) - 1);
    *x = ((jm_double_from_bits(0x3ff0000000000000u | m) - 1.5) + 0x1p-53) * 0x1.921fb54442d18p+0;
    /* k = 2 k1 + k0: sin negated for k 2, 3 (k1, bit 63), cos for k 1, 2 (k1 xor k0); the swap
       flag is bit 62 read as a double. Bits rather than comparisons, which compile to branches
       that mispredict half the time */
    const uint64_t top = (uint64_t)1 << 63;
    *swap = jm_double_from_bits(word & (top >> 1));
    *sin_sign = jm_double_from_bits(word & top);
    if (cos_sign)
        *cos_sign = jm_double_from_bits((word ^ (word << 1)) & top);
}

/* Quaternions per chunk of random_quats: the stream words and their conversions first (integer
   work, independent across quaternions), then the chunk's quaternions a vector of lanes at a time. */
#define RANDOM_CHUNK 64

/* The inputs of up to RANDOM_CHUNK quaternions (see random_quat_lanes in fit_template.h). */
typedef struct {
    double u[RANDOM_CHUNK], x[2][RANDOM_CHUNK], swap[2][RANDOM_CHUNK], sin_sign[2][RANDOM_CHUNK],
        cos_sign[RANDOM_CHUNK]; /* the first angle's: the second's cosine gives |w| */
} random_chunk;

/* Quaternions first .. first + m - 1 of the stream keyed by `key` into chunk (m <= RANDOM_CHUNK,
   entries m .. rounded up to JM_WD filled too). */
static void random_chunk_fill(uint64_t key, uint64_t first, size_t m, random_chunk *chunk) {
    const size_t padded = (m + JM_WD - 1) / JM_WD * JM_WD;
    /* the counter of word 3 (first + l), stepped by an add (the compiler keeps it in the lanes)
       rather than multiplied out per word */
    uint64_t counter = key + (3 * first + 1) * STREAM_GAMMA;
    for (size_t l = 0; l < padded; l++, counter += 3 * STREAM_GAMMA) {
        chunk->u[l] = odd_multiple(stream_mix(counter) >> 12);
        for (int a = 0; a < 2; a++)
            quarter_angle(stream_mix(counter + (uint64_t)(a + 1) * STREAM_GAMMA), &chunk->x[a][l], &chunk->swap[a][l],
                          &chunk->sin_sign[a][l], a == 0 ? &chunk->cos_sign[l] : NULL);
    }
}

/* The float32 rotations of random_quats: the same method in float lanes (JM_W per vector, twice
   JM_WD, with float square roots), two stream words per quaternion. */

/* sin and cos of x, |x| <= pi/4, in float: the minimax polynomials of Cephes' sinf.c and cosf.c
   (within about 1 ulp of float), plain multiplies and adds. */
static inline void sincos_quarter_float(vf x, vf *s, vf *c) {
    const vf x2 = v_mul(x, x);
    vf p = v_set1(-0x1.9943f2p-13f);
    p = v_add(v_mul(p, x2), v_set1(0x1.11073cp-7f));
    p = v_add(v_mul(p, x2), v_set1(-0x1.555546p-3f));
    *s = v_add(x, v_mul(v_mul(p, x2), x));
    vf r = v_set1(0x1.99eb9cp-16f);
    r = v_add(v_mul(r, x2), v_set1(-0x1.6c0c34p-10f));
    r = v_add(v_mul(r, x2), v_set1(0x1.55554ap-5f));
    *c = v_add(v_sub(v_set1(1.0f), v_mul(v_set1(0.5f), x2)), v_mul(v_mul(r, x2), x2));
}

/* quarter_angle for float, from 32 bits: k from bits 30..31, x = 2 pi times an odd multiple of
   2^-26 in (-1/8, 1/8) from bits 7..29 (exact in float before the one rounding of the product). */
static inline void quarter_angle_float(uint32_t bits, float *x, float *swap, float *sin_sign, float *cos_sign) {
    const int32_t m = (int32_t)((bits >> 7) & ((1u << 23) - 1));
    *x = (float)(2 * m + 1 - (1 << 23)) * 0x1.921fb6p-24f; /* float(2 pi) 2^-26 */
    const uint32_t top = 1u << 31;
    *swap = jm_float_from_bits(bits & (top >> 1)); /* 2.0f or 0.0f */
    *sin_sign = jm_float_from_bits(bits & top);
    if (cos_sign)
        *cos_sign = jm_float_from_bits((bits ^ (bits << 1)) & top);
}

/* The inputs of up to RANDOM_CHUNK float quaternions (see random_quat_lanes in fit_template.h),
   one array per quantity, entry s for the quaternion at offset[s] of the chunk
   (random_lane_offsets). */
typedef struct {
    float u[RANDOM_CHUNK], x[2][RANDOM_CHUNK], swap[2][RANDOM_CHUNK], sin_sign[2][RANDOM_CHUNK],
        cos_sign[RANDOM_CHUNK];
    uint64_t offset[RANDOM_CHUNK];
} random_chunk_float;

/* offset[s] = the record at which v_store_quads writes lane s % JM_W of the block s / JM_W (lanes
   and records need not match: on some paths the layer stores a block's lanes transposed), read
   once from the layer itself: a block of lane numbers stored and looked up. */
static void random_lane_offsets(random_chunk_float *chunk) {
    float lanes[JM_W], stored[JM_W][4];
    for (int l = 0; l < JM_W; l++)
        lanes[l] = (float)l;
    const vf lane = v_loadu(lanes);
    v_store_quads((char *)stored, sizeof stored[0], lane, lane, lane, lane);
    for (size_t s = 0; s < RANDOM_CHUNK; s++) {
        const size_t block = s / JM_W * JM_W;
        for (int r = 0; r < JM_W; r++)
            if (stored[r][0] == (float)(s - block))
                chunk->offset[s] = block + (size_t)r;
    }
}

/* Float quaternions first + offset[s] for the entries s < m rounded up to JM_W, from the stream
   keyed by `key` (the entries whose quaternion lies past m are computed and not stored): stream
   words 2i and 2i + 1 give u (an odd multiple of 2^-24 in (0, 1) from the top 23 bits of the
   first: 1 - u exact in float), t1 (the first's low 32 bits) and t2 (the second's high 32 bits). */
static void random_chunk_fill_float(uint64_t key, uint64_t first, size_t m, random_chunk_float *chunk) {
    const size_t padded = (m + JM_W - 1) / JM_W * JM_W;
    for (size_t l = 0; l < padded; l++) {
        const uint64_t j = 2 * (first + chunk->offset[l]);
        const uint64_t w0 = stream_word(key, j), w1 = stream_word(key, j + 1);
        chunk->u[l] = (float)(2 * (int32_t)(w0 >> 41) + 1) * 0x1p-24f;
        quarter_angle_float((uint32_t)w0, &chunk->x[0][l], &chunk->swap[0][l], &chunk->sin_sign[0][l],
                            &chunk->cos_sign[l]);
        quarter_angle_float((uint32_t)(w1 >> 32), &chunk->x[1][l], &chunk->swap[1][l], &chunk->sin_sign[1][l], NULL);
    }
}

/* Whether a largest magnitude is outside the range where the products of the sums neither
   overflow nor lose bits to underflow (zero is in range: it contributes nothing). */
static inline int out_of_range(double largest) { return largest != 0.0 && !(largest >= 0x1p-240 && largest <= 0x1p240); }

#define T_SCALAR float
#define T_FN(name) name
#define T_IS_FLOAT 1
#include "fit_template.h"
#undef T_SCALAR
#undef T_FN
#undef T_IS_FLOAT

#define T_SCALAR double
#define T_FN(name) name##_f64
#define T_IS_FLOAT 0
#include "fit_template.h"
#undef T_SCALAR
#undef T_FN
#undef T_IS_FLOAT
