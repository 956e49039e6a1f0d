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

/* A bounds-checked MSB-first bit reader: bytes past the end read as zeros, and the caller
   compares the bits consumed with the stream's size when it is done. */
typedef struct {
    const uint8_t *data;
    size_t nbytes, next; /* the next byte to load into `window` */
    uint64_t window;     /* the unread bits, left-aligned */
    unsigned bits;       /* how many of window's bits are valid */
} bit_reader;

JM_INLINE void refill(bit_reader *r) {
    if (r->next + 8 <= r->nbytes && r->bits <= 56) {
        uint64_t word = 0;
        for (int k = 0; k < 8; k++)
            word = (word << 8) | r->data[r->next + (size_t)k];
        const unsigned take = (64 - r->bits) / 8; /* whole bytes that fit */
        const uint64_t first = take == 8 ? word : (word >> (64 - 8 * take)) << (64 - 8 * take);
        r->window |= first >> r->bits;
        r->next += take;
        r->bits += 8 * take;
        return;
    }
    while (r->bits <= 56) {
        const uint64_t byte = r->next < r->nbytes ? r->data[r->next] : 0;
        r->window |= byte << (56 - r->bits);
        r->next++;
        r->bits += 8;
    }
}

JM_INLINE uint64_t take_bits(bit_reader *r, unsigned n) { /* 0 < n <= 32, n <= bits */
    const uint64_t v = r->window >> (64 - n);
    r->window <<= n;
    r->bits -= n;
    return v;
}

JM_INLINE unsigned leading_ones(uint64_t w) { /* of a window that is not all ones */
#if defined(_MSC_VER) && !defined(__clang__)
    unsigned long index;
    _BitScanReverse64(&index, ~w);
    return 63u - (unsigned)index;
#else
    return (unsigned)__builtin_clzll(~w);
#endif
}

/*
 * jm_codec_stream: the n integers of one Rice stream of nbytes bytes into out[0..n).
 * Blocks of JM_CODEC_BLOCK values (the last may be shorter); each opens with 2 bits of predictor
 * order p and 5 bits of Rice parameter k (0..JM_CODEC_MAX_K, or JM_CODEC_ZERO_BLOCK: every
 * residual of the block is 0 and takes no bits). A residual is the zigzag code u of
 * e = x[i] - prediction: u >> k in unary (ones ended by a zero; JM_CODEC_ESCAPE ones and no zero
 * mean u follows in 32 bits), then u's k low bits. The prediction of order p is the polynomial
 * through the p values before (0; x[i-1]; 2x[i-1] - x[i-2]; 3x[i-1] - 3x[i-2] + x[i-3]), of order
 * min(p, i) for the first values of the stream. The stream ends with zero bits up to its last
 * byte. Returns 0, or a JM_CODEC_* error for a stream that does not decode to exactly n values
 * within +-JM_CODEC_MAX_VALUE ending on its last byte: it never reads outside data[0..nbytes).
 */
int JM_FN(jm_codec_stream)(const uint8_t *data, size_t nbytes, size_t n, int32_t *out) {
    bit_reader r = {data, nbytes, 0, 0, 0};
    int64_t x1 = 0, x2 = 0, x3 = 0; /* the last three values */
    for (size_t start = 0; start < n; start += JM_CODEC_BLOCK) {
        refill(&r);
        const unsigned order = (unsigned)take_bits(&r, 2), k = (unsigned)take_bits(&r, 5);
        if (k > JM_CODEC_MAX_K && k != JM_CODEC_ZERO_BLOCK)
            return JM_CODEC_BAD_BLOCK;
        const size_t end = n - start < JM_CODEC_BLOCK ? n : start + JM_CODEC_BLOCK;
        for (size_t i = start; i < end; i++) {
            int64_t e = 0;
            if (k != JM_CODEC_ZERO_BLOCK) {
                refill(&r);
                /* at most JM_CODEC_ESCAPE ones: the bit after them counts as the zero */
                const unsigned ones = leading_ones(r.window & ~((uint64_t)1 << (63 - JM_CODEC_ESCAPE)));
                uint64_t u;
                if (ones >= JM_CODEC_ESCAPE) {
                    take_bits(&r, JM_CODEC_ESCAPE);
                    u = take_bits(&r, 32);
                } else {
                    take_bits(&r, ones + 1);
                    u = ((uint64_t)ones << k) | (k ? take_bits(&r, k) : 0);
                }
                e = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
            }
            const unsigned p = i < order ? (unsigned)i : order;
            const int64_t prediction = p == 0 ? 0 : p == 1 ? x1 : p == 2 ? 2 * x1 - x2 : 3 * x1 - 3 * x2 + x3;
            const int64_t x = prediction + e;
            if (x > JM_CODEC_MAX_VALUE || x < -JM_CODEC_MAX_VALUE)
                return JM_CODEC_OUT_OF_RANGE;
            out[i] = (int32_t)x;
            x3 = x2;
            x2 = x1;
            x1 = x;
        }
        if (8 * r.next - r.bits > 8 * (uint64_t)nbytes) /* consumed past the end */
            return JM_CODEC_OVERRUN;
    }
    const uint64_t consumed = 8 * (uint64_t)r.next - r.bits;
    if (consumed > 8 * (uint64_t)nbytes)
        return JM_CODEC_OVERRUN;
    if ((consumed + 7) / 8 != nbytes)
        return JM_CODEC_TRAILING;
    if (consumed % 8 && (data[nbytes - 1] & (0xffu >> (consumed % 8))))
        return JM_CODEC_TRAILING; /* padding bits must be zero */
    return 0;
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
    for (size_t j = 0; j < n_joints; j++) {
        const jm_codec_track *tr = &tracks[j];
        const int32_t *rot = values + (size_t)(tr->rot_mode != JM_TRACK_CONSTANT ? tr->rot_row : 0) * n_frames;
        const int32_t *trans = values + (size_t)(tr->trans_mode != JM_TRACK_CONSTANT ? tr->trans_row : 0) * n_frames;
        for (size_t f = 0; f < n_frames; f++) {
            jm_joint_quat *o = &out[f * n_joints + j];
            if (tr->rot_mode == JM_TRACK_QUANTIZED) {
                const float s = tr->rot_step;
                const float x = (float)rot[f] * s, y = (float)rot[n_frames + f] * s, z = (float)rot[2 * n_frames + f] * s;
                const float r[4] = {x, y, z, sqrtf(fmaxf(0.0f, 1.0f - (x * x + y * y + z * z)))};
                quat_product(tr->rot, r, o->q);
            } else if (tr->rot_mode == JM_TRACK_QUANTIZED4) {
                const float s = tr->rot_step;
                float q[4];
                for (int c = 0; c < 4; c++)
                    q[c] = (float)rot[(size_t)c * n_frames + f] * s;
                const float inv = 1.0f / sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
                for (int c = 0; c < 4; c++)
                    o->q[c] = q[c] * inv;
            } else if (tr->rot_mode == JM_TRACK_RAW) {
                for (int c = 0; c < 4; c++)
                    memcpy(&o->q[c], &rot[(size_t)c * n_frames + f], 4);
            } else {
                memcpy(o->q, tr->rot, sizeof o->q);
            }
            if (tr->trans_mode == JM_TRACK_QUANTIZED) {
                const float s = tr->trans_step;
                for (int c = 0; c < 3; c++)
                    o->t[c] = tr->trans[c] + (float)trans[(size_t)c * n_frames + f] * s;
            } else if (tr->trans_mode == JM_TRACK_RAW) {
                for (int c = 0; c < 3; c++)
                    memcpy(&o->t[c], &trans[(size_t)c * n_frames + f], 4);
            } else {
                memcpy(o->t, tr->trans, 3 * sizeof(float));
            }
            o->t[3] = 0.0f;
        }
    }
}
