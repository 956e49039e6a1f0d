/*
 * codec.c - the compressed-clip decoder: Rice-coded integer streams back to integers, and the
 * integers of a clip's tracks back to JOINT_QUAT records (docs/formats.md, "Compressed clip").
 *
 * Compiled once per ISA like every family: the encoder certifies its error bound on what this
 * code decodes, so every path must decode the same floats bit for bit. It does: the streams are
 * integer C, and the records are float32 conversions, multiplies, adds, divisions and square
 * roots, each rounded once (the build turns off contraction into FMA), in the same order on
 * every path, JM_W frames at a time through the SIMD layer (one at a time on the scalar path).
 */
#include <math.h>
#include <string.h>

#include "jointmath.h"
#include "simd/common.h"

#if defined(__GNUC__) || defined(__clang__)
#define JM_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define JM_LIKELY(x) (x)
#endif

/* The 8 bytes at p as a big-endian word. */
JM_INLINE uint64_t load_be64(const uint8_t *p) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w;
    memcpy(&w, p, 8);
    return __builtin_bswap64(w);
#else
    uint64_t w = 0;
    for (int k = 0; k < 8; k++)
        w = (w << 8) | p[k];
    return w;
#endif
}

/* The 64 bits of data[0..nbytes) from bit `pos` on, MSB first; bytes past the end read as zeros
   (the caller compares the bits consumed with the stream's size when it is done). */
JM_INLINE uint64_t peek_bits(const uint8_t *data, size_t nbytes, uint64_t pos) {
    const size_t byte = (size_t)(pos >> 3);
    uint64_t w = 0;
    if (JM_LIKELY(byte + 8 <= nbytes))
        w = load_be64(data + byte);
    else {
        for (size_t k = 0; k < 8; k++)
            w = (w << 8) | (byte + k < nbytes ? data[byte + k] : 0u);
    }
    return w << (pos & 7); /* >= 57 valid bits: a value takes at most 56 */
}

JM_INLINE unsigned leading_zeros(uint64_t w) { /* of a word that is not 0 */
#if defined(_MSC_VER) && !defined(__clang__)
    unsigned long index;
    _BitScanReverse64(&index, w);
    return 63u - (unsigned)index;
#else
    return (unsigned)__builtin_clzll(w);
#endif
}

/* An escaped residual code: where it goes, and its zigzag code u. */
typedef struct {
    int32_t *at;
    uint32_t u;
} escaped_code;

/*
 * One Rice code at bit *pos of data[0..size) with parameter k (0..JM_CODEC_MAX_K), as the
 * unary part q << 24 | the k bits (q < JM_CODEC_ESCAPE, k <= 24: both fit), which
 * residuals_of_codes turns into the residual; an escaped code (its u in 32 bits) is appended to
 * *escapes with its place `at` instead (rare: off the common path). checked: 0 when the caller
 * knows that the 8 bytes from *pos on lie within the data.
 */
JM_INLINE uint32_t read_code(const uint8_t *data, size_t size, uint64_t *pos, unsigned k, int checked,
                             escaped_code **escapes, int32_t *at) {
    const uint64_t w = checked ? peek_bits(data, size, *pos) : load_be64(data + (*pos >> 3)) << (*pos & 7);
    /* the leading ones, at most JM_CODEC_ESCAPE: the bit after them counts as the zero */
    const unsigned ones = leading_zeros(~w | (uint64_t)1 << (63 - JM_CODEC_ESCAPE));
    if (JM_LIKELY(ones < JM_CODEC_ESCAPE)) {
        *pos += ones + 1 + k;
        return (uint32_t)ones << 24 | (uint32_t)((w << ones) >> (63 - k)); /* the zero, then k bits */
    }
    (*escapes)->at = at;
    (*escapes)->u = (uint32_t)((w << JM_CODEC_ESCAPE) >> 32);
    ++*escapes;
    *pos += JM_CODEC_ESCAPE + 32;
    return 0;
}

/* The zigzag code u's signed residual. */
JM_INLINE int32_t unzigzag(uint32_t u) { return (int32_t)(u >> 1) ^ -(int32_t)(u & 1); }

/* The residuals of len codes of read_code at parameter k, in place (vectorized: k is the block's). */
JM_INLINE void residuals_of_codes(int32_t *x, size_t len, unsigned k) {
    for (size_t i = 0; i < len; i++) {
        const uint32_t code = (uint32_t)x[i];
        x[i] = unzigzag((code >> 24) << k | (code & 0xffffffu));
    }
}

/* The bytes a block of one stream takes at most: its header, and every value escaped. */
#define JM_CODEC_MAX_BLOCK_BYTES ((7 + JM_CODEC_BLOCK * (JM_CODEC_ESCAPE + 32) + 7) / 8)

/* One Rice stream's reading state: its bit position, last three values, and block header. */
typedef struct {
    uint64_t pos;
    uint32_t x1, x2, x3; /* int32 as uint32 (wrapping arithmetic) */
    unsigned order, k;   /* of the block being read */
} stream_state;

/* jm_codec_decode's scratch per stream: its state, its place in a list, a block of values */
typedef char scratch_fits[sizeof(stream_state) + sizeof(size_t) <= 64 ? 1 : -1];

/*
 * The codes of one block of `len` values of JM_CODEC_LANES streams of data[0..size) (stream l:
 * at bit pos[l] of the data, parameter k[l], codes to out[l][0..len)), interleaved value by
 * value so that their independent bit readers overlap in the CPU (one stream alone is a chain
 * of dependent loads); the streams' positions counted from the data's start, so that they share
 * one pointer. checked, escapes: as read_code.
 */
JM_INLINE void read_codes(const uint8_t *data, size_t size, uint64_t *pos, const unsigned *k, size_t len,
                          int32_t *const *out, int checked, escaped_code **escapes) {
    for (size_t i = 0; i < len; i++) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 6 /* JM_CODEC_LANES (a pragma does not expand macros) */
#endif
        for (size_t l = 0; l < JM_CODEC_LANES; l++)
            out[l][i] = (int32_t)read_code(data, size, &pos[l], k[l], checked, escapes, &out[l][i]);
    }
}

/*
 * The block's values in place of its residuals x[0..len) (int32), predicted with order `order`
 * from the stream's three values before (s->x1..x3, updated). The stream's first values
 * (first: this is its first block) use the orders they have room for. Returns nonzero for a
 * block with a value beyond +-JM_CODEC_MAX_VALUE (the stream is refused), tested as: every
 * residual within +-8 JM_CODEC_MAX_VALUE (the most a prediction, whose coefficients' magnitudes
 * add up to at most 7, can miss a value in range by), then every value in range. While every
 * value before is in range, so is the exact prediction within +-7 JM_CODEC_MAX_VALUE, and with
 * such a residual the value within +-15 JM_CODEC_MAX_VALUE < 2^31: the int32 arithmetic (uint32,
 * wrapping) is exact up to the first value out of range, which the tests then see.
 */
JM_INLINE int predict_block(int32_t *x, size_t len, unsigned order, int first, stream_state *s) {
    uint32_t bad = 0;
    for (size_t i = 0; i < len; i++) /* vectorized: the residuals' bound */
        bad |= (uint32_t)x[i] + 8u * JM_CODEC_MAX_VALUE > 16u * JM_CODEC_MAX_VALUE;
    uint32_t x1 = s->x1, x2 = s->x2, x3 = s->x3;
    size_t i = 0;
#define JM_PREDICT(expression)                   \
    do {                                         \
        const uint32_t v = (expression);         \
        x[i] = (int32_t)v;                       \
        x3 = x2, x2 = x1, x1 = v;                \
    } while (0)
    if (first) /* the orders the stream's first values have room for */
        for (; i < len && i < 3; i++) {
            const unsigned p = i < order ? (unsigned)i : order;
            const uint32_t e = (uint32_t)x[i];
            JM_PREDICT(p == 0 ? e : p == 1 ? x1 + e : p == 2 ? 2 * x1 - x2 + e : 3 * x1 - 3 * x2 + x3 + e);
        }
    switch (order) { /* a loop per order; the residual's terms first, off the chain through x1 */
    case 0:
        for (; i < len; i++)
            JM_PREDICT((uint32_t)x[i]);
        break;
    case 1:
        for (; i < len; i++)
            JM_PREDICT((uint32_t)x[i] + x1);
        break;
    case 2:
        for (; i < len; i++)
            JM_PREDICT((uint32_t)x[i] - x2 + 2 * x1);
        break;
    default:
        for (; i < len; i++)
            JM_PREDICT((uint32_t)x[i] + x3 - 3 * x2 + 3 * x1);
    }
#undef JM_PREDICT
    s->x1 = x1, s->x2 = x2, s->x3 = x3;
    for (i = 0; i < len; i++) /* vectorized: the values' bound */
        bad |= (uint32_t)x[i] + JM_CODEC_MAX_VALUE > 2u * JM_CODEC_MAX_VALUE;
    return bad != 0;
}

/*
 * The streams' format, per stream: blocks of JM_CODEC_BLOCK values (the last may be shorter);
 * each opens with 2 bits of predictor order p and 5 bits of Rice parameter k (0..JM_CODEC_MAX_K,
 * or JM_CODEC_ZERO_BLOCK: every residual of the block is 0 and takes no bits). A residual is the
 * zigzag code u of e = x[i] - prediction: u >> k in unary (ones ended by a zero; JM_CODEC_ESCAPE
 * ones and no zero mean u follows in 32 bits), then u's k low bits. The prediction of order p is
 * the polynomial through the p values before (0; x[i-1]; 2x[i-1] - x[i-2]; 3x[i-1] - 3x[i-2] +
 * x[i-3]), of order min(p, i) for the first values of the stream. A stream ends with zero bits
 * up to its last byte.
 *
 * read_chunk: the residuals of one block of `len` values of up to JM_CODEC_LANES streams with
 * residuals to read (the streams `which[0..count)` of st, their bytes at data + offset[s]),
 * JM_CODEC_LANES at once: the lanes left over decode the data's first bytes into a sink, so
 * that every chunk runs the one unrolled loop.
 */
JM_INLINE void read_chunk(const uint8_t *data, size_t size, const int64_t *table, stream_state *st, const size_t *which,
                          size_t count, size_t len, int32_t *values) {
    enum { L = JM_CODEC_LANES };
    int32_t sink[JM_CODEC_BLOCK];
    escaped_code escaped[L * JM_CODEC_BLOCK], *escapes = escaped;
    uint64_t pos[L];
    unsigned k[L];
    int32_t *o[L];
    int checked = 0;
    for (size_t l = 0; l < L; l++) {
        if (l < count) {
            const size_t s = which[l];
            pos[l] = 8 * (uint64_t)table[3 * s] + st[s].pos, k[l] = st[s].k, o[l] = values + s * JM_CODEC_BLOCK;
        } else
            pos[l] = 0, k[l] = 0, o[l] = sink;
        checked |= pos[l] / 8 + JM_CODEC_MAX_BLOCK_BYTES + 8 > size; /* near the end of the data */
    }
    if (checked)
        read_codes(data, size, pos, k, len, o, 1, &escapes);
    else
        read_codes(data, size, pos, k, len, o, 0, &escapes);
    for (size_t l = 0; l < count; l++) {
        st[which[l]].pos = pos[l] - 8 * (uint64_t)table[3 * which[l]];
        residuals_of_codes(o[l], len, k[l]);
    }
    for (const escaped_code *e = escaped; e < escapes; e++)
        *e->at = unzigzag(e->u); /* a sink's too: harmless */
}

/*
 * One block (values [start, start + len), start a multiple of JM_CODEC_BLOCK) of every Rice
 * stream of the table into values (row s at values + s * JM_CODEC_BLOCK): the blocks' headers,
 * the residuals of the blocks that have some JM_CODEC_LANES streams at a time, then each
 * stream's prediction. Returns 0, or a JM_CODEC_* error with *failed the stream.
 */
JM_INLINE int decode_block(const uint8_t *data, size_t size, const int64_t *table, size_t n_rows, stream_state *st,
                           size_t *which, size_t start, size_t len, int32_t *values, size_t *failed) {
    size_t n_read = 0;
    for (size_t s = 0; s < n_rows; s++) {
        if (table[3 * s + 2] != JM_STREAM_RICE)
            continue;
        const size_t offset = (size_t)table[3 * s];
        const uint64_t head = peek_bits(data + offset, size - offset, st[s].pos) >> 57;
        st[s].pos += 7;
        st[s].order = (unsigned)(head >> 5);
        st[s].k = (unsigned)(head & 31);
        if (st[s].k == JM_CODEC_ZERO_BLOCK)
            memset(values + s * JM_CODEC_BLOCK, 0, len * sizeof(int32_t));
        else if (st[s].k > JM_CODEC_MAX_K) {
            *failed = s;
            return JM_CODEC_BAD_BLOCK;
        } else
            which[n_read++] = s;
    }
    for (size_t r = 0; r < n_read; r += JM_CODEC_LANES)
        read_chunk(data, size, table, st, which + r, n_read - r < JM_CODEC_LANES ? n_read - r : JM_CODEC_LANES, len,
                   values);
    for (size_t s = 0; s < n_rows; s++) {
        if (table[3 * s + 2] != JM_STREAM_RICE)
            continue;
        *failed = s;
        if (st[s].pos > 8 * (uint64_t)table[3 * s + 1]) /* consumed past the end */
            return JM_CODEC_OVERRUN;
        if (predict_block(values + s * JM_CODEC_BLOCK, len, st[s].order, start == 0, &st[s]))
            return JM_CODEC_OUT_OF_RANGE;
    }
    return 0;
}

/* After its last block: a stream must end on its last byte, its padding bits zero. */
JM_INLINE int stream_ended(const uint8_t *data, size_t nbytes, uint64_t pos) {
    if ((pos + 7) / 8 != nbytes)
        return 0;
    return !(pos % 8) || !(data[nbytes - 1] & (0xffu >> (pos % 8)));
}

/* The Hamilton product a b of (x, y, z, w) quaternions, float32, in this order of operations. */
static inline void quat_product(const float a[4], const float b[4], float out[4]) {
    out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}

/* One joint's records, frame by frame (as reconstruct below, for any track modes). */
JM_INLINE void reconstruct_scalar(const jm_codec_track *tr, size_t n_joints, size_t n_frames, const int32_t *values,
                                  size_t stride, jm_joint_quat *o) {
    const size_t rot_row = tr->rot_mode != JM_TRACK_CONSTANT ? (size_t)tr->rot_row : 0;
    const size_t trans_row = tr->trans_mode != JM_TRACK_CONSTANT ? (size_t)tr->trans_row : 0;
    const int32_t *rx = values + rot_row * stride, *ry = rx + stride, *rz = ry + stride;
    const int32_t *tx = values + trans_row * stride, *ty = tx + stride, *tz = ty + stride;
    const float rs = tr->rot_step, ts = tr->trans_step;
    switch (tr->rot_mode) {
    case JM_TRACK_QUANTIZED:
        for (size_t f = 0; f < n_frames; f++) {
            const float x = (float)rx[f] * rs, y = (float)ry[f] * rs, z = (float)rz[f] * rs;
            const float ww = 1.0f - (x * x + y * y + z * z); /* a comparison, not fmaxf (a libm call) */
            const float r[4] = {x, y, z, sqrtf(ww > 0.0f ? ww : 0.0f)};
            quat_product(tr->rot, r, o[f * n_joints].q);
        }
        break;
    case JM_TRACK_QUANTIZED4: {
        const int32_t *rw = rz + stride;
        for (size_t f = 0; f < n_frames; f++) {
            const float x = (float)rx[f] * rs, y = (float)ry[f] * rs, z = (float)rz[f] * rs, w = (float)rw[f] * rs;
            const float inv = 1.0f / sqrtf(x * x + y * y + z * z + w * w);
            float *q = o[f * n_joints].q;
            q[0] = x * inv, q[1] = y * inv, q[2] = z * inv, q[3] = w * inv;
        }
        break;
    }
    case JM_TRACK_RAW: {
        const int32_t *rw = rz + stride;
        for (size_t f = 0; f < n_frames; f++) {
            const int32_t bits[4] = {rx[f], ry[f], rz[f], rw[f]};
            memcpy(o[f * n_joints].q, bits, sizeof bits);
        }
        break;
    }
    default:
        for (size_t f = 0; f < n_frames; f++)
            memcpy(o[f * n_joints].q, tr->rot, sizeof tr->rot);
    }
    switch (tr->trans_mode) {
    case JM_TRACK_QUANTIZED:
        for (size_t f = 0; f < n_frames; f++) {
            float *t = o[f * n_joints].t;
            t[0] = tr->trans[0] + (float)tx[f] * ts, t[1] = tr->trans[1] + (float)ty[f] * ts;
            t[2] = tr->trans[2] + (float)tz[f] * ts, t[3] = 0.0f;
        }
        break;
    case JM_TRACK_RAW:
        for (size_t f = 0; f < n_frames; f++) {
            const int32_t bits[4] = {tx[f], ty[f], tz[f], 0};
            memcpy(o[f * n_joints].t, bits, sizeof bits);
        }
        break;
    default:
        for (size_t f = 0; f < n_frames; f++) {
            memcpy(o[f * n_joints].t, tr->trans, 3 * sizeof(float));
            o[f * n_joints].t[3] = 0.0f;
        }
    }
}

/* One row's JM_W integers from p as floats, in the lane order v_store_records uses. */
JM_INLINE vf row_floats(const int32_t *p) { return v_from_int(v_load_u32((const char *)p)); }

/*
 * JM_W frames of one joint whose tracks are not raw, as the 8 components of JOINT_QUAT records
 * (c[0..3] the rotation, c[4..7] the translation): the operations of reconstruct_scalar, lane by
 * lane, in the same order (the same floats on every path). rot, trans: the first frame's
 * integers of the tracks' first rows, the rows `stride` apart.
 */
JM_INLINE void joint_frames(const jm_codec_track *tr, const int32_t *rot, const int32_t *trans, size_t stride, vf c[8]) {
    const vf zero = v_set1(0.0f);
    if (tr->rot_mode == JM_TRACK_QUANTIZED) {
        const vf rs = v_set1(tr->rot_step);
        const vf x = v_mul(row_floats(rot), rs), y = v_mul(row_floats(rot + stride), rs);
        const vf z = v_mul(row_floats(rot + 2 * stride), rs);
        const vf ww = v_sub(v_set1(1.0f), v_add(v_add(v_mul(x, x), v_mul(y, y)), v_mul(z, z)));
        const vf w = v_sqrt(v_select(v_gt(ww, zero), ww, zero));
        const vf a0 = v_set1(tr->rot[0]), a1 = v_set1(tr->rot[1]), a2 = v_set1(tr->rot[2]), a3 = v_set1(tr->rot[3]);
        /* quat_product(tr->rot, (x, y, z, w)) */
        c[0] = v_sub(v_add(v_add(v_mul(a3, x), v_mul(a0, w)), v_mul(a1, z)), v_mul(a2, y));
        c[1] = v_add(v_add(v_sub(v_mul(a3, y), v_mul(a0, z)), v_mul(a1, w)), v_mul(a2, x));
        c[2] = v_add(v_sub(v_add(v_mul(a3, z), v_mul(a0, y)), v_mul(a1, x)), v_mul(a2, w));
        c[3] = v_sub(v_sub(v_sub(v_mul(a3, w), v_mul(a0, x)), v_mul(a1, y)), v_mul(a2, z));
    } else if (tr->rot_mode == JM_TRACK_QUANTIZED4) {
        const vf rs = v_set1(tr->rot_step);
        const vf x = v_mul(row_floats(rot), rs), y = v_mul(row_floats(rot + stride), rs);
        const vf z = v_mul(row_floats(rot + 2 * stride), rs), w = v_mul(row_floats(rot + 3 * stride), rs);
        const vf inv = v_div(v_set1(1.0f), v_sqrt(v_add(v_add(v_add(v_mul(x, x), v_mul(y, y)), v_mul(z, z)), v_mul(w, w))));
        c[0] = v_mul(x, inv), c[1] = v_mul(y, inv), c[2] = v_mul(z, inv), c[3] = v_mul(w, inv);
    } else {
        for (int k = 0; k < 4; k++)
            c[k] = v_set1(tr->rot[k]);
    }
    if (tr->trans_mode == JM_TRACK_QUANTIZED) {
        const vf ts = v_set1(tr->trans_step);
        for (int k = 0; k < 3; k++)
            c[4 + k] = v_add(v_set1(tr->trans[k]), v_mul(row_floats(trans + (size_t)k * stride), ts));
    } else {
        for (int k = 0; k < 3; k++)
            c[4 + k] = v_set1(tr->trans[k]);
    }
    c[7] = zero;
}

/*
 * Frames [0, n_frames) of n_joints records (out: the first frame's) from the tracks' integers
 * (values: rows of n_frames int32, row r at values + r * stride). Rotation, quantized: the
 * residual r = (s nx, s ny, s nz, sqrt(max(0, 1 - |xyz|^2))) (s the track's step, w >= 0
 * reconstructed) applied after the reference: q = ref r. QUANTIZED4 (a rotation that turns too
 * far from any reference for w to be well conditioned): q = n s / |n s| over its four components
 * (n = 0 gives NaN; the encoder never writes it). Translation, quantized: t = ref + s n per
 * component. Constant: the track's value; raw: the integers' bit patterns as float32. The 4th
 * translation lane is 0. JM_W frames at a time (the last frames through a padded copy of their
 * integers), joints with a raw track frame by frame.
 */
JM_INLINE void reconstruct(const jm_codec_track *tracks, size_t n_joints, size_t n_frames, const int32_t *values,
                           size_t stride, jm_joint_quat *out) {
    const ptrdiff_t record_stride = (ptrdiff_t)(n_joints * sizeof(jm_joint_quat));
    for (size_t j = 0; j < n_joints; j++) {
        const jm_codec_track *tr = &tracks[j];
        if (tr->rot_mode == JM_TRACK_RAW || tr->trans_mode == JM_TRACK_RAW) {
            reconstruct_scalar(tr, n_joints, n_frames, values, stride, out + j);
            continue;
        }
        const int32_t *rot = values + (tr->rot_mode != JM_TRACK_CONSTANT ? (size_t)tr->rot_row : 0) * stride;
        const int32_t *trans = values + (tr->trans_mode != JM_TRACK_CONSTANT ? (size_t)tr->trans_row : 0) * stride;
        vf c[8];
        size_t f = 0;
        for (; f + JM_W <= n_frames; f += JM_W) {
            joint_frames(tr, rot + f, trans + f, stride, c);
            v_store_records((char *)(out + f * n_joints + j), record_stride, 2, c);
        }
        if (f < n_frames) { /* the last frames: their integers padded with zeros, their records staged */
            int32_t rows[7][JM_W];
            jm_joint_quat staged[JM_W];
            const size_t rest = n_frames - f;
            memset(rows, 0, sizeof rows);
            for (size_t r = 0; r < 4; r++)
                if (tr->rot_mode == JM_TRACK_QUANTIZED4 || (r < 3 && tr->rot_mode == JM_TRACK_QUANTIZED))
                    memcpy(rows[r], rot + r * stride + f, rest * sizeof(int32_t));
            for (size_t r = 0; r < 3; r++)
                if (tr->trans_mode == JM_TRACK_QUANTIZED)
                    memcpy(rows[4 + r], trans + r * stride + f, rest * sizeof(int32_t));
            joint_frames(tr, rows[0], rows[4], JM_W, c);
            v_store_records((char *)staged, sizeof(jm_joint_quat), 2, c);
            for (size_t k = 0; k < rest; k++)
                out[(f + k) * n_joints + j] = staged[k];
        }
    }
}

/* jm_codec_tracks: the records of every frame from the whole clip's integers (stride n_frames). */
void JM_FN(jm_codec_tracks)(const jm_codec_track *tracks, size_t n_joints, size_t n_frames, const int32_t *values,
                            jm_joint_quat *out) {
    enum { FRAMES = 64 }; /* frames a pass: their records stay in cache while every joint is written */
    for (size_t f0 = 0; f0 < n_frames; f0 += FRAMES) {
        const size_t len = n_frames - f0 < FRAMES ? n_frames - f0 : FRAMES;
        reconstruct(tracks, n_joints, len, values + f0, n_frames, out + f0 * n_joints);
    }
}

/*
 * jm_codec_decode: a whole clip's records from its streams (table: n_rows rows of offset,
 * nbytes, kind into data[0..size), checked by the caller; kind JM_STREAM_RICE: a Rice stream,
 * see decode_block; JM_STREAM_RAW32: n_frames little-endian int32), block by block of
 * JM_CODEC_BLOCK frames: every stream's block decoded into scratch (JM_CODEC_SCRATCH_BYTES(n_rows),
 * 8-byte aligned), then those frames reconstructed (see reconstruct), so that the integers stay
 * in cache. Rice streams are decoded JM_CODEC_LANES at a time, in the table's order.
 * Returns 0, or a JM_CODEC_* error with *failed the stream's row, for a Rice stream that does not
 * decode to exactly n_frames values within +-JM_CODEC_MAX_VALUE ending on its last byte. It
 * never reads outside data[0..size) (a stream that runs past its end reads the bytes after it,
 * and is refused).
 */
int JM_FN(jm_codec_decode)(const uint8_t *data, size_t size, const int64_t *table, size_t n_rows,
                           const jm_codec_track *tracks, size_t n_joints, size_t n_frames, void *scratch,
                           jm_joint_quat *out, size_t *failed) {
    stream_state *states = (stream_state *)scratch;
    size_t *which = (size_t *)(states + n_rows);
    int32_t *values = (int32_t *)(which + n_rows);
    memset(states, 0, n_rows * sizeof *states);
    for (size_t start = 0; start < n_frames; start += JM_CODEC_BLOCK) {
        const size_t len = n_frames - start < JM_CODEC_BLOCK ? n_frames - start : JM_CODEC_BLOCK;
        for (size_t s = 0; s < n_rows; s++)
            if (table[3 * s + 2] == JM_STREAM_RAW32) { /* little-endian int32 */
                const uint8_t *b = data + table[3 * s] + 4 * start;
                int32_t *row = values + s * JM_CODEC_BLOCK;
                for (size_t f = 0; f < len; f++, b += 4)
                    row[f] = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
            }
        const int code = decode_block(data, size, table, n_rows, states, which, start, len, values, failed);
        if (code)
            return code;
        reconstruct(tracks, n_joints, len, values, JM_CODEC_BLOCK, out + start * n_joints);
    }
    for (size_t s = 0; s < n_rows; s++)
        if (table[3 * s + 2] == JM_STREAM_RICE && !stream_ended(data + table[3 * s], (size_t)table[3 * s + 1], states[s].pos)) {
            *failed = s;
            return JM_CODEC_TRAILING;
        }
    return 0;
}
