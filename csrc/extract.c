/*
 * extract.c - the rotation closest to an arbitrary 3x3 matrix (Mueller, Bender, Chentanez and
 * Macklin 2016, "A Robust Method to Extract the Rotational Part of Deformations").
 *
 * Compiled once per ISA (see simd/common.h). Each lane iterates one matrix; EXTRACT_GROUPS groups of
 * JM_W matrices iterate in the same loop so that their independent dependency chains hide each
 * other's latency (one group alone leaves the arithmetic pipes idle most of the time).
 *
 * Every path computes the same bits: the kernels use only correctly rounded operations in one
 * order - multiply-adds rounded twice (v_mul_add, v_neg_mul_add: never the fused v_fmadd), square
 * roots and divisions (v_rsqrt_ieee, v_rcp_ieee: never the paths' reciprocal estimates), decisions
 * on a lane's own values - so results and update counts do not depend on the path or the CPU
 * (docs/design/extraction.md#counts-across-paths).
 */
#include "jointmath.h"
#include "simd/common.h"
#include "quat_math.h"

/* groups of JM_W matrices in flight per loop: 2 was the fastest on every path; more groups spill
   the state (15 registers per group) to the stack (docs/design/extraction.md#groups-in-flight) */
#define EXTRACT_GROUPS 2

/* the input record layouts */
#define LAYOUT_JOINT_MAT 0 /* jm_joint_mat: 3 rows of 4 floats, the 4th is the translation */
#define LAYOUT_FLOAT33 1   /* float[3][3], 36 bytes */
#define LAYOUT_DOUBLE33 2  /* double[3][3], 72 bytes: the float64 kernel's only layout */

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
 * Ten numbers instead of A's nine plus R's nine: the torque, the trace and the curvature the
 * updates need come from K q and K b_i without forming R (see extract_gradient).
 */
typedef struct {
    vf kxx, kyy, kzz, kww, kxy, kxz, kyz, kxw, kyw, kzw;
    vf x, y, z, w;
    vf iterations;
    vmask active;
    vmask mirrored; /* det A < 0 (see mueller_denominator) */
    int near_reflections; /* some lane may be a near-reflection (near_reflection_update) */
} extract_state;

/* the curvature margin, in the units of A scaled to a largest |element| in [1, 2): Newton needs
   N's eigenvalues above it, a Ritz update must gain more than it, a stop needs none below -it
   (2 (sigma2 + sigma3) ~ 6e-5: condition ~3e4 for det A > 0) */
#define CURVATURE_MARGIN 0x1p-14f
/* squarings of the power iteration for N's lowest eigenvector: the error shrinks by the 2^20th
   power of the ratio of the top two eigenvalues of I - N / |N|_F, 1 + (l2 - l1) / (|N|_F - l2).
   At a saddle of det A < 0 with sigma = (1, 1, 1 - gap), l1 = -gap and l2 = 0 against |N| ~ 8:
   fewer squarings left the axis on the flat direction and Mueller's updates ran out
   (docs/design/extraction.md#power-iteration-squarings) */
#define AXIS_SQUARINGS 20
/* deflated_newton_step lifts a second axis where its eigenvalue is below this many curvature
   margins: there Newton's steps about it were the torque's rounding over a tiny eigenvalue and
   wandered along the near-tie (docs/design/extraction.md#near-ties) */
#define NEAR_REFLECTION_MARGINS 4.0
/* near_reflection_update's limit on reflection_spread (~2 |sigma - mean sigma|, in the scale of A
   with its largest |element| in [1, 2)): above every float32 near-reflection whose updates walked
   along the near-flat set (docs/design/extraction.md#near-reflections) */
#define FLAT_LIMIT 0x1p-10f
/* near_reflection_settled's allowance: what is left to gain below spread / 256 of f (the bound
   is ~spread), while the torque of the tilt on the near-flat set, ~2 spread, passes */
#define SETTLED_GAIN_SPREADS 256.0
/* Newton's lanes also need a finite step: where N's determinant is lost in rounding (det A < 0 near
   a tie, N's eigenvalues about (4, 6e-5, 6e-5) against a rounding of ~1e-6 in its cofactors) the
   leading minors may pass the margin test while det N rounds to ~0, and 2 adj(N) tau / det N came
   out inf (NaN quaternions for 10 in 200,000 such float32 matrices, on the paths without a fused
   multiply-add, which every path now rounds like). Such a lane takes the Ritz update or Mueller's
   instead. */

/* the objective and its derivatives (extract_objective.h: rank_two, k_times, tangent_basis,
   extract_gradient, dot4, extract_curvature) and the update's pieces (extract_update.h:
   davenport_k, ritz_update, mueller_denominator, newton_step, turn_by) on float32 lanes */
#define T vf
#define T_MASK vmask
#define T_OP(op) v_##op
#define T_MASK_OP(op) m_##op
#define T_FN(name) name
#define T_STATE extract_state
#define T_NEGATE(x) v_sub(v_set1(0.0f), (x))
#define T_RANK_TWO 0x1p-40f
#define T_TINY 0x1p-100f
#define T_CURVATURE_MARGIN CURVATURE_MARGIN
#define T_MAX_FINITE 0x1.fffffep127f
#define T_FLAT_LIMIT FLAT_LIMIT
#define T_REFLECTION_HINT 0x1p-14f
#include "extract_objective.h"

#include "extract_update.h"
#undef T
#undef T_MASK
#undef T_OP
#undef T_MASK_OP
#undef T_FN
#undef T_STATE
#undef T_NEGATE
#undef T_RANK_TWO
#undef T_TINY
#undef T_CURVATURE_MARGIN
#undef T_MAX_FINITE
#undef T_FLAT_LIMIT
#undef T_REFLECTION_HINT

/*
 * Start of JM_W matrices: scale A, build K, pick the starting quaternion.
 *
 * Scaling: A is multiplied by the power of two that puts its largest |element| in [1, 2). The
 * minimiser of ||A - R|| is the same for every positive multiple of A and the updates below are
 * invariant to it (up to the 1e-9 guard, which thereby becomes relative to A's size), but the
 * float32 range is not: without it elements beyond ~1e37 overflow K and tiny matrices underflow
 * into the guard. For matrices whose largest element is already in [1, 2) nothing changes; the
 * absolute thresholds of extract_step are relative to A's size through it.
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
    vf det;
    vf norm2 = davenport_k(a, st, &det);
    /* a hint for the block, not a vector: no register in the loop */
    st->near_reflections = m_any(st->mirrored) && m_any(m_and(st->mirrored, may_be_near_reflection(norm2, det)));

    if (q0_rec) {
        vf q[4], sq[4];
        v_load_records(q0_rec, qs, 1, q);
        vf q_norm2 = dot4(q, q);
        vmask keep = v_lt(v_abs(v_sub(q_norm2, v_set1(1.0f))), v_set1(0x1p-21f)); /* NaN: false */
        /* the others: scaled like A first, so that neither |q0|^2 overflows nor underflows */
        for (int i = 0; i < 4; i++)
            sq[i] = q[i];
        vf largest_q = v_scale_pow2(sq, 4);
        vf inv = v_rsqrt_ieee(dot4(sq, sq));
        /* q0 = 0: largest component 0 (and q_norm2 < 1, so that a NaN v_max dropped still counts) */
        vmask is_zero = m_and(v_lt(q_norm2, v_set1(1.0f)), m_not(v_gt(largest_q, v_set1(0.0f))));
        st->x = v_select(keep, q[0], v_select(is_zero, v_set1(0.0f), v_mul(sq[0], inv)));
        st->y = v_select(keep, q[1], v_select(is_zero, v_set1(0.0f), v_mul(sq[1], inv)));
        st->z = v_select(keep, q[2], v_select(is_zero, v_set1(0.0f), v_mul(sq[2], inv)));
        st->w = v_select(keep, q[3], v_select(is_zero, v_set1(1.0f), v_mul(sq[3], inv)));
    } else {
        /* from A scaled to the Frobenius norm of a rotation, sqrt(3): a rotation times any
           c > 0 starts exact. The scaled A above has norm^2 >= 1 unless A = 0, which starts
           from the identity (its largest-divisor quaternion would be a half turn about x). */
        vmask is_zero = v_lt(norm2, v_set1(1.0f));
        vf to_unit = v_mul(v_set1(1.7320508f), v_rsqrt_ieee(v_max(norm2, v_set1(1.0f))));
        vf r[9];
        for (int i = 0; i < 9; i++)
            r[i] = v_mul(a[i], to_unit);
        r[0] = v_select(is_zero, v_set1(1.0f), r[0]);
        r[4] = v_select(is_zero, v_set1(1.0f), r[4]);
        r[8] = v_select(is_zero, v_set1(1.0f), r[8]);
        vf q[4];
        largest_divisor_quat(r, q);
        st->x = q[0], st->y = q[1], st->z = q[2], st->w = q[3];
    }
    st->iterations = v_set1(0.0f);
    st->active = v_ge(st->iterations, st->iterations); /* every lane (0 >= 0) */
}

/*
 * The quaternion of R turned by omega (space frame): (sin(theta/2) omega/theta, cos(theta/2)) * q,
 * theta = |omega|, from polynomials in (theta/2)^2 on theta <= pi - no square root, no division.
 * Blocks holding a larger step (only far from convergence) first reduce it by a multiple of 2 pi,
 * which is the same rotation (q may change sign); steps beyond 2^16 rad, which float32 resolves to
 * no better than 0.01 rad, are reduced as if they were 2^16 rad. cos and sin(r)/r on
 * |r| <= pi/2: minimax polynomials of degree 8 in r with constant term 1 (errors 5e-8 and 5e-9
 * before float32 rounding). Whether a lane is reduced depends on its own h^2 only (an exact
 * comparison), so a lane computes the same whatever its block-mates.
 */
JM_INLINE void turn(const extract_state *st, vf ox, vf oy, vf oz, vf theta2, vf turned[4]) {
    /* half angle h = theta / 2 and, above pi / 2, the reduction h = k pi + r, |r| <= pi/2 */
    vf h2 = v_mul(theta2, v_set1(0.25f));
    vf r2 = h2, ratio = v_set1(1.0f); /* ratio: r / h, 1 unreduced */
    vmask reduce = v_gt(h2, v_set1(2.4674011f)); /* (pi / 2)^2 */
    if (JM_UNLIKELY(m_any(reduce))) {
        vf h = v_sqrt(h2), capped = v_min(h, v_set1(0x1p15f));
        /* round to nearest: adding 1.5 * 2^23 leaves no fraction bits (k < 2^14 here) */
        vf k = v_sub(v_mul_add(capped, v_set1(0.318309886f), v_set1(0x1.8p23f)), v_set1(0x1.8p23f));
        /* Cody-Waite: 3.140625 has 8 bits, so k * 3.140625 is exact for every k below 2^16 */
        vf r = v_neg_mul_add(k, v_set1(9.67653589793e-4f), v_neg_mul_add(k, v_set1(3.140625f), capped));
        r2 = v_select(reduce, v_mul(r, r), h2);
        ratio = v_select(reduce, v_div(r, h), ratio);
    }
    vf cos_r = v_mul_add(v_mul_add(v_mul_add(v_mul_add(v_set1(2.31947051e-05f), r2, v_set1(-1.38559402e-03f)), r2,
                                             v_set1(4.16639894e-02f)), r2, v_set1(-4.99999315e-01f)), r2, v_set1(1.0f));
    vf sinc_r = v_mul_add(v_mul_add(v_mul_add(v_mul_add(v_set1(2.60896195e-06f), r2, v_set1(-1.98111258e-04f)), r2,
                                              v_set1(8.33308790e-03f)), r2, v_set1(-1.66666612e-01f)), r2, v_set1(1.0f));
    /* sin(h) / theta = sinc(h) / 2 unreduced; reduced, the rotation by 2r: sin(r) / theta */
    vf scale = v_mul(v_mul(v_set1(0.5f), sinc_r), ratio);
    vf ax = v_mul(ox, scale), ay = v_mul(oy, scale), az = v_mul(oz, scale);
    turn_by(st, cos_r, ax, ay, az, turned);
}

/*
 * One update of JM_W matrices by `method` (a compile-time constant after inlining).
 *
 * Mueller (JM_EXTRACT_MULLER), the paper's update: R <- exp(omega) R,
 *   omega = tau / (|f| + 1e-9),
 * with |f| raised to a bound on the curvature where det A < 0 (mueller_denominator).
 * The paper's test comes first: a lane with |omega| < tol stops without this update; a NaN lane
 * takes it (becoming NaN) and then stops. Before a rank >= 2 lane stops, the maximum is checked
 * (N's lowest eigenvalue >= -CURVATURE_MARGIN, through the gain of the Ritz update): a lane at
 * a saddle takes the Ritz update instead and goes on.
 *
 * Newton (JM_EXTRACT_NEWTON): R <- exp(eps) R with eps = H^-1 tau = 2 adj(N) tau / det N, the
 * Newton step of f(eps) above, where N - CURVATURE_MARGIN I is positive definite (leading
 * minors > 0, from adj(N), det N and the characteristic polynomial's shift). Quadratic: the
 * error e_k+1 ~ e_k^2 sigma1 / (sigma2 + sigma3). A lane stops after the update whose |eps| is
 * below 2 tol (1 + f tr(adj N) / det N): tol times an estimate (within 3x, high) of the
 * conditioning f / lambda_min(N) ~ sigma1 / (sigma2 + sigma3), doubled because float32 rounding
 * of tau alone makes steps of one estimate (newton_step). Elsewhere a rank >= 2 lane takes the
 * Ritz update when it gains more than CURVATURE_MARGIN; a mirrored one that gains less, with N's
 * lowest eigenvalue below the margin (sigma2 - sigma3 small: two rotations nearly tie), the
 * deflated Newton step about the other axes (deflated_newton_step), which stops like Newton's;
 * the others (rank <= 1, and what the deflated step refuses) Mueller's update with its stop.
 * So Newton never stops at a saddle either: its stops need N, or N with the near-tie's axis
 * lifted, positive definite - but for near-reflections (det A < 0, reflection_spread below
 * FLAT_LIMIT), which take the Newton step about the stiff axis alone and stop once on their
 * near-flat set of best rotations, any of which meets their bound (near_reflection_update). Newton's blocks skip Mueller's division when every active lane
 * takes the Newton step (what it gives such lanes is never used).
 */
JM_INLINE void extract_step(extract_state *st, vf tol, int method) {
    vf torque[3], f;
    extract_gradient(st, torque, &f);
    vf ox, oy, oz, theta2;
    vf curvature[6];
    vmask ritz_candidates, update, go_on;
    const int with_curvature = method == JM_EXTRACT_NEWTON || m_any(m_and(st->active, st->mirrored));
    if (with_curvature)
        extract_curvature(st, f, curvature);
    if (method != JM_EXTRACT_NEWTON) {
        vmask small = mueller_omega(st, torque, f, with_curvature ? curvature : NULL, tol, &ox, &oy, &oz, &theta2);
        update = m_and(st->active, m_not(small)); /* |omega| < tol stops before updating */
        go_on = v_ge(theta2, v_mul(tol, tol));    /* NaN updates once, then stops */
        ritz_candidates = m_and(st->active, small);
    } else {
        vf e[3], eps2, newton_tol;
        vmask newton = newton_step(curvature, torque, f, tol, e, &eps2, &newton_tol);
        /* Newton's lanes update, then stop below their threshold; the others are Mueller's */
        update = m_and(st->active, newton);
        go_on = m_and(newton, v_ge(eps2, v_mul(newton_tol, newton_tol)));
        ox = e[0], oy = e[1], oz = e[2], theta2 = eps2;
        ritz_candidates = m_and(st->active, m_not(newton));
        if (m_any(ritz_candidates)) {
            vf mx, my, mz, m_theta2;
            vmask small = mueller_omega(st, torque, f, curvature, tol, &mx, &my, &mz, &m_theta2);
            update = m_or(update, m_and(st->active, m_not(small)));
            go_on = m_or(go_on, m_and(m_not(newton), v_ge(m_theta2, v_mul(tol, tol))));
            ox = v_select(newton, e[0], mx), oy = v_select(newton, e[1], my), oz = v_select(newton, e[2], mz);
            theta2 = v_select(newton, eps2, m_theta2);
        }
    }

    vf next[4];
    turn(st, ox, oy, oz, theta2, next);
    if (m_any(ritz_candidates)) {
        ritz_candidates = m_and(ritz_candidates, rank_two(st));
        if (!with_curvature)
            extract_curvature(st, f, curvature);
        vf gain, ritz_q[4], axis[3], norm;
        lowest_axis(curvature, axis, &norm);
        ritz_update(st, torque, curvature, axis, &gain, ritz_q);
        /* Ritz lanes update and go on */
        vmask ritz = m_and(ritz_candidates, v_gt(gain, v_set1(CURVATURE_MARGIN)));
        for (int i = 0; i < 4; i++)
            next[i] = v_select(ritz, ritz_q[i], next[i]);
        update = m_or(update, ritz);
        go_on = m_or(go_on, ritz);
        /* Newton's mirrored near-ties: the deflated step where no half turn gains; it updates
           and stops like Newton's */
        vmask near_tie = m_and(m_and(ritz_candidates, m_not(ritz)), st->mirrored);
        if (method == JM_EXTRACT_NEWTON && m_any(near_tie)) {
            vf e[3], e2, e_tol, deflated_q[4];
            vmask deflated = m_and(near_tie, deflated_newton_step(curvature, torque, axis, norm, f, tol, e, &e2, &e_tol));
            turn(st, e[0], e[1], e[2], e2, deflated_q);
            for (int i = 0; i < 4; i++)
                next[i] = v_select(deflated, deflated_q[i], next[i]);
            update = m_or(update, deflated);
            go_on = m_or(m_and(deflated, v_ge(e2, v_mul(e_tol, e_tol))), m_and(m_not(deflated), go_on));
        }
    }

    /* Newton's near-reflections (rare: out of line) */
    if (method == JM_EXTRACT_NEWTON && JM_UNLIKELY(st->near_reflections)) {
        /* through a copy: the step's own values never have their address taken */
        near_reflection_step r = {{curvature[0], curvature[1], curvature[2], curvature[3], curvature[4], curvature[5]},
                                     {torque[0], torque[1], torque[2]}, f, tol, {next[0], next[1], next[2], next[3]}, update, go_on};
        near_reflection_update(st, &r);
        for (int i = 0; i < 4; i++)
            next[i] = r.next[i];
        update = r.update, go_on = r.go_on;
    }
    st->active = m_and(st->active, go_on);
    st->x = v_select(update, next[0], st->x);
    st->y = v_select(update, next[1], st->y);
    st->z = v_select(update, next[2], st->z);
    st->w = v_select(update, next[3], st->w);
    st->iterations = v_add(st->iterations, v_select(update, v_set1(1.0f), v_set1(0.0f)));
}

/* Output of JM_W matrices: q normalised where |q|^2 is off 1 by more than 2^-21 (a q0 returned
   unchanged keeps its bits), and the iteration counts when wanted. */
JM_INLINE void extract_finish(const extract_state *st, char *out, ptrdiff_t os, char *iterations, ptrdiff_t is) {
    const vf q_raw[4] = {st->x, st->y, st->z, st->w};
    vf norm2 = dot4(q_raw, q_raw);
    vmask off = v_gt(v_abs(v_sub(norm2, v_set1(1.0f))), v_set1(0x1p-21f));
    vf scale = v_select(off, v_rsqrt_ieee(norm2), v_set1(1.0f));
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

/* extract_block and extract_run on float32 lanes */
#define T vf
#define T_SCALAR float
#define T_LANES JM_W
#define T_OP(op) v_##op
#define T_ANY(mask) m_any(mask)
#define T_FN(name) name
#define T_STATE extract_state
#define T_MATRIX_MAX sizeof(jm_joint_mat)
#include "extract_driver.h"
#undef T
#undef T_SCALAR
#undef T_LANES
#undef T_OP
#undef T_ANY
#undef T_FN
#undef T_STATE
#undef T_MATRIX_MAX

/*
 * jm_extract_mats (jm_joint_mat records, the translation column unread) and jm_extract_matrices
 * (float[3][3]): for each matrix A the unit quaternion of the rotation R (det +1) minimising
 * ||A - R||_F, by the update of extract_step from q0 or the cold start of extract_start, until
 * |omega| < tol or max_iter updates; optionally the number of updates.
 * Edge cases: det A < 0 gives a proper rotation (R only ever rotates); rank-deficient A keeps
 * the directions it leaves free from the start; A = 0 returns the start (a near-unit q0 bit for
 * bit) after 0 updates; a NaN/inf in A or q0 gives NaN for that matrix only (1 update); finite
 * input gives finite unit output (the power-of-two scaling of A and q0).
 * Near-reflections (det A < 0, all singular values within ~3e-4 of the largest element) stop
 * within 2 (sigma1 - sigma3) + 2 (sigma2 - sigma3) of the maximum of trace(R^T A) instead.
 * Accuracy, float32, tol 2e-7 (measured on every path, tests/kernels/test_extract.py checks the bounds):
 * A = R S with S symmetric positive definite of condition <= 10: within 1.5e-6 rad of the SVD
 * polar rotation (bound 1e-5 for 99.9 %, 1e-4 for all); rotation matrices: 2.7e-7 rad (bound
 * 1e-6); | |q| - 1 | <= 3.1e-7 (bound 5e-7). Each lane computes the same whatever its block-mates
 * and position, so a matrix's result does not depend on n.
 */
void JM_FN(jm_extract_mats)(const jm_extract_job *job) {
    if (job->method == JM_EXTRACT_NEWTON)
        extract_run(LAYOUT_JOINT_MAT, JM_EXTRACT_NEWTON, sizeof(jm_joint_mat), job);
    else
        extract_run(LAYOUT_JOINT_MAT, JM_EXTRACT_MULLER, sizeof(jm_joint_mat), job);
}

void JM_FN(jm_extract_matrices)(const jm_extract_job *job) {
    if (job->method == JM_EXTRACT_NEWTON)
        extract_run(LAYOUT_FLOAT33, JM_EXTRACT_NEWTON, 9 * sizeof(float), job);
    else
        extract_run(LAYOUT_FLOAT33, JM_EXTRACT_MULLER, 9 * sizeof(float), job);
}

/* ------------------------------------------------------------------- float64 -- */
/*
 * The same method on float64 lanes for double[3][3] records (jm_extract_matrices_f64): the
 * functions shared with float32 come from the same templates (extract_objective.h,
 * extract_update.h, extract_driver.h); those below differ from their float32 counterparts by
 * float64 polynomials in turn_f64, and float64 thresholds for a q0 kept bit for bit and for the final normalisation (| |q|^2 - 1 | < 2^-49, so
 * that | |q| - 1 | < 2^-50 = 8.9e-16). The thresholds of the method itself are float64's too: the
 * curvature margin 2^-40 of A's scale and rank >= 2 above 2^-80 (float32's would keep Newton from
 * ill-conditioned matrices: docs/design/extraction.md#float64-thresholds).
 */

#define UNIT_MARGIN_F64 0x1p-49
#define CURVATURE_MARGIN_F64 0x1p-40 /* CURVATURE_MARGIN, for float64 lanes */
#define RANK_TWO_F64 0x1p-80         /* rank_two's threshold, for float64 lanes */
/* FLAT_LIMIT for float64 lanes: above the near-reflections whose two small curvature eigenvalues
   lowest_axis's 2^20th power cannot separate (their updates walked along the near-flat set) */
#define FLAT_LIMIT_F64 0x1p-14

typedef struct {
    vd kxx, kyy, kzz, kww, kxy, kxz, kyz, kxw, kyw, kzw;
    vd x, y, z, w;
    vd iterations;
    vdmask active;
    vdmask mirrored; /* det A < 0 (see mueller_denominator) */
    int near_reflections; /* some lane may be a near-reflection (near_reflection_update_f64) */
} extract_state_f64;

/* the same on float64 lanes (rank_two_f64, k_times_f64, ..., turn_by_f64) */
#define T vd
#define T_MASK vdmask
#define T_OP(op) vd_##op
#define T_MASK_OP(op) md_##op
#define T_FN(name) name##_f64
#define T_STATE extract_state_f64
#define T_NEGATE(x) vd_negate(x)
#define T_RANK_TWO RANK_TWO_F64
#define T_TINY 0x1p-200
#define T_CURVATURE_MARGIN CURVATURE_MARGIN_F64
#define T_MAX_FINITE 0x1.fffffffffffffp1023
#define T_FLAT_LIMIT FLAT_LIMIT_F64
#define T_REFLECTION_HINT 0x1p-20
#include "extract_objective.h"

#include "extract_update.h"
#undef T
#undef T_MASK
#undef T_OP
#undef T_MASK_OP
#undef T_FN
#undef T_STATE
#undef T_NEGATE
#undef T_RANK_TWO
#undef T_TINY
#undef T_CURVATURE_MARGIN
#undef T_MAX_FINITE
#undef T_FLAT_LIMIT
#undef T_REFLECTION_HINT

/* extract_start on float64 lanes (double[3][3] records; q0 double[4]) */
JM_INLINE void extract_start_f64(int layout, const char *a_rec, ptrdiff_t as, const char *q0_rec, ptrdiff_t qs,
                                 extract_state_f64 *st) {
    vd a[9];
    (void)layout; /* LAYOUT_DOUBLE33 */
    vd_load_mat3(a_rec, as, a);
    vd_scale_pow2(a, 9);
    vd det;
    vd norm2 = davenport_k_f64(a, st, &det);
    st->near_reflections = md_any(st->mirrored) && md_any(md_and(st->mirrored, may_be_near_reflection_f64(norm2, det)));

    const vd zero = vd_set1(0.0), one = vd_set1(1.0);
    if (q0_rec) {
        vd q[4], sq[4];
        vd_load_quads(q0_rec, qs, &q[0], &q[1], &q[2], &q[3]);
        vd q_norm2 = dot4_f64(q, q);
        vdmask keep = vd_lt(vd_abs(vd_sub(q_norm2, one)), vd_set1(UNIT_MARGIN_F64)); /* NaN: false */
        st->x = q[0], st->y = q[1], st->z = q[2], st->w = q[3];
        if (md_any(md_not(keep))) { /* the others: normalised (scaled first), q0 = 0 the identity */
            for (int i = 0; i < 4; i++)
                sq[i] = q[i];
            vd largest_q = vd_scale_pow2(sq, 4);
            vd inv = vd_rsqrt_ieee(dot4_f64(sq, sq));
            vdmask is_zero = md_and(vd_lt(q_norm2, one), md_not(vd_gt(largest_q, zero)));
            st->x = vd_select(keep, q[0], vd_select(is_zero, zero, vd_mul(sq[0], inv)));
            st->y = vd_select(keep, q[1], vd_select(is_zero, zero, vd_mul(sq[1], inv)));
            st->z = vd_select(keep, q[2], vd_select(is_zero, zero, vd_mul(sq[2], inv)));
            st->w = vd_select(keep, q[3], vd_select(is_zero, one, vd_mul(sq[3], inv)));
        }
    } else {
        vdmask is_zero = vd_lt(norm2, one);
        vd to_unit = vd_mul(vd_set1(1.7320508075688772), vd_rsqrt_ieee(vd_max(norm2, one)));
        vd r[9], q[4];
        for (int i = 0; i < 9; i++)
            r[i] = vd_mul(a[i], to_unit);
        r[0] = vd_select(is_zero, one, r[0]);
        r[4] = vd_select(is_zero, one, r[4]);
        r[8] = vd_select(is_zero, one, r[8]);
        largest_divisor_quat_f64(r, q);
        st->x = q[0], st->y = q[1], st->z = q[2], st->w = q[3];
    }
    st->iterations = zero;
    st->active = vd_ge(zero, zero); /* every lane */
}

/*
 * turn on float64 lanes: (sin(h) omega / theta, cos(h)) * q with h = theta / 2. Half angles up to
 * pi / 2 (every step near convergence) take the Taylor series of cos and sin(h) / h in h^2
 * directly (terms to h^20: truncation below 2e-17 on |h| <= pi / 2); blocks holding a larger one
 * first reduce it, h = k pi + r with |r| <= pi / 2 (Cody-Waite with pi in three parts: k P1 and
 * k P2 exact for k < 2^21), and turn by 2r, the same rotation; half angles beyond 2^22 rad,
 * which only far-off Mueller steps reach, are reduced as if they were 2^22 rad.
 */
JM_INLINE void turn_f64(const extract_state_f64 *st, vd ox, vd oy, vd oz, vd theta2, vd turned[4]) {
    static const double cos_terms[11] = {1.0, -0.5, 0.041666666666666664, -0.001388888888888889, 2.48015873015873e-05,
                                         -2.755731922398589e-07, 2.08767569878681e-09, -1.1470745597729725e-11,
                                         4.779477332387385e-14, -1.5619206968586225e-16, 4.110317623312165e-19};
    static const double sinc_terms[11] = {1.0, -0.16666666666666666, 0.008333333333333333, -0.0001984126984126984,
                                          2.7557319223985893e-06, -2.505210838544172e-08, 1.6059043836821613e-10,
                                          -7.647163731819816e-13, 2.8114572543455206e-15, -8.22063524662433e-18,
                                          1.9572941063391263e-20};
    vd h2 = vd_mul(theta2, vd_set1(0.25));
    vd r2 = h2, ratio = vd_set1(1.0); /* ratio: r / h, 1 unreduced */
    vdmask reduce = vd_gt(h2, vd_set1(2.4674011002723395)); /* (pi / 2)^2 */
    if (JM_UNLIKELY(md_any(reduce))) {
        vd h = vd_min(vd_sqrt(h2), vd_set1(0x1p22));
        vd k = vd_round(vd_mul(h, vd_set1(0.3183098861837907)));
        vd r = vd_neg_mul_add(k, vd_set1(0x1.3198a2e037073p-68),
                              vd_neg_mul_add(k, vd_set1(0x1.0b4611a6p-33), vd_neg_mul_add(k, vd_set1(0x1.921fb544p+1), h)));
        r2 = vd_select(reduce, vd_mul(r, r), h2);
        ratio = vd_select(reduce, vd_div(r, h), ratio);
    }
    vd cos_r = vd_set1(cos_terms[10]), sinc_r = vd_set1(sinc_terms[10]);
    for (int i = 9; i >= 0; i--) {
        cos_r = vd_mul_add(cos_r, r2, vd_set1(cos_terms[i]));
        sinc_r = vd_mul_add(sinc_r, r2, vd_set1(sinc_terms[i]));
    }
    vd scale = vd_mul(vd_mul(vd_set1(0.5), sinc_r), ratio);
    vd ax = vd_mul(ox, scale), ay = vd_mul(oy, scale), az = vd_mul(oz, scale);
    turn_by_f64(st, cos_r, ax, ay, az, turned);
}

/* extract_step on float64 lanes: the same updates, stops and saddle check. Newton's blocks skip
   Mueller's division when every active lane takes the Newton step (what it gives such lanes
   is never used). */
JM_INLINE void extract_step_f64(extract_state_f64 *st, vd tol, int method) {
    vd torque[3], f;
    extract_gradient_f64(st, torque, &f);
    vd ox, oy, oz, theta2;
    vd curvature[6];
    vdmask ritz_candidates, update, go_on;
    const int with_curvature = method == JM_EXTRACT_NEWTON || md_any(md_and(st->active, st->mirrored));
    if (with_curvature)
        extract_curvature_f64(st, f, curvature);
    if (method != JM_EXTRACT_NEWTON) {
        vdmask small = mueller_omega_f64(st, torque, f, with_curvature ? curvature : NULL, tol, &ox, &oy, &oz, &theta2);
        update = md_and(st->active, md_not(small)); /* |omega| < tol stops before updating */
        go_on = vd_ge(theta2, vd_mul(tol, tol));    /* NaN updates once, then stops */
        ritz_candidates = md_and(st->active, small);
    } else {
        vd e[3], eps2, newton_tol;
        vdmask newton = newton_step_f64(curvature, torque, f, tol, e, &eps2, &newton_tol);
        /* Newton's lanes update, then stop below their threshold; the others are Mueller's */
        update = md_and(st->active, newton);
        go_on = md_and(newton, vd_ge(eps2, vd_mul(newton_tol, newton_tol)));
        ox = e[0], oy = e[1], oz = e[2], theta2 = eps2;
        ritz_candidates = md_and(st->active, md_not(newton));
        if (md_any(ritz_candidates)) {
            vd mx, my, mz, m_theta2;
            vdmask small = mueller_omega_f64(st, torque, f, curvature, tol, &mx, &my, &mz, &m_theta2);
            update = md_or(update, md_and(st->active, md_not(small)));
            go_on = md_or(go_on, md_and(md_not(newton), vd_ge(m_theta2, vd_mul(tol, tol))));
            ox = vd_select(newton, e[0], mx), oy = vd_select(newton, e[1], my), oz = vd_select(newton, e[2], mz);
            theta2 = vd_select(newton, eps2, m_theta2);
        }
    }

    vd next[4];
    turn_f64(st, ox, oy, oz, theta2, next);
    if (md_any(ritz_candidates)) {
        ritz_candidates = md_and(ritz_candidates, rank_two_f64(st));
        if (!with_curvature)
            extract_curvature_f64(st, f, curvature);
        vd gain, ritz_q[4], axis[3], norm;
        lowest_axis_f64(curvature, axis, &norm);
        ritz_update_f64(st, torque, curvature, axis, &gain, ritz_q);
        vdmask ritz = md_and(ritz_candidates, vd_gt(gain, vd_set1(CURVATURE_MARGIN_F64)));
        for (int i = 0; i < 4; i++)
            next[i] = vd_select(ritz, ritz_q[i], next[i]);
        update = md_or(update, ritz);
        go_on = md_or(go_on, ritz);
        vdmask near_tie = md_and(md_and(ritz_candidates, md_not(ritz)), st->mirrored);
        if (method == JM_EXTRACT_NEWTON && md_any(near_tie)) {
            vd e[3], e2, e_tol, deflated_q[4];
            vdmask deflated =
                md_and(near_tie, deflated_newton_step_f64(curvature, torque, axis, norm, f, tol, e, &e2, &e_tol));
            turn_f64(st, e[0], e[1], e[2], e2, deflated_q);
            for (int i = 0; i < 4; i++)
                next[i] = vd_select(deflated, deflated_q[i], next[i]);
            update = md_or(update, deflated);
            go_on = md_or(md_and(deflated, vd_ge(e2, vd_mul(e_tol, e_tol))), md_and(md_not(deflated), go_on));
        }
    }

    /* Newton's near-reflections (rare: out of line) */
    if (method == JM_EXTRACT_NEWTON && JM_UNLIKELY(st->near_reflections)) {
        /* through a copy: the step's own values never have their address taken */
        near_reflection_step_f64 r = {{curvature[0], curvature[1], curvature[2], curvature[3], curvature[4], curvature[5]},
                                     {torque[0], torque[1], torque[2]}, f, tol, {next[0], next[1], next[2], next[3]}, update, go_on};
        near_reflection_update_f64(st, &r);
        for (int i = 0; i < 4; i++)
            next[i] = r.next[i];
        update = r.update, go_on = r.go_on;
    }
    st->active = md_and(st->active, go_on);
    st->x = vd_select(update, next[0], st->x);
    st->y = vd_select(update, next[1], st->y);
    st->z = vd_select(update, next[2], st->z);
    st->w = vd_select(update, next[3], st->w);
    st->iterations = vd_add(st->iterations, vd_select(update, vd_set1(1.0), vd_set1(0.0)));
}

/* extract_finish on float64 lanes: q normalised where | |q|^2 - 1 | >= UNIT_MARGIN_F64 */
JM_INLINE void extract_finish_f64(const extract_state_f64 *st, char *out, ptrdiff_t os, char *iterations,
                                  ptrdiff_t is) {
    vd q[4] = {st->x, st->y, st->z, st->w};
    vd norm2 = dot4_f64(q, q);
    vdmask off = md_not(vd_lt(vd_abs(vd_sub(norm2, vd_set1(1.0))), vd_set1(UNIT_MARGIN_F64)));
    if (md_any(off)) {
        vd scale = vd_select(off, vd_rsqrt_ieee(norm2), vd_set1(1.0));
        for (int i = 0; i < 4; i++)
            q[i] = vd_mul(q[i], scale);
    }
    vd_store_quads(out, os, q[0], q[1], q[2], q[3]);
    if (iterations) {
        uint32_t counts[JM_WD];
        vd_store_u32((char *)counts, st->iterations);
        for (int i = 0; i < JM_WD; i++) {
            int32_t count = (int32_t)counts[i];
            memcpy(iterations + i * is, &count, sizeof count);
        }
    }
}

/* extract_block_f64 and extract_run_f64 */
#define T vd
#define T_SCALAR double
#define T_LANES JM_WD
#define T_OP(op) vd_##op
#define T_ANY(mask) md_any(mask)
#define T_FN(name) name##_f64
#define T_STATE extract_state_f64
#define T_MATRIX_MAX (9 * sizeof(double))
#include "extract_driver.h"
#undef T
#undef T_SCALAR
#undef T_LANES
#undef T_OP
#undef T_ANY
#undef T_FN
#undef T_STATE
#undef T_MATRIX_MAX

/*
 * jm_extract_matrices_f64: jm_extract_matrices for double[3][3] -> double[4] (q0 double[4]), in
 * float64 throughout; the same method, starts, stops, saddle check and edge cases (A = 0 returns
 * the start after 0 updates, a q0 with | |q0|^2 - 1 | < 2^-49 bit for bit; NaN/inf in a matrix or
 * its q0 gives NaN for that matrix only, after 1 update; finite input gives finite output with
 * | |q| - 1 | < 2^-50).
 * Accuracy, float64, default tol 1e-12 (tests/kernels/test_extract.py checks it on every path):
 * "newton": A = R S with S symmetric positive definite of condition up to 1e3 (and rotations),
 * within 1e-14 sigma1 / (sigma2 + sigma3) rad of the float64 SVD polar rotation; near-reflections
 * (singular values within ~2e-5) within 2 (sigma1 - sigma3) + 2 (sigma2 - sigma3) of the maximum
 * of trace(R^T A) (near_reflection_update_f64). "muller" stops
 * on |omega| < tol, i.e. within about tol (sigma1 + sigma2 + sigma3) / (sigma2 + sigma3) rad.
 */
void JM_FN(jm_extract_matrices_f64)(const jm_extract_job *job) {
    if (job->method == JM_EXTRACT_NEWTON)
        extract_run_f64(LAYOUT_DOUBLE33, JM_EXTRACT_NEWTON, 9 * sizeof(double), job);
    else
        extract_run_f64(LAYOUT_DOUBLE33, JM_EXTRACT_MULLER, 9 * sizeof(double), job);
}
