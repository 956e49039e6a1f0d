/*
 * _pack.c - boundary of the packing kernels (csrc/pack.c): pack_quats and unpack_quats on
 * quaternion arrays and codes, pack_joints and unpack_joints on joint records.
 */
#include "_core.h"

#include <stddef.h>
#include <string.h>

/* bits: 10 or 20 (an int, a NumPy integer or a 0-d integer array; not a bool); the code type, or -1
   with a ValueError. */
static int parse_bits(PyObject *obj) {
    if (!obj)
        return NPY_UINT32; /* the default, 10 */
    if (jm_refuse_masked(obj, "bits") < 0)
        return -1;
    long bits = -1;
    if (jm_is_integer(obj)) {
        PyObject *value = PyNumber_Index(obj);
        if (!value)
            return -1;
        bits = PyLong_AsLong(value);
        Py_DECREF(value);
        if (bits == -1 && PyErr_Occurred())
            PyErr_Clear();
    }
    if (bits == 10 || bits == 20)
        return bits == 10 ? NPY_UINT32 : NPY_UINT64;
    PyErr_Format(PyExc_ValueError, "bits must be 10 (uint32 codes) or 20 (uint64 codes), got %R", obj);
    return -1;
}

/* The ValueError for `count` invalid quaternions of the argument `arg`, the first at flat position
   `first` of `shape`. */
static void invalid_error(const char *arg, size_t count, size_t first, int ndim, const npy_intp *shape) {
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
        PyErr_Format(PyExc_ValueError, "%s holds %zu zero or non-finite quaternion%s (cannot be packed); the first at "
                     "index %R", arg, count, count > 1 ? "s" : "", where);
    Py_XDECREF(where);
}

PyDoc_STRVAR(pack_quats_doc,
             "pack_quats(q, bits=10)\n--\n\n"
             "Quaternions packed into one integer each (\"smallest three\" with the largest component's\n"
             "index).\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)``; float32 (and float16) in float32, float64, integers and\n"
             "    bools in float64. Any non-zero finite quaternion packs: the code is scale- and\n"
             "    sign-invariant (``q``, ``-q`` and ``3q`` give the same code).\n"
             "bits : {10, 20}, optional\n"
             "    10 (default): uint32 codes; 20: uint64 codes.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of uint32 or uint64, shape q.shape[:-1]\n"
             "    The codes; one quaternion gives a NumPy scalar, as ufuncs return 0-d results. Every\n"
             "    path, float32 and float64 alike, gives exactly the codes of the layout below.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), ``bits`` other than 10 or 20, zero or non-finite\n"
             "    quaternions (saying how many and the index of the first).\n\n"
             "See Also\n"
             "--------\n"
             "unpack_quats, pack_joints\n\n"
             "Notes\n"
             "-----\n"
             "Layout of a 32-bit code: bits 31-30 hold the index (0..3 for x, y, z, w) of the component\n"
             "of largest magnitude (the lowest index on ties); the quaternion is divided by that\n"
             "component and the other three, ``c`` in [-1, 1] in increasing index order, go to bits\n"
             "29-20, 19-10 and 9-0 mid-tread, as ``round(c * M) + M`` with ``M = 511``: 0 is the level\n"
             "511 and is exact, code 1023 is never written. The rounding is to nearest, ties to even,\n"
             "of the real quotient of the given floats. The 64-bit code has 20-bit fields with\n"
             "``M = 2**19 - 1 = 524287``: the index in bits 61-60, the fields in 59-40, 39-20, 19-0;\n"
             "bits 63-62 are 0.\n\n"
             "Bound of the 32-bit format, every input: the rotation of ``unpack_quats(pack_quats(q))``\n"
             "is within 0.19421 degrees of ``q``'s (``|q . q'| >= 1 - 3 / (2 * 1022**2)`` for unit ``q``\n"
             "and ``q'`` normalised). 64-bit: within 2e-4 degrees.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> code = jm.pack_quats([0, 0, 0, 1])                          # the identity\n"
             ">>> code, hex(code), (code >> 30) & 3                            # largest component: w\n"
             "(np.uint32(3757571583), '0xdff7fdff', np.uint32(3))\n"
             ">>> [int(code >> shift) & 1023 for shift in (20, 10, 0)]        # x, y, z at the zero level\n"
             "[511, 511, 511]\n"
             ">>> jm.pack_quats([[0, 0, 0, 1], [0, 0, 0, -5]])                 # sign and scale invariant\n"
             "array([3757571583, 3757571583], dtype=uint32)\n"
             ">>> jm.pack_quats([0, 0, 0, 1], bits=20).dtype\n"
             "dtype('uint64')");

/* The codes of the quaternions `obj` (array_like, shape (..., 4), the argument q) as the packing
   functions return them: a new array of `code_type` and shape q.shape[:-1] (codes_per_quat 1) or
   q.shape (4: a code per component), filled by `k32` from float32 quaternions or `k64` from float64
   ones (k64 NULL: float32 only, a TypeError naming q for another dtype), the GIL released on large
   inputs. NULL with a ValueError naming q for zero or non-finite quaternions (how many, the first's
   index). A 0-d result is a NumPy scalar, as ufuncs return. */
static PyObject *pack_quat_operand(PyObject *obj, int code_type, int codes_per_quat, jm_pack_kernel k32,
                                   jm_pack_f64_kernel k64) {
    static const npy_intp quat_core[1] = {4};
    PyArrayObject *q = jm_float_operand(obj, "q", 1, quat_core), *codes = NULL;
    if (!q)
        return NULL;
    jm_walk src = {NULL, NULL, 0};
    PyObject *result = NULL;
    const int type = PyArray_TYPE(q), batch_ndim = PyArray_NDIM(q) - 1;
    if (type != NPY_FLOAT32 && !k64) {
        PyErr_Format(PyExc_TypeError, "q must be float32, got %S", (PyObject *)PyArray_DESCR(q));
        goto done;
    }
    if (jm_walk_operand(q, type, 1, 4 * PyArray_ITEMSIZE(q), batch_ndim, PyArray_DIMS(q), JM_WALK_PACKED, &src) < 0 ||
        !(codes = jm_new_array(codes_per_quat == 1 ? batch_ndim : batch_ndim + 1, PyArray_DIMS(q), code_type)))
        goto done;
    const size_t n = (size_t)PyArray_SIZE(codes) / (size_t)codes_per_quat;
    size_t invalid = 0, first_invalid = n;
    if (n)
        JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                         invalid = type == NPY_FLOAT32
                                       ? k32((const float *)src.base, PyArray_DATA(codes), n, &first_invalid)
                                       : k64((const double *)src.base, PyArray_DATA(codes), n, &first_invalid));
    if (invalid) {
        invalid_error("q", invalid, first_invalid, batch_ndim, PyArray_DIMS(q));
        goto done;
    }
    result = PyArray_Return(codes);
    codes = NULL;
done:
    jm_walk_release(&src);
    Py_XDECREF(codes);
    Py_DECREF(q);
    return result;
}

JM_FASTCALL_FUNCTION(pack_quats) {
    static const char *const names[] = {"q", "bits"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("pack_quats", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    const int code_type = parse_bits(slots[1]);
    if (code_type < 0)
        return NULL;
    return code_type == NPY_UINT32
               ? pack_quat_operand(slots[0], code_type, 1, jm_active->pack_quats32, jm_active->pack_quats32_f64)
               : pack_quat_operand(slots[0], code_type, 1, jm_active->pack_quats64, jm_active->pack_quats64_f64);
}

PyDoc_STRVAR(unpack_quats_doc,
             "unpack_quats(p)\n--\n\n"
             "Unit quaternions from the codes of :func:`pack_quats`.\n\n"
             "Parameters\n"
             "----------\n"
             "p : ndarray or scalar of uint32 or uint64\n"
             "    32-bit (uint32) or 64-bit (uint64; bits 63-62 are ignored) codes: an array of any\n"
             "    shape and byte order, a NumPy scalar, or a list or tuple of them of one dtype. Every\n"
             "    code is valid.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of float32, shape (..., 4)\n"
             "    Unit quaternions ``(x, y, z, w)``, ``| |q| - 1 | <= 1e-6``: each field decodes as\n"
             "    ``c = (code - M) / M`` (the never-written top code as +1), 1 at the stored index, then\n"
             "    normalised. The component that was largest comes out positive; a component packed as\n"
             "    0 comes out exactly 0.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For any other dtype (signed integers and Python ints included: the dtype says the\n"
             "    format), a sequence mixing code dtypes.\n\n"
             "See Also\n"
             "--------\n"
             "pack_quats\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> jm.unpack_quats(jm.pack_quats([0, 0, 0, -2]))\n"
             "array([0., 0., 0., 1.], dtype=float32)\n"
             ">>> q = np.array([0.5, -0.5, 0.5, 0.5], np.float32)\n"
             ">>> np.round(jm.unpack_quats(jm.pack_quats(q)), 4) + 0.0\n"
             "array([ 0.5, -0.5,  0.5,  0.5], dtype=float32)");

/* 0 when every code in `seq`, a list or tuple (nested ones walked), has the code dtype `d` that
   NumPy converted them to (kind and size; any byte order), else -1 with a TypeError naming p:
   NumPy promotes a mix (uint32 codes among uint64 ones, a bool or a uint16 among uint32 codes)
   to one dtype without a word, and the dtype says the format. Only sequences are walked: the
   array and scalar paths never come here. */
static int check_one_code_dtype(PyObject *seq, PyArray_Descr *d) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items[i];
        if (PyList_Check(item) || PyTuple_Check(item)) {
            if (check_one_code_dtype(item, d) < 0)
                return -1;
            continue;
        }
        PyArray_Descr *found = PyArray_DescrFromObject(item, NULL); /* the dtype NumPy gives it on its own */
        if (!found)
            return -1;
        const int same = found->kind == d->kind && PyDataType_ELSIZE(found) == PyDataType_ELSIZE(d);
        if (!same)
            PyErr_Format(PyExc_TypeError, "p must hold codes of one dtype, uint32 or uint64 (the dtype says the "
                         "format), got a sequence mixing %S and %S", (PyObject *)found, (PyObject *)d);
        Py_DECREF(found);
        if (!same)
            return -1;
    }
    return 0;
}

JM_FASTCALL_FUNCTION(unpack_quats) {
    static const char *const names[] = {"p"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("unpack_quats", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    PyObject *obj = slots[0];
    PyArrayObject *raw;
    if (jm_refuse_masked(obj, "p") < 0)
        return NULL;
    if (PyArray_Check(obj)) {
        Py_INCREF(obj);
        raw = (PyArrayObject *)obj;
    } else if (!(raw = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL))) {
        return NULL;
    }
    PyArray_Descr *d = PyArray_DESCR(raw);
    if (d->kind != 'u' || (PyDataType_ELSIZE(d) != 4 && PyDataType_ELSIZE(d) != 8)) {
        if (PyArray_Check(obj))
            PyErr_Format(PyExc_TypeError, "p must hold uint32 or uint64 codes (the codes of pack_quats), got an "
                         "array of dtype %S", (PyObject *)d);
        else if ((PyList_Check(obj) || PyTuple_Check(obj)) && PySequence_Size(obj) > 0)
            /* what was passed, not the dtype NumPy chose for it: a list of Python ints is no code array */
            PyErr_Format(PyExc_TypeError, "p must hold uint32 or uint64 codes (the codes of pack_quats), got a %s of "
                         "%s (NumPy reads it as %S); pass the array pack_quats returned, or "
                         "np.array(codes, np.uint32) or np.uint64",
                         jm_type_name(obj), jm_type_name(PySequence_Fast_GET_ITEM(obj, 0)), (PyObject *)d);
        else
            PyErr_Format(PyExc_TypeError, "p must hold uint32 or uint64 codes (the codes of pack_quats), got %s%s "
                         "(NumPy reads it as %S)", PyList_Check(obj) || PyTuple_Check(obj) ? "an empty " : "",
                         jm_type_name(obj), (PyObject *)d);
        Py_DECREF(raw);
        return NULL;
    }
    if ((PyList_Check(obj) || PyTuple_Check(obj)) && check_one_code_dtype(obj, d) < 0) {
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
    if (n)
        JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                         kernel(PyArray_DATA(codes), (float *)PyArray_DATA(q), (size_t)n));
    Py_DECREF(codes);
    return (PyObject *)q;
}

/* ----------------------------------------------------------------- joint records -- */

/* Records go through the contiguous kernels in chunks of this many, in buffers on the stack
   (6 KiB): the kernels' loads and stores stay contiguous, the records any stride. */
#define RECORD_CHUNK 256

/*
 * n JOINT_QUAT records (src + i * stride) -> n packed records of code_bytes (4 or 8) + 12 bytes
 * at dst (contiguous): the code of q by `kernel`, t[0..3) copied. Returns how many quaternions
 * could not be packed, the first one's index in *first_invalid. Fields are copied with memcpy:
 * a packed record's code and floats have no alignment.
 */
static size_t pack_records(jm_pack_kernel kernel, const char *src, ptrdiff_t stride, char *dst, size_t code_bytes,
                           size_t n, size_t *first_invalid) {
    float q[RECORD_CHUNK][4];
    uint64_t codes[RECORD_CHUNK]; /* uint32 or uint64 codes, packed one after another */
    const size_t record_bytes = code_bytes + 3 * sizeof(float);
    size_t invalid = 0;
    for (size_t i = 0; i < n; i += RECORD_CHUNK) {
        const size_t m = n - i < RECORD_CHUNK ? n - i : RECORD_CHUNK;
        for (size_t k = 0; k < m; k++)
            memcpy(q[k], src + (ptrdiff_t)(i + k) * stride + offsetof(jm_joint_quat, q), sizeof q[k]);
        size_t first;
        const size_t bad = kernel(&q[0][0], codes, m, &first);
        if (bad && !invalid)
            *first_invalid = i + first;
        invalid += bad;
        for (size_t k = 0; k < m; k++) {
            char *record = dst + (i + k) * record_bytes;
            memcpy(record, (const char *)codes + k * code_bytes, code_bytes);
            memcpy(record + code_bytes, src + (ptrdiff_t)(i + k) * stride + offsetof(jm_joint_quat, t),
                   3 * sizeof(float));
        }
    }
    return invalid;
}

/* n packed records (code_bytes + 12 bytes each, src + i * stride) -> n JOINT_QUAT records at dst
   (contiguous): q decoded by `kernel`, t[0..3) copied, t[3] = 0. */
static void unpack_records(jm_unpack_kernel kernel, const char *src, ptrdiff_t stride, size_t code_bytes, char *dst,
                           size_t n) {
    float q[RECORD_CHUNK][4];
    uint64_t codes[RECORD_CHUNK];
    for (size_t i = 0; i < n; i += RECORD_CHUNK) {
        const size_t m = n - i < RECORD_CHUNK ? n - i : RECORD_CHUNK;
        for (size_t k = 0; k < m; k++)
            memcpy((char *)codes + k * code_bytes, src + (ptrdiff_t)(i + k) * stride, code_bytes);
        kernel(codes, &q[0][0], m);
        for (size_t k = 0; k < m; k++) {
            jm_joint_quat joint = {{0}, {0}};
            memcpy(joint.q, q[k], sizeof joint.q);
            memcpy(joint.t, src + (ptrdiff_t)(i + k) * stride + code_bytes, 3 * sizeof(float));
            memcpy(dst + (i + k) * sizeof joint, &joint, sizeof joint);
        }
    }
}

PyDoc_STRVAR(pack_joints_doc,
             "pack_joints(joints, bits=10)\n--\n\n"
             "JOINT_QUAT records packed for compact storage.\n\n"
             "Parameters\n"
             "----------\n"
             "joints : ndarray of JOINT_QUAT\n"
             "    Any shape, or one record (a 0-d result).\n"
             "bits : {10, 20}, optional\n"
             "    10 (default): PACKED_JOINT records (16 bytes: ``q`` uint32 code, ``t`` float32[3]);\n"
             "    20: PACKED_JOINT64 (20 bytes, uint64 code).\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of PACKED_JOINT or PACKED_JOINT64\n"
             "    The same shape. The rotation is packed as by :func:`pack_quats`; the translation is\n"
             "    kept exactly.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For ``joints`` of another dtype.\n"
             "ValueError\n"
             "    For ``bits`` other than 10 or 20, zero or non-finite rotations (naming ``joints``: how\n"
             "    many, the index of the first), a result too large to allocate.\n\n"
             "See Also\n"
             "--------\n"
             "unpack_joints, pack_quats, load_packed\n\n"
             "Examples\n"
             "--------\n"
             ">>> import jointmath as jm\n"
             ">>> packed = jm.pack_joints(jm.make_joints([[0, 0, 0, 1]], [[1, 2, 3]]))\n"
             ">>> packed.dtype == jm.PACKED_JOINT, packed.dtype.itemsize, packed[\"t\"]\n"
             "(True, 16, array([[1., 2., 3.]], dtype=float32))");

JM_FASTCALL_FUNCTION(pack_joints) {
    static const char *const names[] = {"joints", "bits"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("pack_joints", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    PyArrayObject *joints = jm_record_operand(slots[0], "joints", jm_joint_quat_descr, NULL, "JOINT_QUAT"), *packed = NULL;
    if (!joints)
        return NULL;
    jm_walk src = {NULL, NULL, 0};
    const int code_type = parse_bits(slots[1]), ndim = PyArray_NDIM(joints);
    const npy_intp *shape = PyArray_DIMS(joints);
    if (code_type < 0)
        goto done;
    /* the result first: one too large to allocate says so before any copy of the records */
    PyArray_Descr *packed_descr = code_type == NPY_UINT32 ? jm_packed_joint_descr : jm_packed_joint64_descr;
    Py_INCREF(packed_descr);
    if (!(packed = jm_new_array_descr(ndim, shape, packed_descr)))
        goto done;
    if (jm_walk_records(joints, jm_joint_quat_descr, 0, sizeof(jm_joint_quat), ndim, shape, 0, &src) < 0) {
        Py_CLEAR(packed);
        goto done;
    }
    const size_t n = (size_t)PyArray_SIZE(joints);
    size_t first_invalid = 0;
    const int bits10 = code_type == NPY_UINT32;
    size_t invalid;
    JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                     invalid = pack_records(bits10 ? jm_active->pack_quats32 : jm_active->pack_quats64, src.base,
                                            src.stride, PyArray_BYTES(packed), bits10 ? 4 : 8, n, &first_invalid));
    if (invalid) {
        invalid_error("joints", invalid, first_invalid, ndim, shape);
        Py_CLEAR(packed);
    }
done:
    jm_walk_release(&src);
    Py_DECREF(joints);
    return (PyObject *)packed;
}

PyDoc_STRVAR(unpack_joints_doc,
             "unpack_joints(packed)\n--\n\n"
             "JOINT_QUAT records from the output of :func:`pack_joints`.\n\n"
             "Parameters\n"
             "----------\n"
             "packed : ndarray of PACKED_JOINT or PACKED_JOINT64\n"
             "    Any shape, or one record.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of JOINT_QUAT\n"
             "    The same shape: unit quaternions as by :func:`unpack_quats`, translations exact, the\n"
             "    4th translation lane 0.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For an array of another dtype.\n"
             "ValueError\n"
             "    For a result too large to allocate.\n\n"
             "See Also\n"
             "--------\n"
             "pack_joints\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> joints = jm.make_joints([[0, 0.6, 0, 0.8]], [[1, 2, 3]])\n"
             ">>> back = jm.unpack_joints(jm.pack_joints(joints))\n"
             ">>> np.round(back[\"q\"], 3) + 0.0, back[\"t\"]\n"
             "(array([[0. , 0.6, 0. , 0.8]], dtype=float32), array([[1., 2., 3., 0.]], dtype=float32))");

JM_FASTCALL_FUNCTION(unpack_joints) {
    static const char *const names[] = {"packed"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("unpack_joints", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    PyArrayObject *packed = jm_record_operand(slots[0], "packed", jm_packed_joint_descr, jm_packed_joint64_descr,
                                              "PACKED_JOINT or PACKED_JOINT64"),
                  *joints = NULL;
    if (!packed)
        return NULL;
    jm_walk src = {NULL, NULL, 0};
    const int bits10 = PyArray_ITEMSIZE(packed) == JM_PACKED_JOINT_BYTES, ndim = PyArray_NDIM(packed);
    const npy_intp *shape = PyArray_DIMS(packed);
    Py_INCREF(jm_joint_quat_descr); /* the result first, as in pack_joints */
    if (!(joints = jm_new_array_descr(ndim, shape, jm_joint_quat_descr)) ||
        jm_walk_records(packed, bits10 ? jm_packed_joint_descr : jm_packed_joint64_descr, 0, PyArray_ITEMSIZE(packed),
                        ndim, shape, 0, &src) < 0) {
        Py_CLEAR(joints);
        goto done;
    }
    const size_t n = (size_t)PyArray_SIZE(packed);
    JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                     unpack_records(bits10 ? jm_active->unpack_quats32 : jm_active->unpack_quats64, src.base,
                                    src.stride, bits10 ? 4 : 8, PyArray_BYTES(joints), n));
done:
    jm_walk_release(&src);
    Py_DECREF(packed);
    return (PyObject *)joints;
}

/* _pack_snorm16(q): jointmath.gltf's rotation codes. q: a float32 array of shape (..., 4), unit
   quaternions; returns int16 of the same shape, c = round(f * 32767) exactly (ties to even), the
   signed 16-bit normalized values of glTF 2.0 (jm_pack_snorm16, csrc/pack.c). A ValueError for
   zero or non-finite quaternions (how many, the first's index), a TypeError for another dtype. */
PyDoc_STRVAR(_pack_snorm16_doc, "_pack_snorm16(q)\n--\n\n"
                                "int16 codes round(f * 32767) of float32 unit quaternions (jointmath.gltf).");

JM_FASTCALL_FUNCTION(_pack_snorm16) {
    static const char *const names[] = {"q"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("_pack_snorm16", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    return pack_quat_operand(slots[0], NPY_INT16, 4, jm_active->pack_snorm16, NULL);
}

PyMethodDef jm_pack_methods[] = {
    JM_FASTCALL_METHOD(pack_quats),
    JM_FASTCALL_METHOD(unpack_quats),
    JM_FASTCALL_METHOD(pack_joints),
    JM_FASTCALL_METHOD(unpack_joints),
    JM_FASTCALL_METHOD(_pack_snorm16),
    {NULL, NULL, 0, NULL},
};
