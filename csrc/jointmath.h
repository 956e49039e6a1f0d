/*
 * jointmath.h - record layouts, kernel prototypes and the dispatch table.
 *
 * Every kernel exists once per ISA path built for this CPU architecture (suffix _scalar, and
 * _sse, _avx2, _avx512 on x86 or _neon on arm64), built from one source file per kernel family;
 * dispatch.c picks one set at import time.
 */
#ifndef JOINTMATH_H
#define JOINTMATH_H

#include <stddef.h>
#include <stdint.h>

/* The seeds' JointQuat / JointMat, byte for byte (the Python dtypes mirror these). */
typedef struct {
    float q[4]; /* rotation x, y, z, w */
    float t[4]; /* translation x, y, z; the 4th lane is 0 */
} jm_joint_quat;

typedef struct {
    float m[3][4]; /* row-major 3x3 rotation, translation in column 3 */
} jm_joint_mat;

/* A record-to-record kernel: n records from src to dst, strides in bytes. */
typedef void (*jm_map_kernel)(const char *src, ptrdiff_t src_stride, char *dst, ptrdiff_t dst_stride,
                              size_t n);

/* n contiguous float[4] -> n codes (uint32 or uint64); returns how many quaternions were zero or
   non-finite and sets *first_invalid to the first one's index (n when none). */
typedef size_t (*jm_pack_kernel)(const float *q, void *codes, size_t n, size_t *first_invalid);

/* The same from n contiguous double[4]. */
typedef size_t (*jm_pack_f64_kernel)(const double *q, void *codes, size_t n, size_t *first_invalid);

/* n contiguous codes -> n unit quaternions float[4]. */
typedef void (*jm_unpack_kernel)(const void *codes, float *q, size_t n);

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

typedef void (*jm_extract_kernel)(const jm_extract_job *job);

/* Two record arrays to one: out[i] = f(a[i], b[i]), strides in bytes (compose.c). */
typedef void (*jm_binary_kernel)(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride, char *out,
                                 ptrdiff_t out_stride, size_t n);

/*
 * Forward kinematics (compose.c): n_frames C-contiguous frames of n_joints jm_joint_quat local
 * transforms -> the same frames of jm_joint_mat world transforms. The joints' world transforms
 * are kept in numbered slots of `scratch` while their children may read them (world_slots in
 * jointmath/_compose.c): joint j writes slot[j] and reads parent_slot[j], the slot of its
 * parent, or is a root (parent_slot[j] = -1). scratch: JM_HIERARCHY_SCRATCH(n_slots) bytes, any
 * alignment.
 */
typedef void (*jm_hierarchy_kernel)(const char *joints, char *world, size_t n_frames, size_t n_joints,
                                    const intptr_t *parent_slot, const intptr_t *slot, void *scratch);
#define JM_MAX_LANES 16 /* the widest path's floats per vector (AVX-512) */
#define JM_HIERARCHY_SCRATCH(n_slots) ((size_t)(n_slots) * 12 * JM_MAX_LANES * sizeof(float) + 64)

/* Joint records a, b -> out (32-byte jm_joint_quat each, strides in bytes) at fraction t. */
typedef void (*jm_blend_kernel)(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride, char *out,
                                ptrdiff_t out_stride, size_t n, float t);

/* The same on the joints index[0..n_index) of n_frames frames of n_joints records each; index
   strictly increasing within [0, n_joints) (checked by a jm_index_kernel). */
typedef void (*jm_blend_indexed_kernel)(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride,
                                        char *out, ptrdiff_t out_stride, size_t n_frames, size_t n_joints,
                                        const intptr_t *index, size_t n_index, float t);

/* index[0..n) copied to copy[0..n) (copy may be index); 1 when the values copied are strictly
   increasing within [0, n_joints), else 0. */
typedef int (*jm_index_kernel)(const intptr_t *index, intptr_t *copy, size_t n, size_t n_joints);

/* float[4] quaternions a, b -> out with a float32 fraction per element (t_stride 0: one for all). */
typedef void (*jm_quat_blend_kernel)(const char *a, ptrdiff_t a_stride, const char *b, ptrdiff_t b_stride,
                                     const char *t, ptrdiff_t t_stride, char *out, ptrdiff_t out_stride, size_t n);

/* n packed float[3] Tait-Bryan angles <-> n float[4] quaternions (euler.c), either direction:
   axes[k] in 0..2, intrinsic 1 for R = R0 R1 R2 (0: R2 R1 R0), degrees 1 for degrees (0: radians). */
typedef void (*jm_euler_kernel)(const float *src, float *dst, size_t n, const int *axes, int intrinsic, int degrees);

/* Sign continuity (continuity.c): n_frames frames of n_joints float[4] (or double[4]) quaternions,
   strides in bytes per frame and per joint; prev: the frame before the first, or NULL. */
typedef void (*jm_continuity_kernel)(const char *q, ptrdiff_t q_frame_stride, ptrdiff_t q_joint_stride, char *out,
                                     ptrdiff_t out_frame_stride, ptrdiff_t out_joint_stride, const char *prev,
                                     ptrdiff_t prev_joint_stride, size_t n_frames, size_t n_joints);
/* double[4] quaternions a, b -> out with a float64 fraction per element (t_stride 0: one for all). */
typedef jm_quat_blend_kernel jm_quat_blend_f64_kernel;

/* The same on packed double[3] angles and double[4] quaternions. */
typedef void (*jm_euler_f64_kernel)(const double *src, double *dst, size_t n, const int *axes, int intrinsic,
                                    int degrees);

/* The kernels of one ISA. */
typedef struct {
    const char *name;
    jm_map_kernel joints_to_mats;  /* jm_joint_quat -> jm_joint_mat */
    jm_map_kernel mats_to_joints;  /* jm_joint_mat -> jm_joint_quat */
    jm_map_kernel quats_to_matrices; /* float[4] -> float[3][3] */
    jm_map_kernel matrices_to_quats; /* float[3][3] -> float[4] */
    jm_pack_kernel pack_quats32;     /* pack.c */
    jm_pack_kernel pack_quats64;
    jm_unpack_kernel unpack_quats32;
    jm_unpack_kernel unpack_quats64;
    jm_extract_kernel extract_mats;     /* rotation of jm_joint_mat's 3x3 part -> float[4] */
    jm_extract_kernel extract_matrices; /* rotation of float[3][3] -> float[4] */
    jm_binary_kernel compose_mats;      /* jm_joint_mat a * b -> jm_joint_mat */
    jm_hierarchy_kernel forward_kinematics; /* jm_joint_quat frames -> world jm_joint_mat */
    jm_blend_kernel slerp_joints;                 /* interp.c */
    jm_blend_kernel lerp_joints;
    jm_blend_indexed_kernel slerp_joints_indexed;
    jm_blend_indexed_kernel lerp_joints_indexed;
    jm_index_kernel copy_index;
    jm_quat_blend_kernel slerp_quats;
    jm_quat_blend_kernel nlerp_quats;
    jm_euler_kernel euler_to_quats;
    jm_euler_kernel quats_to_euler;
    jm_continuity_kernel make_continuous;     /* continuity.c, float[4] */
    jm_continuity_kernel make_continuous_f64; /* double[4] */
    jm_map_kernel quats_to_matrices_f64; /* double[4] -> double[3][3] (convert.c) */
    jm_map_kernel matrices_to_quats_f64; /* double[3][3] -> double[4] */
    jm_euler_f64_kernel euler_to_quats_f64; /* euler.c */
    jm_euler_f64_kernel quats_to_euler_f64;
    jm_quat_blend_f64_kernel slerp_quats_f64; /* double[4] quaternions, double t (interp.c) */
    jm_quat_blend_f64_kernel nlerp_quats_f64;
    jm_extract_kernel extract_matrices_f64; /* rotation of double[3][3] -> double[4] (extract.c) */
    jm_pack_f64_kernel pack_quats32_f64;    /* double[4] -> codes (pack.c) */
    jm_pack_f64_kernel pack_quats64_f64;
} jm_kernel_table;

#define JM_DECLARE_ISA(isa)                                                                      \
    void jm_joints_to_mats_##isa(const char *, ptrdiff_t, char *, ptrdiff_t, size_t);           \
    void jm_mats_to_joints_##isa(const char *, ptrdiff_t, char *, ptrdiff_t, size_t);           \
    void jm_quats_to_matrices_##isa(const char *, ptrdiff_t, char *, ptrdiff_t, size_t);        \
    void jm_matrices_to_quats_##isa(const char *, ptrdiff_t, char *, ptrdiff_t, size_t);        \
    size_t jm_pack_quats32_##isa(const float *, void *, size_t, size_t *);                       \
    size_t jm_pack_quats64_##isa(const float *, void *, size_t, size_t *);                       \
    void jm_unpack_quats32_##isa(const void *, float *, size_t);                                 \
    void jm_unpack_quats64_##isa(const void *, float *, size_t);                                 \
    void jm_extract_mats_##isa(const jm_extract_job *);                                           \
    void jm_extract_matrices_##isa(const jm_extract_job *);                                       \
    void jm_compose_mats_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, char *, ptrdiff_t, size_t); \
    void jm_forward_kinematics_##isa(const char *, char *, size_t, size_t, const intptr_t *, const intptr_t *,    \
                                    void *);       \
    void jm_slerp_joints_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, char *, ptrdiff_t, size_t,  \
                               float);                                                           \
    void jm_lerp_joints_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, char *, ptrdiff_t, size_t,   \
                              float);                                                            \
    void jm_slerp_joints_indexed_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, char *, ptrdiff_t,  \
                                       size_t, size_t, const intptr_t *, size_t, float);         \
    void jm_lerp_joints_indexed_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, char *, ptrdiff_t,   \
                                      size_t, size_t, const intptr_t *, size_t, float);          \
    int jm_copy_index_##isa(const intptr_t *, intptr_t *, size_t, size_t);                      \
    void jm_slerp_quats_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, const char *, ptrdiff_t,     \
                              char *, ptrdiff_t, size_t);                                        \
    void jm_nlerp_quats_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, const char *, ptrdiff_t,     \
                              char *, ptrdiff_t, size_t);                                        \
    void jm_euler_to_quats_##isa(const float *, float *, size_t, const int *, int, int);         \
    void jm_quats_to_euler_##isa(const float *, float *, size_t, const int *, int, int);         \
    void jm_make_continuous_##isa(const char *, ptrdiff_t, ptrdiff_t, char *, ptrdiff_t, ptrdiff_t, const char *, \
                                  ptrdiff_t, size_t, size_t);                                    \
    void jm_make_continuous_f64_##isa(const char *, ptrdiff_t, ptrdiff_t, char *, ptrdiff_t, ptrdiff_t,          \
                                      const char *, ptrdiff_t, size_t, size_t);   \
    void jm_quats_to_matrices_f64_##isa(const char *, ptrdiff_t, char *, ptrdiff_t, size_t);    \
    void jm_matrices_to_quats_f64_##isa(const char *, ptrdiff_t, char *, ptrdiff_t, size_t);    \
    void jm_euler_to_quats_f64_##isa(const double *, double *, size_t, const int *, int, int);   \
    void jm_quats_to_euler_f64_##isa(const double *, double *, size_t, const int *, int, int);   \
    void jm_slerp_quats_f64_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, const char *, ptrdiff_t, \
                                  char *, ptrdiff_t, size_t);                                    \
    void jm_nlerp_quats_f64_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, const char *, ptrdiff_t, \
                                  char *, ptrdiff_t, size_t);   \
    void jm_extract_matrices_f64_##isa(const jm_extract_job *);                                   \
    size_t jm_pack_quats32_f64_##isa(const double *, void *, size_t, size_t *);                  \
    size_t jm_pack_quats64_f64_##isa(const double *, void *, size_t, size_t *);

/*
 * The paths built for the target architecture, in order from the baseline up (setup.py compiles
 * the same list): JM_ISA_LIST(X) applies X to each.
 */
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#define JM_ARCH_X86 1
#define JM_ISA_LIST(X) X(scalar) X(sse) X(avx2) X(avx512)
#elif defined(__aarch64__) || defined(_M_ARM64)
#define JM_ISA_LIST(X) X(scalar) X(neon)
#else
#define JM_ISA_LIST(X) X(scalar)
#endif
#define JM_COUNT_ISA(isa) +1
#define JM_NUM_ISAS (0 JM_ISA_LIST(JM_COUNT_ISA))

JM_ISA_LIST(JM_DECLARE_ISA)

/* The table of path i of JM_ISA_LIST (0 = scalar ... JM_NUM_ISAS - 1). */
const jm_kernel_table *jm_isa_table(int i);

/* Whether this CPU and OS can run path i (on x86: cpuid feature bits plus xgetbv register
   state; every path built for arm64 runs on every arm64 CPU). */
int jm_isa_supported(int i);

#endif /* JOINTMATH_H */
