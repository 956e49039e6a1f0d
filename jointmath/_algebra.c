/*
 * _algebra.c - boundary of the element-wise rotation algebra (csrc/algebra.c): quat_multiply,
 * quat_conjugate, quat_inverse, rotate_vectors, quat_to_rotvec, rotvec_to_quat, quat_angle,
 * quat_angle_between, swing_twist, quat_to_6d and sixd_to_quat on plain float arrays.
 *
 * Operands are array_like as NumPy's ufuncs take them (jm_float_operand); two operands broadcast
 * like NumPy and compute in float64 when either does (as slerp); out= is checked first and
 * written directly when the kernel can walk it; the GIL is released for large inputs.
 */
#include "_core.h"

#include <stdint.h>
#include <string.h>

/* One function of the family: its operands' record sizes and its result's. */
typedef struct {
    const char *func;
    const char *operand[2]; /* names; operand[1] NULL: one operand */
    int floats[2];          /* floats per record of each operand (4, 3 or 6) */
    int out_floats;         /* floats per result record: 1 (a scalar per record, no core dim), 3, 4, 6, or 8
                               (swing_twist: two results of 4, one array each) */
    const char *flag;       /* the name of the bool option, or NULL */
} algebra_spec;

/* A bool option (jm_parse_flag's rules); NULL (not given): 0. */
static int parse_flag(PyObject *obj, const char *name, int *value) {
    *value = obj ? jm_parse_flag(obj, name) : 0;
    return *value < 0 ? -1 : 0;
}

/* The shape of a result: batch + the core dims of out_floats. */
static int result_core(int out_floats, npy_intp *core) {
    switch (out_floats) {
    case 1:
        return 0;
    case 8:
        core[0] = 2, core[1] = 4;
        return 2;
    default:
        core[0] = out_floats;
        return 1;
    }
}

/* The operands' walks over the broadcast batch `shape`; record_bytes[i]: operand i's record. */
static int walk_operands(const algebra_spec *spec, PyArrayObject *const *ops, int n_operands, int type,
                         npy_intp esize, int batch_ndim, const npy_intp *shape, npy_intp record_bytes[2],
                         jm_walk walks[2]) {
    for (int i = 0; i < n_operands; i++) {
        record_bytes[i] = spec->floats[i] * esize;
        if (jm_walk_operand(ops[i], type, 1, record_bytes[i], batch_ndim, shape, JM_WALK_REPEAT, &walks[i]) < 0)
            return -1;
    }
    return 0;
}

/*
 * The body of every function of the family: slots = the operands, then the flag (when spec->flag),
 * then out. Returns the result array (a new reference), `out` itself when given. Results of two
 * quads (spec->out_floats 8: swing_twist, kernels h32 and h64, out_obj NULL): the two halves of
 * each result go to halves[0] and halves[1] (given as out, checked by the caller as a tuple of two
 * arrays; NULL: new arrays), written by the kernel directly, and the tuple of the two is returned.
 */
static PyObject *algebra_call(const algebra_spec *spec, PyObject *const *slots, PyObject *out_obj,
                              PyObject *const *halves, jm_algebra_kernel k32, jm_algebra_kernel k64,
                              jm_algebra2_kernel h32, jm_algebra2_kernel h64) {
    const int n_operands = spec->operand[1] ? 2 : 1;
    PyArrayObject *ops[2] = {NULL, NULL}, *out = NULL;
    jm_walk walks[2] = {{NULL, NULL, 0}, {NULL, NULL, 0}}, dst = {NULL, NULL, 0};
    PyObject *result = NULL;
    int flag = 0;
    for (int i = 0; i < n_operands; i++) {
        const npy_intp core[1] = {spec->floats[i]};
        if (!(ops[i] = jm_float_operand(slots[i], spec->operand[i], 1, core)))
            goto done;
    }
    if (spec->flag && parse_flag(slots[n_operands], spec->flag, &flag) < 0)
        goto done;
    int type = PyArray_TYPE(ops[0]);
    if (n_operands == 2 && PyArray_TYPE(ops[1]) == NPY_FLOAT64)
        type = NPY_FLOAT64;
    const npy_intp esize = type == NPY_FLOAT32 ? 4 : 8;

    int batch_ndim = PyArray_NDIM(ops[0]) - 1;
    npy_intp shape[NPY_MAXDIMS + 2];
    if (batch_ndim)
        memcpy(shape, PyArray_DIMS(ops[0]), batch_ndim * sizeof(npy_intp));
    if (n_operands == 2 && jm_broadcast_shapes(batch_ndim, shape, PyArray_NDIM(ops[1]) - 1, PyArray_DIMS(ops[1]),
                                               &batch_ndim, shape) < 0) {
        PyObject *s0 = PyArray_IntTupleFromIntp(PyArray_NDIM(ops[0]) - 1, PyArray_DIMS(ops[0]));
        PyObject *s1 = PyArray_IntTupleFromIntp(PyArray_NDIM(ops[1]) - 1, PyArray_DIMS(ops[1]));
        if (s0 && s1)
            PyErr_Format(PyExc_ValueError, "%s and %s do not broadcast together: leading shapes %R and %R",
                         spec->operand[0], spec->operand[1], s0, s1);
        Py_XDECREF(s0);
        Py_XDECREF(s1);
        goto done;
    }
    npy_intp core[2];
    const int out_ncore = result_core(spec->out_floats, core);
    if (batch_ndim + out_ncore > NPY_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "%s: the result would have %d dimensions; at most %d fit", spec->func,
                     batch_ndim + out_ncore, NPY_MAXDIMS);
        goto done;
    }
    memcpy(shape + batch_ndim, core, out_ncore * sizeof(npy_intp));
    const int ndim = batch_ndim + out_ncore;
    if (spec->out_floats == 8) {
        PyArrayObject *checked[2] = {NULL, NULL};
        npy_intp half_shape[NPY_MAXDIMS + 2];
        memcpy(half_shape, shape, batch_ndim * sizeof(npy_intp));
        half_shape[batch_ndim] = 4;
        for (int k = 0; k < 2 && halves; k++) /* both checked before either is written */
            if (jm_float_out(halves[k], type, batch_ndim + 1, half_shape, &checked[k]) < 0)
                goto done;
        npy_intp record_bytes[2];
        if (walk_operands(spec, ops, n_operands, type, esize, batch_ndim, shape, record_bytes, walks) < 0)
            goto done;
        jm_walk parts[2] = {{NULL, NULL, 0}, {NULL, NULL, 0}};
        PyObject *results[2] = {NULL, NULL};
        int ok = 1;
        for (int k = 0; k < 2 && ok; k++)
            ok = jm_walk_output(checked[k], type, batch_ndim + 1, half_shape, batch_ndim, 4 * esize, 0, walks,
                                record_bytes, n_operands, &parts[k]) == 0;
        const npy_intp n = PyArray_MultiplyList(shape, batch_ndim);
        jm_algebra2_kernel kernel = type == NPY_FLOAT32 ? h32 : h64;
        if (ok && n)
            JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                             kernel(walks[0].base, walks[0].stride, walks[1].base, walks[1].stride, parts[0].base,
                                    parts[0].stride, parts[1].base, parts[1].stride, (size_t)n, flag));
        for (int k = 0; k < 2 && ok; k++)
            ok = (results[k] = jm_output_result(checked[k], &parts[k])) != NULL;
        if (ok)
            result = PyTuple_Pack(2, results[0], results[1]);
        for (int k = 0; k < 2; k++) {
            jm_walk_release(&parts[k]);
            Py_XDECREF(results[k]);
        }
        goto done;
    }
    if (jm_float_out(out_obj, type, ndim, shape, &out) < 0)
        goto done;
    npy_intp record_bytes[2];
    if (walk_operands(spec, ops, n_operands, type, esize, batch_ndim, shape, record_bytes, walks) < 0)
        goto done;
    if (jm_walk_output(out, type, ndim, shape, batch_ndim, spec->out_floats * esize, 0, walks, record_bytes,
                       n_operands, &dst) < 0)
        goto done;
    const npy_intp n = PyArray_MultiplyList(shape, batch_ndim);
    jm_algebra_kernel kernel = type == NPY_FLOAT32 ? k32 : k64;
    if (n)
        JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                         kernel(walks[0].base, walks[0].stride, walks[1].base, walks[1].stride, dst.base, dst.stride,
                                (size_t)n, flag));
    result = jm_output_result(out, &dst);
    if (result && !out && ndim == 0) /* one angle: a NumPy scalar, as a ufunc returns it */
        result = PyArray_Return((PyArrayObject *)result);
done:
    for (int i = 0; i < 2; i++) {
        jm_walk_release(&walks[i]);
        Py_XDECREF(ops[i]);
    }
    jm_walk_release(&dst);
    return result;
}

/* The definition of a family function named `name` with spec `spec` and its argument names. */
#define ALGEBRA_FUNCTION(name, k32, k64, ...)                                                                        \
    JM_FASTCALL_FUNCTION(name) {                                                                                     \
        static const char *const names[] = {__VA_ARGS__};                                                           \
        PyObject *slots[JM_COUNT(names)];                                                                            \
        if (jm_parse_args(#name, args, nargs, kwnames, names, JM_COUNT(names), name##_spec.operand[1] ? 2 : 1,     \
                          slots) < 0)                                                                                \
            return NULL;                                                                                             \
        return algebra_call(&name##_spec, slots, slots[JM_COUNT(names) - 1], NULL, jm_active->k32, jm_active->k64,     \
                            NULL, NULL);                                                                     \
    }

/* ------------------------------------------------------------------------ product -- */

static const algebra_spec quat_multiply_spec = {"quat_multiply", {"p", "q"}, {4, 4}, 4, NULL};

PyDoc_STRVAR(quat_multiply_doc,
             "quat_multiply(p, q, out=None)\n--\n\n"
             "Hamilton products ``p * q``: the rotation that applies ``q``, then ``p``.\n\n"
             "Parameters\n"
             "----------\n"
             "p, q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)``, broadcast against each other like NumPy arrays. float32 (and\n"
             "    float16) compute in float32; float64, integers and bools in float64; the result is\n"
             "    float64 when either input is. Not normalised: the product of any quaternions.\n"
             "out : ndarray, shape (..., 4), optional\n"
             "    A writeable array of the result dtype and the broadcast shape to fill; it is returned. It\n"
             "    may be ``p`` or ``q`` itself.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 4)\n"
             "    ``p * q`` (the rotation of ``scipy``'s ``Rotation(p) * Rotation(q)`` for unit inputs, up to\n"
             "    the sign of the quaternion).\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming the argument) and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), shapes that do not broadcast, an ``out`` of another shape\n"
             "    or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_conjugate, quat_inverse, rotate_vectors\n"
             "scipy.spatial.transform.Rotation.__mul__ : scipy's composition.\n\n"
             "Notes\n"
             "-----\n"
             "Every path: each component within 5e-7 ``|p| |q|`` (float32) or 2e-15 ``|p| |q|`` (float64)\n"
             "of the exact product (absolute for unit inputs).\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> about_z = [0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)]     # 90 degrees about z\n"
             ">>> np.round(jm.quat_multiply(about_z, about_z), 6) + 0.0       # 180 degrees about z\n"
             "array([0., 0., 1., 0.])");

ALGEBRA_FUNCTION(quat_multiply, quat_multiply, quat_multiply_f64, "p", "q", "out")

/* ------------------------------------------------------------ conjugate, inverse -- */

static const algebra_spec quat_conjugate_spec = {"quat_conjugate", {"q", NULL}, {4, 0}, 4, NULL};

PyDoc_STRVAR(quat_conjugate_doc,
             "quat_conjugate(q, out=None)\n--\n\n"
             "Conjugates ``(-x, -y, -z, w)``: the inverse rotation of a unit quaternion.\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)``. float32 (and float16) compute in float32; float64, integers\n"
             "    and bools in float64.\n"
             "out : ndarray, shape (..., 4), optional\n"
             "    A writeable array of the result dtype to fill (``q`` itself included); it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 4)\n"
             "    Exact: only the signs of x, y and z change (zeros and NaNs included).\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming ``q``) and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_inverse, quat_multiply\n"
             "scipy.spatial.transform.Rotation.inv : scipy's inverse of unit quaternions.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import jointmath as jm\n"
             ">>> jm.quat_conjugate([0.0, 0.6, 0.0, 0.8])\n"
             "array([-0. , -0.6, -0. ,  0.8])");

ALGEBRA_FUNCTION(quat_conjugate, quat_conjugate, quat_conjugate_f64, "q", "out")

static const algebra_spec quat_inverse_spec = {"quat_inverse", {"q", NULL}, {4, 0}, 4, NULL};

PyDoc_STRVAR(quat_inverse_doc,
             "quat_inverse(q, out=None)\n--\n\n"
             "Inverses ``conj(q) / |q|^2`` of any non-zero quaternions.\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)`` of any finite non-zero scale (float32 2**-149 ... FLT_MAX,\n"
             "    float64 2**-1074 ... DBL_MAX); dtypes as :func:`quat_conjugate`.\n"
             "out : ndarray, shape (..., 4), optional\n"
             "    A writeable array of the result dtype to fill (``q`` itself included); it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 4)\n"
             "    ``q * quat_inverse(q)`` is the identity. A result beyond the dtype's range overflows (or\n"
             "    underflows) as the exact one does. A zero quaternion, or a NaN or infinite component,\n"
             "    gives NaN in its own record, on every path.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming ``q``) and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_conjugate, quat_multiply\n"
             "scipy.spatial.transform.Rotation.inv : scipy's inverse of unit quaternions.\n\n"
             "Notes\n"
             "-----\n"
             "``q`` is scaled by a power of two first (exact), so ``|q|^2`` neither overflows nor\n"
             "underflows. Every path: each component within 5e-7 / ``|q|`` (float32) or 2e-15 / ``|q|``\n"
             "(float64) of the exact inverse.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import jointmath as jm\n"
             ">>> jm.quat_inverse([0.0, 0.0, 0.0, 2.0])\n"
             "array([-0. , -0. , -0. ,  0.5])");

ALGEBRA_FUNCTION(quat_inverse, quat_inverse, quat_inverse_f64, "q", "out")

/* ----------------------------------------------------------------- rotate_vectors -- */

static const algebra_spec rotate_vectors_spec = {"rotate_vectors", {"q", "v"}, {4, 3}, 3, "inverse"};

PyDoc_STRVAR(rotate_vectors_doc,
             "rotate_vectors(q, v, inverse=False, out=None)\n--\n\n"
             "Vectors rotated by quaternions: ``R v`` (or ``R^T v``).\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)``; the rotation of ``q / |q|`` for any finite non-zero scale.\n"
             "v : array_like, shape (..., 3)\n"
             "    Vectors; ``q`` and ``v`` broadcast against each other (one rotation for many vectors, or\n"
             "    one vector for many rotations). The result is float64 when either input computes in\n"
             "    float64, else float32.\n"
             "inverse : bool, optional\n"
             "    Rotate by the inverse rotation (``R^T v``). Python's or NumPy's bool only.\n"
             "out : ndarray, shape (..., 3), optional\n"
             "    A writeable array of the result dtype and the broadcast shape to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 3)\n"
             "    The rotated vectors (scipy's ``Rotation.apply``). A zero quaternion, or a NaN or infinite\n"
             "    component, gives NaN in its own record.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming the argument), an ``inverse`` that is not a\n"
             "    bool and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For shapes that are not (..., 4) and (..., 3) or do not broadcast, an ``out`` of another\n"
             "    shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_to_matrix, quat_multiply\n"
             "scipy.spatial.transform.Rotation.apply : scipy's rotation of vectors.\n\n"
             "Notes\n"
             "-----\n"
             "Through the rotation matrix of :func:`quat_to_matrix`. Every path: each component within\n"
             "5e-7 ``|v|`` (float32) or 2e-15 ``|v|`` (float64) of the exact rotation: relative to the\n"
             "vector's length, which the rotation keeps.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> about_z = [0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)]     # 90 degrees about z\n"
             ">>> np.round(jm.rotate_vectors(about_z, [[1, 0, 0], [0, 2, 0]]), 6) + 0.0\n"
             "array([[ 0.,  1.,  0.],\n"
             "       [-2.,  0.,  0.]])\n"
             ">>> np.round(jm.rotate_vectors(about_z, [1, 0, 0], inverse=True), 6) + 0.0\n"
             "array([ 0., -1.,  0.])");

ALGEBRA_FUNCTION(rotate_vectors, rotate_vectors, rotate_vectors_f64, "q", "v", "inverse", "out")

/* --------------------------------------------------------------- rotation vectors -- */

static const algebra_spec quat_to_rotvec_spec = {"quat_to_rotvec", {"q", NULL}, {4, 0}, 3, "degrees"};

PyDoc_STRVAR(quat_to_rotvec_doc,
             "quat_to_rotvec(q, degrees=False, out=None)\n--\n\n"
             "Rotation vectors (axis times angle) of quaternions.\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)`` of any finite non-zero scale; dtypes as\n"
             "    :func:`quat_conjugate`.\n"
             "degrees : bool, optional\n"
             "    Angles in degrees (default radians). Python's or NumPy's bool only.\n"
             "out : ndarray, shape (..., 3), optional\n"
             "    A writeable array of the result dtype to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 3)\n"
             "    ``theta * axis`` with ``theta`` in [0, pi] (``q`` and ``-q`` give the same vector; ``q``\n"
             "    is negated where ``w < 0``, and at ``w = 0`` where the first non-zero of x, y, z is negative\n"
             "    (scipy's canonical sign, as its ``as_rotvec``). A zero, NaN or infinite quaternion gives NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming ``q``), a ``degrees`` that is not a bool and\n"
             "    an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "rotvec_to_quat, quat_angle\n"
             "scipy.spatial.transform.Rotation.as_rotvec : scipy's rotation vectors.\n\n"
             "Notes\n"
             "-----\n"
             "``v * 2 atan2(|v|, |w|) / |v|`` with ``v = (x, y, z)``: the scale of ``q`` cancels, and\n"
             "nothing is lost near 0 (the series limit ``2 v / |w|``) or near pi. Every path: each\n"
             "component within 5e-7 rad (float32; 6e-7 for angles beyond pi/2, where components reach\n"
             "pi and float32's own spacing there is 2.4e-7) or 2e-15 rad (float64) of the exact vector;\n"
             "in degrees within 4e-5 degrees (float32) or 1.2e-13 degrees (float64).\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> q = [0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)]          # 90 degrees about z\n"
             ">>> np.round(jm.quat_to_rotvec(q), 6) + 0.0\n"
             "array([0.      , 0.      , 1.570796])\n"
             ">>> np.round(jm.quat_to_rotvec(q, degrees=True), 6) + 0.0\n"
             "array([ 0.,  0., 90.])");

ALGEBRA_FUNCTION(quat_to_rotvec, quats_to_rotvecs, quats_to_rotvecs_f64, "q", "degrees", "out")

static const algebra_spec rotvec_to_quat_spec = {"rotvec_to_quat", {"v", NULL}, {3, 0}, 4, "degrees"};

PyDoc_STRVAR(rotvec_to_quat_doc,
             "rotvec_to_quat(v, degrees=False, out=None)\n--\n\n"
             "Unit quaternions of rotation vectors (axis times angle).\n\n"
             "Parameters\n"
             "----------\n"
             "v : array_like, shape (..., 3)\n"
             "    Rotation vectors, any finite length; dtypes as :func:`quat_conjugate`.\n"
             "degrees : bool, optional\n"
             "    Angles in degrees (default radians). Python's or NumPy's bool only.\n"
             "out : ndarray, shape (..., 4), optional\n"
             "    A writeable array of the result dtype to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 4)\n"
             "    ``(v sin(theta / 2) / theta, cos(theta / 2))`` with ``theta = |v|``, as scipy's\n"
             "    ``from_rotvec`` (``w < 0`` beyond pi, as there). A NaN or infinite component gives NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming ``v``), a ``degrees`` that is not a bool and\n"
             "    an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 3), an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_to_rotvec\n"
             "scipy.spatial.transform.Rotation.from_rotvec : scipy's conversion.\n\n"
             "Notes\n"
             "-----\n"
             "The half angle is reduced exactly (in degrees by whole quarter turns), small angles take\n"
             "the series ``1/2 - theta^2/48 + theta^4/3840``, very large ones (float32 beyond 32 rad or\n"
             "1800 degrees, float64 beyond 2**20) are computed in double with libm. Every path: each\n"
             "component within ``5e-7 + 2**-23 theta`` (float32) or ``2e-15 + 2**-52 theta`` (float64) of\n"
             "the exact quaternion, ``theta`` in radians: the rounding of ``|v|`` itself moves the half\n"
             "angle by up to that much.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> np.round(jm.rotvec_to_quat([0, 0, np.pi / 2]), 6) + 0.0\n"
             "array([0.      , 0.      , 0.707107, 0.707107])\n"
             ">>> np.round(jm.rotvec_to_quat([[180.0, 0, 0]], degrees=True), 6) + 0.0\n"
             "array([[1., 0., 0., 0.]])");

ALGEBRA_FUNCTION(rotvec_to_quat, rotvecs_to_quats, rotvecs_to_quats_f64, "v", "degrees", "out")

/* ------------------------------------------------------------------------- angles -- */

static const algebra_spec quat_angle_spec = {"quat_angle", {"q", NULL}, {4, 0}, 1, NULL};

PyDoc_STRVAR(quat_angle_doc,
             "quat_angle(q, out=None)\n--\n\n"
             "Rotation angles in [0, pi] of quaternions.\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)`` of any finite non-zero scale; dtypes as\n"
             "    :func:`quat_conjugate`.\n"
             "out : ndarray, shape (...), optional\n"
             "    A writeable array of the result dtype to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (...), or a NumPy scalar for one quaternion\n"
             "    ``2 atan2(|(x, y, z)|, |w|)`` in radians (scipy's ``magnitude``); ``q`` and ``-q`` give the\n"
             "    same angle. A zero quaternion, or a NaN or infinite component, gives NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming ``q``) and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_angle_between, quat_to_rotvec\n"
             "scipy.spatial.transform.Rotation.magnitude : scipy's rotation angle.\n\n"
             "Notes\n"
             "-----\n"
             "From atan2 of the vector part and ``|w|``, not acos of ``w``: as accurate near 0 and pi as\n"
             "elsewhere. Every path: within 5e-7 rad (float32) or 2e-15 rad (float64).\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> q = [[0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)], [0, 0, 0, -3]]\n"
             ">>> np.round(np.degrees(jm.quat_angle(q)), 6) + 0.0\n"
             "array([90.,  0.])");

ALGEBRA_FUNCTION(quat_angle, quat_angles, quat_angles_f64, "q", "out")

static const algebra_spec quat_angle_between_spec = {"quat_angle_between", {"p", "q"}, {4, 4}, 1, NULL};

PyDoc_STRVAR(quat_angle_between_doc,
             "quat_angle_between(p, q, out=None)\n--\n\n"
             "Angles in [0, pi] of the rotations that take ``p`` to ``q``.\n\n"
             "Parameters\n"
             "----------\n"
             "p, q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)`` of any finite non-zero scale, broadcast against each other;\n"
             "    dtypes as :func:`quat_multiply`.\n"
             "out : ndarray, shape (...), optional\n"
             "    A writeable array of the result dtype and the broadcast shape to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (...), or a NumPy scalar for one pair\n"
             "    The angle of ``conj(p) * q`` (scipy's ``(Rotation(p).inv() * Rotation(q)).magnitude()``):\n"
             "    the same for ``-p`` or ``-q`` (antipodal quaternions are 0 apart). A zero quaternion, or a\n"
             "    NaN or infinite component, gives NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming the argument) and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), shapes that do not broadcast, an ``out`` of another shape\n"
             "    or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_angle, quat_multiply\n"
             "scipy.spatial.transform.Rotation.magnitude : scipy's rotation angle.\n\n"
             "Notes\n"
             "-----\n"
             "Each input is scaled by a power of two (exact), then the angle of the product as\n"
             ":func:`quat_angle`. Every path: within 5e-7 rad (float32) or 2e-15 rad (float64) of the\n"
             "exact angle of the given inputs.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> p = [0, 0, 0, 1]\n"
             ">>> q = [[0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)], [0, 0, 0, -1]]\n"
             ">>> np.round(np.degrees(jm.quat_angle_between(p, q)), 6) + 0.0\n"
             "array([90.,  0.])");

ALGEBRA_FUNCTION(quat_angle_between, quat_angles_between, quat_angles_between_f64, "p", "q", "out")

/* -------------------------------------------------------------------- swing_twist -- */

static const algebra_spec swing_twist_spec = {"swing_twist", {"q", "axis"}, {4, 3}, 8, NULL};

PyDoc_STRVAR(swing_twist_doc,
             "swing_twist(q, axis, out=None)\n--\n\n"
             "The swing-twist decomposition ``q = swing * twist`` about an axis.\n\n"
             "``twist`` is the rotation about ``axis`` and ``swing`` a rotation about an axis\n"
             "perpendicular to it: a joint's roll about a bone and the bone's change of direction.\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)`` of any finite non-zero scale (``q / |q|`` is decomposed).\n"
             "axis : array_like, shape (..., 3)\n"
             "    Twist axes of any finite non-zero length, broadcast against ``q``; the result is float64\n"
             "    when either input computes in float64.\n"
             "out : tuple of two ndarrays, shape (..., 4), optional\n"
             "    Writeable arrays of the result dtype and the broadcast shape to fill: ``(swing,\n"
             "    twist)``; they are returned.\n\n"
             "Returns\n"
             "-------\n"
             "swing, twist : ndarray, shape (..., 4)\n"
             "    Unit quaternions with ``swing * twist = q / |q|``: ``twist = (p u, w) / |(p, w)|`` with\n"
             "    ``u = axis / |axis|`` and ``p = u . (x, y, z)`` (so ``twist`` carries ``q``'s sign and\n"
             "    ``swing`` has ``w >= 0`` and no component along ``u``). Singular case, ``p = w = 0``\n"
             "    (``q`` a half turn about an axis perpendicular to ``axis``, where every twist fits):\n"
             "    ``twist`` is the identity ``(0, 0, 0, 1)`` and ``swing = q / |q|``. A zero, NaN or\n"
             "    infinite ``q`` or ``axis`` gives NaN in both.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming the argument), an ``out`` that is not a tuple\n"
             "    of two arrays of the result dtype.\n"
             "ValueError\n"
             "    For shapes that are not (..., 4) and (..., 3) or do not broadcast, an ``out`` of another\n"
             "    shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_multiply, quat_angle\n"
             "scipy.spatial.transform.Rotation.as_davenport : scipy's nearest relative, angles about given axes.\n\n"
             "Notes\n"
             "-----\n"
             "Near the singular case the twist is ill-conditioned (any small change of ``q`` may turn it\n"
             "far). Every path: each component of\n"
             "``swing`` and ``twist`` within ``B / |(p, w)|`` of the exact ones, ``B`` = 5e-7 (float32)\n"
             "or 2e-15 (float64): the twist's direction is that of ``(p, w)``, so its error grows as\n"
             "``|(p, w)|`` shrinks; ``swing * twist`` within ``2 B`` of ``q / |q|`` everywhere.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> q = jm.quat_multiply(jm.rotvec_to_quat([0.5, 0, 0]), jm.rotvec_to_quat([0, 0, 0.25]))\n"
             ">>> swing, twist = jm.swing_twist(q, [0, 0, 1])\n"
             ">>> np.round(jm.quat_to_rotvec(twist), 6) + 0.0\n"
             "array([0.  , 0.  , 0.25])\n"
             ">>> np.round(jm.quat_to_rotvec(swing), 6) + 0.0\n"
             "array([0.5, 0. , 0. ])");

JM_FASTCALL_FUNCTION(swing_twist) {
    static const char *const names[] = {"q", "axis", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("swing_twist", args, nargs, kwnames, names, JM_COUNT(names), 2, slots) < 0)
        return NULL;
    PyObject *out = slots[2] && slots[2] != Py_None ? slots[2] : NULL;
    if (out && !(PyTuple_Check(out) && PyTuple_GET_SIZE(out) == 2 && PyArray_Check(PyTuple_GET_ITEM(out, 0)) &&
                 PyArray_Check(PyTuple_GET_ITEM(out, 1))))
        return PyErr_Format(PyExc_TypeError, "out must be a tuple of two arrays (swing, twist), got %s",
                            jm_type_name(out));
    PyObject *halves[2] = {out ? PyTuple_GET_ITEM(out, 0) : NULL, out ? PyTuple_GET_ITEM(out, 1) : NULL};
    return algebra_call(&swing_twist_spec, slots, NULL, out ? halves : NULL, NULL, NULL, jm_active->swing_twist,
                        jm_active->swing_twist_f64);
}

/* ------------------------------------------------------------------------- 6-D -- */

static const algebra_spec quat_to_6d_spec = {"quat_to_6d", {"q", NULL}, {4, 0}, 6, NULL};

PyDoc_STRVAR(quat_to_6d_doc,
             "quat_to_6d(q, out=None)\n--\n\n"
             "The continuous 6-D representation: the first two columns of the rotation matrix.\n\n"
             "Parameters\n"
             "----------\n"
             "q : array_like, shape (..., 4)\n"
             "    Quaternions ``(x, y, z, w)``; the rotation of ``q / |q|`` for any finite non-zero scale;\n"
             "    dtypes as :func:`quat_conjugate`.\n"
             "out : ndarray, shape (..., 6), optional\n"
             "    A writeable array of the result dtype to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 6)\n"
             "    ``(R00, R10, R20, R01, R11, R21)``: column 0 of ``R`` (``v' = R v``, as\n"
             "    :func:`quat_to_matrix`), then column 1, the layout of Zhou et al., \"On the Continuity of\n"
             "    Rotation Representations in Neural Networks\" (CVPR 2019). Continuous in the rotation,\n"
             "    unlike quaternions (``q`` and ``-q`` give the same 6 numbers). A zero quaternion, or a\n"
             "    NaN or infinite component, gives NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming ``q``) and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 4), an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "sixd_to_quat, quat_to_matrix\n"
             "scipy.spatial.transform.Rotation.as_matrix : scipy's matrices (``[..., :, :2]``).\n\n"
             "Notes\n"
             "-----\n"
             "Every path: each element within 5e-7 (float32) or 1e-15 (float64), as\n"
             ":func:`quat_to_matrix`.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> q = [0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)]          # 90 degrees about z\n"
             ">>> np.round(jm.quat_to_6d(q), 6) + 0.0\n"
             "array([ 0.,  1.,  0., -1.,  0.,  0.])");

ALGEBRA_FUNCTION(quat_to_6d, quats_to_6d, quats_to_6d_f64, "q", "out")

static const algebra_spec sixd_to_quat_spec = {"sixd_to_quat", {"x", NULL}, {6, 0}, 4, NULL};

PyDoc_STRVAR(sixd_to_quat_doc,
             "sixd_to_quat(x, out=None)\n--\n\n"
             "Unit quaternions of 6-D representations, by Gram-Schmidt (Zhou et al. 2019).\n\n"
             "Parameters\n"
             "----------\n"
             "x : array_like, shape (..., 6)\n"
             "    Two 3-vectors ``a1 = x[..., 0:3]`` and ``a2 = x[..., 3:6]`` (the first two columns of a\n"
             "    rotation matrix, as :func:`quat_to_6d` writes them, or a network's raw output: any\n"
             "    finite scale, need not be orthogonal); dtypes as :func:`quat_conjugate`.\n"
             "out : ndarray, shape (..., 4), optional\n"
             "    A writeable array of the result dtype to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray, shape (..., 4)\n"
             "    The unit quaternion of ``R = [b1 b2 b1 x b2]`` with ``b1 = a1 / |a1|`` and ``b2`` the\n"
             "    normalised part of ``a2`` orthogonal to ``b1``: the paper's Gram-Schmidt map, which keeps\n"
             "    the direction of ``a1`` (for non-orthogonal input this is not the rotation nearest to\n"
             "    ``[a1 a2]``). Sign as :func:`matrix_to_quat` (its largest-divisor component positive).\n"
             "    ``a1 = 0``, ``a2`` parallel to ``a1`` within rounding (its part orthogonal to ``a1``\n"
             "    below 16 ulp of ``|a2|``), or a NaN or infinite element gives NaN.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For complex, object or string input (naming ``x``) and an ``out`` of another dtype.\n"
             "ValueError\n"
             "    For a shape that is not (..., 6), an ``out`` of another shape or read-only.\n\n"
             "See Also\n"
             "--------\n"
             "quat_to_6d, matrix_to_quat\n"
             "scipy.spatial.transform.Rotation.from_matrix : scipy's conversion of (orthogonalised) matrices.\n\n"
             "Notes\n"
             "-----\n"
             "Each vector is scaled by a power of two before its norm (exact): any finite scale. Every\n"
             "path, for the 6-D form of a rotation: rotation angle error <= 1e-6 rad (float32, the bound of\n"
             ":func:`matrix_to_quat`) or 2e-15 rad (float64).\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> np.round(jm.sixd_to_quat([0, 2, 0, -1, 0.5, 0]), 6) + 0.0      # 90 degrees about z\n"
             "array([0.      , 0.      , 0.707107, 0.707107])");

ALGEBRA_FUNCTION(sixd_to_quat, sixd_to_quats, sixd_to_quats_f64, "x", "out")

PyMethodDef jm_algebra_methods[] = {
    JM_FASTCALL_METHOD(quat_multiply),
    JM_FASTCALL_METHOD(quat_conjugate),
    JM_FASTCALL_METHOD(quat_inverse),
    JM_FASTCALL_METHOD(rotate_vectors),
    JM_FASTCALL_METHOD(quat_to_rotvec),
    JM_FASTCALL_METHOD(rotvec_to_quat),
    JM_FASTCALL_METHOD(quat_angle),
    JM_FASTCALL_METHOD(quat_angle_between),
    JM_FASTCALL_METHOD(swing_twist),
    JM_FASTCALL_METHOD(quat_to_6d),
    JM_FASTCALL_METHOD(sixd_to_quat),
    {NULL, NULL, 0, NULL},
};
