/*
 * joint_blocks.h - one block of JM_W joint records (jm_joint_quat) interpolated at once, record
 * copies, the tail block's lanes and the software prefetch of long lists: what the full
 * (slerp.c) and the indexed (partial_body.c) joint-list kernels share. Compiled per ISA with its
 * includers.
 */
#ifndef JM_JOINT_BLOCKS_H
#define JM_JOINT_BLOCKS_H

#include "slerp_lanes.h"

/*
 * joints_block: one block of JM_W joint records: lane i is the record at x + i * stride, or with an index at
 * x + idx[i] * stride, for x = a, b, out. Every load happens before the first store, so out may
 * be a or b itself. The translation (all four floats) is (1 - t) a.t + t b.t; t = 1 gives the
 * arc's end, b.q or -b.q, and b.t exactly.
 * One block at a time, unlike the quaternion arrays' two groups: the fixed-t math is short, and
 * the raw vectors of a second block's records would not fit the registers (AVX-512 spilled;
 * docs/design/partial-body-scheduler.md#blocks).
 */
JM_INLINE void joints_block(int mode, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *o,
                            ptrdiff_t os, const intptr_t *restrict idx, const fixed_t *ft) {
    /* restrict: the stores to o never change the index, so it is not re-read after each */
    vf qa[1][4], qb[1][4], q[1][4], sign;
    voct ra, rb;
    const vf t = v_set1(ft->t), one_minus_t = v_sub(v_set1(1.0f), t);
    v_load_octs(a, as, idx, qa[0], &ra);
    v_load_octs(b, bs, idx, qb[0], &rb);
    blend_lanes(mode, 1, &t, ft, qa, qb, q, &sign);
    if (ft->t >= 1.0f) { /* the end of the arc: +-b.q exactly, b.t copied (the same branch for all blocks) */
        for (int k = 0; k < 4; k++)
            q[0][k] = v_xor(qb[0][k], sign);
        v_store_octs(o, os, idx, q[0], &rb);
        return;
    }
    for (int k = 0; k < JM_OCT_RAW; k++) /* the translations (and on some paths q, replaced below) */
        ra.v[k] = v_fmadd(t, rb.v[k], v_mul(one_minus_t, ra.v[k]));
    v_store_octs(o, os, idx, q[0], &ra);
}

_Static_assert(sizeof(jm_joint_quat) == 32, "joint records are copied with jm_copy_record32");

/* n records (32 bytes each) from src to dst, strides in bytes; nothing when they are the same. */
static void copy_records(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    if (src == dst && ss == ds)
        return;
    if (ss == rec && ds == rec) {
        memcpy(dst, src, n * sizeof(jm_joint_quat));
        return;
    }
    for (size_t i = 0; i < n; i++)
        jm_copy_record32(dst + (ptrdiff_t)i * ds, src + (ptrdiff_t)i * ss);
}

/*
 * The lanes of a last, partial block of r < JM_W records: positions 0..r-1 of `first`, the
 * spare lanes repeating the last one (same record, same result: stores stay in bounds).
 */
JM_INLINE void tail_index(const intptr_t *first, size_t r, intptr_t idx[JM_W]) {
    for (size_t k = 0; k < JM_W; k++) {
        size_t j = k < r ? k : r - 1;
        idx[k] = first ? first[j] : (intptr_t)j;
    }
}

/*
 * Software prefetch for lists beyond the L2 cache (PREFETCH_MIN_RECORDS records or more, 1 MB a
 * list, contiguous): the records PREFETCH_AHEAD positions ahead of a block are requested from
 * both inputs while the block computes (the hardware prefetchers alone left memory and math
 * largely serial). With an index, within a frame only (partial_body.c picks which records).
 * In place (out is a), on AVX2 and AVX-512, lists of PREFETCH_FAR_MIN_RECORDS records or more (4
 * MiB a list) also request the lines PREFETCH_FAR records ahead into L2: without a third list to
 * write, the near requests alone hold the L1's miss buffers for a whole memory round trip. With
 * a separate out, on SSE, or over lists that fit L3 the far requests cost more than they hide.
 * Evidence: docs/design/partial-body-scheduler.md#software-prefetch.
 */
#define PREFETCH_MIN_RECORDS 32768
#define PREFETCH_AHEAD 64

#define PREFETCH_FAR JM_PREFETCH_FAR_BYTES /* per path: 256 on AVX2 and AVX-512, else 0 (simd/) */
#define PREFETCH_FAR_MIN_RECORDS 131072

/* 1 when a call over `records` records of contiguous lists takes the far requests (see PREFETCH_FAR) */
JM_INLINE int far_requests(int in_place, size_t records) {
    return PREFETCH_FAR && in_place && records >= PREFETCH_FAR_MIN_RECORDS;
}

/* requests the cache line at p into L1, or into L2 (to_l2) */
JM_INLINE void prefetch_line(const char *p, int to_l2) {
    if (to_l2)
        JM_PREFETCH_L2(p);
    else
        JM_PREFETCH(p);
}

/* requests the cache lines of a's records [from, to) and of b's `lead` records further on (those
   below n; none when b is NULL) into L1, or into L2 (to_l2), one loop for both lists (records of
   32 bytes, two a line; see PREFETCH_FAR_BLEND_LEAD); returns the position after the last record
   requested (from when to <= from) */
JM_INLINE size_t prefetch_records_lead(const char *a, const char *b, size_t from, size_t to, size_t lead, size_t n,
                                       int to_l2) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    for (; from < to; from += 2) {
        prefetch_line(a + (ptrdiff_t)from * rec, to_l2);
        if (b && from + lead < n)
            prefetch_line(b + (ptrdiff_t)(from + lead) * rec, to_l2);
    }
    return from;
}

/* prefetch_records_lead with no lead: both lists' records [from, to) */
JM_INLINE size_t prefetch_records(const char *a, const char *b, size_t from, size_t to, int to_l2) {
    return prefetch_records_lead(a, b, from, to, 0, to, to_l2);
}

/* the loop position below which the records `ahead` .. ahead + JM_W - 1 further on exist (of n),
   or 0 (no prefetch) when the call has fewer than PREFETCH_MIN_RECORDS records */
JM_INLINE size_t prefetch_end(size_t n, size_t records, size_t ahead) {
    return records >= PREFETCH_MIN_RECORDS && n >= ahead + JM_W ? n - ahead - JM_W + 1 : 0;
}

#endif /* JM_JOINT_BLOCKS_H */
