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
 * One block of JM_W joint records: lane i is the record at x + i * stride, or with an index at
 * x + idx[i] * stride, for x = a, b, out. Every load happens before the first store, so out may
 * be a or b itself. The translation (all four floats) is (1 - t) a.t + t b.t; t = 1 gives the
 * arc's end, b.q or -b.q, and b.t exactly.
 * One block at a time, unlike the quaternion arrays' two groups: the fixed-t math is short, and
 * the records' raw vectors of a second block would not fit the registers (on AVX-512, 2 x 16
 * live vectors: the spills made the indexed blocks ~15 % slower, measured).
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
 * list): the records PREFETCH_AHEAD positions ahead of a block are requested from both inputs
 * while the block computes. The hardware prefetchers alone left the memory and the math of a
 * block largely serial (benchmarks/bench_interp.py before and after, 1,048,576 joints, avx2 on
 * a first-generation Zen EPYC: the full slerp 8.9 -> 7.4 ns/joint, the every-second-joint index
 * in place 8.9 -> 7.0; 1,024 joints skip it). Contiguous lists only; with an index, within a
 * frame only, and see blend_joints_indexed for which records.
 */
#define PREFETCH_MIN_RECORDS 32768
#define PREFETCH_AHEAD 64

/*
 * In place (out is a), the AVX2 and AVX-512 paths also request the lines PREFETCH_FAR records
 * ahead into L2 (JM_PREFETCH_L2), beside the requests PREFETCH_AHEAD records ahead into L1.
 * Without a third list to write, the core's requests to memory are the limit: the near requests
 * alone hold the L1's miss buffers for a whole memory round trip (a profile put a third of the
 * indexed kernel's samples on its prefetch instructions). 1,048,576 joints, ns per joint, medians
 * of 7 runs alternating the builds (benchmarks/README.md's machine): the full call in place avx2
 * 3.41 -> 2.60, avx512 3.66 -> 2.54; every second joint in place 3.95 -> 2.85 and 4.04 -> 2.99; a
 * random half in place 3.70 -> 2.69 and 3.98 -> 2.92 (128 records ahead: about half the gain; 512:
 * no better than 256). With a separate out= the far requests made every call slower (the writes
 * to out need the memory too: every second joint 3.5 -> 4.6 on avx2), and on sse in place they
 * cost 5-7 % (the full call 4.10 -> 4.39): neither takes them. The L2 hint for the near requests
 * of a call with out= speeds the full call (avx2 4.2-5.2 -> 3.2-3.6 ns) but not the indexed
 * ones (every second joint 3.5-4.3 -> 3.4-4.1), which then cost more than the full call: left
 * as it was (benchmarks/README.md).
 * Only lists of PREFETCH_FAR_MIN_RECORDS records or more take them (4 MiB a list). Over a clip
 * in L3 they cost more than they hid: 2,752 frames of 31 joints (85,312 records, 2.7 MB a list;
 * partial_body_kernels.sh with FRAME_JOINTS=31, both builds in both orders, 6 runs) without them,
 * the full call in place 0.88-0.96 of its time with them, every second joint in place 0.76-0.91
 * of its time, and over the full call: avx2 0.83-1.07 -> 0.71-0.92, avx512 0.85-1.22 -> 0.72-1.06;
 * a random half (4 runs) 0.68-0.83 -> 0.60-0.66 and 0.71-0.98 -> 0.59-0.81. At 131,072 records in one
 * frame every second joint in place cost more without them (avx2 1.03-1.29 of the full call
 * against 0.89-0.96, avx512 1.15-1.45 against 0.92-1.09; the sparser indexes less), at 262,144
 * more still (avx2 1.31-1.41 against 1.12-1.15): lists from 4 MiB on keep them (two runs each,
 * benchmarks/README.md).
 */
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
