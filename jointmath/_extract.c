/*
 * _extract.c - boundary of the rotation extraction kernels (csrc/extract.c): every argument of
 * extract_rotation is checked here (jointmath/_extract.py holds the docstring and the
 * keyword-only signature).
 */
#include "_core.h"

#include <string.h>

#define MAX_ITER_LIMIT (1 << 24) /* iteration counts live in float lanes */

/*
 * _extract_rotation(a, q0, max_iter, tol, out, return_iterations, method):
 * jointmath.extract_rotation (jointmath/_extract.py holds the docstring and the keyword-only
 * signature). Every argument is checked here; float32 and JOINT_MAT input run the float32
 * kernels, float64 input the float64 kernel.
 */
static PyObject *extract_rotation(PyObject *const *slots);
static PyObject *extract_checked(PyObject *const *slots, PyArrayObject *a, int records, PyArrayObject *q0);

JM_FASTCALL_FUNCTION(extract_rotation) {
    static const char *const names[] = {"a", "q0", "max_iter", "tol", "out", "return_iterations", "method"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("extract_rotation", args, nargs, kwnames, names, JM_COUNT(names), 3, slots) < 0)
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
    if (jm_refuse_masked(a_obj, "a") < 0)
        return NULL;

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
    /* a float64 q0 for float32 a: only its direction counts, scaled into float32's range first */
    if (q0 && (records || PyArray_TYPE(a) == NPY_FLOAT32) && PyArray_TYPE(q0) == NPY_FLOAT64) {
        Py_SETREF(q0, jm_quats_in_float32_range(q0));
        if (!q0) {
            Py_DECREF(a);
            return NULL;
        }
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
    Py_ssize_t max_iter;
    if (jm_parse_int(max_iter_obj, "max_iter", &max_iter) < 0)
        return NULL;
    if (max_iter < 0 || max_iter > MAX_ITER_LIMIT) /* the value as given, not as clipped */
        return PyErr_Format(PyExc_ValueError, "max_iter must be in [0, 2**24], got %R", max_iter_obj);
    double tol = type == NPY_FLOAT64 ? 1e-12 : 2e-7; /* the documented defaults */
    if (tol_obj) {
        if (jm_parse_real(tol_obj, "tol", "a real number", &tol) < 0)
            return NULL;
        if (!(tol >= 0 && tol <= 1e30)) /* NaN fails too */
            return PyErr_Format(PyExc_ValueError, "tol must be in [0, 1e30], got %R", tol_obj);
    }
    const int return_iterations = slots[5] ? jm_parse_flag(slots[5], "return_iterations") : 0;
    if (return_iterations < 0)
        return NULL;
    /* method: "newton" (the default when not passed) or "muller"; anything but a str (None
       too) is a TypeError */
    PyObject *method_obj = slots[6];
    int method = JM_EXTRACT_NEWTON;
    if (method_obj) {
        if (!PyUnicode_Check(method_obj))
            return PyErr_Format(PyExc_TypeError, "method must be a str, got %s", jm_type_name(method_obj));
        if (PyUnicode_CompareWithASCIIString(method_obj, "muller") == 0)
            method = JM_EXTRACT_MULLER;
        else if (PyUnicode_CompareWithASCIIString(method_obj, "newton") != 0)
            return PyErr_Format(PyExc_ValueError, "method must be 'newton' or 'muller', got %R", method_obj);
    }

    /* out: exactly batch + (4,) in the result dtype */
    npy_intp out_shape[NPY_MAXDIMS];
    if (batch_ndim) /* a 0-d batch may have no dims pointer */
        memcpy(out_shape, batch, batch_ndim * sizeof(npy_intp));
    out_shape[batch_ndim] = 4;
    PyArrayObject *out;
    if (jm_float_out(out_obj, type, batch_ndim + 1, out_shape, &out) < 0)
        return NULL;

    /* records the kernel walks (views when possible), the result, the counts */
    const npy_intp item = type == NPY_FLOAT64 ? 8 : 4, quat_bytes = 4 * item;
    const npy_intp record_bytes[2] = {records ? (npy_intp)sizeof(jm_joint_mat) : 9 * item, quat_bytes};
    jm_walk inputs[2] = {{NULL, NULL, 0}, {NULL, NULL, 0}}, dst = {NULL, NULL, 0};
    PyArrayObject *iterations = NULL;
    PyObject *result = NULL;
    if ((records ? jm_walk_records(a, jm_joint_mat_descr, 0, record_bytes[0], batch_ndim, batch, 0, &inputs[0])
                 : jm_walk_operand(a, type, 2, record_bytes[0], batch_ndim, batch, 0, &inputs[0])) < 0 ||
        (q0 && jm_walk_operand(q0, type, 1, quat_bytes, batch_ndim, batch, 0, &inputs[1]) < 0))
        goto done;
    /* out directly when the kernel can walk it and it overlaps neither input (or is q0's very
       records: an in-place warm start) */
    if (jm_walk_output(out, type, batch_ndim + 1, out_shape, batch_ndim, quat_bytes, 0, inputs, record_bytes,
                       q0 ? 2 : 1, &dst) < 0)
        goto done;
    if (return_iterations && !(iterations = jm_new_array(batch_ndim, batch, NPY_INT32)))
        goto done;
    const npy_intp n = PyArray_MultiplyList(batch, batch_ndim);
    jm_extract_job job = {
        .a = inputs[0].base,
        .a_stride = inputs[0].stride,
        .q0 = q0 ? inputs[1].base : NULL,
        .q0_stride = inputs[1].stride,
        .out = dst.base,
        .out_stride = dst.stride,
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
    if (n)
        JM_RELEASING_GIL((double)n * ((double)max_iter + 1) >= 4.0 * GIL_RELEASE_MIN_RECORDS, kernel(&job));
    result = jm_output_result(out, &dst);
    if (result && return_iterations) {
        /* the counts of one matrix: a NumPy scalar, as ufuncs return 0-d results */
        result = Py_BuildValue("NN", result, PyArray_Return(iterations));
        iterations = NULL;
    }
done:
    jm_walk_release(&inputs[0]);
    jm_walk_release(&inputs[1]);
    jm_walk_release(&dst);
    Py_XDECREF(iterations);
    return result;
}

PyMethodDef jm_extract_methods[] = {
    {"_extract_rotation", (PyCFunction)(void (*)(void))py_extract_rotation, METH_FASTCALL | METH_KEYWORDS,
     "Internal: jointmath.extract_rotation's checks and kernels."},
    {NULL, NULL, 0, NULL},
};
