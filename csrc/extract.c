/*
 * extract.c - the rotation closest to an arbitrary 3x3 matrix (Mueller, Bender, Chentanez and
 * Macklin 2016, "A Robust Method to Extract the Rotational Part of Deformations").
 *
 * Compiled once per ISA (see simd.h). Each lane iterates one matrix; EXTRACT_GROUPS groups of
 * JM_W matrices iterate in the same loop so that their independent dependency chains hide each
 * other's latency (one group alone leaves the FMA pipes idle most of the time).
 */
#include "jointmath.h"
#include "simd.h"
#include "quat_math.h"

/*
 * groups of JM_W matrices in flight per loop: 2 was the fastest on every path (warm start, 16k
 * matrices, ns per matrix per extra iteration, 1 / 2 / 3 / 4 groups: avx512 4.8 / 3.1 / 4.1 /
 * 4.3, avx2 9.0 / 5.5 / 7.2 / 9.1, sse 24 / 16 / 19 / 22, scalar 58 / 60 / 57 / 65); more groups
 * spill the state (15 registers per group) to the stack
 */
#define EXTRACT_GROUPS 2

/* the input record layouts */
#define LAYOUT_JOINT_MAT 0 /* jm_joint_mat: 3 rows of 4 floats, the 4th is the translation */
#define LAYOUT_FLOAT33 1   /* float[3][3], 36 bytes */

/* The 9 elements of JM_W matrices (row-major a[3 i + j] = A_ij) from records at p, stride s. */
JM_INLINE void load_matrices(int layout, const char *p, ptrdiff_t s, vf a[9]) {
    if (layout == LAYOUT_JOINT_MAT) {
        vf mat[12]; /* rows of 4: the 4th is the translation */
        v_load_records(p, s, 3, mat);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a[3 * i + j] = mat[4 * i + j];
    } else {
        /* floats 0..3, 4..7 and 5..8: the third quad overlaps the second and ends at the
           record's last byte, so nothing past a 36-byte record is read */
        vf unused0, unused1, unused2;
        v_load_quads(p, s, &a[0], &a[1], &a[2], &a[3]);
        v_load_quads(p + 16, s, &a[4], &a[5], &a[6], &a[7]);
        v_load_quads(p + 20, s, &unused0, &unused1, &unused2, &a[8]);
        (void)unused0, (void)unused1, (void)unused2;
    }
}

/*
 * The state of JM_W matrices: Davenport's symmetric 4x4 matrix K of the (scaled) input, with
 * q^T K q = trace(R(q)^T A) for unit q, and the current quaternion.
 *
 *   K = [ S - t I   k ]    S = A + A^T, t = trace A,
 *       [ k^T       t ]    k = (A21 - A12, A02 - A20, A10 - A01)
 *
 * Ten numbers instead of A's nine plus R's nine: the torque and the trace the update needs come
 * from p = K q without forming R (see extract_step).
 */
typedef struct {
    vf kxx, kyy, kzz, kww, kxy, kxz, kyz, kxw, kyw, kzw;
    vf x, y, z, w;
    vf iterations;
    vmask active;
} extract_state;

/*
 * Start of JM_W matrices: scale A, build K, pick the starting quaternion.
 *
 * Scaling: A is multiplied by the power of two that puts its largest |element| in [1, 2). The
 * minimiser of ||A - R|| is the same for every positive multiple of A and the update below is
 * invariant to it (up to the 1e-9 guard, which thereby becomes relative to A's size), but the
 * float32 range is not: without it elements beyond ~1e37 overflow K and tiny matrices underflow
 * into the guard. For matrices whose largest element is already in [1, 2) nothing changes.
 *
 * Start: q0 when given (q0 need not be unit; one whose | |q0|^2 - 1 | <= 2^-21 is used bit for
 * bit, any other is normalised, q0 = 0 means the identity), else the normalised largest-divisor
 * quaternion of A (the paper's recommendation) scaled to the Frobenius norm sqrt(3) of a
 * rotation, so that c R (c > 0) starts at R (A = 0: the identity); finite and unit for every
 * finite A.
 */
JM_INLINE void extract_start(int layout, const char *a_rec, ptrdiff_t as, const char *q0_rec, ptrdiff_t qs,
                             extract_state *st) {
    vf a[9];
    load_matrices(layout, a_rec, as, a);
    v_scale_pow2(a, 9);

    vf trace = v_add(v_add(a[0], a[4]), a[8]);
    st->kxx = v_sub(v_sub(a[0], a[4]), a[8]);
    st->kyy = v_sub(v_sub(a[4], a[0]), a[8]);
    st->kzz = v_sub(v_sub(a[8], a[0]), a[4]);
    st->kww = trace;
    st->kxy = v_add(a[1], a[3]);
    st->kxz = v_add(a[2], a[6]);
    st->kyz = v_add(a[5], a[7]);
    st->kxw = v_sub(a[7], a[5]);
    st->kyw = v_sub(a[2], a[6]);
    st->kzw = v_sub(a[3], a[1]);

    if (q0_rec) {
        vf q[4], sq[4];
        v_load_records(q0_rec, qs, 1, q);
        vf norm2 = v_fmadd(q[0], q[0], v_fmadd(q[1], q[1], v_fmadd(q[2], q[2], v_mul(q[3], q[3]))));
        vmask keep = v_lt(v_abs(v_sub(norm2, v_set1(1.0f))), v_set1(0x1p-21f)); /* NaN: false */
        /* the others: scaled like A first, so that neither |q0|^2 overflows nor underflows */
        for (int i = 0; i < 4; i++)
            sq[i] = q[i];
        vf largest_q = v_scale_pow2(sq, 4);
        vf inv = v_rsqrt(v_fmadd(sq[0], sq[0], v_fmadd(sq[1], sq[1], v_fmadd(sq[2], sq[2], v_mul(sq[3], sq[3])))));
        /* q0 = 0: largest component 0 (and norm2 < 1, so that a NaN v_max dropped still counts) */
        vmask is_zero = m_and(v_lt(norm2, v_set1(1.0f)), m_not(v_gt(largest_q, v_set1(0.0f))));
        st->x = v_select(keep, q[0], v_select(is_zero, v_set1(0.0f), v_mul(sq[0], inv)));
        st->y = v_select(keep, q[1], v_select(is_zero, v_set1(0.0f), v_mul(sq[1], inv)));
        st->z = v_select(keep, q[2], v_select(is_zero, v_set1(0.0f), v_mul(sq[2], inv)));
        st->w = v_select(keep, q[3], v_select(is_zero, v_set1(1.0f), v_mul(sq[3], inv)));
    } else {
        /* from A scaled to the Frobenius norm of a rotation, sqrt(3): a rotation times any
           c > 0 starts exact. The scaled A above has norm^2 >= 1 unless A = 0, which starts
           from the identity (its largest-divisor quaternion would be a half turn about x). */
        vf norm2 = v_mul(a[0], a[0]);
        for (int i = 1; i < 9; i++)
            norm2 = v_fmadd(a[i], a[i], norm2);
        vmask is_zero = v_lt(norm2, v_set1(1.0f));
        vf to_unit = v_mul(v_set1(1.7320508f), v_rsqrt(v_max(norm2, v_set1(1.0f))));
        vf r[9];
        for (int i = 0; i < 9; i++)
            r[i] = v_mul(a[i], to_unit);
        r[0] = v_select(is_zero, v_set1(1.0f), r[0]);
        r[4] = v_select(is_zero, v_set1(1.0f), r[4]);
        r[8] = v_select(is_zero, v_set1(1.0f), r[8]);
        rotation_to_quat(r, &st->x, &st->y, &st->z, &st->w);
    }
    st->iterations = v_set1(0.0f);
    st->active = v_ge(st->iterations, st->iterations); /* every lane (0 >= 0) */
}

/*
 * One update of JM_W matrices, R <- exp(omega) R with
 *
 *   omega = sum_i r_i x a_i / (|sum_i r_i . a_i| + 1e-9)      (columns r_i of R, a_i of A)
 *
 * From p = K q: the torque sum_i r_i x a_i = w p_v - p_w v + v x p_v (q = (v, w)) and the trace
 * sum_i r_i . a_i = q . p; both scale with |q|^2, so the small drift of |q| over the iterations
 * changes nothing (q is normalised once, at the end). The paper's test comes first: a lane with
 * |omega| < tol stops without this update; a NaN lane takes it (becoming NaN) and then stops.
 *
 * The exponential map is the quaternion (sin(theta/2) omega/theta, cos(theta/2)), theta =
 * |omega|, from polynomials in (theta/2)^2 on theta <= pi - no square root, no division. A larger
 * step (only far from convergence: the trace near 0) is first reduced by a multiple of 2 pi, which
 * is the same rotation (q may change sign); steps beyond 2^21 rad, which float32 cannot resolve,
 * are reduced as if they were 2^21 rad. cos and sin(r)/r on |r| <= pi/2: minimax polynomials of
 * degree 8 in r with constant term 1 (errors 5e-8 and 5e-9 before float32 rounding).
 */
JM_INLINE void extract_step(extract_state *st, vf tol2) {
    const vf x = st->x, y = st->y, z = st->z, w = st->w;
    vf px = v_fmadd(st->kxx, x, v_fmadd(st->kxy, y, v_fmadd(st->kxz, z, v_mul(st->kxw, w))));
    vf py = v_fmadd(st->kxy, x, v_fmadd(st->kyy, y, v_fmadd(st->kyz, z, v_mul(st->kyw, w))));
    vf pz = v_fmadd(st->kxz, x, v_fmadd(st->kyz, y, v_fmadd(st->kzz, z, v_mul(st->kzw, w))));
    vf pw = v_fmadd(st->kxw, x, v_fmadd(st->kyw, y, v_fmadd(st->kzw, z, v_mul(st->kww, w))));
    vf torque_x = v_fnmadd(pw, x, v_fmadd(w, px, v_fnmadd(z, py, v_mul(y, pz))));
    vf torque_y = v_fnmadd(pw, y, v_fmadd(w, py, v_fnmadd(x, pz, v_mul(z, px))));
    vf torque_z = v_fnmadd(pw, z, v_fmadd(w, pz, v_fnmadd(y, px, v_mul(x, py))));
    vf trace = v_fmadd(x, px, v_fmadd(y, py, v_fmadd(z, pz, v_mul(w, pw))));
    vf inv_denominator = v_rcp(v_add(v_abs(trace), v_set1(1e-9f)));
    vf ox = v_mul(torque_x, inv_denominator), oy = v_mul(torque_y, inv_denominator);
    vf oz = v_mul(torque_z, inv_denominator);
    vf theta2 = v_fmadd(ox, ox, v_fmadd(oy, oy, v_mul(oz, oz)));

    /* half angle h = theta / 2 and the reduction h = k pi + r, |r| <= pi/2 */
    vf h2 = v_mul(theta2, v_set1(0.25f));
    vf inv_h = v_rsqrt(v_max(h2, v_set1(0x1p-100f)));
    vf h = v_min(v_mul(h2, inv_h), v_set1(0x1p20f));
    /* round to nearest: adding 1.5 * 2^23 leaves no fraction bits (k < 2^19 here) */
    vf k = v_sub(v_fmadd(h, v_set1(0.318309886f), v_set1(0x1.8p23f)), v_set1(0x1.8p23f));
    /* Cody-Waite: 3.140625 has 8 bits, so k * 3.140625 is exact for every k below 2^16 */
    vf r = v_fnmadd(k, v_set1(9.67653589793e-4f), v_fnmadd(k, v_set1(3.140625f), h));
    vmask unreduced = v_lt(k, v_set1(0.5f));
    vf r2 = v_select(unreduced, h2, v_mul(r, r));
    vf cos_r = v_fmadd(v_fmadd(v_fmadd(v_fmadd(v_set1(2.31947051e-05f), r2, v_set1(-1.38559402e-03f)), r2,
                                       v_set1(4.16639894e-02f)), r2, v_set1(-4.99999315e-01f)), r2, v_set1(1.0f));
    vf sinc_r = v_fmadd(v_fmadd(v_fmadd(v_fmadd(v_set1(2.60896195e-06f), r2, v_set1(-1.98111258e-04f)), r2,
                                        v_set1(8.33308790e-03f)), r2, v_set1(-1.66666612e-01f)), r2, v_set1(1.0f));
    /* sin(h) / theta = sinc(h) / 2 unreduced; reduced, the rotation by 2r: sin(r) / theta */
    vf scale = v_mul(v_mul(v_set1(0.5f), sinc_r), v_select(unreduced, v_set1(1.0f), v_mul(r, inv_h)));
    vf ax = v_mul(ox, scale), ay = v_mul(oy, scale), az = v_mul(oz, scale);

    /* q <- (a, cos_r) * q */
    vf nx = v_fmadd(cos_r, x, v_fmadd(w, ax, v_fnmadd(az, y, v_mul(ay, z))));
    vf ny = v_fmadd(cos_r, y, v_fmadd(w, ay, v_fnmadd(ax, z, v_mul(az, x))));
    vf nz = v_fmadd(cos_r, z, v_fmadd(w, az, v_fnmadd(ay, x, v_mul(ax, y))));
    vf nw = v_fnmadd(ax, x, v_fnmadd(ay, y, v_fnmadd(az, z, v_mul(cos_r, w))));

    vmask update = m_and(st->active, m_not(v_lt(theta2, tol2))); /* NaN updates (once) */
    st->active = m_and(st->active, v_ge(theta2, tol2));           /* NaN stops */
    st->x = v_select(update, nx, x);
    st->y = v_select(update, ny, y);
    st->z = v_select(update, nz, z);
    st->w = v_select(update, nw, w);
    st->iterations = v_add(st->iterations, v_select(update, v_set1(1.0f), v_set1(0.0f)));
}

/* Output of JM_W matrices: q normalised where |q|^2 is off 1 by more than 2^-21 (a q0 returned
   unchanged keeps its bits), and the iteration counts when wanted. */
JM_INLINE void extract_finish(const extract_state *st, char *out, ptrdiff_t os, char *iterations, ptrdiff_t is) {
    vf norm2 = v_fmadd(st->x, st->x, v_fmadd(st->y, st->y, v_fmadd(st->z, st->z, v_mul(st->w, st->w))));
    vmask off = v_gt(v_abs(v_sub(norm2, v_set1(1.0f))), v_set1(0x1p-21f));
    vf scale = v_select(off, v_rsqrt(norm2), v_set1(1.0f));
    const vf q[4] = {v_mul(st->x, scale), v_mul(st->y, scale), v_mul(st->z, scale), v_mul(st->w, scale)};
    v_store_records(out, os, 1, q);
    if (iterations) {
        /* through the record store, so that lane k lands at record k on every path */
        float counts[4 * JM_W];
        const vf zero = v_set1(0.0f), count_records[4] = {st->iterations, zero, zero, zero};
        v_store_records((char *)counts, 4 * sizeof(float), 1, count_records);
        for (int i = 0; i < JM_W; i++) {
            int32_t count = (int32_t)counts[4 * i];
            memcpy(iterations + i * is, &count, sizeof count);
        }
    }
}

/* `groups` groups of JM_W consecutive records iterated together. */
JM_INLINE void extract_block(int layout, int groups, const char *a, ptrdiff_t as, const char *q0, ptrdiff_t qs,
                             char *out, ptrdiff_t os, char *iterations, ptrdiff_t is, int max_iter, vf tol2) {
    extract_state st[EXTRACT_GROUPS];
    const ptrdiff_t group = JM_W;
    for (int g = 0; g < groups; g++)
        extract_start(layout, a + g * group * as, as, q0 ? q0 + g * group * qs : NULL, qs, &st[g]);
    for (int i = 0; i < max_iter; i++) {
        int any = 0;
        for (int g = 0; g < groups; g++) {
            extract_step(&st[g], tol2);
            any |= m_any(st[g].active);
        }
        if (!any)
            break;
    }
    for (int g = 0; g < groups; g++)
        extract_finish(&st[g], out + g * group * os, os, iterations ? iterations + g * group * is : NULL, is);
}

/*
 * The driver: EXTRACT_GROUPS * JM_W records at a time, then single groups, then the last
 * n % JM_W records through zeroed stack buffers (JM_FOR_BLOCKS's scheme, for four arrays). The
 * zero padding costs nothing: A = 0 has zero torque, so those lanes stop at once.
 */
JM_INLINE void extract_run(int layout, ptrdiff_t a_size, const jm_extract_job *job) {
    const size_t n = job->n;
    const vf tol2 = v_set1(job->tol * job->tol);
    const ptrdiff_t as = job->a_stride, qs = job->q0_stride, os = job->out_stride, is = job->iterations_stride;
    char *iterations = (char *)job->iterations;
    size_t i = 0;
#define EXTRACT_AT(groups)                                                                       \
    extract_block(layout, groups, job->a + (ptrdiff_t)i * as, as, job->q0 ? job->q0 + (ptrdiff_t)i * qs : NULL, qs, \
                  job->out + (ptrdiff_t)i * os, os, iterations ? iterations + (ptrdiff_t)i * is : NULL, is,          \
                  job->max_iter, tol2)
    for (; i + EXTRACT_GROUPS * JM_W <= n; i += EXTRACT_GROUPS * JM_W)
        EXTRACT_AT(EXTRACT_GROUPS);
    for (; i + JM_W <= n; i += JM_W)
        EXTRACT_AT(1);
#undef EXTRACT_AT
    if (i < n) {
        char a_buf[JM_W * sizeof(jm_joint_mat)] = {0}, q0_buf[JM_W * 16] = {0}, out_buf[JM_W * 16];
        char iterations_buf[JM_W * sizeof(int32_t)];
        const size_t rest = n - i;
        for (size_t k = 0; k < rest; k++) {
            memcpy(a_buf + k * a_size, job->a + (ptrdiff_t)(i + k) * as, a_size);
            if (job->q0)
                memcpy(q0_buf + k * 16, job->q0 + (ptrdiff_t)(i + k) * qs, 16);
        }
        extract_block(layout, 1, a_buf, a_size, job->q0 ? q0_buf : NULL, 16, out_buf, 16,
                      iterations ? iterations_buf : NULL, sizeof(int32_t), job->max_iter, tol2);
        for (size_t k = 0; k < rest; k++) {
            memcpy(job->out + (ptrdiff_t)(i + k) * os, out_buf + k * 16, 16);
            if (iterations)
                memcpy(iterations + (ptrdiff_t)(i + k) * is, iterations_buf + k * sizeof(int32_t), sizeof(int32_t));
        }
    }
}

/*
 * jm_extract_mats (jm_joint_mat records, the translation column unread) and jm_extract_matrices
 * (float[3][3]): for each matrix A the unit quaternion of the rotation R (det +1) minimising
 * ||A - R||_F, by the update of extract_step from q0 or the cold start of extract_start, until
 * |omega| < tol or max_iter updates; optionally the number of updates.
 * Edge cases: det A < 0 gives a proper rotation (R only ever rotates); rank-deficient A keeps
 * the directions it leaves free from the start; A = 0 returns the start (a near-unit q0 bit for
 * bit) after 0 updates; a NaN/inf in A or q0 gives NaN for that matrix only (1 update); finite
 * input gives finite unit output (the power-of-two scaling of A and q0).
 * Accuracy, float32, tol 2e-7 (measured on every path, tests/test_extract.py checks the bounds):
 * A = R S with S symmetric positive definite of condition <= 10: within 1.5e-6 rad of the SVD
 * polar rotation (bound 1e-5 for 99.9 %, 1e-4 for all); rotation matrices: 2.7e-7 rad (bound
 * 1e-6); | |q| - 1 | <= 3.1e-7 (bound 5e-7). Each lane computes the same whatever its block-mates
 * and position, so a matrix's result does not depend on n.
 */
void JM_FN(jm_extract_mats)(const jm_extract_job *job) { extract_run(LAYOUT_JOINT_MAT, sizeof(jm_joint_mat), job); }

void JM_FN(jm_extract_matrices)(const jm_extract_job *job) { extract_run(LAYOUT_FLOAT33, 9 * sizeof(float), job); }
