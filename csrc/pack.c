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
 * in [-1, 1] and stored as round((c + 1) * M / 2) with M = 2^bits - 1 = 1023, ties to even.
 * The 64-bit code (bits = 20) is the same with 20-bit fields: index in bits 61..60, the fields
 * in 59..40, 39..20, 19..0; bits 63..62 are zero (and ignored when unpacking).
 *
 * Decoding is centred: c = code * (2 / M) - 1, the index component is 1, and the result is
 * normalised. (Subtracting M/2 + 1/2 instead, as some decoders do, is biased by half a step.)
 *
 * Every path rounds alike: the reciprocal of the largest component is an IEEE division and
 * the rest are single multiplies and adds (no FMA contraction, see setup.py), so all paths
 * produce bit-identical codes. Zero or non-finite quaternions are counted and reported (the
 * codes written for them are unspecified); every code decodes to a unit quaternion.
 * Accuracy over 10^7 random unit quaternions on every path (benchmarks/bench_pack.py
 * --accuracy): 32-bit worst |q . q'| 0.99999857, worst rotation error 0.19 degrees, mean 0.078;
 * 64-bit worst 1.95e-4 degrees, mean 7.7e-5; decoded norms within 1.6e-7 of 1.
 */
#include "jointmath.h"
#include "simd.h"

/*
 * The fields of JM_W quaternions: index of the largest |component| and the other three
 * quantised to [0, 2 * half_max]. Returns the lanes holding a zero or non-finite quaternion.
 */
JM_INLINE vmask quantize(vf x, vf y, vf z, vf w, float half_max, vi *index, vi *first, vi *second, vi *third) {
    vf ax = v_abs(x), ay = v_abs(y), az = v_abs(z), aw = v_abs(w);
    vf largest_magnitude = v_max(v_max(ax, ay), v_max(az, aw));
    vmask is_x = v_ge(ax, largest_magnitude);
    vmask is_y = m_and(m_not(is_x), v_ge(ay, largest_magnitude));
    vmask is_z = m_and(m_not(m_or(is_x, is_y)), v_ge(az, largest_magnitude));
    vmask is_w = m_not(m_or(m_or(is_x, is_y), is_z));

    /* the other three in increasing index order: (y z w), (x z w), (x y w), (x y z) */
    vf c0 = v_select(is_x, y, x);
    vf c1 = v_select(m_or(is_x, is_y), z, y);
    vf c2 = v_select(is_w, z, w);
    vf largest = v_select(is_x, x, v_select(is_y, y, v_select(is_z, z, w)));
    vf inv_largest = v_div(v_set1(1.0f), largest);

    vf scale = v_set1(half_max), one = v_set1(1.0f), zero = v_set1(0.0f), top = v_set1(2.0f * half_max);
    /* (c + 1) * M/2, clamped: c = a * (1/d) may pass +-1 by an ulp when |a| = |d| */
    *first = v_round_int(v_min(v_max(v_mul(v_add(v_mul(c0, inv_largest), one), scale), zero), top));
    *second = v_round_int(v_min(v_max(v_mul(v_add(v_mul(c1, inv_largest), one), scale), zero), top));
    *third = v_round_int(v_min(v_max(v_mul(v_add(v_mul(c2, inv_largest), one), scale), zero), top));
    *index = vi_select(is_x, vi_set1(0), vi_select(is_y, vi_set1(1), vi_select(is_z, vi_set1(2), vi_set1(3))));

    /* valid: every |component| finite (NaN fails the comparison) and the largest non-zero */
    vf inf = v_set1(INFINITY);
    vmask finite = m_and(m_and(v_lt(ax, inf), v_lt(ay, inf)), m_and(v_lt(az, inf), v_lt(aw, inf)));
    return m_not(m_and(finite, v_gt(largest_magnitude, zero)));
}

/* The unit quaternion of decoded fields: 1 at `index`, c0 c1 c2 elsewhere, normalised. */
JM_INLINE void rebuild(vi index, vf c0, vf c1, vf c2, vf q[4]) {
    vmask at_x = vi_eq(index, vi_set1(0)), at_y = vi_eq(index, vi_set1(1));
    vmask at_z = vi_eq(index, vi_set1(2)), at_w = vi_eq(index, vi_set1(3));
    vf one = v_set1(1.0f);
    /* the finely refined rsqrt (about 1 ulp), not the one-step one: the result is unit to
       ~1.5e-7, which keeps |q . q'| above the format's bound on every path */
    vf inv_norm = v_rsqrt_fine(v_add(one, v_add(v_mul(c0, c0), v_add(v_mul(c1, c1), v_mul(c2, c2)))));
    q[0] = v_mul(v_select(at_x, one, c0), inv_norm);
    q[1] = v_mul(v_select(at_x, c0, v_select(at_y, one, c1)), inv_norm);
    q[2] = v_mul(v_select(m_or(at_x, at_y), c1, v_select(at_z, one, c2)), inv_norm);
    q[3] = v_mul(v_select(at_w, one, c2), inv_norm);
}

/* c = code * (2 / M) - 1 */
JM_INLINE vf dequantize(vi field, float two_over_max) {
    return v_sub(v_mul(v_from_int(field), v_set1(two_over_max)), v_set1(1.0f));
}

/* ---------------------------------------------------------------------- 32-bit -- */

JM_INLINE vmask pack32_block(const char *src, char *dst) {
    vf q[4];
    vi index, c0, c1, c2;
    v_load_records(src, 16, 1, q);
    vmask invalid = quantize(q[0], q[1], q[2], q[3], 511.5f, &index, &c0, &c1, &c2);
    v_store_u32(dst, vi_or(vi_or(vi_shl(index, 30), vi_shl(c0, 20)), vi_or(vi_shl(c1, 10), c2)));
    return invalid;
}

JM_INLINE void unpack32_block(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds) {
    (void)ss, (void)ds; /* contiguous: 4-byte codes in, 16-byte quaternions out */
    vi code = v_load_u32(src), ten_bits = vi_set1(1023);
    vf q[4];
    rebuild(vi_shr(code, 30), dequantize(vi_and(vi_shr(code, 20), ten_bits), 2.0f / 1023),
            dequantize(vi_and(vi_shr(code, 10), ten_bits), 2.0f / 1023), dequantize(vi_and(code, ten_bits), 2.0f / 1023), q);
    v_store_records(dst, 16, 1, q);
}

/* ---------------------------------------------------------------------- 64-bit -- */

/* The four fields leave the vector unit in record order; the 64-bit words are assembled in C. */
JM_INLINE vmask pack64_block(const char *src, char *dst) {
    vf q[4];
    vi index, c0, c1, c2;
    uint32_t fields[4][JM_W];
    v_load_records(src, 16, 1, q);
    vmask invalid = quantize(q[0], q[1], q[2], q[3], 524287.5f, &index, &c0, &c1, &c2);
    v_store_u32((char *)fields[0], index);
    v_store_u32((char *)fields[1], c0);
    v_store_u32((char *)fields[2], c1);
    v_store_u32((char *)fields[3], c2);
    for (int k = 0; k < JM_W; k++) {
        uint64_t code = (uint64_t)fields[0][k] << 60 | (uint64_t)fields[1][k] << 40 | (uint64_t)fields[2][k] << 20 |
                        fields[3][k];
        memcpy(dst + 8 * k, &code, sizeof code);
    }
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
    const float step = 2.0f / 1048575;
    rebuild(v_load_u32((const char *)fields[0]), dequantize(v_load_u32((const char *)fields[1]), step),
            dequantize(v_load_u32((const char *)fields[2]), step), dequantize(v_load_u32((const char *)fields[3]), step),
            q);
    v_store_records(dst, 16, 1, q);
}

/* ---------------------------------------------------------------------- drivers -- */

/* Same test as quantize, one quaternion: zero or non-finite. */
static int is_invalid(const char *record) {
    float q[4], largest = 0.0f;
    memcpy(q, record, sizeof q);
    for (int k = 0; k < 4; k++) {
        float a = fabsf(q[k]);
        if (!(a < INFINITY))
            return 1;
        largest = a > largest ? a : largest;
    }
    return !(largest > 0.0f);
}

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

size_t JM_FN(jm_pack_quats32)(const float *q, void *codes, size_t n, size_t *first_invalid) {
    return pack_all(pack32_block, (const char *)q, (char *)codes, 4, n, first_invalid);
}

size_t JM_FN(jm_pack_quats64)(const float *q, void *codes, size_t n, size_t *first_invalid) {
    return pack_all(pack64_block, (const char *)q, (char *)codes, 8, n, first_invalid);
}

void JM_FN(jm_unpack_quats32)(const void *codes, float *q, size_t n) {
    JM_FOR_BLOCKS(unpack32_block, (const char *)codes, 4, 4, (char *)q, 16, 16, n);
}

void JM_FN(jm_unpack_quats64)(const void *codes, float *q, size_t n) {
    JM_FOR_BLOCKS(unpack64_block, (const char *)codes, 8, 8, (char *)q, 16, 16, n);
}
