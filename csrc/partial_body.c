/*
 * partial_body.c - slerp and nlerp of the joints at an index in every frame of two joint lists,
 * the others copied (partial-body blending): the memory scheduler that picks, per call and per
 * block, how the selected records are read and written, which records are copied and which
 * cache lines are requested ahead. The math per lane is joint_blocks.h's, as in the full call.
 * Compiled once per ISA.
 */
#include "joint_blocks.h"

#include <string.h>

/*
 * The records of a frame from position `next` up to index[m - 1], except index[0..m) itself
 * (strictly increasing), from a to o; returns the position after index[m - 1] (the next
 * `next`). Called block by block, the unselected records are copied while their cache lines
 * are loaded for the selected ones.
 */
JM_INLINE size_t copy_gaps(const char *a, ptrdiff_t as, char *o, ptrdiff_t os, const intptr_t *index, size_t m,
                           size_t next) {
    /* record by record, no memcpy call: a call in the block loop would make every vector
       register live across it go to the stack */
    for (size_t k = 0; k < m; k++) {
        for (; next < (size_t)index[k]; next++)
            jm_copy_record32(o + (ptrdiff_t)next * os, a + (ptrdiff_t)next * as);
        next++;
    }
    return next;
}

/*
 * copy_gaps for a block of JM_W selected records of contiguous lists, before the block's stores.
 * copy_gaps' loop tests follow the gaps; the branch predictor learns them when they are all equal
 * (every second or third joint, a run) or the index is short enough to be learnt whole (fewer than
 * SPAN_COPY_MIN_INDEX entries, used again in every call and frame). Other gaps (a random subset of
 * a long list) would mispredict about once per selected record, and the lost work and memory
 * requests cost more than copying every record up to the block's last without a test (the
 * block's stores then replace the selected ones): a random half of 1,048,576 joints with a
 * separate out went from 1.49 to 1.14 of the full call on sse, 1.33 to 1.26 on avx2, 1.19 to 0.94
 * on avx512 (medians of 15 rounds, benchmarks/README.md's machine). A random half of 1,024
 * joints keeps copy_gaps (0.70 of the full call on sse; 0.80 copying the spans).
 */
#define SPAN_COPY_MIN_INDEX 4096
JM_INLINE size_t copy_block_gaps(const char *a, char *o, const intptr_t *index, size_t next, int long_index) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    /* (one lane: a block has no gaps of its own; index[1] may lie past the index) */
    if (!long_index || JM_W == 1 || index[JM_W - 1] - index[0] == (JM_W - 1) * (index[1] - index[0]))
        return copy_gaps(a, rec, o, rec, index, JM_W, next);
    for (const size_t end = (size_t)index[JM_W - 1] + 1; next < end; next++)
        jm_copy_record32(o + (ptrdiff_t)next * rec, a + (ptrdiff_t)next * rec);
    return next;
}

/*
 * An index in place on AVX2 / AVX-512 (contiguous_blocks' span requests) requests `blend`'s lines
 * ahead of those of `joints` (the list it reads and writes): into L2 PREFETCH_FAR_BLEND_LEAD
 * records further, into L1 PREFETCH_BLEND_LEAD further. In place, over the full call in place (the
 * full call unchanged), runs of benchmarks/partial_body_numpy.py (11-21 rounds, the two lists in
 * one buffer 0, 64 or 1,024 KiB apart and as NumPy places them; benchmarks/README.md's machine),
 * ranges (medians):
 *   the L2 lead of 512, 28 runs: every second joint avx2 0.89-1.30 (1.14) -> 0.85-1.23 (1.05),
 *   lower in 27 runs; avx512 0.92-1.19 (1.06) -> 0.73-1.05 (0.97), lower in 26; a random half
 *   avx2 0.88-1.30 (1.13) -> 0.92-1.48 (1.12), the paired difference +0.04; avx512 +0.01. 256 or
 *   1,024: less; 2,048: less; 8,192 or a lead for `joints` instead: none.
 *   then the L1 lead of 32, 12 runs: a random half avx2 0.99-1.32 (1.13) -> 0.99-1.10 (1.02),
 *   lower in 10; avx512 0.84-1.25 (0.99) -> 0.84-1.02 (0.94), lower in 11; every second joint
 *   avx2 0.94-1.08 (1.04) -> 0.94-1.11 (1.07), avx512 0.82-1.15 (0.98) -> 0.79-1.10 (0.99). The
 *   worse of the two indexes in each run: avx2 1.04-1.32 (1.13) -> 1.02-1.11 (1.08).
 * Where the two lists lie moves these ratios by up to 0.3 (benchmarks/partial_body_placement.py).
 * Each horizon is one loop over both lists (prefetch_records_lead): with a loop per list and
 * horizon, four short loops per block, an index in place over a clip in L3 (2,752 frames of 31
 * joints, 85,312 records; partial_body_kernels.sh with FRAME_JOINTS=31, two runs) cost, every
 * second joint, 1.19 of the full call on avx2 and 1.29-1.49 on avx512, against 0.86-0.90 and
 * 0.93-1.22 so (0.79-0.82 and 0.84-1.05 without the leads). At 1,048,576 joints in one frame the
 * one loop costs every second joint in place ~0.1 of the full call more and a random half ~0.05
 * less (benchmarks/README.md): the clip, the usual case, decided.
 */
#define PREFETCH_FAR_BLEND_LEAD 512
#define PREFETCH_BLEND_LEAD 32

/* requests into L1, or into L2 (to_l2), the cache lines of x's records at index[k] + shift (k <
   JM_W; index increasing; those below n), each line once: *last_line is the line (address / 64)
   requested last, 0 for none, and is updated */
JM_INLINE void prefetch_shifted_lines(const char *x, const intptr_t *index, size_t shift, size_t n,
                                      uintptr_t *last_line, int to_l2) {
    for (int k = 0; k < JM_W && (size_t)index[k] + shift < n; k++) {
        const char *p = x + (ptrdiff_t)((size_t)index[k] + shift) * (ptrdiff_t)sizeof(jm_joint_quat);
        if ((uintptr_t)p / 64 != *last_line)
            prefetch_line(p, to_l2);
        *last_line = (uintptr_t)p / 64;
    }
}

/*
 * Indexed: n_frames frames of n_joints records (frame f of array x starts at x + f * n_joints
 * * stride); in every frame the joints at index[0..n_index) are interpolated, the others are
 * copied from a (nothing to copy when o is a). index is strictly increasing within
 * [0, n_joints) (checked by jm_copy_index); the selected records are read through the index, never
 * copied to a temporary. Per block of JM_W selected joints: a run of consecutive joints (the
 * usual partial-body index: a limb, the upper body) loads and stores as the full call's blocks
 * do; with a separate out, in cache, a block of every second joint reads and writes with a
 * stride of two records (every_second_joint_block); any other block reads and writes its records
 * one by one through the index. The math per lane is the same either way: the results are
 * bit-identical to the full call's.
 * Prefetch (long contiguous lists, see PREFETCH_MIN_RECORDS): an index over at least
 * 1 / PREFETCH_SPAN_MAX_GAP of a frame's joints requests every cache line of both lists up to
 * PREFETCH_SPAN_AHEAD records (in place PREFETCH_AHEAD) beyond the block's last selected joint,
 * each line once (`prefetched`: the position up to which they are requested); a sparser one the
 * records of the entries PREFETCH_AHEAD entries ahead. At 1,048,576 joints with a separate
 * out=, against the full call (medians of 9-13 rounds, each variant timed back to back with the
 * full call, benchmarks/README.md's machine), by entry -> span 64 records ahead: every second
 * joint avx2 1.18-1.30 -> 0.92-1.10, avx512 1.05-1.13 -> 0.80-0.89, sse 1.01-1.03 -> 0.90-0.95; a random
 * half avx2 1.27-1.35 -> 0.95-1.13, avx512 1.14-1.16 -> 0.85-0.95; a random quarter avx2 1.45 ->
 * 1.06, avx512 1.31 -> 0.94. Requests by entry fetch the lines of the selected joints only, some
 * twice, and not those of the unselected ones that the copy of the gaps reads; below a quarter
 * the span fetches far more lines than are used (every eighth joint avx2 0.71 by entry, 0.88 by
 * span; in place 0.39 and 0.49). The span 32 records ahead instead of 64 (three runs of 13
 * rounds): avx2 every second joint 1.00-1.06 -> 0.95-0.99, random half 1.04-1.08 -> 0.95-1.04;
 * avx512 0.84-0.94 -> 0.80-0.86 and 0.90-0.99 -> 0.82-0.94; sse unchanged (16 and 24: no better).
 * In place 64 records ahead is the better horizon (one run of 15 rounds, 32 -> 64: every second
 * joint sse 0.75 -> 0.69, avx2 0.91 -> 0.88, avx512 0.80 -> 0.76; random half 0.82 -> 0.81, 0.92
 * -> 0.89, 0.82 -> 0.80; 128: no better), with a separate out= the two were within 0.02 there.
 * In place on AVX2 and AVX-512 the span is also requested PREFETCH_FAR records ahead into L2, as
 * the full call in place does, and `blend`'s lines further ahead than those of `joints` (figures
 * at PREFETCH_FAR_BLEND_LEAD and PREFETCH_FAR; PREFETCH_SPAN_FAR, lists of PREFETCH_FAR_MIN_RECORDS
 * or more). With a separate out over many frames of lists beyond L3, an index that leaves lines
 * of `blend` unread requests instead the lines of `blend` it reads, by entry (see
 * SPARSE_BLEND_MIN_RECORDS).
 */
#define PREFETCH_SPAN_MAX_GAP 4
#define PREFETCH_SPAN_AHEAD 32
enum { NO_PREFETCH, PREFETCH_ENTRIES, PREFETCH_SPAN, PREFETCH_SPAN_FAR, PREFETCH_SPARSE_BLEND };

/*
 * Many frames with a separate out on AVX2 and AVX-512, lists of SPARSE_BLEND_MIN_RECORDS records
 * or more (16 MiB a list, three lists beyond a 32 MiB L3), an index that leaves whole cache lines
 * of `blend` unread (sparse_blend_lines: the first half of every frame, every fourth joint): the
 * span requests take `joints` only, and the lines of `blend` that the index reads are requested
 * by entry, whole frames ahead: PREFETCH_SPAN_AHEAD records rounded up to frames into L1,
 * SPARSE_BLEND_FAR records so into L2 (PREFETCH_SPARSE_BLEND). The span requests of both lists
 * fetched `blend`'s unread lines too (the call moved as many bytes as the full call), and a list
 * read in bursts is a stream the hardware prefetchers follow poorly. 35,776 frames of 31 joints
 * with out=, over the full call (partial_body_kernels.sh with FRAME_JOINTS=31 OFFSET=16, medians of
 * 11 rounds, 8 runs; benchmarks/README.md), ranges (medians): the first half avx2 1.03-1.43 (1.27)
 * -> 0.96-1.17 (1.06), lower in 7 runs; avx512 0.96-1.13 (1.08) -> 0.78-1.07 (0.90), lower in 8;
 * every fourth joint avx2 1.00-1.32 (1.19) -> 0.85-1.19 (1.02), avx512 0.89-1.21 (0.98) ->
 * 0.73-0.95 (0.87). `blend`'s read lines into L2 beside the span requests of both lists (2 runs):
 * the first half avx2 1.24-1.26; the same without `blend`'s span: 1.19-1.28. A clip in L3 (2,752
 * frames) lost with such far requests (the first half 0.87-0.90 -> 1.00-1.04 of the full call):
 * the size threshold keeps them from it; so did this form at 4,500 frames (139,500 records, two runs:
 * the first half avx2 0.90, 1.12 -> 1.01, 1.07). Indexes that read every line or three in four
 * (every second joint, a random half) gained nothing from requests by entry: they keep the span.
 */
#define SPARSE_BLEND_MIN_RECORDS 524288
#define SPARSE_BLEND_FAR 512

/* 1 when index[0..n) (strictly increasing) reads at most 5 in 8 of the cache lines of a frame of
   n_joints records, counting a line as two records (a frame's start may shift them by one): the
   first half of 31 joints or every fourth joint reads 1 in 2, every third joint 11 of 16, a
   random half about 3 in 4, every second joint every line */
static int sparse_blend_lines(const intptr_t *index, size_t n, size_t n_joints) {
    size_t read = 1;
    for (size_t k = 1; k < n; k++)
        read += index[k] >> 1 != index[k - 1] >> 1;
    return 8 * read <= 5 * ((n_joints + 1) / 2);
}

/* 1 when the JM_W entries at index are every second joint from index[0] (one test for the block,
   no branch per entry; called for blocks spanning 2 (JM_W - 1) joints only) */
JM_INLINE int every_second_joint(const intptr_t *index) {
    intptr_t off = 0;
    for (int j = 1; j < JM_W; j++)
        off |= index[j] - index[0] - 2 * j;
    return off == 0;
}

/*
 * On AVX2 and AVX-512 a record is copied by one 256-bit move, which crosses a 64-byte cache line
 * where the record starts 48 bytes into one: every second record of a list 16 bytes off 32-byte
 * alignment (NumPy aligns its arrays to 16 bytes). gap_copies_cross: 1 when the unselected
 * records of every_second_joint_block from `first` (first + 1, first + 3, ...) lie so in the
 * frame fo; its copies then move them by 128-bit halves, which never cross a line (halves).
 * Every second joint of 1,024 with a separate out at such placements (the blocks' stores then
 * stay within lines), against the full call, kernels side by side (partial_body_kernels.sh, 41
 * rounds, an AMD Zen 4, benchmarks/README.md): avx2 0.60-0.62 -> 0.54-0.58, avx512 0.62-0.72 ->
 * 0.58-0.65; the other placements run the blocks as before. Copying every record by halves
 * wherever some cross (random subsets, every third joint) made those slower: only these blocks,
 * chosen once per frame, take them.
 */
#define HALF_COPIES JM_RECORD32_SINGLE_MOVE /* AVX2 and AVX-512 (simd/) */
JM_INLINE int gap_copies_cross(const char *fo, intptr_t first) {
    return (((uintptr_t)fo + sizeof(jm_joint_quat) * (uintptr_t)(first + 1)) & 63) > 32;
}

JM_INLINE void copy_record(char *dst, const char *src, int halves) {
    if (halves) {
        memcpy(dst, src, 16);
        memcpy(dst + 16, src + 16, 16);
    } else {
        jm_copy_record32(dst, src);
    }
}

/*
 * A block of JM_W selected joints two apart (every second joint from `first`) of contiguous lists
 * with a separate out (fo is not fa), in cache: the records from `next` up to `first` and the one
 * after each selected joint but the last are copied from fa to fo, then the block is read and
 * written with a stride of two records. Returns the position after its last joint (the next
 * `next`). Every offset is a constant from `first`: no index loads and no tested gap loop.
 * Every second joint of 1,024 with a separate out, against the full call (both builds' kernels
 * interleaved in one process, medians of 41-61 rounds, benchmarks/README.md): level on a quiet
 * machine (avx2 0.63-0.64 either way), lower where the machine was busy and the tested copy of
 * the gaps cost most (sse 0.71 -> 0.64, avx2 0.71 -> 0.67, avx512 0.90 -> 0.70 in one run; avx2
 * 0.65-0.76 -> 0.63-0.68 over six). In place (nothing to copy) the indexed block was as fast or
 * faster, and lists beyond the prefetch threshold (memory-bound) gained nothing: both keep the
 * loop as it was.
 * halves: the copies move 128 bits at a time (see gap_copies_cross).
 */
JM_INLINE size_t every_second_joint_block(int mode, const char *fa, const char *fb, char *fo, intptr_t first,
                                          size_t next, const fixed_t *ft, int halves) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat), at = first * rec;
    for (; next < (size_t)first; next++)
        copy_record(fo + (ptrdiff_t)next * rec, fa + (ptrdiff_t)next * rec, halves);
    for (int j = 0; j < JM_W - 1; j++)
        copy_record(fo + at + (2 * j + 1) * rec, fa + at + (2 * j + 1) * rec, halves);
    joints_block(mode, fa + at, 2 * rec, fb + at, 2 * rec, fo + at, 2 * rec, NULL, ft);
    return (size_t)first + 2 * (JM_W - 1) + 1;
}

/*
 * blend_joints_indexed's blocks of JM_W entries for one frame of contiguous lists (fa, fb, fo),
 * while whole blocks remain; returns the entry after them and advances *next as there.
 * blend_joints_indexed calls it once with the constant NO_PREFETCH (lists in cache) and once
 * with the prefetch of the call, so that the loop without prefetch carries none of its state or
 * tests: with them in that loop, every second joint of 1,024 cost ~5 % more on avx2 and avx512
 * (paired runs against main 19bd4e7); three copies (one per mode) made a run of joints on sse
 * ~6 % slower instead (first half of 1,024: 0.77 of the full call against main's 0.72; 0.71 so).
 * Without prefetch it is also called with the constant halves 1 on AVX2 / AVX-512 (the copies
 * of every_second_joint_block by 128-bit halves, see gap_copies_cross). frame: the frame length
 * in records of the flat lists of PREFETCH_SPARSE_BLEND (see blend_frames_flat), else unused.
 */
JM_INLINE size_t contiguous_blocks(int mode, int prefetch, const char *fa, const char *fb, char *fo, size_t n_joints,
                                   const intptr_t *index, size_t n_index, size_t prefetch_below, size_t frame,
                                   int in_place, int long_index, int halves, const fixed_t *ft, size_t *next) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    size_t k = 0, prefetched = (size_t)index[0], done = *next;
    size_t far = prefetched; /* PREFETCH_SPAN_FAR */
    /* PREFETCH_SPARSE_BLEND: how far ahead (whole frames) and the last lines requested of blend */
    const size_t near_shift = prefetch == PREFETCH_SPARSE_BLEND ? (PREFETCH_SPAN_AHEAD + frame - 1) / frame * frame : 0;
    const size_t far_shift = prefetch == PREFETCH_SPARSE_BLEND ? (SPARSE_BLEND_FAR + frame - 1) / frame * frame : 0;
    uintptr_t near_line = 0, far_line = 0;
    for (; k + JM_W <= n_index; k += JM_W) {
        if (prefetch == PREFETCH_SPARSE_BLEND) {
            const size_t ahead = (size_t)index[k + JM_W - 1] + PREFETCH_SPAN_AHEAD;
            prefetched = prefetch_records_lead(fa, NULL, prefetched, ahead < n_joints ? ahead : n_joints, 0, 0, 0);
            prefetch_shifted_lines(fb, index + k, near_shift, n_joints, &near_line, 0);
            prefetch_shifted_lines(fb, index + k, far_shift, n_joints, &far_line, 1);
        } else if (prefetch == PREFETCH_SPAN || prefetch == PREFETCH_SPAN_FAR) {
            const size_t last = (size_t)index[k + JM_W - 1];
            const size_t ahead = last + (in_place ? PREFETCH_AHEAD : PREFETCH_SPAN_AHEAD);
            if (PREFETCH_FAR && prefetch == PREFETCH_SPAN_FAR) { /* in place; blend's lead (PREFETCH_FAR_BLEND_LEAD) */
                const size_t far_ahead = last + PREFETCH_FAR;
                prefetched = prefetch_records_lead(fa, fb, prefetched, ahead < n_joints ? ahead : n_joints,
                                                   PREFETCH_BLEND_LEAD, n_joints, 0);
                far = prefetch_records_lead(fa, fb, far, far_ahead < n_joints ? far_ahead : n_joints,
                                            PREFETCH_FAR_BLEND_LEAD, n_joints, 1);
            } else {
                prefetched = prefetch_records(fa, fb, prefetched, ahead < n_joints ? ahead : n_joints, 0);
            }
        } else if (prefetch == PREFETCH_ENTRIES && k < prefetch_below) {
            for (size_t p = k + PREFETCH_AHEAD; p < k + PREFETCH_AHEAD + JM_W; p++) {
                JM_PREFETCH(fa + index[p] * rec);
                JM_PREFETCH(fb + index[p] * rec);
            }
        }
        const intptr_t span = index[k + JM_W - 1] - index[k];
        if (JM_W > 1 && prefetch == NO_PREFETCH && !in_place && span == 2 * (JM_W - 1) &&
            every_second_joint(index + k)) {
            done = every_second_joint_block(mode, fa, fb, fo, index[k], done, ft, halves);
            continue;
        }
        if (!in_place)
            done = copy_block_gaps(fa, fo, index + k, done, long_index);
        if (span == JM_W - 1) { /* a run of joints: the full call's block */
            const ptrdiff_t run = index[k] * rec;
            joints_block(mode, fa + run, rec, fb + run, rec, fo + run, rec, NULL, ft);
        } else {
            joints_block(mode, fa, rec, fb, rec, fo, rec, index + k, ft);
        }
    }
    *next = done;
    return k;
}

/*
 * The blocks of one frame (fa, fb, fo; n_joints records) for index[0..n_index), its records from
 * `next` on (the ones before are done); returns the position after the last one done (with a
 * separate out the rest of the frame is the caller's to copy). For contiguous lists: span_prefetch
 * (PREFETCH_SPAN, PREFETCH_SPAN_FAR, PREFETCH_SPARSE_BLEND, or NO_PREFETCH for none or the
 * requests by entry below prefetch_below) and frame as contiguous_blocks.
 */
JM_INLINE size_t frame_blocks(int mode, const char *fa, ptrdiff_t as, const char *fb, ptrdiff_t bs, char *fo,
                              ptrdiff_t os, size_t n_joints, const intptr_t *index, size_t n_index, int contiguous,
                              int in_place, int span_prefetch, size_t prefetch_below, size_t frame, int long_index,
                              const fixed_t *ft, size_t next) {
    size_t k = 0;
    if (contiguous) { /* the offsets are shifts of the index */
        if (PREFETCH_FAR && span_prefetch == PREFETCH_SPARSE_BLEND) /* a loop of its own, never in place */
            k = contiguous_blocks(mode, PREFETCH_SPARSE_BLEND, fa, fb, fo, n_joints, index, n_index, 0, frame, 0,
                                  long_index, 0, ft, &next);
        else if (span_prefetch || prefetch_below)
            k = contiguous_blocks(mode, span_prefetch ? span_prefetch : PREFETCH_ENTRIES, fa, fb, fo, n_joints, index,
                                  n_index, prefetch_below, 0, in_place, long_index, 0, ft, &next);
        else if (HALF_COPIES && !in_place && gap_copies_cross(fo, index[0]))
            k = contiguous_blocks(mode, NO_PREFETCH, fa, fb, fo, n_joints, index, n_index, 0, 0, in_place, long_index,
                                  1, ft, &next);
        else
            k = contiguous_blocks(mode, NO_PREFETCH, fa, fb, fo, n_joints, index, n_index, 0, 0, in_place, long_index,
                                  0, ft, &next);
    }
    for (; k + JM_W <= n_index; k += JM_W) {
        if (!in_place)
            next = copy_gaps(fa, as, fo, os, index + k, JM_W, next);
        joints_block(mode, fa, as, fb, bs, fo, os, index + k, ft);
    }
    if (k < n_index) {
        intptr_t idx[JM_W];
        tail_index(index + k, n_index - k, idx);
        if (!in_place)
            next = copy_gaps(fa, as, fo, os, index + k, n_index - k, next);
        joints_block(mode, fa, as, fb, bs, fo, os, idx, ft);
    }
    return next;
}

/*
 * Many frames of contiguous lists with an index of fewer than FLAT_CHUNK entries: frame by
 * frame, each frame would end in a partial block (15 of 31 joints: blocks of 8 and 7 lanes) and
 * its own copy of the frame's rest. Instead the lists run as one frame of n_frames * n_joints
 * records, selected by the frames' entries one after another (entry k of frame f at position f *
 * n_joints + index[k]), built FLAT_CHUNK entries at a time on the stack (with the PREFETCH_AHEAD
 * + JM_W entries after them that the prefetch by entry reads): blocks run on across frame ends,
 * and a gap runs from one frame into the next. Lanes and results as frame by frame. Frames of 31
 * joints, over the full call (partial_body_kernels.sh with FRAME_JOINTS=31, medians of 21 rounds,
 * 31 at 64 frames; frame by frame -> flat; every second joint, the first half, a random 15, every
 * third, every fourth; benchmarks/README.md):
 *   64 frames (in L1/L2), avx2, out=:  0.67 0.87 1.07 0.87 0.64 -> 0.62 0.70 0.70 0.59 0.52
 *                             in place: 0.59 0.65 0.86 0.66 0.40 -> 0.55 0.54 0.58 0.44 0.34
 *   2,752 frames (a clip, in L3), avx2, out=: 0.95 0.97 1.01 1.05 0.75 -> 0.88 0.83 0.73 0.73 0.67
 *   35,776 frames (lists beyond the caches), in place, avx2: 1.24 1.48 1.10 1.55 1.08 -> 1.05 1.05
 *   0.99 1.04 1.04; avx512 1.10 1.26 0.87 1.25 0.90 -> 0.89 0.87 0.86 0.95 0.96. There with a
 *   separate out the two are within about 0.1 of 1.0 either way (avx2 0.93 1.09 0.91 1.08 0.96 ->
 *   1.01 1.07 1.01 0.95 1.05). Prefetching by entry instead of by span, or no prefetch with a
 *   separate out, was slower there (up to 1.33 and 1.41).
 */
#define FLAT_CHUNK 256
#define FLAT_LOOKAHEAD (PREFETCH_AHEAD + JM_W - 1) /* entries the prefetch by entry reads beyond a block */
JM_INLINE void blend_frames_flat(int mode, const char *a, const char *b, char *o, size_t n_frames, size_t n_joints,
                                 const intptr_t *index, size_t n_index, int in_place, int span_prefetch,
                                 int entry_prefetch, int long_index, const fixed_t *ft) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    const size_t n = n_frames * n_joints;
    const size_t lookahead = entry_prefetch ? FLAT_LOOKAHEAD : 0;
    intptr_t flat[FLAT_CHUNK + FLAT_LOOKAHEAD + JM_W + FLAT_CHUNK];
    size_t next = 0, filled = 0, frame = 0;
    while (frame < n_frames || filled) {
        /* whole frames up to FLAT_CHUNK + lookahead entries (at least one frame) */
        for (; frame < n_frames && (filled < FLAT_CHUNK + lookahead || !filled); frame++) {
            const intptr_t base = (intptr_t)(frame * n_joints);
            for (size_t j = 0; j < n_index; j++)
                flat[filled + j] = base + index[j];
            filled += n_index;
        }
        /* the whole blocks whose prefetch entries are in; all of them once every frame is (the
           prefetch then stops FLAT_LOOKAHEAD entries before the end, as contiguous_blocks' does) */
        const size_t ready = frame < n_frames ? (filled - lookahead) / JM_W * JM_W : filled;
        size_t prefetch_below = 0; /* none where the call takes no prefetch by entry */
        if (lookahead)
            prefetch_below = frame < n_frames ? ready : filled > lookahead ? filled - lookahead : 0;
        next = frame_blocks(mode, a, rec, b, rec, o, rec, n, flat, ready, 1, in_place, span_prefetch, prefetch_below,
                            n_joints, long_index, ft, next);
        memmove(flat, flat + ready, (filled - ready) * sizeof(intptr_t));
        filled -= ready;
    }
    copy_records(a + (ptrdiff_t)next * rec, rec, o + (ptrdiff_t)next * rec, rec, n - next);
}

JM_INLINE void blend_joints_indexed(int mode, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *o,
                                    ptrdiff_t os, size_t n_frames, size_t n_joints, const intptr_t *index,
                                    size_t n_index, float t) {
    const fixed_t ft = fixed_t_for(t);
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    const int contiguous = as == rec && bs == rec && os == rec, in_place = a == o && as == os;
    const size_t records = n_frames * n_joints;
    if (t <= 0.0f || !n_index) {
        for (size_t f = 0; f < n_frames; f++)
            copy_records(a + (ptrdiff_t)(f * n_joints) * as, as, o + (ptrdiff_t)(f * n_joints) * os, os, n_joints);
        return;
    }
    if (!index) /* tells the compiler which branch of JM_REC runs */
        JM_UNREACHABLE();
    const int span = PREFETCH_SPAN_MAX_GAP * n_index >= n_joints, long_index = n_index >= SPAN_COPY_MIN_INDEX;
    const int prefetch = records >= PREFETCH_MIN_RECORDS;
    const int flat = contiguous && n_frames > 1 && n_index < FLAT_CHUNK;
    int span_prefetch = NO_PREFETCH; /* the requests by span of a long call (contiguous_blocks) */
    if (span && prefetch) {
        span_prefetch = PREFETCH_SPAN;
        if (far_requests(in_place, records))
            span_prefetch = PREFETCH_SPAN_FAR;
        else if (PREFETCH_FAR && !in_place && flat && records >= SPARSE_BLEND_MIN_RECORDS &&
                 sparse_blend_lines(index, n_index, n_joints))
            span_prefetch = PREFETCH_SPARSE_BLEND;
    }
    if (flat) {
        blend_frames_flat(mode, a, b, o, n_frames, n_joints, index, n_index, in_place, span_prefetch, prefetch && !span,
                          long_index, &ft);
        return;
    }
    const size_t prefetch_below = span ? 0 : prefetch_end(n_index, records, PREFETCH_AHEAD);
    for (size_t f = 0; f < n_frames; f++) {
        const char *fa = a + (ptrdiff_t)(f * n_joints) * as, *fb = b + (ptrdiff_t)(f * n_joints) * bs;
        char *fo = o + (ptrdiff_t)(f * n_joints) * os;
        const size_t next = frame_blocks(mode, fa, as, fb, bs, fo, os, n_joints, index, n_index, contiguous, in_place,
                                         span_prefetch, prefetch_below, 0, long_index, &ft, 0);
        copy_records(fa + (ptrdiff_t)next * as, as, fo + (ptrdiff_t)next * os, os, n_joints - next);
    }
}

/* jm_slerp_joints on the joints at `index` of every frame, the others copied (see above). */
void JM_FN(jm_slerp_joints_indexed)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out,
                                    ptrdiff_t os, size_t n_frames, size_t n_joints, const intptr_t *index,
                                    size_t n_index, float t) {
    if (JM_HANDOFF_SLERP_JOINTS_INDEXED(index, n_index)) { /* AVX-512: AVX2's kernel, simd/avx512.h */
        JM_HANDOFF_FN(jm_slerp_joints_indexed)(a, as, b, bs, out, os, n_frames, n_joints, index, n_index, t);
        return;
    }
    blend_joints_indexed(SLERP_FIXED_T, a, as, b, bs, out, os, n_frames, n_joints, index, n_index, t);
}

/* jm_lerp_joints on the joints at `index` of every frame, the others copied. */
void JM_FN(jm_lerp_joints_indexed)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out,
                                   ptrdiff_t os, size_t n_frames, size_t n_joints, const intptr_t *index,
                                   size_t n_index, float t) {
    blend_joints_indexed(NLERP, a, as, b, bs, out, os, n_frames, n_joints, index, n_index, t);
}
