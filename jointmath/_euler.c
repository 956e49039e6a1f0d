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
    PyObject *slots[4];
    if (jm_parse_args(func, args, nargs, kwnames, to_quat ? angle_names : quat_names, 4, 2, slots) < 0)
        return NULL;
    if (jm_refuse_masked(slots[1], "order") < 0 || (slots[2] && jm_refuse_masked(slots[2], "degrees") < 0))
        return NULL;
    const int degrees = slots[2] ? PyObject_IsTrue(slots[2]) : 0;
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
    jm_euler_f64_kernel k64 = to_quat ? jm_active->euler_to_quats_f64 : jm_active->quats_to_euler_f64;
    if (n && type == NPY_FLOAT32) {
        jm_euler_kernel kernel = to_quat ? jm_active->euler_to_quats : jm_active->quats_to_euler;
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        kernel((const float *)in.base, (float *)dst.base, n, axes, intrinsic, degrees);
        jm_restore_gil(saved);
    } else if (n) {
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        k64((const double *)in.base, (double *)dst.base, n, axes, intrinsic, degrees);
        jm_restore_gil(saved);
    }
    result = jm_output_result(out, &dst);
done:
    jm_walk_release(&in);
    jm_walk_release(&dst);
    Py_DECREF(src);
    return result;
}

PyDoc_STRVAR(euler_to_quat_doc,
             "euler_to_quat(angles, order, degrees=False, out=None)\n--\n\n"
             "Unit quaternions (x, y, z, w) from Tait-Bryan angles (scipy's from_euler).\n\n"
             "angles: array_like (..., 3), the angle of each axis of `order`, in radians (degrees\n"
             "with degrees=True, as scipy). float32 (and float16) compute in float32; float64,\n"
             "integers and bools in float64.\n"
             "order: \"XYZ\", \"XZY\", \"YXZ\", \"YZX\", \"ZXY\" or \"ZYX\" - intrinsic, as BVH channels use\n"
             "them: \"ZXY\" means R = Rz(a0) Rx(a1) Ry(a2), scipy's from_euler(\"ZXY\", ...) - or the\n"
             "same in lowercase for extrinsic rotations (scipy's convention too). For (..., J, 3)\n"
             "arrays, a sequence of J orders (a list, a tuple, a 1-D array of str) gives each joint\n"
             "its own.\n"
             "out: optional writeable array (..., 4) of the result dtype; it is returned (one\n"
             "sharing the angles' memory gets the result of the angles as they were).\n\n"
             "Returns (..., 4) in the result dtype (empty input: an empty result). float32 runs the\n"
             "SIMD kernel: rotation error <= 1e-6 rad against scipy (float64) on every path;\n"
             "float64 computes in float64. Any finite angle gives its unit quaternion: records with\n"
             "an angle beyond 2**14 (float32) or 2**20 (float64), in either unit, are computed in\n"
             "double with an exact reduction (about 60 times slower per record). A NaN or\n"
             "infinite angle gives a NaN quaternion in its own record.\n\n"
             "Raises TypeError (complex, object or string angles, a masked array; out not an array\n"
             "of the result dtype) or ValueError (angles not (..., 3), an order that is not one of the\n"
             "twelve, a sequence of orders not one per joint, out of another shape or read-only, a\n"
             "result too large to allocate).");

static PyObject *py_euler_to_quat(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    return euler("euler_to_quat", "angles", 1, args, nargs, kwnames);
}

PyDoc_STRVAR(quat_to_euler_doc,
             "quat_to_euler(q, order, degrees=False, out=None)\n--\n\n"
             "Tait-Bryan angles of quaternions: the inverse of euler_to_quat (scipy's as_euler).\n\n"
             "q: array_like (..., 4), dtypes as euler_to_quat; any finite non-zero scale (float32\n"
             "2^-149 ... FLT_MAX, float64 2^-1074 ... DBL_MAX): the angles are those of q / |q|. A\n"
             "zero quaternion, or one with a NaN or infinite component, gives NaN angles in its own\n"
             "record. order: as euler_to_quat.\n"
             "out: optional writeable array (..., 3) of the result dtype; it is returned.\n\n"
             "Returns (..., 3) angles in [-pi, pi] radians ([-180, 180] degrees with degrees=True),\n"
             "the middle one in [-pi/2, pi/2], in the result dtype (empty input: an empty result).\n"
             "At gimbal lock (middle angle within 1e-7 rad of +-90 degrees in float32, as scipy;\n"
             "2e-15 rad in float64) the angles are not unique: the third is set to 0 and the first\n"
             "carries the rest, as in scipy's as_euler (which warns; this function does not).\n"
             "float64: the angles reproduce the rotation within 1e-14 rad everywhere, lock\n"
             "included (1.0e-15 measured). float32 runs the SIMD\n"
             "kernel: each angle within 3.7e-7 rad of float64 away from gimbal lock (5.2e-7 with\n"
             "degrees=True: the float32 rounding of a result in degrees); the angles\n"
             "reproduce the rotation within 1e-6 rad everywhere, also through euler_to_quat in\n"
             "float32 (7.6e-7 measured, 9.0e-7 with degrees=True, middle angles next to +-90\n"
             "degrees included; near the lock\n"
             "the outer angles are ill-conditioned and float32 may split them differently from\n"
             "scipy, never the rotation).\n\n"
             "Raises TypeError (complex, object or string q, a masked array; out not an array of the\n"
             "result dtype) or ValueError (q not (..., 4), an order that is not one of the twelve, a\n"
             "sequence of orders not one per joint, out of another shape or read-only, a result too\n"
             "large to allocate).");

static PyObject *py_quat_to_euler(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    return euler("quat_to_euler", "q", 0, args, nargs, kwnames);
}

PyMethodDef jm_euler_methods[] = {
    {"euler_to_quat", (PyCFunction)(void (*)(void))py_euler_to_quat, METH_FASTCALL | METH_KEYWORDS,
     euler_to_quat_doc},
    {"quat_to_euler", (PyCFunction)(void (*)(void))py_quat_to_euler, METH_FASTCALL | METH_KEYWORDS,
     quat_to_euler_doc},
    {NULL, NULL, 0, NULL},
};
