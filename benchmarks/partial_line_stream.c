/*
 * How fast one core streams two lists in place when it reads only one 32-byte record of each
 * 64-byte line (every second joint of a joint list) instead of the whole line, with no math
 * (x86-64 with AVX2, gcc):
 *   mkdir -p build && gcc -O2 -mavx2 benchmarks/partial_line_stream.c -o build/partial_line_stream && build/partial_line_stream
 * Two lists of 1,048,576 records (32 MiB each, in transparent huge pages where the kernel gives
 * them); each loop writes max(a, b) into a record by record, and prints the median time of 31
 * rounds (the loops interleaved round by round) over the loop over every record:
 *   every record           both records of every line read and written (the full call's stream)
 *   every second record    one record of each line read from both lists and written
 *   ..., whole lines read  the same, and the other record of each line of both lists read too
 *                          (discarded: nothing but the selected records is written)
 *   ... with requests      the two above with software requests ahead, into L1 and L2, as the
 *                          kernels of csrc/interp.c make them in place
 */
#include <immintrin.h>

#include "probe_common.h"

#define RECORDS ((size_t)1 << 20)
#define ROUNDS 31
static float *a, *b;

/* the records of a and b at record r: max into a; the other record of the line read when whole */
static inline void record(size_t r, int whole) {
    const __m256 x = _mm256_loadu_ps(a + 8 * r), y = _mm256_loadu_ps(b + 8 * r);
    if (whole) {
        const __m256 x2 = _mm256_loadu_ps(a + 8 * (r ^ 1)), y2 = _mm256_loadu_ps(b + 8 * (r ^ 1));
        __asm__ volatile("" : : "x"(x2), "x"(y2)); /* read, not used */
    }
    _mm256_storeu_ps(a + 8 * r, _mm256_max_ps(x, y));
}

/* the lines 64 records ahead of record r into L1 and 256 ahead into L2, those of b 32 and 512
   records further ahead (as the kernels' in-place requests lead `blend`) */
static inline void request(size_t r) {
    if (r + 1024 < RECORDS) {
        _mm_prefetch((const char *)(a + 8 * (r + 64)), _MM_HINT_T0);
        _mm_prefetch((const char *)(b + 8 * (r + 96)), _MM_HINT_T0);
        _mm_prefetch((const char *)(a + 8 * (r + 256)), _MM_HINT_T1);
        _mm_prefetch((const char *)(b + 8 * (r + 768)), _MM_HINT_T1);
    }
}

static void every_record(void) {
    for (size_t r = 0; r < RECORDS; r++)
        record(r, 0);
}
static void every_second(void) {
    for (size_t r = 0; r < RECORDS; r += 2)
        record(r, 0);
}
static void every_second_whole_lines(void) {
    for (size_t r = 0; r < RECORDS; r += 2)
        record(r, 1);
}
static void every_second_requests(void) {
    for (size_t r = 0; r < RECORDS; r += 2) {
        request(r);
        record(r, 0);
    }
}
static void every_second_whole_lines_requests(void) {
    for (size_t r = 0; r < RECORDS; r += 2) {
        request(r);
        record(r, 1);
    }
}

static float *list(unsigned seed) {
    float *p = huge_page_block(RECORDS * 32, (size_t)1 << 21);
    for (size_t i = 0; i < RECORDS * 8; i++)
        p[i] = (float)((i * 2654435761u + seed) % 1000) / 1000.0f;
    return p;
}

int main(void) {
    static void (*const loops[])(void) = {every_record, every_second, every_second_whole_lines, every_second_requests,
                                          every_second_whole_lines_requests};
    static const char *const names[] = {"every record", "every second record", "..., whole lines read",
                                        "every second record with requests", "..., whole lines read, with requests"};
    enum { N_LOOPS = sizeof loops / sizeof loops[0] };
    static double ns[N_LOOPS][ROUNDS];
    a = list(1);
    b = list(2);
    for (int round = 0; round < ROUNDS; round++)
        for (int k = 0; k < N_LOOPS; k++) {
            const double t0 = now_ns();
            loops[k]();
            ns[k][round] = now_ns() - t0;
        }
    for (int k = 0; k < N_LOOPS; k++)
        qsort(ns[k], ROUNDS, sizeof(double), by_value);
    printf("1,048,576 records in place, no math, medians of %d rounds\n", ROUNDS);
    for (int k = 0; k < N_LOOPS; k++)
        printf("  %-38s %.2f ns per record of the list, %.2f of every record\n", names[k],
               ns[k][ROUNDS / 2] / (double)RECORDS, ns[k][ROUNDS / 2] / ns[0][ROUNDS / 2]);
    return 0;
}
