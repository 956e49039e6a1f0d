/*
 * jointmath.h - record layouts, the kernels' function types, the kernel table and prototypes.
 *
 * Every kernel of csrc/kernels.h exists once per ISA path built for this CPU architecture
 * (csrc/isas.h: suffix _scalar, and _sse, _avx2, _avx512 on x86 or _neon on arm64), built from
 * one source file per kernel family; dispatch.c picks one set at import time.
 */
#ifndef JOINTMATH_H
#define JOINTMATH_H

#include <stddef.h>
#include <stdint.h>

#include "codec_types.h"
#include "isas.h"
#include "kernels.h"

/* The seeds' JointQuat / JointMat, byte for byte (the Python dtypes mirror these). */
typedef struct {
    float q[4]; /* rotation x, y, z, w */
    float t[4]; /* translation x, y, z; the 4th lane is 0 */
} jm_joint_quat;

typedef struct {
    float m[3][4]; /* row-major 3x3 rotation, translation in column 3 */
} jm_joint_mat;

/* A record-to-record kernel: n records from src to dst, strides in bytes. */
typedef void jm_map_fn(const char *src, ptrdiff_t src_stride, char *dst, ptrdiff_t dst_stride, size_t n);
typedef jm_map_fn *jm_map_kernel;

/* n contiguous float[4] -> n codes (uint32 or uint64); returns how many quaternions were zero or
   non-finite and sets *first_invalid to the first one's index (n when none). */
typedef size_t jm_pack_fn(const float *q, void *codes, size_t n, size_t *first_invalid);
typedef jm_pack_fn *jm_pack_kernel;

/* The same from n contiguous double[4]. */
typedef size_t jm_pack_f64_fn(const double *q, void *codes, size_t n, size_t *first_invalid);
typedef jm_pack_f64_fn *jm_pack_f64_kernel;

/* n contiguous codes -> n unit quaternions float[4]. */
typedef void jm_unpack_fn(const void *codes, float *q, size_t n);
typedef jm_unpack_fn *jm_unpack_kernel;

/*
 * A rotation extraction job (csrc/extract.c): n matrices, each with an optional warm start, to
 * n unit quaternions and optional iteration counts. Strides in bytes; every pointer is walked
 * as base + i * stride.
 */
typedef struct {
    const char *a;        /* n matrices: jm_joint_mat, float[3][3] or double[3][3] records (per kernel) */
    ptrdiff_t a_stride;
    const char *q0;       /* n float[4] (double[4] for the _f64 kernel) starting quaternions (x, y, z, w),
                             or NULL: cold start */
    ptrdiff_t q0_stride;
    char *out;            /* n float[4] (double[4]) results */
    ptrdiff_t out_stride;
    int32_t *iterations;  /* n iteration counts, or NULL */
    ptrdiff_t iterations_stride;
    size_t n;
    int max_iter;         /* 0 <= max_iter <= 2^24 (counts are kept in float lanes) */
    double tol;           /* a matrix stops when its step is below tol (see csrc/extract.c) */
    int method;           /* JM_EXTRACT_NEWTON or JM_EXTRACT_MULLER */
} jm_extract_job;

#define JM_EXTRACT_MULLER 0 /* Mueller et al.'s update: linear, cheapest per update */
#define JM_EXTRACT_NEWTON 1 /* Newton steps on the rotation: quadratic */

typedef void jm_extract_fn(const jm_extract_job *job);
typedef jm_extract_fn *jm_extract_kernel;

/* Two record arrays to one: out[i] = f(a[i], b[i]), strides in bytes (compose.c). */
typedef void jm_binary_fn(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride, char *out,
                          ptrdiff_t out_stride, size_t n);
typedef jm_binary_fn *jm_binary_kernel;

/*
 * Forward kinematics (compose.c): n_frames C-contiguous frames of n_joints jm_joint_quat local
 * transforms -> the same frames of jm_joint_mat world transforms. The joints' world transforms
 * are kept in numbered slots of `scratch` while their children may read them (world_slots in
 * jointmath/_compose.c): joint j writes slot[j] and reads parent_slot[j], the slot of its
 * parent, or is a root (parent_slot[j] = -1). scratch: JM_HIERARCHY_SCRATCH(n_slots) bytes, any
 * alignment.
 */
typedef void jm_hierarchy_fn(const char *joints, char *world, size_t n_frames, size_t n_joints,
                             const intptr_t *parent_slot, const intptr_t *slot, void *scratch);
typedef jm_hierarchy_fn *jm_hierarchy_kernel;
#define JM_MAX_LANES 16 /* the widest path's floats per vector (AVX-512) */
#define JM_HIERARCHY_SCRATCH(n_slots) ((size_t)(n_slots) * 12 * JM_MAX_LANES * sizeof(float) + 64)

/* Joint records a, b -> out (32-byte jm_joint_quat each, strides in bytes) at fraction t. */
typedef void jm_blend_fn(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride, char *out,
                         ptrdiff_t out_stride, size_t n, float t);
typedef jm_blend_fn *jm_blend_kernel;

/* The same on the joints index[0..n_index) of n_frames frames of n_joints records each; index
   strictly increasing within [0, n_joints) (checked by a jm_index_kernel). */
typedef void jm_blend_indexed_fn(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride,
                                 char *out, ptrdiff_t out_stride, size_t n_frames, size_t n_joints,
                                 const intptr_t *index, size_t n_index, float t);
typedef jm_blend_indexed_fn *jm_blend_indexed_kernel;

/* index[0..n) copied to copy[0..n) (copy may be index); 1 when the values copied are strictly
   increasing within [0, n_joints), else 0. */
typedef int jm_index_fn(const intptr_t *index, intptr_t *copy, size_t n, size_t n_joints);
typedef jm_index_fn *jm_index_kernel;

/* float[4] quaternions a, b -> out with a float32 fraction per element (t_stride 0: one for all). */
typedef void jm_quat_blend_fn(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride,
                              const char *t, ptrdiff_t t_stride, char *out, ptrdiff_t out_stride, size_t n);
typedef jm_quat_blend_fn *jm_quat_blend_kernel;

/* n packed float[3] Tait-Bryan angles <-> n float[4] quaternions (euler.c), either direction:
   axes[k] in 0..2, intrinsic 1 for R = R0 R1 R2 (0: R2 R1 R0), degrees 1 for degrees (0: radians). */
typedef void jm_euler_fn(const float *src, float *dst, size_t n, const int *axes, int intrinsic, int degrees);
typedef jm_euler_fn *jm_euler_kernel;

/* Sign continuity (continuity.c): n_frames frames of n_joints float[4] (or double[4]) quaternions,
   strides in bytes per frame and per joint; prev: the frame before the first, or NULL. */
typedef void jm_continuity_fn(const char *q, ptrdiff_t q_frame_stride, ptrdiff_t q_joint_stride, char *out,
                              ptrdiff_t out_frame_stride, ptrdiff_t out_joint_stride, const char *prev,
                              ptrdiff_t prev_joint_stride, size_t n_frames, size_t n_joints);
typedef jm_continuity_fn *jm_continuity_kernel;
/* double[4] quaternions a, b -> out with a float64 fraction per element (t_stride 0: one for all). */
typedef jm_quat_blend_fn jm_quat_blend_f64_fn;
typedef jm_quat_blend_f64_fn *jm_quat_blend_f64_kernel;

/* The same on packed double[3] angles and double[4] quaternions. */
typedef void jm_euler_f64_fn(const double *src, double *dst, size_t n, const int *axes, int intrinsic, int degrees);
typedef jm_euler_f64_fn *jm_euler_f64_kernel;

/* Element-wise rotation algebra (algebra.c): n records of a (a_stride bytes apart) and of b
   (b_stride; ignored by one-operand kernels) -> n records of out; any strides (0 repeats one
   record); flag: the kernel's option (rotate_vectors' inverse, the rotation vectors' degrees).
   out may be a or b itself when its records have the same size (each block is read first). */
typedef void jm_algebra_fn(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride, char *out,
                           ptrdiff_t out_stride, size_t n, int flag);
typedef jm_algebra_fn *jm_algebra_kernel;
/* The same with a result of two quads to two arrays: floats 0..3 of each result record to out
   (out_stride), 4..7 to out2 (out2_stride); either may be a itself, record for record (swing_twist). */
typedef void jm_algebra2_fn(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride, char *out,
                            ptrdiff_t out_stride, char *out2, ptrdiff_t out2_stride, size_t n, int flag);
typedef jm_algebra2_fn *jm_algebra2_kernel;
/* ------------------------------------------------------------- fitting (csrc/fit.c) -- */

/* Why a fitting job stopped early (jm_mean_job.error, jm_align_job.error); error_batch says where. */
#define JM_FIT_OK 0
#define JM_FIT_BAD_WEIGHT 1     /* a weight negative, NaN (quat_mean: or infinite) */
#define JM_FIT_ZERO_WEIGHTS 2   /* quat_mean: a set whose weights are all zero */
#define JM_FIT_TWO_INFINITE 3   /* align_vectors: more than one infinite weight in a set */
#define JM_FIT_ZERO_PRIMARY 4   /* align_vectors: a zero primary vector (infinite weight or one pair) */

/* The weighted mean rotation of n_batch sets of n_items quaternions (float[4] or double[4] per
   kernel, components contiguous): item i of set s at q + s * q_batch_stride + i * q_item_stride,
   its weight (double) at weights + s * w_batch_stride + i * w_item_stride (weights NULL: 1);
   n_batch results to out, one after another. Strides in bytes. */
typedef struct {
    const char *q;
    ptrdiff_t q_batch_stride, q_item_stride;
    const char *weights;
    ptrdiff_t w_batch_stride, w_item_stride;
    char *out;
    size_t n_batch, n_items;
    int error;          /* out: JM_FIT_OK or why it stopped */
    size_t error_batch; /* out: the set that stopped it */
} jm_mean_job;
typedef void jm_quat_mean_fn(jm_mean_job *job);
typedef jm_quat_mean_fn *jm_quat_mean_kernel;

/* The rotation that best maps vectors b onto a in each of n_batch sets of n_items pairs (float[3]
   or double[3] per kernel; set s at a + s * a_stride, its items packed), weights double per item
   (set s at weights + s * w_stride, items packed; NULL: 1). n_batch quaternions to quats and
   n_batch root-sum-square distances to rssd (both packed, the kernel's float type). */
typedef struct {
    const char *a, *b, *weights;
    ptrdiff_t a_stride, b_stride, w_stride;
    char *quats, *rssd;
    size_t n_batch, n_items;
    int error;             /* out: JM_FIT_OK or why it stopped */
    size_t error_batch;    /* out: the set that stopped it */
    size_t n_degenerate;   /* out: sets whose optimal rotation is not unique or poorly defined */
} jm_align_job;
typedef void jm_align_fn(jm_align_job *job);
typedef jm_align_fn *jm_align_kernel;

/* n uniformly distributed unit quaternions (float[4] or double[4] per kernel, packed, w >= 0)
   from the counter-based stream keyed by one uniform 64-bit word (the caller's bit generator's). */
typedef void jm_random_quats_fn(uint64_t key, char *out, size_t n);
typedef jm_random_quats_fn *jm_random_quats_kernel;
/* The compressed-clip decoder (codec.c, formats in codec_types.h): a whole clip's records from its
   streams (0 or a JM_CODEC_* error, *failed its stream), and a clip's tracks from their integers. */
typedef int jm_codec_decode_fn(const uint8_t *data, size_t size, const int64_t *table, size_t n_rows,
                               const jm_codec_track *tracks, size_t n_joints, size_t n_frames, void *scratch,
                               jm_joint_quat *out, size_t *failed);
typedef jm_codec_decode_fn *jm_codec_decode_kernel;
typedef void jm_codec_tracks_fn(const jm_codec_track *tracks, size_t n_joints, size_t n_frames, const int32_t *values,
                                jm_joint_quat *out);
typedef jm_codec_tracks_fn *jm_codec_tracks_kernel;

/* The kernels of one ISA path: a field per kernel of csrc/kernels.h, its name the kernel's. */
#define JM_TABLE_FIELD(name, kind, isa) jm_##kind##_kernel name;
typedef struct {
    const char *name; /* the path's, as in csrc/isas.h */
    JM_KERNELS(JM_TABLE_FIELD, _)
} jm_kernel_table;

/* The kernels of every path built for the target (jm_<name>_<isa>). */
#define JM_DECLARE_KERNEL(name, kind, isa) jm_##kind##_fn jm_##name##_##isa;
#define JM_DECLARE_ISA(isa) JM_KERNELS(JM_DECLARE_KERNEL, isa)
JM_ISA_LIST(JM_DECLARE_ISA)

/* The table of path i of JM_ISA_LIST (0 = scalar ... JM_NUM_ISAS - 1). */
const jm_kernel_table *jm_isa_table(int i);

/* Whether this CPU and OS can run path i (on x86: cpuid feature bits plus xgetbv register
   state; every path built for arm64 runs on every arm64 CPU). */
int jm_isa_supported(int i);

#endif /* JOINTMATH_H */
