/*
 * partial_body_kernels.c - the driver of partial_body_kernels.sh: the slerp_joints kernels of one
 * or more builds of csrc/interp.c (symbols prefixed with each build's name), called directly
 * from C on the same lists, interleaved round by round. Prints, per x86 path, the median over
 * the rounds of each call's time over the first build's full call timed in the same round:
 * without the Python boundary, and with both builds under the same machine state.
 *
 * Each path's line ends with the call's data movement: both lists read and out written (in place:
 * out is joints) with this path's widest loads and stores and no math (out = max(joints, blend)),
 * over the same full call; no kernel that reads every cache line of the lists, as every second
 * joint does, can run below it. (The scalar path's line uses the SSE loop: the same bytes.) Then
 * each index's own data movement over the same: the selected records of both lists read and
 * written record by record (256-bit on avx2 / avx512, with a prefetch 32 entries ahead), with a
 * separate out the others copied, as the indexed call moves them.
 *
 * Arguments: joints per list, the paths (a comma-separated subset of scalar,sse,avx2,avx512),
 * rounds. Environment: OFFSET, the byte offset of every list from 64-byte alignment, or three
 * offsets "J,B,O" for joints (and the in-place list), blend and out: NumPy's small arrays lie 16
 * bytes apart from one allocation to the next, its large ones 16 bytes past a page. FRAME_JOINTS:
 * the lists as frames of that many joints (JOINTS rounded down to whole frames; the indexes
 * select within each frame, as for a clip of F frames x J joints).
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>

#include "probe_common.h"

typedef void (*full_kernel)(const char *, ptrdiff_t, const char *, ptrdiff_t, char *, ptrdiff_t, size_t, float);
typedef void (*indexed_kernel)(const char *, ptrdiff_t, const char *, ptrdiff_t, char *, ptrdiff_t, size_t, size_t,
                               const intptr_t *, size_t, float);

#define DECLARE_PATH(build, isa)                                                                       \
    void build##_jm_slerp_joints_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, char *, ptrdiff_t, \
                                       size_t, float);                                                 \
    void build##_jm_slerp_joints_indexed_##isa(const char *, ptrdiff_t, const char *, ptrdiff_t, char *,  \
                                               ptrdiff_t, size_t, size_t, const intptr_t *, size_t, float);
#define DECLARE_BUILD(build) DECLARE_PATH(build, scalar) DECLARE_PATH(build, sse) DECLARE_PATH(build, avx2) \
    DECLARE_PATH(build, avx512)
#define BUILD_ENTRY(build)                                                                              \
    {#build,                                                                                           \
     {build##_jm_slerp_joints_scalar, build##_jm_slerp_joints_sse, build##_jm_slerp_joints_avx2,       \
      build##_jm_slerp_joints_avx512},                                                                 \
     {build##_jm_slerp_joints_indexed_scalar, build##_jm_slerp_joints_indexed_sse,                     \
      build##_jm_slerp_joints_indexed_avx2, build##_jm_slerp_joints_indexed_avx512}},

BUILDS(DECLARE_BUILD) /* BUILDS(X): X(name) per build, defined by partial_body_kernels.sh */

typedef struct {
    const char *name;
    full_kernel full[4];
    indexed_kernel indexed[4];
} build;
static const build BUILD_LIST[] = {BUILDS(BUILD_ENTRY)};
#define N_BUILDS (int)(sizeof BUILD_LIST / sizeof BUILD_LIST[0])
static const char *const PATHS[4] = {"scalar", "sse", "avx2", "avx512"};

/* the indexes: every second joint, the first half, a random half, every third, every fourth */
#define N_INDEXES 5
static const char *const INDEX_NAMES[N_INDEXES] = {"every 2nd", "first half", "random half", "every 3rd", "every 4th"};

static char *joints, *blend, *out, *in_place;
static size_t n, frame_joints; /* records in all, and per frame */

/* out = max(a, b) over n records of 8 floats, 16, 32 or 64 bytes at a time (the data movement) */
#define MOVEMENT(name, isa, vec, width, load, max, store)                                  \
    __attribute__((target(isa))) static void name(const char *a, const char *b, char *o) { \
        for (size_t i = 0; i < n * 8; i += width) {                                           \
            vec x = load((const float *)a + i), y = load((const float *)b + i);               \
            store((float *)o + i, max(x, y));                                                  \
        }                                                                                      \
    }
MOVEMENT(movement_sse, "sse4.1", __m128, 4, _mm_loadu_ps, _mm_max_ps, _mm_storeu_ps)
MOVEMENT(movement_avx2, "avx2", __m256, 8, _mm256_loadu_ps, _mm256_max_ps, _mm256_storeu_ps)
MOVEMENT(movement_avx512, "avx512f", __m512, 16, _mm512_loadu_ps, _mm512_max_ps, _mm512_storeu_ps)
typedef void (*movement_kernel)(const char *, const char *, char *);
static const movement_kernel MOVEMENT_OF_PATH[4] = {movement_sse, movement_sse, movement_avx2, movement_avx512};

/* the same over the records an index selects in each frame, and with a separate out the others
   copied from a: an indexed call's own data movement, record by record in its order (no library
   call per gap, as the kernels), the records PREFETCH_ENTRIES entries ahead requested as the
   kernels request theirs */
#define PREFETCH_ENTRIES 32
#define INDEXED_MOVEMENT(name, isa, vec, width, load, max, store)                                        \
    __attribute__((target(isa))) static void name(const char *a, const char *b, char *o, const intptr_t *index, \
                                                  size_t n_index) {                                       \
        for (size_t first = 0; first < n; first += frame_joints) {                                         \
            const float *fa = (const float *)(a + 32 * first), *fb = (const float *)(b + 32 * first);      \
            float *fo = (float *)(o + 32 * first);                                                         \
            size_t next = 0;                                                                               \
            for (size_t k = 0; k <= n_index; k++) {                                                        \
                const size_t r = k < n_index ? (size_t)index[k] : frame_joints;                            \
                if (k + PREFETCH_ENTRIES < n_index) {                                                      \
                    _mm_prefetch((const char *)(fa + 8 * index[k + PREFETCH_ENTRIES]), _MM_HINT_T0);       \
                    _mm_prefetch((const char *)(fb + 8 * index[k + PREFETCH_ENTRIES]), _MM_HINT_T0);       \
                }                                                                                          \
                if (o != a)                                                                                \
                    for (size_t i = 8 * next; i < 8 * r; i += width)                                       \
                        store(fo + i, load(fa + i));                                                       \
                if (r < frame_joints)                                                                      \
                    for (size_t i = 8 * r; i < 8 * r + 8; i += width)                                      \
                        store(fo + i, max(load(fa + i), load(fb + i)));                                    \
                next = r + 1;                                                                              \
            }                                                                                              \
        }                                                                                                  \
    }
INDEXED_MOVEMENT(indexed_movement_sse, "sse4.1", __m128, 4, _mm_loadu_ps, _mm_max_ps, _mm_storeu_ps)
INDEXED_MOVEMENT(indexed_movement_avx2, "avx2", __m256, 8, _mm256_loadu_ps, _mm256_max_ps, _mm256_storeu_ps)
typedef void (*indexed_movement_kernel)(const char *, const char *, char *, const intptr_t *, size_t);
static const indexed_movement_kernel INDEXED_MOVEMENT_OF_PATH[4] = {indexed_movement_sse, indexed_movement_sse,
                                                                    indexed_movement_avx2, indexed_movement_avx2};

/* ns per call over `reps` calls: the full call (index NULL) or the indexed one, out= or in place
   (bd NULL: the path's data movement instead, of the whole lists or of the index) */
static double time_call(const build *bd, int path, const intptr_t *index, size_t n_index, int in_place_call, int reps) {
    char *o = in_place_call ? in_place : out;
    const char *a = in_place_call ? in_place : joints;
    double t0 = now_ns();
    for (int k = 0; k < reps; k++) {
        if (!bd && index)
            INDEXED_MOVEMENT_OF_PATH[path](a, blend, o, index, n_index);
        else if (!bd)
            MOVEMENT_OF_PATH[path](a, blend, o);
        else if (index)
            bd->indexed[path](a, 32, blend, 32, o, 32, n / frame_joints, frame_joints, index, n_index, 0.3f);
        else
            bd->full[path](a, 32, blend, 32, o, 32, n, 0.3f);
    }
    return (now_ns() - t0) / reps;
}

/* a list of n records, page-aligned plus offset, in transparent huge pages where the kernel gives
   them (NumPy asks for them for every allocation of 4 MiB or more: with 4 KiB pages, TLB misses
   slowed the full call in place at 1,048,576 joints from ~2.4 to ~4.8 ns per joint); unit
   quaternions, translations in [0, 1) */
static char *joint_list(size_t offset) {
    char *p = (char *)huge_page_block(n * 32 + 64, 4096) + offset;
    for (size_t i = 0; i < n; i++) {
        float *r = (float *)(p + 32 * i);
        double norm = 0.0;
        for (int k = 0; k < 4; k++) {
            r[k] = (float)(rand() / (double)RAND_MAX - 0.5);
            norm += (double)r[k] * r[k];
        }
        for (int k = 0; k < 4; k++)
            r[k] = (float)(r[k] / sqrt(norm));
        for (int k = 4; k < 7; k++)
            r[k] = (float)(rand() / (double)RAND_MAX);
        r[7] = 0.0f;
    }
    return p;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s JOINTS PATHS ROUNDS\n", argv[0]);
        return 2;
    }
    n = strtoul(argv[1], NULL, 10);
    const char *paths = argv[2];
    const int rounds = atoi(argv[3]);
    size_t offset[3] = {0, 0, 0}; /* joints, blend, out */
    if (getenv("OFFSET")) {
        char *end = getenv("OFFSET");
        for (int k = 0; k < 3; k++)
            offset[k] = *end ? strtoul(end + (k && *end == ','), &end, 10) : offset[k - 1];
    }
    const int reps = n <= 4096 ? (int)(400000 / n) + 1 : 1; /* a batch of ~1 ms at 1,024 joints */
    frame_joints = getenv("FRAME_JOINTS") ? strtoul(getenv("FRAME_JOINTS"), NULL, 10) : n;
    if (n < 8 || rounds < 1 || offset[0] > 63 || offset[1] > 63 || offset[2] > 63 || frame_joints < 8 ||
        frame_joints > n) {
        fprintf(stderr, "JOINTS >= 8, ROUNDS >= 1, offsets < 64, 8 <= FRAME_JOINTS <= JOINTS\n");
        return 2;
    }
    n -= n % frame_joints;
    srand(1);
    joints = joint_list(offset[0]);
    blend = joint_list(offset[1]);
    out = joint_list(offset[2]);
    in_place = joint_list(offset[0]);
    memcpy(in_place, joints, n * 32);

    intptr_t *index[N_INDEXES];
    size_t n_index[N_INDEXES] = {0};
    for (int s = 0; s < N_INDEXES; s++)
        index[s] = malloc(frame_joints * sizeof(intptr_t));
    for (size_t i = 0; i < frame_joints; i++) {
        if (i % 2 == 0)
            index[0][n_index[0]++] = (intptr_t)i;
        if (i < frame_joints / 2)
            index[1][n_index[1]++] = (intptr_t)i;
        if (rand() & 1)
            index[2][n_index[2]++] = (intptr_t)i;
        if (i % 3 == 0)
            index[3][n_index[3]++] = (intptr_t)i;
        if (i % 4 == 0)
            index[4][n_index[4]++] = (intptr_t)i;
    }

    /* per build: the indexes with out=, then in place (each against the first build's full call of
       the same kind), then the full calls themselves */
    const int n_calls = 2 * N_INDEXES + 2;
    double *ratio = malloc(sizeof(double) * (size_t)(rounds * N_BUILDS * n_calls));
    double *full_ns = malloc(sizeof(double) * (size_t)rounds * 2);
    double *movement = malloc(sizeof(double) * (size_t)rounds * 2); /* out=, in place, over the full call */
    double *own = malloc(sizeof(double) * (size_t)(rounds * 2 * N_INDEXES)); /* each index's, over the same */
    for (int path = 0; path < 4; path++) {
        if (!strstr(paths, PATHS[path]))
            continue;
        for (int r = 0; r < rounds; r++) {
            const double base[2] = {time_call(&BUILD_LIST[0], path, NULL, 0, 0, reps),
                                    time_call(&BUILD_LIST[0], path, NULL, 0, 1, reps)};
            full_ns[r] = base[0];
            full_ns[rounds + r] = base[1];
            for (int in_place_call = 0; in_place_call < 2; in_place_call++)
                movement[in_place_call * rounds + r] =
                    time_call(NULL, path, NULL, 0, in_place_call, reps) / base[in_place_call];
            for (int c = 0; c < 2 * N_INDEXES; c++)
                own[c * rounds + r] = time_call(NULL, path, index[c % N_INDEXES], n_index[c % N_INDEXES],
                                                c / N_INDEXES, reps) / base[c / N_INDEXES];
            for (int b = 0; b < N_BUILDS; b++)
                for (int c = 0; c < n_calls; c++) {
                    const int in_place_call = c < 2 * N_INDEXES ? c / N_INDEXES : c - 2 * N_INDEXES;
                    const int s = c < 2 * N_INDEXES ? c % N_INDEXES : -1;
                    const double t = time_call(&BUILD_LIST[b], path, s < 0 ? NULL : index[s], s < 0 ? 0 : n_index[s],
                                               in_place_call, reps);
                    ratio[(b * n_calls + c) * rounds + r] = t / base[in_place_call];
                }
        }
        qsort(full_ns, (size_t)rounds, sizeof(double), by_value);
        qsort(full_ns + rounds, (size_t)rounds, sizeof(double), by_value);
        printf("%s, %zu joints (frames of %zu), offsets %zu, %zu, %zu: full call of %s %.2f ns/joint with out=, %.2f in place (medians of %d "
               "rounds); indexed / full:\n",
               PATHS[path], n, frame_joints, offset[0], offset[1], offset[2], BUILD_LIST[0].name, full_ns[rounds / 2] / (double)n,
               full_ns[rounds + rounds / 2] / (double)n, rounds);
        for (int b = 0; b < N_BUILDS; b++) {
            printf("  %-10s", BUILD_LIST[b].name);
            for (int c = 0; c < n_calls; c++) {
                double *x = ratio + (b * n_calls + c) * rounds;
                qsort(x, (size_t)rounds, sizeof(double), by_value);
                if (c == N_INDEXES || c == 2 * N_INDEXES)
                    printf(" |%s", c == N_INDEXES ? " in place:" : " full, out= / in place:");
                if (c < 2 * N_INDEXES)
                    printf(" %s %.2f", INDEX_NAMES[c % N_INDEXES], x[rounds / 2]);
                else
                    printf(" %.2f", x[rounds / 2]);
            }
            printf("\n");
        }
        qsort(movement, (size_t)rounds, sizeof(double), by_value);
        qsort(movement + rounds, (size_t)rounds, sizeof(double), by_value);
        printf("  data movement / full: out= %.2f, in place %.2f\n", movement[rounds / 2],
               movement[rounds + rounds / 2]);
        printf("  each index's own data movement / full:");
        for (int c = 0; c < 2 * N_INDEXES; c++) {
            double *x = own + c * rounds;
            qsort(x, (size_t)rounds, sizeof(double), by_value);
            printf("%s %s %.2f", c == N_INDEXES ? " | in place:" : "", INDEX_NAMES[c % N_INDEXES], x[rounds / 2]);
        }
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
