/*
 * _core.h - what the boundary files of jointmath._core share: the running ISA path, the record
 * dtypes, and the argument helpers every public function checks its input with.
 */
#ifndef JM_CORE_H
#define JM_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define PY_ARRAY_UNIQUE_SYMBOL jointmath_ARRAY_API
#ifndef JM_CORE_MODULE
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "jointmath.h"

/* Below this many records a kernel runs with the GIL held (releasing costs more than it buys). */
#define GIL_RELEASE_MIN_RECORDS 4096

/* Every kernel call that runs without the GIL is bracketed by these two:
       PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
       kernel(...);
       jm_restore_gil(saved);
   jm_release_gil(0) keeps the GIL and returns NULL. jm_gil_releases counts the releases since
   import (under the GIL), so that tests can see each boundary release it (_core._gil_releases()). */
extern unsigned long long jm_gil_releases;
static inline PyThreadState *jm_release_gil(int release) {
    if (!release)
        return NULL;
    jm_gil_releases++;
    return PyEval_SaveThread();
}
static inline void jm_restore_gil(PyThreadState *saved) {
    if (saved)
        PyEval_RestoreThread(saved);
}
/* That bracket around `...` (a kernel call, or a statement assigning its result). */
#define JM_RELEASING_GIL(release, ...)                                                                               \
    do {                                                                                                              \
        PyThreadState *jm_saved_thread = jm_release_gil(release);                                                     \
        __VA_ARGS__;                                                                                                  \
        jm_restore_gil(jm_saved_thread);                                                                              \
    } while (0)

extern const jm_kernel_table *jm_active;    /* the running ISA path */
extern PyArray_Descr *jm_joint_quat_descr;  /* jointmath.JOINT_QUAT, registered by _records.py */
extern PyArray_Descr *jm_joint_mat_descr;   /* jointmath.JOINT_MAT */
extern PyArray_Descr *jm_packed_joint_descr;   /* jointmath.PACKED_JOINT: uint32 code, float32 t[3] */
extern PyArray_Descr *jm_packed_joint64_descr; /* jointmath.PACKED_JOINT64: uint64 code, float32 t[3] */
extern PyObject *jm_euler_by_order; /* jointmath._euler._by_order (a sequence of orders), registered by _euler.py */
extern double jm_memory_limit;      /* bytes an output may take at most, registered by _memory.py; 0: unknown */
#define JM_PACKED_JOINT_BYTES 16   /* packed structs: the code at offset 0, t at the code's size */
#define JM_PACKED_JOINT64_BYTES 20

/* Fills slots[0..n) from FASTCALL arguments named `names`; the first `required` are mandatory. */
int jm_parse_args(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  const char *const *names, int n, int required, PyObject **slots);

/* A public function of the record and array API, METH_FASTCALL | METH_KEYWORDS: its definition
   line (py_<name>) and its method table entry (documented by <name>_doc). */
#define JM_FASTCALL_FUNCTION(name)                                                                                   \
    static PyObject *py_##name(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
#define JM_FASTCALL_METHOD(name)                                                                                     \
    {#name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL | METH_KEYWORDS, name##_doc}

/* The number of elements of an array (not a pointer): one argument list's names, written once. */
#define JM_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* An int argument as NumPy reads one (a Python or NumPy integer, a 0-d integer array, any object
   with __index__; not a bool) as a Py_ssize_t, clipped to PY_SSIZE_T_MIN / MAX when it overflows
   (a caller's range check then reports the value as given); -1 with a TypeError "<name> must be
   an int, got <what>" for anything else. */
int jm_parse_int(PyObject *obj, const char *name, Py_ssize_t *value);

/* A flag argument (degrees, return_iterations): a Python bool or a NumPy bool scalar, read as 0
   or 1; anything else (an int, a str, None, an array) is -1 with a TypeError "<name> must be a
   bool, got <what>", as the truthiness of "no" or 1 would silently read as True. */
int jm_parse_flag(PyObject *obj, const char *name);

/* Whether `obj` is an integer as jm_parse_int reads one (without reading it). */
int jm_is_integer(PyObject *obj);

/* A real-number argument as NumPy reads one: a Python int or float, a NumPy integer or floating
   scalar, a 0-d integer or float array, any object with __float__ or __index__ (a Fraction, a
   Decimal). A bool (Python's, NumPy's, a bool array), complex, str or an array of another shape
   is a TypeError "<name> must be <expected>, got <what>". A value beyond a double's range (an int
   or Fraction) reads as inf: the caller's range check then reports it as given. 0 or -1. */
int jm_parse_real(PyObject *obj, const char *name, const char *expected, double *value);

/* 0, or -1 with a TypeError naming `arg` when `obj` is a numpy.ma.MaskedArray: the kernels read
   an array's data, so its mask would be dropped (pass obj.filled(value) or obj.data instead).
   Inline: an ndarray itself or an object that is no array costs a type comparison or two. */
int jm_refuse_masked_subclass(PyObject *obj, const char *arg);
static inline int jm_refuse_masked(PyObject *obj, const char *arg) {
    return PyArray_CheckExact(obj) || !PyArray_Check(obj) ? 0 : jm_refuse_masked_subclass(obj, arg);
}

/* A float64 array of quaternions (..., 4) for a float32 kernel that uses only their directions
   (make_continuous' prev, extract_rotation's q0): a C-ordered float64 copy (new reference) with
   each quaternion scaled by the power of two that puts its largest |component| in [0.5, 1) (zero,
   inf and NaN as they are), so that the cast to float32 keeps every direction, where a cast alone
   took 1e-50 to 0 and 1e50 to inf. */
PyArrayObject *jm_quats_in_float32_range(PyArrayObject *quats);

/* `obj` (an ndarray or one record of one) as a new reference to an ndarray of a dtype equivalent
   to `descr`, or NULL with a TypeError naming `arg`. */
PyArrayObject *jm_record_array(PyObject *obj, const char *arg, PyArray_Descr *descr, const char *dtype_name);

/*
 * `obj` as a new reference to an ndarray of dtype `descr` or (alt, unless NULL) `alt`, compared as
 * NumPy's == compares dtypes; one record indexed out of such an array (np.void) as a 0-d array.
 * Anything else: NULL with a TypeError "<arg> must be a numpy array of dtype
 * jointmath.<dtype_names>, got <dtype or type>".
 */
PyArrayObject *jm_record_operand(PyObject *obj, const char *arg, PyArray_Descr *descr, PyArray_Descr *alt,
                                 const char *dtype_names);

/* The name of obj's type as Python's type(obj).__name__ says it ("float64", not "numpy.float64"). */
const char *jm_type_name(PyObject *obj);

/* 0 if `a` has exactly `shape`, else -1 with a ValueError "<what> <shape>, got shape <a's>". */
int jm_require_shape(PyArrayObject *a, int ndim, const npy_intp *shape, const char *what);

/* 0 if `out` is a writeable ndarray of `descr` with exactly `shape`, else -1 with an error set. */
int jm_check_out(PyObject *out, PyArray_Descr *descr, const char *dtype_name, int ndim, const npy_intp *shape);

/* 1 if the array is one run of records (base + i * stride), else 0; fills base and stride. */
int jm_as_record_run(PyArrayObject *a, char **base, ptrdiff_t *stride);

/* `a` (new reference) if it is one run of records, else a C-ordered copy (one too large to
   allocate: jm_new_array_descr's ValueError); fills base and stride. */
PyArrayObject *jm_record_run_or_copy(PyArrayObject *a, char **base, ptrdiff_t *stride);

/* Whether the memory extents of two arrays intersect. */
int jm_may_overlap(PyArrayObject *a, PyArrayObject *b);

/* Runs a record kernel, without the GIL when n >= GIL_RELEASE_MIN_RECORDS. */
void jm_run_kernel(jm_map_kernel kernel, const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n);

/* Applies a record kernel from `in_obj` to a new array or `out_obj` of the same shape. */
PyObject *jm_map_records(PyObject *in_obj, const char *in_arg, PyArray_Descr *in_descr, const char *in_name,
                         PyObject *out_obj, PyArray_Descr *out_descr, const char *out_name, jm_map_kernel kernel);

/* ----------------------------------------------------- plain float arrays (array API) -- */

/*
 * `obj`, array_like as NumPy's ufuncs take it (arrays, NumPy scalars, lists, tuples, Python
 * numbers), as a new reference to an aligned, native-byte-order float32 or float64 ndarray whose
 * shape ends in `core` (ncore dims): float32 and float16 give float32; float64, integers and
 * bools give float64. A native aligned float32/float64 ndarray is returned itself (no copy, any
 * strides). Complex, object, string, datetime, void and long double data raise a TypeError
 * naming `arg`; a shape not ending in `core` a ValueError naming `arg`.
 */
PyArrayObject *jm_float_operand(PyObject *obj, const char *arg, int ncore, const npy_intp *core);

/* `obj`, array_like, as a new reference to an ndarray of real numbers (floats of any size,
   integers, bools; not converted) whose shape ends in `core`: errors as jm_float_operand's. */
PyArrayObject *jm_real_array(PyObject *obj, const char *arg, int ncore, const npy_intp *core);

/* NumPy broadcasting of two batch shapes into `out` (n1, n2 <= NPY_MAXDIMS; out may be s1 or s2);
   0, or -1 (no error set). */
int jm_broadcast_shapes(int n1, const npy_intp *s1, int n2, const npy_intp *s2, int *n, npy_intp *out);

/* How a kernel walks n records of an array: record i at base + i * stride (stride 0: one
   record repeated). `array` is the reference that keeps the memory alive. */
typedef struct {
    PyArrayObject *array;
    char *base;
    ptrdiff_t stride;
} jm_walk;

#define JM_WALK_PACKED 1 /* the kernel needs the records one after another (stride = record size) */
#define JM_WALK_REPEAT 2 /* an operand holding a single record is repeated (stride 0) */

/*
 * Fills `w` with how a kernel walks `a` (ncore trailing core dims, records of record_bytes) as
 * the batch shape `batch`: `a` itself when it has dtype `type` and its records can be walked in
 * place (0-d/1-d batch at any stride unless JM_WALK_PACKED, or C-contiguous; one record
 * repeated under JM_WALK_REPEAT), else a C-ordered copy cast to `type` and broadcast to `batch`.
 * 0, or -1 with an error set. jm_walk_release drops the reference.
 */
int jm_walk_operand(PyArrayObject *a, int type, int ncore, npy_intp record_bytes, int batch_ndim,
                    const npy_intp *batch, int flags, jm_walk *w);
/* The same for an operand of any dtype `descr` (record dtypes included: compared as NumPy's ==
   compares dtypes; walked in place only at a float's alignment, since the kernels read floats). */
int jm_walk_records(PyArrayObject *a, PyArray_Descr *descr, int ncore, npy_intp record_bytes, int batch_ndim,
                    const npy_intp *batch, int flags, jm_walk *w);
static inline void jm_walk_release(jm_walk *w) { Py_CLEAR(w->array); }

/*
 * The destination of a kernel writing records of record_bytes (shape = batch + core dims,
 * ndim in all): `out` itself when it is given, aligned, walkable (as jm_walk_operand) and
 * overlaps none of the n_inputs inputs except one walked record for record on the same memory
 * with records of the same size (read before written); else a new C-ordered array of `type`
 * (too large to allocate: a ValueError saying how large). 0 or -1.
 */
int jm_walk_output(PyArrayObject *out, int type, int ndim, const npy_intp *shape, int batch_ndim,
                   npy_intp record_bytes, int flags, const jm_walk *inputs, const npy_intp *input_record_bytes,
                   int n_inputs, jm_walk *w);

/* The result of a call that wrote `written` (a reference to it is stolen): `out` (after copying
   `written` into it when they differ) or `written`. A new reference, or NULL. */
PyObject *jm_result_in_out(PyArrayObject *out, PyArrayObject *written);

/* The result of a call that wrote into `w`: jm_result_in_out of w's array; releases w. */
static inline PyObject *jm_output_result(PyArrayObject *out, jm_walk *w) {
    PyArrayObject *written = w->array;
    w->array = NULL;
    return jm_result_in_out(out, written);
}

/* A new C-ordered array of `type` (a result or a working copy); one too large to allocate is a
   ValueError saying its shape and how many bytes it needs (not a MemoryError). */
PyArrayObject *jm_new_array(int ndim, const npy_intp *shape, int type);

/* The same of dtype `descr` (a reference to it is stolen, as PyArray_NewFromDescr does). */
PyArrayObject *jm_new_array_descr(int ndim, const npy_intp *shape, PyArray_Descr *descr);

/* The array a record kernel writes: `out` itself (a new reference) when `direct` (the caller
   found it one run of records, filling *base and *stride with jm_as_record_run, that may be
   written while the inputs are read), else a new C-ordered array of `descr` (a reference to it
   is taken here) and `shape`, its base and stride filled; NULL with jm_new_array_descr's error. */
static inline PyArrayObject *jm_record_destination(PyArrayObject *out, int direct, PyArray_Descr *descr, int ndim,
                                                   const npy_intp *shape, char **base, ptrdiff_t *stride) {
    if (direct) {
        Py_INCREF(out);
        return out;
    }
    Py_INCREF(descr);
    PyArrayObject *dst = jm_new_array_descr(ndim, shape, descr);
    if (dst)
        jm_as_record_run(dst, base, stride);
    return dst;
}

/* Sets that ValueError for an array or block of `shape` and itemsize bytes per element. */
void jm_too_large_error(int ndim, const npy_intp *shape, npy_intp itemsize);

/* `out` checked for a plain-array function: None -> NULL (no error); else an ndarray of dtype
   `type` (float32/float64) and exactly `shape`, writeable; -1 with an error set otherwise. */
int jm_float_out(PyObject *out_obj, int type, int ndim, const npy_intp *shape, PyArrayObject **out);

/* "(..., 3, 3)" for core {3, 3}: into buf (at least 64 bytes). */
const char *jm_core_text(int ncore, const npy_intp *core, char *buf);

/* The method tables of the kernel families, added to the module at import. */
extern PyMethodDef jm_convert_methods[];
extern PyMethodDef jm_pack_methods[];
extern PyMethodDef jm_extract_methods[];
extern PyMethodDef jm_compose_methods[];
extern PyMethodDef jm_interp_methods[];
extern PyMethodDef jm_euler_methods[];
extern PyMethodDef jm_motion_methods[];  /* BVH MOTION text, jointmath/_motion.c */
extern PyMethodDef jm_arrays_methods[];
extern PyMethodDef jm_algebra_methods[]; /* rotation algebra, jointmath/_algebra.c */
extern PyMethodDef jm_fit_methods[];    /* quat_mean, align_vectors, random_quats, jointmath/_fit.c */
extern PyMethodDef jm_codec_methods[];   /* compressed clips, jointmath/_codec.c */
extern PyMethodDef jm_codec_write_methods[]; /* their Rice streams written, jointmath/_codec_write.c */

#endif /* JM_CORE_H */
