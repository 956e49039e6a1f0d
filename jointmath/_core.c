/*
 * _core.c - the CPython/NumPy boundary of jointmath's C kernels.
 *
 * Everything a kernel is handed has been checked here first: argument types, dtypes, shapes,
 * `out=` (dtype, shape, writeable), memory overlap between input and output. Inputs are never
 * written. The GIL is released around kernels on large inputs. The record functions are
 * METH_FASTCALL and check their arrays directly: a one-joint call costs well under a microsecond.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <numpy/arrayobject.h>

#include <stdlib.h>
#include <string.h>

#include "jointmath.h"

/* Below this many records the kernel runs with the GIL held (releasing costs more than it buys). */
#define GIL_RELEASE_MIN_RECORDS 4096

static const jm_kernel_table *active_table; /* the running path */
static PyArray_Descr *joint_quat_descr;      /* jointmath.JOINT_QUAT, registered by _records.py */
static PyArray_Descr *joint_mat_descr;       /* jointmath.JOINT_MAT */

/* ------------------------------------------------------------------ paths (ISA) -- */

static int isa_index(const char *name) {
    for (int i = 0; i < JM_NUM_ISAS; i++)
        if (strcmp(jm_isa_table(i)->name, name) == 0)
            return i;
    return -1;
}

static PyObject *available_isa_names(void) {
    PyObject *names = PyList_New(0);
    for (int i = 0; names && i < JM_NUM_ISAS; i++) {
        if (!jm_isa_supported(i))
            continue;
        PyObject *s = PyUnicode_FromString(jm_isa_table(i)->name);
        if (!s || PyList_Append(names, s) < 0) {
            Py_XDECREF(s);
            Py_CLEAR(names);
        }
        Py_XDECREF(s);
    }
    return names;
}

/* Selects a path by name; on failure sets `exc` naming `what` (the env variable or argument). */
static int select_isa(const char *name, const char *what, PyObject *exc) {
    int i = isa_index(name);
    if (i < 0) {
        PyErr_Format(exc, "%s='%s' is not a jointmath ISA path; expected one of scalar, sse, avx2, avx512",
                     what, name);
        return -1;
    }
    if (!jm_isa_supported(i)) {
        PyObject *names = available_isa_names();
        PyErr_Format(exc, "%s='%s' cannot run on this CPU; available paths: %R", what, name, names);
        Py_XDECREF(names);
        return -1;
    }
    active_table = jm_isa_table(i);
    return 0;
}

static PyObject *py_isa(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    return PyUnicode_FromString(active_table->name);
}

static PyObject *py_available_isas(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    return available_isa_names();
}

static PyObject *py_set_isa(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "isa must be a str, got %s", Py_TYPE(arg)->tp_name);
    if (select_isa(PyUnicode_AsUTF8(arg), "isa", PyExc_ValueError) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_register_dtypes(PyObject *self, PyObject *args) {
    (void)self;
    PyArray_Descr *q, *m;
    if (!PyArg_ParseTuple(args, "O&O&", PyArray_DescrConverter, &q, PyArray_DescrConverter, &m))
        return NULL;
    if (PyDataType_ELSIZE(q) != (npy_intp)sizeof(jm_joint_quat) || PyDataType_ELSIZE(m) != (npy_intp)sizeof(jm_joint_mat)) {
        Py_DECREF(q);
        Py_DECREF(m);
        return PyErr_Format(PyExc_ValueError, "record dtypes must be %d and %d bytes",
                            (int)sizeof(jm_joint_quat), (int)sizeof(jm_joint_mat));
    }
    Py_XSETREF(joint_quat_descr, q);
    Py_XSETREF(joint_mat_descr, m);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------- argument helpers -- */

/*
 * Fills slots[0..n) from FASTCALL positional args and keywords named `names`; the first
 * `required` are mandatory, the rest default to NULL.
 */
static int parse_args(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      const char *const *names, int n, int required, PyObject **slots) {
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", func, n, nargs);
        return -1;
    }
    for (int i = 0; i < n; i++)
        slots[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int i = 0;
        while (i < n && PyUnicode_CompareWithASCIIString(key, names[i]) != 0)
            i++;
        if (i == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", func, key);
            return -1;
        }
        if (slots[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", func, names[i]);
            return -1;
        }
        slots[i] = args[nargs + k];
    }
    for (int i = 0; i < required; i++)
        if (!slots[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", func, names[i]);
            return -1;
        }
    return 0;
}

/* An ndarray whose dtype is equivalent to `descr`, or NULL with a TypeError naming `arg`. */
static PyArrayObject *record_array(PyObject *obj, const char *arg, PyArray_Descr *descr, const char *dtype_name) {
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a numpy array of dtype jointmath.%s, got %s", arg,
                     dtype_name, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    if (!PyArray_EquivTypes(PyArray_DESCR(a), descr)) {
        PyErr_Format(PyExc_TypeError, "%s must have dtype jointmath.%s, got dtype %R", arg, dtype_name,
                     (PyObject *)PyArray_DESCR(a));
        return NULL;
    }
    return a;
}

/* Checks a caller's `out`: an ndarray of `descr` with exactly `shape`, writeable. */
static int check_out(PyObject *out, PyArray_Descr *descr, const char *dtype_name, int ndim,
                     const npy_intp *shape) {
    if (!PyArray_Check(out)) {
        PyErr_Format(PyExc_TypeError, "out must be a numpy array of dtype %s, got %s", dtype_name,
                     Py_TYPE(out)->tp_name);
        return -1;
    }
    PyArrayObject *o = (PyArrayObject *)out;
    if (!PyArray_EquivTypes(PyArray_DESCR(o), descr)) {
        PyErr_Format(PyExc_TypeError, "out must have dtype %s, got dtype %R", dtype_name,
                     (PyObject *)PyArray_DESCR(o));
        return -1;
    }
    if (PyArray_NDIM(o) != ndim || !PyArray_CompareLists(PyArray_DIMS(o), shape, ndim)) {
        PyObject *want = PyArray_IntTupleFromIntp(ndim, shape);
        PyObject *got = PyArray_IntTupleFromIntp(PyArray_NDIM(o), PyArray_DIMS(o));
        PyErr_Format(PyExc_ValueError, "out must have shape %R, got shape %R", want, got);
        Py_XDECREF(want);
        Py_XDECREF(got);
        return -1;
    }
    if (!PyArray_ISWRITEABLE(o)) {
        PyErr_SetString(PyExc_ValueError, "out must be writeable, got a read-only array");
        return -1;
    }
    return 0;
}

/*
 * How a kernel walks an array as one run of records: base pointer and byte stride. 0-d and
 * 1-d arrays (sliced, negative or zero strides included) and C-contiguous arrays qualify;
 * anything else does not (the caller copies it).
 */
static int as_record_run(PyArrayObject *a, char **base, ptrdiff_t *stride) {
    *base = PyArray_BYTES(a);
    if (PyArray_NDIM(a) <= 1) {
        *stride = PyArray_NDIM(a) ? PyArray_STRIDE(a, 0) : PyArray_ITEMSIZE(a);
        return 1;
    }
    *stride = PyArray_ITEMSIZE(a);
    return PyArray_IS_C_CONTIGUOUS(a);
}

/* Byte range [lo, hi) an array's elements occupy. */
static void memory_extent(PyArrayObject *a, char **lo, char **hi) {
    char *l = PyArray_BYTES(a), *h = l;
    for (int d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp span = (PyArray_DIM(a, d) - 1) * PyArray_STRIDE(a, d);
        if (PyArray_DIM(a, d) == 0) {
            *lo = *hi = PyArray_BYTES(a);
            return;
        }
        if (span < 0)
            l += span;
        else
            h += span;
    }
    *lo = l;
    *hi = h + PyArray_ITEMSIZE(a);
}

static int may_overlap(PyArrayObject *a, PyArrayObject *b) {
    char *alo, *ahi, *blo, *bhi;
    memory_extent(a, &alo, &ahi);
    memory_extent(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

static void run_kernel(jm_map_kernel kernel, const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    if (n >= GIL_RELEASE_MIN_RECORDS) {
        Py_BEGIN_ALLOW_THREADS kernel(src, ss, dst, ds, n);
        Py_END_ALLOW_THREADS
    } else {
        kernel(src, ss, dst, ds, n);
    }
}

/*
 * Applies a record kernel from `in_obj` (dtype in_descr) to a new array or `out_obj` (dtype
 * out_descr) of the same shape, and returns the result (a new reference).
 */
static PyObject *map_records(PyObject *in_obj, const char *in_arg, PyArray_Descr *in_descr, const char *in_name,
                             PyObject *out_obj, PyArray_Descr *out_descr, const char *out_name,
                             jm_map_kernel kernel) {
    if (!in_descr || !out_descr)
        return PyErr_Format(PyExc_RuntimeError, "jointmath record dtypes are not registered");
    PyArrayObject *in = record_array(in_obj, in_arg, in_descr, in_name);
    if (!in)
        return NULL;
    const int ndim = PyArray_NDIM(in);
    const npy_intp *shape = PyArray_DIMS(in);
    if (out_obj == Py_None)
        out_obj = NULL;
    if (out_obj && check_out(out_obj, out_descr, out_name, ndim, shape) < 0)
        return NULL;
    const size_t n = (size_t)PyArray_SIZE(in);

    /* the source: used in place when it is one run of records, else a C-ordered copy */
    PyArrayObject *src = in;
    char *src_base;
    ptrdiff_t src_stride;
    Py_INCREF(src);
    if (!as_record_run(src, &src_base, &src_stride)) {
        Py_SETREF(src, (PyArrayObject *)PyArray_NewCopy(in, NPY_CORDER));
        if (!src)
            return NULL;
        as_record_run(src, &src_base, &src_stride);
    }

    /* the destination: `out` itself when it is one run of records and cannot alias the source */
    PyArrayObject *out = (PyArrayObject *)out_obj, *dst;
    char *dst_base;
    ptrdiff_t dst_stride;
    if (out && as_record_run(out, &dst_base, &dst_stride) && !may_overlap(out, src)) {
        dst = out;
        Py_INCREF(dst);
    } else {
        Py_INCREF(out_descr);
        dst = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, out_descr, ndim, shape, NULL, NULL, 0, NULL);
        if (!dst) {
            Py_DECREF(src);
            return NULL;
        }
        as_record_run(dst, &dst_base, &dst_stride);
    }

    if (n)
        run_kernel(kernel, src_base, src_stride, dst_base, dst_stride, n);
    Py_DECREF(src);

    if (out && dst != out) {
        int failed = PyArray_CopyInto(out, dst) < 0;
        Py_DECREF(dst);
        if (failed)
            return NULL;
        Py_INCREF(out);
        return (PyObject *)out;
    }
    return (PyObject *)dst;
}

/* ------------------------------------------------------------ record functions -- */

PyDoc_STRVAR(joints_to_mats_doc,
             "joints_to_mats(joints, out=None)\n--\n\n"
             "Convert joint quaternions to 3x4 joint matrices.\n\n"
             "joints: array of dtype JOINT_QUAT, any shape (frames x joints ...).\n"
             "out: optional writeable JOINT_MAT array of the same shape; it is returned.\n\n"
             "The rotation part is the active matrix R of q / |q| (v' = R v, as\n"
             "scipy's Rotation.as_matrix), the translation goes to column 3. Accuracy for\n"
             "unit quaternions: max abs element error <= 5e-7 on every ISA path. A zero\n"
             "quaternion gives NaN rotation elements for that joint only.");

static PyObject *py_joints_to_mats(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"joints", "out"};
    PyObject *slots[2];
    if (parse_args("joints_to_mats", args, nargs, kwnames, names, 2, 1, slots) < 0)
        return NULL;
    return map_records(slots[0], "joints", joint_quat_descr, "JOINT_QUAT", slots[1], joint_mat_descr,
                       "jointmath.JOINT_MAT", active_table->joints_to_mats);
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
    if (parse_args("mats_to_joints", args, nargs, kwnames, names, 2, 1, slots) < 0)
        return NULL;
    return map_records(slots[0], "mats", joint_mat_descr, "JOINT_MAT", slots[1], joint_quat_descr,
                       "jointmath.JOINT_QUAT", active_table->mats_to_joints);
}

/* ------------------------------------------- float32 kernels for the array API -- */

/*
 * _map_float32(kernel_name, src, dst): runs a float kernel from one C-contiguous float32 array
 * to another. Called by jointmath/_arrays.py after it has checked and shaped the arguments;
 * the checks here only make a wrong internal call fail loudly instead of corrupting memory.
 */
static PyObject *py_map_float32(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    PyArrayObject *src, *dst;
    if (!PyArg_ParseTuple(args, "sO!O!", &name, &PyArray_Type, &src, &PyArray_Type, &dst))
        return NULL;
    jm_map_kernel kernel;
    npy_intp in_floats, out_floats;
    if (strcmp(name, "quats_to_matrices") == 0) {
        kernel = active_table->quats_to_matrices, in_floats = 4, out_floats = 9;
    } else if (strcmp(name, "matrices_to_quats") == 0) {
        kernel = active_table->matrices_to_quats, in_floats = 9, out_floats = 4;
    } else {
        return PyErr_Format(PyExc_ValueError, "unknown float32 kernel '%s'", name);
    }
    if (PyArray_TYPE(src) != NPY_FLOAT32 || PyArray_TYPE(dst) != NPY_FLOAT32 || !PyArray_IS_C_CONTIGUOUS(src) ||
        !PyArray_IS_C_CONTIGUOUS(dst) || !PyArray_ISWRITEABLE(dst) || PyArray_SIZE(src) % in_floats ||
        PyArray_SIZE(src) / in_floats != PyArray_SIZE(dst) / out_floats ||
        PyArray_SIZE(dst) % out_floats || may_overlap(src, dst))
        return PyErr_Format(PyExc_ValueError, "_map_float32: src/dst must be separate C-contiguous float32 "
                                              "arrays of matching record counts");
    size_t n = (size_t)(PyArray_SIZE(src) / in_floats);
    if (n)
        run_kernel(kernel, PyArray_BYTES(src), in_floats * 4, PyArray_BYTES(dst), out_floats * 4, n);
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------------- module -- */

static PyMethodDef core_methods[] = {
    {"joints_to_mats", (PyCFunction)(void (*)(void))py_joints_to_mats, METH_FASTCALL | METH_KEYWORDS,
     joints_to_mats_doc},
    {"mats_to_joints", (PyCFunction)(void (*)(void))py_mats_to_joints, METH_FASTCALL | METH_KEYWORDS,
     mats_to_joints_doc},
    {"isa", py_isa, METH_NOARGS, "isa()\n--\n\nThe name of the running ISA path (scalar, sse, avx2 or avx512)."},
    {"available_isas", py_available_isas, METH_NOARGS,
     "available_isas()\n--\n\nThe ISA paths this CPU and OS can run, from scalar up."},
    {"_set_isa", py_set_isa, METH_O, "Switch the running path (tests and benchmarks)."},
    {"_register_dtypes", py_register_dtypes, METH_VARARGS, "Register JOINT_QUAT and JOINT_MAT."},
    {"_map_float32", py_map_float32, METH_VARARGS, "Internal: run a float32 kernel."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "jointmath._core", "jointmath's C kernels and their checked boundary.", -1,
    core_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void) {
    import_array();
    const char *forced = getenv("JOINTMATH_ISA");
    if (forced && *forced) {
        if (select_isa(forced, "JOINTMATH_ISA", PyExc_ImportError) < 0)
            return NULL;
    } else {
        for (int i = JM_NUM_ISAS - 1; i >= 0; i--)
            if (jm_isa_supported(i)) {
                active_table = jm_isa_table(i);
                break;
            }
    }
    return PyModule_Create(&core_module);
}
