/*
 * pack.c - unit quaternions packed into 32 bits (or 64), "smallest three" style.
 *
 * Bit layout, 32-bit code (bits = 10), one uint32 per quaternion:
 *
 *   31..30  index (0..3 = x, y, z, w) of the component of largest magnitude, lowest on ties
 *   29..20  the first of the other three components, in increasing index order
 *   19..10  the second
 *    9..0   the third
 *
 * The quaternion is divided by its largest component, which becomes +1 (so q and -q, the same
 * rotation, pack alike, and so does any non-zero multiple of q); each other component c is then
 * in [-1, 1] and stored mid-tread, so that 0 is a level:
 *
 *   code = round(c * M) + M,  M = 2^(bits - 1) - 1 = 511  (codes 0 .. 1022; 1023 is never written)
 *
 * where round is to nearest, ties to even, of the exact real c * M of the float inputs. The
 * 64-bit code (bits = 20, M = 524287) is the same with 20-bit fields: index in bits 61..60, the
 * fields in 59..40, 39..20, 19..0; bits 63..62 are zero (and ignored when unpacking).
 *
 * Decoding: c = (code - M) / M, with the unwritten code 2^bits - 1 clamped to +1; the index
 * component is 1 and the result is normalised. A component that was 0 comes back exactly 0
 * (the identity quaternion round-trips exactly).
 *
 * Every path produces bit-identical codes because every code is exact (see quantize);
 * the inputs may have any finite scale, denormals included. Zero or non-finite quaternions are
 * counted and reported (the codes written for them are unspecified); every code decodes to a
 * unit quaternion. The 32-bit format's bound, every input: |q . q'| >= 1 - 3 / (2 * 1022^2) =
 * 0.99999856 for unit q and q' normalised (half a step in each field), a rotation error of at
 * most 0.19421 degrees. The float32 q' is unit to 1.7e-7 (every 32-bit code, every path: 1.65e-7),
 * and |q . q'| of q' as it is may lie that much lower (0.99999846 where all three fields round by
 * nearly half a step: no float32 rounding of q' avoids it, a correctly rounded one falls below
 * too). Accuracy over 10^7 random unit quaternions on every path (benchmarks/bench_pack.py
 * --accuracy): 32-bit worst |q . q'| 0.99999859, worst rotation error 0.189 degrees, mean 0.078;
 * 64-bit worst 1.87e-4 degrees, mean 7.7e-5; decoded norms within 1.5e-7 of 1; zero components
 * exact.
 */
#include "jointmath.h"
#include "simd/common.h"

/*
 * One field exactly, where its estimate is too close to a rounding boundary to decide: round(v)
 * + M for v = o * M / l, l > 0 the largest magnitude and o an other component with the largest
 * one's sign divided out (|o| <= l), from an estimate (field - M) + rest of v within 1/4, field an
 * integer and |rest| <= 1/2. b = field - M + 1/2 with the sign of rest is a half-integer with
 * |v - b| < 1, so v rounds to b - 1/2 or b + 1/2 by the sign of v - b, which is that of
 * 2 M o - 2 b l, exactly (v_diff_of_products: 2M and 2b have at most 21 bits, o and l 24, so both
 * products are exact in double). When v == b exactly (a tie), rint(b) takes the even neighbour.
 * The code thus does not depend on how the estimate was rounded.
 */
JM_INLINE vi exact_field(vf o, vf l, vi field, vf rest, float max_level) {
    vf half = v_set1(0.5f), zero = v_set1(0.0f);
    vf b = v_add(v_sub(v_from_int(field), v_set1(max_level)), v_xor(half, v_and(rest, v_set1(-0.0f))));
    vf v_minus_b = v_diff_of_products(o, v_set1(2.0f * max_level), v_add(b, b), l);
    vf step = v_select(v_gt(v_minus_b, zero), half, v_select(v_lt(v_minus_b, zero), v_set1(-0.5f), zero));
    return vi_add(v_round_int(v_add(b, step)), vi_set1((int32_t)max_level));
}

/*
 * The fields of JM_W quaternions: index of the largest |component| and the other three as
 * round(c * M) + M, c = other / largest exactly rounded (ties to even). Returns the lanes holding
 * a zero or non-finite quaternion.
 *
 * Estimate first: each field as an integer `field` and `rest` (|rest| <= 1/2), field - M + rest
 * within TAU of v = o * M / l (l the largest magnitude). Where |rest| <= 1/2 - TAU, v rounds as
 * the estimate does (no tie is that far off) and `field` is the code; only when some lane is
 * closer do the block's fields go through exact_field. Every path thus writes the same codes.
 *
 * 10-bit fields, in float: with an exact power-of-two `scale` that keeps l * scale within
 * [2^-85, 2^64] (any finite l, denormals included), m = fl(fl(1 / (l * scale)) * M) and
 * s + M = fl(o * scale * m + M) carry at most 3 * 2^-24 M + 2^-24 (2M) of rounding (plus
 * 2^-150 * 2^85 M where o * scale is denormal), below TAU = 2^-21 M = 2.4e-4: one block in ~70
 * is checked exactly on AVX-512 (random data). 20-bit fields, in double, where that TAU would be
 * 0.25 and nearly every block would be checked: q = o * fl(M / l) (v_round_quotient, any finite
 * inputs) is within 2^-52 M < 2^-33 of v, TAU = 2^-24: fewer than one AVX-512 block in 10^5,
 * and every one with an exact tie.
 */
JM_INLINE vmask quantize(vf x, vf y, vf z, vf w, float max_level, vi *index, vi field[3]) {
    vf ax = v_abs(x), ay = v_abs(y), az = v_abs(z), aw = v_abs(w);
    vf largest_magnitude = v_max(v_max(ax, ay), v_max(az, aw));
    vmask is_x = v_ge(ax, largest_magnitude);
    vmask is_y = m_and(m_not(is_x), v_ge(ay, largest_magnitude));
    vmask is_z = m_and(m_not(m_or(is_x, is_y)), v_ge(az, largest_magnitude));
    vmask is_w = m_not(m_or(m_or(is_x, is_y), is_z));
    *index = vi_select(is_x, vi_set1(0), vi_select(is_y, vi_set1(1), vi_select(is_z, vi_set1(2), vi_set1(3))));

    /* the other three in increasing index order: (y z w), (x z w), (x y w), (x y z), each with
       the largest component's sign divided out (a sign flip, exact) */
    vf largest = v_select(is_x, x, v_select(is_y, y, v_select(is_z, z, w)));
    vf largest_sign = v_and(largest, v_set1(-0.0f));
    vf other[3] = {v_xor(v_select(is_x, y, x), largest_sign), v_xor(v_select(m_or(is_x, is_y), z, y), largest_sign),
                   v_xor(v_select(is_w, z, w), largest_sign)};

    vf level_m = v_set1(max_level), rest[3];
    const int in_float = max_level < 0x1p10f; /* a constant: each call site keeps one branch */
    vf near_half = v_set1(0.5f - (in_float ? max_level * 0x1p-21f : 0x1p-24f));
    vmask near[3];
    if (in_float) {
        vf scale = v_select(v_lt(largest_magnitude, v_set1(0x1p-64f)), v_set1(0x1p64f),
                            v_select(v_gt(largest_magnitude, v_set1(0x1p64f)), v_set1(0x1p-64f), v_set1(1.0f)));
        vf m_over_l = v_mul(v_div(v_set1(1.0f), v_mul(largest_magnitude, scale)), level_m);
        for (int k = 0; k < 3; k++) {
            vf s_plus_m = v_fmadd(v_mul(other[k], scale), m_over_l, level_m);
            field[k] = v_round_int(s_plus_m);
            rest[k] = v_sub(s_plus_m, v_from_int(field[k]));
        }
    } else {
        for (int k = 0; k < 3; k++)
            field[k] = vi_add(v_round_quotient(other[k], level_m, largest_magnitude, &rest[k]),
                              vi_set1((int32_t)max_level));
    }
    for (int k = 0; k < 3; k++)
        near[k] = v_gt(v_abs(rest[k]), near_half);
    if (m_any(m_or(m_or(near[0], near[1]), near[2])))
        for (int k = 0; k < 3; k++)
            field[k] = exact_field(other[k], largest_magnitude, field[k], rest[k], max_level);

    /* valid: every |component| finite (NaN fails the comparison) and the largest non-zero */
    vf inf = v_set1(INFINITY), zero = v_set1(0.0f);
    vmask finite = m_and(m_and(v_lt(ax, inf), v_lt(ay, inf)), m_and(v_lt(az, inf), v_lt(aw, inf)));
    return m_not(m_and(finite, v_gt(largest_magnitude, zero)));
}

/* The unit quaternion of decoded fields: 1 at `index`, c0 c1 c2 elsewhere, normalised. */
JM_INLINE void rebuild(vi index, vf c0, vf c1, vf c2, vf q[4]) {
    vmask at_x = vi_eq(index, vi_set1(0)), at_y = vi_eq(index, vi_set1(1));
    vmask at_z = vi_eq(index, vi_set1(2)), at_w = vi_eq(index, vi_set1(3));
    vf one = v_set1(1.0f);
    /* the finely refined rsqrt (about 1 ulp), not the one-step one: every 32-bit code decodes
       to | |q| - 1 | <= 1.65e-7 on every path (all of them measured) */
    vf inv_norm = v_rsqrt_fine(v_add(one, v_add(v_mul(c0, c0), v_add(v_mul(c1, c1), v_mul(c2, c2)))));
    q[0] = v_mul(v_select(at_x, one, c0), inv_norm);
    q[1] = v_mul(v_select(at_x, c0, v_select(at_y, one, c1)), inv_norm);
    q[2] = v_mul(v_select(m_or(at_x, at_y), c1, v_select(at_z, one, c2)), inv_norm);
    q[3] = v_mul(v_select(at_w, one, c2), inv_norm);
}

/* c = min((code - M) * fl(1/M), 1): code - M is exact, so M gives exactly 0, 0 and 2M give -1
   and +1 exactly (checked for both M), the never-written 2^bits - 1 clamps to +1, and the
   rest are within 1 ulp of (code - M) / M */
JM_INLINE vf dequantize(vi field, float max_level) {
    return v_min(v_mul(v_sub(v_from_int(field), v_set1(max_level)), v_set1(1.0f / max_level)), v_set1(1.0f));
}

/* ---------------------------------------------------------------------- 32-bit -- */

JM_INLINE vmask pack32_block(const char *src, char *dst) {
    vf q[4];
    vi index, field[3];
    v_load_records(src, 16, 1, q);
    vmask invalid = quantize(q[0], q[1], q[2], q[3], 511.0f, &index, field);
    v_store_u32(dst, vi_or(vi_or(vi_shl(index, 30), vi_shl(field[0], 20)), vi_or(vi_shl(field[1], 10), field[2])));
    return invalid;
}

JM_INLINE void unpack32_block(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds) {
    (void)ss, (void)ds; /* contiguous: 4-byte codes in, 16-byte quaternions out */
    vi code = v_load_u32(src), ten_bits = vi_set1(1023);
    vf q[4];
    rebuild(vi_shr(code, 30), dequantize(vi_and(vi_shr(code, 20), ten_bits), 511.0f),
            dequantize(vi_and(vi_shr(code, 10), ten_bits), 511.0f), dequantize(vi_and(code, ten_bits), 511.0f), q);
    v_store_records(dst, 16, 1, q);
}

/* ---------------------------------------------------------------------- 64-bit -- */

/* The 64-bit words as two 32-bit halves: index << 28 | field 0 << 8 | the top 8 bits of field 1,
   and its low 12 bits << 20 | field 2. */
JM_INLINE vmask pack64_block(const char *src, char *dst) {
    vf q[4];
    vi index, field[3];
    v_load_records(src, 16, 1, q);
    vmask invalid = quantize(q[0], q[1], q[2], q[3], 524287.0f, &index, field);
    v_store_u64(dst, vi_or(vi_shl(field[1], 20), field[2]),
                vi_or(vi_or(vi_shl(index, 28), vi_shl(field[0], 8)), vi_shr(field[1], 12)));
    return invalid;
}

JM_INLINE void unpack64_block(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds) {
    (void)ss, (void)ds; /* contiguous: 8-byte codes in, 16-byte quaternions out */
    uint32_t fields[4][JM_W];
    for (int k = 0; k < JM_W; k++) {
        uint64_t code;
        memcpy(&code, src + 8 * k, sizeof code);
        fields[0][k] = (uint32_t)(code >> 60) & 3;
        fields[1][k] = (uint32_t)(code >> 40) & 0xFFFFF;
        fields[2][k] = (uint32_t)(code >> 20) & 0xFFFFF;
        fields[3][k] = (uint32_t)code & 0xFFFFF;
    }
    vf q[4];
    const float max_level = 524287.0f;
    rebuild(v_load_u32((const char *)fields[0]), dequantize(v_load_u32((const char *)fields[1]), max_level),
            dequantize(v_load_u32((const char *)fields[2]), max_level),
            dequantize(v_load_u32((const char *)fields[3]), max_level), q);
    v_store_records(dst, 16, 1, q);
}

/* ---------------------------------------------------------------------- drivers -- */

/* is_invalid (float[4]) and is_invalid_f64 (double[4]): the test of quantize / quantize_f64 on one
   quaternion record: zero or non-finite. One definition, expanded per element type. */
#define DEFINE_IS_INVALID(name, scalar, abs_fn)       \
    static int name(const char *record) {             \
        scalar q[4], largest = 0;                     \
        memcpy(q, record, sizeof q);                  \
        for (int k = 0; k < 4; k++) {                 \
            scalar a = abs_fn(q[k]);                  \
            if (!(a < INFINITY))                      \
                return 1;                             \
            largest = a > largest ? a : largest;      \
        }                                             \
        return !(largest > 0);                        \
    }
DEFINE_IS_INVALID(is_invalid, float, fabsf)
DEFINE_IS_INVALID(is_invalid_f64, double, fabs)
#undef DEFINE_IS_INVALID

/*
 * Packs n contiguous float[4] into codes of code_size bytes, JM_W at a time; the last n % JM_W
 * go through a buffer padded with identity quaternions. Returns how many quaternions were
 * invalid and sets *first_invalid to the first one's index (n when none).
 */
JM_INLINE size_t pack_all(vmask (*block)(const char *, char *), const char *src, char *dst, size_t code_size,
                          size_t n, size_t *first_invalid) {
    size_t invalid = 0, i = 0;
    *first_invalid = n;
    for (; i + JM_W <= n; i += JM_W) {
        int count = m_count(block(src + 16 * i, dst + code_size * i));
        if (count) {
            invalid += (size_t)count;
            for (size_t k = i; k < i + JM_W && *first_invalid == n; k++)
                if (is_invalid(src + 16 * k))
                    *first_invalid = k;
        }
    }
    if (i < n) {
        float staged[JM_W][4];
        char codes[JM_W * 8];
        for (int k = 0; k < JM_W; k++)
            staged[k][0] = staged[k][1] = staged[k][2] = 0.0f, staged[k][3] = 1.0f;
        memcpy(staged, src + 16 * i, 16 * (n - i));
        int count = m_count(block((const char *)staged, codes));
        memcpy(dst + code_size * i, codes, code_size * (n - i));
        if (count) {
            invalid += (size_t)count;
            for (size_t k = i; k < n && *first_invalid == n; k++)
                if (is_invalid(src + 16 * k))
                    *first_invalid = k;
        }
    }
    return invalid;
}

/* jm_pack_quats32 / jm_pack_quats64: n contiguous float[4] quaternions (any finite non-zero scale,
   q and -q alike) to 32- or 64-bit codes of the layout above, bit-identical on every path (32
   bits: rotation error <= 0.19421 degrees). Returns how many were zero or non-finite (their codes
   unspecified) and sets *first_invalid to the first one's index (n when none). */
size_t JM_FN(jm_pack_quats32)(const float *q, void *codes, size_t n, size_t *first_invalid) {
    return pack_all(pack32_block, (const char *)q, (char *)codes, 4, n, first_invalid);
}

size_t JM_FN(jm_pack_quats64)(const float *q, void *codes, size_t n, size_t *first_invalid) {
    return pack_all(pack64_block, (const char *)q, (char *)codes, 8, n, first_invalid);
}

/* jm_unpack_quats32 / jm_unpack_quats64: n codes -> unit float[4] quaternions (norm within 1.7e-7
   of 1; zero components exact; every code decodes). */
void JM_FN(jm_unpack_quats32)(const void *codes, float *q, size_t n) {
    JM_FOR_BLOCKS(unpack32_block, (const char *)codes, 4, 4, (char *)q, 16, 16, n);
}

void JM_FN(jm_unpack_quats64)(const void *codes, float *q, size_t n) {
    JM_FOR_BLOCKS(unpack64_block, (const char *)codes, 8, 8, (char *)q, 16, 16, n);
}

/* ------------------------------------------------- signed 16-bit normalized -- */

/*
 * One block of JM_W quaternions to int16[4] each, glTF 2.0's signed 16-bit normalized values:
 * c = round(f * 32767), round to nearest, ties to even, of the exact product (f * 32767 needs 39
 * bits: v_round_quotient computes it in double, exactly, so every path writes the same codes).
 * Components beyond [-1, 1] clamp to +-32767 (glTF decodes c as max(c / 32767, -1)). Returns
 * the lanes holding a zero or non-finite quaternion (their codes unspecified, but in range).
 */
JM_INLINE vmask snorm16_block(const char *src, char *dst) {
    vf q[4];
    v_load_records(src, 16, 1, q);
    vf one = v_set1(1.0f), minus_one = v_set1(-1.0f), level = v_set1(32767.0f), rest;
    int32_t codes[4][JM_W]; /* each component's codes, records in order (v_store_u32) */
    for (int k = 0; k < 4; k++)  /* v_min of a NaN gives `one`: every lane converts to a defined integer */
        v_store_u32((char *)codes[k], v_round_quotient(v_max(v_min(q[k], one), minus_one), level, one, &rest));
    for (int i = 0; i < JM_W; i++)
        for (int k = 0; k < 4; k++) {
            int16_t code = (int16_t)codes[k][i];
            memcpy(dst + 8 * i + 2 * k, &code, sizeof code);
        }
    vf ax = v_abs(q[0]), ay = v_abs(q[1]), az = v_abs(q[2]), aw = v_abs(q[3]), inf = v_set1(INFINITY);
    vmask finite = m_and(m_and(v_lt(ax, inf), v_lt(ay, inf)), m_and(v_lt(az, inf), v_lt(aw, inf)));
    return m_not(m_and(finite, v_gt(v_max(v_max(ax, ay), v_max(az, aw)), v_set1(0.0f))));
}

/* jm_pack_snorm16: n contiguous float[4] quaternions (unit: glTF's rotation samplers hold unit
   quaternions, and no normalisation happens here) to n int16[4], c = round(f * 32767) exactly
   (ties to even), bit-identical on every path. Bound: each component within half a step of f, so
   |q - c / 32767| <= 1 / 32767 for the four together and the rotation of c / 32767 within
   2 asin(1 / 32767) = 6.1e-5 rad of a unit q's. Returns how many were zero or non-finite and sets
   *first_invalid to the first one's index (n when none). */
size_t JM_FN(jm_pack_snorm16)(const float *q, void *codes, size_t n, size_t *first_invalid) {
    return pack_all(snorm16_block, (const char *)q, (char *)codes, 8, n, first_invalid);
}

/* ------------------------------------------------------------------- float64 -- */

/*
 * The exact sign of p0 + p1 + p2 + p3 (doubles, sums below the overflow range): Shewchuk's
 * grow-expansion by Knuth's two-sum (exact in round-to-nearest, with or without underflow; no
 * fused operations) turns the sum into a non-overlapping expansion, whose sign is that of its
 * largest non-zero component. Returns -1, 0 or +1 in each lane.
 */
JM_INLINE void two_sum_f64(vd a, vd b, vd *sum, vd *err) {
    vd s = vd_add(a, b), b_part = vd_sub(s, a);
    *err = vd_add(vd_sub(a, vd_sub(s, b_part)), vd_sub(b, b_part));
    *sum = s;
}

JM_INLINE vd sign_of_sum4_f64(vd p0, vd p1, vd p2, vd p3) {
    vd e[4], q;
    two_sum_f64(p1, p0, &q, &e[0]);
    e[1] = q; /* the expansion e[0], e[1] of p0 + p1 */
    two_sum_f64(p2, e[0], &q, &e[0]);
    two_sum_f64(q, e[1], &q, &e[1]);
    e[2] = q; /* of p0 + p1 + p2 */
    two_sum_f64(p3, e[0], &q, &e[0]);
    two_sum_f64(q, e[1], &q, &e[1]);
    two_sum_f64(q, e[2], &q, &e[2]);
    e[3] = q; /* of all four, increasing magnitude */
    const vd zero = vd_set1(0.0);
    vd sign = zero;
    for (int i = 0; i < 4; i++) /* the largest non-zero component decides */
        sign = vd_select(vd_gt(e[i], zero), vd_set1(1.0), vd_select(vd_lt(e[i], zero), vd_set1(-1.0), sign));
    return sign;
}

/* where a float64 field estimate is closer than this to a half-integer it is decided exactly */
#define NEAR_TIE_F64 0x1p-30

/* the estimates o * fl(M / l) of the three fields (scaled[0] = l, scaled[1..3] = the o): their
   roundings field[k], rest[k] = estimate - field[k] (exact) and where |rest| is near 1/2 */
JM_INLINE void estimate_fields_f64(const vd scaled[4], vd level_m, vd field[3], vd rest[3], vdmask near[3]) {
    vd m_over_l = vd_div(level_m, scaled[0]);
    for (int k = 0; k < 3; k++) {
        vd estimate = vd_mul(scaled[k + 1], m_over_l);
        field[k] = vd_round(estimate);
        rest[k] = vd_sub(estimate, field[k]);
        near[k] = vd_gt(vd_abs(rest[k]), vd_set1(0.5 - NEAR_TIE_F64));
    }
}

/*
 * quantize for JM_WD float64 quaternions: the index of the largest |component| (lowest on ties)
 * and the three fields round(v) + M, v = o * M / l exactly rounded to nearest, ties to even (l
 * the largest magnitude, o an other component with the largest one's sign divided out), as
 * integer-valued doubles. Returns the lanes holding a zero or non-finite quaternion (their fields
 * are set to M, so that every lane converts to an integer).
 *
 The estimate o * fl(M / l) is within 2^-52 M <= 2^-33 of v where l is in [2^-1000, 2^1000]
 * (neither quotient nor product overflows, and a product that underflows is a v below 2^-3, which
 * rounds to 0 either way), as it is for l and the o multiplied by the power of two that puts l in
 * [1, 2) (vd_scale_pow2: exact for every finite l, denormals included; an o below 2^-1022 l may
 * round, but its v is below 2^-1000 and rounds to 0 either way). So the unscaled estimate runs
 * first and only a block with an l outside that range, or a field near a tie, is scaled and
 * estimated again (scaling that costs a quarter of the block's time otherwise). The estimate's
 * rounding is v's unless it lies within NEAR_TIE_F64 of a
 * half-integer b; such blocks (ties, and about one field in 10^9 otherwise) decide by the exact
 * sign of o 2M - 2b l, with 2M = 2^bits - 2: o 2^bits and 2o are exact, and 2b l is exact as
 * 2b lh + 2b (l - lh), lh = l rounded to 31 fraction bits (2b has at most 21 bits), so the sign
 * is that of four exact doubles (sign_of_sum4_f64). A tie (sign 0) rounds b to even.
 */
JM_INLINE vdmask quantize_f64(vd x, vd y, vd z, vd w, double max_level, vd *index, vd field[3]) {
    vd ax = vd_abs(x), ay = vd_abs(y), az = vd_abs(z), aw = vd_abs(w);
    vd largest_magnitude = vd_max(vd_max(ax, ay), vd_max(az, aw));
    vdmask is_x = vd_ge(ax, largest_magnitude);
    vdmask is_y = md_and(md_not(is_x), vd_ge(ay, largest_magnitude));
    vdmask is_z = md_and(md_not(md_or(is_x, is_y)), vd_ge(az, largest_magnitude));
    vdmask is_w = md_not(md_or(md_or(is_x, is_y), is_z));
    *index = vd_select(is_x, vd_set1(0.0), vd_select(is_y, vd_set1(1.0), vd_select(is_z, vd_set1(2.0), vd_set1(3.0))));

    vd largest = vd_select(is_x, x, vd_select(is_y, y, vd_select(is_z, z, w)));
    vd largest_sign = vd_and(largest, vd_set1(-0.0));
    /* scaled[0] = l, scaled[1..3] = the other three in increasing index order, sign divided out */
    vd scaled[4] = {largest_magnitude, vd_xor(vd_select(is_x, y, x), largest_sign),
                    vd_xor(vd_select(md_or(is_x, is_y), z, y), largest_sign), vd_xor(vd_select(is_w, z, w), largest_sign)};
    const vd level_m = vd_set1(max_level);
    vd rest[3];
    vdmask near[3];
    estimate_fields_f64(scaled, level_m, field, rest, near); /* unscaled: the scaled estimates, for l in range */
    /* l outside [2^-1000, 2^1000] but finite and non-zero (zero, inf and NaN lanes are invalid) */
    vdmask out_of_range = md_and(md_not(md_and(vd_ge(largest_magnitude, vd_set1(0x1p-1000)),
                                               vd_ge(vd_set1(0x1p1000), largest_magnitude))),
                                 md_and(vd_gt(largest_magnitude, vd_set1(0.0)), vd_lt(largest_magnitude, vd_set1(INFINITY))));
    if (JM_UNLIKELY(md_any(md_or(md_or(md_or(near[0], near[1]), near[2]), out_of_range)))) {
        vd_scale_pow2(scaled, 4);
        estimate_fields_f64(scaled, level_m, field, rest, near);
        const vd l = scaled[0];
        vd lh = vd_mul(vd_round(vd_mul(l, vd_set1(0x1p31))), vd_set1(0x1p-31)), ll = vd_sub(l, lh);
        for (int k = 0; k < 3; k++) {
            vd o = scaled[k + 1];
            vd b = vd_add(field[k], vd_xor(vd_set1(0.5), vd_and(rest[k], vd_set1(-0.0)))); /* half-integer */
            vd two_b = vd_add(b, b);
            vd sign = sign_of_sum4_f64(vd_mul(o, vd_set1(2.0 * max_level + 2.0)), vd_negate(vd_add(o, o)),
                                       vd_negate(vd_mul(two_b, lh)), vd_negate(vd_mul(two_b, ll)));
            vd exact = vd_round(vd_add(b, vd_mul(sign, vd_set1(0.5)))); /* b itself on a tie: to even */
            field[k] = vd_select(near[k], exact, field[k]);
        }
    }

    /* valid: every |component| finite (NaN fails the comparison) and the largest non-zero */
    vd inf = vd_set1(INFINITY);
    vdmask finite = md_and(md_and(vd_lt(ax, inf), vd_lt(ay, inf)), md_and(vd_lt(az, inf), vd_lt(aw, inf)));
    vdmask invalid = md_not(md_and(finite, vd_gt(largest_magnitude, vd_set1(0.0))));
    for (int k = 0; k < 3; k++)
        field[k] = vd_add(vd_select(invalid, vd_set1(0.0), field[k]), level_m);
    return invalid;
}

/* 32-bit codes of JM_WD double[4] records: index 2^30 + field0 2^20 + field1 2^10 + field2, exact
   in a double (below 2^32) */
JM_INLINE vdmask pack32_block_f64(const char *src, char *dst) {
    vd q[4], index, field[3];
    vd_load_quads(src, 32, &q[0], &q[1], &q[2], &q[3]);
    vdmask invalid = quantize_f64(q[0], q[1], q[2], q[3], 511.0, &index, field);
    vd code = vd_fmadd(index, vd_set1(0x1p30), vd_fmadd(field[0], vd_set1(0x1p20), vd_fmadd(field[1], vd_set1(0x1p10), field[2])));
    vd_store_u32(dst, code);
    return invalid;
}

/* 64-bit codes as two exact 32-bit halves: index 2^28 + field0 2^8 + the top 8 bits of field1,
   and its low 12 bits 2^20 + field2 (top = floor(field1 / 2^12): the rounding of
   field1 / 2^12 - 1/2 + 2^-13, never a tie) */
JM_INLINE vdmask pack64_block_f64(const char *src, char *dst) {
    vd q[4], index, field[3];
    vd_load_quads(src, 32, &q[0], &q[1], &q[2], &q[3]);
    vdmask invalid = quantize_f64(q[0], q[1], q[2], q[3], 524287.0, &index, field);
    vd top = vd_round(vd_fmadd(field[1], vd_set1(0x1p-12), vd_set1(-0.5 + 0x1p-13)));
    vd low = vd_fnmadd(top, vd_set1(0x1p12), field[1]);
    vd hi = vd_fmadd(index, vd_set1(0x1p28), vd_fmadd(field[0], vd_set1(0x1p8), top));
    vd_store_u64_halves(dst, vd_fmadd(low, vd_set1(0x1p20), field[2]), hi);
    return invalid;
}

/* pack_all for n contiguous double[4], JM_WD at a time; blocks with an invalid lane count them
   one by one. */
JM_INLINE size_t pack_all_f64(vdmask (*block)(const char *, char *), const char *src, char *dst, size_t code_size,
                              size_t n, size_t *first_invalid) {
    size_t invalid = 0, i = 0;
    *first_invalid = n;
    for (; i < n; i += JM_WD) {
        const size_t count = n - i < JM_WD ? n - i : JM_WD;
        vdmask block_invalid;
        if (count == JM_WD) {
            block_invalid = block(src + 32 * i, dst + code_size * i);
        } else { /* the tail through a buffer padded with identity quaternions */
            double staged[JM_WD][4];
            char codes[JM_WD * 8];
            for (int k = 0; k < JM_WD; k++)
                staged[k][0] = staged[k][1] = staged[k][2] = 0.0, staged[k][3] = 1.0;
            memcpy(staged, src + 32 * i, 32 * count);
            block_invalid = block((const char *)staged, codes);
            memcpy(dst + code_size * i, codes, code_size * count);
        }
        if (JM_UNLIKELY(md_any(block_invalid)))
            for (size_t k = i; k < i + count; k++)
                if (is_invalid_f64(src + 32 * k)) {
                    invalid++;
                    if (*first_invalid == n)
                        *first_invalid = k;
                }
    }
    return invalid;
}

/*
 * jm_pack_quats32_f64 / jm_pack_quats64_f64: n contiguous double[4] quaternions to the codes of
 * the layout above, exactly as defined there from the real quotient of the given doubles: any
 * finite non-zero scale (denormals to DBL_MAX), q and -q alike, bit-identical on every path, and
 * a float32 quaternion widened to double gives the float32 packer's code. Returns how many
 * quaternions were zero or non-finite (their codes are unspecified) and sets *first_invalid to
 * the first one's index (n when none).
 */
size_t JM_FN(jm_pack_quats32_f64)(const double *q, void *codes, size_t n, size_t *first_invalid) {
    return pack_all_f64(pack32_block_f64, (const char *)q, (char *)codes, 4, n, first_invalid);
}

size_t JM_FN(jm_pack_quats64_f64)(const double *q, void *codes, size_t n, size_t *first_invalid) {
    return pack_all_f64(pack64_block_f64, (const char *)q, (char *)codes, 8, n, first_invalid);
}
