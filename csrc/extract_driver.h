/*
 * extract_driver.h - the block loop and the driver of the rotation extraction (extract.c), written
 * once for float32 and float64 lanes: a type-generic template that extract.c includes once per
 * lane type (no include guard), after the lane type's extract_start, extract_step and
 * extract_finish, with extract_objective.h's T, T_FN and T_STATE defined and
 *
 *   T_SCALAR      the element type (float, double)    T_LANES     elements a vector (JM_W, JM_WD)
 *   T_ANY(mask)   whether any lane of a mask is set   T_MATRIX_MAX  bytes of the largest input record
 */

/* extract_block: `groups` groups of T_LANES consecutive records iterated together until every
   lane stopped or max_iter updates. */
JM_INLINE void T_FN(extract_block)(int layout, int method, int groups, const char *a, ptrdiff_t as, const char *q0,
                                   ptrdiff_t qs, char *out, ptrdiff_t os, char *iterations, ptrdiff_t is,
                                   int max_iter, T tol) {
    T_STATE st[EXTRACT_GROUPS];
    const ptrdiff_t group = T_LANES;
    for (int g = 0; g < groups; g++)
        T_FN(extract_start)(layout, a + g * group * as, as, q0 ? q0 + g * group * qs : NULL, qs, &st[g]);
    for (int i = 0; i < max_iter; i++) {
        int any = 0;
        for (int g = 0; g < groups; g++) {
            T_FN(extract_step)(&st[g], tol, method);
            any |= T_ANY(st[g].active);
        }
        if (!any)
            break;
    }
    for (int g = 0; g < groups; g++)
        T_FN(extract_finish)(&st[g], out + g * group * os, os, iterations ? iterations + g * group * is : NULL, is);
}

/*
 * extract_run: the driver: EXTRACT_GROUPS * T_LANES records at a time, then single groups, then
 * the last n % T_LANES records through zeroed stack buffers of a_size-byte matrices (JM_FOR_BLOCKS's
 * scheme, for four arrays). The zero padding costs nothing: A = 0 has zero torque, so those lanes
 * stop at once.
 */
JM_INLINE void T_FN(extract_run)(int layout, int method, ptrdiff_t a_size, const jm_extract_job *job) {
    const size_t n = job->n, quat = 4 * sizeof(T_SCALAR);
    const T tol = T_OP(set1)((T_SCALAR)job->tol);
    const ptrdiff_t as = job->a_stride, qs = job->q0_stride, os = job->out_stride, is = job->iterations_stride;
    char *iterations = (char *)job->iterations;
    size_t i = 0;
    for (; i + EXTRACT_GROUPS * T_LANES <= n; i += EXTRACT_GROUPS * T_LANES)
        T_FN(extract_block)(layout, method, EXTRACT_GROUPS, job->a + (ptrdiff_t)i * as, as,
                            job->q0 ? job->q0 + (ptrdiff_t)i * qs : NULL, qs, job->out + (ptrdiff_t)i * os, os,
                            iterations ? iterations + (ptrdiff_t)i * is : NULL, is, job->max_iter, tol);
    for (; i + T_LANES <= n; i += T_LANES)
        T_FN(extract_block)(layout, method, 1, job->a + (ptrdiff_t)i * as, as,
                            job->q0 ? job->q0 + (ptrdiff_t)i * qs : NULL, qs, job->out + (ptrdiff_t)i * os, os,
                            iterations ? iterations + (ptrdiff_t)i * is : NULL, is, job->max_iter, tol);
    if (i < n) {
        char a_buf[T_LANES * T_MATRIX_MAX] = {0}, q0_buf[T_LANES * 4 * sizeof(T_SCALAR)] = {0};
        char out_buf[T_LANES * 4 * sizeof(T_SCALAR)], iterations_buf[T_LANES * sizeof(int32_t)];
        const size_t rest = n - i;
        for (size_t k = 0; k < rest; k++) {
            memcpy(a_buf + k * a_size, job->a + (ptrdiff_t)(i + k) * as, a_size);
            if (job->q0)
                memcpy(q0_buf + k * quat, job->q0 + (ptrdiff_t)(i + k) * qs, quat);
        }
        T_FN(extract_block)(layout, method, 1, a_buf, a_size, job->q0 ? q0_buf : NULL, quat, out_buf, quat,
                            iterations ? iterations_buf : NULL, sizeof(int32_t), job->max_iter, tol);
        for (size_t k = 0; k < rest; k++) {
            memcpy(job->out + (ptrdiff_t)(i + k) * os, out_buf + k * quat, quat);
            if (iterations)
                memcpy(iterations + (ptrdiff_t)(i + k) * is, iterations_buf + k * sizeof(int32_t), sizeof(int32_t));
        }
    }
}
