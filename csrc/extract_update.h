/*
 * extract_update.h - the pieces of the rotation extraction's update (extract.c) whose math is the
 * same on float32 and float64 lanes: a type-generic template that extract.c includes once per lane
 * type (no include guard), after extract_objective.h with its T, T_MASK, T_OP, T_FN, T_STATE and
 * T_NEGATE still defined, and with
 *
 *   T_MASK_OP(op)     the ISA operation on masks (m_op, md_op)
 *   T_TINY            the floor under squared norms before a reciprocal square root: float32
 *                     2^-100, float64 2^-200
 *   T_CURVATURE_MARGIN  extract.c's curvature margin in that type
 *   T_MAX_FINITE      the largest finite value of the type
 *   T_FLAT_LIMIT      near_reflection_update's limit on reflection_spread
 *   T_REFLECTION_HINT may_be_near_reflection's limit on 1 - det^2 / m^3
 *
 * defined (and undefined after). Every name below is T_FN(...), so both expansions live in one unit.
 * Like extract_objective.h it uses only path-identical operations (simd/lane_helpers.h: mul_add,
 * neg_mul_add, rsqrt_ieee; divisions and square roots), never the fused multiply-add or the
 * reciprocal estimates, so that every path computes the same bits (docs/design/extraction.md#counts-across-paths).
 */

/*
 * davenport_k: Davenport's matrix K of A (a[] row-major, scaled) into st, whether det A < 0 into
 * st->mirrored, det A into *det; returns ||A||_F^2.
 */
JM_INLINE T T_FN(davenport_k)(const T a[9], T_STATE *st, T *det_out) {
    T det = T_OP(mul)(a[0], T_OP(neg_mul_add)(a[5], a[7], T_OP(mul)(a[4], a[8])));
    det = T_OP(neg_mul_add)(a[1], T_OP(neg_mul_add)(a[5], a[6], T_OP(mul)(a[3], a[8])), det);
    det = T_OP(mul_add)(a[2], T_OP(neg_mul_add)(a[4], a[6], T_OP(mul)(a[3], a[7])), det);
    *det_out = det;
    st->mirrored = T_OP(lt)(det, T_OP(set1)(0.0));
    T trace = T_OP(add)(T_OP(add)(a[0], a[4]), a[8]);
    st->kxx = T_OP(sub)(T_OP(sub)(a[0], a[4]), a[8]);
    st->kyy = T_OP(sub)(T_OP(sub)(a[4], a[0]), a[8]);
    st->kzz = T_OP(sub)(T_OP(sub)(a[8], a[0]), a[4]);
    st->kww = trace;
    st->kxy = T_OP(add)(a[1], a[3]);
    st->kxz = T_OP(add)(a[2], a[6]);
    st->kyz = T_OP(add)(a[5], a[7]);
    st->kxw = T_OP(sub)(a[7], a[5]);
    st->kyw = T_OP(sub)(a[2], a[6]);
    st->kzw = T_OP(sub)(a[3], a[1]);
    T norm2 = T_OP(mul)(a[0], a[0]);
    for (int i = 1; i < 9; i++)
        norm2 = T_OP(mul_add)(a[i], a[i], norm2);
    return norm2;
}

/*
 * lowest_axis: the unit eigenvector n of the lowest eigenvalue of N (c[] = xx, yy, zz, xy, xz, yz)
 * into axis[], and |N|_F into *norm. n comes from (I - N / |N|_F)^(2^AXIS_SQUARINGS) by repeated
 * squaring (positive semidefinite: |N|_F bounds N's eigenvalues; the ratio of its top two
 * eigenvalues is 1 - gap / (|N|_F - lambda_min)), each square rescaled by the power of two that
 * puts its trace (plus T_TINY) in [1, 2) (exact, no division; the trace bounds every entry), as
 * the column with the largest diagonal entry (a multiple of n with weight >= 1/3).
 */
JM_INLINE void T_FN(lowest_axis)(const T curvature[6], T axis[3], T *norm) {
    T n2 = T_OP(mul_add)(curvature[0], curvature[0],
                       T_OP(mul_add)(curvature[1], curvature[1], T_OP(mul)(curvature[2], curvature[2])));
    n2 = T_OP(mul_add)(T_OP(add)(curvature[3], curvature[3]), curvature[3],
                     T_OP(mul_add)(T_OP(add)(curvature[4], curvature[4]), curvature[4],
                                 T_OP(mul_add)(T_OP(add)(curvature[5], curvature[5]), curvature[5], n2)));
    T inv_norm = T_OP(rsqrt_ieee)(T_OP(max)(n2, T_OP(set1)(T_TINY)));
    *norm = T_OP(mul)(n2, inv_norm);
    inv_norm = T_NEGATE(inv_norm);
    /* P = I - N / |N|_F, as xx, yy, zz, xy, xz, yz */
    T m[6];
    for (int i = 0; i < 6; i++)
        m[i] = T_OP(mul)(curvature[i], inv_norm);
    for (int i = 0; i < 3; i++)
        m[i] = T_OP(add)(m[i], T_OP(set1)(1.0));
    for (int k = 0; k < AXIS_SQUARINGS; k++) {
        T xx = T_OP(mul_add)(m[0], m[0], T_OP(mul_add)(m[3], m[3], T_OP(mul)(m[4], m[4])));
        T yy = T_OP(mul_add)(m[3], m[3], T_OP(mul_add)(m[1], m[1], T_OP(mul)(m[5], m[5])));
        T zz = T_OP(mul_add)(m[4], m[4], T_OP(mul_add)(m[5], m[5], T_OP(mul)(m[2], m[2])));
        T xy = T_OP(mul_add)(m[0], m[3], T_OP(mul_add)(m[3], m[1], T_OP(mul)(m[4], m[5])));
        T xz = T_OP(mul_add)(m[0], m[4], T_OP(mul_add)(m[3], m[5], T_OP(mul)(m[4], m[2])));
        T yz = T_OP(mul_add)(m[3], m[4], T_OP(mul_add)(m[1], m[5], T_OP(mul)(m[5], m[2])));
        /* P^2 positive semidefinite: no entry above its trace */
        T scale = T_OP(pow2_inverse)(T_OP(add)(T_OP(add)(xx, yy), T_OP(add)(zz, T_OP(set1)(T_TINY))));
        m[0] = T_OP(mul)(xx, scale), m[1] = T_OP(mul)(yy, scale), m[2] = T_OP(mul)(zz, scale);
        m[3] = T_OP(mul)(xy, scale), m[4] = T_OP(mul)(xz, scale), m[5] = T_OP(mul)(yz, scale);
    }
    T_MASK use_x = T_MASK_OP(and)(T_OP(ge)(m[0], m[1]), T_OP(ge)(m[0], m[2]));
    T_MASK use_y = T_MASK_OP(and)(T_MASK_OP(not)(use_x), T_OP(ge)(m[1], m[2]));
    T nx = T_OP(select)(use_x, m[0], T_OP(select)(use_y, m[3], m[4]));
    T ny = T_OP(select)(use_x, m[3], T_OP(select)(use_y, m[1], m[5]));
    T nz = T_OP(select)(use_x, m[4], T_OP(select)(use_y, m[5], m[2]));
    T inv_n = T_OP(rsqrt_ieee)(T_OP(max)(T_OP(mul_add)(nx, nx, T_OP(mul_add)(ny, ny, T_OP(mul)(nz, nz))), T_OP(set1)(T_TINY)));
    axis[0] = T_OP(mul)(nx, inv_n), axis[1] = T_OP(mul)(ny, inv_n), axis[2] = T_OP(mul)(nz, inv_n);
}

/*
 * ritz_update: the best quaternion in the plane of q and b(n) = sum_i n_i b_i, where n = axis[] is
 * (about) the eigenvector of N's lowest eigenvalue (lowest_axis), i.e. the axis about which a half
 * turn gains most. In that plane f is the 2x2 form [[f, t], [t, g]] (t = tau . n, g = f - n^T N n / 1 as
 * b(n) . K b(n) = f - n^T N n); its top eigenvector (c_q, c_b) turns R about n by up to pi.
 * At a stationary point that is not the maximum (t = 0, g > f) it is the half turn that leaves
 * it: at a saddle with S = sym(A R^T) = W diag(d1 >= d2 >= d3) W^T and d2 + d3 < 0 the half
 * turn about w1 lands on the maximum. Far from the maximum (N not positive definite) it is the
 * step Newton's cannot take. gain = the rise of f (>= 0), ritz[] the new quaternion, unit.
 */
JM_INLINE void T_FN(ritz_update)(const T_STATE *st, const T torque[3], const T curvature[6], const T axis[3], T *gain,
                                  T ritz[4]) {
    const T nx = axis[0], ny = axis[1], nz = axis[2];
    /* n^T N n / 2 = (f - g) / 2 and t = tau . n */
    T nn = T_OP(mul_add)(
        nx, T_OP(mul_add)(curvature[0], nx, T_OP(mul_add)(curvature[3], ny, T_OP(mul)(curvature[4], nz))),
        T_OP(mul_add)(ny, T_OP(mul_add)(curvature[3], nx, T_OP(mul_add)(curvature[1], ny, T_OP(mul)(curvature[5], nz))),
                    T_OP(mul)(nz, T_OP(mul_add)(curvature[4], nx,
                                              T_OP(mul_add)(curvature[5], ny, T_OP(mul)(curvature[2], nz))))));
    T half = T_OP(mul)(nn, T_OP(set1)(0.5));
    T t = T_OP(mul_add)(torque[0], nx, T_OP(mul_add)(torque[1], ny, T_OP(mul)(torque[2], nz)));
    T r = T_OP(sqrt)(T_OP(mul_add)(half, half, T_OP(mul)(t, t)));
    /* top eigenvector of [[f, t], [t, f - 2 half]] without cancellation: (half + r, t) for
       half >= 0, else (t, r - half); the gain is r - half */
    T_MASK q_side = T_OP(ge)(half, T_OP(set1)(0.0));
    T c_q = T_OP(select)(q_side, T_OP(add)(half, r), t);
    T c_b = T_OP(select)(q_side, t, T_OP(sub)(r, half));
    *gain = T_OP(sub)(r, half);
    T b[3][4];
    T_FN(tangent_basis)(st, b);
    const T q[4] = {st->x, st->y, st->z, st->w};
    for (int i = 0; i < 4; i++)
        ritz[i] = T_OP(mul_add)(c_q, q[i], T_OP(mul)(c_b, T_OP(mul_add)(nx, b[0][i], T_OP(mul_add)(ny, b[1][i],
                                                                                       T_OP(mul)(nz, b[2][i])))));
    T inv = T_OP(rsqrt_ieee)(T_OP(max)(T_FN(dot4)(ritz, ritz), T_OP(set1)(T_TINY)));
    for (int i = 0; i < 4; i++)
        ritz[i] = T_OP(mul)(ritz[i], inv);
}

/*
 * mueller_denominator: where det A < 0, max(|f|, |N|_F / 2). The update omega = tau / d turns
 * R by (1 - lambda / d) of the way to the maximum along each eigenvector of the curvature H =
 * N / 2 (eigenvalue lambda). Where det A > 0, |f| >= lambda_max near the maximum (f = s1 + s2 + s3
 * against s1 + s2) and the paper's d = |f| never overshoots; where det A < 0, f = s1 + s2 - s3
 * lies below lambda_max = s1 + s2 (signs dropped), so d = |f| overshoots up to 2x: at a mirrored
 * rotation (s = 1, 1, 1) the error about one axis changed sign each update without shrinking,
 * Newton's fallback there (a near-tie) stopped 5.5e-3 rad from every best rotation in 61 of
 * 5,000 mirrored rotations after 200 updates, and method "muller" at s = (1, 1, 0.99) ended
 * worse than it started in 14 % of matrices, up to the worst rotation there is. |N|_F / 2 =
 * |H|_F >= |lambda| for every eigenvalue: no overshoot anywhere; the directions of small lambda
 * (near-ties) converge at most ~2x more slowly.
 */
JM_INLINE T T_FN(mueller_denominator)(T f, const T c[6]) {
    T off = T_OP(mul_add)(c[3], c[3], T_OP(mul_add)(c[4], c[4], T_OP(mul)(c[5], c[5])));
    T norm2 = T_OP(mul_add)(c[0], c[0], T_OP(mul_add)(c[1], c[1], T_OP(mul_add)(c[2], c[2], T_OP(add)(off, off))));
    return T_OP(max)(T_OP(abs)(f), T_OP(mul)(T_OP(set1)(0.5), T_OP(sqrt)(norm2)));
}

/* mueller_omega: Mueller's update omega = tau / (d + 1e-9) and its square, d = |f| or
   mueller_denominator in the mirrored lanes (when curvature is given); returns small:
   |omega| < tol (false for NaN) */
JM_INLINE T_MASK T_FN(mueller_omega)(const T_STATE *st, const T torque[3], T f, const T *curvature, T tol, T *ox,
                                    T *oy, T *oz, T *theta2) {
    T denominator = T_OP(abs)(f);
    if (curvature)
        denominator = T_OP(select)(st->mirrored, T_FN(mueller_denominator)(f, curvature), denominator);
    T inv_denominator = T_OP(rcp_ieee)(T_OP(add)(denominator, T_OP(set1)(1e-9)));
    *ox = T_OP(mul)(torque[0], inv_denominator), *oy = T_OP(mul)(torque[1], inv_denominator);
    *oz = T_OP(mul)(torque[2], inv_denominator);
    *theta2 = T_OP(mul_add)(*ox, *ox, T_OP(mul_add)(*oy, *oy, T_OP(mul)(*oz, *oz)));
    return T_OP(lt)(*theta2, T_OP(mul)(tol, tol));
}

/*
 * newton_step: eps = H^-1 tau = 2 adj(N) tau / det N (c[] = N: xx, yy, zz, xy, xz, yz) into eps[],
 * |eps|^2 into *eps2 and the stop threshold 2 tol (1 + f tr(adj N) / det N) into *newton_tol;
 * returns the lanes where N - T_CURVATURE_MARGIN I is positive definite (leading minors > 0, from
 * adj(N), det N and the characteristic polynomial's shift) and the step is finite (NaN fails).
 */
JM_INLINE T_MASK T_FN(newton_step)(const T c[6], const T torque[3], T f, T tol, T eps[3], T *eps2, T *newton_tol) {
    /* adj(N) (symmetric) and det N */
    T adj_xx = T_OP(neg_mul_add)(c[5], c[5], T_OP(mul)(c[1], c[2]));
    T adj_yy = T_OP(neg_mul_add)(c[4], c[4], T_OP(mul)(c[0], c[2]));
    T adj_zz = T_OP(neg_mul_add)(c[3], c[3], T_OP(mul)(c[0], c[1]));
    T adj_xy = T_OP(neg_mul_add)(c[3], c[2], T_OP(mul)(c[4], c[5]));
    T adj_xz = T_OP(neg_mul_add)(c[4], c[1], T_OP(mul)(c[3], c[5]));
    T adj_yz = T_OP(neg_mul_add)(c[5], c[0], T_OP(mul)(c[3], c[4]));
    T det = T_OP(mul_add)(c[0], adj_xx, T_OP(mul_add)(c[3], adj_xy, T_OP(mul)(c[4], adj_xz)));
    T adj_trace = T_OP(add)(T_OP(add)(adj_xx, adj_yy), adj_zz);
    /* leading minors of N - m I: n_xx - m, adj_zz - m (n_xx + n_yy) + m^2 and
       det N - m tr adj N + m^2 tr N - m^3 */
    const T margin = T_OP(set1)(T_CURVATURE_MARGIN), zero = T_OP(set1)(0.0);
    T minor1 = T_OP(sub)(c[0], margin);
    T minor2 = T_OP(neg_mul_add)(margin, T_OP(sub)(T_OP(add)(c[0], c[1]), margin), adj_zz);
    T minor3 = T_OP(neg_mul_add)(margin, T_OP(neg_mul_add)(margin, T_OP(sub)(T_OP(add)(T_OP(add)(c[0], c[1]), c[2]), margin),
                                                 adj_trace), det);
    T_MASK newton = T_MASK_OP(and)(T_OP(gt)(minor1, zero), T_MASK_OP(and)(T_OP(gt)(minor2, zero), T_OP(gt)(minor3, zero)));
    T two_inv_det = T_OP(div)(T_OP(set1)(2.0), det);
    eps[0] = T_OP(mul)(two_inv_det, T_OP(mul_add)(adj_xx, torque[0], T_OP(mul_add)(adj_xy, torque[1], T_OP(mul)(adj_xz, torque[2]))));
    eps[1] = T_OP(mul)(two_inv_det, T_OP(mul_add)(adj_xy, torque[0], T_OP(mul_add)(adj_yy, torque[1], T_OP(mul)(adj_yz, torque[2]))));
    eps[2] = T_OP(mul)(two_inv_det, T_OP(mul_add)(adj_xz, torque[0], T_OP(mul_add)(adj_yz, torque[1], T_OP(mul)(adj_zz, torque[2]))));
    *eps2 = T_OP(mul_add)(eps[0], eps[0], T_OP(mul_add)(eps[1], eps[1], T_OP(mul)(eps[2], eps[2])));
    newton = T_MASK_OP(and)(newton, T_OP(ge)(T_OP(set1)(T_MAX_FINITE), *eps2));
    /* twice tol (1 + f tr(adj N) / det N), why: the torque's rounding alone makes steps of about
       one threshold, between which Newton cycled to max_iter (docs/design/extraction.md#rounding-floor) */
    T scaled_tol = T_OP(mul)(tol, T_OP(set1)(2.0));
    *newton_tol = T_OP(mul_add)(scaled_tol, T_OP(mul)(T_OP(mul)(T_OP(abs)(f), adj_trace), T_OP(mul)(two_inv_det, T_OP(set1)(0.5))), scaled_tol);
    return newton;
}

/* lift_axis: c[] (N) + lift n n^T and torque[] without its component along n, in place. */
JM_INLINE void T_FN(lift_axis)(T c[6], T torque[3], const T axis[3], T lift) {
    const T nx = axis[0], ny = axis[1], nz = axis[2];
    c[0] = T_OP(mul_add)(T_OP(mul)(lift, nx), nx, c[0]), c[1] = T_OP(mul_add)(T_OP(mul)(lift, ny), ny, c[1]);
    c[2] = T_OP(mul_add)(T_OP(mul)(lift, nz), nz, c[2]), c[3] = T_OP(mul_add)(T_OP(mul)(lift, nx), ny, c[3]);
    c[4] = T_OP(mul_add)(T_OP(mul)(lift, nx), nz, c[4]), c[5] = T_OP(mul_add)(T_OP(mul)(lift, ny), nz, c[5]);
    T along = T_OP(mul_add)(torque[0], nx, T_OP(mul_add)(torque[1], ny, T_OP(mul)(torque[2], nz)));
    torque[0] = T_OP(neg_mul_add)(along, nx, torque[0]), torque[1] = T_OP(neg_mul_add)(along, ny, torque[1]);
    torque[2] = T_OP(neg_mul_add)(along, nz, torque[2]);
}

/* axis_curvature: n^T N n for a unit n (axis[]) and c[] = N. */
JM_INLINE T T_FN(axis_curvature)(const T c[6], const T axis[3]) {
    const T nx = axis[0], ny = axis[1], nz = axis[2];
    return T_OP(mul_add)(nx, T_OP(mul_add)(c[0], nx, T_OP(mul_add)(c[3], ny, T_OP(mul)(c[4], nz))),
                       T_OP(mul_add)(ny, T_OP(mul_add)(c[3], nx, T_OP(mul_add)(c[1], ny, T_OP(mul)(c[5], nz))),
                                   T_OP(mul)(nz, T_OP(mul_add)(c[4], nx, T_OP(mul_add)(c[5], ny, T_OP(mul)(c[2], nz))))));
}

/*
 * deflated_newton_step: newton_step with N's lowest eigenvector n (axis[], unit, |N|_F = norm:
 * lowest_axis) lifted by |N|_F and the torque's component along n dropped: the Newton step in the
 * plane of the other two eigenvectors, nothing about n. Only where n's eigenvalue is below the
 * curvature margin (a near-tie); where the next one is below NEAR_REFLECTION_MARGINS margins too
 * (A near a multiple of a reflection: sigma1 - sigma3 small as well) that eigenvector is lifted
 * the same way and the step is about the remaining axis alone.
 * Why: where det A < 0 and sigma2 - sigma3 is below the margin (two rotations nearly tie),
 * turning about n changes f by at most 2 (sigma2 - sigma3), so the maximum is settled to within
 * that without the step Newton cannot take there; Mueller's update, the fallback before, moved at
 * the rate (sigma2 - sigma3) / |H|_F and ran to max_iter (docs/design/extraction.md#near-ties).
 * Returns the lanes that take the step (their lifted matrix passed newton_step's test).
 */
JM_INLINE T_MASK T_FN(deflated_newton_step)(const T c[6], const T torque[3], const T axis[3], T norm, T f, T tol,
                                            T eps[3], T *eps2, T *newton_tol) {
    const T margin = T_OP(set1)(T_CURVATURE_MARGIN);
    T_MASK flat = T_OP(lt)(T_FN(axis_curvature)(c, axis), margin);
    T lifted[6], across[3], second[3], unused, eps_twice[3], eps2_twice, tol_twice;
    for (int i = 0; i < 6; i++)
        lifted[i] = c[i];
    for (int i = 0; i < 3; i++)
        across[i] = torque[i];
    T_FN(lift_axis)(lifted, across, axis, norm);
    T_MASK once = T_MASK_OP(and)(flat, T_FN(newton_step)(lifted, across, f, tol, eps, eps2, newton_tol));
    T_FN(lowest_axis)(lifted, second, &unused);
    T_MASK flat_twice = T_MASK_OP(and)(flat, T_OP(lt)(T_FN(axis_curvature)(lifted, second),
                                                      T_OP(mul)(T_OP(set1)(NEAR_REFLECTION_MARGINS), margin)));
    if (!T_MASK_OP(any)(flat_twice))
        return once;
    T_FN(lift_axis)(lifted, across, second, norm);
    T_MASK twice = T_MASK_OP(and)(flat_twice, T_FN(newton_step)(lifted, across, f, tol, eps_twice, &eps2_twice, &tol_twice));
    for (int i = 0; i < 3; i++)
        eps[i] = T_OP(select)(flat_twice, eps_twice[i], eps[i]);
    *eps2 = T_OP(select)(flat_twice, eps2_twice, *eps2);
    *newton_tol = T_OP(select)(flat_twice, tol_twice, *newton_tol);
    return T_MASK_OP(or)(T_MASK_OP(and)(once, T_MASK_OP(not)(flat_twice)), twice);
}

/* turn_by: q <- (a, cos_h) * q, the quaternion of R turned by the rotation whose half angle has
   cosine cos_h and whose vector part is a = (ax, ay, az). */
JM_INLINE void T_FN(turn_by)(const T_STATE *st, T cos_h, T ax, T ay, T az, T turned[4]) {
    const T x = st->x, y = st->y, z = st->z, w = st->w;
    turned[0] = T_OP(mul_add)(cos_h, x, T_OP(mul_add)(w, ax, T_OP(neg_mul_add)(az, y, T_OP(mul)(ay, z))));
    turned[1] = T_OP(mul_add)(cos_h, y, T_OP(mul_add)(w, ay, T_OP(neg_mul_add)(ax, z, T_OP(mul)(az, x))));
    turned[2] = T_OP(mul_add)(cos_h, z, T_OP(mul_add)(w, az, T_OP(neg_mul_add)(ay, x, T_OP(mul)(ax, y))));
    turned[3] = T_OP(neg_mul_add)(ax, x, T_OP(neg_mul_add)(ay, y, T_OP(neg_mul_add)(az, z, T_OP(mul)(cos_h, w))));
}

/*
 * largest_divisor_quat: the unit quaternion of a rotation matrix r (row-major; the start's A
 * scaled to the Frobenius norm of a rotation) by rotation_to_quat's largest-divisor entries
 * (divisor_entries), scaled by a power of two (exact) and normalised by a square root and a
 * division: rotation_to_quat's math in path-identical operations (the conversion kernels keep
 * their own, with estimates and fused steps). Finite r gives a finite unit quaternion.
 */
JM_INLINE void T_FN(largest_divisor_quat)(const T r[9], T q[4]) {
    (void)T_FN(divisor_entries)(r, q);
    T_OP(scale_pow2)(q, 4);
    T inv_norm = T_OP(rsqrt_ieee)(T_FN(dot4)(q, q));
    for (int i = 0; i < 4; i++)
        q[i] = T_OP(mul)(q[i], inv_norm);
}

/*
 * reflection_spread: |A^T A - m I|_F / sqrt(m), m = tr(A^T A) / 3, for a[] (row-major, scaled):
 * ~2 |d| where d_i = sigma_i - mean(sigma) (sigma_i^2 = m + 2 sqrt(m) d_i + ...), so small
 * exactly where A is near a multiple of an orthogonal matrix; no SVD. Zero A gives 0.
 */
JM_INLINE T T_FN(reflection_spread)(const T a[9]) {
    T g[6]; /* A^T A: diagonal 00, 11, 22, then 01, 02, 12 */
    const int gi[6] = {0, 1, 2, 0, 0, 1}, gj[6] = {0, 1, 2, 1, 2, 2};
    for (int k = 0; k < 6; k++)
        g[k] = T_OP(mul_add)(a[gi[k]], a[gj[k]], T_OP(mul_add)(a[3 + gi[k]], a[3 + gj[k]], T_OP(mul)(a[6 + gi[k]], a[6 + gj[k]])));
    T mean = T_OP(mul)(T_OP(add)(T_OP(add)(g[0], g[1]), g[2]), T_OP(set1)(1.0 / 3.0));
    T d0 = T_OP(sub)(g[0], mean), d1 = T_OP(sub)(g[1], mean), d2 = T_OP(sub)(g[2], mean);
    T off = T_OP(mul_add)(g[3], g[3], T_OP(mul_add)(g[4], g[4], T_OP(mul)(g[5], g[5])));
    T deviation2 = T_OP(mul_add)(d0, d0, T_OP(mul_add)(d1, d1, T_OP(mul_add)(d2, d2, T_OP(add)(off, off))));
    return T_OP(sqrt)(T_OP(div)(deviation2, T_OP(max)(mean, T_OP(set1)(T_TINY))));
}

/*
 * may_be_near_reflection: a superset of the lanes whose reflection_spread is below the limit, from
 * ||A||_F^2 = norm2 and det A alone (a few operations: the start's hint): with m = norm2 / 3,
 * m^3 >= det^2 (the means of the sigma_i^2), m^3 - det^2 ~ spread^2 m^2 / 2, below
 * T_REFLECTION_HINT m^3 for spread up to twice the limit (m >= 1/3 in A's scale), above it
 * far from a multiple of an orthogonal matrix; float32 rounding (~1e-6 m^3) stays below it.
 */
JM_INLINE T_MASK T_FN(may_be_near_reflection)(T norm2, T det) {
    T m = T_OP(mul)(norm2, T_OP(set1)(1.0 / 3.0));
    T m3 = T_OP(mul)(T_OP(mul)(m, m), m);
    return T_OP(lt)(T_OP(neg_mul_add)(det, det, m3), T_OP(mul)(m3, T_OP(set1)(T_REFLECTION_HINT)));
}

/* reflection_spread_of_k: reflection_spread of the scaled A, from K (2 A as in rank_two) */
JM_INLINE T T_FN(reflection_spread_of_k)(const T_STATE *st) {
    const T a[9] = {T_OP(add)(st->kxx, st->kww), T_OP(sub)(st->kxy, st->kzw), T_OP(add)(st->kxz, st->kyw),
                    T_OP(add)(st->kxy, st->kzw), T_OP(add)(st->kyy, st->kww), T_OP(sub)(st->kyz, st->kxw),
                    T_OP(sub)(st->kxz, st->kyw), T_OP(add)(st->kyz, st->kxw), T_OP(add)(st->kzz, st->kww)};
    return T_OP(mul)(T_FN(reflection_spread)(a), T_OP(set1)(0.5));
}

/*
 * near_reflection_settled: the lanes where A is near a multiple of a reflection (spread, from
 * reflection_spread, below T_FLAT_LIMIT; the caller checks det A < 0) and R is already as good
 * as the bound needs, where the updates gain too little to ever stop by their step. With
 * sigma_i = s + d_i, f = s g(R) + (a term of size |d|): g <= 1 is maximal on a whole set F (a
 * best rotation times the half turns about the axes of the plane of the two largest), where
 * f >= f_max - 2 (sigma1 - sigma3): every rotation on F meets the documented bound. The d_i
 * tilt f on F by torques of ~|d| and curvatures of ~|d|, at whose rate every update crawls
 * (Newton's steps are the torque's rounding over ~|d|; the Ritz update's axis, from a power
 * iteration that cannot separate eigenvalues that close, turns off the stiff axis): the
 * near-reflections that ran to max_iter. Off F the curvature is the stiff one, ~|N|_F / 2, so
 * the gain a full Newton step would still make is at most ~|tau|^2 / |N|_F. Settled: f > 0
 * (near F, not at the far minimum, where the torque vanishes too) and |tau|^2 <= |N|_F spread
 * / SETTLED_GAIN_SPREADS + (tol |N|_F)^2, i.e. what is left to gain is far below the bound
 * (docs/design/extraction.md#near-reflections).
 */
JM_INLINE T_MASK T_FN(near_reflection_settled)(T spread, const T c[6], const T torque[3], T f, T tol) {
    T c_off = T_OP(mul_add)(c[3], c[3], T_OP(mul_add)(c[4], c[4], T_OP(mul)(c[5], c[5])));
    T n2 = T_OP(mul_add)(c[0], c[0], T_OP(mul_add)(c[1], c[1], T_OP(mul_add)(c[2], c[2], T_OP(add)(c_off, c_off))));
    T norm = T_OP(sqrt)(n2);
    T tol_norm = T_OP(mul)(tol, norm);
    T allowed = T_OP(mul_add)(T_OP(mul)(norm, spread), T_OP(set1)(1.0 / SETTLED_GAIN_SPREADS), T_OP(mul)(tol_norm, tol_norm));
    T tau2 = T_OP(mul_add)(torque[0], torque[0], T_OP(mul_add)(torque[1], torque[1], T_OP(mul)(torque[2], torque[2])));
    return T_MASK_OP(and)(T_OP(gt)(f, T_OP(set1)(0.0)), T_OP(ge)(allowed, tau2));
}

/*
 * stiff_newton_step: the Newton step about the stiff axis alone, for near-reflections (see
 * near_reflection_settled): N's two lowest eigenvectors (lowest_axis twice; it need not separate
 * them, any two orthogonal vectors of their plane do) lifted by |N|_F and the torque's components
 * along them dropped. It settles R onto the near-flat set (quadratically) without moving along
 * it: Newton's full step there is the torque's rounding over the small curvatures, a jump along
 * the set's tangent that leaves the curved set by its square (float64 ended 6e-9 below the bound
 * at singular values 1e-11 apart). Returns the lanes whose lifted N passed newton_step's test: N's
 * stiff eigenvalue -4 c cos(phi) > 0 (phi the angle to a best rotation composed with the
 * reflection), so the step goes up to the set and never down to the far minimum.
 */
JM_INLINE T_MASK T_FN(stiff_newton_step)(const T c[6], const T torque[3], T f, T tol, T eps[3], T *eps2) {
    T lifted[6], across[3], axis[3], norm, unused_norm, unused_tol;
    for (int i = 0; i < 6; i++)
        lifted[i] = c[i];
    for (int i = 0; i < 3; i++)
        across[i] = torque[i];
    T_FN(lowest_axis)(lifted, axis, &norm);
    T_FN(lift_axis)(lifted, across, axis, norm);
    T_FN(lowest_axis)(lifted, axis, &unused_norm);
    T_FN(lift_axis)(lifted, across, axis, norm);
    return T_FN(newton_step)(lifted, across, f, tol, eps, eps2, &unused_tol);
}

/*
 * near_reflection_update: Newton's update of the near-reflection lanes (det A < 0 with
 * reflection_spread of K below T_FLAT_LIMIT; the block's near_reflections hint says whether to look):
 * the step about the stiff axis alone (stiff_newton_step) until
 * they lie on their near-flat set of best rotations, then they stop without updating
 * (near_reflection_settled); lanes whose stiff step is refused keep the update chosen before.
 * Out of line: the hot loop of every other matrix stays as it was. turn is extract.c's, one per
 * lane type (their polynomials differ), defined after this header.
 */
JM_INLINE void T_FN(turn)(const T_STATE *st, T ox, T oy, T oz, T theta2, T turned[4]);

typedef struct {
    T curvature[6], torque[3], f, tol; /* the step's, in */
    T next[4];                         /* the candidate quaternion, in and out */
    T_MASK update, go_on;              /* in and out */
} T_FN(near_reflection_step);

static JM_COLD void T_FN(near_reflection_update)(const T_STATE *st, T_FN(near_reflection_step) *r) {
    const T *curvature = r->curvature, *torque = r->torque, f = r->f, tol = r->tol;
    T *next = r->next;
    T_MASK *update = &r->update, *go_on = &r->go_on;
    T spread = T_FN(reflection_spread_of_k)(st);
    T_MASK near_reflection = T_MASK_OP(and)(T_MASK_OP(and)(st->active, st->mirrored),
                                            T_OP(lt)(spread, T_OP(set1)(T_FLAT_LIMIT)));
    if (!T_MASK_OP(any)(near_reflection))
        return;
    T_MASK settled =
        T_MASK_OP(and)(near_reflection, T_FN(near_reflection_settled)(spread, curvature, torque, f, tol));
    T e[3], e2, stiff_q[4];
    T_MASK stiff = T_MASK_OP(and)(T_MASK_OP(and)(near_reflection, T_MASK_OP(not)(settled)),
                                  T_FN(stiff_newton_step)(curvature, torque, f, tol, e, &e2));
    if (T_MASK_OP(any)(stiff)) {
        T_FN(turn)(st, e[0], e[1], e[2], e2, stiff_q);
        for (int i = 0; i < 4; i++)
            next[i] = T_OP(select)(stiff, stiff_q[i], next[i]);
    }
    *update = T_MASK_OP(or)(T_MASK_OP(and)(*update, T_MASK_OP(not)(settled)), stiff);
    *go_on = T_MASK_OP(or)(T_MASK_OP(and)(*go_on, T_MASK_OP(not)(settled)), stiff);
}
