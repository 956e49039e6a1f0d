/*
 * fit_template.h - the fitting kernels for one float type, included by fit.c once per type:
 * T_SCALAR (float or double: the records' type), T_FN(name) (the kernel's name for that type),
 * T_IS_FLOAT (1 for float, 0 for double). Every sum is taken in double.
 */

/* One record of n components (3 or 4) as doubles. JM_INLINE: n is then a constant, and the
   copy a load rather than a memcpy call. */
JM_INLINE void T_FN(load_doubles)(const char *record, double *v, int n) {
    T_SCALAR t[4];
    memcpy(t, record, (size_t)n * sizeof(T_SCALAR));
    for (int k = 0; k < n; k++)
        v[k] = (double)t[k];
}

/* JM_WD records of 3 components (a, b of align_vectors, n of them) from item i on, as x, y, z
   lanes. double records before the last block are read in place as quads (the fourth double of a
   quad is the next record's first: inside the array); the others through a widened copy. */
JM_INLINE void T_FN(load_vectors)(const char *base, size_t i, size_t n, vd *x, vd *y, vd *z) {
    vd fourth;
#if !T_IS_FLOAT
    if (i + JM_WD < n) {
        vd_load_quads(base + i * 3 * sizeof(double), 3 * sizeof(double), x, y, z, &fourth);
        return;
    }
#else
    (void)n;
#endif
    double wide[JM_WD][4];
    for (int l = 0; l < JM_WD; l++) {
        T_FN(load_doubles)(base + (i + (size_t)l) * 3 * sizeof(T_SCALAR), wide[l], 3);
        wide[l][3] = 0.0;
    }
    vd_load_quads((const char *)wide, sizeof wide[0], x, y, z, &fourth);
}

/* count values of T_SCALAR at src as doubles to dst: one loop, which the compiler turns into
   vector conversions (float records are widened a chunk of WIDEN_CHUNK records at a time, then
   read as doubles: a widening per record, or per block of JM_WD records read straight back,
   stalls on the reload of the values just stored). */
#define WIDEN_CHUNK 256
JM_INLINE void T_FN(widen)(const char *src, size_t count, double *dst) {
    for (size_t k = 0; k < count; k++) {
        T_SCALAR t;
        memcpy(&t, src + k * sizeof(T_SCALAR), sizeof t);
        dst[k] = (double)t;
    }
}

static inline void T_FN(store_quat)(char *record, const double q[4]) {
    T_SCALAR t[4] = {(T_SCALAR)q[0], (T_SCALAR)q[1], (T_SCALAR)q[2], (T_SCALAR)q[3]};
    memcpy(record, t, sizeof t);
}

/* Adds the item q (4 doubles) of weight `weight` to the sums k of jm_quat_mean. */
static inline void T_FN(mean_item)(double v[4], double weight, double k[10]) {
    double n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
    if (JM_UNLIKELY(!(n2 >= 0x1p-960 && n2 <= 0x1p960))) {
        const int e = exponent_of(larger(larger(fabs(v[0]), fabs(v[1])), larger(fabs(v[2]), fabs(v[3]))));
        for (int c = 0; c < 4; c++)
            v[c] = ldexp(v[c], -e);
        n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
    }
    const double f = weight / n2;
    const double fx = f * v[0], fy = f * v[1], fz = f * v[2], fw = f * v[3];
    k[0] += fx * v[0];
    k[1] += fx * v[1];
    k[2] += fx * v[2];
    k[3] += fx * v[3];
    k[4] += fy * v[1];
    k[5] += fy * v[2];
    k[6] += fy * v[3];
    k[7] += fz * v[2];
    k[8] += fz * v[3];
    k[9] += fw * v[3];
}

/* The sum of the lanes of each of c0..c3 added to k[0..3]. */
static inline void T_FN(add_lanes)(vd c0, vd c1, vd c2, vd c3, double *k) {
    double lanes[JM_WD][4];
    vd_store_quads((char *)lanes, sizeof lanes[0], c0, c1, c2, c3);
    for (int l = 0; l < JM_WD; l++)
        for (int c = 0; c < 4; c++)
            k[c] += lanes[l][c];
}

/*
 * The sums of one quat_mean set: k (the 10 elements of K's upper triangle, row by row) and the
 * weights' sum; *bad set when a weight is negative, NaN or infinite. JM_WD items at a time in
 * the lanes of vd (each lane its own partial sums, added at the end); a block holding a
 * quaternion whose |q|^2 leaves 2^+-960 (zero, inf, NaN, or float64 beyond about 2^+-480) and
 * the last items go one by one.
 */
static void T_FN(mean_sums)(const char *q, ptrdiff_t q_stride, const char *w, ptrdiff_t w_stride, size_t n,
                            double k[10], double *weight_sum, int *bad) {
    vd acc[10], weights_acc = vd_set1(0.0);
    vdmask bad_lanes = vd_lt(vd_set1(0.0), vd_set1(0.0)); /* none */
    for (int c = 0; c < 10; c++)
        acc[c] = vd_set1(0.0);
    double tail_k[10] = {0}, tail_weights = 0.0;
    int tail_bad = 0;
    size_t i = 0;
#if T_IS_FLOAT
    double wide[WIDEN_CHUNK][4];
    size_t chunk_start = 0, chunk_end = 0; /* the records widened into `wide` */
#endif
    for (; i + JM_WD <= n; i += JM_WD) {
        vd x, y, z, qw, weight = vd_set1(1.0);
        const char *block = q + (ptrdiff_t)i * q_stride;
#if T_IS_FLOAT /* float records: widened to doubles a chunk at a time (i is a multiple of JM_WD) */
        if (i >= chunk_end) {
            const size_t m = n - i < WIDEN_CHUNK ? n - i : WIDEN_CHUNK;
            if (q_stride == 4 * (ptrdiff_t)sizeof(T_SCALAR))
                T_FN(widen)(block, 4 * m, wide[0]);
            else
                for (size_t r = 0; r < m; r++)
                    T_FN(widen)(block + (ptrdiff_t)r * q_stride, 4, wide[r]);
            chunk_start = i;
            chunk_end = i + m;
        }
        vd_load_quads((const char *)wide[i - chunk_start], sizeof wide[0], &x, &y, &z, &qw);
#else
        vd_load_quads(block, q_stride, &x, &y, &z, &qw);
#endif
        if (w) {
            double lanes[JM_WD];
            for (int l = 0; l < JM_WD; l++)
                memcpy(&lanes[l], w + (ptrdiff_t)(i + l) * w_stride, sizeof(double));
            weight = vd_loadu(lanes);
            bad_lanes = md_or(bad_lanes, md_not(md_and(vd_ge(weight, vd_set1(0.0)), vd_ge(vd_set1(DBL_MAX), weight))));
            weights_acc = vd_add(weights_acc, weight);
        }
        const vd n2 = vd_add(vd_add(vd_mul(x, x), vd_mul(y, y)), vd_add(vd_mul(z, z), vd_mul(qw, qw)));
        if (JM_UNLIKELY(md_any(md_not(md_and(vd_ge(n2, vd_set1(0x1p-960)), vd_ge(vd_set1(0x1p960), n2)))))) {
            for (int l = 0; l < JM_WD; l++) { /* weights already counted above */
                double v[4], weight_l = 1.0;
                T_FN(load_doubles)(block + l * q_stride, v, 4);
                if (w)
                    memcpy(&weight_l, w + (ptrdiff_t)(i + l) * w_stride, sizeof weight_l);
                T_FN(mean_item)(v, weight_l, tail_k);
            }
            continue;
        }
        const vd f = vd_div(weight, n2);
        const vd fx = vd_mul(f, x), fy = vd_mul(f, y), fz = vd_mul(f, z), fw = vd_mul(f, qw);
        acc[0] = vd_add(acc[0], vd_mul(fx, x));
        acc[1] = vd_add(acc[1], vd_mul(fx, y));
        acc[2] = vd_add(acc[2], vd_mul(fx, z));
        acc[3] = vd_add(acc[3], vd_mul(fx, qw));
        acc[4] = vd_add(acc[4], vd_mul(fy, y));
        acc[5] = vd_add(acc[5], vd_mul(fy, z));
        acc[6] = vd_add(acc[6], vd_mul(fy, qw));
        acc[7] = vd_add(acc[7], vd_mul(fz, z));
        acc[8] = vd_add(acc[8], vd_mul(fz, qw));
        acc[9] = vd_add(acc[9], vd_mul(fw, qw));
    }
    for (; i < n; i++) {
        double v[4], weight = 1.0;
        T_FN(load_doubles)(q + (ptrdiff_t)i * q_stride, v, 4);
        if (w) {
            memcpy(&weight, w + (ptrdiff_t)i * w_stride, sizeof weight);
            tail_bad |= !(weight >= 0.0 && weight <= DBL_MAX);
            tail_weights += weight;
        }
        T_FN(mean_item)(v, weight, tail_k);
    }
    double sums[12] = {0};
    T_FN(add_lanes)(acc[0], acc[1], acc[2], acc[3], sums);
    T_FN(add_lanes)(acc[4], acc[5], acc[6], acc[7], sums + 4);
    T_FN(add_lanes)(acc[8], acc[9], weights_acc, vd_set1(0.0), sums + 8);
    for (int c = 0; c < 10; c++)
        k[c] = sums[c] + tail_k[c];
    *weight_sum = sums[10] + tail_weights;
    *bad = tail_bad || md_any(bad_lanes);
}

/*
 * quat_mean: for each set, the unit quaternion maximising sum_i w_i (q . q_i / |q_i|)^2, the
 * dominant eigenvector of K = sum_i w_i q_i q_i^T / |q_i|^2 (Markley et al. 2007, scipy's
 * Rotation.mean): sign-invariant in every q_i, the result with w >= 0. Any finite non-zero scale
 * of q_i (float64: products beyond 2^+-960 are taken again from q_i scaled by a power of two).
 * A zero, NaN or infinite quaternion makes its set's result NaN. Weights: finite, >= 0, not all 0
 * in a set, else the job stops with JM_FIT_BAD_WEIGHT / JM_FIT_ZERO_WEIGHTS (the boundary raises).
 * Bound: K is summed in double (relative error ~ n 2^-53, in JM_WD partial sums: the last bits
 * differ between paths); the eigenvector is within about 1e-16 ||K|| / (lambda1 - lambda2) rad
 * of K's.
 */
void JM_FN(T_FN(jm_quat_mean))(jm_mean_job *job) {
    job->error = JM_FIT_OK;
    /* JM_WD sets at a time: their sums, then their eigen solves in the lanes of vd */
    for (size_t first = 0; first < job->n_batch; first += JM_WD) {
        const size_t sets = job->n_batch - first < JM_WD ? job->n_batch - first : JM_WD;
        double k_lanes[4][4][JM_WD];
        for (size_t l = 0; l < JM_WD; l++) {
            const size_t s = first + l;
            double k[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1}; /* lanes past the last set: e_w e_w^T */
            if (l < sets) {
                const char *w = job->weights ? job->weights + (ptrdiff_t)s * job->w_batch_stride : NULL;
                double weight_sum;
                int bad_weight;
                T_FN(mean_sums)(job->q + (ptrdiff_t)s * job->q_batch_stride, job->q_item_stride, w,
                                job->w_item_stride, job->n_items, k, &weight_sum, &bad_weight);
                if (bad_weight || (w && weight_sum == 0.0)) {
                    job->error = bad_weight ? JM_FIT_BAD_WEIGHT : JM_FIT_ZERO_WEIGHTS;
                    job->error_batch = s;
                    return;
                }
            }
            const int upper[4][4] = {{0, 1, 2, 3}, {1, 4, 5, 6}, {2, 5, 7, 8}, {3, 6, 8, 9}};
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                    k_lanes[i][j][l] = k[upper[i][j]];
        }
        double mean[JM_WD][4], lambda1[JM_WD], lambda2[JM_WD];
        if (sets * 4 <= JM_WD) /* lanes mostly empty (one set on AVX2, up to two on AVX-512): one by one */
            for (size_t l = 0; l < sets; l++) {
                double m[4][4];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++)
                        m[i][j] = k_lanes[i][j][l];
                dominant_eigenvector(m, mean[l], &lambda1[l], &lambda2[l]);
            }
        else {
            const unsigned certified = dominant_eigenvectors_by_powers((const double(*)[4][JM_WD])k_lanes, mean);
            size_t failed = 0;
            for (size_t l = 0; l < sets; l++)
                failed += !(certified >> l & 1u);
            if (failed * 4 > JM_WD) /* the sets the powers could not certify: Jacobi, in the lanes when many */
                dominant_eigenvectors_lanes((const double(*)[4][JM_WD])k_lanes, mean, lambda1, lambda2);
            else
                for (size_t l = 0; l < sets; l++) /* else one by one */
                    if (!(certified >> l & 1u)) {
                        double m[4][4];
                        for (int i = 0; i < 4; i++)
                            for (int j = 0; j < 4; j++)
                                m[i][j] = k_lanes[i][j][l];
                        dominant_eigenvector(m, mean[l], &lambda1[l], &lambda2[l]);
                    }
        }
        for (size_t l = 0; l < sets; l++)
            T_FN(store_quat)(job->out + (first + l) * 4 * sizeof(T_SCALAR), mean[l]);
    }
}

/* The sums of one align_vectors set with a, b and the weights scaled by 2^-ea, 2^-eb, 2^-ew
   (exact unless subnormal): B = sum w a b^T over the items other than `skip` (the infinite
   weight, or none: -1), the largest |component| of a, b and the largest weight, and
   *squares = sum w (|a|^2 + |b|^2) (the rssd's other terms: see jm_align_vectors). */
static void T_FN(align_sums)(const char *a, const char *b, const char *w, size_t n, ptrdiff_t skip, int ea, int eb,
                             int ew, double bm[3][3], double *max_a, double *max_b, double *max_w, double *squares) {
    double sa[2], sb[2], sw[2];
    power_of_two_factors(ea, sa);
    power_of_two_factors(eb, sb);
    power_of_two_factors(ew, sw);
    const int scaled = ea | eb | ew;
    double b00 = 0, b01 = 0, b02 = 0, b10 = 0, b11 = 0, b12 = 0, b20 = 0, b21 = 0, b22 = 0;
    double la = 0.0, lb = 0.0, lw = 0.0, sq = 0.0;
    size_t i = 0;
    if (skip < 0 && !scaled) { /* the common case: JM_WD items per vector, lane sums added at the end */
        vd acc[10], max_a_lanes = vd_set1(0.0), max_b_lanes = vd_set1(0.0), max_w_lanes = vd_set1(0.0);
        for (int c = 0; c < 10; c++)
            acc[c] = vd_set1(0.0);
#if T_IS_FLOAT
        double wide_a[3 * WIDEN_CHUNK + 1], wide_b[3 * WIDEN_CHUNK + 1]; /* + 1: the last quad's fourth */
        size_t chunk_start = 0, chunk_end = 0; /* the records widened into wide_a, wide_b */
#endif
        for (; i + JM_WD <= n; i += JM_WD) {
            vd ax, ay, az, bx, by, bz, weight = vd_set1(1.0);
#if T_IS_FLOAT /* float records: widened to doubles a chunk at a time (i is a multiple of JM_WD) */
            if (i >= chunk_end) {
                const size_t m = n - i < WIDEN_CHUNK ? n - i : WIDEN_CHUNK;
                T_FN(widen)(a + i * 3 * sizeof(T_SCALAR), 3 * m, wide_a);
                T_FN(widen)(b + i * 3 * sizeof(T_SCALAR), 3 * m, wide_b);
                wide_a[3 * m] = wide_b[3 * m] = 0.0;
                chunk_start = i;
                chunk_end = i + m;
            }
            vd fourth;
            vd_load_quads((const char *)&wide_a[3 * (i - chunk_start)], 3 * sizeof(double), &ax, &ay, &az, &fourth);
            vd_load_quads((const char *)&wide_b[3 * (i - chunk_start)], 3 * sizeof(double), &bx, &by, &bz, &fourth);
#else
            T_FN(load_vectors)(a, i, n, &ax, &ay, &az);
            T_FN(load_vectors)(b, i, n, &bx, &by, &bz);
#endif
            if (w) {
                weight = vd_loadu((const double *)(const void *)(w + i * sizeof(double)));
                max_w_lanes = vd_max(max_w_lanes, weight);
            }
            max_a_lanes = vd_max(max_a_lanes, vd_max(vd_abs(ax), vd_max(vd_abs(ay), vd_abs(az))));
            max_b_lanes = vd_max(max_b_lanes, vd_max(vd_abs(bx), vd_max(vd_abs(by), vd_abs(bz))));
            const vd wa0 = vd_mul(weight, ax), wa1 = vd_mul(weight, ay), wa2 = vd_mul(weight, az);
            acc[0] = vd_add(acc[0], vd_mul(wa0, bx));
            acc[1] = vd_add(acc[1], vd_mul(wa0, by));
            acc[2] = vd_add(acc[2], vd_mul(wa0, bz));
            acc[3] = vd_add(acc[3], vd_mul(wa1, bx));
            acc[4] = vd_add(acc[4], vd_mul(wa1, by));
            acc[5] = vd_add(acc[5], vd_mul(wa1, bz));
            acc[6] = vd_add(acc[6], vd_mul(wa2, bx));
            acc[7] = vd_add(acc[7], vd_mul(wa2, by));
            acc[8] = vd_add(acc[8], vd_mul(wa2, bz));
            const vd a2 = vd_add(vd_add(vd_mul(ax, ax), vd_mul(ay, ay)), vd_mul(az, az));
            const vd b2 = vd_add(vd_add(vd_mul(bx, bx), vd_mul(by, by)), vd_mul(bz, bz));
            acc[9] = vd_add(acc[9], vd_mul(weight, vd_add(a2, b2)));
        }
        double sums[12] = {0}, maxima[JM_WD][4];
        T_FN(add_lanes)(acc[0], acc[1], acc[2], acc[3], sums);
        T_FN(add_lanes)(acc[4], acc[5], acc[6], acc[7], sums + 4);
        T_FN(add_lanes)(acc[8], acc[9], vd_set1(0.0), vd_set1(0.0), sums + 8);
        sq = sums[9];
        b00 = sums[0], b01 = sums[1], b02 = sums[2], b10 = sums[3], b11 = sums[4], b12 = sums[5];
        b20 = sums[6], b21 = sums[7], b22 = sums[8];
        vd_store_quads((char *)maxima, sizeof maxima[0], max_a_lanes, max_b_lanes, max_w_lanes, vd_set1(0.0));
        for (int l = 0; l < JM_WD; l++) {
            la = larger(la, maxima[l][0]);
            lb = larger(lb, maxima[l][1]);
            lw = larger(lw, maxima[l][2]);
        }
    }
    for (; i < n; i++) {
        double va[3], vb[3], weight = 1.0;
        T_FN(load_doubles)(a + i * 3 * sizeof(T_SCALAR), va, 3);
        T_FN(load_doubles)(b + i * 3 * sizeof(T_SCALAR), vb, 3);
        if (w)
            memcpy(&weight, w + i * sizeof(double), sizeof weight);
        if (JM_UNLIKELY((ptrdiff_t)i == skip))
            continue;
        la = larger(la, larger(fabs(va[0]), larger(fabs(va[1]), fabs(va[2]))));
        lb = larger(lb, larger(fabs(vb[0]), larger(fabs(vb[1]), fabs(vb[2]))));
        lw = larger(lw, weight);
        if (JM_UNLIKELY(scaled)) {
            for (int c = 0; c < 3; c++) {
                va[c] = va[c] * sa[0] * sa[1];
                vb[c] = vb[c] * sb[0] * sb[1];
            }
            weight = weight * sw[0] * sw[1];
        }
        const double wa0 = weight * va[0], wa1 = weight * va[1], wa2 = weight * va[2];
        sq += weight * ((va[0] * va[0] + va[1] * va[1] + va[2] * va[2]) + (vb[0] * vb[0] + vb[1] * vb[1] + vb[2] * vb[2]));
        b00 += wa0 * vb[0];
        b01 += wa0 * vb[1];
        b02 += wa0 * vb[2];
        b10 += wa1 * vb[0];
        b11 += wa1 * vb[1];
        b12 += wa1 * vb[2];
        b20 += wa2 * vb[0];
        b21 += wa2 * vb[1];
        b22 += wa2 * vb[2];
    }
    bm[0][0] = b00, bm[0][1] = b01, bm[0][2] = b02;
    bm[1][0] = b10, bm[1][1] = b11, bm[1][2] = b12;
    bm[2][0] = b20, bm[2][1] = b21, bm[2][2] = b22;
    *max_a = la;
    *max_b = lb;
    *max_w = lw;
    *squares = sq;
}

/* sqrt(sum w |a - C b|^2) over the items other than `skip`, a, b scaled by 2^-e and the weights
   by 2^-ew (ew even) inside the sum and the result scaled back: no overflow or underflow for
   any finite inputs whose result is finite. */
static double T_FN(align_rssd)(const char *a, const char *b, const char *w, size_t n, ptrdiff_t skip,
                               const double cm[3][3], int e, int ew) {
    double s[2], sw[2];
    power_of_two_factors(e, s);
    power_of_two_factors(ew, sw);
    const int scaled = e | ew;
    double sum = 0.0;
    size_t i = 0;
    if (skip < 0 && !scaled) { /* the common case: JM_WD items per vector */
        vd acc = vd_set1(0.0);
        for (; i + JM_WD <= n; i += JM_WD) {
            vd ax, ay, az, bx, by, bz, weight = vd_set1(1.0);
            T_FN(load_vectors)(a, i, n, &ax, &ay, &az);
            T_FN(load_vectors)(b, i, n, &bx, &by, &bz);
            if (w)
                weight = vd_loadu((const double *)(const void *)(w + i * sizeof(double)));
            const vd d0 = vd_sub(ax, vd_add(vd_add(vd_mul(vd_set1(cm[0][0]), bx), vd_mul(vd_set1(cm[0][1]), by)),
                                            vd_mul(vd_set1(cm[0][2]), bz)));
            const vd d1 = vd_sub(ay, vd_add(vd_add(vd_mul(vd_set1(cm[1][0]), bx), vd_mul(vd_set1(cm[1][1]), by)),
                                            vd_mul(vd_set1(cm[1][2]), bz)));
            const vd d2 = vd_sub(az, vd_add(vd_add(vd_mul(vd_set1(cm[2][0]), bx), vd_mul(vd_set1(cm[2][1]), by)),
                                            vd_mul(vd_set1(cm[2][2]), bz)));
            acc = vd_add(acc, vd_mul(weight, vd_add(vd_add(vd_mul(d0, d0), vd_mul(d1, d1)), vd_mul(d2, d2))));
        }
        double sums[4] = {0};
        T_FN(add_lanes)(acc, vd_set1(0.0), vd_set1(0.0), vd_set1(0.0), sums);
        sum = sums[0];
    }
    for (; i < n; i++) {
        double va[3], vb[3], weight = 1.0;
        T_FN(load_doubles)(a + i * 3 * sizeof(T_SCALAR), va, 3);
        T_FN(load_doubles)(b + i * 3 * sizeof(T_SCALAR), vb, 3);
        if (w)
            memcpy(&weight, w + i * sizeof(double), sizeof weight);
        if (JM_UNLIKELY((ptrdiff_t)i == skip))
            continue;
        if (JM_UNLIKELY(scaled)) {
            for (int c = 0; c < 3; c++) {
                va[c] = va[c] * s[0] * s[1];
                vb[c] = vb[c] * s[0] * s[1];
            }
            weight = weight * sw[0] * sw[1];
        }
        const double d0 = va[0] - (cm[0][0] * vb[0] + cm[0][1] * vb[1] + cm[0][2] * vb[2]);
        const double d1 = va[1] - (cm[1][0] * vb[0] + cm[1][1] * vb[1] + cm[1][2] * vb[2]);
        const double d2 = va[2] - (cm[2][0] * vb[0] + cm[2][1] * vb[1] + cm[2][2] * vb[2]);
        sum += weight * (d0 * d0 + d1 * d1 + d2 * d2);
    }
    return ldexp(sqrt(sum), e + ew / 2);
}

/*
 * align_vectors: for each set, the rotation C minimising sum_i w_i |a_i - C b_i|^2 (scipy's
 * Rotation.align_vectors(a, b, weights): C maps b onto a), as a unit quaternion with w >= 0, and
 * rssd = sqrt(sum_i w_i |a_i - C b_i|^2): from the eigenvalue, sum w (|a|^2 + |b|^2) - 2 lambda1,
 * in the same pass as B when that loses at most 4 bits to cancellation (RSSD_CANCELLATION_LIMIT),
 * else (a close fit, where it cancels; scaled inputs; the one-pair and infinite-weight cases)
 * summed directly by a second pass. As scipy:
 *   - one pair (n_items 1), or one infinite weight: the primary pair (that one) is aligned
 *     exactly by the rotation of least angle (minimal_rotation), then the others by the best
 *     rotation about the primary a (atan2 of their weighted sine and cosine sums); rssd leaves
 *     out an infinite-weight pair. A zero primary vector stops the job (JM_FIT_ZERO_PRIMARY);
 *     two infinite weights in a set too (JM_FIT_TWO_INFINITE); a negative or NaN weight
 *     (JM_FIT_BAD_WEIGHT).
 *   - otherwise Davenport's q-method on B = sum w a b^T; a set whose two largest eigenvalues are
 *     within DEGENERATE_GAP (collinear or too few independent vectors) is counted in
 *     n_degenerate (the boundary warns as scipy does) and gets one of its optimal rotations.
 * Scale: sums in double, a, b and the weights rescaled by powers of two when their magnitudes
 * leave 2^+-240 (float64 inputs and weights: any finite scale).
 */
void JM_FN(T_FN(jm_align_vectors))(jm_align_job *job) {
    job->error = JM_FIT_OK;
    job->n_degenerate = 0;
    const size_t n = job->n_items;
    for (size_t s = 0; s < job->n_batch; s++) {
        const char *a = job->a + (ptrdiff_t)s * job->a_stride, *b = job->b + (ptrdiff_t)s * job->b_stride;
        const char *w = job->weights ? job->weights + (ptrdiff_t)s * job->w_stride : NULL;
        ptrdiff_t primary = n == 1 ? 0 : -1;
        int error = JM_FIT_OK, primary_infinite = 0;
        for (size_t i = 0; w && i < n; i++) {
            double weight;
            memcpy(&weight, w + i * sizeof(double), sizeof weight);
            if (!(weight >= 0.0))
                error = JM_FIT_BAD_WEIGHT;
            else if (weight == INFINITY) {
                if (primary_infinite)
                    error = JM_FIT_TWO_INFINITE;
                primary = (ptrdiff_t)i;
                primary_infinite = 1;
            }
        }
        double q[4], rssd = 0.0;
        int have_rssd = 0;
        if (primary >= 0 && error == JM_FIT_OK) {
            double pa[3], pb[3], ua[3], ub[3];
            T_FN(load_doubles)(a + (size_t)primary * 3 * sizeof(T_SCALAR), pa, 3);
            T_FN(load_doubles)(b + (size_t)primary * 3 * sizeof(T_SCALAR), pb, 3);
            if (unit_vector(pa, ua) == 0.0 || unit_vector(pb, ub) == 0.0)
                error = JM_FIT_ZERO_PRIMARY;
            double q_primary[4], c_primary[3][3];
            minimal_rotation(ua, ub, q_primary);
            quat_matrix(q_primary, c_primary);
            /* the best rotation phi about ua of the others, after the primary's */
            double sin_sum = 0.0, cos_sum = 0.0, max_a = 0.0, max_b = 0.0, max_w = 0.0;
            for (int pass = 0; pass < 2; pass++) {
                double sa[2], sb[2], sw[2];
                power_of_two_factors(pass ? exponent_of(max_a) : 0, sa);
                power_of_two_factors(pass ? exponent_of(max_b) : 0, sb);
                power_of_two_factors(pass ? exponent_of(max_w) : 0, sw);
                sin_sum = cos_sum = 0.0;
                for (size_t i = 0; i < n; i++) {
                    if ((ptrdiff_t)i == primary)
                        continue;
                    double va[3], vb[3], vc[3], weight = 1.0;
                    T_FN(load_doubles)(a + i * 3 * sizeof(T_SCALAR), va, 3);
                    T_FN(load_doubles)(b + i * 3 * sizeof(T_SCALAR), vb, 3);
                    if (w)
                        memcpy(&weight, w + i * sizeof(double), sizeof weight);
                    if (!pass) {
                        max_a = larger(max_a, larger(fabs(va[0]), larger(fabs(va[1]), fabs(va[2]))));
                        max_b = larger(max_b, larger(fabs(vb[0]), larger(fabs(vb[1]), fabs(vb[2]))));
                        max_w = larger(max_w, weight);
                    }
                    for (int c = 0; c < 3; c++) {
                        va[c] = va[c] * sa[0] * sa[1];
                        vb[c] = vb[c] * sb[0] * sb[1];
                    }
                    weight = weight * sw[0] * sw[1];
                    for (int r = 0; r < 3; r++)
                        vc[r] = c_primary[r][0] * vb[0] + c_primary[r][1] * vb[1] + c_primary[r][2] * vb[2];
                    const double cross[3] = {vc[1] * va[2] - vc[2] * va[1], vc[2] * va[0] - vc[0] * va[2],
                                             vc[0] * va[1] - vc[1] * va[0]};
                    const double c_dot_u = vc[0] * ua[0] + vc[1] * ua[1] + vc[2] * ua[2];
                    const double a_dot_u = va[0] * ua[0] + va[1] * ua[1] + va[2] * ua[2];
                    sin_sum += weight * (cross[0] * ua[0] + cross[1] * ua[1] + cross[2] * ua[2]);
                    cos_sum += weight * (vc[0] * va[0] + vc[1] * va[1] + vc[2] * va[2] - c_dot_u * a_dot_u);
                }
                if (!(out_of_range(max_a) || out_of_range(max_b) || out_of_range(max_w)))
                    break;
            }
            const double phi = atan2(sin_sum, cos_sum), half_sin = sin(0.5 * phi);
            const double q_about[4] = {half_sin * ua[0], half_sin * ua[1], half_sin * ua[2], cos(0.5 * phi)};
            quat_product(q_about, q_primary, q);
        } else if (error == JM_FIT_OK) {
            double bm[3][3], max_a, max_b, max_w, squares;
            int scaled = 0;
            T_FN(align_sums)(a, b, w, n, -1, 0, 0, 0, bm, &max_a, &max_b, &max_w, &squares);
            if (out_of_range(max_a) || out_of_range(max_b) || out_of_range(max_w)) {
                T_FN(align_sums)(a, b, w, n, -1, exponent_of(max_a), exponent_of(max_b), exponent_of(max_w), bm,
                                 &max_a, &max_b, &max_w, &squares);
                scaled = 1;
            }
            double k[4][4], lambda1, lambda2;
            davenport_matrix(bm, k);
            dominant_eigenvector(k, q, &lambda1, &lambda2);
            if (lambda1 - lambda2 < DEGENERATE_GAP * (fabs(lambda1) + fabs(lambda2)))
                job->n_degenerate++;
            /* rssd^2 = sum w (|a|^2 + |b|^2) - 2 lambda1 (lambda1 = max tr(C^T B)): taken from the first
               pass when the subtraction loses at most 4 bits (its error is then within 16 times that of the
               sums), else summed directly by a second pass (a close fit, where it cancels) */
            const double rssd2 = squares - 2.0 * lambda1;
            if (!scaled && rssd2 >= squares * RSSD_CANCELLATION_LIMIT) {
                have_rssd = 1;
                rssd = sqrt(rssd2);
            }
        }
        if (error != JM_FIT_OK) {
            job->error = error;
            job->error_batch = s;
            return;
        }
        canonical_sign(q);
        if (!have_rssd) {
            double cm[3][3], max_ab = 0.0, max_w = 0.0;
            quat_matrix(q, cm);
            const ptrdiff_t skip = primary_infinite ? primary : -1;
            for (size_t i = 0; i < n; i++) {
                double va[3], vb[3], weight = 1.0;
                if ((ptrdiff_t)i == skip)
                    continue;
                T_FN(load_doubles)(a + i * 3 * sizeof(T_SCALAR), va, 3);
                T_FN(load_doubles)(b + i * 3 * sizeof(T_SCALAR), vb, 3);
                if (w)
                    memcpy(&weight, w + i * sizeof(double), sizeof weight);
                for (int c = 0; c < 3; c++)
                    max_ab = larger(max_ab, larger(fabs(va[c]), fabs(vb[c])));
                max_w = larger(max_w, weight);
            }
            int e = 0, ew = 0;
            if (out_of_range(max_ab) || out_of_range(max_w)) {
                e = exponent_of(max_ab);
                ew = exponent_of(max_w);
                ew += ew & 1; /* even: its square root is exact */
            }
            rssd = T_FN(align_rssd)(a, b, w, n, skip, cm, e, ew);
        }
        T_FN(store_quat)(job->quats + s * 4 * sizeof(T_SCALAR), q);
        const T_SCALAR r = (T_SCALAR)rssd;
        memcpy(job->rssd + s * sizeof(T_SCALAR), &r, sizeof r);
    }
}

/* random_quats' lanes for this type: float rotations in float lanes, double in double lanes. */
#if T_IS_FLOAT
#define RANDOM_LANES JM_W
#define random_vec vf
#define random_chunk_type random_chunk_float
#define random_chunk_start random_lane_offsets
#define random_fill random_chunk_fill_float
#define random_mask vmask
#define random_op(op) v_##op
#define random_sincos sincos_quarter_float
#define random_store_quads v_store_quads
#else
#define RANDOM_LANES JM_WD
#define random_vec vd
#define random_chunk_type random_chunk
#define random_chunk_start(chunk) ((void)(chunk))
#define random_fill random_chunk_fill
#define random_mask vdmask
#define random_op(op) vd_##op
#define random_sincos sincos_quarter
#define random_store_quads vd_store_quads
#endif

/*
 * Shoemake's method (1992) for quaternions i .. i + RANDOM_LANES - 1 of a chunk: u in (0, 1) (an
 * odd multiple of 2^-53 in double, 2^-24 in float: 1 - u exact) and two angles t1, t2 uniform on
 * the circle give q = (sqrt(1 - u) sin t1, sqrt(1 - u) cos t1, sqrt(u) sin t2, sqrt(u) |cos t2|):
 * uniform on the half of the 3-sphere with w >= 0, since reflecting w keeps the sphere's measure
 * (q and -q are one rotation: uniform on SO(3) still; w is never 0). One AND where negating q when
 * w < 0 took five operations. Rejection-free, so every lane does the same work. The x, y, z, w
 * lanes to c[0..3] (float lanes in v_store_quads' arrangement, see random_lane_offsets).
 */
static inline void T_FN(random_quat_lanes)(const random_chunk_type *chunk, size_t i, random_vec c[4]) {
    const random_vec uv = random_op(loadu)(&chunk->u[i]), zero = random_op(set1)((T_SCALAR)0);
    const random_vec radius[2] = {random_op(sqrt)(random_op(sub)(random_op(set1)((T_SCALAR)1), uv)),
                                  random_op(sqrt)(uv)};
    for (int a = 0; a < 2; a++) {
        random_vec s, cosine_x;
        random_sincos(random_op(loadu)(&chunk->x[a][i]), &s, &cosine_x);
        const random_mask swapped = random_op(gt)(random_op(loadu)(&chunk->swap[a][i]), zero);
        const random_vec sine =
            random_op(xor)(random_op(select)(swapped, cosine_x, s), random_op(loadu)(&chunk->sin_sign[a][i]));
        const random_vec cosine = random_op(select)(swapped, s, cosine_x);
        c[2 * a] = random_op(mul)(radius[a], sine);
        c[2 * a + 1] = random_op(mul)(radius[a], a == 0 ? random_op(xor)(cosine, random_op(loadu)(&chunk->cos_sign[i]))
                                                        : random_op(abs)(cosine));
    }
}

/*
 * random_quats: n unit quaternions uniformly distributed on the 3-sphere (so their rotations
 * uniformly on SO(3)), by Shoemake's method on stream_word's counter-based stream keyed by `key`
 * (one word of the caller's stream): float64 in double lanes from three words per quaternion
 * (random_chunk_fill), float32 in float lanes from two (random_chunk_fill_float: float32 needs 24
 * bits per uniform, and float lanes are twice as many); both through random_quat_lanes. The same
 * key gives the same bits on every path (the same IEEE operations, no FMA, in every lane and for
 * the last records).
 */
void JM_FN(T_FN(jm_random_quats))(uint64_t key, char *out, size_t n) {
    random_chunk_type chunk;
    random_chunk_start(&chunk);
    for (size_t start = 0; start < n; start += RANDOM_CHUNK) {
        const size_t m = n - start < RANDOM_CHUNK ? n - start : RANDOM_CHUNK;
        random_fill(key, start, m, &chunk);
        for (size_t i = 0; i < m; i += RANDOM_LANES) {
            random_vec c[4];
            T_FN(random_quat_lanes)(&chunk, i, c);
            char *record = out + (start + i) * sizeof(T_SCALAR[4]);
            if (i + RANDOM_LANES <= m) {
                random_store_quads(record, sizeof(T_SCALAR[4]), c[0], c[1], c[2], c[3]);
                continue;
            }
            T_SCALAR q[RANDOM_LANES][4];
            random_store_quads((char *)q, sizeof q[0], c[0], c[1], c[2], c[3]);
            memcpy(record, q, (m - i) * sizeof q[0]);
        }
    }
}

#undef RANDOM_LANES
#undef random_vec
#undef random_chunk_type
#undef random_chunk_start
#undef random_fill
#undef random_mask
#undef random_op
#undef random_sincos
#undef random_store_quads
