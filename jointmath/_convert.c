/*
 * _convert.c - boundary of the conversion kernels (csrc/convert.c): joints_to_mats,
 * mats_to_joints, and the float32 / float64 entry point of quat_to_matrix / matrix_to_quat.
 */
#include "_core.h"

#include <string.h>

PyDoc_STRVAR(joints_to_mats_doc,
             "joints_to_mats(joints, out=None)\n--\n\n"
             "Convert joint quaternions to 3x4 joint matrices.\n\n"
             "joints: array of dtype JOINT_QUAT, any shape (frames x joints ...).\n"
             "out: optional writeable JOINT_MAT array of the same shape; it is returned.\n\n"
             "The rotation part is the active matrix R of q / |q| (v' = R v, as\n"
             "scipy's Rotation.as_matrix) for any finite non-zero scale of q, from\n"
             "2^-149 to FLT_MAX; the translation goes to column 3. Accuracy: max abs\n"
             "element error <= 5e-7 on every ISA path. A zero quaternion (or a NaN or\n"
             "infinite component) gives NaN rotation elements for that joint only.");

static PyObject *py_joints_to_mats(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"joints", "out"};
    PyObject *slots[2];
    if (jm_parse_args("joints_to_mats", args, nargs, kwnames, names, 2, 1, slots) < 0)
        return NULL;
    return jm_map_records(slots[0], "joints", jm_joint_quat_descr, "JOINT_QUAT", slots[1], jm_joint_mat_descr,
                       "jointmath.JOINT_MAT", jm_active->joints_to_mats);
}

PyDoc_STRVAR(mats_to_joints_doc,
             "mats_to_joints(mats, out=None)\n--\n\n"
             "Convert 3x4 joint matrices to joint quaternions.\n\n"
             "mats: array of dtype JOINT_MAT, any shape.\n"
             "out: optional writeable JOINT_QUAT array of the same shape; it is returned.\n\n"
             "The quaternion comes from the 3x3 part by the largest-divisor method (the\n"
             "component used as divisor comes out positive) and is normalised; the matrix\n"
             "is not orthogonalised (see extract_rotation for that). The translation is\n"
             "copied from column 3, its 4th lane set to 0. Accuracy for rotation\n"
             "matrices: angle error <= 1e-6 rad, | |q| - 1 | <= 1e-6 on every ISA path.");

static PyObject *py_mats_to_joints(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"mats", "out"};
    PyObject *slots[2];
    if (jm_parse_args("mats_to_joints", args, nargs, kwnames, names, 2, 1, slots) < 0)
        return NULL;
    return jm_map_records(slots[0], "mats", jm_joint_mat_descr, "JOINT_MAT", slots[1], jm_joint_quat_descr,
                       "jointmath.JOINT_QUAT", jm_active->mats_to_joints);
}

/* ------------------------------------------- float kernels for the array API -- */

/*
 * _convert_float32(kernel_name, src, dst): runs a float kernel from one C-contiguous array to
 * another, both float32 (the float32 kernel) or both float64 (its _f64 twin). Called by
 * jointmath/_arrays.py after it has checked and shaped the arguments; the checks here only make
 * a wrong internal call fail loudly instead of corrupting memory.
 */
static PyObject *py_convert_float32(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    PyArrayObject *src, *dst;
    if (!PyArg_ParseTuple(args, "sO!O!", &name, &PyArray_Type, &src, &PyArray_Type, &dst))
        return NULL;
    const int f64 = PyArray_TYPE(src) == NPY_FLOAT64;
    jm_map_kernel kernel;
    npy_intp in_floats, out_floats;
    if (strcmp(name, "quats_to_matrices") == 0) {
        kernel = f64 ? jm_active->quats_to_matrices_f64 : jm_active->quats_to_matrices, in_floats = 4, out_floats = 9;
    } else if (strcmp(name, "matrices_to_quats") == 0) {
        kernel = f64 ? jm_active->matrices_to_quats_f64 : jm_active->matrices_to_quats, in_floats = 9, out_floats = 4;
    } else {
        return PyErr_Format(PyExc_ValueError, "unknown float32 kernel '%s'", name);
    }
    const int type = f64 ? NPY_FLOAT64 : NPY_FLOAT32;
    const npy_intp item = f64 ? 8 : 4;
    if (PyArray_TYPE(src) != type || PyArray_TYPE(dst) != type || !PyArray_IS_C_CONTIGUOUS(src) ||
        !PyArray_IS_C_CONTIGUOUS(dst) || !PyArray_ISWRITEABLE(dst) || PyArray_SIZE(src) % in_floats ||
        PyArray_SIZE(src) / in_floats != PyArray_SIZE(dst) / out_floats ||
        PyArray_SIZE(dst) % out_floats || jm_may_overlap(src, dst))
        return PyErr_Format(PyExc_ValueError, "_convert_float32: src/dst must be separate C-contiguous arrays, both "
                                              "float32 or both float64, of matching record counts");
    size_t n = (size_t)(PyArray_SIZE(src) / in_floats);
    if (n)
        jm_run_kernel(kernel, PyArray_BYTES(src), in_floats * item, PyArray_BYTES(dst), out_floats * item, n);
    Py_RETURN_NONE;
}

PyMethodDef jm_convert_methods[] = {
    {"joints_to_mats", (PyCFunction)(void (*)(void))py_joints_to_mats, METH_FASTCALL | METH_KEYWORDS,
     joints_to_mats_doc},
    {"mats_to_joints", (PyCFunction)(void (*)(void))py_mats_to_joints, METH_FASTCALL | METH_KEYWORDS,
     mats_to_joints_doc},
    {"_convert_float32", py_convert_float32, METH_VARARGS, "Internal: run a float32 or float64 conversion kernel."},
    {NULL, NULL, 0, NULL},
};
