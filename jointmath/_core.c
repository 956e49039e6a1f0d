/*
 * _core.c - the CPython/NumPy boundary of jointmath's C kernels.
 *
 * Everything a kernel is handed has been checked here first: argument types, dtypes, shapes,
 * `out=` (dtype, shape, writeable), memory overlap between input and output. Inputs are never
 * written. The GIL is released around kernels on large inputs. The record functions are
 * METH_FASTCALL and check their arrays directly: a one-joint call costs well under a microsecond.
 */
#define JM_CORE_MODULE /* this file imports the NumPy C API for the others */
#include "_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const jm_kernel_table *jm_active; /* the running path */
PyArray_Descr *jm_joint_quat_descr;      /* jointmath.JOINT_QUAT, registered by _records.py */
PyArray_Descr *jm_joint_mat_descr;       /* jointmath.JOINT_MAT */
PyArray_Descr *jm_packed_joint_descr;    /* jointmath.PACKED_JOINT */
PyArray_Descr *jm_packed_joint64_descr;  /* jointmath.PACKED_JOINT64 */
PyObject *jm_euler_by_order;             /* jointmath._euler._by_order, registered by _euler.py */
double jm_memory_limit;                  /* bytes, registered by _memory.py; 0: unknown */

/* ------------------------------------------------------------------ paths (ISA) -- */

static int isa_index(const char *name) {
    for (int i = 0; i < JM_NUM_ISAS; i++)
        if (strcmp(jm_isa_table(i)->name, name) == 0)
            return i;
    return -1;
}

/* The names of the paths built (runnable_only = 0) or of those this CPU can run, from scalar up. */
static PyObject *isa_names(int runnable_only) {
    PyObject *names = PyList_New(0);
    for (int i = 0; names && i < JM_NUM_ISAS; i++) {
        if (runnable_only && !jm_isa_supported(i))
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
        PyObject *names = isa_names(0), *sep = PyUnicode_FromString(", ");
        PyObject *built = names && sep ? PyUnicode_Join(sep, names) : NULL;
        if (built)
            PyErr_Format(exc, "%s='%s' is not a jointmath ISA path; expected one of %U", what, name, built);
        Py_XDECREF(names);
        Py_XDECREF(sep);
        Py_XDECREF(built);
        return -1;
    }
    if (!jm_isa_supported(i)) {
        PyObject *names = isa_names(1);
        PyErr_Format(exc, "%s='%s' cannot run on this CPU; available paths: %R", what, name, names);
        Py_XDECREF(names);
        return -1;
    }
    jm_active = jm_isa_table(i);
    return 0;
}

static PyObject *py_isa(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    return PyUnicode_FromString(jm_active->name);
}

static PyObject *py_available_isas(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    return isa_names(1);
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
    PyArray_Descr *d[4] = {NULL, NULL, NULL, NULL};
    if (!PyArg_ParseTuple(args, "O&O&O&O&", PyArray_DescrConverter, &d[0], PyArray_DescrConverter, &d[1],
                          PyArray_DescrConverter, &d[2], PyArray_DescrConverter, &d[3])) {
        for (int i = 0; i < 4; i++)
            Py_XDECREF(d[i]);
        return NULL;
    }
    static const npy_intp sizes[4] = {sizeof(jm_joint_quat), sizeof(jm_joint_mat), JM_PACKED_JOINT_BYTES,
                                      JM_PACKED_JOINT64_BYTES};
    int ok = 1;
    for (int i = 0; i < 4; i++)
        ok = ok && PyDataType_ELSIZE(d[i]) == sizes[i];
    if (!ok) {
        for (int i = 0; i < 4; i++)
            Py_DECREF(d[i]);
        return PyErr_Format(PyExc_ValueError, "record dtypes must be %d, %d, %d and %d bytes", (int)sizes[0],
                            (int)sizes[1], (int)sizes[2], (int)sizes[3]);
    }
    Py_XSETREF(jm_joint_quat_descr, d[0]);
    Py_XSETREF(jm_joint_mat_descr, d[1]);
    Py_XSETREF(jm_packed_joint_descr, d[2]);
    Py_XSETREF(jm_packed_joint64_descr, d[3]);
    Py_RETURN_NONE;
}

static PyObject *py_register_euler_by_order(PyObject *self, PyObject *func) {
    (void)self;
    if (!PyCallable_Check(func))
        return PyErr_Format(PyExc_TypeError, "expected a callable, got %R", func);
    Py_INCREF(func);
    Py_XSETREF(jm_euler_by_order, func);
    Py_RETURN_NONE;
}

static PyObject *py_set_memory_limit(PyObject *self, PyObject *bytes) {
    (void)self;
    const double value = PyFloat_AsDouble(bytes);
    if (value == -1.0 && PyErr_Occurred())
        return NULL;
    if (!(value >= 0 && isfinite(value)))
        return PyErr_Format(PyExc_ValueError, "expected a number of bytes >= 0, got %R", bytes);
    jm_memory_limit = value;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------- argument helpers -- */

/* The keyword `key` (a str) is `name`: an inline byte comparison for the usual compact ASCII
   str (about 5 ns less per keyword and name than PyUnicode_CompareWithASCIIString). */
static int keyword_is(PyObject *key, const char *name) {
    if (PyUnicode_IS_COMPACT_ASCII(key)) {
        const char *s = (const char *)PyUnicode_DATA(key);
        return s[0] == name[0] && strcmp(s, name) == 0;
    }
    return PyUnicode_CompareWithASCIIString(key, name) == 0;
}

/* NULL with a TypeError "<name> must be <expected>, got <what obj is>": its type, or for an
   array its shape or its dtype. */
static void *wrong_number(PyObject *obj, const char *name, const char *expected) {
    if (!PyArray_Check(obj))
        return PyErr_Format(PyExc_TypeError, "%s must be %s, got %s", name, expected, jm_type_name(obj));
    PyArrayObject *a = (PyArrayObject *)obj;
    if (PyArray_NDIM(a)) {
        PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(a), PyArray_DIMS(a));
        if (shape)
            PyErr_Format(PyExc_TypeError, "%s must be %s, got an array of shape %R", name, expected, shape);
        Py_XDECREF(shape);
        return NULL;
    }
    return PyErr_Format(PyExc_TypeError, "%s must be %s, got a 0-d array of dtype %S", name, expected,
                        (PyObject *)PyArray_DESCR(a));
}

int jm_is_integer(PyObject *obj) {
    return PyArray_Check(obj) ? PyArray_NDIM((PyArrayObject *)obj) == 0 && PyArray_ISINTEGER((PyArrayObject *)obj)
                              : !PyBool_Check(obj) && !PyArray_IsScalar(obj, Bool) && PyIndex_Check(obj);
}

int jm_parse_int(PyObject *obj, const char *name, Py_ssize_t *value) {
    if (jm_refuse_masked(obj, name) < 0)
        return -1;
    if (!jm_is_integer(obj))
        return wrong_number(obj, name, "an int"), -1;
    *value = PyNumber_AsSsize_t(obj, NULL);
    return *value == -1 && PyErr_Occurred() ? -1 : 0;
}

int jm_parse_flag(PyObject *obj, const char *name) {
    if (jm_refuse_masked(obj, name) < 0)
        return -1;
    if (PyBool_Check(obj) || PyArray_IsScalar(obj, Bool))
        return PyObject_IsTrue(obj);
    return wrong_number(obj, name, "a bool (True or False)"), -1;
}

int jm_parse_real(PyObject *obj, const char *name, const char *expected, double *value) {
    if (jm_refuse_masked(obj, name) < 0)
        return -1;
    int real;
    if (PyArray_Check(obj)) {
        const char kind = PyArray_DESCR((PyArrayObject *)obj)->kind;
        real = PyArray_NDIM((PyArrayObject *)obj) == 0 && (kind == 'f' || kind == 'i' || kind == 'u');
    } else if (PyArray_IsScalar(obj, Generic)) { /* (NumPy counts a timedelta64 an integer: not a number here) */
        real = (PyArray_IsScalar(obj, Integer) && !PyArray_IsScalar(obj, Timedelta)) || PyArray_IsScalar(obj, Floating);
    } else { /* as float(obj) reads it, strings aside */
        const PyNumberMethods *nb = Py_TYPE(obj)->tp_as_number;
        real = !PyBool_Check(obj) && !PyComplex_Check(obj) && nb && (nb->nb_float || nb->nb_index);
    }
    if (!real)
        return wrong_number(obj, name, expected), -1;
    double v = PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) /* an int too large for a double */
            return -1;
        PyErr_Clear();
        v = INFINITY;
    }
    *value = v;
    return 0;
}

int jm_refuse_masked_subclass(PyObject *obj, const char *arg) {
    PyObject *ma = PyImport_ImportModule("numpy.ma");
    PyObject *masked_type = ma ? PyObject_GetAttrString(ma, "MaskedArray") : NULL;
    const int masked = masked_type ? PyObject_IsInstance(obj, masked_type) : -1;
    Py_XDECREF(ma);
    Py_XDECREF(masked_type);
    if (masked > 0)
        PyErr_Format(PyExc_TypeError, "%s must not be a masked array (numpy.ma.MaskedArray): jointmath ignores masks, "
                     "so the masked values would be used and the mask lost; pass %s.filled(value) or %s.data", arg, arg,
                     arg);
    return masked ? -1 : 0;
}

/*
 * Fills slots[0..n) from FASTCALL positional args and keywords named `names`; the first
 * `required` are mandatory, the rest default to NULL.
 */
int jm_parse_args(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
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
        while (i < n && !keyword_is(key, names[i]))
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
PyArrayObject *jm_record_array(PyObject *obj, const char *arg, PyArray_Descr *descr, const char *dtype_name) {
    PyArrayObject *a;
    if (jm_refuse_masked(obj, arg) < 0)
        return NULL;
    if (PyArray_Check(obj)) {
        Py_INCREF(obj);
        a = (PyArrayObject *)obj;
    } else if (PyArray_IsScalar(obj, Void)) { /* one record indexed out of an array */
        a = (PyArrayObject *)PyArray_FromScalar(obj, NULL);
        if (!a)
            return NULL;
    } else {
        PyErr_Format(PyExc_TypeError, "%s must be a numpy array of dtype jointmath.%s, got %s", arg,
                     dtype_name, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    /* the same descr object (arrays made with jointmath.JOINT_QUAT / JOINT_MAT) skips the slower
       structural comparison */
    if (PyArray_DESCR(a) != descr && !PyArray_EquivTypes(PyArray_DESCR(a), descr)) {
        PyErr_Format(PyExc_TypeError, "%s must have dtype jointmath.%s, got dtype %S", arg, dtype_name,
                     (PyObject *)PyArray_DESCR(a));
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* Whether dtype d is `descr` or `alt` (NULL: none), as NumPy's == compares dtypes. */
static int record_dtype_is(PyArray_Descr *d, PyArray_Descr *descr, PyArray_Descr *alt) {
    return d == descr || d == alt || PyArray_EquivTypes(d, descr) || (alt && PyArray_EquivTypes(d, alt));
}

const char *jm_type_name(PyObject *obj) {
    const char *name = Py_TYPE(obj)->tp_name, *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

PyArrayObject *jm_record_operand(PyObject *obj, const char *arg, PyArray_Descr *descr, PyArray_Descr *alt,
                                 const char *dtype_names) {
    if (!descr)
        return (PyArrayObject *)PyErr_Format(PyExc_RuntimeError, "jointmath record dtypes are not registered");
    if (jm_refuse_masked(obj, arg) < 0)
        return NULL;
    if (PyArray_Check(obj) && record_dtype_is(PyArray_DESCR((PyArrayObject *)obj), descr, alt)) {
        Py_INCREF(obj);
        return (PyArrayObject *)obj;
    }
    if (PyArray_IsScalar(obj, Void)) { /* one record indexed out of an array */
        PyArray_Descr *d = PyArray_DescrFromScalar(obj);
        const int match = d && record_dtype_is(d, descr, alt);
        Py_XDECREF(d);
        if (match)
            return (PyArrayObject *)PyArray_FromScalar(obj, NULL);
    }
    if (PyArray_Check(obj))
        PyErr_Format(PyExc_TypeError, "%s must be a numpy array of dtype jointmath.%s, got dtype %S", arg, dtype_names,
                     (PyObject *)PyArray_DESCR((PyArrayObject *)obj));
    else
        PyErr_Format(PyExc_TypeError, "%s must be a numpy array of dtype jointmath.%s, got %s", arg, dtype_names,
                     jm_type_name(obj));
    return NULL;
}

/* 0 if `a` has exactly `shape`, else -1 with a ValueError "<what> <shape>, got shape <a's>". */
int jm_require_shape(PyArrayObject *a, int ndim, const npy_intp *shape, const char *what) {
    if (PyArray_NDIM(a) == ndim && PyArray_CompareLists(PyArray_DIMS(a), shape, ndim))
        return 0;
    PyObject *want = PyArray_IntTupleFromIntp(ndim, shape);
    PyObject *got = PyArray_IntTupleFromIntp(PyArray_NDIM(a), PyArray_DIMS(a));
    PyErr_Format(PyExc_ValueError, "%s %R, got shape %R", what, want, got);
    Py_XDECREF(want);
    Py_XDECREF(got);
    return -1;
}

/* Checks a caller's `out`: an ndarray of `descr` with exactly `shape`, writeable. */
int jm_check_out(PyObject *out, PyArray_Descr *descr, const char *dtype_name, int ndim,
                     const npy_intp *shape) {
    if (!PyArray_Check(out)) {
        PyErr_Format(PyExc_TypeError, "out must be a numpy array of dtype %s, got %s", dtype_name,
                     Py_TYPE(out)->tp_name);
        return -1;
    }
    PyArrayObject *o = (PyArrayObject *)out;
    if (jm_refuse_masked(out, "out") < 0)
        return -1;
    if (PyArray_DESCR(o) != descr && !PyArray_EquivTypes(PyArray_DESCR(o), descr)) {
        PyErr_Format(PyExc_TypeError, "out must have dtype %s, got dtype %S", dtype_name,
                     (PyObject *)PyArray_DESCR(o));
        return -1;
    }
    if (jm_require_shape(o, ndim, shape, "out must have shape") < 0)
        return -1;
    if (!PyArray_ISWRITEABLE(o)) {
        PyErr_SetString(PyExc_ValueError, "out must be writeable, got a read-only array");
        return -1;
    }
    return 0;
}

/*
 * How a kernel walks an array as one run of records: base pointer and byte stride. 0-d and
 * 1-d arrays (sliced, negative or zero strides included) and C-contiguous arrays qualify when
 * their records sit at a float's alignment; anything else does not (the caller copies it).
 */
int jm_as_record_run(PyArrayObject *a, char **base, ptrdiff_t *stride) {
    *base = PyArray_BYTES(a);
    /* the kernels read and write floats (and the index kernels intp): records at a float's
       alignment (record dtypes are packed structs, so NumPy's own flag says nothing) */
    if ((uintptr_t)*base % sizeof(float))
        return 0;
    if (PyArray_NDIM(a) <= 1) {
        *stride = PyArray_NDIM(a) ? PyArray_STRIDE(a, 0) : PyArray_ITEMSIZE(a);
        return *stride % (ptrdiff_t)sizeof(float) == 0;
    }
    *stride = PyArray_ITEMSIZE(a);
    return PyArray_IS_C_CONTIGUOUS(a);
}

/* `a` itself (a new reference) when it is one run of records, else a C-ordered copy of it. */
PyArrayObject *jm_record_run_or_copy(PyArrayObject *a, char **base, ptrdiff_t *stride) {
    if (jm_as_record_run(a, base, stride)) {
        Py_INCREF(a);
        return a;
    }
    Py_INCREF(PyArray_DESCR(a));
    PyArrayObject *copy = jm_new_array_descr(PyArray_NDIM(a), PyArray_DIMS(a), PyArray_DESCR(a));
    if (!copy || PyArray_CopyInto(copy, a) < 0) {
        Py_XDECREF(copy);
        return NULL;
    }
    jm_as_record_run(copy, base, stride);
    return copy;
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

int jm_may_overlap(PyArrayObject *a, PyArrayObject *b) {
    char *alo, *ahi, *blo, *bhi;
    memory_extent(a, &alo, &ahi);
    memory_extent(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

unsigned long long jm_gil_releases = 0;

void jm_run_kernel(jm_map_kernel kernel, const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS, kernel(src, ss, dst, ds, n));
}

/*
 * Applies a record kernel from `in_obj` (dtype in_descr) to a new array or `out_obj` (dtype
 * out_descr) of the same shape, and returns the result (a new reference).
 */
PyObject *jm_map_records(PyObject *in_obj, const char *in_arg, PyArray_Descr *in_descr, const char *in_name,
                         PyObject *out_obj, PyArray_Descr *out_descr, const char *out_name, jm_map_kernel kernel) {
    if (!in_descr || !out_descr)
        return PyErr_Format(PyExc_RuntimeError, "jointmath record dtypes are not registered");
    PyArrayObject *in = jm_record_array(in_obj, in_arg, in_descr, in_name);
    if (!in)
        return NULL;
    const int ndim = PyArray_NDIM(in);
    const npy_intp *shape = PyArray_DIMS(in);
    if (out_obj == Py_None)
        out_obj = NULL;
    if (out_obj && jm_check_out(out_obj, out_descr, out_name, ndim, shape) < 0) {
        Py_DECREF(in);
        return NULL;
    }
    const size_t n = (size_t)PyArray_SIZE(in);

    /* the source: used in place when it is one run of records, else a C-ordered copy */
    /* `in` stays referenced to the end: `shape` points into it */
    char *src_base;
    ptrdiff_t src_stride;
    PyArrayObject *src = jm_record_run_or_copy(in, &src_base, &src_stride);
    if (!src) {
        Py_DECREF(in);
        return NULL;
    }

    /* the destination: `out` itself when it is one run of records and cannot alias the source */
    PyArrayObject *out = (PyArrayObject *)out_obj, *dst;
    char *dst_base;
    ptrdiff_t dst_stride;
    const int direct = out && jm_as_record_run(out, &dst_base, &dst_stride) && !jm_may_overlap(out, src);
    dst = jm_record_destination(out, direct, out_descr, ndim, shape, &dst_base, &dst_stride);
    if (!dst) {
        Py_DECREF(src);
        Py_DECREF(in);
        return NULL;
    }

    if (n)
        jm_run_kernel(kernel, src_base, src_stride, dst_base, dst_stride, n);
    Py_DECREF(src);
    Py_DECREF(in);
    return jm_result_in_out(out, dst);
}

/* ------------------------------------------------------- plain float arrays (array API) -- */

const char *jm_core_text(int ncore, const npy_intp *core, char *buf) {
    int len = sprintf(buf, "(...");
    for (int d = 0; d < ncore; d++)
        len += sprintf(buf + len, ", %d", (int)core[d]);
    sprintf(buf + len, ")");
    return buf;
}

/* The computation type of a dtype (NPY_FLOAT32 / NPY_FLOAT64), or -1 when it is not real. */
static int float_type_of(PyArray_Descr *d) {
    switch (d->kind) {
    case 'f':
        return PyDataType_ELSIZE(d) <= 4 ? NPY_FLOAT32 : PyDataType_ELSIZE(d) == 8 ? NPY_FLOAT64 : -1;
    case 'b':
    case 'i':
    case 'u':
        return NPY_FLOAT64;
    default:
        return -1;
    }
}

/* `obj` as an ndarray (a new reference; arrays themselves), or NULL with a TypeError naming `arg`
   for what NumPy cannot make an array of (ragged sequences and the like). */
static PyArrayObject *array_like(PyObject *obj, const char *arg) {
    if (jm_refuse_masked(obj, arg) < 0)
        return NULL;
    if (PyArray_Check(obj)) {
        Py_INCREF(obj);
        return (PyArrayObject *)obj;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
    /* NumPy's reason, under the argument's name */
    if (!a && (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_TypeError))) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_Format(PyExc_TypeError, "%s must be an array_like of real numbers, got %s (%S)", arg,
                     Py_TYPE(obj)->tp_name, value ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    return a;
}

/* NULL with the TypeError for an array `a` (dropped) that holds no real numbers. */
static PyArrayObject *not_real_error(PyArrayObject *a, const char *arg) {
    /* long double is refused, not computed in float64: that would drop the precision it was
       chosen for without a word */
    PyErr_Format(PyExc_TypeError,
                 "%s must be an array_like of real numbers (float32, float64, float16, integers or bools), got dtype "
                 "%S%s", arg, (PyObject *)PyArray_DESCR(a),
                 PyArray_TYPE(a) == NPY_LONGDOUBLE ? " (no kernel computes in long double: pass .astype(numpy.float64))"
                                                   : "");
    Py_DECREF(a);
    return NULL;
}

/* 0 if the shape of `a` ends in `core`, else -1 with a ValueError naming `arg`. */
static int require_core(PyArrayObject *a, const char *arg, int ncore, const npy_intp *core) {
    const int ndim = PyArray_NDIM(a);
    int ok = ndim >= ncore;
    for (int d = 0; ok && d < ncore; d++)
        ok = PyArray_DIM(a, ndim - ncore + d) == core[d];
    if (ok)
        return 0;
    char text[64];
    PyObject *got = PyArray_IntTupleFromIntp(ndim, PyArray_DIMS(a));
    PyErr_Format(PyExc_ValueError, "%s must have shape %s, got shape %R", arg, jm_core_text(ncore, core, text), got);
    Py_XDECREF(got);
    return -1;
}

PyArrayObject *jm_real_array(PyObject *obj, const char *arg, int ncore, const npy_intp *core) {
    PyArrayObject *a = array_like(obj, arg);
    if (!a)
        return NULL;
    const char kind = PyArray_DESCR(a)->kind;
    if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
        return not_real_error(a, arg);
    if (require_core(a, arg, ncore, core) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

PyArrayObject *jm_float_operand(PyObject *obj, const char *arg, int ncore, const npy_intp *core) {
    PyArrayObject *a = array_like(obj, arg);
    if (!a)
        return NULL;
    const int type = float_type_of(PyArray_DESCR(a));
    if (type < 0)
        return not_real_error(a, arg);
    if (PyArray_TYPE(a) != type || !PyArray_ISNOTSWAPPED(a) || !PyArray_ISALIGNED(a)) {
        PyArrayObject *converted = jm_new_array(PyArray_NDIM(a), PyArray_DIMS(a), type);
        if (converted && PyArray_CopyInto(converted, a) < 0)
            Py_CLEAR(converted);
        Py_DECREF(a);
        if (!converted)
            return NULL;
        a = converted;
    }
    if (require_core(a, arg, ncore, core) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

int jm_broadcast_shapes(int n1, const npy_intp *s1, int n2, const npy_intp *s2, int *n, npy_intp *out) {
    const int m = n1 > n2 ? n1 : n2;
    npy_intp shape[NPY_MAXDIMS]; /* out may be s1 or s2 */
    for (int i = 0; i < m; i++) {
        npy_intp d1 = i < m - n1 ? 1 : s1[i - (m - n1)], d2 = i < m - n2 ? 1 : s2[i - (m - n2)];
        if (d1 != d2 && d1 != 1 && d2 != 1)
            return -1;
        shape[i] = d1 == 1 ? d2 : d1;
    }
    memcpy(out, shape, m * sizeof(npy_intp));
    *n = m;
    return 0;
}

/* Whether dims [from, ndim) of `a` are C-contiguous from the element size up and hold
   exactly `bytes` (dims of length 1 may have any stride). */
static int contiguous_tail(PyArrayObject *a, int from, npy_intp bytes) {
    npy_intp inner = PyArray_ITEMSIZE(a);
    for (int d = PyArray_NDIM(a) - 1; d >= from; d--) {
        if (PyArray_DIM(a, d) > 1 && PyArray_STRIDE(a, d) != inner)
            return 0;
        inner *= PyArray_DIM(a, d);
    }
    return inner == bytes;
}

/* Whether the kernel can walk `a` in place as `batch` (see jm_walk_operand); fills base/stride. */
static int walk_in_place(PyArrayObject *a, int ncore, npy_intp record_bytes, int batch_ndim, const npy_intp *batch,
                         int flags, char **base, ptrdiff_t *stride) {
    const int ndim = PyArray_NDIM(a);
    *base = PyArray_BYTES(a);
    if ((uintptr_t)*base % sizeof(float)) /* the kernels read floats (record dtypes: packed structs) */
        return 0;
    if ((flags & JM_WALK_REPEAT) && PyArray_SIZE(a) * PyArray_ITEMSIZE(a) == record_bytes &&
        contiguous_tail(a, ndim - ncore, record_bytes)) {
        *stride = 0;
        return 1;
    }
    if (ndim != batch_ndim + ncore || (batch_ndim && !PyArray_CompareLists(PyArray_DIMS(a), batch, batch_ndim)) ||
        !contiguous_tail(a, batch_ndim, record_bytes))
        return 0;
    *stride = (ptrdiff_t)record_bytes;
    if (batch_ndim == 1 && !(flags & JM_WALK_PACKED)) {
        *stride = PyArray_STRIDE(a, 0);
        return *stride % (ptrdiff_t)sizeof(float) == 0;
    }
    return contiguous_tail(a, 0, record_bytes * PyArray_MultiplyList(batch, batch_ndim)) ||
           PyArray_MultiplyList(batch, batch_ndim) <= 1;
}

int jm_walk_operand(PyArrayObject *a, int type, int ncore, npy_intp record_bytes, int batch_ndim,
                    const npy_intp *batch, int flags, jm_walk *w) {
    PyArray_Descr *descr = PyArray_DescrFromType(type); /* builtin descriptors live forever */
    Py_DECREF(descr);
    return jm_walk_records(a, descr, ncore, record_bytes, batch_ndim, batch, flags, w);
}

int jm_walk_records(PyArrayObject *a, PyArray_Descr *descr, int ncore, npy_intp record_bytes, int batch_ndim,
                    const npy_intp *batch, int flags, jm_walk *w) {
    /* a record dtype (a packed struct, so NumPy's aligned flag says nothing): the same dtype as
       NumPy compares them, records at a float's alignment (walk_in_place checks) */
    const int same_type = PyArray_TYPE(a) == descr->type_num &&
                          (descr->type_num != NPY_VOID || record_dtype_is(PyArray_DESCR(a), descr, NULL));
    if (same_type && PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a) &&
        walk_in_place(a, ncore, record_bytes, batch_ndim, batch, flags, &w->base, &w->stride)) {
        Py_INCREF(a);
        w->array = a;
        return 0;
    }
    npy_intp shape[NPY_MAXDIMS];
    if (batch_ndim + ncore > NPY_MAXDIMS)
        return PyErr_Format(PyExc_ValueError, "arrays may have at most %d dimensions", NPY_MAXDIMS), -1;
    if (batch_ndim) /* a 0-d batch may have no dims pointer */
        memcpy(shape, batch, batch_ndim * sizeof(npy_intp));
    for (int d = 0; d < ncore; d++)
        shape[batch_ndim + d] = PyArray_DIM(a, PyArray_NDIM(a) - ncore + d);
    Py_INCREF(descr);
    PyArrayObject *copy = jm_new_array_descr(batch_ndim + ncore, shape, descr);
    if (!copy || PyArray_CopyInto(copy, a) < 0) {
        Py_XDECREF(copy);
        return -1;
    }
    w->array = copy;
    w->base = PyArray_BYTES(copy);
    w->stride = (ptrdiff_t)record_bytes;
    return 0;
}

int jm_walk_output(PyArrayObject *out, int type, int ndim, const npy_intp *shape, int batch_ndim,
                   npy_intp record_bytes, int flags, const jm_walk *inputs, const npy_intp *input_record_bytes,
                   int n_inputs, jm_walk *w) {
    if (out && PyArray_ISALIGNED(out) &&
        walk_in_place(out, ndim - batch_ndim, record_bytes, batch_ndim, shape, flags & JM_WALK_PACKED, &w->base,
                      &w->stride)) {
        int separate = 1;
        for (int i = 0; separate && i < n_inputs; i++)
            separate = !jm_may_overlap(out, inputs[i].array) ||
                       (inputs[i].base == w->base && inputs[i].stride == w->stride && inputs[i].stride != 0 &&
                        input_record_bytes[i] == record_bytes);
        if (separate) {
            Py_INCREF(out);
            w->array = out;
            return 0;
        }
    }
    if (!(w->array = jm_new_array(ndim, shape, type)))
        return -1;
    w->base = PyArray_BYTES(w->array);
    w->stride = (ptrdiff_t)record_bytes;
    return 0;
}

PyObject *jm_result_in_out(PyArrayObject *out, PyArrayObject *written) {
    if (out && written != out) {
        int failed = PyArray_CopyInto(out, written) < 0;
        Py_DECREF(written);
        if (failed)
            return NULL;
        Py_INCREF(out);
        return (PyObject *)out;
    }
    return (PyObject *)written;
}

PyArrayObject *jm_new_array(int ndim, const npy_intp *shape, int type) {
    PyArray_Descr *descr = PyArray_DescrFromType(type);
    return descr ? jm_new_array_descr(ndim, shape, descr) : NULL;
}

/* the bytes of an array of `shape` and itemsize, in a double (no overflow) */
static double array_bytes(int ndim, const npy_intp *shape, npy_intp itemsize) {
    double bytes = (double)itemsize;
    for (int d = 0; d < ndim; d++)
        bytes *= (double)shape[d];
    return bytes;
}

PyArrayObject *jm_new_array_descr(int ndim, const npy_intp *shape, PyArray_Descr *descr) {
    const npy_intp itemsize = PyDataType_ELSIZE(descr);
    const double bytes = array_bytes(ndim, shape, itemsize);
    /* more than an intp counts (the double's rounding is far below the margin to 2^63); from 2^62
       bytes on no allocation succeeds anyway */
    const int overflow = bytes >= 4611686018427387904.0; /* 2^62 */
    PyArrayObject *a = NULL;
    if (!overflow)
        a = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, shape, NULL, NULL, 0, NULL);
    else
        Py_DECREF(descr);
    if (a || (!overflow && !PyErr_ExceptionMatches(PyExc_MemoryError)))
        return a;
    PyErr_Clear();
    jm_too_large_error(ndim, shape, itemsize);
    return NULL;
}

void jm_too_large_error(int ndim, const npy_intp *shape, npy_intp itemsize) {
    PyObject *dims = PyArray_IntTupleFromIntp(ndim, shape);
    char text[32];
    snprintf(text, sizeof text, "%.4g", array_bytes(ndim, shape, itemsize));
    PyErr_Format(PyExc_ValueError, "an array of shape %R (%zd-byte elements) needs %s bytes, more than can be allocated",
                 dims, (Py_ssize_t)itemsize, text);
    Py_XDECREF(dims);
}

int jm_float_out(PyObject *out_obj, int type, int ndim, const npy_intp *shape, PyArrayObject **out) {
    *out = NULL;
    if (!out_obj || out_obj == Py_None)
        return 0;
    PyArray_Descr *descr = PyArray_DescrFromType(type); /* builtin descriptors live forever */
    Py_DECREF(descr);
    if (jm_check_out(out_obj, descr, type == NPY_FLOAT32 ? "float32" : "float64", ndim, shape) < 0)
        return -1;
    *out = (PyArrayObject *)out_obj;
    return 0;
}

/* _empty(shape, dtype): a new C-ordered array; one too large to allocate is jm_new_array_descr's
   ValueError (the Python modules allocate their results through it). */
static PyObject *py_empty(PyObject *self, PyObject *args) {
    (void)self;
    PyArray_Dims shape = {NULL, 0};
    PyArray_Descr *descr = NULL;
    PyObject *a = NULL;
    if (PyArg_ParseTuple(args, "O&O&:_empty", PyArray_IntpConverter, &shape, PyArray_DescrConverter, &descr))
        a = (PyObject *)jm_new_array_descr(shape.len, shape.ptr, descr); /* steals descr */
    else
        Py_XDECREF(descr);
    PyDimMem_FREE(shape.ptr);
    return a;
}

static PyObject *py_gil_releases(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLongLong(jm_gil_releases);
}

/* ---------------------------------------------------------------------- module -- */

static PyMethodDef core_methods[] = {
    {"isa", py_isa, METH_NOARGS,
     "isa()\n--\n\n"
     "The name of the running ISA path.\n\n"
     "Returns\n"
     "-------\n"
     "str\n"
     "    ``'scalar'``, ``'sse'``, ``'avx2'`` or ``'avx512'`` on x86-64; ``'scalar'`` or\n"
     "    ``'neon'`` on arm64. The best path this CPU and OS run is chosen at import;\n"
     "    ``JOINTMATH_ISA`` in the environment forces one.\n\n"
     "See Also\n"
     "--------\n"
     "available_isas\n\n"
     "Examples\n"
     "--------\n"
     ">>> import jointmath as jm\n"
     ">>> jm.isa() in jm.available_isas()\n"
     "True"},
    {"available_isas", py_available_isas, METH_NOARGS,
     "available_isas()\n--\n\n"
     "The ISA paths this CPU and OS can run, from scalar up.\n\n"
     "Returns\n"
     "-------\n"
     "list of str\n"
     "    ``['scalar', 'sse', 'avx2', 'avx512']`` on an x86-64 CPU with AVX-512,\n"
     "    ``['scalar', 'neon']`` on arm64; any other CPU has ``['scalar']``.\n\n"
     "See Also\n"
     "--------\n"
     "isa\n\n"
     "Examples\n"
     "--------\n"
     ">>> import jointmath as jm\n"
     ">>> jm.available_isas()[0]\n"
     "'scalar'"},
    {"_set_isa", py_set_isa, METH_O, "Switch the running path (tests and benchmarks)."},
    {"_gil_releases", py_gil_releases, METH_NOARGS, "How many kernel calls have run without the GIL (tests)."},
    {"_empty", py_empty, METH_VARARGS,
     "_empty(shape, dtype)\n--\n\nInternal: numpy.empty(shape, dtype), C order; a result too large to allocate is a "
     "ValueError saying how large (not MemoryError), as every public function raises."},
    {"_register_dtypes", py_register_dtypes, METH_VARARGS,
     "Register JOINT_QUAT, JOINT_MAT, PACKED_JOINT and PACKED_JOINT64."},
    {"_register_euler_by_order", py_register_euler_by_order, METH_O,
     "Register the Python function that runs the Euler functions for a sequence of orders."},
    {"_set_memory_limit", py_set_memory_limit, METH_O,
     "Set the bytes an output may take at most (resample_joints); 0: no limit known."},
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
                jm_active = jm_isa_table(i);
                break;
            }
    }
    PyObject *module = PyModule_Create(&core_module);
    if (module && (PyModule_AddFunctions(module, jm_convert_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_pack_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_extract_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_compose_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_interp_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_euler_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_motion_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_arrays_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_algebra_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_fit_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_codec_methods) < 0 ||
                   PyModule_AddFunctions(module, jm_codec_write_methods) < 0))
        Py_CLEAR(module);
    return module;
}
