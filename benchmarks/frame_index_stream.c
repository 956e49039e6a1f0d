/*
 * How fast one core streams an indexed blend's lists with a separate `out` over a clip beyond the
 * caches, in the simplest loops that move those bytes (x86-64 with AVX2 and FMA, gcc; no library
 * code):
 *   mkdir -p build && gcc -O2 -mavx2 -mfma benchmarks/frame_index_stream.c -o build/frame_index_stream
 *   build/frame_index_stream [OFFSET [ROUNDS [MATH [FRAMES]]]]
 * Three lists (joints, blend, out) of FRAMES frames (default 35,776) of 31 records of 32 bytes
 * (35 MB each by default), in transparent huge pages where the kernel gives them, each OFFSET
 * bytes (default 16) past 64-byte alignment, as NumPy places its large arrays. Every loop writes
 * every record of `out`: the records an index selects in every frame get math(joints, blend), the
 * others joints' record; the full loop selects all 31. The math is a stand-in, not a slerp: per
 * record a chain of MATH dependent FMAs (default 12: with 64 frames, in cache, the full loop then
 * costs what the AVX2 full call of csrc/interp.c costs, ~2.1 ns a record on benchmarks/README.md's
 * machine), eight records (chains) to a block; each loop runs again without it (MATH 0: its data
 * movement alone). The loops:
 *   full                    blocks of 8 consecutive records; every line of both inputs requested
 *                           into L1 64 records ahead (the library's full call does the same)
 *   every second joint, first half, random half (15 of 31)
 *                           gathered: blocks of 8 selected records of a frame (its last block may
 *                           hold fewer), the records between copied one by one; every line of
 *                           both inputs requested 64 records ahead
 *   first half, sparse requests
 *                           the same with the requests of csrc/interp.c's PREFETCH_SPARSE_BLEND:
 *                           `joints`' lines 32 records ahead, of `blend` only the lines the index
 *                           reads, two frames ahead into L1 and 17 into L2
 *   every second joint, first half, every joint, masked
 *                           the full loop, the results of the unselected records replaced by
 *                           joints' records before the stores (the full loop's bytes and math,
 *                           and a select; every joint: the same code with every lane selected)
 * Prints, per loop, the median time of ROUNDS rounds (default 21; the loops interleaved, each round
 * starting at the next loop) in ns per record and over the full loop's with the same MATH.
 */
#include <immintrin.h>
#include <string.h>

#include "probe_common.h"

#define FRAME 31
static size_t frames = 35776, records; /* records = FRAME * frames */
#define MAX_ROUNDS 101
static float *joints, *blend, *out;

static float *new_list(size_t offset) {
    float *list = (float *)((char *)huge_page_block(records * 32 + 64, (size_t)2 << 20) + offset);
    for (size_t i = 0; i < records * 8; i++)
        list[i] = 0.5f + (float)(i % 7) * 0.01f;
    return list;
}

#define REQUEST(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#define REQUEST_L2(p) _mm_prefetch((const char *)(p), _MM_HINT_T1)

/* the records at pos[0..n) (n <= 8): out = math(joints, blend), `depth` FMAs deep */
static inline __attribute__((always_inline)) void block(const size_t *pos, int n, int depth) {
    __m256 x[8], y[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        const size_t r = pos[k < n ? k : n - 1];
        x[k] = _mm256_loadu_ps(joints + 8 * r);
        y[k] = _mm256_loadu_ps(blend + 8 * r);
    }
    for (int m = 0; m < depth; m++)
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++)
            x[k] = _mm256_fmadd_ps(x[k], y[k], y[k]);
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++)
        if (k < n)
            _mm256_storeu_ps(out + 8 * pos[k], _mm256_add_ps(x[k], y[k]));
}

static inline void copy_record(size_t r) {
    _mm256_storeu_ps(out + 8 * r, _mm256_loadu_ps(joints + 8 * r));
}

/* the full loop's blocks (8 consecutive records, every line of both inputs requested 64 records
   ahead, as the library's full call does); selected: NULL for every record (the full loop), else
   by frame position, the results of the others replaced by joints' records (masked full blocks) */
static inline __attribute__((always_inline)) void full_loop(const unsigned char *selected, int depth) {
    size_t i = 0, at = 0; /* at: i's position in its frame */
    for (; i + 8 <= records; i += 8) {
        if (i + 72 <= records)
            for (size_t p = i + 64; p < i + 72; p += 2) {
                REQUEST(joints + 8 * p);
                REQUEST(blend + 8 * p);
            }
        __m256 x[8], y[8], a[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            a[k] = x[k] = _mm256_loadu_ps(joints + 8 * (i + k));
            y[k] = _mm256_loadu_ps(blend + 8 * (i + k));
        }
        for (int m = 0; m < depth; m++)
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++)
                x[k] = _mm256_fmadd_ps(x[k], y[k], y[k]);
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            __m256 result = _mm256_add_ps(x[k], y[k]);
            if (selected) {
                const size_t position = at + (size_t)k < FRAME ? at + (size_t)k : at + (size_t)k - FRAME;
                result = _mm256_blendv_ps(a[k], result, _mm256_castsi256_ps(_mm256_set1_epi32(-selected[position])));
            }
            _mm256_storeu_ps(out + 8 * (i + k), result);
        }
        at = at + 8 < FRAME ? at + 8 : at + 8 - FRAME;
    }
    for (; i < records; i++) { /* record by record (35,776 frames: none left) */
        if (!selected || selected[i % FRAME])
            block(&i, 1, depth);
        else
            copy_record(i);
    }
}

/* the frame positions index[0..n) (increasing) of every frame selected, the others copied; sparse:
   the first half's request scheme (see the top), else every line of both inputs 64 records ahead */
static void index_loop(const int *index, int n, int depth, int sparse) {
    size_t requested = 0;
    for (size_t f = 0; f < frames; f++) {
        const size_t base = f * FRAME;
        if (sparse) {
            for (const size_t to = base + FRAME + 32 < records ? base + FRAME + 32 : records; requested < to;
                 requested += 2)
                REQUEST(joints + 8 * requested);
            for (int k = 0; k < n; k++) {
                if (k && index[k] / 2 == index[k - 1] / 2)
                    continue;
                if (f + 2 < frames)
                    REQUEST(blend + 8 * (base + 2 * FRAME + (size_t)index[k]));
                if (f + 17 < frames)
                    REQUEST_L2(blend + 8 * (base + 17 * FRAME + (size_t)index[k]));
            }
        } else {
            for (const size_t to = base + FRAME + 64 < records ? base + FRAME + 64 : records; requested < to;
                 requested += 2) {
                REQUEST(joints + 8 * requested);
                REQUEST(blend + 8 * requested);
            }
        }
        size_t next = base, pos[8];
        for (int k = 0; k < n; k += 8) {
            const int m = n - k < 8 ? n - k : 8;
            for (int j = 0; j < m; j++) {
                pos[j] = base + (size_t)index[k + j];
                for (; next < pos[j]; next++)
                    copy_record(next);
                next++;
            }
            block(pos, m, depth);
        }
        for (; next < base + FRAME; next++)
            copy_record(next);
    }
}

int main(int argc, char **argv) {
    const size_t offset = argc > 1 ? (size_t)atoi(argv[1]) : 16;
    const int rounds = argc > 2 ? atoi(argv[2]) : 21, depth = argc > 3 ? atoi(argv[3]) : 12;
    frames = argc > 4 ? (size_t)atol(argv[4]) : frames;
    records = FRAME * frames;
    if (offset > 63 || rounds < 1 || rounds > MAX_ROUNDS || depth < 1 || depth > 64 || frames < 18 ||
        frames > 1000000) {
        fprintf(stderr, "usage: %s [OFFSET 0-63 [ROUNDS 1-%d [MATH 1-64 [FRAMES 18-1000000]]]]\n", argv[0],
                MAX_ROUNDS);
        return 2;
    }
    joints = new_list(offset);
    blend = new_list(offset);
    out = new_list(offset);
    int every_second[16], first_half[16], random_half[15], n_random = 0;
    for (int k = 0; k < 16; k++) {
        every_second[k] = 2 * k;
        first_half[k] = k;
    }
    srand(7);
    for (int j = 0; j < FRAME && n_random < 15; j++) /* 15 of 31, uniformly */
        if (rand() % (FRAME - j) < 15 - n_random)
            random_half[n_random++] = j;
    unsigned char every_second_mask[FRAME] = {0}, first_half_mask[FRAME] = {0}, every_joint_mask[FRAME];
    memset(every_joint_mask, 1, FRAME);
    for (int k = 0; k < 16; k++)
        every_second_mask[every_second[k]] = first_half_mask[first_half[k]] = 1;
    enum { FULL, GATHERED, GATHERED_SPARSE, MASKED };
    const struct {
        const char *name;
        int kind;
        const int *index;
        int n_index;
        const unsigned char *mask;
    } loops[] = {{"full", FULL, NULL, 0, NULL},
                 {"every second joint", GATHERED, every_second, 16, NULL},
                 {"first half", GATHERED, first_half, 16, NULL},
                 {"first half, sparse requests", GATHERED_SPARSE, first_half, 16, NULL},
                 {"random half", GATHERED, random_half, 15, NULL},
                 {"every second joint, masked", MASKED, NULL, 0, every_second_mask},
                 {"first half, masked", MASKED, NULL, 0, first_half_mask},
                 {"every joint, masked", MASKED, NULL, 0, every_joint_mask}};
    enum { LOOPS = sizeof loops / sizeof loops[0] };
    const int depths[] = {depth, 0};
    static double ns[2][LOOPS][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) /* each round starts at another loop: no loop always follows the same */
        for (int d = 0; d < 2; d++)
            for (int step = 0; step < LOOPS; step++) {
                const int l = (r + step) % LOOPS;
                const double start = now_ns();
                if (loops[l].kind == GATHERED || loops[l].kind == GATHERED_SPARSE)
                    index_loop(loops[l].index, loops[l].n_index, depths[d], loops[l].kind == GATHERED_SPARSE);
                else if (loops[l].mask)
                    full_loop(loops[l].mask, depths[d]);
                else
                    full_loop(NULL, depths[d]); /* its own copy, without the masks */
                ns[d][l][r] = now_ns() - start;
            }
    printf("%zu frames of 31, out= separate, lists %zu bytes past 64-byte alignment; medians of %d rounds\n", frames,
           offset, rounds);
    printf("%-28s MATH %2d ns/rec    / full  MATH 0 ns/rec    / full\n", "loop", depth);
    for (int l = 0; l < LOOPS; l++)
        for (int d = 0; d < 2; d++)
            qsort(ns[d][l], (size_t)rounds, sizeof(double), by_value);
    for (int l = 0; l < LOOPS; l++) {
        const double with = ns[0][l][rounds / 2], without = ns[1][l][rounds / 2];
        printf("%-28s %14.2f %9.2f %14.2f %9.2f\n", loops[l].name, with / records, with / ns[0][0][rounds / 2],
               without / records, without / ns[1][0][rounds / 2]);
    }
    return 0;
}
