/*
 * dispatch.c - which ISA paths this machine can run, and their kernel tables.
 *
 * Built with baseline flags only: it must run on any CPU before anything else is chosen. On x86
 * a path is usable when cpuid reports its instructions AND the OS saves the registers they use
 * (XCR0 via xgetbv); a CPU with AVX-512 under an OS that does not save ZMM state must not use it.
 * On arm64 NEON is part of the architecture: every path built runs. Elsewhere only scalar is built.
 */
#include "jointmath.h"

#include <stdint.h>

/* Path isa's table: its name, then jm_<name>_<isa> for every kernel of csrc/kernels.h. */
#define JM_TABLE_ENTRY(name, kind, isa) jm_##name##_##isa,
#define JM_TABLE(isa) {#isa, JM_KERNELS(JM_TABLE_ENTRY, isa)},

/* every field after the name is a kernel of the list (none added or left out by hand) */
_Static_assert(sizeof(jm_kernel_table) == sizeof(const char *) + JM_NUM_KERNELS * sizeof(void (*)(void)),
               "jm_kernel_table has one field per kernel of csrc/kernels.h");

static const jm_kernel_table tables[JM_NUM_ISAS] = {JM_ISA_LIST(JM_TABLE)};

const jm_kernel_table *jm_isa_table(int i) { return (i >= 0 && i < JM_NUM_ISAS) ? &tables[i] : NULL; }

#ifdef JM_ARCH_X86
#ifdef _MSC_VER
#include <intrin.h>

/* cpuid leaf `leaf`, subleaf `sub` into r = eax, ebx, ecx, edx; 0 when the CPU lacks the leaf */
static int cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
    int x[4];
    __cpuid(x, (int)(leaf & 0x80000000u));
    if ((unsigned)x[0] < leaf)
        return 0;
    __cpuidex(x, (int)leaf, (int)sub);
    for (int k = 0; k < 4; k++)
        r[k] = (unsigned)x[k];
    return 1;
}

static uint64_t read_xcr0(void) { return _xgetbv(0); }
#else
#include <cpuid.h>

static int cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
    return __get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]);
}

static uint64_t read_xcr0(void) {
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}
#endif

int jm_isa_supported(int i) {
    unsigned r[4];
    if (i == 0)
        return 1;
    if (!cpuid(1, 0, r))
        return 0;
    const unsigned c = r[2];
    const int sse41 = (c >> 19) & 1, fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (i == 1)
        return sse41;
    if (!(osxsave && avx && fma))
        return 0;
    const uint64_t xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6) /* XMM and YMM state */
        return 0;
    if (!cpuid(7, 0, r))
        return 0;
    const unsigned b = r[1];
    const int avx2 = (b >> 5) & 1;
    if (i == 2)
        return avx2;
    /* AVX-512 F, DQ, BW, VL and the opmask / ZMM state (XCR0 bits 5, 6, 7) */
    const int avx512 = ((b >> 16) & 1) && ((b >> 17) & 1) && ((b >> 30) & 1) && ((b >> 31) & 1);
    return i == 3 && avx2 && avx512 && (xcr0 & 0xe6) == 0xe6;
}
#else
int jm_isa_supported(int i) { return i >= 0 && i < JM_NUM_ISAS; }
#endif
