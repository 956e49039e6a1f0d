/*
 * _extract.c - boundary of the rotation extraction kernels (csrc/extract.c): the float32 entry
 * point that jointmath/_extract.py calls after checking and shaping the arguments.
 */
#include "_core.h"

/* One record per row: an (n, ...) array whose rows are `row_bytes` contiguous bytes. */
static int is_rows(PyArrayObject *a, int type, int ndim, const npy_intp *row_shape, npy_intp row_bytes) {
    if (PyArray_TYPE(a) != type || PyArray_NDIM(a) != ndim)
        return 0;
    npy_intp inner = PyArray_ITEMSIZE(a);
    for (int d = ndim - 1; d >= 1; d--) {
        if (PyArray_DIM(a, d) != row_shape[d - 1] || PyArray_STRIDE(a, d) != inner)
            return 0;
        inner *= PyArray_DIM(a, d);
    }
    return inner == row_bytes;
}

/* The same records walked the same way (out = q0 in place is fine: each block reads first). */
static int same_records(PyArrayObject *a, PyArrayObject *b) {
    return PyArray_BYTES(a) == PyArray_BYTES(b) && PyArray_STRIDE(a, 0) == PyArray_STRIDE(b, 0);
}

/*
 * _extract_float32(a, q0, out, iterations, max_iter, tol): a is a 1-d JOINT_MAT array or an
 * (n, 3, 3) float32 array with contiguous rows; q0 None or (n, 4) float32; out (n, 4) float32;
 * iterations None or (n,) int32; any row strides. The checks only make a wrong internal call fail
 * loudly instead of corrupting memory.
 */
static PyObject *py_extract_float32(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *a, *out;
    PyObject *q0_obj, *iterations_obj;
    int max_iter;
    float tol;
    if (!PyArg_ParseTuple(args, "O!OO!Oif", &PyArray_Type, &a, &q0_obj, &PyArray_Type, &out, &iterations_obj,
                          &max_iter, &tol))
        return NULL;
    static const npy_intp mat_row[2] = {3, 3}, quat_row[1] = {4};
    const int is_joint_mat = jm_joint_mat_descr && PyArray_NDIM(a) == 1 &&
                             PyArray_EquivTypes(PyArray_DESCR(a), jm_joint_mat_descr);
    PyArrayObject *q0 = q0_obj == Py_None ? NULL : (PyArrayObject *)q0_obj;
    PyArrayObject *iterations = iterations_obj == Py_None ? NULL : (PyArrayObject *)iterations_obj;
    const npy_intp n = PyArray_DIM(out, 0);
    int ok = (is_joint_mat || is_rows(a, NPY_FLOAT32, 3, mat_row, 36)) && PyArray_DIM(a, 0) == n &&
             is_rows(out, NPY_FLOAT32, 2, quat_row, 16) && PyArray_ISWRITEABLE(out) && !jm_may_overlap(a, out) &&
             max_iter >= 0 && max_iter <= (1 << 24);
    if (ok && q0)
        ok = PyArray_Check(q0) && is_rows(q0, NPY_FLOAT32, 2, quat_row, 16) && PyArray_DIM(q0, 0) == n &&
             (same_records(q0, out) || !jm_may_overlap(q0, out));
    if (ok && iterations)
        ok = PyArray_Check(iterations) && PyArray_TYPE(iterations) == NPY_INT32 && PyArray_NDIM(iterations) == 1 &&
             PyArray_DIM(iterations, 0) == n && PyArray_ISWRITEABLE(iterations) &&
             !jm_may_overlap(iterations, out) && !jm_may_overlap(iterations, a) &&
             !(q0 && jm_may_overlap(iterations, q0));
    if (!ok)
        return PyErr_Format(PyExc_ValueError, "_extract_float32: a, q0, out and iterations must be separate "
                                              "record arrays of matching lengths, 0 <= max_iter <= 2**24");
    jm_extract_job job = {
        .a = PyArray_BYTES(a),
        .a_stride = PyArray_STRIDE(a, 0),
        .q0 = q0 ? PyArray_BYTES(q0) : NULL,
        .q0_stride = q0 ? PyArray_STRIDE(q0, 0) : 0,
        .out = PyArray_BYTES(out),
        .out_stride = PyArray_STRIDE(out, 0),
        .iterations = iterations ? (int32_t *)PyArray_BYTES(iterations) : NULL,
        .iterations_stride = iterations ? PyArray_STRIDE(iterations, 0) : 0,
        .n = (size_t)n,
        .max_iter = max_iter,
        .tol = tol,
    };
    jm_extract_kernel kernel = is_joint_mat ? jm_active->extract_mats : jm_active->extract_matrices;
    if (n >= GIL_RELEASE_MIN_RECORDS) {
        Py_BEGIN_ALLOW_THREADS kernel(&job);
        Py_END_ALLOW_THREADS
    } else if (n) {
        kernel(&job);
    }
    Py_RETURN_NONE;
}

PyMethodDef jm_extract_methods[] = {
    {"_extract_float32", py_extract_float32, METH_VARARGS, "Internal: run the float32 rotation extraction kernel."},
    {NULL, NULL, 0, NULL},
};
