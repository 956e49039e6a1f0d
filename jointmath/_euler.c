/*
 * _euler.c - boundary of the Euler kernel (csrc/euler.c). jointmath/_euler.py checks the
 * user's arguments; this entry point allocates the result and re-checks what it is handed.
 */
#include "_core.h"

/* _euler_to_quat_float32(angles, axes, intrinsic, degrees) -> float32 (..., 4) */
static PyObject *py_euler_to_quat_float32(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *angles_in;
    int axes[3], intrinsic, degrees;
    if (!PyArg_ParseTuple(args, "O!(iii)pp", &PyArray_Type, &angles_in, &axes[0], &axes[1], &axes[2], &intrinsic,
                          &degrees))
        return NULL;
    const int ndim = PyArray_NDIM(angles_in);
    if (PyArray_TYPE(angles_in) != NPY_FLOAT32 || ndim < 1 || ndim >= NPY_MAXDIMS || PyArray_DIM(angles_in, ndim - 1) != 3 ||
        axes[0] == axes[1] || axes[1] == axes[2] || axes[0] == axes[2] || (unsigned)axes[0] > 2 || (unsigned)axes[1] > 2 ||
        (unsigned)axes[2] > 2)
        return PyErr_Format(PyExc_ValueError, "internal: _euler_to_quat_float32 takes float32 (..., 3) and 3 axes");
    PyArrayObject *angles = (PyArrayObject *)PyArray_GETCONTIGUOUS(angles_in);
    if (!angles)
        return NULL;
    npy_intp dims[NPY_MAXDIMS];
    for (int d = 0; d < ndim; d++)
        dims[d] = PyArray_DIM(angles, d);
    dims[ndim - 1] = 4;
    PyArrayObject *q = (PyArrayObject *)PyArray_SimpleNew(ndim, dims, NPY_FLOAT32);
    if (!q) {
        Py_DECREF(angles);
        return NULL;
    }
    const size_t n = (size_t)(PyArray_SIZE(angles) / 3);
    const float *src = (const float *)PyArray_DATA(angles);
    float *dst = (float *)PyArray_DATA(q);
    if (n >= GIL_RELEASE_MIN_RECORDS) {
        Py_BEGIN_ALLOW_THREADS jm_active->euler_to_quats(src, dst, n, axes, intrinsic, degrees);
        Py_END_ALLOW_THREADS
    } else if (n) {
        jm_active->euler_to_quats(src, dst, n, axes, intrinsic, degrees);
    }
    Py_DECREF(angles);
    return (PyObject *)q;
}

PyMethodDef jm_euler_methods[] = {
    {"_euler_to_quat_float32", py_euler_to_quat_float32, METH_VARARGS, "Internal: Euler angles to quaternions."},
    {NULL, NULL, 0, NULL},
};
