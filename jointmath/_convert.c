/*
 * _convert.c - boundary of the conversion kernels (csrc/convert.c) on joint records:
 * joints_to_mats and mats_to_joints (the plain-array quat_to_matrix / matrix_to_quat are in
 * _arrays.c), and make_joints, which builds the records from plain arrays.
 */
#include "_core.h"

#include <string.h>

PyDoc_STRVAR(joints_to_mats_doc,
             "joints_to_mats(joints, out=None)\n--\n\n"
             "3x4 joint matrices of joint quaternions.\n\n"
             "Parameters\n"
             "----------\n"
             "joints : ndarray of JOINT_QUAT\n"
             "    Any shape (frames x joints ...).\n"
             "out : ndarray of JOINT_MAT, optional\n"
             "    A writeable array of the same shape to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of JOINT_MAT\n"
             "    The rotation part is the active matrix of ``q / |q|`` (``v' = R v``) for any finite\n"
             "    non-zero scale of ``q``, from 2**-149 to FLT_MAX; the translation goes to column 3. A\n"
             "    zero quaternion (or a NaN or infinite component) gives NaN rotation elements for that\n"
             "    joint only.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For ``joints`` or ``out`` of another dtype.\n"
             "ValueError\n"
             "    For an ``out`` of another shape or read-only, a result too large to allocate.\n\n"
             "See Also\n"
             "--------\n"
             "mats_to_joints, quat_to_matrix, forward_kinematics\n\n"
             "Notes\n"
             "-----\n"
             "Every path: max abs element error <= 5e-7.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> joints = jm.make_joints([0, 0, 0, 1], [1, 2, 3])\n"
             ">>> jm.joints_to_mats(joints)[\"m\"]\n"
             "array([[1., 0., 0., 1.],\n"
             "       [0., 1., 0., 2.],\n"
             "       [0., 0., 1., 3.]], dtype=float32)");

JM_FASTCALL_FUNCTION(joints_to_mats) {
    static const char *const names[] = {"joints", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("joints_to_mats", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    return jm_map_records(slots[0], "joints", jm_joint_quat_descr, "JOINT_QUAT", slots[1], jm_joint_mat_descr,
                       "jointmath.JOINT_MAT", jm_active->joints_to_mats);
}

PyDoc_STRVAR(mats_to_joints_doc,
             "mats_to_joints(mats, out=None)\n--\n\n"
             "Joint quaternions of 3x4 joint matrices.\n\n"
             "Parameters\n"
             "----------\n"
             "mats : ndarray of JOINT_MAT\n"
             "    Any shape.\n"
             "out : ndarray of JOINT_QUAT, optional\n"
             "    A writeable array of the same shape to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of JOINT_QUAT\n"
             "    The quaternion of the 3x3 part by the largest-divisor method (the component used as\n"
             "    divisor comes out positive), normalised; the matrix is not orthogonalised (see\n"
             "    :func:`extract_rotation` for that). The translation is copied from column 3, its 4th\n"
             "    lane set to 0.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For ``mats`` or ``out`` of another dtype.\n"
             "ValueError\n"
             "    For an ``out`` of another shape or read-only, a result too large to allocate.\n\n"
             "See Also\n"
             "--------\n"
             "joints_to_mats, matrix_to_quat\n\n"
             "Notes\n"
             "-----\n"
             "Every path, for rotation matrices: angle error <= 1e-6 rad, ``| |q| - 1 | <= 1e-6``.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> joints = jm.make_joints([[0, 0, 0, 1], [0, 0.6, 0, 0.8]], [[1, 2, 3], [4, 5, 6]])\n"
             ">>> back = jm.mats_to_joints(jm.joints_to_mats(joints))\n"
             ">>> np.round(back[\"q\"], 6) + 0.0, back[\"t\"]\n"
             "(array([[0. , 0. , 0. , 1. ],\n"
             "       [0. , 0.6, 0. , 0.8]], dtype=float32), array([[1., 2., 3., 0.],\n"
             "       [4., 5., 6., 0.]], dtype=float32))");

JM_FASTCALL_FUNCTION(mats_to_joints) {
    static const char *const names[] = {"mats", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("mats_to_joints", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    return jm_map_records(slots[0], "mats", jm_joint_mat_descr, "JOINT_MAT", slots[1], jm_joint_quat_descr,
                       "jointmath.JOINT_QUAT", jm_active->mats_to_joints);
}

/* n JOINT_QUAT records at dst (contiguous) from float[4] q (q + i * qs) and float[3] t (t + i *
   ts; NULL: zero); t[3] = 0. memcpy: the sources may be any float-aligned records. */
static void fill_joints(const char *q, ptrdiff_t qs, const char *t, ptrdiff_t ts, char *dst, size_t n) {
    for (size_t i = 0; i < n; i++) {
        jm_joint_quat joint = {{0}, {0}};
        memcpy(joint.q, q + (ptrdiff_t)i * qs, sizeof joint.q);
        if (t)
            memcpy(joint.t, t + (ptrdiff_t)i * ts, 3 * sizeof(float));
        memcpy(dst + i * sizeof joint, &joint, sizeof joint);
    }
}

PyDoc_STRVAR(make_joints_doc,
             "make_joints(q, t=None)\n--\n\n"
             "A JOINT_QUAT array from quaternions and translations.\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)``, stored as given (not normalised).\n"
             "t : array_like, shape (..., 3), optional\n"
             "    Translations, shape ``q.shape[:-1] + (3,)``; zero by default.\n\n"
             "Both are array_like of real numbers (any float size, integers, bools, any byte order or\n"
             "strides), converted to float32, each value rounded once as NumPy's assignment casts.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of JOINT_QUAT, shape q.shape[:-1]\n"
             "    ``q`` of shape (4,) gives a 0-d array of one record.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming the argument).\n"
             "ValueError\n"
             "    For wrong shapes, a result too large to allocate (saying how large).\n\n"
             "See Also\n"
             "--------\n"
             "translations\n\n"
             "Examples\n"
             "--------\n"
             ">>> import jointmath as jm\n"
             ">>> joints = jm.make_joints([[0, 0, 0, 1], [0, 0, 1, 0]], t=[[0, 1, 0], [0, 2, 0]])\n"
             ">>> joints.shape, joints.dtype == jm.JOINT_QUAT\n"
             "((2,), True)\n"
             ">>> joints[\"t\"]\n"
             "array([[0., 1., 0., 0.],\n"
             "       [0., 2., 0., 0.]], dtype=float32)");

JM_FASTCALL_FUNCTION(make_joints) {
    static const npy_intp quat_core[1] = {4};
    static const char *const names[] = {"q", "t"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("make_joints", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    if (!jm_joint_quat_descr)
        return PyErr_Format(PyExc_RuntimeError, "jointmath record dtypes are not registered");
    PyArrayObject *q = jm_real_array(slots[0], "q", 1, quat_core), *t = NULL, *joints = NULL;
    if (!q)
        return NULL;
    jm_walk wq = {NULL, NULL, 0}, wt = {NULL, NULL, 0};
    const int batch_ndim = PyArray_NDIM(q) - 1;
    npy_intp shape[NPY_MAXDIMS];
    if (batch_ndim) /* q of shape (4,) makes one record: a 0-d result */
        memcpy(shape, PyArray_DIMS(q), batch_ndim * sizeof(npy_intp));
    shape[batch_ndim] = 3;
    Py_INCREF(jm_joint_quat_descr);
    if (!(joints = jm_new_array_descr(batch_ndim, shape, jm_joint_quat_descr)))
        goto done;
    if (slots[1] && slots[1] != Py_None &&
        (!(t = jm_real_array(slots[1], "t", 0, NULL)) || jm_require_shape(t, batch_ndim + 1, shape, "t must have shape") < 0))
        goto fail;
    if (jm_walk_operand(q, NPY_FLOAT32, 1, 4 * sizeof(float), batch_ndim, shape, 0, &wq) < 0 ||
        (t && jm_walk_operand(t, NPY_FLOAT32, 1, 3 * sizeof(float), batch_ndim, shape, 0, &wt) < 0))
        goto fail;
    const size_t n = (size_t)PyArray_SIZE(joints);
    JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                     fill_joints(wq.base, wq.stride, t ? wt.base : NULL, wt.stride, PyArray_BYTES(joints), n));
    goto done;
fail:
    Py_CLEAR(joints);
done:
    jm_walk_release(&wq);
    jm_walk_release(&wt);
    Py_DECREF(q);
    Py_XDECREF(t);
    return (PyObject *)joints;
}

PyMethodDef jm_convert_methods[] = {
    JM_FASTCALL_METHOD(joints_to_mats),
    JM_FASTCALL_METHOD(mats_to_joints),
    JM_FASTCALL_METHOD(make_joints),
    {NULL, NULL, 0, NULL},
};
