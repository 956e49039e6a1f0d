/*
 * _extract.c - boundary of the rotation extraction kernels (csrc/extract.c): every argument of
 * extract_rotation is checked here (jointmath/_extract.py holds the docstring and the
 * keyword-only signature).
 */
#include "_core.h"

#include <math.h>
#include <string.h>

/* Names a Python object's type for error messages. */
#define TYPE_NAME(obj) (Py_TYPE(obj)->tp_name)

/*
 * How the kernel walks `arr` (batch dims == the call's batch shape, then `core_ndim` dims of
 * contiguous records of `record_bytes`): base and record stride. 1 when that works in place
 * (0-d or 1-d batch with any stride, or a C-contiguous array), else 0.
 */
static int batch_records(PyArrayObject *arr, int core_ndim, npy_intp record_bytes, int batch_ndim,
                         const npy_intp *batch, char **base, ptrdiff_t *stride) {
    const int ndim = PyArray_NDIM(arr);
    if (ndim != batch_ndim + core_ndim || !PyArray_CompareLists(PyArray_DIMS(arr), batch, batch_ndim))
        return 0;
    npy_intp inner = PyArray_ITEMSIZE(arr);
    for (int d = ndim - 1; d >= batch_ndim; d--) {
        if (PyArray_STRIDE(arr, d) != inner && PyArray_DIM(arr, d) > 1)
            return 0;
        inner *= PyArray_DIM(arr, d);
    }
    if (inner != record_bytes)
        return 0;
    *base = PyArray_BYTES(arr);
    *stride = batch_ndim == 1 ? PyArray_STRIDE(arr, 0) : record_bytes;
    if ((uintptr_t)*base % sizeof(float) || *stride % (ptrdiff_t)sizeof(float)) /* kernels read floats */
        return 0;
    return batch_ndim <= 1 || PyArray_IS_C_CONTIGUOUS(arr);
}

/* `arr` as records the kernel can walk: a new reference to arr itself, or to a C-ordered copy
   in `descr` broadcast to the batch shape. */
static PyArrayObject *as_batch_records(PyArrayObject *arr, PyArray_Descr *descr, int core_ndim, const npy_intp *core,
                                       npy_intp record_bytes, int batch_ndim, const npy_intp *batch, char **base,
                                       ptrdiff_t *stride) {
    if (PyArray_EquivTypes(PyArray_DESCR(arr), descr) &&
        batch_records(arr, core_ndim, record_bytes, batch_ndim, batch, base, stride)) {
        Py_INCREF(arr);
        return arr;
    }
    npy_intp shape[NPY_MAXDIMS];
    memcpy(shape, batch, batch_ndim * sizeof(npy_intp));
    if (core_ndim) /* records have no core dims (and core is NULL) */
        memcpy(shape + batch_ndim, core, core_ndim * sizeof(npy_intp));
    Py_INCREF(descr);
    PyArrayObject *copy =
        (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, batch_ndim + core_ndim, shape, NULL, NULL, 0, NULL);
    if (!copy || PyArray_CopyInto(copy, arr) < 0) {
        Py_XDECREF(copy);
        return NULL;
    }
    batch_records(copy, core_ndim, record_bytes, batch_ndim, batch, base, stride);
    return copy;
}

/* The same records walked the same way (out = q0 in place is fine: each block reads first). */
static int same_records(char *a_base, ptrdiff_t a_stride, char *b_base, ptrdiff_t b_stride) {
    return a_base == b_base && a_stride == b_stride;
}

#define MAX_ITER_LIMIT (1 << 24) /* iteration counts live in float lanes */

/*
 * _extract_rotation(a, q0, max_iter, tol, out, return_iterations, method):
 * jointmath.extract_rotation (jointmath/_extract.py holds the docstring and the keyword-only
 * signature). Every argument is checked here; float32 and JOINT_MAT input run the float32
 * kernels, float64 input the float64 kernel.
 */
static PyObject *extract_rotation(PyObject *const *slots);
static PyObject *extract_checked(PyObject *const *slots, PyArrayObject *a, int records, PyArrayObject *q0);

static PyObject *py_extract_rotation(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"a", "q0", "max_iter", "tol", "out", "return_iterations", "method"};
    PyObject *slots[7];
    if (jm_parse_args("extract_rotation", args, nargs, kwnames, names, 7, 3, slots) < 0)
        return NULL;
    if (!PyArray_IsScalar(slots[0], Void))
        return extract_rotation(slots);
    /* one record indexed out of a JOINT_MAT array: as a 0-d array */
    PyObject *record = (PyObject *)jm_record_array(slots[0], "a", jm_joint_mat_descr, "JOINT_MAT");
    if (!record)
        return NULL;
    slots[0] = record;
    PyObject *result = extract_rotation(slots);
    Py_DECREF(record);
    return result;
}

/* The checks and the float32 run of extract_rotation; slots as jm_parse_args filled them. */
static PyObject *extract_rotation(PyObject *const *slots) {
    PyObject *a_obj = slots[0], *q0_obj = slots[1] == Py_None ? NULL : slots[1];
    static const npy_intp mat_core[2] = {3, 3}, quat_core[1] = {4};

    /* a: JOINT_MAT records or an array_like (..., 3, 3); q0: an array_like (..., 4) whose batch
       shape broadcasts against a's (converted to a's dtype) */
    const int records = PyArray_Check(a_obj) && jm_joint_mat_descr &&
                        PyArray_EquivTypes(PyArray_DESCR((PyArrayObject *)a_obj), jm_joint_mat_descr);
    PyArrayObject *a = records ? (Py_INCREF(a_obj), (PyArrayObject *)a_obj) : jm_float_operand(a_obj, "a", 2, mat_core);
    if (!a)
        return NULL;
    PyArrayObject *q0 = NULL;
    if (q0_obj && !(q0 = jm_float_operand(q0_obj, "q0", 1, quat_core))) {
        Py_DECREF(a);
        return NULL;
    }
    PyObject *result_obj = extract_checked(slots, a, records, q0);
    Py_DECREF(a);
    Py_XDECREF(q0);
    return result_obj;
}

/* The rest of extract_rotation's checks and its run, on the converted a and q0. */
static PyObject *extract_checked(PyObject *const *slots, PyArrayObject *a, int records, PyArrayObject *q0) {
    PyObject *max_iter_obj = slots[2];
    PyObject *tol_obj = slots[3] == Py_None ? NULL : slots[3], *out_obj = slots[4] == Py_None ? NULL : slots[4];
    static const npy_intp mat_core[2] = {3, 3}, quat_core[1] = {4};
    const int type = records ? NPY_FLOAT32 : PyArray_TYPE(a);
    const int a_batch_ndim = PyArray_NDIM(a) - (records ? 0 : 2);
    int batch_ndim = a_batch_ndim;
    npy_intp batch[NPY_MAXDIMS + 1];
    if (a_batch_ndim) /* a 0-d array may have no dims pointer */
        memcpy(batch, PyArray_DIMS(a), a_batch_ndim * sizeof(npy_intp));
    if (q0) {
        if (jm_broadcast_shapes(a_batch_ndim, PyArray_DIMS(a), PyArray_NDIM(q0) - 1, PyArray_DIMS(q0), &batch_ndim,
                                batch) < 0 || batch_ndim > NPY_MAXDIMS - 2) {
            PyObject *qs = PyArray_IntTupleFromIntp(PyArray_NDIM(q0) - 1, PyArray_DIMS(q0));
            PyObject *as = PyArray_IntTupleFromIntp(a_batch_ndim, PyArray_DIMS(a));
            PyErr_Format(PyExc_ValueError, "q0 must broadcast against a: batch shapes %R and %R do not", qs, as);
            Py_XDECREF(qs);
            Py_XDECREF(as);
            return NULL;
        }
    }

    if (batch_ndim > NPY_MAXDIMS - 1) /* room for the (..., 4) of q0 and the result */
        return PyErr_Format(PyExc_ValueError, "a must have at most %d batch dimensions, got %d", NPY_MAXDIMS - 1,
                            batch_ndim);

    /* max_iter: an int in [0, 2^24]; tol: a real >= 0, finite (None: the dtype's default) */
    if (PyBool_Check(max_iter_obj) || !PyIndex_Check(max_iter_obj))
        return PyErr_Format(PyExc_TypeError, "max_iter must be an int, got %s", TYPE_NAME(max_iter_obj));
    const Py_ssize_t max_iter = PyNumber_AsSsize_t(max_iter_obj, NULL); /* clipped on overflow */
    if (max_iter == -1 && PyErr_Occurred())
        return NULL;
    if (max_iter < 0 || max_iter > MAX_ITER_LIMIT) /* the value as given, not as clipped */
        return PyErr_Format(PyExc_ValueError, "max_iter must be in [0, 2**24], got %R", max_iter_obj);
    double tol = type == NPY_FLOAT64 ? 1e-12 : 2e-7; /* the documented defaults */
    if (tol_obj) {
        if (PyBool_Check(tol_obj) || PyArray_IsScalar(tol_obj, Bool) ||
            !(PyFloat_Check(tol_obj) || PyLong_Check(tol_obj) || PyArray_IsScalar(tol_obj, Floating) ||
              PyArray_IsScalar(tol_obj, Integer)))
            return PyErr_Format(PyExc_TypeError, "tol must be a real number, got %s", TYPE_NAME(tol_obj));
        tol = PyFloat_AsDouble(tol_obj);
        if (tol == -1.0 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) /* an int too large for a double */
                return NULL;
            PyErr_Clear();
            tol = INFINITY;
        }
        if (!(tol >= 0 && tol <= 1e30)) /* NaN fails too */
            return PyErr_Format(PyExc_ValueError, "tol must be finite and >= 0, got %R", tol_obj);
    }
    const int return_iterations = slots[5] ? PyObject_IsTrue(slots[5]) : 0;
    if (return_iterations < 0)
        return NULL;
    /* method: "newton" (None too) or "muller" */
    PyObject *method_obj = slots[6] ? slots[6] : Py_None;
    int method = JM_EXTRACT_NEWTON;
    if (method_obj != Py_None) {
        if (!PyUnicode_Check(method_obj))
            return PyErr_Format(PyExc_TypeError, "method must be a str, got %s", TYPE_NAME(method_obj));
        if (PyUnicode_CompareWithASCIIString(method_obj, "muller") == 0)
            method = JM_EXTRACT_MULLER;
        else if (PyUnicode_CompareWithASCIIString(method_obj, "newton") != 0)
            return PyErr_Format(PyExc_ValueError, "method must be 'newton' or 'muller', got %R", method_obj);
    }

    /* out: exactly batch + (4,) in the result dtype */
    npy_intp out_shape[NPY_MAXDIMS];
    memcpy(out_shape, batch, batch_ndim * sizeof(npy_intp));
    out_shape[batch_ndim] = 4;
    PyArray_Descr *result_descr = PyArray_DescrFromType(type); /* borrowed: builtin descriptors live forever */
    Py_DECREF(result_descr);
    if (out_obj && jm_check_out(out_obj, result_descr, type == NPY_FLOAT32 ? "float32" : "float64", batch_ndim + 1,
                                out_shape) < 0)
        return NULL;
    PyArrayObject *out = (PyArrayObject *)out_obj;

    /* records the kernel walks (views when possible), the result, the counts */
    const npy_intp item = type == NPY_FLOAT64 ? 8 : 4, mat_bytes = 9 * item, quat_bytes = 4 * item;
    char *a_base, *q0_base = NULL, *out_base;
    ptrdiff_t a_stride, q0_stride = 0, out_stride;
    PyArrayObject *a_rec = records ? as_batch_records(a, jm_joint_mat_descr, 0, NULL, sizeof(jm_joint_mat), batch_ndim,
                                                      batch, &a_base, &a_stride)
                                   : as_batch_records(a, result_descr, 2, mat_core, mat_bytes, batch_ndim, batch, &a_base,
                                                      &a_stride);
    PyArrayObject *q0_rec = NULL, *result = NULL, *iterations = NULL;
    if (!a_rec)
        goto fail;
    if (q0 && !(q0_rec = as_batch_records(q0, result_descr, 1, quat_core, quat_bytes, batch_ndim, batch, &q0_base,
                                          &q0_stride)))
        goto fail;
    /* out directly when the kernel can walk it and it overlaps neither input (or is q0's very
       records: an in-place warm start) */
    if (out && batch_records(out, 1, quat_bytes, batch_ndim, batch, &out_base, &out_stride) && !jm_may_overlap(out, a_rec) &&
        (!q0_rec || same_records(out_base, out_stride, q0_base, q0_stride) || !jm_may_overlap(out, q0_rec))) {
        result = out;
        Py_INCREF(result);
    } else {
        result = (PyArrayObject *)PyArray_SimpleNew(batch_ndim + 1, out_shape, type);
        if (!result)
            goto fail;
        batch_records(result, 1, quat_bytes, batch_ndim, batch, &out_base, &out_stride);
    }
    if (return_iterations && !(iterations = (PyArrayObject *)PyArray_SimpleNew(batch_ndim, batch, NPY_INT32)))
        goto fail;
    const npy_intp n = PyArray_MultiplyList(batch, batch_ndim);
    jm_extract_job job = {
        .a = a_base,
        .a_stride = a_stride,
        .q0 = q0_base,
        .q0_stride = q0_stride,
        .out = out_base,
        .out_stride = out_stride,
        .iterations = iterations ? (int32_t *)PyArray_BYTES(iterations) : NULL,
        .iterations_stride = sizeof(int32_t),
        .n = (size_t)n,
        .max_iter = (int)max_iter,
        .tol = tol,
        .method = method,
    };
    jm_extract_kernel kernel = records                 ? jm_active->extract_mats
                               : type == NPY_FLOAT64 ? jm_active->extract_matrices_f64
                                                     : jm_active->extract_matrices;
    /* the work is up to max_iter + 1 conversions' worth per matrix: release the GIL by that */
    if (n) {
        PyThreadState *saved = jm_release_gil((double)n * ((double)max_iter + 1) >= 4.0 * GIL_RELEASE_MIN_RECORDS);
        kernel(&job);
        jm_restore_gil(saved);
    }
    Py_CLEAR(a_rec);
    Py_CLEAR(q0_rec);
    if (out && result != out) {
        if (PyArray_CopyInto(out, result) < 0)
            goto fail;
        Py_INCREF(out);
        Py_SETREF(result, out);
    }
    if (!return_iterations)
        return (PyObject *)result;
    return Py_BuildValue("NN", result, iterations);
fail:
    Py_XDECREF(a_rec);
    Py_XDECREF(q0_rec);
    Py_XDECREF(result);
    Py_XDECREF(iterations);
    return NULL;
}

PyMethodDef jm_extract_methods[] = {
    {"_extract_rotation", (PyCFunction)(void (*)(void))py_extract_rotation, METH_FASTCALL | METH_KEYWORDS,
     "Internal: jointmath.extract_rotation's checks and kernels."},
    {NULL, NULL, 0, NULL},
};
