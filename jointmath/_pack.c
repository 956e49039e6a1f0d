/*
 * _pack.c - boundary of the packing kernels (csrc/pack.c): pack_quats and unpack_quats
 * (jointmath/_pack.py builds the joint-record packing on them).
 */
#include "_core.h"

#include <string.h>

/* bits: 10 or 20 (an int or NumPy integer, not a bool); the code type, or -1 with a ValueError. */
static int parse_bits(PyObject *obj) {
    long bits = -1;
    if (obj && !PyBool_Check(obj) && PyIndex_Check(obj)) {
        PyObject *value = PyNumber_Index(obj);
        if (!value)
            return -1;
        bits = PyLong_AsLong(value);
        Py_DECREF(value);
        if (bits == -1 && PyErr_Occurred())
            PyErr_Clear();
    } else if (!obj) {
        bits = 10;
    }
    if (bits == 10 || bits == 20)
        return bits == 10 ? NPY_UINT32 : NPY_UINT64;
    PyErr_Format(PyExc_ValueError, "bits must be 10 (uint32 codes) or 20 (uint64 codes), got %R", obj);
    return -1;
}

/* The ValueError for `count` invalid quaternions, the first at flat position `first` of `shape`. */
static void invalid_error(size_t count, size_t first, int ndim, const npy_intp *shape) {
    PyObject *where;
    if (ndim == 1) {
        where = PyLong_FromSize_t(first);
    } else {
        where = PyTuple_New(ndim);
        for (int d = ndim - 1; where && d >= 0; d--) {
            PyTuple_SET_ITEM(where, d, PyLong_FromSsize_t((Py_ssize_t)(first % (size_t)shape[d])));
            first /= (size_t)shape[d];
        }
    }
    if (where)
        PyErr_Format(PyExc_ValueError, "q holds %zu zero or non-finite quaternion%s (cannot be packed); the first at "
                     "index %R", count, count > 1 ? "s" : "", where);
    Py_XDECREF(where);
}

PyDoc_STRVAR(pack_quats_doc,
             "pack_quats(q, bits=10)\n--\n\n"
             "Pack quaternions into one integer each (\"smallest three\" with the largest component's\n"
             "index).\n\n"
             "q: array_like (..., 4), (x, y, z, w); float32 (and float16) in float32, float64,\n"
             "integers and bools in float64. Any non-zero finite quaternion packs: the encoding is\n"
             "scale- and sign-invariant (q, -q and 3q give the same code).\n"
             "bits: 10 -> uint32 codes, 20 -> uint64 codes.\n\n"
             "Layout of a 32-bit code: bits 31-30 hold the index (0..3 for x, y, z, w) of the\n"
             "component of largest magnitude (the lowest index on ties); the quaternion is divided\n"
             "by that component and the other three, c in [-1, 1] in increasing index order, go to\n"
             "bits 29-20, 19-10 and 9-0 mid-tread, as round(c * M) + M with M = 511 (so 0 is the\n"
             "level 511 and is exact; code 1023 is never written). The rounding is exactly to\n"
             "nearest, ties to even, of the real quotient of the given floats. The 64-bit code has\n"
             "20-bit fields with M = 2^19 - 1 = 524287: the index in bits 61-60, the fields in\n"
             "59-40, 39-20, 19-0; bits 63-62 are 0.\n\n"
             "Returns the codes, shape q.shape[:-1], uint32 or uint64; one quaternion (shape (4,))\n"
             "gives a NumPy scalar (np.uint32 / np.uint64), as NumPy's ufuncs return 0-d results;\n"
             "unpack_quats takes scalars and arrays alike. float32 and float64 give exactly the\n"
             "codes defined above (so float32 input gives the same codes either way), on every ISA\n"
             "path, for any finite non-zero scale from the smallest denormal to the largest float\n"
             "of the input's dtype.\n\n"
             "Accuracy of unpack_quats(pack_quats(q)) over 10^7 random unit quaternions (float32,\n"
             "every path; benchmarks/bench_pack.py --accuracy): 32-bit worst |q . q'| 0.99999859\n"
             "(the format's bound is 1 - 3 / (2 * 1022^2) = 0.99999856), worst rotation error\n"
             "0.189 degrees, mean 0.078; 64-bit worst 1.87e-4 degrees, mean 7.7e-5; decoded norms\n"
             "within 1.5e-7 of 1. Components that are 0 (the identity, rotations about one axis)\n"
             "come back exactly 0.\n\n"
             "Raises TypeError for complex, object or string input, ValueError for a wrong shape, a\n"
             "bits value other than 10/20, or zero / non-finite quaternions (saying how many and the\n"
             "index of the first).");

static PyObject *py_pack_quats(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"q", "bits"};
    static const npy_intp quat_core[1] = {4};
    PyObject *slots[2];
    if (jm_parse_args("pack_quats", args, nargs, kwnames, names, 2, 1, slots) < 0)
        return NULL;
    const int code_type = parse_bits(slots[1]);
    if (code_type < 0)
        return NULL;
    PyArrayObject *q = jm_float_operand(slots[0], "q", 1, quat_core), *codes = NULL;
    if (!q)
        return NULL;
    jm_walk src = {NULL, NULL, 0};
    PyObject *result = NULL;
    const int type = PyArray_TYPE(q), batch_ndim = PyArray_NDIM(q) - 1;
    if (jm_walk_operand(q, type, 1, 4 * PyArray_ITEMSIZE(q), batch_ndim, PyArray_DIMS(q), JM_WALK_PACKED, &src) < 0 ||
        !(codes = jm_new_array(batch_ndim, PyArray_DIMS(q), code_type)))
        goto done;
    const size_t n = (size_t)PyArray_SIZE(codes);
    size_t invalid = 0, first_invalid = n;
    jm_pack_f64_kernel k64 = code_type == NPY_UINT32 ? jm_active->pack_quats32_f64 : jm_active->pack_quats64_f64;
    if (n && type == NPY_FLOAT32) {
        jm_pack_kernel kernel = code_type == NPY_UINT32 ? jm_active->pack_quats32 : jm_active->pack_quats64;
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        invalid = kernel((const float *)src.base, PyArray_DATA(codes), n, &first_invalid);
        jm_restore_gil(saved);
    } else if (n) {
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        invalid = k64((const double *)src.base, PyArray_DATA(codes), n, &first_invalid);
        jm_restore_gil(saved);
    }
    if (invalid) {
        invalid_error(invalid, first_invalid, batch_ndim, PyArray_DIMS(codes));
        goto done;
    }
    result = PyArray_Return(codes); /* one quaternion: a NumPy scalar, as ufuncs return */
    codes = NULL;
done:
    jm_walk_release(&src);
    Py_XDECREF(codes);
    Py_DECREF(q);
    return result;
}

PyDoc_STRVAR(unpack_quats_doc,
             "unpack_quats(p)\n--\n\n"
             "Unit quaternions from the codes of pack_quats.\n\n"
             "p: uint32 codes (32-bit) or uint64 codes (64-bit; bits 63-62 are ignored): an array of\n"
             "any shape and byte order, a NumPy scalar (what pack_quats returns for one\n"
             "quaternion) or a sequence of them. Every code is valid.\n\n"
             "Returns float32 (..., 4) unit quaternions (x, y, z, w), | |q| - 1 | <= 1e-6: each\n"
             "field decodes as c = (code - M) / M (M = 511 or 524287; the never-written code\n"
             "2^bits - 1 as +1), 1 at the stored index, then normalised. The component that was\n"
             "largest comes out positive; a component packed as 0 comes out exactly 0.\n\n"
             "Raises TypeError naming p for any other dtype (signed integers included: codes are\n"
             "unsigned).");

static PyObject *py_unpack_quats(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"p"};
    PyObject *slots[1];
    if (jm_parse_args("unpack_quats", args, nargs, kwnames, names, 1, 1, slots) < 0)
        return NULL;
    PyObject *obj = slots[0];
    PyArrayObject *raw;
    if (PyArray_Check(obj)) {
        Py_INCREF(obj);
        raw = (PyArrayObject *)obj;
    } else if (!(raw = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL))) {
        return NULL;
    }
    PyArray_Descr *d = PyArray_DESCR(raw);
    if (d->kind != 'u' || (PyDataType_ELSIZE(d) != 4 && PyDataType_ELSIZE(d) != 8)) {
        PyErr_Format(PyExc_TypeError, "p must hold uint32 or uint64 codes (the codes of pack_quats), got dtype %S",
                     (PyObject *)d);
        Py_DECREF(raw);
        return NULL;
    }
    const int bits = PyDataType_ELSIZE(d) == 4 ? 10 : 20, ndim = PyArray_NDIM(raw);
    if (ndim >= NPY_MAXDIMS) {
        Py_DECREF(raw);
        return PyErr_Format(PyExc_ValueError, "p has %d dimensions; at most %d fit the (..., 4) result", ndim,
                            NPY_MAXDIMS - 1);
    }
    npy_intp dims[NPY_MAXDIMS];
    if (ndim) /* a 0-d array (one code) may have no dims pointer */
        memcpy(dims, PyArray_DIMS(raw), ndim * sizeof(npy_intp));
    dims[ndim] = 4;
    /* the result first: one too large to allocate says so before any copy of the codes */
    PyArrayObject *q = jm_new_array(ndim + 1, dims, NPY_FLOAT32);
    if (!q) {
        Py_DECREF(raw);
        return NULL;
    }
    /* aligned, native, contiguous codes of the exact type the kernel reads */
    PyArrayObject *codes = (PyArrayObject *)PyArray_FromArray(
        raw, PyArray_DescrFromType(bits == 10 ? NPY_UINT32 : NPY_UINT64), NPY_ARRAY_CARRAY_RO);
    Py_DECREF(raw);
    if (!codes) {
        Py_DECREF(q);
        return NULL;
    }
    const npy_intp n = PyArray_SIZE(codes);
    jm_unpack_kernel kernel = bits == 10 ? jm_active->unpack_quats32 : jm_active->unpack_quats64;
    if (n) {
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        kernel(PyArray_DATA(codes), (float *)PyArray_DATA(q), (size_t)n);
        jm_restore_gil(saved);
    }
    Py_DECREF(codes);
    return (PyObject *)q;
}

PyMethodDef jm_pack_methods[] = {
    {"pack_quats", (PyCFunction)(void (*)(void))py_pack_quats, METH_FASTCALL | METH_KEYWORDS, pack_quats_doc},
    {"unpack_quats", (PyCFunction)(void (*)(void))py_unpack_quats, METH_FASTCALL | METH_KEYWORDS,
     unpack_quats_doc},
    {NULL, NULL, 0, NULL},
};
