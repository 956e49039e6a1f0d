/*
 * _arrays.c - boundary of the plain-array conversions quat_to_matrix / matrix_to_quat
 * (csrc/convert.c) and of make_continuous (csrc/continuity.c).
 *
 * Arguments are array_like as NumPy's ufuncs take them (jm_float_operand); float32 runs the
 * float32 kernels, float64 their float64 twins (the *_f64 fields); out= is checked first and
 * written directly when the kernel can walk it.
 */
#include "_core.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The product of n dims. */
static npy_intp product(const npy_intp *dims, int n) { return PyArray_MultiplyList((npy_intp *)dims, n); }

/*
 * A record-to-record kernel over the batch of `in_obj` (core dims in_core -> out_core): the body
 * of quat_to_matrix and matrix_to_quat.
 */
static PyObject *map_floats(const char *arg, PyObject *in_obj, PyObject *out_obj, int in_ncore,
                            const npy_intp *in_core, int out_ncore, const npy_intp *out_core, jm_map_kernel k32,
                            jm_map_kernel k64) {
    PyArrayObject *a = jm_float_operand(in_obj, arg, in_ncore, in_core), *out;
    if (!a)
        return NULL;
    jm_walk src = {NULL, NULL, 0}, dst = {NULL, NULL, 0};
    PyObject *result = NULL;
    const int type = PyArray_TYPE(a), batch_ndim = PyArray_NDIM(a) - in_ncore, ndim = batch_ndim + out_ncore;
    const npy_intp esize = PyArray_ITEMSIZE(a);
    npy_intp shape[NPY_MAXDIMS], in_bytes = esize * product(in_core, in_ncore);
    if (ndim > NPY_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "%s has %d dimensions; at most %d fit the result", arg, PyArray_NDIM(a),
                     NPY_MAXDIMS - out_ncore + in_ncore);
        goto done;
    }
    memcpy(shape, PyArray_DIMS(a), batch_ndim * sizeof(npy_intp));
    memcpy(shape + batch_ndim, out_core, out_ncore * sizeof(npy_intp));
    if (jm_float_out(out_obj, type, ndim, shape, &out) < 0 ||
        jm_walk_operand(a, type, in_ncore, in_bytes, batch_ndim, shape, 0, &src) < 0 ||
        jm_walk_output(out, type, ndim, shape, batch_ndim, esize * product(out_core, out_ncore), 0, &src, &in_bytes,
                       1, &dst) < 0)
        goto done;
    const npy_intp n = product(shape, batch_ndim);
    jm_map_kernel kernel = type == NPY_FLOAT32 ? k32 : k64;
    if (n)
        jm_run_kernel(kernel, src.base, src.stride, dst.base, dst.stride, (size_t)n);
    result = jm_output_result(out, &dst);
done:
    jm_walk_release(&src);
    jm_walk_release(&dst);
    Py_DECREF(a);
    return result;
}

static const npy_intp quat_core[1] = {4}, matrix_core[2] = {3, 3};

PyDoc_STRVAR(quat_to_matrix_doc,
             "quat_to_matrix(q, out=None)\n--\n\n"
             "Rotation matrices of quaternions.\n\n"
             "q: array_like (..., 4), components (x, y, z, w); float32 (and float16) compute in\n"
             "float32, float64, integers and bools in float64 (NumPy's ufunc rules). q need not\n"
             "be unit length: the rotation of q / |q| is returned for any finite non-zero scale\n"
             "(float32 2^-149 ... FLT_MAX, float64 2^-1074 ... DBL_MAX); a zero quaternion, or a\n"
             "NaN or infinite component, gives NaN in its own matrix.\n"
             "out: optional writeable array (..., 3, 3) of the result dtype; it is returned.\n\n"
             "Returns the active rotation matrices (v' = R v, scipy's Rotation.as_matrix),\n"
             "(..., 3, 3). float32 runs the SIMD kernel: max abs element error <= 5e-7 at any\n"
             "scale (2.5e-7 measured, benchmarks/convert_numerics.py).\n\n"
             "Raises TypeError for complex, object or string input (naming q) and a bad out\n"
             "dtype, ValueError for a shape not (..., 4) and a bad out shape or read-only out.");

static PyObject *py_quat_to_matrix(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"q", "out"};
    PyObject *slots[2];
    if (jm_parse_args("quat_to_matrix", args, nargs, kwnames, names, 2, 1, slots) < 0)
        return NULL;
    return map_floats("q", slots[0], slots[1], 1, quat_core, 2, matrix_core,
                      jm_active->quats_to_matrices, jm_active->quats_to_matrices_f64);
}

PyDoc_STRVAR(matrix_to_quat_doc,
             "matrix_to_quat(m, out=None)\n--\n\n"
             "Unit quaternions of rotation matrices.\n\n"
             "m: array_like (..., 3, 3) of rotation matrices (v' = R v); dtypes as quat_to_matrix.\n"
             "out: optional writeable array (..., 4) of the result dtype; it is returned.\n\n"
             "Returns (..., 4) unit quaternions (x, y, z, w), by the largest-divisor method: the\n"
             "component with the largest magnitude is computed from the diagonal and comes out\n"
             "positive (q and -q are the same rotation; this picks one). The matrix is NOT\n"
             "orthogonalised: a non-rotation input (a scaled rotation c R included) gives the\n"
             "normalised quaternion of this formula, not the closest rotation (use\n"
             "extract_rotation for that). float32 accuracy for rotation matrices: rotation angle\n"
             "error <= 1e-6 rad and | |q| - 1 | <= 1e-6, including 180-degree rotations.");

static PyObject *py_matrix_to_quat(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"m", "out"};
    PyObject *slots[2];
    if (jm_parse_args("matrix_to_quat", args, nargs, kwnames, names, 2, 1, slots) < 0)
        return NULL;
    return map_floats("m", slots[0], slots[1], 2, matrix_core, 1, quat_core,
                      jm_active->matrices_to_quats, jm_active->matrices_to_quats_f64);
}

/* ------------------------------------------------------------------ make_continuous -- */

/*
 * Whether the quaternions of `a` (last dim 4, contiguous floats) over the dims [from, ndim - 1)
 * are one run of joints at a single stride; sets *js (unit dims are skipped).
 */
static int joint_run(PyArrayObject *a, int from, ptrdiff_t *js) {
    const int ndim = PyArray_NDIM(a);
    if (PyArray_STRIDE(a, ndim - 1) != (npy_intp)PyArray_ITEMSIZE(a))
        return 0;
    ptrdiff_t stride = 4 * PyArray_ITEMSIZE(a);
    npy_intp span = 1;
    for (int d = ndim - 2; d >= from; d--) {
        if (PyArray_DIM(a, d) == 1)
            continue;
        if (span == 1)
            stride = PyArray_STRIDE(a, d);
        else if (PyArray_STRIDE(a, d) != stride * span)
            return 0;
        span *= PyArray_DIM(a, d);
    }
    *js = stride;
    return 1;
}

/* See _core.h. */
PyArrayObject *jm_quats_in_float32_range(PyArrayObject *quats) {
    PyArrayObject *scaled = (PyArrayObject *)PyArray_FROMANY((PyObject *)quats, NPY_FLOAT64, 0, 0,
                                                            NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY);
    if (!scaled)
        return NULL;
    double *v = (double *)PyArray_DATA(scaled);
    for (npy_intp i = 0, n = PyArray_SIZE(scaled) / 4; i < n; i++, v += 4) {
        const double largest = fmax(fmax(fabs(v[0]), fabs(v[1])), fmax(fabs(v[2]), fabs(v[3])));
        int exponent;
        if (!(largest > 0 && largest <= DBL_MAX)) /* zero, inf or NaN: as they are */
            continue;
        frexp(largest, &exponent);
        for (int k = 0; k < 4; k++)
            v[k] = ldexp(v[k], -exponent);
    }
    return scaled;
}

/* `a` (new reference) when joint_run holds for it, else a C-ordered copy in `type`. */
static PyArrayObject *as_joint_run(PyArrayObject *a, int type, int from, ptrdiff_t *js) {
    if (PyArray_TYPE(a) == type && joint_run(a, from, js)) {
        Py_INCREF(a);
        return a;
    }
    PyArrayObject *copy = jm_new_array(PyArray_NDIM(a), PyArray_DIMS(a), type);
    if (!copy || PyArray_CopyInto(copy, a) < 0) {
        Py_XDECREF(copy);
        return NULL;
    }
    joint_run(copy, from, js);
    return copy;
}

PyDoc_STRVAR(make_continuous_doc,
             "make_continuous(q, axis=0, prev=None)\n--\n\n"
             "Quaternions with signs flipped so that neighbours along `axis` have\n"
             "q[i] . q[i-1] >= 0.\n\n"
             "q and -q are the same rotation; exporters emit either at random, and interpolating\n"
             "between neighbours of opposite sign takes the long way round.\n"
             "q: array_like (..., 4) (float32 stays float32; float64, integers: float64).\n"
             "axis: the time axis, a leading axis of q (never the last one, which holds the\n"
             "components: ValueError).\n"
             "prev: optional quaternions of the frame before the first (q's shape without `axis`,\n"
             "e.g. the last frame of the previous chunk), so a long clip can be processed in\n"
             "pieces: the first frame is then aligned to prev too.\n\n"
             "Returns a new array of q's shape and result dtype; q is not modified. Exact: only\n"
             "signs change (a dot product of 0 or NaN keeps the sign). Quaternions of any finite\n"
             "size (a dot product beyond float32's or float64's range is taken again in double\n"
             "or scaled). One pass in C (csrc/continuity.c), float32 and float64.");

static PyObject *py_make_continuous(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"q", "axis", "prev"};
    PyObject *slots[3];
    if (jm_parse_args("make_continuous", args, nargs, kwnames, names, 3, 1, slots) < 0)
        return NULL;
    PyArrayObject *q = jm_float_operand(slots[0], "q", 1, quat_core);
    if (!q)
        return NULL;
    PyArrayObject *moved = NULL, *src = NULL, *prev = NULL, *prev_run = NULL, *result = NULL, *result_moved = NULL;
    PyObject *ret = NULL;
    const int ndim = PyArray_NDIM(q), type = PyArray_TYPE(q);

    /* axis: an int naming a leading axis */
    Py_ssize_t axis = 0;
    if (slots[1] && jm_parse_int(slots[1], "axis", &axis) < 0) /* None too: "got NoneType" */
        goto done;
    /* counted as NumPy counts axes of q: -1 is the component axis, never the time axis */
    if (axis < -ndim || axis > ndim - 2 || axis == -1) {
        PyObject *shape = PyArray_IntTupleFromIntp(ndim, PyArray_DIMS(q));
        if (ndim < 2) /* no leading axis at all: one quaternion */
            PyErr_Format(PyExc_ValueError, "make_continuous needs q with a time axis before the components, shape "
                         "(frames, ..., 4), got q of shape %R", shape);
        else
            PyErr_Format(PyExc_ValueError,
                         "axis must name a leading axis of q (the time axis: 0 ... %d or -%d ... -2; axis -1 holds "
                         "the components), got axis=%zd for q of shape %R",
                         ndim - 2, ndim, axis, shape);
        Py_XDECREF(shape);
        goto done;
    }
    if (axis < 0)
        axis += ndim;

    /* the time axis first: frames x joints (the other leading dims) x 4 */
    PyArray_Dims perm;
    npy_intp order[NPY_MAXDIMS];
    perm.ptr = order;
    perm.len = ndim;
    order[0] = axis;
    for (int d = 0, k = 1; d < ndim; d++)
        if (d != axis)
            order[k++] = d;
    if (!(moved = (PyArrayObject *)PyArray_Transpose(q, &perm)))
        goto done;
    const npy_intp n_frames = PyArray_DIM(moved, 0);
    const npy_intp n_joints = PyArray_SIZE(moved) / 4 / (n_frames ? n_frames : 1);
    ptrdiff_t q_js, prev_js = 0, out_js;
    if (!(src = as_joint_run(moved, type, 1, &q_js)))
        goto done;

    if (slots[2] && slots[2] != Py_None) {
        if (!(prev = jm_float_operand(slots[2], "prev", 1, quat_core)))
            goto done;
        if (PyArray_NDIM(prev) != ndim - 1 || !PyArray_CompareLists(PyArray_DIMS(prev), PyArray_DIMS(moved) + 1, ndim - 1)) {
            PyObject *want = PyArray_IntTupleFromIntp(ndim - 1, PyArray_DIMS(moved) + 1);
            PyObject *got = PyArray_IntTupleFromIntp(PyArray_NDIM(prev), PyArray_DIMS(prev));
            PyErr_Format(PyExc_ValueError, "prev must have shape %R (q's without axis %zd), got shape %R", want, axis,
                         got);
            Py_XDECREF(want);
            Py_XDECREF(got);
            goto done;
        }
        if (PyArray_TYPE(prev) == NPY_FLOAT64 && type == NPY_FLOAT32) {
            PyArrayObject *scaled = jm_quats_in_float32_range(prev);
            Py_SETREF(prev, scaled);
            if (!prev)
                goto done;
        }
        if (!(prev_run = as_joint_run(prev, type, 0, &prev_js)))
            goto done;
    }

    /* the result in q's own order when its frames x joints view is one run of joints (axis 0,
       or one other leading dim), else in time-first order, returned as a view in q's order */
    if (!(result = jm_new_array(ndim, PyArray_DIMS(q), type)) ||
        !(result_moved = (PyArrayObject *)PyArray_Transpose(result, &perm)))
        goto done;
    if (!joint_run(result_moved, 1, &out_js)) {
        Py_SETREF(result_moved, jm_new_array(ndim, PyArray_DIMS(moved), type));
        if (!result_moved)
            goto done;
        npy_intp inverse[NPY_MAXDIMS];
        for (int d = 0; d < ndim; d++)
            inverse[order[d]] = d;
        perm.ptr = inverse;
        Py_SETREF(result, (PyArrayObject *)PyArray_Transpose(result_moved, &perm));
        if (!result)
            goto done;
        joint_run(result_moved, 1, &out_js);
    }
    if (n_frames && n_joints) {
        jm_continuity_kernel kernel = type == NPY_FLOAT32 ? jm_active->make_continuous : jm_active->make_continuous_f64;
        PyThreadState *saved = jm_release_gil(n_frames * n_joints >= GIL_RELEASE_MIN_RECORDS);
        kernel(PyArray_BYTES(src), PyArray_STRIDE(src, 0), q_js, PyArray_BYTES(result_moved),
               PyArray_STRIDE(result_moved, 0), out_js, prev_run ? PyArray_BYTES(prev_run) : NULL, prev_js,
               (size_t)n_frames, (size_t)n_joints);
        jm_restore_gil(saved);
    }
    ret = (PyObject *)result;
    result = NULL;
done:
    Py_DECREF(q);
    Py_XDECREF(moved);
    Py_XDECREF(src);
    Py_XDECREF(prev);
    Py_XDECREF(prev_run);
    Py_XDECREF(result);
    Py_XDECREF(result_moved);
    return ret;
}

PyMethodDef jm_arrays_methods[] = {
    {"quat_to_matrix", (PyCFunction)(void (*)(void))py_quat_to_matrix, METH_FASTCALL | METH_KEYWORDS,
     quat_to_matrix_doc},
    {"matrix_to_quat", (PyCFunction)(void (*)(void))py_matrix_to_quat, METH_FASTCALL | METH_KEYWORDS,
     matrix_to_quat_doc},
    {"make_continuous", (PyCFunction)(void (*)(void))py_make_continuous, METH_FASTCALL | METH_KEYWORDS,
     make_continuous_doc},
    {NULL, NULL, 0, NULL},
};
