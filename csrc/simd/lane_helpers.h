/*
 * simd/lane_helpers.h - the helpers that float32 and float64 lanes share, written once: simd/
 * common.h includes this file twice, after defining
 *   JM_T                the lane's C type (float, double) and JM_T_BITS its unsigned twin
 *   JM_T_EXPONENT_MASK  the bits of JM_T's exponent field
 *   JM_T_MIN_NORMAL     JM_T's smallest normal number (FLT_MIN, DBL_MIN)
 *   JM_T_VEC            the vector of JM_T (vf, vd), JM_T_OP(name) its op `name` (v_name, vd_name)
 *   JM_T_FROM_BITS      the name of the bit-pattern helper defined here
 * and undefines them at the end. Defines JM_T_FROM_BITS, JM_T_OP(abs), JM_T_OP(negate),
 * JM_T_OP(scale_pow2), JM_T_OP(pow2_inverse) and the path-identical arithmetic JM_T_OP(mul_add), JM_T_OP(neg_mul_add),
 * JM_T_OP(rcp_ieee), JM_T_OP(rsqrt_ieee): jm_float_from_bits v_abs v_negate v_scale_pow2 v_pow2_inverse v_mul_add
 * v_neg_mul_add v_rcp_ieee v_rsqrt_ieee, and their float64 twins with the prefix vd_.
 */
#ifndef JM_SIMD_COMMON_H
#error "include simd/common.h, which includes this template"
#endif

/* a JM_T from its IEEE-754 bit pattern (sign masks and the like) */
JM_INLINE JM_T JM_T_FROM_BITS(JM_T_BITS bits) {
    JM_T f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* |a|: every bit but the sign */
JM_INLINE JM_T_VEC JM_T_OP(abs)(JM_T_VEC a) {
    return JM_T_OP(and)(a, JM_T_OP(set1)(JM_T_FROM_BITS((JM_T_BITS)-1 >> 1)));
}

/* -a, also for zeros and NaNs (the sign bit flipped) */
JM_INLINE JM_T_VEC JM_T_OP(negate)(JM_T_VEC a) { return JM_T_OP(xor)(a, JM_T_OP(set1)((JM_T)-0.0)); }

/*
 * scale_pow2: multiplies v[0..n) (a quaternion, a matrix: any group of lanes normalised together)
 * by the power of two that puts the largest |v[i]| in [1, 2), and returns that largest |v[i]| as
 * it was. Exact: powers of two change no mantissa bit, so anything computed from the result is
 * the same for every scale of the input (the smallest denormal to the largest finite), and sums
 * of squares can neither overflow nor underflow. A subnormal largest is first lifted by 2^64
 * (exactly) so that its exponent can be read; the scale 2^-e of the exponent-only value 2^e comes
 * from flipping its exponent bits (E -> E_max - E is 2^(1 - e), exact for every normal 2^e) and
 * halving: no division. All zero: unchanged (the scale is capped at 1 / JM_T_MIN_NORMAL, the
 * largest a normal input needs, and 0 times it is 0). An inf: NaN (inf * 0); a NaN stays NaN
 * (max may drop it from the returned largest).
 */
JM_INLINE JM_T_VEC JM_T_OP(scale_pow2)(JM_T_VEC *v, int n) {
    JM_T_VEC largest = JM_T_OP(abs)(v[0]);
    for (int i = 1; i < n; i++)
        largest = JM_T_OP(max)(largest, JM_T_OP(abs)(v[i]));
    const JM_T_VEC exponent_bits = JM_T_OP(set1)(JM_T_FROM_BITS(JM_T_EXPONENT_MASK));
    JM_T_VEC lift = JM_T_OP(select)(JM_T_OP(ge)(largest, JM_T_OP(set1)(JM_T_MIN_NORMAL)), JM_T_OP(set1)((JM_T)1.0),
                                    JM_T_OP(set1)((JM_T)0x1p64));
    JM_T_VEC power = JM_T_OP(and)(JM_T_OP(mul)(largest, lift), exponent_bits); /* 2^floor(log2), 0 for 0, inf for inf */
    JM_T_VEC scale = JM_T_OP(min)(JM_T_OP(mul)(JM_T_OP(xor)(power, exponent_bits), JM_T_OP(set1)((JM_T)0.5)),
                                  JM_T_OP(set1)((JM_T)1.0 / JM_T_MIN_NORMAL));
    for (int i = 0; i < n; i++)
        v[i] = JM_T_OP(mul)(JM_T_OP(mul)(v[i], lift), scale);
    return largest;
}

/* pow2_inverse: 2^-e for a in [2^e, 2^(e+1)), a positive and normal (exact: a's exponent bits
   flipped, E -> E_max - E is 2^(1 - e), then halved; the same bits on every path) */
JM_INLINE JM_T_VEC JM_T_OP(pow2_inverse)(JM_T_VEC a) {
    const JM_T_VEC exponent_bits = JM_T_OP(set1)(JM_T_FROM_BITS(JM_T_EXPONENT_MASK));
    return JM_T_OP(mul)(JM_T_OP(xor)(JM_T_OP(and)(a, exponent_bits), exponent_bits), JM_T_OP(set1)((JM_T)0.5));
}

/*
 * Path-identical arithmetic: the same IEEE-754 operations, each correctly rounded, in the same
 * order on every path, so that a kernel written with them (and the primitives add, sub, mul, div,
 * sqrt, min, max, compares, selects) gives the same bits on scalar, SSE, AVX2, AVX-512 and NEON.
 *   mul_add(a, b, c)      a*b + c, the product rounded before the sum (fmadd fuses on AVX2,
 *                         AVX-512 and NEON, not on SSE or the scalar path; the build's
 *                         -ffp-contract=off keeps the compiler from fusing these)
 *   neg_mul_add(a, b, c)  c - a*b, likewise
 *   rcp_ieee(a)           1 / a by a division (the paths' reciprocal estimates differ)
 *   rsqrt_ieee(a)         1 / sqrt(a) by a square root and a division
 */
JM_INLINE JM_T_VEC JM_T_OP(mul_add)(JM_T_VEC a, JM_T_VEC b, JM_T_VEC c) {
    return JM_T_OP(add)(JM_T_OP(mul)(a, b), c);
}
JM_INLINE JM_T_VEC JM_T_OP(neg_mul_add)(JM_T_VEC a, JM_T_VEC b, JM_T_VEC c) {
    return JM_T_OP(sub)(c, JM_T_OP(mul)(a, b));
}
JM_INLINE JM_T_VEC JM_T_OP(rcp_ieee)(JM_T_VEC a) { return JM_T_OP(div)(JM_T_OP(set1)((JM_T)1.0), a); }
JM_INLINE JM_T_VEC JM_T_OP(rsqrt_ieee)(JM_T_VEC a) {
    return JM_T_OP(div)(JM_T_OP(set1)((JM_T)1.0), JM_T_OP(sqrt)(a));
}

#undef JM_T
#undef JM_T_BITS
#undef JM_T_EXPONENT_MASK
#undef JM_T_MIN_NORMAL
#undef JM_T_VEC
#undef JM_T_OP
#undef JM_T_FROM_BITS
