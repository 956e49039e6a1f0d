/*
 * _euler.c - boundary of the Euler kernels (csrc/euler.c). jointmath/_euler.py checks the
 * user's arguments; this entry point allocates the result and re-checks what it is handed.
 */
#include "_core.h"

/*
 * _euler_float32(src, axes, intrinsic, degrees, to_quat) -> (..., 4) quaternions from (..., 3)
 * angles (to_quat true) or (..., 3) angles from (..., 4) quaternions, float32 (the float32
 * kernels) or float64 (their _f64 twins), the result in src's dtype.
 */
static PyObject *py_euler_float32(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *src_in;
    int axes[3], intrinsic, degrees, to_quat;
    if (!PyArg_ParseTuple(args, "O!(iii)ppp", &PyArray_Type, &src_in, &axes[0], &axes[1], &axes[2], &intrinsic,
                          &degrees, &to_quat))
        return NULL;
    const int ndim = PyArray_NDIM(src_in), in_len = to_quat ? 3 : 4, out_len = to_quat ? 4 : 3;
    const int type = PyArray_TYPE(src_in);
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64) || ndim < 1 || PyArray_DIM(src_in, ndim - 1) != in_len ||
        axes[0] == axes[1] || axes[1] == axes[2] || axes[0] == axes[2] || (unsigned)axes[0] > 2 || (unsigned)axes[1] > 2 ||
        (unsigned)axes[2] > 2)
        return PyErr_Format(PyExc_ValueError, "internal: _euler_float32 takes float32 or float64 (..., %d) and 3 distinct axes",
                            in_len);
    PyArrayObject *src = (PyArrayObject *)PyArray_GETCONTIGUOUS(src_in);
    if (!src)
        return NULL;
    npy_intp dims[NPY_MAXDIMS];
    for (int d = 0; d < ndim; d++)
        dims[d] = PyArray_DIM(src, d);
    dims[ndim - 1] = out_len;
    PyArrayObject *dst = (PyArrayObject *)PyArray_SimpleNew(ndim, dims, type);
    if (!dst) {
        Py_DECREF(src);
        return NULL;
    }
    const size_t n = (size_t)(PyArray_SIZE(src) / in_len);
    if (n) {
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        if (type == NPY_FLOAT64)
            (to_quat ? jm_active->euler_to_quats_f64 : jm_active->quats_to_euler_f64)(
                (const double *)PyArray_DATA(src), (double *)PyArray_DATA(dst), n, axes, intrinsic, degrees);
        else
            (to_quat ? jm_active->euler_to_quats : jm_active->quats_to_euler)(
                (const float *)PyArray_DATA(src), (float *)PyArray_DATA(dst), n, axes, intrinsic, degrees);
        jm_restore_gil(saved);
    }
    Py_DECREF(src);
    return (PyObject *)dst;
}

PyMethodDef jm_euler_methods[] = {
    {"_euler_float32", py_euler_float32, METH_VARARGS, "Internal: Euler angles to and from quaternions."},
    {NULL, NULL, 0, NULL},
};
