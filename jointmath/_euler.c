/*
 * _euler.c - boundary of the Euler kernels (csrc/euler.c): euler_to_quat and quat_to_euler.
 * A single order runs here; a sequence of orders (one per joint) goes to the function that
 * jointmath/_euler.py registered (_by_order), which calls back here once per distinct order.
 */
#include "_core.h"

#include <string.h>

/* order: one of the six Tait-Bryan orders, uppercase (intrinsic) or lowercase (extrinsic); 1 if
   it is a str of that form (axes and intrinsic filled), else 0 (no error set). */
static int parse_order(PyObject *order, int axes[3], int *intrinsic) {
    if (!PyUnicode_Check(order) || PyUnicode_GET_LENGTH(order) != 3 || !PyUnicode_IS_ASCII(order))
        return 0;
    const char *s = (const char *)PyUnicode_DATA(order);
    const int upper = s[0] >= 'X' && s[0] <= 'Z';
    int seen = 0;
    for (int k = 0; k < 3; k++) {
        const char base = upper ? 'X' : 'x';
        if (s[k] < base || s[k] > base + 2 || (seen >> (s[k] - base)) & 1)
            return 0;
        seen |= 1 << (s[k] - base);
        axes[k] = s[k] - base;
    }
    *intrinsic = upper;
    return 1;
}

/* The body of both functions (to_quat: euler_to_quat). */
static PyObject *euler(const char *func, const char *arg, int to_quat, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames) {
    static const char *const angle_names[] = {"angles", "order", "degrees", "out"};
    static const char *const quat_names[] = {"q", "order", "degrees", "out"};
    static const npy_intp angle_core[1] = {3}, quat_core[1] = {4};
    _Static_assert(JM_COUNT(angle_names) == JM_COUNT(quat_names), "the two directions take the same arguments");
    PyObject *slots[JM_COUNT(angle_names)];
    if (jm_parse_args(func, args, nargs, kwnames, to_quat ? angle_names : quat_names, JM_COUNT(angle_names), 2,
                      slots) < 0)
        return NULL;
    if (jm_refuse_masked(slots[1], "order") < 0)
        return NULL;
    const int degrees = slots[2] ? jm_parse_flag(slots[2], "degrees") : 0;
    if (degrees < 0)
        return NULL;
    PyArrayObject *src = jm_float_operand(slots[0], arg, 1, to_quat ? angle_core : quat_core);
    if (!src)
        return NULL;
    const int type = PyArray_TYPE(src), ndim = PyArray_NDIM(src), in_len = to_quat ? 3 : 4;
    const npy_intp esize = PyArray_ITEMSIZE(src);
    npy_intp dims[NPY_MAXDIMS];
    memcpy(dims, PyArray_DIMS(src), ndim * sizeof(npy_intp));
    dims[ndim - 1] = to_quat ? 4 : 3;
    int axes[3], intrinsic;
    PyObject *result = NULL;
    PyArrayObject *out;
    if (jm_float_out(slots[3], type, ndim, dims, &out) < 0) {
        Py_DECREF(src);
        return NULL;
    }
    if (!parse_order(slots[1], axes, &intrinsic)) {
        /* one order per joint: a list, tuple, 1-D array of str or any other sequence */
        if (PySequence_Check(slots[1]) && !PyUnicode_Check(slots[1]) && !PyBytes_Check(slots[1])) {
            if (!jm_euler_by_order)
                PyErr_SetString(PyExc_RuntimeError, "jointmath._euler has not registered its _by_order");
            else
                result = PyObject_CallFunction(jm_euler_by_order, "OOiOO", (PyObject *)src, slots[1], to_quat,
                                               degrees ? Py_True : Py_False, out ? (PyObject *)out : Py_None);
        } else {
            PyErr_Format(PyExc_ValueError,
                         "order must be one of the six Tait-Bryan orders, XYZ XZY YXZ YZX ZXY ZYX (intrinsic) or the "
                         "same in lowercase (extrinsic), or a sequence of them (one per joint), got %R",
                         slots[1]);
        }
        Py_DECREF(src);
        return result;
    }
    const npy_intp in_bytes = in_len * esize;
    jm_walk in = {NULL, NULL, 0}, dst = {NULL, NULL, 0};
    if (jm_walk_operand(src, type, 1, in_bytes, ndim - 1, dims, JM_WALK_PACKED, &in) < 0 ||
        jm_walk_output(out, type, ndim, dims, ndim - 1, (4 + 3 - in_len) * esize, JM_WALK_PACKED, &in, &in_bytes, 1,
                       &dst) < 0)
        goto done;
    const size_t n = (size_t)(PyArray_MultiplyList(dims, ndim - 1));
    jm_euler_kernel k32 = to_quat ? jm_active->euler_to_quats : jm_active->quats_to_euler;
    jm_euler_f64_kernel k64 = to_quat ? jm_active->euler_to_quats_f64 : jm_active->quats_to_euler_f64;
    if (n)
        JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                         type == NPY_FLOAT32
                             ? k32((const float *)in.base, (float *)dst.base, n, axes, intrinsic, degrees)
                             : k64((const double *)in.base, (double *)dst.base, n, axes, intrinsic, degrees));
    result = jm_output_result(out, &dst);
done:
    jm_walk_release(&in);
    jm_walk_release(&dst);
    Py_DECREF(src);
    return result;
}

PyDoc_STRVAR(euler_to_quat_doc,
             "euler_to_quat(angles, order, degrees=False, out=None)\n--\n\n"
             "Unit quaternions from Tait-Bryan angles (scipy's ``Rotation.from_euler``).\n\n"
             "Parameters\n"
             "----------\n"
             "angles : array_like, shape (..., 3)\n"
             "    The angle of each axis of ``order``, in radians (degrees with ``degrees=True``).\n"
             "    float32 (and float16) compute in float32; float64, integers and bools in float64.\n"
             "order : str or sequence of str\n"
             "    ``\"XYZ\"``, ``\"XZY\"``, ``\"YXZ\"``, ``\"YZX\"``, ``\"ZXY\"`` or ``\"ZYX\"``: intrinsic, as BVH\n"
             "    channels use them (``\"ZXY\"`` is ``R = Rz(a0) Rx(a1) Ry(a2)``), or the same in lowercase\n"
             "    for extrinsic rotations (scipy's convention). For (..., J, 3) angles, a sequence of J\n"
             "    orders (list, tuple, 1-D array of str) gives each joint its own.\n"
             "degrees : bool (Python's or NumPy's), optional\n"
             "    Angles in degrees (default False: radians).\n"
             "out : ndarray, shape (..., 4), optional\n"
             "    A writeable array of the result dtype to fill; it is returned (one sharing the\n"
             "    angles' memory gets the result of the angles as they were).\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 4)\n"
             "    Unit quaternions ``(x, y, z, w)``. A NaN or infinite angle gives a NaN quaternion in\n"
             "    its own record.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string angles, a masked array, an ``out`` of another dtype, a\n"
             "    ``degrees`` that is not a bool (Python's or NumPy's).\n"
             "ValueError\n"
             "    For angles not (..., 3), an order that is not one of the twelve, a sequence of\n"
             "    orders not one per joint, an ``out`` of another shape or read-only, a result too\n"
             "    large to allocate.\n\n"
             "See Also\n"
             "--------\n"
             "quat_to_euler\n\n"
             "Notes\n"
             "-----\n"
             "float32, every path: rotation error <= 4.3e-7 rad against scipy for angles within\n"
             "+-720 degrees. float64: <= 4e-15 rad. Any finite angle gives its unit quaternion:\n"
             "records with an angle beyond 2**14 (float32) or 2**20 (float64), in either unit, are\n"
             "computed in double with an exact reduction (about 60 times slower per record).\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> np.round(jm.euler_to_quat([90, 0, 0], \"ZYX\", degrees=True), 6) + 0.0\n"
             "array([0.      , 0.      , 0.707107, 0.707107])\n"
             ">>> np.round(jm.euler_to_quat(np.radians([[0, 90, 0], [0, 0, 90]]), [\"ZXY\", \"ZYX\"]), 6) + 0.0\n"
             "array([[0.707107, 0.      , 0.      , 0.707107],\n"
             "       [0.707107, 0.      , 0.      , 0.707107]])");

JM_FASTCALL_FUNCTION(euler_to_quat) {
    return euler("euler_to_quat", "angles", 1, args, nargs, kwnames);
}

PyDoc_STRVAR(quat_to_euler_doc,
             "quat_to_euler(q, order, degrees=False, out=None)\n--\n\n"
             "Tait-Bryan angles of quaternions: the inverse of :func:`euler_to_quat` (scipy's\n"
             "``Rotation.as_euler``).\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions of any finite non-zero scale (float32 2**-149 ... FLT_MAX, float64\n"
             "    2**-1074 ... DBL_MAX); the angles are those of ``q / |q|``. Dtypes as\n"
             "    :func:`euler_to_quat`.\n"
             "order : str or sequence of str\n"
             "    As :func:`euler_to_quat`.\n"
             "degrees : bool (Python's or NumPy's), optional\n"
             "    Angles in degrees (default False: radians).\n"
             "out : ndarray, shape (..., 3), optional\n"
             "    A writeable array of the result dtype to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 3)\n"
             "    Angles in [-pi, pi] ([-180, 180] with ``degrees=True``), the middle one in\n"
             "    [-pi/2, pi/2]. A zero quaternion, or a NaN or infinite component, gives NaN angles in\n"
             "    its own record.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string ``q``, a masked array, an ``out`` of another dtype, a\n"
             "    ``degrees`` that is not a bool (Python's or NumPy's).\n"
             "ValueError\n"
             "    For ``q`` not (..., 4), an order that is not one of the twelve, a sequence of orders\n"
             "    not one per joint, an ``out`` of another shape or read-only, a result too large to\n"
             "    allocate.\n\n"
             "See Also\n"
             "--------\n"
             "euler_to_quat\n\n"
             "Notes\n"
             "-----\n"
             "At gimbal lock (middle angle within 1e-7 rad of +-90 degrees in float32, as scipy;\n"
             "2e-15 rad in float64) the angles are not unique: the third is set to 0 and the first\n"
             "carries the rest, as scipy does (without its warning). float32, every path: each angle\n"
             "within 3.7e-7 rad of float64 away from gimbal lock (5.2e-7 with ``degrees=True``); the\n"
             "angles reproduce the rotation within 1e-6 rad everywhere. float64: within 1e-14 rad,\n"
             "lock included.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> q = jm.euler_to_quat([30, 20, 10], \"ZXY\", degrees=True)\n"
             ">>> np.round(jm.quat_to_euler(q, \"ZXY\", degrees=True), 4) + 0.0\n"
             "array([30., 20., 10.])\n"
             ">>> np.round(jm.quat_to_euler([0, 0, 1, 1], \"XYZ\"), 6) + 0.0       # any scale\n"
             "array([0.      , 0.      , 1.570796])");

JM_FASTCALL_FUNCTION(quat_to_euler) {
    return euler("quat_to_euler", "q", 0, args, nargs, kwnames);
}

PyMethodDef jm_euler_methods[] = {
    JM_FASTCALL_METHOD(euler_to_quat),
    JM_FASTCALL_METHOD(quat_to_euler),
    {NULL, NULL, 0, NULL},
};
