/*
 * quat_rotation.h - the rotation matrix of a quaternion from its squares, written once for
 * float32 and float64 lanes: a type-generic template (no include guard) that quat_math.h
 * (float32) and convert.c (float64) include after defining
 *
 *   T           the lane vector type (vf, vd)          T_MASK      its mask type (vmask, vdmask)
 *   T_OP(op)    the ISA operation on it (v_op, vd_op)  T_FN(name)  the function name (name, name_f64)
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
