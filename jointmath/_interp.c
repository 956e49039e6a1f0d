/*
 * _interp.c - boundary of the interpolation kernels (csrc/interp.c): slerp_joints and
 * lerp_joints on JOINT_QUAT arrays, the float32 / float64 entry point of slerp / nlerp on
 * (..., 4) arrays (jointmath/_interp.py), and the libm baseline the benchmarks compare against.
 */
#include "_core.h"

#include <string.h>

/* t: a real number in [0, 1] (NaN refused), as float32. */
static int parse_fraction(PyObject *obj, float *t) {
    if (PyArray_Check(obj) && PyArray_NDIM((PyArrayObject *)obj) > 0) {
        PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM((PyArrayObject *)obj), PyArray_DIMS((PyArrayObject *)obj));
        PyErr_Format(PyExc_TypeError, "t must be a float in [0, 1], got an array of shape %R", shape);
        Py_XDECREF(shape);
        return -1;
    }
    double v = PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "t must be a float in [0, 1], got %s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (!(v >= 0.0 && v <= 1.0)) {
        PyObject *f = PyFloat_FromDouble(v);
        if (f)
            PyErr_Format(PyExc_ValueError, "t must be in [0, 1], got %R", f);
        Py_XDECREF(f);
        return -1;
    }
    *t = (float)v;
    return 0;
}

/*
 * index: a 1-D array (or sequence) of distinct integer positions in [0, n_joints), as a
 * C-contiguous, strictly increasing intp array (new reference; sorted when it came in another
 * order: the kernels need that, and which joints are selected does not depend on the order).
 * private_copy: never the caller's array itself (a kernel that runs without the GIL must not
 * read an index another thread may change after the check). An empty sequence of any dtype is
 * accepted.
 */
static PyArrayObject *parse_index(PyObject *obj, int joints_ndim, npy_intp n_joints, int private_copy) {
    if (joints_ndim == 0) {
        PyErr_SetString(PyExc_ValueError, "index needs joints with a joints axis, got a single record");
        return NULL;
    }
    PyArrayObject *raw;
    if (PyArray_Check(obj)) { /* (Py_NewRef is 3.10+; the package supports 3.9) */
        Py_INCREF(obj);
        raw = (PyArrayObject *)obj;
    } else if (!(raw = (PyArrayObject *)PyArray_FROM_O(obj))) {
        return NULL;
    }
    if (PyArray_NDIM(raw) != 1) {
        PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(raw), PyArray_DIMS(raw));
        PyErr_Format(PyExc_ValueError, "index must be a 1-D array of joint positions, got shape %R", shape);
        Py_XDECREF(shape);
        Py_DECREF(raw);
        return NULL;
    }
    if (PyArray_SIZE(raw) && !PyArray_ISINTEGER(raw)) {
        PyErr_Format(PyExc_TypeError, "index must be an array of integers, got dtype %S", (PyObject *)PyArray_DESCR(raw));
        Py_DECREF(raw);
        return NULL;
    }
    PyArrayObject *idx = raw; /* an aligned, contiguous intp array is used as it is */
    if (private_copy || PyArray_TYPE(raw) != NPY_INTP || !PyArray_IS_C_CONTIGUOUS(raw) || !PyArray_ISALIGNED(raw)) {
        idx = (PyArrayObject *)PyArray_FROMANY((PyObject *)raw, NPY_INTP, 1, 1,
                                               NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST |
                                                   (private_copy ? NPY_ARRAY_ENSURECOPY : 0));
        Py_DECREF(raw);
        if (!idx)
            return NULL;
    }
    const npy_intp *v = (const npy_intp *)PyArray_DATA(idx), m = PyArray_SIZE(idx);
    if (jm_active->index_increasing((const intptr_t *)v, (size_t)m, (size_t)n_joints))
        return idx;
    /* another order, or a bad value: find the first bad value, else sort */
    unsigned char *seen = PyMem_Calloc((size_t)n_joints + 1, 1);
    if (!seen) {
        Py_DECREF(idx);
        return (PyArrayObject *)PyErr_NoMemory();
    }
    for (npy_intp k = 0; k < m; k++) {
        if (v[k] < 0 || v[k] >= n_joints) {
            PyErr_Format(PyExc_ValueError, "index value %zd is out of range for %zd joints (expected 0 <= index < %zd)",
                         (Py_ssize_t)v[k], (Py_ssize_t)n_joints, (Py_ssize_t)n_joints);
            break;
        }
        if (seen[v[k]]) {
            PyErr_Format(PyExc_ValueError, "index value %zd appears more than once", (Py_ssize_t)v[k]);
            break;
        }
        seen[v[k]] = 1;
    }
    PyArrayObject *sorted = NULL;
    if (!PyErr_Occurred()) {
        npy_intp dim = m;
        sorted = (PyArrayObject *)PyArray_SimpleNew(1, &dim, NPY_INTP);
        if (sorted) {
            npy_intp *w = (npy_intp *)PyArray_DATA(sorted);
            for (npy_intp j = 0; j < n_joints; j++)
                if (seen[j])
                    *w++ = j;
        }
    }
    PyMem_Free(seen);
    Py_DECREF(idx);
    return sorted;
}

/* The same records in the same places (both are runs of equal length). */
static int same_run(const char *b1, ptrdiff_t s1, const char *b2, ptrdiff_t s2) { return b1 == b2 && s1 == s2; }

/*
 * The body of slerp_joints / lerp_joints / _slerp_joints_libm: checks every argument, then runs
 * `kernel` (or `indexed` when index is given; indexed NULL: the function has no index).
 */
static PyObject *blend_joints(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                              jm_blend_kernel kernel, jm_blend_indexed_kernel indexed) {
    static const char *const with_index[] = {"joints", "blend", "t", "index", "out"};
    static const char *const without_index[] = {"joints", "blend", "t", "out"};
    const int n_names = indexed ? 5 : 4;
    PyObject *slots[5] = {NULL};
    if (jm_parse_args(func, args, nargs, kwnames, indexed ? with_index : without_index, n_names, 3, slots) < 0)
        return NULL;
    PyObject *index_obj = indexed ? slots[3] : NULL, *out_obj = slots[n_names - 1];
    if (index_obj == Py_None)
        index_obj = NULL;
    if (out_obj == Py_None)
        out_obj = NULL;
    PyArray_Descr *descr = jm_joint_quat_descr;
    if (!descr)
        return PyErr_Format(PyExc_RuntimeError, "jointmath record dtypes are not registered");

    PyArrayObject *a = NULL, *b = NULL, *idx = NULL, *src_a = NULL, *src_b = NULL, *dst = NULL;
    PyObject *result = NULL;
    float t;
    if (!(a = jm_record_array(slots[0], "joints", descr, "JOINT_QUAT")) ||
        !(b = jm_record_array(slots[1], "blend", descr, "JOINT_QUAT")))
        goto done;
    const int ndim = PyArray_NDIM(a);
    const npy_intp *shape = PyArray_DIMS(a);
    if (jm_require_shape(b, ndim, shape, "blend must have the shape of joints") < 0)
        goto done;
    if (parse_fraction(slots[2], &t) < 0)
        goto done;
    const npy_intp n_joints = ndim ? shape[ndim - 1] : 1;
    const size_t n = (size_t)PyArray_SIZE(a);
    const int release = n >= GIL_RELEASE_MIN_RECORDS;
    if (index_obj && !(idx = parse_index(index_obj, ndim, n_joints, release)))
        goto done;
    if (out_obj && jm_check_out(out_obj, descr, "jointmath.JOINT_QUAT", ndim, shape) < 0)
        goto done;

    char *a_base, *b_base, *o_base;
    ptrdiff_t a_stride, b_stride, o_stride;
    if (!(src_a = jm_record_run_or_copy(a, &a_base, &a_stride)) ||
        !(src_b = jm_record_run_or_copy(b, &b_base, &b_stride)))
        goto done;

    /* out is written directly when it is a run that is either one of the inputs record for
       record (every record is read before it is written; not blend when indexed: the copy of the
       unselected joints would overwrite it) or does not overlap them; else a temporary. */
    PyArrayObject *out = (PyArrayObject *)out_obj;
    if (out && jm_as_record_run(out, &o_base, &o_stride) &&
        (same_run(o_base, o_stride, a_base, a_stride) || !jm_may_overlap(out, src_a)) &&
        ((!idx && same_run(o_base, o_stride, b_base, b_stride)) || !jm_may_overlap(out, src_b))) {
        dst = out;
        Py_INCREF(dst);
    } else {
        Py_INCREF(descr);
        dst = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, shape, NULL, NULL, 0, NULL);
        if (!dst)
            goto done;
        jm_as_record_run(dst, &o_base, &o_stride);
    }

    PyThreadState *saved = jm_release_gil(release);
    if (!n) {
        /* nothing to do */
    } else if (idx) {
        indexed(a_base, a_stride, b_base, b_stride, o_base, o_stride, n / (size_t)n_joints, (size_t)n_joints,
                (const intptr_t *)PyArray_DATA(idx), (size_t)PyArray_SIZE(idx), t);
    } else {
        kernel(a_base, a_stride, b_base, b_stride, o_base, o_stride, n, t);
    }
    jm_restore_gil(saved);

    if (out && dst != out) {
        if (PyArray_CopyInto(out, dst) < 0)
            goto done;
        Py_INCREF(out);
        result = (PyObject *)out;
    } else {
        Py_INCREF(dst);
        result = (PyObject *)dst;
    }
done:
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(idx);
    Py_XDECREF(src_a);
    Py_XDECREF(src_b);
    Py_XDECREF(dst);
    return result;
}

PyDoc_STRVAR(slerp_joints_doc,
             "slerp_joints(joints, blend, t, index=None, out=None)\n--\n\n"
             "Spherical linear interpolation from one joint list to another.\n\n"
             "joints, blend: JOINT_QUAT arrays of the same shape (frames x joints ...).\n"
             "t: float in [0, 1], the fraction of the way from joints to blend.\n"
             "index: optional 1-D integer array of distinct positions along the last axis\n"
             "(the joints): only those joints are interpolated, in every frame; the others\n"
             "are copied from joints (partial-body blending). The kernel reads the selected\n"
             "joints through the index; nothing is gathered into temporaries.\n"
             "out: optional writeable JOINT_QUAT array of the same shape; it is returned.\n"
             "out=joints interpolates in place.\n\n"
             "Returns the joints with q = slerp(joints.q, blend.q, t) along the shortest arc\n"
             "(blend.q is negated when the dot product is negative) and t interpolated\n"
             "linearly. t = 0 returns joints' values exactly; t = 1 returns blend's t and the\n"
             "end of the arc, blend.q or -blend.q (where the dot product is negative), exactly,\n"
             "so a sampled curve never jumps hemisphere at its last sample. Nearly parallel\n"
             "pairs fall back to lerp; identical and antipodal pairs never give NaN.\n"
             "The quaternions must be unit ones (they are not normalised).\n"
             "Accuracy for unit quaternions on every ISA path: max abs component error\n"
             "<= 5e-7 against a float64 slerp, | |q| - 1 | <= 1e-6.\n\n"
             "Raises TypeError for wrong types or dtypes (naming the argument), ValueError\n"
             "for t outside [0, 1] or NaN, mismatched shapes, an index out of range or\n"
             "repeated, or a read-only out.");

static PyObject *py_slerp_joints(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    return blend_joints("slerp_joints", args, nargs, kwnames, jm_active->slerp_joints, jm_active->slerp_joints_indexed);
}

PyDoc_STRVAR(lerp_joints_doc,
             "lerp_joints(joints, blend, t, index=None, out=None)\n--\n\n"
             "Normalised linear interpolation (nlerp) from one joint list to another.\n\n"
             "Arguments, index, out=, errors and the exact t = 0 / t = 1 results (t = 1: the\n"
             "arc's end, +-blend.q) as for slerp_joints. The rotation is\n"
             "normalize((1 - t) joints.q +- t blend.q) (shortest arc), the translation is\n"
             "interpolated linearly. Faster than slerp_joints and on the same arc, but not at\n"
             "constant angular speed. The quaternions may have any finite scale (2^-149 to\n"
             "FLT_MAX, each its own): the result is that normalised sum as written; two zero\n"
             "quaternions give NaN.\n"
             "Accuracy on every ISA path, any scale: max abs component error <= 3e-7\n"
             "against a float64 nlerp.");

static PyObject *py_lerp_joints(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    return blend_joints("lerp_joints", args, nargs, kwnames, jm_active->lerp_joints, jm_active->lerp_joints_indexed);
}

static PyObject *py_slerp_joints_libm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    return blend_joints("_slerp_joints_libm", args, nargs, kwnames, jm_slerp_joints_libm, NULL);
}

/* ------------------------------------------- float32 kernels for the array API -- */

/* A C-contiguous array of `type` (float32 or float64) holding 1 or n records of `floats`
   floats: its record stride in bytes (0 for one record, which is then repeated), or -1. */
static ptrdiff_t broadcast_stride(PyArrayObject *a, int type, npy_intp n, npy_intp floats) {
    if (PyArray_TYPE(a) != type || !PyArray_IS_C_CONTIGUOUS(a))
        return -1;
    if (PyArray_SIZE(a) == floats)
        return 0;
    return PyArray_SIZE(a) == n * floats ? (ptrdiff_t)(floats * PyArray_ITEMSIZE(a)) : -1;
}

/* No input overlaps out except one holding exactly out's elements (read before written). */
static int separate_or_same(PyArrayObject *in, PyArrayObject *out) {
    return !jm_may_overlap(in, out) || (PyArray_BYTES(in) == PyArray_BYTES(out) && PyArray_SIZE(in) == PyArray_SIZE(out));
}

/* Every fraction (float32 or float64) in [0, 1] (NaN refused), else a ValueError naming the first
   one outside. */
static int check_fractions(PyArrayObject *t) {
    const int f64 = PyArray_TYPE(t) == NPY_FLOAT64;
    const float *v = (const float *)PyArray_DATA(t);
    const double *vd = (const double *)PyArray_DATA(t);
    const npy_intp n = PyArray_SIZE(t);
    int inside = 1;
    if (f64)
        for (npy_intp i = 0; i < n; i++)
            inside &= vd[i] >= 0.0 && vd[i] <= 1.0;
    else
        for (npy_intp i = 0; i < n; i++)
            inside &= v[i] >= 0.0f && v[i] <= 1.0f;
    if (inside)
        return 0;
    for (npy_intp i = 0; i < n; i++)
        if (!(f64 ? vd[i] >= 0.0 && vd[i] <= 1.0 : v[i] >= 0.0f && v[i] <= 1.0f)) {
            PyObject *f = PyFloat_FromDouble(f64 ? vd[i] : v[i]);
            if (f)
                PyErr_Format(PyExc_ValueError, "t must be in [0, 1], got %R", f);
            Py_XDECREF(f);
            break;
        }
    return -1;
}

/*
 * _blend_float32(kernel_name, q0, q1, t, out): kernel "slerp" or "nlerp" from float32 q0, q1
 * (C-contiguous, 1 or n quaternions) and t (C-contiguous float32, 1 or n values, checked to be
 * in [0, 1]) into out (C-contiguous float32, n quaternions; through a temporary when it
 * overlaps an input other than record for record); with float64 q0, q1, t and out, the float64
 * kernels (slerp_quats_f64, nlerp_quats_f64). jointmath/_interp.py checks and broadcasts the
 * arguments first; the layout checks here only make a wrong internal call fail loudly.
 */
static PyObject *py_blend_float32(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    PyArrayObject *q0, *q1, *t, *out;
    if (!PyArg_ParseTuple(args, "sO!O!O!O!", &name, &PyArray_Type, &q0, &PyArray_Type, &q1, &PyArray_Type, &t,
                          &PyArray_Type, &out))
        return NULL;
    const int f64 = PyArray_TYPE(q0) == NPY_FLOAT64, type = f64 ? NPY_FLOAT64 : NPY_FLOAT32;
    jm_quat_blend_kernel kernel;
    if (strcmp(name, "slerp") == 0)
        kernel = f64 ? jm_active->slerp_quats_f64 : jm_active->slerp_quats;
    else if (strcmp(name, "nlerp") == 0)
        kernel = f64 ? jm_active->nlerp_quats_f64 : jm_active->nlerp_quats;
    else
        return PyErr_Format(PyExc_ValueError, "unknown float32 kernel '%s'", name);
    const npy_intp n = PyArray_SIZE(out) / 4;
    const ptrdiff_t s0 = broadcast_stride(q0, type, n, 4), s1 = broadcast_stride(q1, type, n, 4),
                    ts = broadcast_stride(t, type, n, 1);
    if (PyArray_TYPE(out) != type || !PyArray_IS_C_CONTIGUOUS(out) || !PyArray_ISWRITEABLE(out) ||
        PyArray_SIZE(out) % 4 || s0 < 0 || s1 < 0 || ts < 0)
        return PyErr_Format(PyExc_ValueError, "_blend_float32: q0, q1, t and out must be C-contiguous arrays of one "
                                              "dtype, float32 or float64, of 1 or n records each, out writeable");
    if (check_fractions(t) < 0)
        return NULL;
    PyArrayObject *dst = out;
    if (!separate_or_same(q0, out) || !separate_or_same(q1, out) || !separate_or_same(t, out)) {
        dst = (PyArrayObject *)PyArray_NewLikeArray(out, NPY_CORDER, NULL, 0);
        if (!dst)
            return NULL;
    }
    if (n) {
        const int release = n >= GIL_RELEASE_MIN_RECORDS;
        PyThreadState *saved = jm_release_gil(release);
        kernel(PyArray_BYTES(q0), s0, PyArray_BYTES(q1), s1, PyArray_BYTES(t), ts, PyArray_BYTES(dst),
               4 * (ptrdiff_t)PyArray_ITEMSIZE(dst), (size_t)n);
        jm_restore_gil(saved);
    }
    if (dst != out) {
        int copied = PyArray_CopyInto(out, dst);
        Py_DECREF(dst);
        if (copied < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

PyMethodDef jm_interp_methods[] = {
    {"slerp_joints", (PyCFunction)(void (*)(void))py_slerp_joints, METH_FASTCALL | METH_KEYWORDS, slerp_joints_doc},
    {"lerp_joints", (PyCFunction)(void (*)(void))py_lerp_joints, METH_FASTCALL | METH_KEYWORDS, lerp_joints_doc},
    {"_slerp_joints_libm", (PyCFunction)(void (*)(void))py_slerp_joints_libm, METH_FASTCALL | METH_KEYWORDS,
     "_slerp_joints_libm(joints, blend, t, out=None)\n--\n\n"
     "Internal: the commonly used libm slerp (acos, sin), one joint at a time, as the benchmark baseline."},
    {"_blend_float32", py_blend_float32, METH_VARARGS, "Internal: run a float32 or float64 slerp / nlerp kernel."},
    {NULL, NULL, 0, NULL},
};
