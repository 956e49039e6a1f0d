/*
 * _interp.c - boundary of the interpolation kernels (csrc/slerp.c, csrc/partial_body.c,
 * csrc/joint_index.c): slerp_joints and lerp_joints on JOINT_QUAT arrays, slerp / nlerp on
 * (..., 4) arrays, resample_joints (a clip at another frame rate).
 */
#include "_core.h"

#include <math.h>
#include <string.h>

/* The ValueError for a fraction `v` outside [0, 1] (or NaN), shown as a Python float; -1. */
static int fraction_error(double v) {
    PyObject *f = PyFloat_FromDouble(v);
    if (f)
        PyErr_Format(PyExc_ValueError, "t must be in [0, 1], got %R", f);
    Py_XDECREF(f);
    return -1;
}

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
    if (!(v >= 0.0 && v <= 1.0))
        return fraction_error(v);
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
    const int n_names = indexed ? (int)JM_COUNT(with_index) : (int)JM_COUNT(without_index);
    PyObject *slots[JM_COUNT(with_index)] = {NULL};
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
    const int direct = out && jm_as_record_run(out, &o_base, &o_stride) &&
                       (same_run(o_base, o_stride, a_base, a_stride) || !jm_may_overlap(out, src_a)) &&
                       ((!index_obj && same_run(o_base, o_stride, b_base, b_stride)) || !jm_may_overlap(out, src_b));
    if (!(dst = jm_record_destination(out, direct, descr, ndim, shape, &o_base, &o_stride)))
        goto done;

    if (n && index_obj)
        JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                         indexed(a_base, a_stride, b_base, b_stride, o_base, o_stride, n / (size_t)n_joints,
                                 (size_t)n_joints, (const intptr_t *)idx.values, (size_t)idx.size, t));
    else if (n)
        JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                         kernel(a_base, a_stride, b_base, b_stride, o_base, o_stride, n, t));

    result = jm_result_in_out(out, dst);
    dst = NULL;
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
             "An index for :func:`slerp_joints` and :func:`lerp_joints`, checked once.\n\n"
             "Parameters\n"
             "----------\n"
             "index : array_like of int\n"
             "    1-D integer positions (an array of any integer dtype or a sequence), distinct, in\n"
             "    ``[0, n_joints)``, in any order.\n"
             "n_joints : int\n"
             "    The length of the joint lists it selects from (their last axis).\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of intp\n"
             "    The positions sorted, as a read-only array that owns a copy of them (NumPy refuses\n"
             "    to make it writeable). :func:`slerp_joints` and :func:`lerp_joints` recognise this\n"
             "    array and use it as it is: the index of a partial-body blend that runs every frame\n"
             "    is checked once. Any other index, a view or copy of this one included, is copied and\n"
             "    checked on every call.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For an index that is not integers or not an array or sequence (a slice, None), a\n"
             "    non-integer ``n_joints``.\n"
             "ValueError\n"
             "    For a negative ``n_joints``, an index that is not 1-D, a position out of range or\n"
             "    repeated.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import jointmath as jm\n"
             ">>> upper = jm.joint_index([9, 3, 4], 31)\n"
             ">>> upper, upper.flags.writeable\n"
             "(array([3, 4, 9]), False)");

JM_FASTCALL_FUNCTION(joint_index) {
    static const char *const names[] = {"index", "n_joints"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("joint_index", args, nargs, kwnames, names, JM_COUNT(names), 2, slots) < 0)
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
             "Rotations follow the shortest arc (``blend.q`` is negated where the dot product is\n"
             "negative) at constant angular speed; translations are interpolated linearly.\n\n"
             "Parameters\n"
             "----------\n"
             "joints, blend : ndarray of JOINT_QUAT\n"
             "    Arrays of the same shape (frames x joints ...), unit quaternions (they are not\n"
             "    normalised).\n"
             "t : float\n"
             "    The fraction of the way from ``joints`` to ``blend``, a real number in [0, 1] (not a\n"
             "    bool), rounded to float32 before it is used.\n"
             "index : array_like of int, optional\n"
             "    Distinct positions along the last axis (the joints): only those joints are\n"
             "    interpolated, in every frame; the others are copied from ``joints`` (a partial-body\n"
             "    blend). An index made by :func:`joint_index` is used without checking it again; any\n"
             "    other is copied, then checked, and the call reads the copy.\n"
             "out : ndarray of JOINT_QUAT, optional\n"
             "    A writeable array of the same shape to fill; it is returned. ``out=joints``\n"
             "    interpolates in place.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of JOINT_QUAT\n"
             "    ``t = 0`` gives ``joints``' values exactly; ``t = 1`` gives ``blend``'s translation and\n"
             "    the end of the arc, ``blend.q`` or ``-blend.q``, exactly, so a sampled curve never jumps\n"
             "    hemisphere at its last sample. Nearly parallel pairs fall back to lerp; identical and\n"
             "    antipodal pairs never give NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For wrong types or dtypes (naming the argument), an index that is neither integers\n"
             "    nor a sequence of them, a masked array, a bool ``t``.\n"
             "ValueError\n"
             "    For ``t`` outside [0, 1] or NaN, shapes that differ, an index that is not 1-D, out of\n"
             "    range or repeated, a read-only ``out``, a result too large to allocate.\n\n"
             "See Also\n"
             "--------\n"
             "lerp_joints, slerp, joint_index\n\n"
             "Notes\n"
             "-----\n"
             "Every path, unit quaternions: max abs component error <= 5e-7 against a float64 slerp,\n"
             "``| |q| - 1 | <= 1e-6``. Outside that domain as :func:`slerp`.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> a = jm.make_joints([[0, 0, 0, 1], [0, 0, 0, 1]], [[0, 0, 0], [0, 0, 0]])\n"
             ">>> b = jm.make_joints([[0, 0, 1, 0], [1, 0, 0, 0]], [[2, 0, 0], [0, 4, 0]])\n"
             ">>> half = jm.slerp_joints(a, b, 0.5)\n"
             ">>> np.round(half[\"q\"], 6) + 0.0\n"
             "array([[0.      , 0.      , 0.707107, 0.707107],\n"
             "       [0.707107, 0.      , 0.      , 0.707107]], dtype=float32)\n"
             ">>> half[\"t\"]\n"
             "array([[1., 0., 0., 0.],\n"
             "       [0., 2., 0., 0.]], dtype=float32)\n"
             ">>> jm.slerp_joints(a, b, 0.5, index=[1])[\"t\"]                 # joint 1 only\n"
             "array([[0., 0., 0., 0.],\n"
             "       [0., 2., 0., 0.]], dtype=float32)");

JM_FASTCALL_FUNCTION(slerp_joints) {
    return blend_joints("slerp_joints", args, nargs, kwnames, jm_active->slerp_joints, jm_active->slerp_joints_indexed);
}

PyDoc_STRVAR(lerp_joints_doc,
             "lerp_joints(joints, blend, t, index=None, out=None)\n--\n\n"
             "Normalised linear interpolation (nlerp) from one joint list to another.\n\n"
             "The rotation is ``normalize((1 - t) joints.q +- t blend.q)`` (shortest arc), the\n"
             "translation is interpolated linearly: the same arc as :func:`slerp_joints`, not at\n"
             "constant angular speed, and cheaper.\n\n"
             "Parameters\n"
             "----------\n"
             "joints, blend : ndarray of JOINT_QUAT\n"
             "    Arrays of the same shape. The quaternions may have any finite scale (2**-149 to\n"
             "    FLT_MAX, each its own): the result is the normalised sum as written.\n"
             "t : float\n"
             "    The fraction, a real number in [0, 1] (not a bool).\n"
             "index : array_like of int, optional\n"
             "    As :func:`slerp_joints`.\n"
             "out : ndarray of JOINT_QUAT, optional\n"
             "    As :func:`slerp_joints`.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of JOINT_QUAT\n"
             "    ``t = 0`` and ``t = 1`` give the inputs exactly (``t = 1``: the arc's end,\n"
             "    ``+-blend.q``); two zero quaternions give NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    As :func:`slerp_joints`.\n"
             "ValueError\n"
             "    As :func:`slerp_joints`.\n\n"
             "See Also\n"
             "--------\n"
             "slerp_joints, nlerp\n\n"
             "Notes\n"
             "-----\n"
             "Every path, any scale: max abs component error <= 3e-7 against a float64 nlerp.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> a = jm.make_joints([0, 0, 0, 1])\n"
             ">>> b = jm.make_joints([0, 0, 1, 0], [2, 0, 0])\n"
             ">>> half = jm.lerp_joints(a, b, 0.5)\n"
             ">>> np.round(half[\"q\"], 6) + 0.0, half[\"t\"]\n"
             "(array([0.      , 0.      , 0.707107, 0.707107], dtype=float32), array([1., 0., 0., 0.], dtype=float32))");

JM_FASTCALL_FUNCTION(lerp_joints) {
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
        if (!(v >= 0.0 && v <= 1.0))
            return fraction_error(v);
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
    static const npy_intp quat_core[1] = {4};
    static const char *const names[] = {"q0", "q1", "t", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args(func, args, nargs, kwnames, names, JM_COUNT(names), 3, slots) < 0)
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
        if (t64 == -1.0 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_OverflowError)) { /* an int beyond float's range */
                PyErr_Clear();
                PyErr_SetString(PyExc_ValueError,
                                "t must be in [0, 1], got an int too large for a float (beyond +-1.8e308)");
            }
            goto done;
        }
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

    if (t && PyArray_TYPE(t) == NPY_FLOAT64 && type == NPY_FLOAT32) {
        /* checked as given, as a Python float is: the cast would take 1 + 1e-10 to 1,
           and 1e39 to inf with NumPy's overflow warning before the refusal */
        jm_walk given = {NULL, NULL, 0};
        const int refused = jm_walk_operand(t, NPY_FLOAT64, 0, 8, t_ndim, t_dims, 0, &given) < 0 ||
                            check_fractions(given.base, given.stride, PyArray_SIZE(t), 8) < 0;
        jm_walk_release(&given);
        if (refused)
            goto done;
    }
    const npy_intp record_bytes[3] = {4 * esize, 4 * esize, esize};
    if (jm_walk_operand(a, type, 1, 4 * esize, batch_ndim, batch, JM_WALK_REPEAT, &wa) < 0 ||
        jm_walk_operand(b, type, 1, 4 * esize, batch_ndim, batch, JM_WALK_REPEAT, &wb) < 0 ||
        (t && jm_walk_operand(t, type, 0, esize, batch_ndim, batch, JM_WALK_REPEAT, &wt) < 0))
        goto done;
    const npy_intp n = PyArray_MultiplyList(batch, batch_ndim);
    if (t && check_fractions(wt.base, wt.stride, n && !wt.stride ? 1 : n, esize) < 0)
        goto done;
    const jm_walk inputs[3] = {wa, wb, wt};
    if (jm_walk_output(out, type, batch_ndim + 1, batch, batch_ndim, 4 * esize, 0, inputs, record_bytes, t ? 3 : 2,
                       &dst) < 0)
        goto done;
    jm_quat_blend_kernel kernel = type == NPY_FLOAT32 ? k32 : k64;
    if (n)
        JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                         kernel(wa.base, wa.stride, wb.base, wb.stride, wt.base, wt.stride, dst.base, dst.stride,
                                (size_t)n));
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
             "Parameters\n"
             "----------\n"
             "q0, q1 : array_like, shape (..., 4)\n"
             "    Unit quaternions ``(x, y, z, w)``; their leading shapes broadcast like NumPy. float32\n"
             "    (and float16) compute in float32; float64, integers and bools in float64 (either\n"
             "    input float64: float64). They are not normalised: other inputs give\n"
             "    ``w0 q0 + w1 q1`` with the weights of their raw dot product, which is no slerp\n"
             "    (normalise them first, or use :func:`nlerp`).\n"
             "t : float or array_like\n"
             "    Fraction(s) in [0, 1]: one for all, or an array broadcasting with the leading shapes\n"
             "    (one per frame of (frames, joints, 4) arrays is ``t[:, None]``).\n"
             "out : ndarray, shape (..., 4), optional\n"
             "    A writeable array of the broadcast shape and the result dtype; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 4)\n"
             "    ``slerp(q0, q1, t)`` along the shortest arc (``q1`` negated where ``q0 . q1 < 0``).\n"
             "    ``t = 0`` gives ``q0`` exactly and ``t = 1`` the end of that arc exactly, so\n"
             "    ``slerp(q0, q1, linspace(0, 1, n))`` stays on one hemisphere up to its last sample.\n"
             "    Nearly parallel pairs fall back to lerp; identical and antipodal pairs never give\n"
             "    NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string inputs (naming the argument), an ``out`` of another\n"
             "    dtype.\n"
             "ValueError\n"
             "    For shapes that are not (..., 4) or do not broadcast, ``t`` outside [0, 1] or NaN,\n"
             "    an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "nlerp, slerp_joints\n\n"
             "Notes\n"
             "-----\n"
             "float32, every path, unit inputs: max abs component error <= 5e-7 against a float64\n"
             "slerp, ``| |q| - 1 | <= 1e-6``. One ``t`` for all uses the fixed-``t`` polynomial weights of\n"
             ":func:`slerp_joints`, an array of ``t`` the per-element formula: the two agree within that\n"
             "bound, not bit for bit. float64: <= 2e-15. Domain: unit quaternions; other ones with\n"
             "components below 2**62 in magnitude (2**510 in float64) give ``w0 q0 + w1 q1`` with the\n"
             "weights of their raw dot product. A component at or beyond that, or NaN, gives NaN\n"
             "between the ends (``t = 0`` and ``t = 1`` still give ``q0`` and ``q1``), on every path.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> identity, turn = [0, 0, 0, 1], [0, 0, 1, 0]                 # 0 and 180 degrees about z\n"
             ">>> np.round(jm.slerp(identity, turn, [0, 0.5, 1])[:, 2:], 6) + 0.0\n"
             "array([[0.      , 1.      ],\n"
             "       [0.707107, 0.707107],\n"
             "       [1.      , 0.      ]])");

JM_FASTCALL_FUNCTION(slerp) {
    return blend_quats("slerp", args, nargs, kwnames, jm_active->slerp_quats, jm_active->slerp_quats_f64);
}

PyDoc_STRVAR(nlerp_doc,
             "nlerp(q0, q1, t, out=None)\n--\n\n"
             "Normalised linear interpolation ``normalize((1 - t) q0 +- t q1)`` between quaternion\n"
             "arrays.\n\n"
             "The same arc as :func:`slerp`, not at constant angular speed, and cheaper.\n\n"
             "Parameters\n"
             "----------\n"
             "q0, q1 : array_like, shape (..., 4)\n"
             "    Quaternions of any finite scale, each its own (float32 from 2**-149 to FLT_MAX,\n"
             "    float64 over its whole range): the result is the normalised sum as written, so equal\n"
             "    scales give the nlerp of the unit quaternions. Dtypes and broadcasting as\n"
             "    :func:`slerp`.\n"
             "t : float or array_like\n"
             "    As :func:`slerp`.\n"
             "out : ndarray, shape (..., 4), optional\n"
             "    As :func:`slerp`.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 4)\n"
             "    Along the shortest arc; ``t = 0`` and ``t = 1`` return ``q0`` and ``+-q1`` themselves,\n"
             "    unnormalised. Two zero quaternions give NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    As :func:`slerp`.\n"
             "ValueError\n"
             "    As :func:`slerp`.\n\n"
             "See Also\n"
             "--------\n"
             "slerp, lerp_joints\n\n"
             "Notes\n"
             "-----\n"
             "float32, every path, any scale: max abs component error <= 3e-7 against a float64 nlerp\n"
             "(lanes whose float32 sums could overflow or underflow are computed in double). float64:\n"
             "<= 2e-15. Domain: any finite quaternions; a NaN or infinite component gives NaN between\n"
             "the ends (``t = 0`` and ``t = 1`` still give ``q0`` and ``q1``), on every path.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> np.round(jm.nlerp([0, 0, 0, 1], [0, 0, 3, 0], 0.25), 6) + 0.0     # any scale\n"
             "array([0.      , 0.      , 0.707107, 0.707107])");

JM_FASTCALL_FUNCTION(nlerp) {
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
             "A clip's frames resampled to another frame rate.\n\n"
             "Rotations are slerped (shortest arc) and translations interpolated linearly between the\n"
             "two source frames around each new time (:func:`slerp_joints`' kernel: a fraction of 0\n"
             "copies the earlier frame exactly, 1 gives the later one exactly). New frame k lies at\n"
             "``k / fps`` seconds; within 1e-9 source frames of a source frame it is that frame\n"
             "(120 -> 30 fps takes every fourth frame exactly).\n\n"
             "Parameters\n"
             "----------\n"
             "joints : ndarray of JOINT_QUAT, shape (F, J)\n"
             "    The source frames, any strides; never written.\n"
             "frame_time : float\n"
             "    Seconds per source frame, a positive finite real number (Python or NumPy number,\n"
             "    0-d array, Fraction; not a bool).\n"
             "fps : float\n"
             "    The new frame rate, a positive finite real number.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of JOINT_QUAT, shape (F', J)\n"
             "    ``F' = floor((F - 1) * frame_time * fps + 1e-9) + 1`` frames covering the clip's\n"
             "    duration ``(F - 1) * frame_time``; one frame gives that frame.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For ``joints`` of another dtype, a ``frame_time`` or ``fps`` that is not a real number.\n"
             "ValueError\n"
             "    For ``joints`` not 2-D or without frames, a ``frame_time`` or ``fps`` that is not\n"
             "    positive and finite, an output that would not fit in memory (saying how many frames\n"
             "    and bytes).\n\n"
             "See Also\n"
             "--------\n"
             "jointmath.bvh.resample\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> clip = jm.make_joints(np.tile([0, 0, 0, 1], (5, 2, 1)), np.arange(30).reshape(5, 2, 3))\n"
             ">>> half_rate = jm.resample_joints(clip, 1 / 120, 60)\n"
             ">>> half_rate.shape, half_rate[\"t\"][:, 0, 0]\n"
             "((3, 2), array([ 0., 12., 24.], dtype=float32))");

JM_FASTCALL_FUNCTION(resample_joints) {
    static const char *const names[] = {"joints", "frame_time", "fps"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("resample_joints", args, nargs, kwnames, names, JM_COUNT(names), 3, slots) < 0)
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
    const double memory = jm_memory_limit; /* this machine's RAM: jointmath/_memory.py */
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
    JM_FASTCALL_METHOD(joint_index),
    JM_FASTCALL_METHOD(slerp_joints),
    JM_FASTCALL_METHOD(lerp_joints),
    JM_FASTCALL_METHOD(slerp),
    JM_FASTCALL_METHOD(nlerp),
    JM_FASTCALL_METHOD(resample_joints),
    {NULL, NULL, 0, NULL},
};
