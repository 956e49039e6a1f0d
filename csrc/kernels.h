/*
 * kernels.h - the kernels, listed once.
 *
 * JM_KERNELS(X, isa) applies X(name, kind, isa) to every kernel, in the order of the dispatch
 * table: the kernel is jm_<name>_<isa> (one per ISA path, csrc/isas.h), of the function type
 * jm_<kind>_fn, reached through the field jm_kernel_table.<name> (csrc/jointmath.h, where the
 * kinds' types and the contracts of their arguments are). From this list jointmath.h generates
 * the table's fields and every path's prototypes, and dispatch.c the tables themselves.
 */
#ifndef JM_KERNELS_H
#define JM_KERNELS_H

#define JM_KERNELS(X, isa)                                                                         \
    X(joints_to_mats, map, isa)            /* jm_joint_quat -> jm_joint_mat (convert.c) */         \
    X(mats_to_joints, map, isa)            /* jm_joint_mat -> jm_joint_quat */                     \
    X(quats_to_matrices, map, isa)         /* float[4] -> float[3][3] */                           \
    X(matrices_to_quats, map, isa)         /* float[3][3] -> float[4] */                           \
    X(pack_quats32, pack, isa)             /* float[4] -> uint32 codes (pack.c) */                 \
    X(pack_quats64, pack, isa)             /* float[4] -> uint64 codes */                          \
    X(unpack_quats32, unpack, isa)         /* uint32 codes -> float[4] */                          \
    X(unpack_quats64, unpack, isa)         /* uint64 codes -> float[4] */                          \
    X(extract_mats, extract, isa)          /* rotation of jm_joint_mat's 3x3 part -> float[4] (extract.c) */ \
    X(extract_matrices, extract, isa)      /* rotation of float[3][3] -> float[4] */               \
    X(compose_mats, binary, isa)           /* jm_joint_mat a * b -> jm_joint_mat (compose.c) */    \
    X(forward_kinematics, hierarchy, isa)  /* jm_joint_quat frames -> world jm_joint_mat */        \
    X(slerp_joints, blend, isa)            /* jm_joint_quat records (slerp.c) */                   \
    X(lerp_joints, blend, isa)                                                                     \
    X(slerp_joints_indexed, blend_indexed, isa) /* the joints of an index (partial_body.c) */      \
    X(lerp_joints_indexed, blend_indexed, isa)                                                     \
    X(copy_index, index, isa)              /* the index, copied and checked (joint_index.c) */     \
    X(slerp_quats, quat_blend, isa)        /* float[4] quaternions, float t */                     \
    X(nlerp_quats, quat_blend, isa)                                                                \
    X(euler_to_quats, euler, isa)          /* float[3] angles -> float[4] (euler.c) */             \
    X(quats_to_euler, euler, isa)          /* float[4] -> float[3] angles */                       \
    X(make_continuous, continuity, isa)    /* float[4] (continuity.c) */                           \
    X(make_continuous_f64, continuity, isa) /* double[4] */                                        \
    X(quats_to_matrices_f64, map, isa)     /* double[4] -> double[3][3] (convert.c) */             \
    X(matrices_to_quats_f64, map, isa)     /* double[3][3] -> double[4] */                         \
    X(euler_to_quats_f64, euler_f64, isa)  /* double[3] angles -> double[4] (euler.c) */           \
    X(quats_to_euler_f64, euler_f64, isa)  /* double[4] -> double[3] angles */                     \
    X(slerp_quats_f64, quat_blend_f64, isa) /* double[4] quaternions, double t (slerp.c) */        \
    X(nlerp_quats_f64, quat_blend_f64, isa)                                                        \
    X(extract_matrices_f64, extract, isa)  /* rotation of double[3][3] -> double[4] (extract.c) */ \
    X(pack_quats32_f64, pack_f64, isa)     /* double[4] -> uint32 codes (pack.c) */                \
    X(pack_quats64_f64, pack_f64, isa)     /* double[4] -> uint64 codes */                         \
    X(pack_snorm16, pack, isa)             /* float[4] -> int16[4], glTF's normalized (pack.c) */  \
    X(quat_multiply, algebra, isa)         /* float[4] p * q (algebra.c) */                        \
    X(quat_conjugate, algebra, isa)                                                                \
    X(quat_inverse, algebra, isa)                                                                  \
    X(rotate_vectors, algebra, isa)        /* float[4], float[3] -> float[3] */                    \
    X(quats_to_rotvecs, algebra, isa)      /* float[4] -> float[3] */                              \
    X(rotvecs_to_quats, algebra, isa)      /* float[3] -> float[4] */                              \
    X(quat_angles, algebra, isa)           /* float[4] -> float */                                 \
    X(quat_angles_between, algebra, isa)   /* float[4], float[4] -> float */                       \
    X(swing_twist, algebra2, isa)          /* float[4], float[3] -> float[4], float[4] */          \
    X(quats_to_6d, algebra, isa)           /* float[4] -> float[6] */                              \
    X(sixd_to_quats, algebra, isa)         /* float[6] -> float[4] */                              \
    X(quat_multiply_f64, algebra, isa)     /* the same on doubles */                               \
    X(quat_conjugate_f64, algebra, isa)                                                            \
    X(quat_inverse_f64, algebra, isa)                                                              \
    X(rotate_vectors_f64, algebra, isa)                                                            \
    X(quats_to_rotvecs_f64, algebra, isa)                                                          \
    X(rotvecs_to_quats_f64, algebra, isa)                                                          \
    X(quat_angles_f64, algebra, isa)                                                               \
    X(quat_angles_between_f64, algebra, isa)                                                       \
    X(swing_twist_f64, algebra2, isa)                                                              \
    X(quats_to_6d_f64, algebra, isa)                                                               \
    X(sixd_to_quats_f64, algebra, isa)                                                             \
    X(quat_mean, quat_mean, isa)           /* float[4] sets -> mean float[4] (fit.c) */            \
    X(quat_mean_f64, quat_mean, isa)       /* double[4] sets -> mean double[4] */                  \
    X(align_vectors, align, isa)           /* float[3] pairs -> float[4] + rssd */                 \
    X(align_vectors_f64, align, isa)       /* double[3] pairs -> double[4] + rssd */               \
    X(random_quats, random_quats, isa)     /* a bit stream -> uniform float[4] */                  \
    X(random_quats_f64, random_quats, isa) /* a bit stream -> uniform double[4] */                 \
    X(codec_decode, codec_decode, isa)     /* a compressed clip's streams -> jm_joint_quat */      \
    X(codec_tracks, codec_tracks, isa)     /* a compressed clip's integers -> jm_joint_quat */

#define JM_COUNT_KERNEL(name, kind, isa) +1
#define JM_NUM_KERNELS (0 JM_KERNELS(JM_COUNT_KERNEL, _))

#endif /* JM_KERNELS_H */
