/*
 * joint_index.c - the validation of a joint index for the indexed kernels (partial_body.c): a
 * copy made and checked in one pass. Compiled once per ISA.
 */
#include "jointmath.h"
#include "simd.h"

#include <string.h>

/*
 * jm_copy_index: copies index[0..n) to copy[0..n) (copy may be index itself) and returns 1 when
 * the values copied are strictly increasing within [0, n_joints) (what the indexed kernels of
 * partial_body.c require; the usual index of partial-body blending), else 0 (also for a negative
 * value, a repeat or a step down; n = 0 gives 1). The check is made on the values as
 * they were copied (each read once, compared in registers), never on a second read of index:
 * another thread may write index meanwhile, and the kernels then read the copy, which is what
 * was checked. It runs on every indexed call: branch-free, AVX2 / AVX-512 four / eight entries
 * per step in registers, SSE4.1 four in two registers; the scalar and NEON paths copy a chunk,
 * then check the copy (docs/design/joint-index.md).
 */
#define INDEX_CHUNK 512 /* entries (4 KB) */
int JM_FN(jm_copy_index)(const intptr_t *index, intptr_t *copy, size_t n, size_t n_joints) {
    size_t k = 0;
    uint64_t bad = 0;
#if JM_ISA == JM_ISA_AVX512
    __m512i last = _mm512_set1_epi64(-1); /* the entry before the first: index[0] > -1 */
    __mmask8 not_above = 0;
    for (; k + 8 <= n; k += 8) {
        const __m512i v = _mm512_loadu_si512((const void *)(index + k));
        _mm512_storeu_si512((void *)(copy + k), v);
        not_above |= _mm512_cmple_epi64_mask(v, _mm512_alignr_epi64(v, last, 7)); /* last[7], v[0..6] */
        last = v;
    }
    bad = not_above;
#elif JM_ISA == JM_ISA_AVX2
    __m256i last = _mm256_set1_epi64x(-1), above = _mm256_set1_epi64x(-1);
    for (; k + 4 <= n; k += 4) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(index + k));
        _mm256_storeu_si256((__m256i *)(copy + k), v);
        /* last[3], v[0], v[1], v[2]: last[2..3] | v[0..1], then per 128-bit lane 8 bytes along */
        const __m256i before = _mm256_alignr_epi8(v, _mm256_permute2x128_si256(last, v, 0x21), 8);
        above = _mm256_and_si256(above, _mm256_cmpgt_epi64(v, before));
        last = v;
    }
    bad = _mm256_movemask_epi8(above) != -1;
#endif
#if JM_ISA == JM_ISA_AVX2 || JM_ISA == JM_ISA_AVX512
    intptr_t previous = k ? copy[k - 1] : -1; /* the copy: no second read of index */
    for (; k < n; k++) {
        const intptr_t v = index[k];
        copy[k] = v;
        bad |= v <= previous;
        previous = v;
    }
#else
    /* no 64-bit compare before SSE4.2 (nor on the scalar path): the check is made on unsigned
       differences. A strictly increasing copy of values in [0, 2^62) has every copy[k] -
       copy[k - 1] - 1 and every copy[k] below 2^62; anything else (a larger or negative value, a
       repeat, a step down) sets one of the two top bits (values of 2^62 and more, possible only
       with joint_index's n_joints, then take the caller's full check). */
    uint64_t top_bits = 0;
#if JM_ISA == JM_ISA_SSE
    /* four entries a step in registers, as AVX2: about twice as fast as the copy-then-check of
       the scalar path on long indexes (docs/design/joint-index.md) */
    __m128i last = _mm_set1_epi64x(-1), top = _mm_setzero_si128();
    const __m128i one = _mm_set1_epi64x(1);
    for (; k + 4 <= n; k += 4) {
        const __m128i v0 = _mm_loadu_si128((const __m128i *)(index + k));
        const __m128i v1 = _mm_loadu_si128((const __m128i *)(index + k + 2));
        _mm_storeu_si128((__m128i *)(copy + k), v0);
        _mm_storeu_si128((__m128i *)(copy + k + 2), v1);
        const __m128i step0 = _mm_sub_epi64(v0, _mm_alignr_epi8(v0, last, 8)); /* v0 - (last[1], v0[0]) */
        const __m128i step1 = _mm_sub_epi64(v1, _mm_alignr_epi8(v1, v0, 8));
        top = _mm_or_si128(top, _mm_or_si128(_mm_or_si128(_mm_sub_epi64(step0, one), _mm_sub_epi64(step1, one)),
                                             _mm_or_si128(v0, v1)));
        last = v1;
    }
    top_bits = (uint64_t)_mm_cvtsi128_si64(_mm_or_si128(top, _mm_unpackhi_epi64(top, top)));
    for (; k < n; k++) { /* the last entries of n not a multiple of 4 */
        const intptr_t v = index[k];
        copy[k] = v;
        top_bits |= ((uint64_t)v - (uint64_t)(k ? copy[k - 1] : -1) - 1) | (uint64_t)v;
    }
#else
    /* chunks in L1 are copied, then the copy checked (GCC vectorises the check) */
    for (; k < n; k += INDEX_CHUNK) {
        const size_t len = n - k < INDEX_CHUNK ? n - k : INDEX_CHUNK;
        if (copy != index)
            memcpy(copy + k, index + k, len * sizeof(intptr_t));
        const intptr_t *chunk = copy + k;
        const uint64_t previous = k ? (uint64_t)chunk[-1] : (uint64_t)-1;
        top_bits |= ((uint64_t)chunk[0] - previous - 1) | (uint64_t)chunk[0];
        for (size_t j = 1; j < len; j++)
            top_bits |= ((uint64_t)chunk[j] - (uint64_t)chunk[j - 1] - 1) | (uint64_t)chunk[j];
    }
#endif
    bad = top_bits >> 62;
#endif
    return !bad && (!n || (size_t)copy[n - 1] < n_joints);
}
