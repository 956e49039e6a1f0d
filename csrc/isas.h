/*
 * isas.h - the ISA paths, listed once for the C code and for setup.py.
 *
 * JM_ISA_<NAME>: the value of JM_ISA a kernel family is compiled with for path <name> (selects
 * simd/<name>.h in simd/common.h). JM_ISAS_<ARCH>(X): X(name) for every path built for that
 * architecture, from the baseline up; JM_ISA_LIST(X) is the target's list (the order of the
 * dispatch table, jm_isa_table(i)). setup.py reads both kinds of line with a regular expression
 * (isa_targets): keep each on one line, in this form.
 */
#ifndef JM_ISAS_H
#define JM_ISAS_H

#define JM_ISA_SCALAR 0
#define JM_ISA_SSE 1
#define JM_ISA_AVX2 2
#define JM_ISA_AVX512 3
#define JM_ISA_NEON 4

#define JM_ISAS_X86(X) X(scalar) X(sse) X(avx2) X(avx512)
#define JM_ISAS_ARM64(X) X(scalar) X(neon)
#define JM_ISAS_OTHER(X) X(scalar)

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#define JM_ARCH_X86 1
#define JM_ISA_LIST JM_ISAS_X86
#elif defined(__aarch64__) || defined(_M_ARM64)
#define JM_ISA_LIST JM_ISAS_ARM64
#else
#define JM_ISA_LIST JM_ISAS_OTHER
#endif

#define JM_COUNT_ISA(isa) +1
#define JM_NUM_ISAS (0 JM_ISA_LIST(JM_COUNT_ISA))

#endif /* JM_ISAS_H */
