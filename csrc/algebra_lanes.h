/*
 * algebra_lanes.h - the element-wise rotation algebra kernels (csrc/algebra.c), written once for
 * float32 and float64 lanes: a type-generic template (no include guard) that algebra.c includes
 * once per lane type after defining
 *
 *   T, T_MASK       the lane vector and mask types (vf, vmask / vd, vdmask)
 *   T_OP(op)        the ISA operation on T (v_op, vd_op); T_MASK_OP(op) on masks (m_op, md_op)
 *   T_FN(name)      the function name (name / name_f64)
 *   T_S, T_W        the lane's C type and the lanes per vector (float, JM_W / double, JM_WD)
 *   T_QUAD          bytes of four T_S (a quad: what T_OP(load_quads) moves per record)
 *   T_FROM_BITS     jm_float_from_bits / jm_double_from_bits
 *   T_EXPONENT_BITS the exponent field's bits, T_MIN_NORMAL the smallest normal number
 *   T_ATAN(y, x)    atan2(y, x) in [0, pi/2] for y, x >= 0 (NaN or 0 for y = x = 0)
 *   T_RANGE_LO, T_RANGE_HI   the magnitudes within which sums of four squares neither overflow
 *                   nor underflow: blocks with a record outside are scaled by a power of two first
 *   T_HALF_SIN_COS(a, degrees, &s, &c)   sin and cos of a / 2 (csrc/trig.h)
 *   T_TO_ROTATION(x, y, z, w, r)         the rotation matrix of q / |q| (csrc/quat_math.h)
 *   T_FROM_ROTATION(r, q)                the unit quaternion of a rotation matrix (quat_math.h)
 *   T_NEAR_ZERO     below this ratio |v| / |w| a rotation vector takes the series (2^-12 / 2^-27)
 *   T_SERIES_ANGLE2 below this squared angle (radians) rotvec_to_quat takes its series
 *   T_PARALLEL2     sixd_to_quat's squared ratio |a2 orthogonal| / |a2| below which a2 is parallel to a1
 *   T_FAR_RADIANS, T_FAR_DEGREES   beyond these angles rotvec_to_quat redoes a record in double
 *   T_RSQRT(x)      1 / sqrt(x) for x in a normal range: the refined estimate (float32, about 1
 *                   ulp, v_rsqrt_fine) or a square root and a division (float64)
 *   T_LOAD_RECORDS(base, stride, quads, c), T_STORE_RECORDS   records of whole quads (v_load_records)
 *   T_SIXD_LO, T_SIXD_LO2, T_SIXD_HI   sixd_to_quat's short form: |a1|^2 in [LO, HI], |a2|^2 in [LO2, HI]
 *   T_SWING_LO, T_SWING_HI   the range of swing_twist's short form: |(p, w)|^2 >= T_SWING_LO and
 *                   |q|^2 <= T_SWING_HI at q's own scale (all its squares and scalings normal)
 *
 * and undefine them after. Every kernel has the type jm_algebra_fn (csrc/jointmath.h): records of
 * a and b (b unused by one-operand kernels) at any strides, 0 included, to records of out;
 * swing_twist, jm_algebra2_fn, writes its result's two quads to two arrays (out, out2). The
 * contracts are above each kernel's compute function and in docs/families/algebra.md.
 */

/* ------------------------------------------------------------------ the driver -- */

#ifndef JM_UNROLL_4 /* defined once: the first inclusion */
#if defined(__GNUC__) && !defined(__clang__)
#define JM_UNROLL_4 _Pragma("GCC unroll 4")
#elif defined(__clang__)
#define JM_UNROLL_4 _Pragma("unroll 4")
#else
#define JM_UNROLL_4
#endif
#endif

/*
 * load_operand: the records of lanes 0 .. count - 1 (count <= T_W) of an operand of nf floats per
 * record (1 ... 8) into c[0 .. 4 quads), component k in c[k]. A full block is loaded where it
 * is when its records are quaternion-sized (nf a multiple of 4), or packed (stride = the record)
 * with a record of the caller's after the block (more_after): each record's last quad then ends
 * inside the next record. Any other block is first copied to `stage` (T_W * 8 + 4 floats: the
 * last record's quad ends inside it), so no load reads past the caller's records.
 */
JM_INLINE void T_FN(load_operand)(const char *base, ptrdiff_t stride, int nf, size_t count, int more_after,
                                  T_S *stage, T c[8]) {
    const int quads = (nf + 3) / 4;
    const ptrdiff_t record = nf * (ptrdiff_t)sizeof(T_S);
    const int full = count == T_W;
    if (!(full && (nf % 4 == 0 || (more_after && stride == record)))) {
        if (stride == record) {
            memcpy(stage, base, count * (size_t)record);
        } else {
            for (size_t i = 0; i < count; i++)
                memcpy((char *)stage + (ptrdiff_t)i * record, base + (ptrdiff_t)i * stride, (size_t)record);
        }
        base = (const char *)stage;
        stride = record;
    }
    if (nf % 4 == 0) {
        T_LOAD_RECORDS(base, stride, quads, c); /* packed: whole vectors where the path has them */
        return;
    }
    for (int k = 0; k < quads; k++)
        T_OP(load_quads)(base + k * T_QUAD, stride, &c[4 * k], &c[4 * k + 1], &c[4 * k + 2], &c[4 * k + 3]);
}

/*
 * store_result: the inverse of load_operand for a result of nf floats per record (c[nf ... the
 * last quad's end) are written to the stage only): nothing is written past a record, except
 * in one case: 6-float records of a full packed block with a record after it (more_after) that
 * is no input's (spill_ok) are stored as their second quads, then their first quads, so each
 * second quad's two floats past the record are overwritten by the next record's first quad (the
 * block's last by the next block, written later).
 */
JM_INLINE void T_FN(store_result)(char *base, ptrdiff_t stride, int nf, size_t count, int more_after, int spill_ok,
                                  T_S *stage, const T *c) {
    const int quads = (nf + 3) / 4;
    const ptrdiff_t slot = quads * T_QUAD, record = nf * (ptrdiff_t)sizeof(T_S);
    if (nf == 6 && count == T_W && more_after && spill_ok && stride == record) {
        T_OP(store_quads)(base + T_QUAD, stride, c[4], c[5], c[6], c[7]);
        T_OP(store_quads)(base, stride, c[0], c[1], c[2], c[3]);
        return;
    }
    const int direct = nf % 4 == 0 && count == T_W;
    if (direct) {
        T_STORE_RECORDS(base, stride, quads, c);
        return;
    }
    char *to = direct ? base : (char *)stage;
    const ptrdiff_t to_stride = direct ? stride : slot;
    for (int k = 0; k < quads; k++)
        T_OP(store_quads)(to + k * T_QUAD, to_stride, c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]);
    if (!direct)
        for (size_t i = 0; i < count; i++)
            memcpy(base + (ptrdiff_t)i * stride, (char *)stage + (ptrdiff_t)i * slot, (size_t)record);
}

/* A kernel's arithmetic on one block of loaded lanes: a, b -> out (every entry of out's last
   quad set); returns nonzero when a lane must be redone by the kernel's cold path. */
typedef int (*T_FN(compute_fn))(const T a[8], const T b[8], T out[8], int flag);
/* The cold path: the records of count lanes, read again from a, written to out (never the same
   memory: such kernels' records differ in size, so the boundary never runs them in place). */
typedef void (*T_FN(redo_fn))(const char *a, ptrdiff_t as, char *out, ptrdiff_t os, size_t count, int flag);

/* One block of `count` records: every operand is loaded before the results are stored (out may
   be an input itself, record for record); b's lanes are fixed_b where b is one record for all. */
JM_INLINE void T_FN(run_block)(T_FN(compute_fn) compute, T_FN(redo_fn) redo, int na, int nb, int no,
                               const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const T *fixed_b, char *o,
                               ptrdiff_t os, char *o2, ptrdiff_t os2, size_t count, int more_after, int flag,
                               T_S *stage_a, T_S *stage_b, T_S *stage_o) {
    T va[8], vb[8], vo[8];
    T_FN(load_operand)(a, as, na, count, more_after, stage_a, va);
    if (nb && !fixed_b)
        T_FN(load_operand)(b, bs, nb, count, more_after, stage_b, vb);
    const int cold = compute(va, fixed_b ? fixed_b : vb, vo, flag);
    if (o2) { /* two results of 4 floats */
        T_FN(store_result)(o, os, 4, count, more_after, 0, stage_o, vo);
        T_FN(store_result)(o2, os2, 4, count, more_after, 0, stage_o, vo + 4);
    } else {
        /* out has other records than every input: the boundary never runs it in place */
        T_FN(store_result)(o, os, no, count, more_after, no != na && no != nb, stage_o, vo);
    }
    if (JM_UNLIKELY(cold))
        redo(a, as, o, os, count, flag);
}

/*
 * Groups of 4 T_W records, block j (j < 4) holding records j, j + 4, j + 8, ... (lane l: record
 * 4 l + j), so that the four records of lane l are consecutive: packed records of nf floats are
 * then nf whole quads per lane, moved by T_OP(load_quads) / T_OP(store_quads) at stride 4
 * records with no stage and nothing read or written past the group (record j's component c is
 * float j nf + c of its lane's quads: a renaming, no shuffle). Quaternion-sized records may have
 * any stride (block j read at base + j stride, stride 4 stride). Two other layouts (`layout`):
 * GROUP_CONSECUTIVE, where every operand and result is quaternion-sized: block j holds records
 * j T_W ... j T_W + T_W - 1, moved as whole records (T_LOAD_RECORDS: packed ones as whole vectors
 * where the path has them); GROUP_PAIRS, where every one is packed with an even number of floats
 * (6 -> 4): two consecutive records are one record of whole quads, so blocks 2h and 2h + 1 hold
 * the first and second records of the pairs of records 2 h T_W ... 2 (h + 1) T_W - 1.
 */
#define GROUP_INTERLEAVED 0
#define GROUP_CONSECUTIVE 1
#define GROUP_PAIRS 2
JM_INLINE void T_FN(load_group)(const char *base, ptrdiff_t stride, int nf, int layout, T c[4][8]) {
    if (layout == GROUP_CONSECUTIVE) {
        for (int j = 0; j < 4; j++)
            T_LOAD_RECORDS(base + j * T_W * stride, stride, nf / 4, c[j]);
        return;
    }
    if (layout == GROUP_PAIRS) {
        for (int h = 0; h < 2; h++) {
            T pair[16];
            T_LOAD_RECORDS(base + 2 * h * T_W * stride, 2 * stride, nf / 2, pair);
            for (int f = 0; f < nf; f++)
                c[2 * h][f] = pair[f], c[2 * h + 1][f] = pair[nf + f];
        }
        return;
    }
    if (nf % 4 == 0) {
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < nf / 4; k++)
                T_OP(load_quads)(base + j * stride + k * T_QUAD, 4 * stride, &c[j][4 * k], &c[j][4 * k + 1],
                                 &c[j][4 * k + 2], &c[j][4 * k + 3]);
        return;
    }
    T q[8][4];
    for (int k = 0; k < nf; k++)
        T_OP(load_quads)(base + k * T_QUAD, 4 * stride, &q[k][0], &q[k][1], &q[k][2], &q[k][3]);
    for (int j = 0; j < 4; j++)
        for (int f = 0; f < nf; f++)
            c[j][f] = q[(j * nf + f) / 4][(j * nf + f) % 4];
}

/* store_group: the inverse of load_group for components first ... first + nf - 1 of c */
JM_INLINE void T_FN(store_group)(char *base, ptrdiff_t stride, int nf, int layout, int first, T c[4][8]) {
    if (layout == GROUP_CONSECUTIVE) {
        for (int j = 0; j < 4; j++)
            T_STORE_RECORDS(base + j * T_W * stride, stride, nf / 4, c[j] + first);
        return;
    }
    if (layout == GROUP_PAIRS) {
        for (int h = 0; h < 2; h++) {
            T pair[16];
            for (int f = 0; f < nf; f++)
                pair[f] = c[2 * h][first + f], pair[nf + f] = c[2 * h + 1][first + f];
            T_STORE_RECORDS(base + 2 * h * T_W * stride, 2 * stride, nf / 2, pair);
        }
        return;
    }
    if (nf % 4 == 0) {
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < nf / 4; k++)
                T_OP(store_quads)(base + j * stride + k * T_QUAD, 4 * stride, c[j][first + 4 * k],
                                  c[j][first + 4 * k + 1], c[j][first + 4 * k + 2], c[j][first + 4 * k + 3]);
        return;
    }
    for (int k = 0; k < nf; k++) {
        T q[4];
        for (int e = 0; e < 4; e++)
            q[e] = c[(4 * k + e) / nf][(4 * k + e) % nf];
        T_OP(store_quads)(base + k * T_QUAD, 4 * stride, q[0], q[1], q[2], q[3]);
    }
}

/* One group: every operand of the four blocks loaded before the first result is stored (out may
   be an input itself, record for record); the cold path per block, at its stride. */
JM_INLINE void T_FN(run_group)(T_FN(compute_fn) compute, T_FN(redo_fn) redo, int na, int nb, int no,
                               const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const T *fixed_b, char *o,
                               ptrdiff_t os, char *o2, ptrdiff_t os2, int layout, int flag) {
    T va[4][8], vb[4][8], vo[4][8];
    int cold[4];
    T_FN(load_group)(a, as, na, layout, va);
    if (nb && !fixed_b)
        T_FN(load_group)(b, bs, nb, layout, vb);
    /* the four blocks' computations unrolled side by side: their dependency chains (square roots,
       estimates and their refinements) overlap instead of running one after another */
    JM_UNROLL_4
    for (int j = 0; j < 4; j++)
        cold[j] = compute(va[j], fixed_b ? fixed_b : vb[j], vo[j], flag);
    if (o2) { /* two results of 4 floats */
        T_FN(store_group)(o, os, 4, layout, 0, vo);
        T_FN(store_group)(o2, os2, 4, layout, 4, vo);
    } else {
        T_FN(store_group)(o, os, no, layout, 0, vo);
    }
    /* (no kernel with a cold path has two results) */
    for (int j = 0; j < 4; j++)
        if (JM_UNLIKELY(cold[j])) {
            if (layout == GROUP_CONSECUTIVE)
                redo(a + j * T_W * as, as, o + j * T_W * os, os, T_W, flag);
            else if (layout == GROUP_PAIRS)
                redo(a + (j / 2 * 2 * T_W + j % 2) * as, 2 * as, o + (j / 2 * 2 * T_W + j % 2) * os, 2 * os, T_W,
                     flag);
            else
                redo(a + j * as, 4 * as, o + j * os, 4 * os, T_W, flag);
        }
}

/*
 * run: n records (na, nb, no: floats per record of a, b (0: no b) and out): groups of 4 T_W
 * records where every operand is quaternion-sized or packed (run_group), then T_W at a time: the
 * full blocks with records after them in one loop (count and more_after constants there: packed
 * records move without a stage), then the last 1 ... T_W records. The stages start zeroed where
 * an operand may be staged, so the lanes past the last record hold zeros or earlier records
 * (their results are never stored) and no lane reads an unset float. A b of stride 0 (one record
 * broadcast against every a, as an axis) is loaded into every lane once (fixed_b). o2 non-NULL
 * (no = 8): floats 0..3 of each result go to o (stride os), 4..7 to o2 (stride os2).
 */
JM_INLINE void T_FN(run_records)(T_FN(compute_fn) compute, T_FN(redo_fn) redo, int na, int nb, int no,
                                 const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const T *fixed_b, char *o,
                                 ptrdiff_t os, char *o2, ptrdiff_t os2, size_t n, int flag) {
    T_S stage_a[T_W * 8 + 4], stage_b[T_W * 8 + 4], stage_o[T_W * 8];
    memset(stage_a, 0, sizeof stage_a);
    if (nb)
        memset(stage_b, 0, sizeof stage_b);
    size_t i = 0;
    /* 6-float results store faster through store_result's second-quads-first path (measured:
       docs/design/algebra-records.md) */
    const ptrdiff_t size = (ptrdiff_t)sizeof(T_S);
    /* every operand and result quaternion-sized: consecutive blocks, whole records; packed with an
       even number of floats (6 -> 4): pairs of records as whole records */
    const int pairs = na % 2 == 0 && na < 8 && as == na * size && no % 2 == 0 && no < 8 && os == no * size && !o2 &&
                      (!nb || fixed_b || (nb % 2 == 0 && bs == nb * size));
    const int layout = na % 4 == 0 && (nb % 4 == 0 || fixed_b) && no % 4 == 0 ? GROUP_CONSECUTIVE
                       : pairs                                                  ? GROUP_PAIRS
                                                                                : GROUP_INTERLEAVED;
    if ((na % 4 == 0 || as == na * size) && (nb % 4 == 0 || bs == nb * size || fixed_b) &&
        (no % 4 == 0 || os == no * size) &&
        no != 6)
        for (; i + 4 * T_W <= n; i += 4 * T_W)
            T_FN(run_group)(compute, redo, na, nb, no, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs,
                            fixed_b, o + (ptrdiff_t)i * os, os, o2 ? o2 + (ptrdiff_t)i * os2 : NULL, os2,
                            layout, flag);
    for (; i + T_W < n; i += T_W)
        T_FN(run_block)(compute, redo, na, nb, no, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs,
                        fixed_b, o + (ptrdiff_t)i * os, os, o2 ? o2 + (ptrdiff_t)i * os2 : NULL, os2, T_W, 1,
                        flag, stage_a, stage_b, stage_o);
    if (i < n)
        T_FN(run_block)(compute, redo, na, nb, no, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs,
                        fixed_b, o + (ptrdiff_t)i * os, os, o2 ? o2 + (ptrdiff_t)i * os2 : NULL, os2, n - i, 0,
                        flag, stage_a, stage_b, stage_o);
}

JM_INLINE void T_FN(run)(T_FN(compute_fn) compute, T_FN(redo_fn) redo, int na, int nb, int no, const char *a,
                         ptrdiff_t as, const char *b, ptrdiff_t bs, char *o, ptrdiff_t os, char *o2, ptrdiff_t os2,
                         size_t n, int flag) {
    if (nb && bs == 0) {
        T fixed[8];
        T_S copies[T_W * 8] = {0};
        for (int l = 0; l < T_W; l++)
            memcpy(copies + 8 * l, b, (size_t)nb * sizeof(T_S));
        for (int k = 0; k < (nb + 3) / 4; k++)
            T_OP(load_quads)((const char *)copies + k * T_QUAD, 8 * (ptrdiff_t)sizeof(T_S), &fixed[4 * k],
                             &fixed[4 * k + 1], &fixed[4 * k + 2], &fixed[4 * k + 3]);
        /* a separate instance: what the kernel computes from b alone may move out of the loops */
        T_FN(run_records)(compute, redo, na, nb, no, a, as, b, bs, fixed, o, os, o2, os2, n, flag);
    } else {
        T_FN(run_records)(compute, redo, na, nb, no, a, as, b, bs, NULL, o, os, o2, os2, n, flag);
    }
}

/* ----------------------------------------------------------------- the helpers -- */

JM_INLINE T T_FN(zero_lanes)(void) { return T_OP(set1)((T_S)0); }
JM_INLINE T T_FN(nan_lanes)(void) { return T_OP(set1)((T_S)NAN); }

/* p * q, the Hamilton product in (x, y, z, w) */
JM_INLINE void T_FN(hamilton)(const T p[4], const T q[4], T out[4]) {
    out[0] = T_OP(fmadd)(p[3], q[0], T_OP(fmadd)(p[0], q[3], T_OP(fnmadd)(p[2], q[1], T_OP(mul)(p[1], q[2]))));
    out[1] = T_OP(fmadd)(p[3], q[1], T_OP(fmadd)(p[1], q[3], T_OP(fnmadd)(p[0], q[2], T_OP(mul)(p[2], q[0]))));
    out[2] = T_OP(fmadd)(p[3], q[2], T_OP(fmadd)(p[2], q[3], T_OP(fnmadd)(p[1], q[0], T_OP(mul)(p[0], q[1]))));
    out[3] = T_OP(fnmadd)(p[0], q[0], T_OP(fnmadd)(p[1], q[1], T_OP(fnmadd)(p[2], q[2], T_OP(mul)(p[3], q[3]))));
}

JM_INLINE T T_FN(dot3)(const T a[3], const T b[3]) {
    return T_OP(fmadd)(a[0], b[0], T_OP(fmadd)(a[1], b[1], T_OP(mul)(a[2], b[2])));
}

/*
 * pow2_factors: the power of two 2^-e = lift * scale that puts the largest |v[i]| (i < n) in
 * [1, 2), as two factors each representable (lift 2^64 lifts a subnormal largest first), with
 * v scaled by them in place (exact: the same as scale_pow2 of simd/lane_helpers.h, which does not
 * return the factors). All zero: scale 2^(bias - 1), v stays 0; inf: v becomes NaN.
 */
JM_INLINE void T_FN(pow2_factors)(T *v, int n, T *lift, T *scale) {
    T largest = T_OP(abs)(v[0]);
    for (int i = 1; i < n; i++)
        largest = T_OP(max)(largest, T_OP(abs)(v[i]));
    const T exponent_bits = T_OP(set1)(T_FROM_BITS(T_EXPONENT_BITS));
    *lift = T_OP(select)(T_OP(ge)(largest, T_OP(set1)(T_MIN_NORMAL)), T_OP(set1)((T_S)1), T_OP(set1)((T_S)0x1p64));
    T power = T_OP(and)(T_OP(mul)(largest, *lift), exponent_bits);
    *scale = T_OP(min)(T_OP(mul)(T_OP(xor)(power, exponent_bits), T_OP(set1)((T_S)0.5)),
                       T_OP(set1)((T_S)1 / T_MIN_NORMAL));
    for (int i = 0; i < n; i++)
        v[i] = T_OP(mul)(T_OP(mul)(v[i], *lift), *scale);
}

/* v[0..n) of every lane scaled by the power of two that puts its largest |v[i]| in [1, 2) (exact,
   scale_pow2) where a lane's largest is outside [T_RANGE_LO, T_RANGE_HI), zero, inf or NaN: the
   common block (every lane in range) pays one test; a lane's result does not depend on whether
   its block was scaled, beyond the last bit of a rounding. */
JM_INLINE void T_FN(scale_if_needed)(T *v, int n) {
    T largest = T_OP(abs)(v[0]);
    for (int i = 1; i < n; i++)
        largest = T_OP(max)(largest, T_OP(abs)(v[i]));
    T_MASK in_range = T_MASK_OP(and)(T_OP(ge)(largest, T_OP(set1)((T_S)T_RANGE_LO)),
                                     T_OP(lt)(largest, T_OP(set1)((T_S)T_RANGE_HI)));
    if (JM_UNLIKELY(T_MASK_OP(any)(T_MASK_OP(not)(in_range))))
        T_OP(scale_pow2)(v, n);
}

/* Whether v[0..n), after scale_if_needed, was finite and non-zero: its |components| sum to more
   than 0 (0 for zeros, NaN for an inf or NaN component, which scale_pow2 turns into NaN). */
JM_INLINE T_MASK T_FN(is_valid)(const T *v, int n) {
    T sum = T_OP(abs)(v[0]);
    for (int i = 1; i < n; i++)
        sum = T_OP(add)(sum, T_OP(abs)(v[i]));
    return T_OP(gt)(sum, T_FN(zero_lanes)());
}

/* 2 atan2(|v|, |w|), the rotation angle in [0, pi] of a quaternion after scale_if_needed */
JM_INLINE T T_FN(rotation_angle)(const T q[4]) {
    T s = T_OP(sqrt)(T_FN(dot3)(q, q));
    T a = T_ATAN(s, T_OP(abs)(q[3]));
    return T_OP(add)(a, a);
}

/* ----------------------------------------------------------------- the kernels -- */

/* quat_multiply: the Hamilton product p * q (apply q, then p), not normalised. */
JM_INLINE int T_FN(multiply_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)flag;
    T_FN(hamilton)(a, b, out);
    return 0;
}

/* quat_conjugate: (-x, -y, -z, w), exact (sign bits flipped, NaN and zeros included). */
JM_INLINE int T_FN(conjugate_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)b, (void)flag;
    for (int k = 0; k < 3; k++)
        out[k] = T_OP(negate)(a[k]);
    out[3] = a[3];
    return 0;
}

/*
 * quat_inverse: conj(q) / |q|^2 for any finite non-zero q: in a block with a q outside
 * [T_RANGE_LO, T_RANGE_HI) (or zero, inf, NaN) q is scaled by 2^-e (pow2_factors, exact) so that
 * |q'|^2 in [1, 16) neither overflows nor underflows, then conj(q') (1 / |q'|^2) is scaled back by
 * 2^-e (in range, the same without the scaling): a result beyond the type's range overflows or underflows as the exact
 * one does. A zero quaternion gives NaN (0 * 1/0), an inf or NaN component NaN, on every path.
 */
JM_INLINE int T_FN(inverse_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)b, (void)flag;
    T q[4] = {a[0], a[1], a[2], a[3]};
    T largest = T_OP(max)(T_OP(max)(T_OP(abs)(q[0]), T_OP(abs)(q[1])), T_OP(max)(T_OP(abs)(q[2]), T_OP(abs)(q[3])));
    T_MASK in_range = T_MASK_OP(and)(T_OP(ge)(largest, T_OP(set1)((T_S)T_RANGE_LO)),
                                     T_OP(lt)(largest, T_OP(set1)((T_S)T_RANGE_HI)));
    if (JM_UNLIKELY(T_MASK_OP(any)(T_MASK_OP(not)(in_range)))) {
        T lift, scale;
        T_FN(pow2_factors)(q, 4, &lift, &scale);
        T factor = T_OP(div)(T_OP(set1)((T_S)1), T_OP(fmadd)(q[3], q[3], T_FN(dot3)(q, q)));
        for (int k = 0; k < 4; k++) {
            T c = T_OP(mul)(T_OP(mul)(T_OP(mul)(q[k], factor), scale), lift);
            out[k] = k < 3 ? T_OP(negate)(c) : c;
        }
        return 0;
    }
    /* every lane in range: |q|^2 and its reciprocal are normal numbers, no scaling needed */
    T factor = T_OP(div)(T_OP(set1)((T_S)1), T_OP(fmadd)(q[3], q[3], T_FN(dot3)(q, q)));
    for (int k = 0; k < 4; k++) {
        T c = T_OP(mul)(q[k], factor);
        out[k] = k < 3 ? T_OP(negate)(c) : c;
    }
    return 0;
}

/* rotate_vectors: R v (flag 0) or R^T v (flag 1: the inverse rotation), R the rotation matrix
   of q / |q| (T_TO_ROTATION: any finite non-zero scale of q; zero, inf or NaN q: NaN). */
JM_INLINE int T_FN(rotate_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    T r[9];
    T_TO_ROTATION(a[0], a[1], a[2], a[3], r);
    for (int i = 0; i < 3; i++) {
        const T r0 = flag ? r[i] : r[3 * i], r1 = flag ? r[3 + i] : r[3 * i + 1], r2 = flag ? r[6 + i] : r[3 * i + 2];
        out[i] = T_OP(fmadd)(r0, b[0], T_OP(fmadd)(r1, b[1], T_OP(mul)(r2, b[2])));
    }
    out[3] = T_FN(zero_lanes)();
    return 0;
}

/*
 * quat_to_rotvec: the rotation vector theta u of q / |q| (flag 1: in degrees), theta in [0, pi]:
 * with q scaled by a power of two (exact) and negated where scipy's canonical form does (w < 0,
 * or w = 0 and the first non-zero of x, y, z negative: at pi the vector has that sign),
 * s = |v|, c = |w|, the vector is v * 2 atan2(s, c) / s: q's scale cancels and no normalisation
 * rounds. Near 0 (s < T_NEAR_ZERO c) the factor is the series limit 2 / c (the next term,
 * (s / c)^2 / 3, is below half an ulp); near pi (c -> 0) atan2 stays exact in s / c. A zero q gives
 * NaN (0 / 0), an inf or NaN component NaN.
 */
JM_INLINE int T_FN(to_rotvec_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)b;
    T q[4] = {a[0], a[1], a[2], a[3]};
    T_FN(scale_if_needed)(q, 4);
    /* scipy's canonical sign: w < 0, or w = 0 and the first non-zero of x, y, z negative */
    const T zero = T_FN(zero_lanes)();
    T_MASK negative = T_OP(lt)(q[3], zero), undecided = T_MASK_OP(not)(T_OP(gt)(T_OP(abs)(q[3]), zero));
    for (int i = 0; i < 3; i++) {
        negative = T_MASK_OP(or)(negative, T_MASK_OP(and)(undecided, T_OP(lt)(q[i], zero)));
        undecided = T_MASK_OP(and)(undecided, T_MASK_OP(not)(T_OP(gt)(T_OP(abs)(q[i]), zero)));
    }
    T c = T_OP(abs)(q[3]), s = T_OP(sqrt)(T_FN(dot3)(q, q));
    T half_angle = T_ATAN(s, c);
    T_MASK near_zero = T_OP(lt)(s, T_OP(mul)(c, T_OP(set1)((T_S)T_NEAR_ZERO)));
    T k = T_OP(div)(T_OP(select)(near_zero, T_OP(set1)((T_S)1), half_angle), T_OP(select)(near_zero, c, s));
    k = T_OP(mul)(k, T_OP(set1)(flag ? (T_S)(360 / 3.14159265358979323846) : (T_S)2));
    for (int i = 0; i < 3; i++) {
        T v = T_OP(select)(negative, T_OP(negate)(q[i]), q[i]);
        out[i] = T_OP(mul)(v, k);
    }
    out[3] = T_FN(zero_lanes)();
    return 0;
}

/*
 * rotvec_to_quat: (v sin(theta/2) / theta, cos(theta/2)), theta = |v| (flag 1: v in degrees), as
 * scipy's from_rotvec (w < 0 beyond theta = pi, as there). sin and cos of theta/2 with an exact
 * reduction (T_HALF_SIN_COS); below T_SERIES_ANGLE2 the ratio sin(theta/2) / theta is the series
 * 1/2 - theta^2/48 + theta^4/3840 (the next term below half an ulp), so tiny and subnormal v give
 * v / 2 exactly rounded. Angles beyond T_FAR_RADIANS (T_FAR_DEGREES), inf and NaN are redone in double with libm's
 * sin and cos (to_quat_far): any finite v gives its quaternion, inf or NaN gives NaN.
 */
JM_INLINE int T_FN(to_quat_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)b;
    const T_S to_radians = flag ? (T_S)(3.14159265358979323846 / 180) : (T_S)1;
    T theta2 = T_FN(dot3)(a, a), theta = T_OP(sqrt)(theta2), s, c;
    T_HALF_SIN_COS(theta, flag, &s, &c);
    T r2 = T_OP(mul)(theta2, T_OP(set1)(to_radians * to_radians));
    T series = T_OP(fmadd)(r2, T_OP(fmadd)(r2, T_OP(set1)((T_S)(1.0 / 3840)), T_OP(set1)((T_S)(-1.0 / 48))),
                           T_OP(set1)((T_S)0.5));
    T k = T_OP(select)(T_OP(lt)(r2, T_OP(set1)((T_S)T_SERIES_ANGLE2)), T_OP(mul)(series, T_OP(set1)(to_radians)),
                       T_OP(div)(s, theta));
    for (int i = 0; i < 3; i++)
        out[i] = T_OP(mul)(a[i], k);
    out[3] = c;
    /* not (theta <= far): beyond it, inf or NaN */
    T_MASK near = T_OP(ge)(T_OP(set1)(flag ? (T_S)T_FAR_DEGREES : (T_S)T_FAR_RADIANS), theta);
    return T_MASK_OP(any)(T_MASK_OP(not)(near));
}

/* rotvec_to_quat's cold path: the records of the block whose angle is beyond T_FAR_RADIANS (or inf,
   NaN), in double: degrees reduced by whole turns first (fmod, exact), libm's sin and cos. */
JM_COLD static void T_FN(to_quat_far)(const char *a, ptrdiff_t as, char *o, ptrdiff_t os, size_t count, int flag) {
    for (size_t i = 0; i < count; i++) {
        T_S v[3], q[4];
        memcpy(v, a + (ptrdiff_t)i * as, sizeof v);
        double d[3] = {v[0], v[1], v[2]};
        double largest = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2])));
        const double far = flag ? T_FAR_DEGREES : T_FAR_RADIANS;
        if (!(largest > far / 2) && largest == largest)
            continue; /* near: the kernel's result stands */
        double theta = 0;
        if (largest > 0 && largest <= DBL_MAX) {
            double sum = 0;
            for (int k = 0; k < 3; k++)
                sum += (d[k] / largest) * (d[k] / largest);
            theta = largest * sqrt(sum);
        } else {
            theta = largest; /* inf or NaN */
        }
        if (!(theta > far) && theta == theta)
            continue;
        double h = flag ? fmod(theta / 2, 360.0) * (3.14159265358979323846 / 180) : theta / 2;
        double k = sin(h) / theta;
        for (int m = 0; m < 3; m++)
            q[m] = (T_S)(d[m] * k);
        q[3] = (T_S)cos(h);
        memcpy(o + (ptrdiff_t)i * os, q, sizeof q);
    }
}

/* quat_angle: 2 atan2(|v|, |w|) in [0, pi] (scipy's magnitude) of q at any finite non-zero scale
   (scaled by a power of two first, exact); a zero, inf or NaN q gives NaN. */
JM_INLINE int T_FN(angle_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)b, (void)flag;
    T q[4] = {a[0], a[1], a[2], a[3]};
    T_FN(scale_if_needed)(q, 4);
    out[0] = T_OP(select)(T_FN(is_valid)(q, 4), T_FN(rotation_angle)(q), T_FN(nan_lanes)());
    out[1] = out[2] = out[3] = T_FN(zero_lanes)();
    return 0;
}

/* quat_angle_between: the angle of conj(p) * q (the rotation p^-1 q) as quat_angle, each input
   scaled by a power of two first where its block needs it: sign-invariant (|w|) and
   scale-invariant in p and q. */
JM_INLINE int T_FN(angle_between_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)flag;
    T p[4] = {a[0], a[1], a[2], a[3]}, q[4] = {b[0], b[1], b[2], b[3]}, r[4];
    /* scaled unless every lane of both is within 2^-24 ... 2^24, where the product's squares
       (|p|^2 |q|^2) can neither overflow nor underflow: exact, so the angle is the same either way */
    T largest_p = T_OP(abs)(p[0]), largest_q = T_OP(abs)(q[0]);
    for (int k = 1; k < 4; k++) {
        largest_p = T_OP(max)(largest_p, T_OP(abs)(p[k]));
        largest_q = T_OP(max)(largest_q, T_OP(abs)(q[k]));
    }
    const T lo = T_OP(set1)((T_S)0x1p-24), hi = T_OP(set1)((T_S)0x1p24);
    T_MASK in_range = T_MASK_OP(and)(T_MASK_OP(and)(T_OP(ge)(largest_p, lo), T_OP(lt)(largest_p, hi)),
                                     T_MASK_OP(and)(T_OP(ge)(largest_q, lo), T_OP(lt)(largest_q, hi)));
    if (JM_UNLIKELY(T_MASK_OP(any)(T_MASK_OP(not)(in_range)))) {
        T_OP(scale_pow2)(p, 4);
        T_OP(scale_pow2)(q, 4);
    }
    T_MASK valid = T_MASK_OP(and)(T_FN(is_valid)(p, 4), T_FN(is_valid)(q, 4));
    /* conj(p) q with separately rounded products (no fused ones): for p = q every term of the
       vector part cancels exactly, so identical (and antipodal) pairs are exactly 0 apart */
    for (int k = 0; k < 3; k++) {
        const int i = (k + 1) % 3, j = (k + 2) % 3;
        T cross = T_OP(sub)(T_OP(mul)(p[i], q[j]), T_OP(mul)(p[j], q[i]));
        r[k] = T_OP(sub)(T_OP(sub)(T_OP(mul)(p[3], q[k]), T_OP(mul)(q[3], p[k])), cross);
    }
    r[3] = T_OP(fmadd)(p[3], q[3], T_FN(dot3)(p, q));
    out[0] = T_OP(select)(valid, T_FN(rotation_angle)(r), T_FN(nan_lanes)());
    out[1] = out[2] = out[3] = T_FN(zero_lanes)();
    return 0;
}

/* swing_twist's unit axis: u / |u| (scaled by a power of two first where out of range, exact);
   NaN for a zero, inf or NaN u. For one axis broadcast to every q it moves out of the loops. */
JM_INLINE void T_FN(unit_axis)(T u[3]) {
    T_FN(scale_if_needed)(u, 3);
    T inv_u = T_RSQRT(T_FN(dot3)(u, u));
    inv_u = T_OP(select)(T_FN(is_valid)(u, 3), inv_u, T_FN(nan_lanes)());
    for (int k = 0; k < 3; k++)
        u[k] = T_OP(mul)(u[k], inv_u);
}

/* swing_twist of a block with any lane outside the short form (swing_twist_lanes): q normalised
   after its power-of-two scaling, (p, w) scaled by the power of two that puts the larger in
   [1, 2) before its norm (exact: a tiny p or w is no zero), the singular case and NaN by
   selection; u the unit axis (unit_axis). Kept out of line: its blocks are rare. */
JM_COLD static void T_FN(swing_twist_scaled)(const T a[8], const T u[3], T out[8]) {
    T q[4] = {a[0], a[1], a[2], a[3]};
    T_FN(scale_if_needed)(q, 4);
    T_MASK valid = T_MASK_OP(and)(T_FN(is_valid)(q, 4), T_OP(ge)(T_OP(abs)(u[0]), T_FN(zero_lanes)()));
    T inv_q = T_RSQRT(T_OP(fmadd)(q[3], q[3], T_FN(dot3)(q, q)));
    for (int k = 0; k < 4; k++)
        q[k] = T_OP(mul)(q[k], inv_q);
    T pw[2] = {T_FN(dot3)(u, q), q[3]};
    /* (p, w) scaled by the power of two that puts the larger in [1, 2) (exact, subnormals too) */
    T largest = T_OP(scale_pow2)(pw, 2);
    T_MASK singular = T_MASK_OP(and)(valid, T_MASK_OP(not)(T_OP(gt)(largest, T_FN(zero_lanes)())));
    T pm = pw[0], wm = pw[1];
    T inv_n = T_RSQRT(T_OP(fmadd)(pm, pm, T_OP(mul)(wm, wm)));
    T pn = T_OP(mul)(pm, inv_n);
    T twist[4] = {T_OP(mul)(pn, u[0]), T_OP(mul)(pn, u[1]), T_OP(mul)(pn, u[2]), T_OP(mul)(wm, inv_n)};
    for (int k = 0; k < 4; k++) {
        twist[k] = T_OP(select)(singular, T_OP(set1)(k == 3 ? (T_S)1 : (T_S)0), twist[k]);
        twist[k] = T_OP(select)(valid, twist[k], T_FN(nan_lanes)());
    }
    T conj_twist[4] = {T_OP(negate)(twist[0]), T_OP(negate)(twist[1]), T_OP(negate)(twist[2]), twist[3]};
    T_FN(hamilton)(q, conj_twist, out);
    for (int k = 0; k < 4; k++)
        out[4 + k] = twist[k];
}

/*
 * swing_twist: q / |q| = swing * twist with twist a rotation about the unit axis u = axis / |axis|:
 * twist = (p u, w) / |(p, w)| with p = u . v, the projection of q onto the rotations about u, so
 * that swing = (q / |q|) conj(twist) has w >= 0 and no component along u (a rotation about an
 * axis perpendicular to u) and twist keeps q's sign. Singular case: p = w = 0 exactly (q a
 * half turn about an axis perpendicular to u): twist is the identity and swing = q / |q|.
 * A zero, inf or NaN q or axis gives NaN for both (twist too). out: swing in 0..3, twist in 4..7.
 *
 * Lanes with |(p, w)|^2 >= T_SWING_LO and |q|^2 <= T_SWING_HI at q's own scale
 * (every unit q with |(p, w)| above 2^-50, float32) take the short form: neither q nor (p, w) is
 * normalised before the products; with n2 = p^2 + w^2 (q's scale squared, which cancels),
 *   twist = (p u, w) / sqrt(n2),
 *   swing = q conj((p u, w)) / (|q| sqrt(n2)) = (w (v - p u) + p (u x v), n2) / (|q| sqrt(n2))
 * (using u . v = p): one scaling at the end, two reciprocal square roots, no selection; as in
 * the scaled form, the rounding of p is what grows as 1 / |(p, w)| (the stated bound).
 * The other lanes (the singular case, tiny (p, w), scales beyond the range, zero, inf, NaN) take
 * swing_twist_scaled, which scales q and (p, w) by powers of two first, in the rare blocks that
 * hold one.
 */
JM_INLINE int T_FN(swing_twist_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)flag;
    const T v[3] = {a[0], a[1], a[2]}, w = a[3];
    T u[3] = {b[0], b[1], b[2]};
    T_FN(unit_axis)(u);
    T p = T_FN(dot3)(u, v);
    T n2 = T_OP(fmadd)(p, p, T_OP(mul)(w, w));
    T nq2 = T_OP(fmadd)(w, w, T_FN(dot3)(v, v));
    /* not (n2 >= lo and nq2 <= hi): out of the short form's range, zero, inf or NaN */
    T_MASK short_form = T_MASK_OP(and)(T_OP(ge)(n2, T_OP(set1)((T_S)T_SWING_LO)),
                                       T_OP(ge)(T_OP(set1)((T_S)T_SWING_HI), nq2));
    T inv_n = T_RSQRT(n2), inv_swing = T_OP(mul)(inv_n, T_RSQRT(nq2));
    T pn = T_OP(mul)(p, inv_n);
    for (int k = 0; k < 3; k++)
        out[4 + k] = T_OP(mul)(pn, u[k]);
    out[7] = T_OP(mul)(w, inv_n);
    /* swing's vector: w (v - p u) + p (u x v), both factors scaled first */
    T ws = T_OP(mul)(w, inv_swing), ps = T_OP(mul)(p, inv_swing);
    for (int k = 0; k < 3; k++) {
        const int i = (k + 1) % 3, j = (k + 2) % 3;
        T cross = T_OP(fnmadd)(u[j], v[i], T_OP(mul)(u[i], v[j]));
        T perpendicular = T_OP(fnmadd)(p, u[k], v[k]);
        out[k] = T_OP(fmadd)(ws, perpendicular, T_OP(mul)(ps, cross));
    }
    out[3] = T_OP(mul)(n2, inv_swing);
    if (JM_UNLIKELY(T_MASK_OP(any)(T_MASK_OP(not)(short_form)))) {
        /* lane by lane, so that a record's result never depends on its block's other records */
        T scaled[8];
        T_FN(swing_twist_scaled)(a, u, scaled);
        for (int k = 0; k < 8; k++)
            out[k] = T_OP(select)(short_form, out[k], scaled[k]);
    }
    return 0;
}

/* quat_to_6d: the first two columns of R(q / |q|), column by column (Zhou et al. 2019):
   (R00, R10, R20, R01, R11, R21); T_TO_ROTATION's bound, scale range and NaN cases. */
JM_INLINE int T_FN(to_6d_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)b, (void)flag;
    T r[9];
    T_TO_ROTATION(a[0], a[1], a[2], a[3], r);
    out[0] = r[0], out[1] = r[3], out[2] = r[6], out[3] = r[1], out[4] = r[4], out[5] = r[7];
    out[6] = out[7] = T_FN(zero_lanes)();
    return 0;
}

/* frame_of_columns: the row-major matrix whose columns are b1, b2 and b1 x b2 */
JM_INLINE void T_FN(frame_of_columns)(const T b1[3], const T b2[3], T r[9]) {
    for (int k = 0; k < 3; k++)
        r[3 * k] = b1[k], r[3 * k + 1] = b2[k];
    r[2] = T_OP(fnmadd)(b1[2], b2[1], T_OP(mul)(b1[1], b2[2]));
    r[5] = T_OP(fnmadd)(b1[0], b2[2], T_OP(mul)(b1[2], b2[0]));
    r[8] = T_OP(fnmadd)(b1[1], b2[0], T_OP(mul)(b1[0], b2[1]));
}

/* sixd_to_quat of the lanes outside from_6d_lanes' short form: a1 scaled by a power of two where
   its block holds a column outside [T_RANGE_LO, T_RANGE_HI) (scale_if_needed), a2 and the part
   of a2 orthogonal to b1 always (scale_pow2; exact either way), R's quaternion by T_FROM_ROTATION
   (which scales its entries too); NaN where a2 is parallel to a1 within rounding. Kept out of
   line: its blocks are rare. */
JM_COLD static void T_FN(sixd_scaled)(const T a[8], T out[4]) {
    T b1[3] = {a[0], a[1], a[2]}, a2[3] = {a[3], a[4], a[5]}, b2[3], r[9], q[8];
    T_FN(scale_if_needed)(b1, 3); /* normalised next: only its squares' range matters */
    T_OP(scale_pow2)(a2, 3);
    T inv1 = T_RSQRT(T_FN(dot3)(b1, b1));
    for (int k = 0; k < 3; k++)
        b1[k] = T_OP(mul)(b1[k], inv1);
    T d = T_FN(dot3)(b1, a2);
    for (int k = 0; k < 3; k++)
        b2[k] = T_OP(fnmadd)(d, b1[k], a2[k]);
    /* a2 parallel to a1 within rounding: the orthogonal part is noise, its direction arbitrary */
    T_MASK parallel = T_OP(lt)(T_FN(dot3)(b2, b2), T_OP(mul)(T_FN(dot3)(a2, a2), T_OP(set1)((T_S)T_PARALLEL2)));
    T_OP(scale_pow2)(b2, 3);
    T inv2 = T_RSQRT(T_FN(dot3)(b2, b2));
    inv2 = T_OP(select)(parallel, T_FN(nan_lanes)(), inv2);
    for (int k = 0; k < 3; k++)
        b2[k] = T_OP(mul)(b2[k], inv2);
    T_FN(frame_of_columns)(b1, b2, r);
    T_FROM_ROTATION(r, q);
    for (int k = 0; k < 4; k++)
        out[k] = q[k];
}

/*
 * sixd_to_quat: Gram-Schmidt as Zhou et al. 2019: b1 = a1 / |a1|, b2 = the normalised part of a2
 * orthogonal to b1, b3 = b1 x b2, R = [b1 b2 b3] (columns), then R's unit quaternion by the
 * largest-divisor method (divisor_entries, as T_FROM_ROTATION: the largest-divisor component
 * positive). The first column keeps its direction: for input that is not two orthonormal
 * columns this is not the nearest rotation. The norms' reciprocals are T_RSQRT (no division).
 * Short form, lanes with |a1|^2 in [T_SIXD_LO, T_SIXD_HI], |a2|^2 in [T_SIXD_LO2, T_SIXD_HI] and
 * a2 not parallel to a1 (every 6-D form of a rotation at scales 2^-30 ... 2^50, float32): every
 * square is normal as it stands, so nothing is scaled, and R is orthonormal within rounding, so
 * its quaternion's entries (|e| = 2 sqrt(t) in [2, 4]) are normalised as they come. The other
 * lanes (any finite scale; NaN for a1 = 0, for a2 parallel to a1 within rounding (its part
 * orthogonal to b1 shorter than T_PARALLEL2^(1/2) |a2|, 16 ulp: a direction of rounding noise),
 * inf or NaN) take sixd_scaled, in the rare blocks that hold one.
 */
JM_INLINE int T_FN(from_6d_lanes)(const T a[8], const T b[8], T out[8], int flag) {
    (void)b, (void)flag;
    const T a1[3] = {a[0], a[1], a[2]}, a2[3] = {a[3], a[4], a[5]};
    T b1[3], b2[3], r[9], e[4];
    T n1 = T_FN(dot3)(a1, a1), n2 = T_FN(dot3)(a2, a2);
    T inv1 = T_RSQRT(n1);
    for (int k = 0; k < 3; k++)
        b1[k] = T_OP(mul)(a1[k], inv1);
    T d = T_FN(dot3)(b1, a2);
    for (int k = 0; k < 3; k++)
        b2[k] = T_OP(fnmadd)(d, b1[k], a2[k]);
    T m2 = T_FN(dot3)(b2, b2);
    /* in range (NaN compares false) and not parallel */
    const T hi = T_OP(set1)((T_S)T_SIXD_HI);
    T_MASK short_form = T_MASK_OP(and)(T_MASK_OP(and)(T_OP(ge)(n1, T_OP(set1)((T_S)T_SIXD_LO)), T_OP(ge)(hi, n1)),
                                       T_MASK_OP(and)(T_OP(ge)(n2, T_OP(set1)((T_S)T_SIXD_LO2)), T_OP(ge)(hi, n2)));
    short_form = T_MASK_OP(and)(short_form, T_OP(ge)(m2, T_OP(mul)(n2, T_OP(set1)((T_S)T_PARALLEL2))));
    T inv2 = T_RSQRT(m2);
    for (int k = 0; k < 3; k++)
        b2[k] = T_OP(mul)(b2[k], inv2);
    T_FN(frame_of_columns)(b1, b2, r);
    (void)T_FN(divisor_entries)(r, e);
    T inv_e = T_RSQRT(T_OP(fmadd)(e[0], e[0], T_OP(fmadd)(e[1], e[1], T_OP(fmadd)(e[2], e[2], T_OP(mul)(e[3], e[3])))));
    for (int k = 0; k < 4; k++)
        out[k] = T_OP(mul)(e[k], inv_e);
    if (JM_UNLIKELY(T_MASK_OP(any)(T_MASK_OP(not)(short_form)))) {
        /* lane by lane, so that a record's result never depends on its block's other records */
        T scaled[4];
        T_FN(sixd_scaled)(a, scaled);
        for (int k = 0; k < 4; k++)
            out[k] = T_OP(select)(short_form, out[k], scaled[k]);
    }
    out[4] = out[5] = out[6] = out[7] = T_FN(zero_lanes)();
    return 0;
}

/* the cold path of the kernels that have none */
static void T_FN(no_redo)(const char *a, ptrdiff_t as, char *o, ptrdiff_t os, size_t count, int flag) {
    (void)a, (void)as, (void)o, (void)os, (void)count, (void)flag;
}

/* The jm_algebra_fn kernels: the compute function, floats per record of a, b, out. */
#define ALGEBRA_KERNEL(kernel, lanes, redo, na, nb, no)                                                             \
    void JM_FN(T_FN(kernel))(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *o, ptrdiff_t os,       \
                             size_t n, int flag) {                                                                   \
        T_FN(run)(T_FN(lanes), T_FN(redo), na, nb, no, a, as, b, bs, o, os, NULL, 0, n, flag);                     \
    }
ALGEBRA_KERNEL(jm_quat_multiply, multiply_lanes, no_redo, 4, 4, 4)
ALGEBRA_KERNEL(jm_quat_conjugate, conjugate_lanes, no_redo, 4, 0, 4)
ALGEBRA_KERNEL(jm_quat_inverse, inverse_lanes, no_redo, 4, 0, 4)
ALGEBRA_KERNEL(jm_rotate_vectors, rotate_lanes, no_redo, 4, 3, 3)
ALGEBRA_KERNEL(jm_quats_to_rotvecs, to_rotvec_lanes, no_redo, 4, 0, 3)
ALGEBRA_KERNEL(jm_rotvecs_to_quats, to_quat_lanes, to_quat_far, 3, 0, 4)
ALGEBRA_KERNEL(jm_quat_angles, angle_lanes, no_redo, 4, 0, 1)
ALGEBRA_KERNEL(jm_quat_angles_between, angle_between_lanes, no_redo, 4, 4, 1)
ALGEBRA_KERNEL(jm_quats_to_6d, to_6d_lanes, no_redo, 4, 0, 6)
ALGEBRA_KERNEL(jm_sixd_to_quats, from_6d_lanes, no_redo, 6, 0, 4)
#undef ALGEBRA_KERNEL

/* swing_twist (jm_algebra2_fn): swing to out, twist to out2 */
void JM_FN(T_FN(jm_swing_twist))(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *o, ptrdiff_t os,
                                 char *o2, ptrdiff_t os2, size_t n, int flag) {
    T_FN(run)(T_FN(swing_twist_lanes), T_FN(no_redo), 4, 3, 8, a, as, b, bs, o, os, o2, os2, n, flag);
}
