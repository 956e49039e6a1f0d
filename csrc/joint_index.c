/*
 * joint_index.c - the validation of a joint index for the indexed kernels (partial_body.c): a
 * copy made and checked in one pass. Compiled once per ISA.
 */
#include "jointmath.h"
#include "simd/common.h"

/*
 * jm_copy_index: copies index[0..n) to copy[0..n) (copy may be index itself) and returns 1 when
 * the values copied are strictly increasing within [0, n_joints) (what the indexed kernels of
 * partial_body.c require; the usual index of partial-body blending), else 0 (also for a negative
 * value, a repeat or a step down; n = 0 gives 1). The check is made on the values as
 * they were copied (each read once, compared in registers), never on a second read of index:
 * another thread may write index meanwhile, and the kernels then read the copy, which is what
 * was checked. It runs on every indexed call: branch-free, AVX2 / AVX-512 four / eight entries
 * per step in registers, SSE4.1 four in two registers; the scalar and NEON paths copy a chunk,
 * then check the copy (jm_copy_increasing, simd/; docs/design/joint-index.md).
 */
int JM_FN(jm_copy_index)(const intptr_t *index, intptr_t *copy, size_t n, size_t n_joints) {
    return jm_copy_increasing(index, copy, n) && (!n || (size_t)copy[n - 1] < n_joints);
}
