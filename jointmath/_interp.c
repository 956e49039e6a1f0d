/*
 * _interp.c - boundary of the interpolation kernels (csrc/slerp.c, csrc/partial_body.c,
 * csrc/joint_index.c): slerp_joints and lerp_joints on JOINT_QUAT arrays, slerp / nlerp on
 * (..., 4) arrays, resample_joints (a clip at another frame rate).
 */
#include "_core.h"

#include <math.h>
#include <string.h>
#ifndef _WIN32
#include <unistd.h> /* sysconf */
#endif

/* t: a real number in [0, 1] (NaN refused), as float32. */
static int parse_fraction(PyObject *obj, float *t) {
    if (jm_refuse_masked(obj, "t") < 0)
        return -1;
    if (PyArray_Check(obj) && PyArray_NDIM((PyArrayObject *)obj) > 0) {
        PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM((PyArrayObject *)obj), PyArray_DIMS((PyArrayObject *)obj));
        PyErr_Format(PyExc_TypeError, "t must be a float in [0, 1], got an array of shape %R", shape);
        Py_XDECREF(shape);
        return -1;
    }
    double v;
    if (jm_parse_real(obj, "t", "a float in [0, 1]", &v) < 0) /* a bool too: True is not a fraction */
        return -1;
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
 * A validated index (joint_index): positions checked once, kept in a block this module owns (the
 * capsule VALIDATED_INDEX, the base of a read-only intp array over `values`). NumPy refuses to
 * make that array writeable (its base exports no buffer), so its values stay the ones checked;
 * a view or copy of it has another base and is checked as any index.
 */
static const char VALIDATED_INDEX[] = "jointmath.validated_index";
typedef struct {
    npy_intp size;
    npy_intp values[]; /* strictly increasing, >= 0 */
} validated_index;

static void free_validated_index(PyObject *capsule) { PyMem_Free(PyCapsule_GetPointer(capsule, VALIDATED_INDEX)); }

/* the validated index itself when obj is the array joint_index returned, else NULL (no error) */
static const validated_index *as_validated_index(PyObject *obj) {
    if (!PyArray_Check(obj))
        return NULL;
    PyArrayObject *arr = (PyArrayObject *)obj;
    PyObject *base = PyArray_BASE(arr);
    /* the name pointer itself: no other capsule carries it */
    if (!base || !PyCapsule_CheckExact(base) || PyCapsule_GetName(base) != VALIDATED_INDEX)
        return NULL;
    const validated_index *v = PyCapsule_GetPointer(base, VALIDATED_INDEX);
    /* as joint_index made it: its dtype, shape or strides may have been set since (a 1-D intp array
       over the same data has its length) */
    if (PyArray_DATA(arr) != (void *)v->values || PyArray_TYPE(arr) != NPY_INTP || PyArray_NDIM(arr) != 1 ||
        (v->size > 1 && PyArray_STRIDE(arr, 0) != (npy_intp)sizeof(npy_intp)))
        return NULL;
    return v;
}

/*
 * A partial-body index as the kernels read it: values[0..size), strictly increasing positions in
 * [0, n_joints), in memory no other thread can write while they are used (a joint_index's own
 * block, or this call's copy of any other index). owner: a new reference that keeps values
 * alive, heap: a block of PyMem_Malloc holding them; both NULL when they lie in the caller's
 * buffer. release_index frees either.
 */
typedef struct {
    const npy_intp *values;
    npy_intp size;
    PyObject *owner;
    npy_intp *heap;
} checked_index;

static void release_index(checked_index *index) {
    Py_CLEAR(index->owner);
    PyMem_Free(index->heap);
    index->heap = NULL;
}

/* a < b for qsort */
static int compare_positions(const void *a, const void *b) {
    const npy_intp x = *(const npy_intp *)a, y = *(const npy_intp *)b;
    return (x > y) - (x < y);
}

/*
 * index: a 1-D array (or sequence) of distinct integer positions in [0, n_joints), into *out (see
 * checked_index); 0, or -1 with the error set. A joint_index is used as it is (immutable). Any
 * other index is copied before it is checked, and the kernels read that copy: the caller's array
 * may be written by another thread at any time (NumPy's own loops run without the GIL), and a
 * position that changed between the check and its use would address memory outside the lists.
 * The copy goes to buffer (buffer_size entries, on the caller's stack) when it fits, else to a
 * PyMem_Malloc block; an index that needs converting (another integer dtype or byte order, a
 * sequence, a strided view) is converted into a new array and checked there. One pass copies and
 * checks (jm_copy_index: the check is made on the values copied). An index in another order is
 * sorted (the kernels need that, and which joints are selected does not depend on the order). An
 * empty sequence is accepted; an array must be of integers, empty or not.
 */
/* entries (8 KB) of the copy on the stack: 4,096 (every index of a call that keeps the GIL) took
   32 KB of a thread stack that may be as small as 32 KB (threading.stack_size), for ~80 ns a call
   at 2,000 entries (the heap block above it) */
#define INDEX_ON_STACK 1024
#define SPARSE_INDEX_SLACK 64
#define SPARSE_INDEX_MIN 65536
static int parse_index(PyObject *obj, int joints_ndim, npy_intp n_joints, npy_intp *buffer, npy_intp buffer_size,
                       checked_index *out) {
    out->values = NULL, out->size = 0, out->owner = NULL, out->heap = NULL;
    if (joints_ndim == 0) {
        PyErr_SetString(PyExc_ValueError, "index needs joints with a joints axis, got a single record");
        return -1;
    }
    const validated_index *validated = as_validated_index(obj);
    if (validated && (!validated->size || validated->values[validated->size - 1] < n_joints)) {
        Py_INCREF(obj); /* immutable: no check and no copy */
        out->values = validated->values, out->size = validated->size, out->owner = obj;
        return 0;
    }
    if (jm_refuse_masked(obj, "index") < 0)
        return -1;
    /* an array, a sequence, or an integer (a scalar: the shape error below); nothing else reads as
       positions (NumPy would make a 0-d object array of a slice, None or a set) */
    if (!PyArray_Check(obj) && (PyUnicode_Check(obj) || PyBytes_Check(obj) ||
                                (!PySequence_Check(obj) && (PyBool_Check(obj) || !PyIndex_Check(obj))))) {
        PyErr_Format(PyExc_TypeError, "index must be a 1-D array or sequence of integer joint positions, got %s",
                     jm_type_name(obj));
        return -1;
    }
    PyArrayObject *raw;
    if (PyArray_Check(obj)) {
        raw = (PyArrayObject *)Py_NewRef(obj);
    } else if (!(raw = (PyArrayObject *)PyArray_FROM_O(obj))) {
        return -1;
    }
    if (PyArray_NDIM(raw) != 1) {
        PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(raw), PyArray_DIMS(raw));
        PyErr_Format(PyExc_ValueError, "index must be a 1-D array of joint positions, got shape %R", shape);
        Py_XDECREF(shape);
        Py_DECREF(raw);
        return -1;
    }
    /* an array must be of integers, even empty (as NumPy's indexing asks); an empty sequence
       ([], ()) is accepted whatever dtype NumPy gives it */
    if (!PyArray_ISINTEGER(raw) && (PyArray_SIZE(raw) || PyArray_Check(obj))) {
        PyErr_Format(PyExc_TypeError, "index must be an array of integers, got dtype %S", (PyObject *)PyArray_DESCR(raw));
        Py_DECREF(raw);
        return -1;
    }
    const npy_intp m = PyArray_SIZE(raw);
    npy_intp *v;
    int increasing, from_unsigned = 0;
    if (PyArray_TYPE(raw) == NPY_INTP && PyArray_ISNOTSWAPPED(raw) && PyArray_IS_C_CONTIGUOUS(raw) &&
        PyArray_ISALIGNED(raw)) {
        if (m <= buffer_size) {
            v = buffer;
        } else if (!(v = out->heap = PyMem_Malloc((size_t)m * sizeof(npy_intp)))) {
            Py_DECREF(raw);
            jm_too_large_error(1, &m, sizeof(npy_intp));
            return -1;
        }
        increasing = jm_active->copy_index((const intptr_t *)PyArray_DATA(raw), (intptr_t *)v, (size_t)m,
                                           (size_t)n_joints);
        Py_DECREF(raw);
    } else { /* values, not bytes: a new array */
        from_unsigned = PyArray_ISUNSIGNED(raw); /* values beyond intp's range read back as negative */
        PyArrayObject *converted = jm_new_array(1, &m, NPY_INTP);
        if (converted && PyArray_CopyInto(converted, raw) < 0)
            Py_CLEAR(converted);
        Py_DECREF(raw);
        if (!(out->owner = (PyObject *)converted))
            return -1;
        v = (npy_intp *)PyArray_DATA((PyArrayObject *)out->owner);
        increasing = jm_active->copy_index((const intptr_t *)v, (intptr_t *)v, (size_t)m, (size_t)n_joints);
    }
    out->values = v, out->size = m;
    if (increasing)
        return 0;
    /* another order, or a bad value: the first value out of range, else the first repeat and the
       positions in order (written over v), from a table of one byte per position up to the largest
       (O(m + largest)); a sparse index (joint_index's n_joints may be any size) is sorted instead
       (O(m log m)) and reports its smallest repeated value */
    npy_intp top = 0, repeated = -1;
    for (npy_intp k = 0; k < m; k++) {
        if (v[k] < 0 || v[k] >= n_joints) {
            /* an unsigned value beyond intp's range (read back as negative) is reported as it was given */
            PyObject *value = from_unsigned && v[k] < 0 ? PyLong_FromSize_t((size_t)v[k]) : PyLong_FromSsize_t(v[k]);
            if (value) {
                PyErr_Format(PyExc_ValueError, "index value %S is out of range for %zd joints (expected 0 <= index < "
                             "%zd)", value, (Py_ssize_t)n_joints, (Py_ssize_t)n_joints);
                Py_DECREF(value);
            }
            release_index(out);
            return -1;
        }
        top = v[k] > top ? v[k] : top;
    }
    if (top <= SPARSE_INDEX_SLACK * m + SPARSE_INDEX_MIN) {
        unsigned char *seen = PyMem_Calloc((size_t)top + 1, 1);
        if (!seen) {
            release_index(out);
            const npy_intp positions = top + 1;
            jm_too_large_error(1, &positions, 1);
            return -1;
        }
        for (npy_intp k = 0; k < m && repeated < 0; k++) {
            repeated = seen[v[k]] ? v[k] : -1;
            seen[v[k]] = 1;
        }
        npy_intp *w = v;
        for (npy_intp p = 0; p <= top && repeated < 0; p++)
            if (seen[p])
                *w++ = p;
        PyMem_Free(seen);
    } else {
        qsort(v, (size_t)m, sizeof(npy_intp), compare_positions);
        for (npy_intp k = 1; k < m && repeated < 0; k++)
            repeated = v[k] == v[k - 1] ? v[k] : -1;
    }
    if (repeated >= 0) {
        PyErr_Format(PyExc_ValueError, "index value %zd appears more than once", (Py_ssize_t)repeated);
        release_index(out);
        return -1;
    }
    return 0;
}

/* The same records in the same places (both are runs of equal length). */
static int same_run(const char *b1, ptrdiff_t s1, const char *b2, ptrdiff_t s2) { return b1 == b2 && s1 == s2; }

/*
 * The body of slerp_joints / lerp_joints: checks every argument, then runs `kernel` (or
 * `indexed` when index is given).
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

    PyArrayObject *a = NULL, *b = NULL, *src_a = NULL, *src_b = NULL, *dst = NULL;
    npy_intp index_buffer[INDEX_ON_STACK];
    checked_index idx = {NULL, 0, NULL, NULL};
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
    if (index_obj && parse_index(index_obj, ndim, n_joints, index_buffer, INDEX_ON_STACK, &idx) < 0)
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
        ((!index_obj && same_run(o_base, o_stride, b_base, b_stride)) || !jm_may_overlap(out, src_b))) {
        dst = out;
        Py_INCREF(dst);
    } else {
        Py_INCREF(descr);
        dst = jm_new_array_descr(ndim, shape, descr);
        if (!dst)
            goto done;
        jm_as_record_run(dst, &o_base, &o_stride);
    }

    PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
    if (!n) {
        /* nothing to do */
    } else if (index_obj) {
        indexed(a_base, a_stride, b_base, b_stride, o_base, o_stride, n / (size_t)n_joints, (size_t)n_joints,
                (const intptr_t *)idx.values, (size_t)idx.size, t);
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
    release_index(&idx);
    Py_XDECREF(src_a);
    Py_XDECREF(src_b);
    Py_XDECREF(dst);
    return result;
}

PyDoc_STRVAR(joint_index_doc,
             "joint_index(index, n_joints)\n--\n\n"
             "An index for slerp_joints and lerp_joints, checked once.\n\n"
             "index: 1-D integer positions (an array of any integer dtype or a sequence),\n"
             "distinct, in [0, n_joints), in any order.\n"
             "n_joints: the length of the joint lists it selects from (their last axis).\n\n"
             "Returns the positions sorted, as a read-only intp array that owns a copy of\n"
             "them (NumPy refuses to make it writeable). slerp_joints and lerp_joints\n"
             "recognise this array and use it as it is: the index of a partial-body blend\n"
             "that runs every frame is checked once. Any other index, including a view or\n"
             "copy of this one, is copied and checked on every call (the call reads the\n"
             "copy, which no other thread can change). Joint lists\n"
             "with fewer joints than its largest position + 1 raise ValueError as for any\n"
             "index.\n\n"
             "Raises TypeError for an index that is not integers or not an array or sequence\n"
             "(a slice, None), a non-integer n_joints, ValueError for a negative n_joints, an\n"
             "index that is not 1-D (an integer scalar), or a position out of range or\n"
             "repeated.");

static PyObject *py_joint_index(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"index", "n_joints"};
    PyObject *slots[2] = {NULL};
    if (jm_parse_args("joint_index", args, nargs, kwnames, names, 2, 2, slots) < 0)
        return NULL;
    Py_ssize_t n_joints;
    if (jm_parse_int(slots[1], "n_joints", &n_joints) < 0)
        return NULL;
    if (n_joints < 0 || n_joints == PY_SSIZE_T_MAX)
        return PyErr_Format(PyExc_ValueError, "n_joints must be >= 0 and below %zd, got %R", PY_SSIZE_T_MAX, slots[1]);
    npy_intp buffer[INDEX_ON_STACK];
    checked_index checked;
    if (parse_index(slots[0], 1, (npy_intp)n_joints, buffer, INDEX_ON_STACK, &checked) < 0)
        return NULL;
    const npy_intp size = checked.size;
    validated_index *v = PyMem_Malloc(sizeof(validated_index) + (size_t)size * sizeof(npy_intp));
    if (v && size)
        memcpy(v->values, checked.values, (size_t)size * sizeof(npy_intp));
    release_index(&checked);
    if (!v) {
        jm_too_large_error(1, &size, sizeof(npy_intp));
        return NULL;
    }
    v->size = size;
    PyObject *capsule = PyCapsule_New(v, VALIDATED_INDEX, free_validated_index);
    if (!capsule) {
        PyMem_Free(v);
        return NULL;
    }
    npy_intp dim = size;
    PyObject *result = PyArray_NewFromDescr(&PyArray_Type, PyArray_DescrFromType(NPY_INTP), 1, &dim, NULL, v->values,
                                            NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
    if (!result || PyArray_SetBaseObject((PyArrayObject *)result, capsule) < 0) { /* steals capsule */
        Py_XDECREF(result);
        if (!result)
            Py_DECREF(capsule);
        return NULL;
    }
    return result;
}

PyDoc_STRVAR(slerp_joints_doc,
             "slerp_joints(joints, blend, t, index=None, out=None)\n--\n\n"
             "Spherical linear interpolation from one joint list to another.\n\n"
             "joints, blend: JOINT_QUAT arrays of the same shape (frames x joints ...).\n"
             "t: a real number in [0, 1] (not a bool), the fraction of the way from joints to\n"
             "blend; rounded to float32, the kernels' precision, before it is used.\n"
             "index: optional 1-D integer array of distinct positions along the last axis\n"
             "(the joints): only those joints are interpolated, in every frame; the others\n"
             "are copied from joints (partial-body blending). The kernel reads the selected\n"
             "joints through the index; nothing is gathered into temporaries. An index made\n"
             "by joint_index is used without checking it again; any other index is copied,\n"
             "then checked, and the call reads the copy (another thread writing the index\n"
             "meanwhile cannot change the positions used).\n"
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
             "Raises TypeError for wrong types or dtypes (naming the argument; an index that is\n"
             "neither integers nor a sequence of them, a masked array), ValueError for t outside\n"
             "[0, 1] or NaN, mismatched shapes, an index that is not 1-D, out of range or\n"
             "repeated, a read-only out, or a result too large to allocate.");

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

/* ------------------------------------------------------ slerp / nlerp on (..., 4) arrays -- */

/* Every fraction of n (at base + i * stride, float32 or float64 by esize) in [0, 1] (NaN
   refused), else a ValueError naming the first one outside. Values are read with memcpy: no
   alignment is assumed. */
static int check_fractions(const char *base, ptrdiff_t stride, npy_intp n, npy_intp esize) {
    for (npy_intp i = 0; i < n; i++) {
        double v;
        if (esize == 4) {
            float f;
            memcpy(&f, base + i * stride, sizeof f);
            v = f;
        } else {
            memcpy(&v, base + i * stride, sizeof v);
        }
        if (!(v >= 0.0 && v <= 1.0)) {
            PyObject *f = PyFloat_FromDouble(v);
            if (f)
                PyErr_Format(PyExc_ValueError, "t must be in [0, 1], got %R", f);
            Py_XDECREF(f);
            return -1;
        }
    }
    return 0;
}

/* Leading shapes that do not broadcast: a ValueError showing all three. */
static void broadcast_error(PyArrayObject *a, PyArrayObject *b, int t_ndim, const npy_intp *t_dims) {
    PyObject *sa = PyArray_IntTupleFromIntp(PyArray_NDIM(a) - 1, PyArray_DIMS(a));
    PyObject *sb = PyArray_IntTupleFromIntp(PyArray_NDIM(b) - 1, PyArray_DIMS(b));
    PyObject *st = PyArray_IntTupleFromIntp(t_ndim, t_dims);
    if (sa && sb && st)
        PyErr_Format(PyExc_ValueError,
                     "q0, q1 and t do not broadcast together: leading shapes %R, %R and t shape %R", sa, sb, st);
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    Py_XDECREF(st);
}

/*
 * The body of slerp and nlerp: q0, q1 (..., 4) and t broadcast like NumPy (the result dtype is
 * float64 when either quaternion input computes in float64, else float32; t is converted to
 * it), out= checked, then the float32 or float64 kernel.
 */
static PyObject *blend_quats(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                             jm_quat_blend_kernel k32, jm_quat_blend_kernel k64) {
    static const char *const names[] = {"q0", "q1", "t", "out"};
    static const npy_intp quat_core[1] = {4};
    PyObject *slots[4];
    if (jm_parse_args(func, args, nargs, kwnames, names, 4, 3, slots) < 0)
        return NULL;
    PyArrayObject *a = NULL, *b = NULL, *t = NULL, *out;
    jm_walk wa = {NULL, NULL, 0}, wb = {NULL, NULL, 0}, wt = {NULL, NULL, 0}, dst = {NULL, NULL, 0};
    PyObject *result = NULL;
    if (!(a = jm_float_operand(slots[0], "q0", 1, quat_core)) || !(b = jm_float_operand(slots[1], "q1", 1, quat_core)))
        goto done;
    const int type = PyArray_TYPE(a) == NPY_FLOAT64 || PyArray_TYPE(b) == NPY_FLOAT64 ? NPY_FLOAT64 : NPY_FLOAT32;
    const npy_intp esize = type == NPY_FLOAT32 ? 4 : 8;

    /* t: a Python float or int (the common case, checked in double and kept in a local), or
       any array_like of real numbers (checked after conversion to the kernel's dtype) */
    float t32;
    double t64;
    int t_ndim = 0;
    const npy_intp *t_dims = NULL;
    PyObject *t_obj = slots[2];
    if (PyFloat_CheckExact(t_obj) || PyLong_CheckExact(t_obj)) {
        t64 = PyFloat_AsDouble(t_obj);
        if (t64 == -1.0 && PyErr_Occurred())
            goto done;
        if (!(t64 >= 0.0 && t64 <= 1.0)) {
            PyErr_Format(PyExc_ValueError, "t must be in [0, 1], got %R", t_obj);
            goto done;
        }
        t32 = (float)t64;
        wt.base = type == NPY_FLOAT32 ? (char *)&t32 : (char *)&t64;
    } else {
        if (!(t = jm_float_operand(t_obj, "t", 0, NULL)))
            goto done;
        t_ndim = PyArray_NDIM(t);
        t_dims = PyArray_DIMS(t);
    }

    int batch_ndim;
    npy_intp batch[NPY_MAXDIMS + 1];
    if (jm_broadcast_shapes(PyArray_NDIM(a) - 1, PyArray_DIMS(a), PyArray_NDIM(b) - 1, PyArray_DIMS(b), &batch_ndim,
                            batch) < 0 ||
        jm_broadcast_shapes(batch_ndim, batch, t_ndim, t_dims, &batch_ndim, batch) < 0) {
        broadcast_error(a, b, t_ndim, t_dims);
        goto done;
    }
    if (batch_ndim >= NPY_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "q0, q1 and t broadcast to %d leading dimensions; at most %d fit the result",
                     batch_ndim, NPY_MAXDIMS - 1);
        goto done;
    }
    batch[batch_ndim] = 4;
    if (jm_float_out(slots[3], type, batch_ndim + 1, batch, &out) < 0)
        goto done;

    const npy_intp record_bytes[3] = {4 * esize, 4 * esize, esize};
    if (jm_walk_operand(a, type, 1, 4 * esize, batch_ndim, batch, JM_WALK_REPEAT, &wa) < 0 ||
        jm_walk_operand(b, type, 1, 4 * esize, batch_ndim, batch, JM_WALK_REPEAT, &wb) < 0 ||
        (t && jm_walk_operand(t, type, 0, esize, batch_ndim, batch, JM_WALK_REPEAT, &wt) < 0))
        goto done;
    const npy_intp n = PyArray_MultiplyList(batch, batch_ndim);
    if (t && PyArray_TYPE(t) == NPY_FLOAT64 && type == NPY_FLOAT32) {
        /* checked as given, as a Python float is: the cast would take 1 + 1e-10 to 1 */
        jm_walk given = {NULL, NULL, 0};
        const int refused = jm_walk_operand(t, NPY_FLOAT64, 0, 8, t_ndim, t_dims, 0, &given) < 0 ||
                            check_fractions(given.base, given.stride, PyArray_SIZE(t), 8) < 0;
        jm_walk_release(&given);
        if (refused)
            goto done;
    }
    if (t && check_fractions(wt.base, wt.stride, n && !wt.stride ? 1 : n, esize) < 0)
        goto done;
    const jm_walk inputs[3] = {wa, wb, wt};
    if (jm_walk_output(out, type, batch_ndim + 1, batch, batch_ndim, 4 * esize, 0, inputs, record_bytes, t ? 3 : 2,
                       &dst) < 0)
        goto done;
    jm_quat_blend_kernel kernel = type == NPY_FLOAT32 ? k32 : k64;
    if (n) {
        PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
        kernel(wa.base, wa.stride, wb.base, wb.stride, wt.base, wt.stride, dst.base, dst.stride, (size_t)n);
        jm_restore_gil(saved);
    }
    result = jm_output_result(out, &dst);
done:
    jm_walk_release(&wa);
    jm_walk_release(&wb);
    jm_walk_release(&wt);
    jm_walk_release(&dst);
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(t);
    return result;
}

PyDoc_STRVAR(slerp_doc,
             "slerp(q0, q1, t, out=None)\n--\n\n"
             "Spherical linear interpolation between quaternion arrays.\n\n"
             "q0, q1: array_like (..., 4) of unit quaternions (x, y, z, w); their leading shapes\n"
             "broadcast like NumPy. float32 (and float16) compute in float32; float64, integers\n"
             "and bools in float64 (either input float64: float64). They are not normalised:\n"
             "other inputs give w0 q0 + w1 q1 with the weights of their raw dot product, which is\n"
             "no slerp (normalise them first, or use nlerp, which takes any scale; float32 inputs\n"
             "whose dot product overflows give NaN or the wrong arc).\n"
             "t: fraction(s) in [0, 1]: a float, or an array_like broadcasting with the leading\n"
             "shapes (one fraction per element, as resampling a clip needs; one per frame of\n"
             "(frames, joints, 4) arrays is t[:, None]); converted to the result dtype, as an\n"
             "operand of a ufunc is (bools as 0 and 1).\n"
             "out: optional writeable array of the broadcast shape (..., 4) and the result dtype;\n"
             "it is returned.\n\n"
             "Returns slerp(q0, q1, t) along the shortest arc (q1 negated where q0 . q1 < 0); t = 0\n"
             "gives q0 exactly and t = 1 the end of that arc exactly, q1 or -q1 (where\n"
             "q0 . q1 < 0), element by element, so slerp(q0, q1, linspace(0, 1, n)) stays on one\n"
             "hemisphere up to its last sample (a dot product within rounding of 0 is a tie either\n"
             "sign may win). Nearly parallel pairs fall back to lerp; identical and antipodal\n"
             "pairs never give NaN. float32 runs the SIMD kernel: max abs component error\n"
             "<= 5e-7 against a float64 slerp and | |q| - 1 | <= 1e-6 for unit inputs (a single\n"
             "t uses the faster fixed-t weights of slerp_joints, an array of t the per-element\n"
             "formula: the two agree within that bound, not bit for bit); float64 computes in\n"
             "float64.\n\n"
             "Raises TypeError for complex, object or string inputs (naming the argument) and a\n"
             "bad out dtype; ValueError for shapes that are not (..., 4) or do not broadcast, t\n"
             "outside [0, 1] or NaN, and a bad out shape or read-only out.");

static PyObject *py_slerp(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    return blend_quats("slerp", args, nargs, kwnames, jm_active->slerp_quats, jm_active->slerp_quats_f64);
}

PyDoc_STRVAR(nlerp_doc,
             "nlerp(q0, q1, t, out=None)\n--\n\n"
             "Normalised linear interpolation normalize((1 - t) q0 +- t q1) between quaternion\n"
             "arrays.\n\n"
             "Arguments, dtypes, broadcasting, shortest arc, exact endpoints (t = 1: q1 or -q1)\n"
             "and errors as for slerp. Same arc as slerp but not at constant angular speed, and\n"
             "cheaper.\n\n"
             "q0 and q1 may have any finite scale, each its own (float32 from the smallest\n"
             "denormal 2^-149 to FLT_MAX, float64 over its whole range): the result is\n"
             "normalize((1 - t) q0 +- t q1) as written, so equal scales give the nlerp of the\n"
             "unit quaternions; t = 0 and t = 1 still return q0 and +-q1 themselves,\n"
             "unnormalised. Two zero quaternions give NaN. float32 runs the SIMD kernel: max abs\n"
             "component error <= 3e-7 against a float64 nlerp at any scale (lanes whose float32\n"
             "sums could overflow or underflow are computed in double); float64 computes in\n"
             "float64 from mantissas and exponents.");

static PyObject *py_nlerp(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    return blend_quats("nlerp", args, nargs, kwnames, jm_active->nlerp_quats, jm_active->nlerp_quats_f64);
}

/* ------------------------------------------------------------------- resample_joints -- */

/* `value` as a double if it is a real number (as jm_parse_real reads one: not a bool) that is
   finite and > 0; else -1 with a TypeError / ValueError "<name> must be <expected>, got ...". */
static int positive_number(PyObject *value, const char *name, const char *expected, double *out) {
    double v;
    if (jm_parse_real(value, name, expected, &v) < 0)
        return -1;
    if (!(isfinite(v) && v > 0)) {
        PyErr_Format(PyExc_ValueError, "%s must be %s, got %R", name, expected, value);
        return -1;
    }
    *out = v;
    return 0;
}

/* Bytes of RAM on this machine (asked once), or 0 where the OS does not say. */
static double physical_memory(void) {
    static double memory = -1;
    if (memory < 0) {
        memory = 0;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        if (pages > 0 && page > 0)
            memory = (double)pages * (double)page;
#endif
    }
    return memory;
}

/* `x` as Python formats it with `spec` (",.0f", ".3g", ","): a new reference, or NULL. */
static PyObject *formatted(PyObject *x, const char *spec) {
    PyObject *format = PyUnicode_FromString(spec), *text = x && format ? PyObject_Format(x, format) : NULL;
    Py_XDECREF(format);
    Py_XDECREF(x);
    return text;
}

/* a count of frames or bytes: with thousands separators below 1e18, else 3 digits */
static PyObject *amount(double x) { return formatted(PyFloat_FromDouble(x), x < 1e18 ? ",.0f" : ".3g"); }

/* The ValueError for an output of `frames` frames of `bytes` that cannot be allocated. */
static void too_many_frames(double fps, double frame_time, double frames, double bytes, const char *reason) {
    PyObject *f = PyFloat_FromDouble(fps), *ft = PyFloat_FromDouble(frame_time), *nf = amount(frames),
             *nb = amount(bytes);
    if (f && ft && nf && nb)
        PyErr_Format(PyExc_ValueError, "fps=%R at frame_time=%R makes %U frames (%U bytes), %s", f, ft, nf, nb, reason);
    Py_XDECREF(f);
    Py_XDECREF(ft);
    Py_XDECREF(nf);
    Py_XDECREF(nb);
}

/*
 * The source frames of new frame k at fps (frame_time seconds per source frame, n_frames >= 2):
 * it lies between source frames *i0 and *i0 + 1, at `fraction` of the way. Its time k / fps in
 * source frames, within 1e-9 frames of a source frame, snaps onto it (120 -> 30 fps takes every
 * fourth frame exactly); i0 stops at n_frames - 2 with fraction 1 for the last source frame.
 */
static float frame_position(npy_intp k, double fps, double frame_time, npy_intp n_frames, npy_intp *i0) {
    double position = (double)k / fps / frame_time;
    const double snapped = nearbyint(position); /* to even on ties, as NumPy rounds */
    if (fabs(position - snapped) < 1e-9)
        position = snapped;
    const double below = floor(position);
    *i0 = below < (double)(n_frames - 2) ? (npy_intp)below : n_frames - 2;
    const double fraction = position - (double)*i0;
    return (float)(fraction < 0.0 ? 0.0 : fraction > 1.0 ? 1.0 : fraction);
}

PyDoc_STRVAR(resample_joints_doc,
             "resample_joints(joints, frame_time, fps)\n--\n\n"
             "(F, J) JOINT_QUAT frames at `frame_time` seconds each -> frames at `fps`, k / fps apart.\n\n"
             "Rotations are slerped (shortest arc) and translations linearly interpolated between the\n"
             "two source frames around each new time, one fraction per new frame (slerp_joints'\n"
             "kernel: a fraction of 0 copies the earlier frame exactly, 1 gives the later one's\n"
             "translation and the end of the arc exactly). The new frame k lies at k / fps seconds;\n"
             "within 1e-9 source frames of a source frame it is that frame (120 -> 30 fps takes\n"
             "every fourth frame exactly). Returns a new (F', J) JOINT_QUAT array,\n"
             "F' = floor((F - 1) * frame_time * fps + 1e-9) + 1: it covers the clip's duration,\n"
             "(F - 1) * frame_time; one frame (a pose, no duration) gives that frame. joints may\n"
             "have any strides (records not one after another are copied first); it is never written.\n"
             "frame_time and fps: real numbers as NumPy reads them (Python or NumPy numbers, 0-d\n"
             "arrays, Fractions). Raises TypeError for joints not of dtype JOINT_QUAT and for a\n"
             "frame_time or fps that is not a real number (True is not 1 s), ValueError for joints\n"
             "not 2-D, a frame_time or fps that is not positive and finite, no frames, and an fps\n"
             "whose output would not fit in memory (the error says how many frames and bytes).");

static PyObject *py_resample_joints(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)self;
    static const char *const names[] = {"joints", "frame_time", "fps"};
    PyObject *slots[3];
    if (jm_parse_args("resample_joints", args, nargs, kwnames, names, 3, 3, slots) < 0)
        return NULL;
    PyArrayObject *joints = jm_record_operand(slots[0], "joints", jm_joint_quat_descr, NULL, "JOINT_QUAT"), *out = NULL;
    if (!joints)
        return NULL;
    jm_walk src = {NULL, NULL, 0};
    double fps, frame_time;
    if (PyArray_NDIM(joints) != 2) {
        PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(joints), PyArray_DIMS(joints));
        if (shape)
            PyErr_Format(PyExc_ValueError, "joints must have shape (frames, joints), got shape %R", shape);
        Py_XDECREF(shape);
        goto done;
    }
    if (positive_number(slots[2], "fps", "a positive number of frames per second", &fps) < 0 ||
        positive_number(slots[1], "frame_time", "a positive number of seconds per source frame", &frame_time) < 0)
        goto done;
    const npy_intp n_frames = PyArray_DIM(joints, 0), n_joints = PyArray_DIM(joints, 1);
    if (n_frames < 1) {
        PyErr_SetString(PyExc_ValueError, "resampling needs at least 1 frame, got 0");
        goto done;
    }
    /* the new frame count as a double first: it may exceed any integer type */
    const double frames = floor((double)(n_frames - 1) * frame_time * fps + 1e-9) + 1;
    const double bytes = n_joints ? frames * (double)(n_joints * (npy_intp)sizeof(jm_joint_quat)) : 0.0;
    const double memory = physical_memory();
    if (!isfinite(bytes) || frames >= 4611686018427387904.0 /* 2^62 */ || (memory && bytes > memory)) {
        if (memory) {
            PyObject *m = formatted(PyFloat_FromDouble(memory), ",.0f"), *reason = NULL;
            if (m && (reason = PyUnicode_FromFormat("more than this machine's memory (%U bytes)", m)))
                too_many_frames(fps, frame_time, frames, bytes, PyUnicode_AsUTF8(reason));
            Py_XDECREF(m);
            Py_XDECREF(reason);
        } else {
            too_many_frames(fps, frame_time, frames, bytes, "too large to allocate");
        }
        goto done;
    }
    const npy_intp count = (npy_intp)frames, out_shape[2] = {count, n_joints};
    Py_INCREF(jm_joint_quat_descr);
    out = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, jm_joint_quat_descr, 2, out_shape, NULL, NULL, 0, NULL);
    if (!out) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError)) {
            PyErr_Clear();
            too_many_frames(fps, frame_time, frames, bytes, "too large to allocate");
        }
        goto done;
    }
    /* the source frames one after another: record (i, j) at src.base + (i * n_joints + j) * 32 */
    if (jm_walk_records(joints, jm_joint_quat_descr, 0, sizeof(jm_joint_quat), 2, PyArray_DIMS(joints),
                        JM_WALK_PACKED, &src) < 0) {
        Py_CLEAR(out);
        goto done;
    }
    if (n_joints) {
        const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat), frame_bytes = (ptrdiff_t)n_joints * rec;
        const jm_blend_kernel slerp_frame = jm_active->slerp_joints;
        PyThreadState *saved = jm_release_gil(count * n_joints >= GIL_RELEASE_MIN_RECORDS);
        if (n_frames == 1) { /* a pose: no duration, one new frame, the pose itself */
            memcpy(PyArray_BYTES(out), src.base, (size_t)frame_bytes);
        } else {
            for (npy_intp k = 0; k < count; k++) {
                npy_intp i0;
                const float fraction = frame_position(k, fps, frame_time, n_frames, &i0);
                const char *a = src.base + i0 * frame_bytes;
                if (fraction >= 1.0f) /* the last source frame itself: the blend's t = 1 is the end of the shortest
                                         arc, -q where the last two frames lie on opposite hemispheres */
                    memcpy(PyArray_BYTES(out) + k * frame_bytes, a + frame_bytes, (size_t)frame_bytes);
                else
                    slerp_frame(a, rec, a + frame_bytes, rec, PyArray_BYTES(out) + k * frame_bytes, rec,
                                (size_t)n_joints, fraction);
            }
        }
        jm_restore_gil(saved);
    }
done:
    jm_walk_release(&src);
    Py_DECREF(joints);
    return (PyObject *)out;
}

PyMethodDef jm_interp_methods[] = {
    {"joint_index", (PyCFunction)(void (*)(void))py_joint_index, METH_FASTCALL | METH_KEYWORDS, joint_index_doc},
    {"slerp_joints", (PyCFunction)(void (*)(void))py_slerp_joints, METH_FASTCALL | METH_KEYWORDS, slerp_joints_doc},
    {"lerp_joints", (PyCFunction)(void (*)(void))py_lerp_joints, METH_FASTCALL | METH_KEYWORDS, lerp_joints_doc},
    {"slerp", (PyCFunction)(void (*)(void))py_slerp, METH_FASTCALL | METH_KEYWORDS, slerp_doc},
    {"nlerp", (PyCFunction)(void (*)(void))py_nlerp, METH_FASTCALL | METH_KEYWORDS, nlerp_doc},
    {"resample_joints", (PyCFunction)(void (*)(void))py_resample_joints, METH_FASTCALL | METH_KEYWORDS,
     resample_joints_doc},
    {NULL, NULL, 0, NULL},
};
