/*
 * _compose.c - boundary of the matrix product kernels (csrc/compose.c): compose_mats and
 * forward_kinematics (its parents read and checked here, of any integer dtype and byte order);
 * and _positions64, forward kinematics in plain C double for the command's error measurement.
 */
#include "_core.h"

#include <limits.h>
#include <string.h>

PyDoc_STRVAR(compose_mats_doc,
             "compose_mats(a, b, out=None)\n--\n\n"
             "Products of 3x4 joint matrices: ``a * b``, that is ``R = Ra Rb`` and ``t = Ra tb + ta``.\n\n"
             "``b`` is applied first: a parent's world transform times a child's local one.\n\n"
             "Parameters\n"
             "----------\n"
             "a, b : ndarray of JOINT_MAT\n"
             "    Arrays of the same shape, or one of them a single record (shape () or (1,)) used\n"
             "    with every record of the other.\n"
             "out : ndarray of JOINT_MAT, optional\n"
             "    A writeable array of the result's shape to fill; it is returned.\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of JOINT_MAT\n"
             "    The products.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For arrays of another dtype (naming the argument).\n"
             "ValueError\n"
             "    For shapes that differ, a read-only ``out``, a result too large to allocate.\n\n"
             "See Also\n"
             "--------\n"
             "forward_kinematics\n\n"
             "Notes\n"
             "-----\n"
             "float32, every path: within a few ulp of the largest product term. Domain: sum of\n"
             "``|a|`` times sum of ``|b|`` (each record's 12 elements) below FLT_MAX / 4, where no\n"
             "product or sum can overflow; outside it (NaN or infinite elements, or elements that\n"
             "large) all 12 elements of that product are NaN, on every path.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> turn = jm.joints_to_mats(jm.make_joints([0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)], [1, 0, 0]))\n"
             ">>> step = jm.joints_to_mats(jm.make_joints([0, 0, 0, 1], [2, 0, 0]))\n"
             ">>> np.round(jm.compose_mats(turn, step)[\"m\"], 6) + 0.0        # the step turned, then moved\n"
             "array([[ 0., -1.,  0.,  1.],\n"
             "       [ 1.,  0.,  0.,  2.],\n"
             "       [ 0.,  0.,  1.,  0.]], dtype=float32)");

JM_FASTCALL_FUNCTION(compose_mats) {
    static const char *const names[] = {"a", "b", "out"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("compose_mats", args, nargs, kwnames, names, JM_COUNT(names), 2, slots) < 0)
        return NULL;
    PyArrayObject *a = jm_record_array(slots[0], "a", jm_joint_mat_descr, "JOINT_MAT");
    if (!a)
        return NULL;
    PyArrayObject *b = jm_record_array(slots[1], "b", jm_joint_mat_descr, "JOINT_MAT");
    PyArrayObject *a_run = NULL, *b_run = NULL;
    PyObject *result = NULL, *out_obj = slots[2] == Py_None ? NULL : slots[2];
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
    if (!(a_run = jm_record_run_or_copy(a, &a_base, &a_stride)) || !(b_run = jm_record_run_or_copy(b, &b_base, &b_stride)))
        goto done;
    if (a_single && !same)
        a_stride = 0;
    if (b_single && !same)
        b_stride = 0;
    PyArrayObject *out = (PyArrayObject *)out_obj;
    const int direct = out && jm_as_record_run(out, &out_base, &out_stride) && !jm_may_overlap(out, a) &&
                       !jm_may_overlap(out, b);
    PyArrayObject *dst = jm_record_destination(out, direct, jm_joint_mat_descr, PyArray_NDIM(shaped),
                                               PyArray_DIMS(shaped), &out_base, &out_stride);
    if (!dst)
        goto done;
    const size_t n = (size_t)PyArray_SIZE(dst);
    if (n)
        JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                         jm_active->compose_mats(a_base, a_stride, b_base, b_stride, out_base, out_stride, n));
    result = jm_result_in_out(out, dst);
done:
    Py_XDECREF(a_run);
    Py_XDECREF(b_run);
    Py_DECREF(a);
    Py_XDECREF(b);
    return result;
}

/* parents[j] as a long long: 0; 1 for an unsigned value above LLONG_MAX (out of range anyway:
   *value is LLONG_MAX, *big the value); -1 for a type that is not an integer */
static int integer_at(const char *data, int type, npy_intp j, long long *value, unsigned long long *big) {
    switch (type) {
    case NPY_BYTE: *value = ((const npy_byte *)data)[j]; return 0;
    case NPY_UBYTE: *value = ((const npy_ubyte *)data)[j]; return 0;
    case NPY_SHORT: *value = ((const npy_short *)data)[j]; return 0;
    case NPY_USHORT: *value = ((const npy_ushort *)data)[j]; return 0;
    case NPY_INT: *value = ((const npy_int *)data)[j]; return 0;
    case NPY_UINT: *value = ((const npy_uint *)data)[j]; return 0;
    case NPY_LONG: *value = ((const npy_long *)data)[j]; return 0;
    case NPY_LONGLONG: *value = ((const npy_longlong *)data)[j]; return 0;
    case NPY_ULONG: case NPY_ULONGLONG: {
        const unsigned long long u = type == NPY_ULONG ? ((const npy_ulong *)data)[j] : ((const npy_ulonglong *)data)[j];
        *value = u > (unsigned long long)LLONG_MAX ? LLONG_MAX : (long long)u;
        *big = u;
        return u > (unsigned long long)LLONG_MAX;
    }
    default: return -1;
    }
}

/* The ValueError for parents[j] = value (a new reference, NULL with an error set), not -1 or an
   earlier joint. */
static int bad_parent(npy_intp j, PyObject *value) {
    if (value) {
        PyErr_Format(PyExc_ValueError, "parents must list parents before children (parents[j] < j, -1 for a root): "
                     "parents[%zd] = %S", (Py_ssize_t)j, value);
        Py_DECREF(value);
    }
    return -1;
}

/*
 * parents (a list, tuple or 1-D array of n_joints integers of any dtype and byte order, each -1
 * or an earlier joint) into parent[0..n_joints), checked; else -1 with a TypeError or ValueError
 * naming parents. A list or tuple of integers (Python or NumPy ones) is read directly (no array is
 * made).
 */
static int read_parents(PyObject *obj, npy_intp n_joints, intptr_t *parent) {
    if (jm_refuse_masked(obj, "parents") < 0)
        return -1;
    if (PyList_CheckExact(obj) || PyTuple_CheckExact(obj)) {
        PyObject **items = PySequence_Fast_ITEMS(obj);
        const Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
        int plain = n == n_joints;
        for (Py_ssize_t j = 0; plain && j < n; j++) {
            PyObject *item = items[j];
            if (PyBool_Check(item) || PyArray_IsScalar(item, Bool)) {
                PyErr_Format(PyExc_TypeError, "parents must be integers, got bool at parents[%zd]", (Py_ssize_t)j);
                return -1;
            }
            /* a Python int, or any other integer (a NumPy one): its value, whatever its size */
            if (!PyLong_CheckExact(item) && (PyArray_Check(item) || !PyIndex_Check(item))) {
                plain = 0; /* anything else is judged as NumPy converts it, below */
                continue;
            }
            PyObject *value = PyLong_CheckExact(item) ? (Py_INCREF(item), item) : PyNumber_Index(item);
            int overflow = 0;
            const long long v = value ? PyLong_AsLongLongAndOverflow(value, &overflow) : 0;
            if (!value || (v == -1 && PyErr_Occurred())) {
                Py_XDECREF(value);
                return -1;
            }
            if (overflow || v < -1 || v >= j) /* an int beyond int64 is out of range too: reported as given */
                return bad_parent(j, value);
            Py_DECREF(value);
            parent[j] = (intptr_t)v;
        }
        if (plain)
            return 0;
    } else if (!PyArray_Check(obj) && (!PySequence_Check(obj) || PyUnicode_Check(obj) || PyBytes_Check(obj))) {
        PyErr_Format(PyExc_TypeError, "parents must be a sequence of joint indices, got %s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyArrayObject *raw = (PyArrayObject *)PyArray_FROM_O(obj);
    if (!raw)
        return -1;
    if (PyArray_NDIM(raw) != 1 || PyArray_DIM(raw, 0) != n_joints) {
        PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(raw), PyArray_DIMS(raw));
        PyErr_Format(PyExc_ValueError, "parents must hold one index per joint (%zd), got shape %R", (Py_ssize_t)n_joints,
                     shape);
        Py_XDECREF(shape);
        Py_DECREF(raw);
        return -1;
    }
    if (!n_joints) {
        Py_DECREF(raw);
        return 0;
    }
    if (!PyArray_ISINTEGER(raw)) {
        PyErr_Format(PyExc_TypeError, "parents must be integers, got dtype %S", (PyObject *)PyArray_DESCR(raw));
        Py_DECREF(raw);
        return -1;
    }
    /* native byte order, aligned and contiguous (a copy only when the array is not): typed reads are then defined */
    PyArrayObject *native = (PyArrayObject *)PyArray_FROMANY((PyObject *)raw, PyArray_TYPE(raw), 1, 1,
                                                             NPY_ARRAY_CARRAY_RO | NPY_ARRAY_NOTSWAPPED);
    Py_DECREF(raw);
    if (!native)
        return -1;
    const char *data = PyArray_BYTES(native);
    const int type = PyArray_TYPE(native);
    int status = 0;
    for (npy_intp j = 0; j < n_joints && !status; j++) {
        long long v;
        unsigned long long big;
        const int kind = integer_at(data, type, j, &v, &big);
        if (kind < 0) {
            PyErr_Format(PyExc_TypeError, "parents must be integers, got dtype %S", (PyObject *)PyArray_DESCR(native));
            status = -1;
        } else if (kind > 0) {
            status = bad_parent(j, PyLong_FromUnsignedLongLong(big));
        } else if (v < -1 || v >= j) {
            status = bad_parent(j, PyLong_FromLongLong(v));
        } else {
            parent[j] = (intptr_t)v;
        }
    }
    Py_DECREF(native);
    return status;
}

/*
 * The world slots of forward kinematics (jm_hierarchy_kernel): a joint's world transform is kept
 * while a child of it is still to come, in a slot that is taken again once its last child is
 * done; the joints without children all write slot 0, which nobody reads. Turns parent[] (-1 or
 * an earlier joint, checked) into parent_slot[] in place and fills slot[]; last_child and
 * free_slots: n_joints entries of work each. Returns the number of slots: the kernel's scratch
 * grows with the widest part of the hierarchy, not with the joints (before, 12 vectors of 16
 * lanes a joint on every path: 768 bytes a joint, 0.8 GB for a million). CMU's skeleton of 31
 * joints takes 4 slots (slot 0 included), a crowd of them in one list the same 4, a chain of any
 * length 3.
 */
static size_t world_slots(intptr_t *parent, intptr_t *slot, intptr_t *last_child, intptr_t *free_slots,
                          npy_intp n_joints) {
    for (npy_intp j = 0; j < n_joints; j++)
        last_child[j] = -1;
    for (npy_intp j = 0; j < n_joints; j++)
        if (parent[j] >= 0)
            last_child[parent[j]] = j;
    size_t n_slots = 1, n_free = 0;
    for (npy_intp j = 0; j < n_joints; j++) {
        slot[j] = last_child[j] < 0 ? 0 : n_free ? free_slots[--n_free] : (intptr_t)n_slots++;
        if (parent[j] >= 0 && last_child[parent[j]] == j) /* j is the parent's last reader */
            free_slots[n_free++] = slot[parent[j]];
    }
    for (npy_intp j = 0; j < n_joints; j++)
        parent[j] = parent[j] < 0 ? -1 : slot[parent[j]];
    return n_slots;
}

PyDoc_STRVAR(forward_kinematics_doc,
             "forward_kinematics(joints, parents)\n--\n\n"
             "World transforms of every joint in every frame.\n\n"
             "``world[..., j] = world[..., parents[j]] * local[..., j]`` with\n"
             "``local = joints_to_mats(joints)``; a root's world transform is its local one. One pass over\n"
             "the frames in C, bit-identical to that chain of :func:`joints_to_mats` and\n"
             ":func:`compose_mats` on the same ISA path.\n\n"
             "Parameters\n"
             "----------\n"
             "joints : ndarray of JOINT_QUAT, shape (..., J)\n"
             "    Local transforms, e.g. ``Clip.joints`` (frames x joints).\n"
             "parents : sequence of int\n"
             "    J parent indices (a list, tuple, range or 1-D array of any integer dtype and byte\n"
             "    order; not bools), -1 for a root, every parent before its children (as BVH lists them;\n"
             "    ``Clip.parents``).\n\n"
             "Returns\n"
             "-------\n"
             "ndarray of JOINT_MAT, shape (..., J)\n"
             "    A new array of world transforms.\n\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    For ``joints`` of another dtype or ``parents`` that are not integers.\n"
             "ValueError\n"
             "    For ``joints`` without a joints axis, a ``parents`` length other than J, a parent that\n"
             "    does not come before its child (the first such entry, as given), a result too large\n"
             "    to allocate.\n\n"
             "See Also\n"
             "--------\n"
             "compose_mats, jointmath.bvh.Clip.positions\n\n"
             "Notes\n"
             "-----\n"
             "float32: a chain of k joints is within about k times the error of one conversion and\n"
             "one product (each <= 5e-7 relative to the transform's scale). A joint's world transform\n"
             "is kept only while a child of it is still to come: the working memory grows with the\n"
             "hierarchy's width, not its size.\n\n"
             "Examples\n"
             "--------\n"
             ">>> import numpy as np, jointmath as jm\n"
             ">>> turn = [0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)]       # 90 degrees about z\n"
             ">>> arm = jm.make_joints([turn, turn, [0, 0, 0, 1]], [[0, 0, 0], [1, 0, 0], [1, 0, 0]])\n"
             ">>> world = jm.forward_kinematics(arm, [-1, 0, 1])\n"
             ">>> np.round(world[\"m\"][:, :, 3], 6) + 0.0                     # the joints' world positions\n"
             "array([[ 0.,  0.,  0.],\n"
             "       [ 0.,  1.,  0.],\n"
             "       [-1.,  1.,  0.]], dtype=float32)");

JM_FASTCALL_FUNCTION(forward_kinematics) {
    static const char *const names[] = {"joints", "parents"};
    PyObject *slots[JM_COUNT(names)];
    if (jm_parse_args("forward_kinematics", args, nargs, kwnames, names, JM_COUNT(names), 2, slots) < 0)
        return NULL;
    PyArrayObject *joints = jm_record_array(slots[0], "joints", jm_joint_quat_descr, "JOINT_QUAT");
    if (!joints)
        return NULL;
    PyArrayObject *world = NULL;
    jm_walk src = {NULL, NULL, 0};
    char *memory = NULL, *scratch = NULL;
    if (PyArray_NDIM(joints) < 1) {
        PyErr_SetString(PyExc_ValueError, "joints must have shape (..., J): one record per joint on the last axis, "
                                          "got a single record");
        goto fail;
    }
    const npy_intp n_joints = PyArray_DIM(joints, PyArray_NDIM(joints) - 1);
    /* the parents and the slots (world_slots), then the kernel's scratch */
    const size_t table_bytes = 4 * (size_t)n_joints * sizeof(intptr_t);
    if (!(memory = PyMem_Malloc(table_bytes ? table_bytes : 1))) {
        PyErr_Format(PyExc_ValueError, "forward_kinematics: the parents of %zd joints need %zu bytes of working memory, "
                     "more than can be allocated", (Py_ssize_t)n_joints, table_bytes);
        goto fail;
    }
    intptr_t *parent = (intptr_t *)memory, *slot = parent + n_joints;
    if (read_parents(slots[1], n_joints, parent) < 0)
        goto fail;
    const size_t scratch_bytes = JM_HIERARCHY_SCRATCH(world_slots(parent, slot, slot + n_joints, slot + 2 * n_joints,
                                                                  n_joints));
    if (!(scratch = PyMem_Malloc(scratch_bytes))) {
        PyErr_Format(PyExc_ValueError, "forward_kinematics: %zu bytes of working memory, more than can be allocated",
                     scratch_bytes);
        goto fail;
    }
    /* the result first (one too large to allocate says so), then the records one after another:
       joints itself when it is C-contiguous at a float's alignment (the usual case, checked
       inline), else as jm_walk_records walks it (a C-ordered copy) */
    Py_INCREF(jm_joint_mat_descr);
    if (!(world = jm_new_array_descr(PyArray_NDIM(joints), PyArray_DIMS(joints), jm_joint_mat_descr)))
        goto fail;
    if (PyArray_IS_C_CONTIGUOUS(joints) && (uintptr_t)PyArray_BYTES(joints) % sizeof(float) == 0) {
        Py_INCREF(joints);
        src.array = joints;
        src.base = PyArray_BYTES(joints);
    } else if (jm_walk_records(joints, jm_joint_quat_descr, 0, sizeof(jm_joint_quat), PyArray_NDIM(joints),
                               PyArray_DIMS(joints), JM_WALK_PACKED, &src) < 0) {
        goto fail;
    }
    const size_t n = (size_t)PyArray_SIZE(joints);
    if (n)
        JM_RELEASING_GIL(n >= GIL_RELEASE_MIN_RECORDS,
                         jm_active->forward_kinematics(src.base, PyArray_BYTES(world), n / (size_t)n_joints,
                                                       (size_t)n_joints, parent, slot, scratch));
    goto done;
fail:
    Py_CLEAR(world);
done:
    PyMem_Free(memory);
    PyMem_Free(scratch);
    jm_walk_release(&src);
    Py_DECREF(joints);
    return (PyObject *)world;
}

/* The float64 local transform [R | t] (row-major 3x4) of a JOINT_QUAT record: R the rotation of
   q / |q| (through s = 2 / |q|^2: exact scale invariance in double for any float32 q; NaN for a
   zero q, as the float32 kernels give), t the record's translation. */
static void local_transform64(const jm_joint_quat *r, double m[12]) {
    const double x = r->q[0], y = r->q[1], z = r->q[2], w = r->q[3];
    const double s = 2 / (x * x + y * y + z * z + w * w);
    const double xs = x * s, ys = y * s, zs = z * s;
    const double xx = x * xs, yy = y * ys, zz = z * zs, xy = x * ys, xz = x * zs, yz = y * zs;
    const double wx = w * xs, wy = w * ys, wz = w * zs;
    m[0] = 1 - (yy + zz), m[1] = xy - wz, m[2] = xz + wy, m[3] = r->t[0];
    m[4] = xy + wz, m[5] = 1 - (xx + zz), m[6] = yz - wx, m[7] = r->t[1];
    m[8] = xz - wy, m[9] = yz + wx, m[10] = 1 - (xx + yy), m[11] = r->t[2];
}

PyDoc_STRVAR(positions64_doc,
             "_positions64(joints, parents, end_sites, end_offsets)\n--\n\n"
             "Internal (jointmath._job): world positions in float64, to measure errors below\n"
             "float32's rounding of world positions (20-bit packing). joints: a JOINT_QUAT array\n"
             "(..., J); parents as forward_kinematics takes them; end_sites (E,) joint indices and\n"
             "end_offsets (E, 3) as in a Clip. Returns a float64 array (..., J + E, 3): the joints'\n"
             "world translations, then the End Site tips (world[end_sites[e]] applied to\n"
             "end_offsets[e]), as Clip.positions() orders them; world[..., j] = world[..., parents[j]]\n"
             "* local[..., j], R the rotation of q / |q|. Plain C in double, the same on every ISA\n"
             "path (within a few ulp of double of the float64 oracle); without the GIL for large\n"
             "arrays.");

static PyObject *py_positions64(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *joints_arg, *parents_arg, *sites_arg, *offsets_arg;
    if (!PyArg_ParseTuple(args, "OOOO:_positions64", &joints_arg, &parents_arg, &sites_arg, &offsets_arg))
        return NULL;
    PyArrayObject *joints = jm_record_array(joints_arg, "joints", jm_joint_quat_descr, "JOINT_QUAT");
    if (!joints)
        return NULL;
    PyArrayObject *sites = NULL, *offsets = NULL, *out = NULL;
    jm_walk src = {NULL, NULL, 0};
    intptr_t *parent = NULL;
    double *world = NULL;
    const int ndim = PyArray_NDIM(joints);
    if (ndim < 1 || ndim > NPY_MAXDIMS - 1) {
        PyErr_SetString(PyExc_ValueError, "_positions64: joints must have shape (..., J)");
        goto fail;
    }
    const npy_intp n_joints = PyArray_DIM(joints, ndim - 1);
    if (!(sites = (PyArrayObject *)PyArray_FROMANY(sites_arg, NPY_INTP, 1, 1, NPY_ARRAY_CARRAY_RO)) ||
        !(offsets = (PyArrayObject *)PyArray_FROMANY(offsets_arg, NPY_FLOAT64, 2, 2, NPY_ARRAY_CARRAY_RO)))
        goto fail;
    const npy_intp n_sites = PyArray_DIM(sites, 0);
    const npy_intp *site = (const npy_intp *)PyArray_DATA(sites);
    const double *offset = (const double *)PyArray_DATA(offsets);
    if (PyArray_DIM(offsets, 0) != n_sites || PyArray_DIM(offsets, 1) != 3) {
        PyErr_SetString(PyExc_ValueError, "_positions64: end_offsets must have shape (E, 3), E = len(end_sites)");
        goto fail;
    }
    for (npy_intp e = 0; e < n_sites; e++)
        if (site[e] < 0 || site[e] >= n_joints) {
            PyErr_Format(PyExc_ValueError, "_positions64: end_sites[%zd] = %zd is not a joint (0 to %zd)",
                         (Py_ssize_t)e, (Py_ssize_t)site[e], (Py_ssize_t)n_joints - 1);
            goto fail;
        }
    /* the parents, and one frame's world transforms (12 doubles a joint): its children and End Sites read them */
    if (!(parent = PyMem_Malloc(n_joints ? (size_t)n_joints * sizeof(intptr_t) : 1)) ||
        !(world = PyMem_Malloc(n_joints ? (size_t)n_joints * 12 * sizeof(double) : 1))) {
        PyErr_NoMemory();
        goto fail;
    }
    if (read_parents(parents_arg, n_joints, parent) < 0)
        goto fail;
    npy_intp dims[NPY_MAXDIMS];
    for (int k = 0; k < ndim - 1; k++)
        dims[k] = PyArray_DIM(joints, k);
    dims[ndim - 1] = n_joints + n_sites, dims[ndim] = 3;
    /* the records one after another at a float's alignment (a record dtype's own alignment is 1:
       NumPy's ALIGNED flag would not see a misaligned array) */
    if (!(out = (PyArrayObject *)PyArray_SimpleNew(ndim + 1, dims, NPY_FLOAT64)) ||
        jm_walk_records(joints, jm_joint_quat_descr, 0, sizeof(jm_joint_quat), ndim, PyArray_DIMS(joints),
                        JM_WALK_PACKED, &src) < 0)
        goto fail;
    const npy_intp n = PyArray_SIZE(joints);
    const jm_joint_quat *local = (const jm_joint_quat *)src.base;
    double *position = (double *)PyArray_DATA(out);
    PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
    for (npy_intp frame = 0; frame < n; frame += n_joints, local += n_joints) {
        for (npy_intp j = 0; j < n_joints; j++, position += 3) {
            double l[12], *w = world + 12 * j;
            local_transform64(local + j, l);
            if (parent[j] < 0) {
                memcpy(w, l, sizeof l);
            } else {
                const double *p = world + 12 * parent[j]; /* an earlier joint: never w */
                for (int r = 0; r < 3; r++) { /* R = Rp Rl, t = Rp tl + tp */
                    for (int c = 0; c < 4; c++)
                        w[4 * r + c] = p[4 * r] * l[c] + p[4 * r + 1] * l[4 + c] + p[4 * r + 2] * l[8 + c];
                    w[4 * r + 3] += p[4 * r + 3];
                }
            }
            position[0] = w[3], position[1] = w[7], position[2] = w[11];
        }
        for (npy_intp e = 0; e < n_sites; e++, position += 3) {
            const double *w = world + 12 * site[e], *o = offset + 3 * e;
            for (int r = 0; r < 3; r++)
                position[r] = w[4 * r] * o[0] + w[4 * r + 1] * o[1] + w[4 * r + 2] * o[2] + w[4 * r + 3];
        }
    }
    jm_restore_gil(saved);
    PyMem_Free(parent);
    PyMem_Free(world);
    jm_walk_release(&src);
    Py_DECREF(sites);
    Py_DECREF(offsets);
    Py_DECREF(joints);
    return (PyObject *)out;
fail:
    PyMem_Free(parent);
    PyMem_Free(world);
    jm_walk_release(&src);
    Py_XDECREF(sites);
    Py_XDECREF(offsets);
    Py_XDECREF(out);
    Py_DECREF(joints);
    return NULL;
}

PyMethodDef jm_compose_methods[] = {
    JM_FASTCALL_METHOD(compose_mats),
    JM_FASTCALL_METHOD(forward_kinematics),
    {"_positions64", py_positions64, METH_VARARGS, positions64_doc},
    {NULL, NULL, 0, NULL},
};
