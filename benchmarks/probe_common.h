/*
 * What the C probes of this folder share (partial_body_kernels.c, partial_line_stream.c,
 * frame_index_stream.c; each is compiled on its own and includes this file by its quoted name).
 */
#ifndef JOINTMATH_PROBE_COMMON_H
#define JOINTMATH_PROBE_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

/* a monotonic clock in ns */
static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* qsort's comparison of doubles, ascending (the medians) */
static int by_value(const void *x, const void *y) {
    const double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

/* `bytes` at an `align`-aligned address (a power of two, at least 4 KiB), asked for in transparent
   huge pages (a hint: without them the block still works); exits when there is no memory */
static void *huge_page_block(size_t bytes, size_t align) {
    void *p = NULL;
    if (posix_memalign(&p, align, bytes)) {
        perror("posix_memalign");
        exit(1);
    }
    madvise(p, bytes / 4096 * 4096, MADV_HUGEPAGE);
    return p;
}
#endif
