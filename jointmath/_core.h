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

extern const jm_kernel_table *jm_active;    /* the running ISA path */
extern PyArray_Descr *jm_joint_quat_descr;  /* jointmath.JOINT_QUAT, registered by _records.py */
extern PyArray_Descr *jm_joint_mat_descr;   /* jointmath.JOINT_MAT */

/* Fills slots[0..n) from FASTCALL arguments named `names`; the first `required` are mandatory. */
int jm_parse_args(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  const char *const *names, int n, int required, PyObject **slots);

/* `obj` (an ndarray or one record of one) as a new reference to an ndarray of a dtype equivalent
   to `descr`, or NULL with a TypeError naming `arg`. */
PyArrayObject *jm_record_array(PyObject *obj, const char *arg, PyArray_Descr *descr, const char *dtype_name);

/* 0 if `a` has exactly `shape`, else -1 with a ValueError "<what> <shape>, got shape <a's>". */
int jm_require_shape(PyArrayObject *a, int ndim, const npy_intp *shape, const char *what);

/* 0 if `out` is a writeable ndarray of `descr` with exactly `shape`, else -1 with an error set. */
int jm_check_out(PyObject *out, PyArray_Descr *descr, const char *dtype_name, int ndim, const npy_intp *shape);

/* 1 if the array is one run of records (base + i * stride), else 0; fills base and stride. */
int jm_as_record_run(PyArrayObject *a, char **base, ptrdiff_t *stride);

/* `a` (new reference) if it is one run of records, else a C-ordered copy; fills base and stride. */
PyArrayObject *jm_record_run_or_copy(PyArrayObject *a, char **base, ptrdiff_t *stride);

/* Whether the memory extents of two arrays intersect. */
int jm_may_overlap(PyArrayObject *a, PyArrayObject *b);

/* Runs a record kernel, without the GIL when n >= GIL_RELEASE_MIN_RECORDS. */
void jm_run_kernel(jm_map_kernel kernel, const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n);

/* Applies a record kernel from `in_obj` to a new array or `out_obj` of the same shape. */
PyObject *jm_map_records(PyObject *in_obj, const char *in_arg, PyArray_Descr *in_descr, const char *in_name,
                         PyObject *out_obj, PyArray_Descr *out_descr, const char *out_name, jm_map_kernel kernel);

/* The method tables of the kernel families, added to the module at import. */
extern PyMethodDef jm_convert_methods[];
extern PyMethodDef jm_pack_methods[];
extern PyMethodDef jm_extract_methods[];
extern PyMethodDef jm_compose_methods[];
extern PyMethodDef jm_interp_methods[];
extern PyMethodDef jm_euler_methods[];
extern PyMethodDef jm_motion_methods[];  /* BVH MOTION text, jointmath/_motion.c */

#endif /* JM_CORE_H */
