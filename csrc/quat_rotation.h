/*
 * quat_rotation.h - the rotation matrix of a quaternion from its squares and the largest-divisor
 * candidates of a quaternion from a rotation matrix, written once for float32 and float64 lanes: a
 * type-generic template (no include guard) that quat_math.h includes once per lane type after
 * defining
 *
 *   T           the lane vector type (vf, vd)          T_MASK      its mask type (vmask, vdmask)
 *   T_OP(op)    the ISA operation on it (v_op, vd_op)  T_FN(name)  the function name (name, name_f64)
 *   T_MASK_OP(op) the ISA operation on masks (m_op, md_op)
 *   T_NEAR_UNIT how far |q|^2 may be from 1 for is_near_unit: 2^-12 (float32), 2^-28 (float64),
 *               each covering every quaternion normalised in its type
 *
 * and undefine them after.
 */

/* squares: the squares of q's components in sq, and |q|^2 = xx + (yy + (zz + ww)) */
JM_INLINE T T_FN(squares)(const T q[4], T sq[4]) {
    for (int i = 0; i < 4; i++)
        sq[i] = T_OP(mul)(q[i], q[i]);
    return T_OP(add)(sq[0], T_OP(add)(sq[1], T_OP(add)(sq[2], sq[3])));
}

/* is_near_unit: whether | |q|^2 - 1 | < T_NEAR_UNIT (false for NaN) */
JM_INLINE T_MASK T_FN(is_near_unit)(T norm2) {
    return T_OP(lt)(T_OP(abs)(T_OP(sub)(norm2, T_OP(set1)(1.0))), T_OP(set1)(T_NEAR_UNIT));
}

/* products: the six products of different components of q = (x, y, z, w), for rotation_from_squares:
   xy, xz, yz, wx, wy, wz */
JM_INLINE void T_FN(products)(const T q[4], T p[6]) {
    const T x = q[0], y = q[1], z = q[2], w = q[3];
    p[0] = T_OP(mul)(x, y), p[1] = T_OP(mul)(x, z), p[2] = T_OP(mul)(y, z);
    p[3] = T_OP(mul)(w, x), p[4] = T_OP(mul)(w, y), p[5] = T_OP(mul)(w, z);
}

/* rotation_from_squares: R of q from its squares sq, its products p (products) and h = 1 / |q|^2
   (or its stand-in): the diagonal as a difference of squares, each element scaled once by h or
   2 h (quat_to_rotation) */
JM_INLINE void T_FN(rotation_from_squares)(const T sq[4], const T p[6], T h, T r[9]) {
    const T xx = sq[0], yy = sq[1], zz = sq[2], ww = sq[3];
    const T xy = p[0], xz = p[1], yz = p[2], wx = p[3], wy = p[4], wz = p[5];
    T s = T_OP(add)(h, h);
    r[0] = T_OP(mul)(T_OP(sub)(T_OP(add)(ww, xx), T_OP(add)(yy, zz)), h);
    r[1] = T_OP(mul)(T_OP(sub)(xy, wz), s);
    r[2] = T_OP(mul)(T_OP(add)(xz, wy), s);
    r[3] = T_OP(mul)(T_OP(add)(xy, wz), s);
    r[4] = T_OP(mul)(T_OP(sub)(T_OP(add)(ww, yy), T_OP(add)(xx, zz)), h);
    r[5] = T_OP(mul)(T_OP(sub)(yz, wx), s);
    r[6] = T_OP(mul)(T_OP(sub)(xz, wy), s);
    r[7] = T_OP(mul)(T_OP(add)(yz, wx), s);
    r[8] = T_OP(mul)(T_OP(sub)(T_OP(add)(ww, zz), T_OP(add)(xx, yy)), h);
}

/*
 * divisor_entries: the largest-divisor step of rotation_to_quat: the four candidates
 * 4x^2 = 1 + r0 - r4 - r8, ..., 4w^2 = 1 + r0 + r4 + r8, the case per lane (the largest; ties to
 * the lowest of x, y, z, w) and the four entries 4 * component * (divisor component) into e[];
 * returns the chosen candidate t (4 * divisor component^2).
 */
JM_INLINE T T_FN(divisor_entries)(const T r[9], T e[4]) {
    T one = T_OP(set1)(1.0);
    T t_x = T_OP(add)(T_OP(sub)(one, r[4]), T_OP(sub)(r[0], r[8]));
    T t_y = T_OP(add)(T_OP(sub)(one, r[0]), T_OP(sub)(r[4], r[8]));
    T t_z = T_OP(add)(T_OP(sub)(one, r[0]), T_OP(sub)(r[8], r[4]));
    T t_w = T_OP(add)(T_OP(add)(one, r[0]), T_OP(add)(r[4], r[8]));
    T xy_sum = T_OP(add)(r[1], r[3]), xz_sum = T_OP(add)(r[2], r[6]), yz_sum = T_OP(add)(r[5], r[7]);
    T wx_diff = T_OP(sub)(r[7], r[5]), wy_diff = T_OP(sub)(r[2], r[6]), wz_diff = T_OP(sub)(r[3], r[1]);

    /* case masks: x if t_x is the largest, else y if t_y >= t_z, t_w, else z if t_z >= t_w */
    T_MASK is_x = T_MASK_OP(and)(T_OP(ge)(t_x, t_y), T_MASK_OP(and)(T_OP(ge)(t_x, t_z), T_OP(ge)(t_x, t_w)));
    T_MASK is_y = T_MASK_OP(and)(T_MASK_OP(not)(is_x), T_MASK_OP(and)(T_OP(ge)(t_y, t_z), T_OP(ge)(t_y, t_w)));
    T_MASK is_z = T_MASK_OP(and)(T_MASK_OP(not)(T_MASK_OP(or)(is_x, is_y)), T_OP(ge)(t_z, t_w));

    /*        case x    case y    case z    case w */
    /* x:     t_x       xy_sum    xz_sum    wx_diff */
    /* y:     xy_sum    t_y       yz_sum    wy_diff */
    /* z:     xz_sum    yz_sum    t_z       wz_diff */
    /* w:     wx_diff   wy_diff   wz_diff   t_w     */
    T t = T_OP(select)(is_x, t_x, T_OP(select)(is_y, t_y, T_OP(select)(is_z, t_z, t_w)));
    e[0] = T_OP(select)(is_x, t_x, T_OP(select)(is_y, xy_sum, T_OP(select)(is_z, xz_sum, wx_diff)));
    e[1] = T_OP(select)(is_x, xy_sum, T_OP(select)(is_y, t_y, T_OP(select)(is_z, yz_sum, wy_diff)));
    e[2] = T_OP(select)(is_x, xz_sum, T_OP(select)(is_y, yz_sum, T_OP(select)(is_z, t_z, wz_diff)));
    e[3] = T_OP(select)(is_x, wx_diff, T_OP(select)(is_y, wy_diff, T_OP(select)(is_z, wz_diff, t_w)));
    return t;
}
