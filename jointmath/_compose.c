/*
 * _compose.c - boundary of the matrix product kernel (csrc/compose.c): compose_mats, and the
 * forward-kinematics walk over a hierarchy that jointmath/_mocap.py validates first.
 */
#include "_core.h"

#include <string.h>

PyDoc_STRVAR(compose_mats_doc,
             "compose_mats(a, b, out=None)\n--\n\n"
             "Compose 3x4 joint matrices: out = a * b, i.e. R = Ra Rb and t = Ra tb + ta\n"
             "(b applied first: a parent's world transform times a child's local one).\n\n"
             "a, b: JOINT_MAT arrays of the same shape, or one of them a single record\n"
             "(shape () or (1,)) used with every record of the other.\n"
             "out: optional writeable JOINT_MAT array of the result's shape; returned.\n"
             "Accuracy, float32: within a few ulp of the largest product term on every path.");

/* Base and stride of a record array for the kernel: `*copy` holds a C-ordered copy if needed. */
static int record_run_or_copy(PyArrayObject *a, PyArrayObject **copy, char **base, ptrdiff_t *stride) {
    *copy = NULL;
    if (jm_as_record_run(a, base, stride))
        return 0;
    *copy = (PyArrayObject *)PyArray_NewCopy(a, NPY_CORDER);
    if (!*copy)
        return -1;
    jm_as_record_run(*copy, base, stride);
    return 0;
}

static PyObject *py_compose_mats(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"a", "b", "out"};
    PyObject *slots[3];
    if (jm_parse_args("compose_mats", args, nargs, kwnames, names, 3, 2, slots) < 0)
        return NULL;
    PyArrayObject *a = jm_record_array(slots[0], "a", jm_joint_mat_descr, "JOINT_MAT");
    if (!a)
        return NULL;
    PyArrayObject *b = jm_record_array(slots[1], "b", jm_joint_mat_descr, "JOINT_MAT");
    PyArrayObject *a_copy = NULL, *b_copy = NULL, *result = NULL;
    PyObject *out_obj = slots[2] == Py_None ? NULL : slots[2];
    if (!b)
        goto done;
    /* the shape of the result: a's, unless a is the single record */
    const int a_single = PyArray_SIZE(a) == 1 && PyArray_NDIM(a) <= 1, b_single = PyArray_SIZE(b) == 1 && PyArray_NDIM(b) <= 1;
    const int same = PyArray_NDIM(a) == PyArray_NDIM(b) && PyArray_CompareLists(PyArray_DIMS(a), PyArray_DIMS(b), PyArray_NDIM(a));
    if (!same && !a_single && !b_single) {
        PyObject *sa = PyArray_IntTupleFromIntp(PyArray_NDIM(a), PyArray_DIMS(a));
        PyObject *sb = PyArray_IntTupleFromIntp(PyArray_NDIM(b), PyArray_DIMS(b));
        PyErr_Format(PyExc_ValueError, "a and b must have the same shape (or one be a single record), got %R and %R",
                     sa, sb);
        Py_XDECREF(sa);
        Py_XDECREF(sb);
        goto done;
    }
    PyArrayObject *shaped = (same || b_single) ? a : b;
    if (out_obj && jm_check_out(out_obj, jm_joint_mat_descr, "jointmath.JOINT_MAT", PyArray_NDIM(shaped),
                                PyArray_DIMS(shaped)) < 0)
        goto done;
    char *a_base, *b_base, *out_base;
    ptrdiff_t a_stride, b_stride, out_stride;
    if (record_run_or_copy(a, &a_copy, &a_base, &a_stride) < 0 || record_run_or_copy(b, &b_copy, &b_base, &b_stride) < 0)
        goto done;
    if (a_single && !same)
        a_stride = 0;
    if (b_single && !same)
        b_stride = 0;
    PyArrayObject *out = (PyArrayObject *)out_obj;
    if (out && jm_as_record_run(out, &out_base, &out_stride) && !jm_may_overlap(out, a) && !jm_may_overlap(out, b)) {
        result = out;
        Py_INCREF(result);
    } else {
        Py_INCREF(jm_joint_mat_descr);
        result = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, jm_joint_mat_descr, PyArray_NDIM(shaped),
                                                       PyArray_DIMS(shaped), NULL, NULL, 0, NULL);
        if (!result)
            goto done;
        jm_as_record_run(result, &out_base, &out_stride);
    }
    const size_t n = (size_t)PyArray_SIZE(result);
    if (n) {
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        jm_active->compose_mats(a_base, a_stride, b_base, b_stride, out_base, out_stride, n);
        jm_restore_gil(saved);
    }
    if (out && result != out) {
        int failed = PyArray_CopyInto(out, result) < 0;
        Py_SETREF(result, failed ? NULL : out);
        Py_XINCREF(result);
    }
done:
    Py_XDECREF(a_copy);
    Py_XDECREF(b_copy);
    Py_DECREF(a);
    Py_XDECREF(b);
    return (PyObject *)result;
}

/*
 * _forward_kinematics(local, parents, world): local and world C-contiguous (F, J) JOINT_MAT,
 * parents int64 (J,) with parents[j] < j (-1 for roots). world[:, j] = world[:, parents[j]] *
 * local[:, j], or local[:, j] for a root. Called by jointmath/_mocap.py after its checks; the
 * checks here only keep a wrong internal call from touching memory it should not.
 */
static PyObject *py_forward_kinematics(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *local, *parents, *world;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyArray_Type, &local, &PyArray_Type, &parents, &PyArray_Type, &world))
        return NULL;
    if (PyArray_NDIM(local) != 2 || !PyArray_IS_C_CONTIGUOUS(local) || !PyArray_EquivTypes(PyArray_DESCR(local), jm_joint_mat_descr) ||
        PyArray_NDIM(world) != 2 || !PyArray_IS_C_CONTIGUOUS(world) || !PyArray_EquivTypes(PyArray_DESCR(world), jm_joint_mat_descr) ||
        !PyArray_ISWRITEABLE(world) || !PyArray_CompareLists(PyArray_DIMS(local), PyArray_DIMS(world), 2) ||
        PyArray_TYPE(parents) != NPY_INT64 || PyArray_NDIM(parents) != 1 || !PyArray_IS_C_CONTIGUOUS(parents) ||
        PyArray_DIM(parents, 0) != PyArray_DIM(local, 1) || jm_may_overlap(local, world))
        return PyErr_Format(PyExc_ValueError, "internal: _forward_kinematics needs (F, J) JOINT_MAT local and world "
                                              "arrays and (J,) int64 parents");
    const npy_int64 *parent = (const npy_int64 *)PyArray_DATA(parents);
    const npy_intp frames = PyArray_DIM(local, 0), n_joints = PyArray_DIM(local, 1);
    for (npy_intp j = 0; j < n_joints; j++)
        if (parent[j] < -1 || parent[j] >= j)
            return PyErr_Format(PyExc_ValueError, "internal: parents[%zd] = %lld is not -1 or an earlier joint",
                                (Py_ssize_t)j, (long long)parent[j]);
    const ptrdiff_t stride = (ptrdiff_t)(n_joints * 48);
    const char *src = PyArray_BYTES(local);
    char *dst = PyArray_BYTES(world);
    jm_binary_kernel compose = jm_active->compose_mats;
    PyThreadState *saved = jm_release_gil(frames * n_joints >= GIL_RELEASE_MIN_RECORDS);
    for (npy_intp j = 0; j < n_joints; j++) {
        if (parent[j] < 0) {
            for (npy_intp f = 0; f < frames; f++)
                memcpy(dst + f * stride + j * 48, src + f * stride + j * 48, 48);
        } else if (frames) {
            compose(dst + parent[j] * 48, stride, src + j * 48, stride, dst + j * 48, stride, (size_t)frames);
        }
    }
    jm_restore_gil(saved);
    Py_RETURN_NONE;
}

PyMethodDef jm_compose_methods[] = {
    {"compose_mats", (PyCFunction)(void (*)(void))py_compose_mats, METH_FASTCALL | METH_KEYWORDS, compose_mats_doc},
    {"_forward_kinematics", py_forward_kinematics, METH_VARARGS, "Internal: world transforms of a hierarchy."},
    {NULL, NULL, 0, NULL},
};
