/*
 * dispatch.c - which ISA paths this machine can run, and their kernel tables.
 *
 * Built with baseline x86-64 flags only: it must run on any CPU before anything else is chosen.
 * A path is usable when cpuid reports its instructions AND the OS saves the registers they use
 * (XCR0 via xgetbv); a CPU with AVX-512 under an OS that does not save ZMM state must not use it.
 */
#include "jointmath.h"

#include <cpuid.h>
#include <stdint.h>

#define JM_TABLE(isa)                                                                            \
    {#isa, jm_joints_to_mats_##isa, jm_mats_to_joints_##isa, jm_quats_to_matrices_##isa,          \
     jm_matrices_to_quats_##isa, jm_pack_quats32_##isa, jm_pack_quats64_##isa,                   \
     jm_unpack_quats32_##isa, jm_unpack_quats64_##isa, jm_extract_mats_##isa,                    \
     jm_extract_matrices_##isa, jm_compose_mats_##isa, jm_slerp_joints_##isa, jm_lerp_joints_##isa, \
     jm_slerp_joints_indexed_##isa, jm_lerp_joints_indexed_##isa, jm_index_increasing_##isa,     \
     jm_slerp_quats_##isa,                                                                      \
     jm_nlerp_quats_##isa, jm_euler_to_quats_##isa, jm_quats_to_euler_##isa}

static const jm_kernel_table tables[JM_NUM_ISAS] = {
    JM_TABLE(scalar),
    JM_TABLE(sse),
    JM_TABLE(avx2),
    JM_TABLE(avx512),
};

const jm_kernel_table *jm_isa_table(int i) { return (i >= 0 && i < JM_NUM_ISAS) ? &tables[i] : NULL; }

static uint64_t read_xcr0(void) {
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

int jm_isa_supported(int i) {
    unsigned a, b, c, d;
    if (i == 0)
        return 1;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    const int sse41 = (c >> 19) & 1, fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (i == 1)
        return sse41;
    if (!(osxsave && avx && fma))
        return 0;
    const uint64_t xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6) /* XMM and YMM state */
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    const int avx2 = (b >> 5) & 1;
    if (i == 2)
        return avx2;
    /* AVX-512 F, DQ, BW, VL and the opmask / ZMM state (XCR0 bits 5, 6, 7) */
    const int avx512 = ((b >> 16) & 1) && ((b >> 17) & 1) && ((b >> 30) & 1) && ((b >> 31) & 1);
    return i == 3 && avx2 && avx512 && (xcr0 & 0xe6) == 0xe6;
}
