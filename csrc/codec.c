/*
 * codec.c - the compressed-clip decoder: Rice-coded integer streams back to integers, and the
 * integers of a clip's tracks back to JOINT_QUAT records (docs/formats.md, "Compressed clip").
 *
 * Compiled once per ISA like every family, but written as scalar C: the encoder certifies its
 * error bound on what this code decodes, so every path must decode the same floats bit for bit.
 * It does: only integer operations, and float32 multiplies, adds and sqrtf, each rounded once
 * (the build turns off contraction into FMA), in the same order on every path.
 */
#include <math.h>
#include <string.h>

#include "jointmath.h"
#include "simd/common.h"

/* The 64 bits of data[0..nbytes) from bit `pos` on, MSB first; bytes past the end read as zeros
   (the caller compares the bits consumed with the stream's size when it is done). */
JM_INLINE uint64_t peek_bits(const uint8_t *data, size_t nbytes, uint64_t pos) {
    const size_t byte = (size_t)(pos >> 3);
    uint64_t w = 0;
    if (byte + 8 <= nbytes) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(&w, data + byte, 8); /* a big-endian load */
        w = __builtin_bswap64(w);
#else
        for (int k = 0; k < 8; k++)
            w = (w << 8) | data[byte + (size_t)k];
#endif
    } else {
        for (size_t k = 0; k < 8; k++)
            w = (w << 8) | (byte + k < nbytes ? data[byte + k] : 0u);
    }
    return w << (pos & 7); /* >= 57 valid bits: a value takes at most 56 */
}

JM_INLINE unsigned leading_ones(uint64_t w) { /* of a word that is not all ones */
#if defined(_MSC_VER) && !defined(__clang__)
    unsigned long index;
    _BitScanReverse64(&index, ~w);
    return 63u - (unsigned)index;
#else
    return (unsigned)__builtin_clzll(~w);
#endif
}

/* One Rice-coded zigzag residual at bit *pos with parameter k (0..JM_CODEC_MAX_K), decoded. */
JM_INLINE int64_t read_residual(const uint8_t *data, size_t nbytes, uint64_t *pos, unsigned k) {
    const uint64_t w = peek_bits(data, nbytes, *pos);
    /* at most JM_CODEC_ESCAPE ones: the bit after them counts as the zero */
    const unsigned ones = leading_ones(w & ~((uint64_t)1 << (63 - JM_CODEC_ESCAPE)));
    uint64_t u;
    if (ones >= JM_CODEC_ESCAPE) {
        u = (w << JM_CODEC_ESCAPE) >> 32;
        *pos += JM_CODEC_ESCAPE + 32;
    } else {
        u = ((uint64_t)ones << k) | (k ? (w << (ones + 1)) >> (64 - k) : 0);
        *pos += ones + 1 + k;
    }
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/*
 * jm_codec_streams: up to JM_CODEC_LANES Rice streams at once (stream l: data[l], nbytes[l], its n
 * integers to out[l]; count <= JM_CODEC_LANES), interleaved value by value so that their
 * independent bit readers overlap in the CPU (one stream alone is a chain of dependent loads).
 * The format, per stream: blocks of JM_CODEC_BLOCK values (the last may be shorter); each opens
 * with 2 bits of predictor order p and 5 bits of Rice parameter k (0..JM_CODEC_MAX_K, or
 * JM_CODEC_ZERO_BLOCK: every residual of the block is 0 and takes no bits). A residual is the
 * zigzag code u of e = x[i] - prediction: u >> k in unary (ones ended by a zero;
 * JM_CODEC_ESCAPE ones and no zero mean u follows in 32 bits), then u's k low bits. The
 * prediction of order p is the polynomial through the p values before (0; x[i-1];
 * 2x[i-1] - x[i-2]; 3x[i-1] - 3x[i-2] + x[i-3]), of order min(p, i) for the first values of the
 * stream. A stream ends with zero bits up to its last byte.
 * Returns 0, or a JM_CODEC_* error + 256 * (the failing stream) for a stream that does not
 * decode to exactly n values within +-JM_CODEC_MAX_VALUE ending on its last byte. It never reads
 * outside data[l][0..nbytes[l]).
 */
JM_INLINE int decode_streams(const uint8_t *const *data, const size_t *nbytes, const size_t count, size_t n,
                             int32_t *const *out) {
    enum { L = JM_CODEC_LANES };
    /* prediction coefficients of x[i-1], x[i-2], x[i-3] by order */
    static const int64_t c1[4] = {0, 1, 2, 3}, c2[4] = {0, 0, -1, -3}, c3[4] = {0, 0, 0, 1};
    const uint8_t *d[L];
    size_t nb[L];
    int32_t *o[L];
    uint64_t pos[L];
    int64_t x1[L], x2[L], x3[L], lo[L], hi[L];
    unsigned order[L], k[L];
    for (int l = 0; l < L; l++) {
        const int live = (size_t)l < count;
        d[l] = live ? data[l] : NULL;
        nb[l] = live ? nbytes[l] : 0;
        o[l] = live ? out[l] : NULL;
        pos[l] = 0;
        x1[l] = x2[l] = x3[l] = lo[l] = hi[l] = 0;
        order[l] = 0;
        k[l] = JM_CODEC_ZERO_BLOCK;
    }
    for (size_t start = 0; start < n; start += JM_CODEC_BLOCK) {
        for (size_t l = 0; l < count; l++) {
            const uint64_t head = peek_bits(d[l], nb[l], pos[l]) >> 57;
            pos[l] += 7;
            order[l] = (unsigned)(head >> 5);
            k[l] = (unsigned)(head & 31);
            if (k[l] > JM_CODEC_MAX_K && k[l] != JM_CODEC_ZERO_BLOCK)
                return JM_CODEC_BAD_BLOCK + 256 * (int)l;
        }
        const size_t end = n - start < JM_CODEC_BLOCK ? n : start + JM_CODEC_BLOCK;
        for (size_t i = start; i < end; i++) {
            for (size_t l = 0; l < count; l++) {
                const int64_t e = k[l] == JM_CODEC_ZERO_BLOCK ? 0 : read_residual(d[l], nb[l], &pos[l], k[l]);
                const unsigned p = i < order[l] ? (unsigned)i : order[l];
                /* values stay within +-2^24 (clamped as stored; one beyond is reported after the
                   block) and residuals below 2^32: the int64 sums never overflow */
                int64_t x = c1[p] * x1[l] + c2[p] * x2[l] + c3[p] * x3[l] + e;
                lo[l] = x < lo[l] ? x : lo[l];
                hi[l] = x > hi[l] ? x : hi[l];
                x = x > JM_CODEC_MAX_VALUE ? JM_CODEC_MAX_VALUE : x < -JM_CODEC_MAX_VALUE ? -JM_CODEC_MAX_VALUE : x;
                o[l][i] = (int32_t)x;
                x3[l] = x2[l];
                x2[l] = x1[l];
                x1[l] = x;
            }
        }
        for (size_t l = 0; l < count; l++) {
            if (lo[l] < -JM_CODEC_MAX_VALUE || hi[l] > JM_CODEC_MAX_VALUE)
                return JM_CODEC_OUT_OF_RANGE + 256 * (int)l;
            if (pos[l] > 8 * (uint64_t)nb[l]) /* consumed past the end */
                return JM_CODEC_OVERRUN + 256 * (int)l;
        }
    }
    for (size_t l = 0; l < count; l++) {
        if ((pos[l] + 7) / 8 != nb[l])
            return JM_CODEC_TRAILING + 256 * (int)l;
        if (pos[l] % 8 && (d[l][nb[l] - 1] & (0xffu >> (pos[l] % 8))))
            return JM_CODEC_TRAILING + 256 * (int)l; /* padding bits must be zero */
    }
    return 0;
}

int JM_FN(jm_codec_streams)(const uint8_t *const *data, const size_t *nbytes, size_t count, size_t n,
                            int32_t *const *out) {
    /* the usual full group with a constant count: its lanes unrolled */
    return count == JM_CODEC_LANES ? decode_streams(data, nbytes, JM_CODEC_LANES, n, out)
                                   : decode_streams(data, nbytes, count, n, out);
}

/* The Hamilton product a b of (x, y, z, w) quaternions, float32, in this order of operations. */
static inline void quat_product(const float a[4], const float b[4], float out[4]) {
    out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}

/*
 * jm_codec_tracks: frames [0, n_frames) of n_joints records from the tracks' integers
 * (values: rows of n_frames int32, row r at values + r * n_frames).
 * Rotation, quantized: the residual r = (s nx, s ny, s nz, sqrt(max(0, 1 - |xyz|^2))) (s the
 * track's step, w >= 0 reconstructed) applied after the reference: q = ref r. QUANTIZED4 (a
 * rotation that turns too far from any reference for w to be well conditioned): q = n s / |n s|
 * over its four components (n = 0 gives NaN; the encoder never writes it). Translation,
 * quantized: t = ref + s n per component. Constant: the track's value; raw: the integers' bit
 * patterns as float32. The 4th translation lane is 0.
 */
void JM_FN(jm_codec_tracks)(const jm_codec_track *tracks, size_t n_joints, size_t n_frames, const int32_t *values,
                            jm_joint_quat *out) {
    enum { FRAMES = 64 }; /* frames a pass: their records stay in cache while every joint is written */
    for (size_t f0 = 0; f0 < n_frames; f0 += FRAMES) {
        const size_t f1 = n_frames - f0 < FRAMES ? n_frames : f0 + FRAMES;
        for (size_t j = 0; j < n_joints; j++) {
            const jm_codec_track *tr = &tracks[j];
            const size_t rot_row = tr->rot_mode != JM_TRACK_CONSTANT ? (size_t)tr->rot_row : 0;
            const size_t trans_row = tr->trans_mode != JM_TRACK_CONSTANT ? (size_t)tr->trans_row : 0;
            const int32_t *rx = values + rot_row * n_frames, *ry = rx + n_frames, *rz = ry + n_frames;
            const int32_t *tx = values + trans_row * n_frames, *ty = tx + n_frames, *tz = ty + n_frames;
            jm_joint_quat *o = out + j;
            const float rs = tr->rot_step, ts = tr->trans_step;
            switch (tr->rot_mode) {
            case JM_TRACK_QUANTIZED:
                for (size_t f = f0; f < f1; f++) {
                    const float x = (float)rx[f] * rs, y = (float)ry[f] * rs, z = (float)rz[f] * rs;
                    const float ww = 1.0f - (x * x + y * y + z * z); /* a comparison, not fmaxf (a libm call) */
                    const float r[4] = {x, y, z, sqrtf(ww > 0.0f ? ww : 0.0f)};
                    quat_product(tr->rot, r, o[f * n_joints].q);
                }
                break;
            case JM_TRACK_QUANTIZED4: {
                const int32_t *rw = rz + n_frames;
                for (size_t f = f0; f < f1; f++) {
                    const float x = (float)rx[f] * rs, y = (float)ry[f] * rs, z = (float)rz[f] * rs, w = (float)rw[f] * rs;
                    const float inv = 1.0f / sqrtf(x * x + y * y + z * z + w * w);
                    float *q = o[f * n_joints].q;
                    q[0] = x * inv, q[1] = y * inv, q[2] = z * inv, q[3] = w * inv;
                }
                break;
            }
            case JM_TRACK_RAW: {
                const int32_t *rw = rz + n_frames;
                for (size_t f = f0; f < f1; f++) {
                    const int32_t bits[4] = {rx[f], ry[f], rz[f], rw[f]};
                    memcpy(o[f * n_joints].q, bits, sizeof bits);
                }
                break;
            }
            default:
                for (size_t f = f0; f < f1; f++)
                    memcpy(o[f * n_joints].q, tr->rot, sizeof tr->rot);
            }
            switch (tr->trans_mode) {
            case JM_TRACK_QUANTIZED:
                for (size_t f = f0; f < f1; f++) {
                    float *t = o[f * n_joints].t;
                    t[0] = tr->trans[0] + (float)tx[f] * ts, t[1] = tr->trans[1] + (float)ty[f] * ts;
                    t[2] = tr->trans[2] + (float)tz[f] * ts, t[3] = 0.0f;
                }
                break;
            case JM_TRACK_RAW:
                for (size_t f = f0; f < f1; f++) {
                    const int32_t bits[4] = {tx[f], ty[f], tz[f], 0};
                    memcpy(o[f * n_joints].t, bits, sizeof bits);
                }
                break;
            default:
                for (size_t f = f0; f < f1; f++) {
                    memcpy(o[f * n_joints].t, tr->trans, 3 * sizeof(float));
                    o[f * n_joints].t[3] = 0.0f;
                }
            }
        }
    }
}
