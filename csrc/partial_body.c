/*
 * partial_body.c - slerp and nlerp of the joints at an index in every frame of two joint lists,
 * the others copied (partial-body blending): the memory scheduler that picks, per call and per
 * block, how the selected records are read and written, which records are copied and which
 * cache lines are requested ahead. The math per lane is joint_blocks.h's, as in the full call:
 * results are bit-identical to it. Compiled once per ISA.
 * Why each choice: docs/design/partial-body-scheduler.md.
 */
#include "joint_blocks.h"

#include <string.h>

/*
 * What blend_joints_indexed decides once per call, read by the block loops. The loops are
 * JM_INLINE and take the plan by value: a field set to a constant where a loop is called (the
 * prefetch kind, halves) compiles that copy of the loop without the other kinds' state and tests.
 */
typedef struct {
    int mode;              /* SLERP_FIXED_T or NLERP */
    const fixed_t *ft;     /* the weights of the call's t */
    ptrdiff_t as, bs, os;  /* strides of a, b and out in bytes */
    size_t n_records;      /* records of the lists a loop runs over: a frame, or every frame (flat lists) */
    size_t frame;          /* the flat lists' records a frame, for PREFETCH_SPARSE_BLEND's loop; else 0 */
    int contiguous;        /* as = bs = os = one record: a block's offsets are shifts of the index */
    int in_place;          /* out is a: nothing to copy */
    int long_index;        /* SPAN_COPY_MIN_INDEX entries or more (copy_block_gaps) */
    int span_prefetch;     /* the call's requests by span: NO_PREFETCH, PREFETCH_SPAN, PREFETCH_SPAN_FAR,
                              PREFETCH_SPARSE_BLEND */
    size_t prefetch_below; /* requests by entry for the entries below it; 0: none */
    int prefetch;          /* contiguous_blocks' requests: a span kind, PREFETCH_ENTRIES or NO_PREFETCH */
    int halves;            /* every_second_joint_block copies by 128-bit halves (gap_copies_cross) */
} partial_body_plan;

/*
 * copy_gaps: the records of a frame from position `next` up to index[m - 1], except index[0..m)
 * itself (strictly increasing), from a to o; returns the position after index[m - 1] (the next
 * `next`). Called block by block, so that the unselected records are copied while their cache
 * lines are loaded for the selected ones.
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
 * copy_block_gaps: copy_gaps for a block of JM_W selected records of contiguous lists, before
 * the block's stores. An index of SPAN_COPY_MIN_INDEX entries or more whose block has uneven
 * gaps instead copies every record up to the block's last (the block's stores then replace the
 * selected ones): its gap loop's branches would mispredict about once per record. Shorter
 * indexes are learnt whole by the branch predictor, equal gaps always are.
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
 * Prefetch of an index's calls (lists of PREFETCH_MIN_RECORDS records or more, contiguous):
 *  - PREFETCH_SPAN: an index over at least 1 / PREFETCH_SPAN_MAX_GAP of a frame's joints requests
 *    every cache line of both lists up to PREFETCH_SPAN_AHEAD records (in place PREFETCH_AHEAD)
 *    beyond the block's last selected joint, each line once;
 *  - PREFETCH_ENTRIES: a sparser index requests the records of the entries PREFETCH_AHEAD
 *    entries ahead;
 *  - PREFETCH_SPAN_FAR: in place on AVX2 / AVX-512 (far_requests) the span is also requested
 *    PREFETCH_FAR records ahead into L2, and `blend`'s lines PREFETCH_BLEND_LEAD (L1) and
 *    PREFETCH_FAR_BLEND_LEAD (L2) records further than those of `joints`, in one loop over both;
 *  - PREFETCH_SPARSE_BLEND: with a separate out over many frames of lists of
 *    SPARSE_BLEND_MIN_RECORDS records or more, an index that leaves whole lines of `blend` unread
 *    (sparse_blend_lines) requests spans of `joints` only and the lines of `blend` it reads, by
 *    entry, whole frames ahead (PREFETCH_SPAN_AHEAD into L1, SPARSE_BLEND_FAR into L2).
 * The horizons and thresholds: docs/design/partial-body-scheduler.md#software-prefetch.
 */
#define PREFETCH_SPAN_MAX_GAP 4
#define PREFETCH_SPAN_AHEAD 32
#define PREFETCH_FAR_BLEND_LEAD 512
#define PREFETCH_BLEND_LEAD 32
#define SPARSE_BLEND_MIN_RECORDS 524288
#define SPARSE_BLEND_FAR 512
enum { NO_PREFETCH, PREFETCH_ENTRIES, PREFETCH_SPAN, PREFETCH_SPAN_FAR, PREFETCH_SPARSE_BLEND };

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
 * frame fo; its copies then move them by 128-bit halves, which never cross a line. Only these
 * blocks, chosen once per frame, take them (docs/design/partial-body-scheduler.md#blocks).
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
 * every_second_joint_block: a block of JM_W selected joints two apart (every second joint from
 * `first`) of contiguous lists with a separate out (fo is not fa), in cache: the records from
 * `next` up to `first` and the one after each selected joint but the last are copied from fa to
 * fo (by halves: plan.halves), then the block is read and written with a stride of two records.
 * Returns the position after its last joint (the next `next`). Every offset is a constant from
 * `first`: no index loads and no tested gap loop.
 */
JM_INLINE size_t every_second_joint_block(const partial_body_plan *plan, const char *fa, const char *fb, char *fo,
                                          intptr_t first, size_t next) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat), at = first * rec;
    for (; next < (size_t)first; next++)
        copy_record(fo + (ptrdiff_t)next * rec, fa + (ptrdiff_t)next * rec, plan->halves);
    for (int j = 0; j < JM_W - 1; j++)
        copy_record(fo + at + (2 * j + 1) * rec, fa + at + (2 * j + 1) * rec, plan->halves);
    joints_block(plan->mode, fa + at, 2 * rec, fb + at, 2 * rec, fo + at, 2 * rec, NULL, plan->ft);
    return (size_t)first + 2 * (JM_W - 1) + 1;
}

/*
 * contiguous_blocks: the blocks of JM_W entries of index[0..n_index) over contiguous lists (fa,
 * fb, fo; plan.n_records records), while whole blocks remain; returns the entry after them and
 * advances *next (the records before it are done) as copy_gaps does. A run of consecutive joints
 * is the full call's block; every second joint with a separate out and no prefetch
 * every_second_joint_block; any other block reads and writes its records through the index.
 * plan.prefetch picks the requests (see PREFETCH_SPAN_MAX_GAP); frame_blocks calls it with
 * that kind and plan.halves as constants, one loop per kind.
 */
JM_INLINE size_t contiguous_blocks(const partial_body_plan *plan, const char *fa, const char *fb, char *fo,
                                   const intptr_t *index, size_t n_index, size_t *next) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    const int mode = plan->mode, prefetch = plan->prefetch, in_place = plan->in_place;
    const int long_index = plan->long_index;
    const size_t n_joints = plan->n_records, frame = plan->frame, prefetch_below = plan->prefetch_below;
    const fixed_t *ft = plan->ft;
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
            if (PREFETCH_FAR && prefetch == PREFETCH_SPAN_FAR) { /* in place; blend's lead */
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
            done = every_second_joint_block(plan, fa, fb, fo, index[k], done);
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

/* plan for one of contiguous_blocks' loops: its prefetch kind, halves and frame (0 but for
   PREFETCH_SPARSE_BLEND's loop: the other loops compile without that kind's code) */
JM_INLINE partial_body_plan block_loop(partial_body_plan plan, int prefetch, int halves, size_t frame) {
    plan.prefetch = prefetch;
    plan.halves = halves;
    plan.frame = frame;
    if (prefetch == PREFETCH_SPARSE_BLEND)
        plan.in_place = 0; /* never in place (blend_joints_indexed) */
    return plan;
}

/*
 * frame_blocks: the blocks of one frame (fa, fb, fo; plan.n_records records) for
 * index[0..n_index), its records from `next` on (the ones before are done); returns the position
 * after the last one done (with a separate out the rest of the frame is the caller's to copy).
 * Contiguous lists run contiguous_blocks' loop for the call's prefetch, then the rest (strided
 * lists, the last partial block) goes through the index.
 */
JM_INLINE size_t frame_blocks(const partial_body_plan *plan, const char *fa, const char *fb, char *fo,
                              const intptr_t *index, size_t n_index, size_t next) {
    const int mode = plan->mode, in_place = plan->in_place;
    const ptrdiff_t as = plan->as, bs = plan->bs, os = plan->os;
    const fixed_t *ft = plan->ft;
    size_t k = 0;
    if (plan->contiguous) { /* the offsets are shifts of the index */
        if (PREFETCH_FAR && plan->span_prefetch == PREFETCH_SPARSE_BLEND) { /* a loop of its own */
            const partial_body_plan loop = block_loop(*plan, PREFETCH_SPARSE_BLEND, 0, plan->frame);
            k = contiguous_blocks(&loop, fa, fb, fo, index, n_index, &next);
        } else if (plan->span_prefetch || plan->prefetch_below) {
            const int prefetch = plan->span_prefetch ? plan->span_prefetch : PREFETCH_ENTRIES;
            const partial_body_plan loop = block_loop(*plan, prefetch, 0, 0);
            k = contiguous_blocks(&loop, fa, fb, fo, index, n_index, &next);
        } else if (HALF_COPIES && !in_place && gap_copies_cross(fo, index[0])) {
            const partial_body_plan loop = block_loop(*plan, NO_PREFETCH, 1, 0);
            k = contiguous_blocks(&loop, fa, fb, fo, index, n_index, &next);
        } else {
            const partial_body_plan loop = block_loop(*plan, NO_PREFETCH, 0, 0);
            k = contiguous_blocks(&loop, fa, fb, fo, index, n_index, &next);
        }
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
 * blend_frames_flat: n_frames frames of contiguous lists with an index of fewer than FLAT_CHUNK
 * entries, run as one list of n_frames * plan.n_records records selected by the frames' entries one
 * after another (entry k of frame f at position f * frame + index[k]), built FLAT_CHUNK entries at
 * a time on the stack, with the FLAT_LOOKAHEAD entries after them that the requests by entry
 * (entry_prefetch) read. Blocks run on across frame ends and a gap runs from one frame into the
 * next, instead of each frame ending in a partial block and its own copy of the rest. Lanes and
 * results as frame by frame (docs/design/partial-body-scheduler.md#many-frames-the-flat-lists).
 */
#define FLAT_CHUNK 256
#define FLAT_LOOKAHEAD (PREFETCH_AHEAD + JM_W - 1) /* entries the prefetch by entry reads beyond a block */
JM_INLINE void blend_frames_flat(const partial_body_plan *call, const char *a, const char *b, char *o, size_t n_frames,
                                 const intptr_t *index, size_t n_index, int entry_prefetch) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    const size_t n_joints = call->n_records, n = n_frames * n_joints;
    partial_body_plan plan = *call;
    const size_t lookahead = entry_prefetch ? FLAT_LOOKAHEAD : 0;
    intptr_t flat[FLAT_CHUNK + FLAT_LOOKAHEAD + JM_W + FLAT_CHUNK];
    size_t next = 0, filled = 0, frame = 0;
    plan.as = plan.bs = plan.os = rec, plan.contiguous = 1, plan.n_records = n, plan.frame = n_joints;
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
        plan.prefetch_below = 0; /* none where the call takes no prefetch by entry */
        if (lookahead)
            plan.prefetch_below = frame < n_frames ? ready : filled > lookahead ? filled - lookahead : 0;
        next = frame_blocks(&plan, a, b, o, flat, ready, next);
        memmove(flat, flat + ready, (filled - ready) * sizeof(intptr_t));
        filled -= ready;
    }
    copy_records(a + (ptrdiff_t)next * rec, rec, o + (ptrdiff_t)next * rec, rec, n - next);
}

/*
 * blend_joints_indexed: n_frames frames of n_joints records (frame f of array x starts at x + f *
 * n_joints * stride); in every frame the joints at index[0..n_index) are interpolated as
 * joints_block does, the others copied from a (nothing to copy when o is a). index is strictly
 * increasing within [0, n_joints) (checked by jm_copy_index); the selected records are read
 * through the index, never copied to a temporary. t <= 0 or an empty index copies a exactly.
 */
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
    partial_body_plan plan = {
        .mode = mode, .ft = &ft, .as = as, .bs = bs, .os = os, .n_records = n_joints, .frame = 0,
        .contiguous = contiguous, .in_place = in_place, .long_index = long_index, .span_prefetch = span_prefetch,
        .prefetch_below = 0, .prefetch = NO_PREFETCH, .halves = 0,
    };
    if (flat) {
        blend_frames_flat(&plan, a, b, o, n_frames, index, n_index, prefetch && !span);
        return;
    }
    plan.prefetch_below = span ? 0 : prefetch_end(n_index, records, PREFETCH_AHEAD);
    for (size_t f = 0; f < n_frames; f++) {
        const char *fa = a + (ptrdiff_t)(f * n_joints) * as, *fb = b + (ptrdiff_t)(f * n_joints) * bs;
        char *fo = o + (ptrdiff_t)(f * n_joints) * os;
        const size_t next = frame_blocks(&plan, fa, fb, fo, index, n_index, 0);
        copy_records(fa + (ptrdiff_t)next * as, as, fo + (ptrdiff_t)next * os, os, n_joints - next);
    }
}

/*
 * jm_slerp_joints_indexed: jm_slerp_joints on the joints at index[0..n_index) of each of n_frames
 * frames of n_joints records (frame f of x at x + f * n_joints * stride), the other records
 * copied from a (out may be a: then only the selected records change). index strictly increasing
 * within [0, n_joints) (jm_copy_index). Bit-identical to jm_slerp_joints on the selected records,
 * same bounds and edge cases; t <= 0 or an empty index copies a exactly.
 */
void JM_FN(jm_slerp_joints_indexed)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out,
                                    ptrdiff_t os, size_t n_frames, size_t n_joints, const intptr_t *index,
                                    size_t n_index, float t) {
    if (JM_HANDOFF_SLERP_JOINTS_INDEXED(index, n_index)) { /* AVX-512: AVX2's kernel, simd/avx512.h */
        JM_HANDOFF_FN(jm_slerp_joints_indexed)(a, as, b, bs, out, os, n_frames, n_joints, index, n_index, t);
        return;
    }
    blend_joints_indexed(SLERP_FIXED_T, a, as, b, bs, out, os, n_frames, n_joints, index, n_index, t);
}

/* jm_lerp_joints_indexed: jm_lerp_joints on the joints at `index` of every frame, the others
   copied, as jm_slerp_joints_indexed (bit-identical to jm_lerp_joints on the selected records). */
void JM_FN(jm_lerp_joints_indexed)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out,
                                   ptrdiff_t os, size_t n_frames, size_t n_joints, const intptr_t *index,
                                   size_t n_index, float t) {
    blend_joints_indexed(NLERP, a, as, b, bs, out, os, n_frames, n_joints, index, n_index, t);
}
