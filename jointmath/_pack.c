/*
 * _pack.c - boundary of the packing kernels (csrc/pack.c). jointmath/_pack.py checks the
 * user's arguments; these entry points allocate the results, make the inputs contiguous, and
 * re-check what they are handed so that a wrong internal call fails loudly instead of
 * corrupting memory.
 */
#include "_core.h"

static int code_type(int bits) {
    return bits == 10 ? NPY_UINT32 : bits == 20 ? NPY_UINT64 : -1;
}

/*
 * _pack_float32(q, bits) -> (codes, number of invalid quaternions, index of the first): q a
 * float32 or float64 array (..., 4) (copied when not C-contiguous; float64 runs the _f64 kernels),
 * codes a new array of shape q.shape[:-1].
 */
static PyObject *py_pack_float32(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *q_in;
    int bits;
    if (!PyArg_ParseTuple(args, "O!i", &PyArray_Type, &q_in, &bits))
        return NULL;
    const int ndim = PyArray_NDIM(q_in);
    const int f64 = PyArray_TYPE(q_in) == NPY_FLOAT64;
    if (code_type(bits) < 0 || (PyArray_TYPE(q_in) != NPY_FLOAT32 && !f64) || !PyArray_ISNOTSWAPPED(q_in) || ndim < 1 ||
        PyArray_DIM(q_in, ndim - 1) != 4)
        return PyErr_Format(PyExc_ValueError,
                            "internal: _pack_float32 takes native float32 or float64 (..., 4) and bits 10 or 20");
    PyArrayObject *q = (PyArrayObject *)PyArray_GETCONTIGUOUS(q_in);
    if (!q)
        return NULL;
    PyArrayObject *codes = (PyArrayObject *)PyArray_SimpleNew(ndim - 1, PyArray_DIMS(q), code_type(bits));
    if (!codes) {
        Py_DECREF(q);
        return NULL;
    }
    const npy_intp n = PyArray_SIZE(codes);
    size_t first_invalid = 0, invalid = 0;
    void *dst = PyArray_DATA(codes);
    if (n) {
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        if (f64)
            invalid = (bits == 10 ? jm_active->pack_quats32_f64 : jm_active->pack_quats64_f64)(
                (const double *)PyArray_DATA(q), dst, (size_t)n, &first_invalid);
        else
            invalid = (bits == 10 ? jm_active->pack_quats32 : jm_active->pack_quats64)((const float *)PyArray_DATA(q),
                                                                                        dst, (size_t)n, &first_invalid);
        jm_restore_gil(saved);
    }
    Py_DECREF(q);
    return Py_BuildValue("Nnn", codes, (Py_ssize_t)invalid, (Py_ssize_t)first_invalid);
}

/* _unpack(p) -> float32 (..., 4) unit quaternions: p a native uint32 (10-bit) or uint64 (20-bit)
   array; anything else is a TypeError naming p (unpack_quats calls this directly). */
static PyObject *py_unpack(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyArray_Check(arg))
        return PyErr_Format(PyExc_TypeError, "p must be a numpy array of uint32 or uint64 codes, got %s",
                            Py_TYPE(arg)->tp_name);
    if ((PyArray_TYPE((PyArrayObject *)arg) != NPY_UINT32 && PyArray_TYPE((PyArrayObject *)arg) != NPY_UINT64) ||
        !PyArray_ISNOTSWAPPED((PyArrayObject *)arg))
        return PyErr_Format(PyExc_TypeError,
                            "p must have dtype uint32 or uint64 (the codes of pack_quats), got dtype %S",
                            (PyObject *)PyArray_DESCR((PyArrayObject *)arg));
    const int bits = PyArray_TYPE((PyArrayObject *)arg) == NPY_UINT32 ? 10 : 20;
    PyArrayObject *codes = (PyArrayObject *)PyArray_GETCONTIGUOUS((PyArrayObject *)arg);
    if (!codes)
        return NULL;
    const int ndim = PyArray_NDIM(codes);
    npy_intp dims[NPY_MAXDIMS];
    if (ndim >= NPY_MAXDIMS) {
        Py_DECREF(codes);
        return PyErr_Format(PyExc_ValueError, "p has %d dimensions; at most %d fit the (..., 4) result", ndim,
                            NPY_MAXDIMS - 1);
    }
    for (int d = 0; d < ndim; d++)
        dims[d] = PyArray_DIM(codes, d);
    dims[ndim] = 4;
    PyArrayObject *q = (PyArrayObject *)PyArray_SimpleNew(ndim + 1, dims, NPY_FLOAT32);
    if (!q) {
        Py_DECREF(codes);
        return NULL;
    }
    const npy_intp n = PyArray_SIZE(codes);
    jm_unpack_kernel kernel = bits == 10 ? jm_active->unpack_quats32 : jm_active->unpack_quats64;
    const void *src = PyArray_DATA(codes);
    float *dst = (float *)PyArray_DATA(q);
    if (n) {
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        kernel(src, dst, (size_t)n);
        jm_restore_gil(saved);
    }
    Py_DECREF(codes);
    return (PyObject *)q;
}

PyMethodDef jm_pack_methods[] = {
    {"_pack_float32", py_pack_float32, METH_VARARGS, "Internal: pack float32 or float64 quaternions."},
    {"_unpack", py_unpack, METH_O, "Internal: unpack codes."},
    {NULL, NULL, 0, NULL},
};
