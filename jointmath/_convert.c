/*
 * _convert.c - boundary of the conversion kernels (csrc/convert.c) on joint records:
 * joints_to_mats and mats_to_joints (the plain-array quat_to_matrix / matrix_to_quat are in
 * _arrays.c).
 */
#include "_core.h"

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

PyMethodDef jm_convert_methods[] = {
    {"joints_to_mats", (PyCFunction)(void (*)(void))py_joints_to_mats, METH_FASTCALL | METH_KEYWORDS,
     joints_to_mats_doc},
    {"mats_to_joints", (PyCFunction)(void (*)(void))py_mats_to_joints, METH_FASTCALL | METH_KEYWORDS,
     mats_to_joints_doc},
    {NULL, NULL, 0, NULL},
};
