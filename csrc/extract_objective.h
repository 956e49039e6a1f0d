/*
 * extract_objective.h - the objective of the rotation extraction (extract.c) and its derivatives
 * from Davenport's matrix K, written once for float32 and float64 lanes: a type-generic template
 * that extract.c includes once per lane type (no include guard), after defining
 *
 *   T           the lane vector type (vf, vd)          T_MASK      its mask type (vmask, vdmask)
 *   T_OP(op)    the ISA operation on it (v_op, vd_op)  T_FN(name)  the function name (name, name_f64)
 *   T_STATE     the state struct (extract_state, extract_state_f64: the same fields)
 *   T_NEGATE(x) -x as that half always computed it: float32 0 - x, float64 the sign flipped (they
 *               differ only for a zero x: +0 against -0)
 *   T_RANK_TWO  rank_two's threshold: float32 2^-40, float64 2^-80 (above each type's rounding of
 *               a rank-one A's cofactors)
 *
 * and undefines them after. Every name below is T_FN(...), so both expansions live in one unit.
 * Multiply-adds are T_OP(mul_add) and T_OP(neg_mul_add), rounded twice on every path (never the
 * fused v_fmadd): the same bits on every path (docs/design/extraction.md#counts-across-paths).
 */

/*
 * rank_two: whether A has rank >= 2 (numerically: ||adj A||_F^2 = s1^2 s2^2 + s1^2 s3^2 +
 * s2^2 s3^2 above T_RANK_TWO ||A||_F^4, float32 about s2 > 2^-20 s1), so that the maximum is
 * unique. Rank <= 1 lanes only ever take Mueller's update, which turns R by the shortest arc and
 * leaves the directions A does not determine where the start put them (a lower threshold let
 * Mueller's updates run out on nearly rank-one matrices: docs/design/extraction.md). A from K:
 * 2 A = [kxx + kww, kxy - kzw, kxz + kyw; kxy + kzw, kyy + kww, kyz - kxw; kxz - kyw, kyz + kxw,
 * kzz + kww] (exact but for the factor).
 */
JM_INLINE T_MASK T_FN(rank_two)(const T_STATE *st) {
    const T a[9] = {T_OP(add)(st->kxx, st->kww), T_OP(sub)(st->kxy, st->kzw), T_OP(add)(st->kxz, st->kyw),
                    T_OP(add)(st->kxy, st->kzw), T_OP(add)(st->kyy, st->kww), T_OP(sub)(st->kyz, st->kxw),
                    T_OP(sub)(st->kxz, st->kyw), T_OP(add)(st->kyz, st->kxw), T_OP(add)(st->kzz, st->kww)};
    T norm2 = T_OP(mul)(a[0], a[0]);
    for (int i = 1; i < 9; i++)
        norm2 = T_OP(mul_add)(a[i], a[i], norm2);
    T cofactors2 = T_OP(set1)(0.0);
    for (int i = 0; i < 3; i++) {
        const T *r = &a[3 * ((i + 1) % 3)], *s = &a[3 * ((i + 2) % 3)];
        for (int j = 0; j < 3; j++) {
            const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            T minor = T_OP(neg_mul_add)(r[j2], s[j1], T_OP(mul)(r[j1], s[j2]));
            cofactors2 = T_OP(mul_add)(minor, minor, cofactors2);
        }
    }
    return T_OP(gt)(cofactors2, T_OP(mul)(T_OP(set1)(T_RANK_TWO), T_OP(mul)(norm2, norm2)));
}

/* k_times: p = K v for a 4-vector v of lanes. */
JM_INLINE void T_FN(k_times)(const T_STATE *st, T vx, T vy, T vz, T vw, T p[4]) {
    p[0] = T_OP(mul_add)(st->kxx, vx, T_OP(mul_add)(st->kxy, vy, T_OP(mul_add)(st->kxz, vz, T_OP(mul)(st->kxw, vw))));
    p[1] = T_OP(mul_add)(st->kxy, vx, T_OP(mul_add)(st->kyy, vy, T_OP(mul_add)(st->kyz, vz, T_OP(mul)(st->kyw, vw))));
    p[2] = T_OP(mul_add)(st->kxz, vx, T_OP(mul_add)(st->kyz, vy, T_OP(mul_add)(st->kzz, vz, T_OP(mul)(st->kzw, vw))));
    p[3] = T_OP(mul_add)(st->kxw, vx, T_OP(mul_add)(st->kyw, vy, T_OP(mul_add)(st->kzw, vz, T_OP(mul)(st->kww, vw))));
}

/*
 * tangent_basis: the tangent basis at q = (v, w): b_i = (e_i, 0) * q, the quaternion of R turned
 * by pi about axis i (b_i . q = 0, |b_i| = |q|): b_x = (w, -z, y, -x), b_y = (z, w, -x, -y),
 * b_z = (-y, x, w, -z). Turning R by a small angle eps (space frame) moves q to
 * q + sum_i eps_i b_i / 2.
 */
JM_INLINE void T_FN(tangent_basis)(const T_STATE *st, T b[3][4]) {
    const T x = st->x, y = st->y, z = st->z, w = st->w;
    b[0][0] = w, b[0][1] = T_NEGATE(z), b[0][2] = y, b[0][3] = T_NEGATE(x);
    b[1][0] = z, b[1][1] = w, b[1][2] = T_NEGATE(x), b[1][3] = T_NEGATE(y);
    b[2][0] = T_NEGATE(y), b[2][1] = x, b[2][2] = w, b[2][3] = T_NEGATE(z);
}

/*
 * extract_gradient: the objective f = trace(R^T A) = q . K q and its derivatives at q, all scaled
 * by |q|^2 (the updates are ratios, so the drift of |q| changes nothing; q is normalised at the
 * end):
 *   f(eps) = f + tau . eps - eps^T H eps / 2 + O(eps^3),   R(eps) = exp(eps) R,
 * tau_i = b_i . K q = (sum_i r_i x a_i)_i (the torque of Mueller et al.; from p = K q:
 * w p_v - p_w v + v x p_v), and the curvature H = f I - (R A^T + A R^T) / 2 = (f I - G) / 2
 * with G_ij = b_i . K b_j. H is positive semidefinite at the maximum (its eigenvalues are the
 * sums of pairs of the singular values, signed by det A) and has a negative eigenvalue at every
 * other stationary point. extract_curvature: curvature[] holds N = 2 H: xx, yy, zz, xy, xz, yz.
 */
JM_INLINE void T_FN(extract_gradient)(const T_STATE *st, T torque[3], T *f) {
    const T x = st->x, y = st->y, z = st->z, w = st->w;
    T p[4];
    T_FN(k_times)(st, x, y, z, w, p);
    torque[0] = T_OP(neg_mul_add)(p[3], x, T_OP(mul_add)(w, p[0], T_OP(neg_mul_add)(z, p[1], T_OP(mul)(y, p[2]))));
    torque[1] = T_OP(neg_mul_add)(p[3], y, T_OP(mul_add)(w, p[1], T_OP(neg_mul_add)(x, p[2], T_OP(mul)(z, p[0]))));
    torque[2] = T_OP(neg_mul_add)(p[3], z, T_OP(mul_add)(w, p[2], T_OP(neg_mul_add)(y, p[0], T_OP(mul)(x, p[1]))));
    *f = T_OP(mul_add)(x, p[0], T_OP(mul_add)(y, p[1], T_OP(mul_add)(z, p[2], T_OP(mul)(w, p[3]))));
}

JM_INLINE T T_FN(dot4)(const T a[4], const T b[4]) {
    return T_OP(mul_add)(a[0], b[0], T_OP(mul_add)(a[1], b[1], T_OP(mul_add)(a[2], b[2], T_OP(mul)(a[3], b[3]))));
}

JM_INLINE void T_FN(extract_curvature)(const T_STATE *st, T f, T curvature[6]) {
    T b[3][4], kb[3][4];
    T_FN(tangent_basis)(st, b);
    for (int i = 0; i < 3; i++)
        T_FN(k_times)(st, b[i][0], b[i][1], b[i][2], b[i][3], kb[i]);
    curvature[0] = T_OP(sub)(f, T_FN(dot4)(b[0], kb[0]));
    curvature[1] = T_OP(sub)(f, T_FN(dot4)(b[1], kb[1]));
    curvature[2] = T_OP(sub)(f, T_FN(dot4)(b[2], kb[2]));
    curvature[3] = T_NEGATE(T_FN(dot4)(b[0], kb[1]));
    curvature[4] = T_NEGATE(T_FN(dot4)(b[0], kb[2]));
    curvature[5] = T_NEGATE(T_FN(dot4)(b[1], kb[2]));
}
