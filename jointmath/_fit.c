/*
 * _fit.c - boundary of the fitting kernels (csrc/fit.c): quat_mean, align_vectors and
 * random_quats.
 *
 * Arguments are array_like as NumPy's ufuncs take them (jm_float_operand); float32 runs the
 * float32 kernels, float64 the *_f64 ones. Weights are read as float64 by both.
 */
#include "_core.h"

#include <numpy/random/bitgen.h>
#include <string.h>

static const npy_intp quat_core[1] = {4}, vector_core[1] = {3};

/* Whether the dims[0..n) (strides in bytes) are one run: element k at base + k * stride; fills
   the stride (size-1 dims are skipped; no dim of size > 1: stride 0). */
static int one_run(int n, const npy_intp *dims, const npy_intp *strides, ptrdiff_t *stride) {
    npy_intp inner_count = 1, inner_stride = 0;
    int found = 0;
    for (int d = n - 1; d >= 0; d--) {
        if (dims[d] == 1)
            continue;
        if (!found) {
            inner_stride = strides[d];
            found = 1;
        } else if (strides[d] != inner_stride * inner_count)
            return 0;
        inner_count *= dims[d];
    }
    *stride = (ptrdiff_t)inner_stride;
    return 1;
}

/* A read-only view of `base`'s memory at `data` with the given dims and strides (descr stolen). */
static PyArrayObject *view_of(PyArrayObject *base, PyArray_Descr *descr, int ndim, npy_intp *dims, npy_intp *strides,
                              char *data) {
    PyArrayObject *view =
        (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, dims, strides, data, 0, NULL);
    if (!view)
        return NULL;
    Py_INCREF(base);
    if (PyArray_SetBaseObject(view, (PyObject *)base) < 0) {
        Py_DECREF(view);
        return NULL;
    }
    return view;
}

/*
 * How quat_mean walks `a` (its leading dims `lead` with `strides`, then ncore core dims of
 * elements, record_bytes each record): sets of the reduced dims perm[n_kept..n_lead)
 * within sets of the kept dims perm[0..n_kept). In place when both groups are one run each and
 * the core elements are contiguous, else
 * from a C-ordered copy in that order. *owner: the reference keeping the memory alive.
 */
static int walk_sets(PyArrayObject *a, int n_lead, const npy_intp *lead, const npy_intp *strides, const int *perm,
                     int n_kept, int ncore, npy_intp record_bytes, PyArrayObject **owner, char **base,
                     ptrdiff_t *batch_stride, ptrdiff_t *item_stride) {
    npy_intp dims[NPY_MAXDIMS], steps[NPY_MAXDIMS];
    for (int d = 0; d < n_lead; d++) {
        dims[d] = lead[perm[d]];
        steps[d] = strides[perm[d]];
    }
    const int packed_core = !ncore || PyArray_STRIDE(a, PyArray_NDIM(a) - 1) == PyArray_ITEMSIZE(a);
    if (packed_core && one_run(n_kept, dims, steps, batch_stride) &&
        one_run(n_lead - n_kept, dims + n_kept, steps + n_kept, item_stride)) {
        Py_INCREF(a);
        *owner = a;
        *base = PyArray_BYTES(a);
        return 0;
    }
    for (int d = 0; d < ncore; d++) {
        dims[n_lead + d] = PyArray_DIM(a, PyArray_NDIM(a) - ncore + d);
        steps[n_lead + d] = PyArray_STRIDE(a, PyArray_NDIM(a) - ncore + d);
    }
    PyArray_Descr *descr = PyArray_DESCR(a);
    Py_INCREF(descr);
    PyArrayObject *view = view_of(a, descr, n_lead + ncore, dims, steps, PyArray_BYTES(a));
    if (!view)
        return -1;
    PyArrayObject *copy = (PyArrayObject *)PyArray_NewCopy(view, NPY_CORDER);
    Py_DECREF(view);
    if (!copy)
        return -1;
    *owner = copy;
    *base = PyArray_BYTES(copy);
    npy_intp n_items = 1;
    for (int d = n_kept; d < n_lead; d++)
        n_items *= dims[d];
    *item_stride = (ptrdiff_t)record_bytes;
    *batch_stride = (ptrdiff_t)(record_bytes * n_items);
    return 0;
}

/* The reduced dims of quat_mean's `axis` (None: all n_lead) into reduce[0..n_lead); 0 or -1. */
static int parse_axis(PyObject *axis, int n_lead, const npy_intp *lead, int *reduce) {
    if (!axis || axis == Py_None) {
        for (int d = 0; d < n_lead; d++)
            reduce[d] = 1;
        return 0;
    }
    memset(reduce, 0, (size_t)n_lead * sizeof(int));
    const int is_tuple = PyTuple_Check(axis);
    if (!is_tuple && !jm_is_integer(axis)) {
        PyErr_Format(PyExc_TypeError, "axis must be None, an int or a tuple of ints, got %s", jm_type_name(axis));
        return -1;
    }
    const Py_ssize_t n = is_tuple ? PyTuple_GET_SIZE(axis) : 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t v;
        if (jm_parse_int(is_tuple ? PyTuple_GET_ITEM(axis, i) : axis, "axis", &v) < 0)
            return -1;
        if (v < -n_lead || v >= n_lead) {
            PyObject *shape = PyArray_IntTupleFromIntp(n_lead, (npy_intp *)lead);
            if (shape)
                PyErr_Format(PyExc_ValueError,
                             "axis %zd is out of bounds for the leading dims %R of q (the component axis is "
                             "never reduced)", v, shape);
            Py_XDECREF(shape);
            return -1;
        }
        const int d = (int)(v < 0 ? v + n_lead : v);
        if (reduce[d]) {
            PyErr_Format(PyExc_ValueError, "axis has a repeated axis (%d)", d);
            return -1;
        }
        reduce[d] = 1;
    }
    return 0;
}

/* The leading-dim strides of a float64 weights array broadcast to `lead` (0 where it repeats);
   0, or -1 with a ValueError naming weights. */
static int broadcast_strides(PyArrayObject *w, int n_lead, const npy_intp *lead, npy_intp *strides, const char *to) {
    const int nw = PyArray_NDIM(w);
    int ok = nw <= n_lead;
    for (int d = 0; ok && d < n_lead; d++) {
        const int dw = d - (n_lead - nw);
        if (dw < 0 || PyArray_DIM(w, dw) == 1)
            strides[d] = 0;
        else if (PyArray_DIM(w, dw) == lead[d])
            strides[d] = PyArray_STRIDE(w, dw);
        else
            ok = 0;
    }
    if (!ok) {
        PyObject *ws = PyArray_IntTupleFromIntp(nw, PyArray_DIMS(w)), *ls = PyArray_IntTupleFromIntp(n_lead, (npy_intp *)lead);
        if (ws && ls)
            PyErr_Format(PyExc_ValueError, "weights of shape %R do not broadcast to %s %R", ws, to, ls);
        Py_XDECREF(ws);
        Py_XDECREF(ls);
        return -1;
    }
    return 0;
}

/* `obj` as an aligned native float64 array of real numbers (weights), or NULL naming weights. */
static PyArrayObject *weights_operand(PyObject *obj) {
    PyArrayObject *real = jm_real_array(obj, "weights", 0, NULL);
    if (!real)
        return NULL;
    PyArrayObject *w = (PyArrayObject *)PyArray_FROMANY((PyObject *)real, NPY_FLOAT64, 0, 0,
                                                         NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED);
    Py_DECREF(real);
    return w;
}

PyDoc_STRVAR(quat_mean_doc,
             "quat_mean(q, weights=None, axis=None, out=None)\n--\n\n"
             "The weighted mean rotation of quaternions, sign-invariant.\n\n"
             "The unit quaternion maximising ``sum_i w_i (q . q_i / |q_i|)**2``: the eigenvector of the\n"
             "largest eigenvalue of ``K = sum_i w_i q_i q_i^T / |q_i|^2`` (Markley et al. 2007, as\n"
             "scipy's ``Rotation.mean``). ``q_i`` and ``-q_i`` count alike; the quaternions need not be\n"
             "unit (any finite non-zero scale).\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)``. float32 (and float16) give float32, float64, integers and\n"
             "    bools float64 (NumPy's ufunc rules); sums are taken in float64 either way.\n"
             "weights : array_like, optional\n"
             "    Non-negative finite weights broadcast to ``q.shape[:-1]`` (as NumPy broadcasts); all 1\n"
             "    by default. Read as float64.\n"
             "axis : None, int or tuple of ints, optional\n"
             "    The leading dims of ``q`` (``q.shape[:-1]``, never the component axis) to reduce, as a\n"
             "    NumPy reduction's ``axis``: ``None`` (the default, as scipy) reduces all of them to one\n"
             "    quaternion; ``axis=0`` on ``(frames, joints, 4)`` gives each joint's mean over the\n"
             "    frames, ``(joints, 4)``; ``axis=()`` normalises each quaternion.\n"
             "out : ndarray, optional\n"
             "    Where to write the result: its shape, the result's dtype, writeable (as the element-wise\n"
             "    functions' ``out``; it may share memory with ``q``).\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (kept leading dims..., 4)\n"
             "    Unit quaternions with ``w >= 0`` (``w = 0``: the first non-zero component positive).\n"
             "    A set holding a zero, NaN or infinite quaternion gives NaN. ``out`` when given.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string ``q`` or ``weights``, an ``axis`` that is no int or\n"
             "    tuple of ints (a bool included), an ``out`` that is no ndarray of the result's dtype.\n"
             "ValueError\n"
             "    For a shape not ending in 4, ``axis`` out of range or repeated, an empty set,\n"
             "    ``weights`` that do not broadcast, negative, NaN or infinite, or all zero in a set, an\n"
             "    ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "align_vectors, random_quats, scipy.spatial.transform.Rotation.mean\n\n"
             "Notes\n"
             "-----\n"
             "``K`` is summed in float64 and its dominant eigenvector found in float64 on every path: by\n"
             "matrix powers when the residual certifies the result (batched means), else by cyclic\n"
             "Jacobi sweeps. The result is within about ``1e-16 * trace(K) / (l1 - l2)`` rad of\n"
             "the exact mean, ``l1 >= l2`` the two largest eigenvalues of K (the eigen-gap): for a\n"
             "well-conditioned set, ``(l1 - l2) / trace(K) >= 0.01`` (rotations spread less than about\n"
             "a right angle around their mean), within 1e-14 rad of scipy's (float64) and 1e-6 rad\n"
             "(float32, the result's rounding). A set with no unique mean (``l1 = l2``, e.g. two\n"
             "rotations half a turn apart) gives one of the optimal rotations.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> half = np.sin(np.radians([10, 20, 30]) / 2)\n"
             ">>> q = np.stack([0 * half, 0 * half, half, np.sqrt(1 - half**2)], axis=-1)  # 10, 20, 30 deg about z\n"
             ">>> mean = jm.quat_mean(q)\n"
             ">>> round(float(np.degrees(2 * np.arctan2(mean[2], mean[3]))), 6)\n"
             "20.0\n"
             ">>> jm.quat_mean(-q, weights=[1, 0, 0]).round(6) + 0.0   # sign-invariant\n"
             "array([0.      , 0.      , 0.087156, 0.996195])\n"
             ">>> jm.quat_mean(np.zeros((120, 31, 4), np.float32) + [0, 0, 0, 1], axis=0).shape\n"
             "(31, 4)");

JM_FASTCALL_FUNCTION(quat_mean) {
    static const char *const names[] = {"q", "weights", "axis", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("quat_mean", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    PyArrayObject *q = jm_float_operand(slots[0], "q", 1, quat_core);
    if (!q)
        return NULL;
    PyArrayObject *w = NULL, *q_owner = NULL, *w_owner = NULL, *result = NULL, *out = NULL;
    const int type = PyArray_TYPE(q), n_lead = PyArray_NDIM(q) - 1;
    const npy_intp *lead = PyArray_DIMS(q);
    int reduce[NPY_MAXDIMS], perm[NPY_MAXDIMS], n_kept = 0;
    npy_intp shape[NPY_MAXDIMS], n_batch = 1, n_items = 1, w_strides[NPY_MAXDIMS];
    if (parse_axis(slots[2], n_lead, lead, reduce) < 0)
        goto done;
    for (int d = 0; d < n_lead; d++)
        if (!reduce[d]) {
            perm[n_kept] = d;
            shape[n_kept++] = lead[d];
            n_batch *= lead[d];
        }
    for (int d = 0, k = n_kept; d < n_lead; d++)
        if (reduce[d]) {
            perm[k++] = d;
            n_items *= lead[d];
        }
    shape[n_kept] = 4;
    if (slots[1] && slots[1] != Py_None &&
        (!(w = weights_operand(slots[1])) || broadcast_strides(w, n_lead, lead, w_strides, "q.shape[:-1]") < 0))
        goto done;
    if (n_items == 0) {
        PyErr_SetString(PyExc_ValueError, "q: the mean of an empty set of quaternions is undefined");
        goto done;
    }
    if (jm_float_out(slots[3], type, n_kept + 1, shape, &out) < 0)
        goto done;
    /* the means go to out itself when it is C-ordered and shares no memory with q or the weights
       (the kernel reads later sets after writing earlier means), else to a new array copied into
       out at the end */
    if (out && PyArray_IS_C_CONTIGUOUS(out) && PyArray_ISALIGNED(out) && !jm_may_overlap(out, q) &&
        !(w && jm_may_overlap(out, w))) {
        Py_INCREF(out);
        result = out;
    } else if (!(result = jm_new_array(n_kept + 1, shape, type)))
        goto done;
    if (n_batch == 0)
        goto done;
    jm_mean_job job = {0};
    char *q_base, *w_base = NULL;
    const npy_intp record = 4 * PyArray_ITEMSIZE(q);
    if (walk_sets(q, n_lead, lead, PyArray_STRIDES(q), perm, n_kept, 1, record, &q_owner, &q_base, &job.q_batch_stride,
                  &job.q_item_stride) < 0)
        goto fail;
    if (w) {
        /* a view of the weights with the leading dims of q (repeated where broadcast) */
        Py_INCREF(PyArray_DESCR(w));
        PyArrayObject *view = view_of(w, PyArray_DESCR(w), n_lead, (npy_intp *)lead, w_strides, PyArray_BYTES(w));
        const int walked = view ? walk_sets(view, n_lead, lead, w_strides, perm, n_kept, 0, sizeof(double), &w_owner,
                                            &w_base, &job.w_batch_stride, &job.w_item_stride)
                                : -1;
        Py_XDECREF(view);
        if (walked < 0)
            goto fail;
    }
    job.q = q_base;
    job.weights = w_base;
    job.out = PyArray_BYTES(result);
    job.n_batch = (size_t)n_batch;
    job.n_items = (size_t)n_items;
    jm_quat_mean_kernel kernel = type == NPY_FLOAT32 ? jm_active->quat_mean : jm_active->quat_mean_f64;
    JM_RELEASING_GIL(n_batch * n_items >= GIL_RELEASE_MIN_RECORDS, kernel(&job));
    if (job.error == JM_FIT_BAD_WEIGHT) {
        PyErr_SetString(PyExc_ValueError, "weights must be finite and non-negative (found a negative, NaN or infinite one)");
        goto fail;
    }
    if (job.error == JM_FIT_ZERO_WEIGHTS) {
        PyErr_Format(PyExc_ValueError, "weights are all zero in set %zu of q (in C order of the kept dims): its mean is "
                     "undefined", job.error_batch);
        goto fail;
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    Py_DECREF(q);
    Py_XDECREF(w);
    Py_XDECREF(q_owner);
    Py_XDECREF(w_owner);
    return result ? jm_result_in_out(out, result) : NULL;
}

PyDoc_STRVAR(align_vectors_doc,
             "align_vectors(a, b, weights=None, out=None)\n--\n\n"
             "The rotation that best maps vectors ``b`` onto vectors ``a``, batched.\n\n"
             "For each set, the rotation ``C`` minimising ``sum_i w_i |a_i - C b_i|**2`` (Wahba's problem,\n"
             "scipy's ``Rotation.align_vectors(a, b, weights)``: ``a`` is the target, ``C`` applied to ``b``),\n"
             "by Davenport's q-method: the dominant eigenvector of a 4x4 symmetric matrix built from\n"
             "``B = sum_i w_i a_i b_i^T``.\n\n"
             "Parameters\n"
             "----------\n"
             "a, b : array_like, shape (..., N, 3) or (3,)\n"
             "    The vector sets: N pairs per set, the leading dims of ``a`` and ``b`` broadcast\n"
             "    together; shape (3,) is one pair. float32 when both are float32 (or float16), else\n"
             "    float64; sums are taken in float64 either way. Any finite scale.\n"
             "weights : array_like, optional\n"
             "    Non-negative weights broadcast to ``(..., N)``; all 1 by default. One infinite weight\n"
             "    per set marks its primary pair, aligned exactly (as scipy).\n"
             "out : tuple of two ndarrays, optional\n"
             "    ``(quats, rssd)`` to fill: writeable arrays of the result dtype, shapes ``(..., 4)`` and\n"
             "    ``(...)`` (0-d for a single set); they are returned (``rssd`` then as the array).\n\n"
             "Returns\n"
             "-------\n"
             "quats : ndarray, shape (..., 4)\n"
             "    Unit quaternions ``(x, y, z, w)`` with ``w >= 0``: ``C`` maps ``b_i`` to about ``a_i``.\n"
             "rssd : ndarray, shape (...), or a NumPy scalar\n"
             "    ``sqrt(sum_i w_i |a_i - C b_i|**2)`` (an infinite-weight pair left out), summed from the\n"
             "    residuals (exact to rounding also for a close fit, where scipy's formula from the\n"
             "    singular values cancels). A scalar of the result dtype for a single set (as scipy).\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string arrays (naming the argument), an ``out`` that is no tuple of\n"
             "    two ndarrays of the result dtype.\n"
             "ValueError\n"
             "    For shapes that are not (..., N, 3) or do not broadcast, different N, ``weights``\n"
             "    negative or NaN or not broadcasting, more than one infinite weight in a set, a zero\n"
             "    primary vector (as scipy), an ``out`` array of another shape or read-only.\n\n"
             "Warns\n"
             "-----\n"
             "UserWarning\n"
             "    When a set's optimal rotation is not unique or poorly defined (collinear vectors, as\n"
             "    scipy warns); one of the optimal rotations is returned (not necessarily scipy's).\n\n"
             "See Also\n"
             "--------\n"
             "quat_mean, scipy.spatial.transform.Rotation.align_vectors\n\n"
             "Notes\n"
             "-----\n"
             "As scipy: one pair (N = 1) gives the rotation of least angle taking ``b`` to ``a`` (for\n"
             "opposite vectors, half a turn about ``e_i x a``, ``i`` the index of the smallest\n"
             "``|a_i|``); an infinite weight aligns its pair exactly, then the others about it. Unlike\n"
             "scipy: NaN weights are refused (scipy returns NaN), ``return_sensitivity`` is not offered.\n"
             "Bound: the result is within about ``1e-16 * (l1 + |l4|) / (l1 - l2)`` rad of the exact\n"
             "optimum, ``l1 >= l2 >= .. >= l4`` the eigenvalues of Davenport's matrix (``l1 - l2 = 2 (s2 +\n"
             "s3)``, the singular values of ``B``): for well-conditioned sets (``(s2 + s3) / s1 >= 0.01``),\n"
             "within 1e-14 rad of scipy's (float64) and 1e-6 rad (float32).\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> b = np.array([[1.0, 0, 0], [0, 1, 0]])\n"
             ">>> a = np.array([[0.0, 1, 0], [-1, 0, 0]])      # b turned 90 degrees about z\n"
             ">>> q, rssd = jm.align_vectors(a, b)\n"
             ">>> q.round(6) + 0.0, round(float(rssd), 12)\n"
             "(array([0.      , 0.      , 0.707107, 0.707107]), 0.0)\n"
             ">>> q, rssd = jm.align_vectors(np.tile(a, (5, 1, 1)), b)   # five sets at once\n"
             ">>> q.shape, rssd.shape\n"
             "((5, 4), (5,))");

JM_FASTCALL_FUNCTION(align_vectors) {
    static const char *const names[] = {"a", "b", "weights", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("align_vectors", args, nargs, kwnames, names, JM_COUNT(names), 2, slots) < 0)
        return NULL;
    PyObject *out_obj = slots[3] && slots[3] != Py_None ? slots[3] : NULL;
    if (out_obj && !(PyTuple_Check(out_obj) && PyTuple_GET_SIZE(out_obj) == 2 && PyArray_Check(PyTuple_GET_ITEM(out_obj, 0)) &&
                     PyArray_Check(PyTuple_GET_ITEM(out_obj, 1))))
        return PyErr_Format(PyExc_TypeError, "out must be a tuple of two arrays (quats, rssd), got %s",
                            jm_type_name(out_obj));
    PyArrayObject *arrays[2] = {NULL, NULL}, *w = NULL, *wfull = NULL, *quats = NULL, *rssd = NULL, *outs[2] = {NULL, NULL};
    jm_walk wa = {NULL, NULL, 0}, wb = {NULL, NULL, 0};
    PyObject *result = NULL;
    const char *arg_names[2] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        PyArrayObject *v = jm_float_operand(slots[i], arg_names[i], 1, vector_core);
        if (!v)
            goto done;
        if (PyArray_NDIM(v) == 1) { /* one pair */
            npy_intp one[2] = {1, 3};
            PyArray_Dims dims = {one, 2};
            arrays[i] = (PyArrayObject *)PyArray_Newshape(v, &dims, NPY_CORDER);
            Py_DECREF(v);
            if (!arrays[i])
                goto done;
        } else
            arrays[i] = v;
    }
    PyArrayObject *a = arrays[0], *b = arrays[1];
    const int type = PyArray_TYPE(a) == NPY_FLOAT32 && PyArray_TYPE(b) == NPY_FLOAT32 ? NPY_FLOAT32 : NPY_FLOAT64;
    const npy_intp n = PyArray_DIM(a, PyArray_NDIM(a) - 2), esize = type == NPY_FLOAT32 ? 4 : 8;
    if (PyArray_DIM(b, PyArray_NDIM(b) - 2) != n) {
        PyErr_Format(PyExc_ValueError, "a and b must hold as many vectors per set: a has %zd, b has %zd", (Py_ssize_t)n,
                     (Py_ssize_t)PyArray_DIM(b, PyArray_NDIM(b) - 2));
        goto done;
    }
    int batch_ndim;
    npy_intp batch[NPY_MAXDIMS + 1];
    if (jm_broadcast_shapes(PyArray_NDIM(a) - 2, PyArray_DIMS(a), PyArray_NDIM(b) - 2, PyArray_DIMS(b), &batch_ndim,
                            batch) < 0) {
        PyErr_SetString(PyExc_ValueError, "the leading dims of a and b (before (N, 3)) do not broadcast together");
        goto done;
    }
    npy_intp full[NPY_MAXDIMS + 1];
    if (batch_ndim + 1 > NPY_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "a and b have too many dimensions");
        goto done;
    }
    memcpy(full, batch, batch_ndim * sizeof(npy_intp));
    full[batch_ndim] = n;
    if (slots[2] && slots[2] != Py_None) {
        npy_intp unused[NPY_MAXDIMS];
        if (!(w = weights_operand(slots[2])) || broadcast_strides(w, batch_ndim + 1, full, unused, "(..., N)") < 0 ||
            !(wfull = jm_new_array(batch_ndim + 1, full, NPY_FLOAT64)) || PyArray_CopyInto(wfull, w) < 0)
            goto done;
    }
    const npy_intp record = n * 3 * esize;
    if (jm_walk_operand(a, type, 2, record, batch_ndim, batch, JM_WALK_REPEAT, &wa) < 0 ||
        jm_walk_operand(b, type, 2, record, batch_ndim, batch, JM_WALK_REPEAT, &wb) < 0)
        goto done;
    full[batch_ndim] = 4;
    if (out_obj) { /* both checked before either is written */
        if (jm_float_out(PyTuple_GET_ITEM(out_obj, 0), type, batch_ndim + 1, full, &outs[0]) < 0 ||
            jm_float_out(PyTuple_GET_ITEM(out_obj, 1), type, batch_ndim, batch, &outs[1]) < 0)
            goto done;
    }
    /* each result to its out itself when that is C-ordered and apart from a, b and the other out
       (the kernel reads later sets after writing earlier results), else to a new array copied
       into it at the end */
    PyArrayObject **results[2] = {&quats, &rssd};
    for (int k = 0; k < 2; k++) {
        PyArrayObject *o = outs[k];
        if (o && PyArray_IS_C_CONTIGUOUS(o) && PyArray_ISALIGNED(o) && !jm_may_overlap(o, wa.array) &&
            !jm_may_overlap(o, wb.array) && !jm_may_overlap(o, outs[1 - k])) {
            Py_INCREF(o);
            *results[k] = o;
        } else if (!(*results[k] = k ? jm_new_array(batch_ndim, batch, type) : jm_new_array(batch_ndim + 1, full, type)))
            goto done;
    }
    const npy_intp n_batch = PyArray_MultiplyList(batch, batch_ndim);
    jm_align_job job = {0};
    job.a = wa.base;
    job.a_stride = wa.stride;
    job.b = wb.base;
    job.b_stride = wb.stride;
    job.weights = wfull ? PyArray_BYTES(wfull) : NULL;
    job.w_stride = (ptrdiff_t)(n * sizeof(double));
    job.quats = PyArray_BYTES(quats);
    job.rssd = PyArray_BYTES(rssd);
    job.n_batch = (size_t)n_batch;
    job.n_items = (size_t)n;
    jm_align_kernel kernel = type == NPY_FLOAT32 ? jm_active->align_vectors : jm_active->align_vectors_f64;
    if (n_batch)
        JM_RELEASING_GIL(n_batch * (n + 1) >= GIL_RELEASE_MIN_RECORDS, kernel(&job));
    switch (job.error) {
    case JM_FIT_BAD_WEIGHT:
        PyErr_SetString(PyExc_ValueError, "weights must be non-negative (found a negative or NaN one)");
        goto done;
    case JM_FIT_TWO_INFINITE:
        PyErr_Format(PyExc_ValueError, "weights: only one infinite weight per set is allowed (set %zu has more)",
                     job.error_batch);
        goto done;
    case JM_FIT_ZERO_PRIMARY:
        PyErr_Format(PyExc_ValueError, "a, b: cannot align zero length primary vectors (set %zu; the primary pair is "
                     "the one of infinite weight, or the only one)", job.error_batch);
        goto done;
    default:
        break;
    }
    if (job.n_degenerate &&
        PyErr_WarnFormat(PyExc_UserWarning, 1,
                         "Optimal rotation is not uniquely or poorly defined for the given sets of vectors (%zu of %zd "
                         "sets)", job.n_degenerate, (Py_ssize_t)n_batch) < 0)
        goto done;
    if (out_obj) {
        PyObject *filled[2] = {jm_result_in_out(outs[0], quats), NULL};
        quats = NULL;
        if (filled[0])
            filled[1] = jm_result_in_out(outs[1], rssd);
        else
            Py_DECREF(rssd);
        rssd = NULL;
        if (filled[1])
            result = PyTuple_Pack(2, filled[0], filled[1]);
        Py_XDECREF(filled[0]);
        Py_XDECREF(filled[1]);
        goto done;
    }
    result = Py_BuildValue("(NN)", (PyObject *)quats, PyArray_Return(rssd));
    quats = rssd = NULL;
done:
    for (int i = 0; i < 2; i++)
        Py_XDECREF(arrays[i]);
    Py_XDECREF(w);
    Py_XDECREF(wfull);
    Py_XDECREF(quats);
    Py_XDECREF(rssd);
    jm_walk_release(&wa);
    jm_walk_release(&wb);
    return result;
}

/* numpy.random.Generator and numpy.random.default_rng, imported on first use, and the names
   random_quats looks up on every call, interned once (constants, no state). */
static PyObject *generator_type, *default_rng;
static PyObject *name_bit_generator, *name_capsule, *name_lock, *name_acquire, *name_release;

static int import_generator(void) {
    if (generator_type)
        return 0;
    const struct {
        PyObject **name;
        const char *text;
    } names[] = {{&name_bit_generator, "bit_generator"}, {&name_capsule, "capsule"}, {&name_lock, "lock"},
                 {&name_acquire, "acquire"}, {&name_release, "release"}};
    for (size_t i = 0; i < JM_COUNT(names); i++)
        if (!*names[i].name && !(*names[i].name = PyUnicode_InternFromString(names[i].text)))
            return -1;
    PyObject *module = PyImport_ImportModule("numpy.random");
    if (!module)
        return -1;
    PyObject *type = PyObject_GetAttrString(module, "Generator");
    default_rng = PyObject_GetAttrString(module, "default_rng");
    Py_DECREF(module);
    if (!type || !default_rng) {
        Py_XDECREF(type);
        Py_CLEAR(default_rng);
        return -1;
    }
    generator_type = type;
    return 0;
}

/* `rng` as numpy.random.default_rng takes it, as a new reference to a Generator. */
static PyObject *as_generator(PyObject *rng) {
    if (import_generator() < 0)
        return NULL;
    if (rng && PyObject_TypeCheck(rng, (PyTypeObject *)generator_type)) {
        Py_INCREF(rng);
        return rng;
    }
    if (rng && PyBool_Check(rng)) {
        PyErr_SetString(PyExc_TypeError, "rng must be None, a seed, a SeedSequence, a BitGenerator or a Generator, got bool");
        return NULL;
    }
    return PyObject_CallOneArg(default_rng, rng ? rng : Py_None);
}

/* random_quats' dtype argument: NPY_FLOAT32 or NPY_FLOAT64, or -1 with a TypeError. NumPy's
   scalar types are recognised before asking NumPy to read a dtype (the common spellings). */
static int random_dtype(PyObject *dtype) {
    if (!dtype || dtype == Py_None || dtype == (PyObject *)&PyFloatArrType_Type)
        return NPY_FLOAT32;
    if (dtype == (PyObject *)&PyDoubleArrType_Type || dtype == (PyObject *)&PyFloat_Type)
        return NPY_FLOAT64;
    PyArray_Descr *descr = NULL;
    if (!PyArray_DescrConverter2(dtype, &descr))
        return -1;
    const int type = descr ? descr->type_num : NPY_FLOAT32;
    const int native = descr ? PyArray_ISNBO(descr->byteorder) : 1;
    Py_XDECREF(descr);
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64) || !native) {
        PyErr_Format(PyExc_TypeError, "dtype must be float32 or float64, got %R", dtype);
        return -1;
    }
    return type;
}

/* One word of the Generator's stream (its bit generator's next_uint64 under its lock, as NumPy's
   own draws take it) to *key; 0, or -1 with an error set. */
static int generator_word(PyObject *generator, uint64_t *key) {
    PyObject *bit_generator = PyObject_GetAttr(generator, name_bit_generator), *capsule = NULL, *lock = NULL;
    int status = -1;
    bitgen_t *bitgen;
    if (bit_generator && (capsule = PyObject_GetAttr(bit_generator, name_capsule)) &&
        (lock = PyObject_GetAttr(bit_generator, name_lock)) &&
        (bitgen = (bitgen_t *)PyCapsule_GetPointer(capsule, "BitGenerator"))) {
        PyObject *locked = PyObject_CallMethodNoArgs(lock, name_acquire);
        if (locked) {
            Py_DECREF(locked);
            *key = bitgen->next_uint64(bitgen->state);
            PyObject *released = PyObject_CallMethodNoArgs(lock, name_release);
            status = released ? 0 : -1;
            Py_XDECREF(released);
        }
    }
    Py_XDECREF(bit_generator);
    Py_XDECREF(capsule);
    Py_XDECREF(lock);
    return status;
}

PyDoc_STRVAR(random_quats_doc,
             "random_quats(shape, rng=None, dtype='float32', out=None)\n--\n\n"
             "Uniformly distributed random rotations as unit quaternions.\n\n"
             "Parameters\n"
             "----------\n"
             "shape : int or tuple of ints\n"
             "    The batch shape; the result has shape ``shape + (4,)``.\n"
             "rng : None, int, array_like of ints, SeedSequence, BitGenerator or Generator, optional\n"
             "    What ``numpy.random.default_rng`` accepts; a ``Generator`` is used as it is (its state\n"
             "    advances). The same seed gives the same quaternions on every path.\n"
             "dtype : dtype-like, optional\n"
             "    float32 (the default) or float64, as NumPy reads a dtype (``np.float64``, ``\"float64\"``).\n"
             "out : ndarray, optional\n"
             "    Where to write the result: shape ``shape + (4,)``, dtype ``dtype``, writeable (a C-ordered\n"
             "    one is written in place, any other layout through a copy). The same quaternions as\n"
             "    without it. Reusing one array also saves what a fresh result costs the first time it is\n"
             "    written: the operating system maps and zeroes its pages then (a large float64 result\n"
             "    can spend as long in those page faults as in drawing the rotations).\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape ``shape + (4,)``\n"
             "    Unit quaternions ``(x, y, z, w)`` uniformly distributed over the rotations (the Haar\n"
             "    measure), on the hemisphere ``w >= 0`` (as scipy's ``as_quat(canonical=True)``; ``q`` and\n"
             "    ``-q`` are one rotation); ``out`` when given.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For a ``dtype`` other than float32 or float64, a ``shape`` that is no int or tuple of\n"
             "    ints, an ``rng`` ``default_rng`` refuses, an ``out`` that is no ndarray of ``dtype``.\n"
             "ValueError\n"
             "    For a negative dim, a result too large to allocate, an ``out`` of another shape or\n"
             "    read-only (the Generator then does not advance).\n\n"
             "See Also\n"
             "--------\n"
             "quat_mean, scipy.spatial.transform.Rotation.random\n\n"
             "Notes\n"
             "-----\n"
             "Shoemake's method (1992): ``u`` uniform in (0, 1) and two angles ``t1``, ``t2`` uniform on the\n"
             "circle give ``q = (sqrt(1 - u) sin t1, sqrt(1 - u) cos t1, sqrt(u) sin t2, sqrt(u) cos t2)``,\n"
             "uniform on the 3-sphere, rejection-free (sine and cosine by polynomials); ``w`` is then\n"
             "replaced by ``|w|`` (reflecting ``w`` keeps the sphere's measure). The uniforms\n"
             "come from a counter-based SplitMix64 stream keyed by one 64-bit word of the Generator\n"
             "(whose state advances by that word): 52 bits each for float64, computed in float64; 23 for\n"
             "u and 25 per angle for float32, computed in float32 (two words per quaternion). ``| |q| - 1 |`` is\n"
             "within a few roundings of the dtype. The stream differs from scipy's (which normalises\n"
             "normal 4-vectors) for the same seed; both are uniform.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> q = jm.random_quats((2, 3), rng=42)\n"
             ">>> q.shape, q.dtype, bool(np.all(q[..., 3] >= 0))\n"
             "((2, 3, 4), dtype('float32'), True)\n"
             ">>> bool(np.allclose(np.linalg.norm(q, axis=-1), 1))\n"
             "True\n"
             ">>> bool(np.array_equal(jm.random_quats(5, rng=7, dtype=np.float64), jm.random_quats(5, rng=7, dtype=np.float64)))\n"
             "True\n"
             ">>> buffer = np.empty((1000, 4))  # reused: its pages are faulted in once\n"
             ">>> jm.random_quats(1000, rng=7, dtype=np.float64, out=buffer) is buffer\n"
             "True");

JM_FASTCALL_FUNCTION(random_quats) {
    static const char *const names[] = {"shape", "rng", "dtype", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("random_quats", args, nargs, kwnames, names, JM_COUNT(names), 1, slots) < 0)
        return NULL;
    npy_intp shape[NPY_MAXDIMS];
    int ndim = 0;
    PyObject *shape_obj = slots[0];
    const int is_tuple = PyTuple_Check(shape_obj) || PyList_Check(shape_obj);
    if (!is_tuple && !jm_is_integer(shape_obj))
        return PyErr_Format(PyExc_TypeError, "shape must be an int or a tuple of ints, got %s", jm_type_name(shape_obj));
    const Py_ssize_t given = is_tuple ? PySequence_Size(shape_obj) : 1;
    if (given >= NPY_MAXDIMS)
        return PyErr_Format(PyExc_ValueError, "shape has %zd dims; at most %d fit the result", given, NPY_MAXDIMS - 1);
    for (Py_ssize_t i = 0; i < given; i++) {
        PyObject *item = is_tuple ? PySequence_GetItem(shape_obj, i) : (Py_INCREF(shape_obj), shape_obj);
        Py_ssize_t v;
        const int parsed = item ? jm_parse_int(item, "shape", &v) : -1;
        Py_XDECREF(item);
        if (parsed < 0)
            return NULL;
        if (v < 0)
            return PyErr_Format(PyExc_ValueError, "shape must not hold negative dims, got %zd", v);
        shape[ndim++] = (npy_intp)v;
    }
    shape[ndim++] = 4;
    const int type = random_dtype(slots[2]);
    PyArrayObject *out;
    if (type < 0 || jm_float_out(slots[3], type, ndim, shape, &out) < 0)
        return NULL;
    /* written in out itself when it is C-contiguous and aligned (the kernel writes packed
       records), else into a new array copied into out after */
    const int direct = out && PyArray_IS_C_CONTIGUOUS(out) && PyArray_ISALIGNED(out);
    PyObject *generator = as_generator(slots[1]);
    if (!generator)
        return NULL;
    uint64_t key;
    const int drawn = generator_word(generator, &key);
    Py_DECREF(generator);
    if (drawn < 0)
        return NULL;
    PyArrayObject *result = direct ? (Py_INCREF(out), out) : jm_new_array(ndim, shape, type);
    if (!result)
        return NULL;
    const size_t n = (size_t)(PyArray_SIZE(result) / 4);
    jm_random_quats_kernel kernel = type == NPY_FLOAT32 ? jm_active->random_quats : jm_active->random_quats_f64;
    JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS, kernel(key, PyArray_BYTES(result), n));
    return direct ? (PyObject *)result : jm_result_in_out(out, result);
}

PyMethodDef jm_fit_methods[] = {
    JM_FASTCALL_METHOD(quat_mean),
    JM_FASTCALL_METHOD(align_vectors),
    JM_FASTCALL_METHOD(random_quats),
    {NULL, NULL, 0, NULL},
};
