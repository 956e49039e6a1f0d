/*
 * codec_types.h - what the compressed-clip decoder (csrc/codec.c) reads: the format's constants
 * and one joint's track description. The container around them (header, skeleton, stream table,
 * checksum) is parsed and checked in Python (jointmath/_codec_format.py); docs/formats.md
 * specifies both.
 */
#ifndef JM_CODEC_TYPES_H
#define JM_CODEC_TYPES_H

#include <stddef.h>
#include <stdint.h>

#define JM_CODEC_BLOCK 128         /* values per block of a Rice stream (one predictor and k each) */
#define JM_CODEC_MAX_K 24          /* the largest Rice parameter */
#define JM_CODEC_ZERO_BLOCK 31     /* the k field of a block whose residuals are all zero (no value bits) */
#define JM_CODEC_ESCAPE 24         /* a unary run this long is followed by the value in 32 bits */
#define JM_CODEC_MAX_VALUE (1 << 24) /* |quantized value| <= this (a float32 holds it exactly) */
#define JM_CODEC_LANES 6           /* Rice streams jm_codec_decode reads side by side (csrc/codec.c unrolls by it) */

#define JM_STREAM_RICE 0  /* a stream-table kind: Rice-coded integers (csrc/codec.c decode_block) */
#define JM_STREAM_RAW32 1 /* a stream-table kind: one little-endian int32 per frame */

/* The scratch jm_codec_decode needs for a table of n_rows streams: per stream, 64 bytes of reading
   state and one block of int32 values. */
#define JM_CODEC_SCRATCH_BYTES(n_rows) ((size_t)(n_rows) * (64 + JM_CODEC_BLOCK * sizeof(int32_t)))

#define JM_TRACK_CONSTANT 0  /* one value for every frame (the track's `value`), stored as is */
#define JM_TRACK_QUANTIZED 1 /* integers n per frame and component: see csrc/codec.c reconstruct */
#define JM_TRACK_RAW 2       /* the float32 values themselves, their bit patterns as the integers */
#define JM_TRACK_QUANTIZED4 3 /* a rotation's four components quantized, normalised when decoded */

/* One joint's tracks: the rotation's and the translation's modes, the first of their rows in the
   decoded integers (3 rows for a quantized track or a raw translation, 4 for a raw or QUANTIZED4 rotation), the
   constant value or quantization reference, and the quantization step. */
typedef struct {
    int32_t rot_mode, trans_mode;
    int32_t rot_row, trans_row;
    float rot[4];   /* x, y, z, w */
    float trans[4]; /* x, y, z, 0 */
    float rot_step, trans_step;
} jm_codec_track;

/* Errors of jm_codec_decode_fn (0: none). */
#define JM_CODEC_OVERRUN 1      /* the stream ends before its values do */
#define JM_CODEC_BAD_BLOCK 2    /* a block's k field is out of range */
#define JM_CODEC_OUT_OF_RANGE 3 /* a value beyond +-JM_CODEC_MAX_VALUE */
#define JM_CODEC_TRAILING 4     /* bytes left over after the last value */

#endif /* JM_CODEC_TYPES_H */
