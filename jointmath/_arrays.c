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
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)``. float32 (and float16) compute in float32; float64,\n"
             "    integers and bools in float64 (NumPy's ufunc rules). Need not be unit: the rotation\n"
             "    of ``q / |q|`` is returned for any finite non-zero scale (float32 2**-149 ... FLT_MAX,\n"
             "    float64 2**-1074 ... DBL_MAX).\n"
             "out : ndarray, shape (..., 3, 3), optional\n"
             "    A writeable array of the result dtype to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 3, 3)\n"
             "    The active rotation matrices (``v' = R v``, as scipy's ``Rotation.as_matrix``). A zero\n"
             "    quaternion, or a NaN or infinite component, gives NaN in its own matrix.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming ``q``) and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "matrix_to_quat, joints_to_mats\n\n"
             "Notes\n"
             "-----\n"
             "float32, every path: max abs element error <= 5e-7 at any scale (2.5e-7 measured).\n"
             "float64: <= 1e-15 (4.5e-16 measured for unit quaternions). Domain: any finite non-zero\n"
             "quaternion; a zero one or a NaN or infinite component gives NaN, on every path.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> q = [0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)]          # 90 degrees about z\n"
             ">>> np.round(jm.quat_to_matrix(q), 6) + 0.0\n"
             "array([[ 0., -1.,  0.],\n"
             "       [ 1.,  0.,  0.],\n"
             "       [ 0.,  0.,  1.]])\n"
             ">>> jm.quat_to_matrix(np.zeros((120, 31, 4), np.float32) + [0, 0, 0, 2]).shape\n"
             "(120, 31, 3, 3)");

JM_FASTCALL_FUNCTION(quat_to_matrix) {
    static const char *const names[] = {"q", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("quat_to_matrix", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    return map_floats("q", slots[0], slots[1], 1, quat_core, 2, matrix_core,
                      jm_active->quats_to_matrices, jm_active->quats_to_matrices_f64);
}

PyDoc_STRVAR(matrix_to_quat_doc,
             "matrix_to_quat(m, out=None)\n--\n\n"
             "Unit quaternions of rotation matrices.\n\n"
             "The largest-divisor method: the component of largest magnitude is computed from the\n"
             "diagonal (four cases chosen per lane, without branches) and comes out positive; ``q`` and\n"
             "``-q`` are the same rotation and this picks one.\n\n"
             "Parameters\n"
             "----------\n"
             "m : array_like, shape (..., 3, 3)\n"
             "    Rotation matrices (``v' = R v``); dtypes as :func:`quat_to_matrix`. The matrix is not\n"
             "    orthogonalised: a non-rotation (a scaled rotation ``c R`` included) gives the\n"
             "    normalised quaternion of the formula, not the closest rotation (see\n"
             "    :func:`extract_rotation` for that).\n"
             "out : ndarray, shape (..., 4), optional\n"
             "    A writeable array of the result dtype to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 4)\n"
             "    Unit quaternions ``(x, y, z, w)``.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming ``m``) and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 3, 3), an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_to_matrix, mats_to_joints, extract_rotation\n\n"
             "Notes\n"
             "-----\n"
             "float32, every path, for rotation matrices: rotation angle error <= 1e-6 rad and\n"
             "``| |q| - 1 | <= 1e-6``, 180-degree rotations included. float64: <= 2e-15 rad and\n"
             "``| |q| - 1 | <= 1e-15``.\n\n"
             "Domain: rotation matrices. Outside it, a finite matrix whose sums ``1 +- r00 +- r11 +-\n"
             "r22`` and off-diagonal sums stay finite (elements below about 1e38 in float32) gives the\n"
             "unit quaternion of the formula; NaN or infinite elements, or sums that overflow, give\n"
             "NaN in all four components, on every path.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> m = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]                     # 90 degrees about z\n"
             ">>> np.round(jm.matrix_to_quat(m), 6) + 0.0\n"
             "array([0.      , 0.      , 0.707107, 0.707107])\n"
             ">>> np.round(jm.matrix_to_quat(np.diag([1.0, -1.0, -1.0])), 6) + 0.0   # half turn about x\n"
             "array([1., 0., 0., 0.])");

JM_FASTCALL_FUNCTION(matrix_to_quat) {
    static const char *const names[] = {"m", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("matrix_to_quat", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
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
             "Quaternions with signs flipped so that neighbours along an axis lie on one hemisphere.\n\n"
             "``q`` and ``-q`` are the same rotation; exporters emit either, and interpolating, averaging\n"
             "or differencing neighbours of opposite sign takes the long way round. Each quaternion\n"
             "after the first along ``axis`` is negated where its dot product with the one before\n"
             "(as returned) is negative, so that ``q[i] . q[i-1] >= 0``.\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions of any finite scale. float32 stays float32; float64, integers and bools\n"
             "    compute in float64.\n"
             "axis : int, optional\n"
             "    The time axis, a leading axis of ``q`` (default 0). The last axis holds the\n"
             "    components and is refused.\n"
             "prev : array_like, optional\n"
             "    Quaternions of the frame before the first (``q``'s shape without ``axis``, e.g. the\n"
             "    last frame of the previous chunk): the first frame is aligned to it too, so a long\n"
             "    clip can be processed in pieces.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray\n"
             "    A new array of ``q``'s shape and the result dtype; ``q`` is not modified.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input and non-integer ``axis``.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), ``axis`` out of range or the last axis, a ``prev``\n"
             "    of another shape.\n\n"
             "Notes\n"
             "-----\n"
             "Exact: only signs change (a dot product of 0 or NaN keeps the sign). One pass in C,\n"
             "float32 and float64.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> q = np.array([[0, 0, 0, 1], [0, 0, 0.1, -0.995], [0, 0, 0.2, -0.98]], np.float32)\n"
             ">>> jm.make_continuous(q)\n"
             "array([[ 0.   ,  0.   ,  0.   ,  1.   ],\n"
             "       [-0.   , -0.   , -0.1  ,  0.995],\n"
             "       [-0.   , -0.   , -0.2  ,  0.98 ]], dtype=float32)\n\n"
             "A clip in two chunks, the second aligned to the end of the first:\n\n"
             ">>> first = jm.make_continuous(q[:2])\n"
             ">>> bool((jm.make_continuous(q[2:], 0, prev=first[-1]) == jm.make_continuous(q)[2:]).all())\n"
             "True");

JM_FASTCALL_FUNCTION(make_continuous) {
    static const char *const names[] = {"q", "axis", "prev"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("make_continuous", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
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
        else if (ndim == 2)
            PyErr_Format(PyExc_ValueError,
                         "axis must be 0 or -2 (the time axis) for q of shape %R, got axis=%zd; the last axis "
                         "(-1) holds the 4 components",
                         shape, axis);
        else if (ndim == 3)
            PyErr_Format(PyExc_ValueError,
                         "axis must be 0, 1, -3 or -2 (the time axis: any axis but the last) for q of shape %R, got "
                         "axis=%zd; the last axis (-1) holds the 4 components",
                         shape, axis);
        else
            PyErr_Format(PyExc_ValueError,
                         "axis must be one of 0, 1, ..., %d or -%d, ..., -2 (the time axis: any axis but the last) "
                         "for q of shape %R, got axis=%zd; the last axis (-1) holds the 4 components",
                         ndim - 2, ndim, shape, axis);
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
        JM_RELEASING_GIL(n_frames * n_joints >= GIL_RELEASE_MIN_RECORDS,
                         kernel(PyArray_BYTES(src), PyArray_STRIDE(src, 0), q_js, PyArray_BYTES(result_moved),
                                PyArray_STRIDE(result_moved, 0), out_js, prev_run ? PyArray_BYTES(prev_run) : NULL,
                                prev_js, (size_t)n_frames, (size_t)n_joints));
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
    JM_FASTCALL_METHOD(quat_to_matrix),
    JM_FASTCALL_METHOD(matrix_to_quat),
    JM_FASTCALL_METHOD(make_continuous),
    {NULL, NULL, 0, NULL},
};
