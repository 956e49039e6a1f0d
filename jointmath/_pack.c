/*
 * _pack.c - boundary of the packing kernels (csrc/pack.c). jointmath/_pack.py checks and
 * shapes the user's arguments; these entry points re-check the buffers they are handed so that
 * a wrong internal call fails loudly instead of corrupting memory.
 */
#include "_core.h"

/* 0 if `a` is a C-contiguous array of `type` with `n` elements (and writeable if asked). */
static int check_buffer(PyArrayObject *a, int type, npy_intp n, int writeable, const char *what) {
    if (PyArray_TYPE(a) != type || !PyArray_IS_C_CONTIGUOUS(a) || PyArray_SIZE(a) != n ||
        (writeable && !PyArray_ISWRITEABLE(a))) {
        PyErr_Format(PyExc_ValueError, "internal: %s must be a C-contiguous%s array of %zd elements", what,
                     writeable ? " writeable" : "", (Py_ssize_t)n);
        return -1;
    }
    return 0;
}

static int code_type(int bits) {
    return bits == 10 ? NPY_UINT32 : bits == 20 ? NPY_UINT64 : -1;
}

/* _pack_float32(q, codes, bits) -> (number of invalid quaternions, index of the first) */
static PyObject *py_pack_float32(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *q, *codes;
    int bits;
    if (!PyArg_ParseTuple(args, "O!O!i", &PyArray_Type, &q, &PyArray_Type, &codes, &bits))
        return NULL;
    if (code_type(bits) < 0)
        return PyErr_Format(PyExc_ValueError, "internal: bits must be 10 or 20");
    npy_intp n = PyArray_SIZE(codes);
    if (check_buffer(q, NPY_FLOAT32, 4 * n, 0, "q") < 0 || check_buffer(codes, code_type(bits), n, 1, "codes") < 0)
        return NULL;
    jm_pack_kernel kernel = bits == 10 ? jm_active->pack_quats32 : jm_active->pack_quats64;
    size_t first_invalid = 0, invalid = 0;
    const float *src = (const float *)PyArray_DATA(q);
    void *dst = PyArray_DATA(codes);
    if (n >= GIL_RELEASE_MIN_RECORDS) {
        Py_BEGIN_ALLOW_THREADS invalid = kernel(src, dst, (size_t)n, &first_invalid);
        Py_END_ALLOW_THREADS
    } else if (n) {
        invalid = kernel(src, dst, (size_t)n, &first_invalid);
    }
    return Py_BuildValue("nn", (Py_ssize_t)invalid, (Py_ssize_t)first_invalid);
}

/* _unpack_float32(codes, q, bits) */
static PyObject *py_unpack_float32(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *codes, *q;
    int bits;
    if (!PyArg_ParseTuple(args, "O!O!i", &PyArray_Type, &codes, &PyArray_Type, &q, &bits))
        return NULL;
    if (code_type(bits) < 0)
        return PyErr_Format(PyExc_ValueError, "internal: bits must be 10 or 20");
    npy_intp n = PyArray_SIZE(codes);
    if (check_buffer(codes, code_type(bits), n, 0, "codes") < 0 || check_buffer(q, NPY_FLOAT32, 4 * n, 1, "q") < 0)
        return NULL;
    jm_unpack_kernel kernel = bits == 10 ? jm_active->unpack_quats32 : jm_active->unpack_quats64;
    const void *src = PyArray_DATA(codes);
    float *dst = (float *)PyArray_DATA(q);
    if (n >= GIL_RELEASE_MIN_RECORDS) {
        Py_BEGIN_ALLOW_THREADS kernel(src, dst, (size_t)n);
        Py_END_ALLOW_THREADS
    } else if (n) {
        kernel(src, dst, (size_t)n);
    }
    Py_RETURN_NONE;
}

PyMethodDef jm_pack_methods[] = {
    {"_pack_float32", py_pack_float32, METH_VARARGS, "Internal: pack contiguous float32 quaternions."},
    {"_unpack_float32", py_unpack_float32, METH_VARARGS, "Internal: unpack contiguous codes."},
    {NULL, NULL, 0, NULL},
};
