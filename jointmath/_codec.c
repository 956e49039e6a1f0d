/*
 * _codec.c - the compressed clip's C side: decoding (the per-ISA kernels of csrc/codec.c),
 * sampling at any time, and the encoder's error measure.
 *
 * Private functions called by jointmath/_codec.py, which checks the container before it calls
 * them; they check again what they index with (offsets, sizes, rows), so that no input reaches
 * memory outside its buffers.
 *
 * The error measure is plain float64 C compiled once (not per ISA) without FMA contraction, so
 * the encoder's decisions, which follow it, are the same on every path and every machine.
 */
#include "_core.h"

#include <math.h>
#include <string.h>

/* A C-contiguous array of `type` (or descr) and `ndim` dims, else a ValueError naming `what`. */
static int check_array(PyObject *obj, int type, int ndim, const char *what) {
    if (!PyArray_Check(obj) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)obj) ||
        PyArray_NDIM((PyArrayObject *)obj) != ndim || PyArray_ISBYTESWAPPED((PyArrayObject *)obj) ||
        (type >= 0 && PyArray_TYPE((PyArrayObject *)obj) != type)) {
        PyErr_Format(PyExc_ValueError, "%s: expected a C-contiguous %d-d array of the right dtype", what, ndim);
        return -1;
    }
    return 0;
}

static int check_records(PyObject *obj, npy_intp n_frames, npy_intp n_joints, const char *what) {
    if (check_array(obj, -1, 2, what) < 0)
        return -1;
    PyArrayObject *a = (PyArrayObject *)obj;
    if (!PyArray_EquivTypes(PyArray_DESCR(a), jm_joint_quat_descr) || PyArray_DIM(a, 0) != n_frames ||
        PyArray_DIM(a, 1) != n_joints) {
        PyErr_Format(PyExc_ValueError, "%s: expected (%zd, %zd) JOINT_QUAT records", what, (Py_ssize_t)n_frames,
                     (Py_ssize_t)n_joints);
        return -1;
    }
    return 0;
}

static PyArrayObject *new_records(npy_intp n_frames, npy_intp n_joints) {
    npy_intp shape[2] = {n_frames, n_joints};
    Py_INCREF(jm_joint_quat_descr);
    return jm_new_array_descr(2, shape, jm_joint_quat_descr);
}

/* The tracks of a bytes object of n_joints jm_codec_track, their rows checked against n_rows. */
static const jm_codec_track *checked_tracks(PyObject *tracks, Py_ssize_t n_joints, Py_ssize_t n_rows) {
    if (!PyBytes_Check(tracks) || PyBytes_GET_SIZE(tracks) != n_joints * (Py_ssize_t)sizeof(jm_codec_track)) {
        PyErr_SetString(PyExc_ValueError, "tracks: expected bytes of one jm_codec_track per joint");
        return NULL;
    }
    const jm_codec_track *t = (const jm_codec_track *)PyBytes_AS_STRING(tracks);
    for (Py_ssize_t j = 0; j < n_joints; j++) {
        const int32_t modes[2] = {t[j].rot_mode, t[j].trans_mode}, rows[2] = {t[j].rot_row, t[j].trans_row};
        for (int k = 0; k < 2; k++) {
            const int32_t need = modes[k] == JM_TRACK_CONSTANT                                    ? 0
                                 : k == 0 && (modes[k] == JM_TRACK_RAW || modes[k] == JM_TRACK_QUANTIZED4) ? 4
                                                                                                         : 3;
            if (modes[k] < 0 || modes[k] > (k ? 2 : 3) || (need && (rows[k] < 0 || rows[k] > n_rows - need))) {
                PyErr_Format(PyExc_ValueError, "tracks: joint %zd's %s track has mode %d and rows from %d of %zd",
                             (Py_ssize_t)j, k ? "translation" : "rotation", (int)modes[k], (int)rows[k],
                             (Py_ssize_t)n_rows);
                return NULL;
            }
        }
    }
    return t;
}

/* _codec_reconstruct(values, tracks, n_joints): (F, J) records from (rows, F) int32 values. */
static PyObject *py_codec_reconstruct(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *values, *tracks;
    Py_ssize_t n_joints;
    if (!PyArg_ParseTuple(args, "OOn:_codec_reconstruct", &values, &tracks, &n_joints) ||
        check_array(values, NPY_INT32, 2, "values") < 0)
        return NULL;
    const npy_intp n_rows = PyArray_DIM((PyArrayObject *)values, 0), n_frames = PyArray_DIM((PyArrayObject *)values, 1);
    const jm_codec_track *t = checked_tracks(tracks, n_joints, n_rows);
    if (!t)
        return NULL;
    PyArrayObject *out = new_records(n_frames, n_joints);
    if (!out)
        return NULL;
    const int32_t *v = (const int32_t *)PyArray_DATA((PyArrayObject *)values);
    JM_RELEASING_GIL(n_frames * n_joints >= GIL_RELEASE_MIN_RECORDS,
                     jm_active->codec_tracks(t, (size_t)n_joints, (size_t)n_frames, v, PyArray_DATA(out)));
    return (PyObject *)out;
}

static const char *stream_error(int code) {
    switch (code) {
    case JM_CODEC_OVERRUN:
        return "a stream ends before its values";
    case JM_CODEC_BAD_BLOCK:
        return "a stream has a block with an invalid Rice parameter";
    case JM_CODEC_OUT_OF_RANGE:
        return "a stream decodes to a value out of range";
    default:
        return "a stream has bytes after its last value";
    }
}

/*
 * _codec_decode(data, streams, tracks, n_frames, n_joints): the clip's records from its data
 * (a bytes-like object) and its stream table ((S, 3) int64: offset, nbytes, kind; stream s fills
 * row s). Kind 0: a Rice stream; kind 1: n_frames little-endian int32 (jm_codec_decode). A
 * stream that does not decode: ValueError saying how (the caller names the file).
 */
static PyObject *py_codec_decode(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    PyObject *streams, *tracks;
    Py_ssize_t n_frames, n_joints;
    if (!PyArg_ParseTuple(args, "y*OOnn:_codec_decode", &data, &streams, &tracks, &n_frames, &n_joints))
        return NULL;
    PyObject *result = NULL;
    PyArrayObject *out = NULL;
    void *scratch = NULL;
    if (check_array(streams, NPY_INT64, 2, "streams") < 0 || PyArray_DIM((PyArrayObject *)streams, 1) != 3 ||
        n_frames < 1 || n_joints < 1) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "streams: expected an (S, 3) table, and frames and joints >= 1");
        goto done;
    }
    const npy_intp n_rows = PyArray_DIM((PyArrayObject *)streams, 0);
    const int64_t *table = (const int64_t *)PyArray_DATA((PyArrayObject *)streams);
    for (npy_intp s = 0; s < n_rows; s++) {
        const int64_t offset = table[3 * s], nbytes = table[3 * s + 1], kind = table[3 * s + 2];
        if (offset < 0 || nbytes < 0 || offset > data.len || nbytes > data.len - offset ||
            (kind != JM_STREAM_RICE && kind != JM_STREAM_RAW32) || (kind == JM_STREAM_RAW32 && nbytes != 4 * (int64_t)n_frames)) {
            PyErr_Format(PyExc_ValueError, "stream %zd lies outside the data or has a bad size", (Py_ssize_t)s);
            goto done;
        }
    }
    const jm_codec_track *t = checked_tracks(tracks, n_joints, n_rows);
    if (!t)
        goto done;
    out = new_records(n_frames, n_joints);
    scratch = out ? PyMem_Malloc(JM_CODEC_SCRATCH_BYTES(n_rows ? n_rows : 1)) : NULL;
    if (!scratch) {
        if (out)
            PyErr_NoMemory();
        goto done;
    }
    int error = 0;
    size_t failed = 0;
    JM_RELEASING_GIL(n_frames * n_joints >= GIL_RELEASE_MIN_RECORDS,
                     error = jm_active->codec_decode((const uint8_t *)data.buf, (size_t)data.len, table, (size_t)n_rows, t,
                                                     (size_t)n_joints, (size_t)n_frames, scratch, PyArray_DATA(out),
                                                     &failed));
    if (error) {
        PyErr_Format(PyExc_ValueError, "%s (stream %zd)", stream_error(error), (Py_ssize_t)failed);
        goto done;
    }
    result = (PyObject *)out;
    out = NULL;
done:
    PyMem_Free(scratch);
    Py_XDECREF(out);
    PyBuffer_Release(&data);
    return result;
}

/* Rotation matrix (row-major 3x3) of a unit quaternion (x, y, z, w), float64. */
static void quat_matrix(const float qf[4], double m[9]) {
    const double x = qf[0], y = qf[1], z = qf[2], w = qf[3];
    m[0] = 1 - 2 * (y * y + z * z), m[1] = 2 * (x * y - z * w), m[2] = 2 * (x * z + y * w);
    m[3] = 2 * (x * y + z * w), m[4] = 1 - 2 * (x * x + z * z), m[5] = 2 * (y * z - x * w);
    m[6] = 2 * (x * z - y * w), m[7] = 2 * (y * z + x * w), m[8] = 1 - 2 * (x * x + y * y);
}

/* world = parent * local for [R | t] transforms of 12 doubles (R row-major, then t). */
static void world_of(const jm_joint_quat *rec, const double *parent, double *world) {
    double r[9];
    quat_matrix(rec->q, r);
    const double t[3] = {rec->t[0], rec->t[1], rec->t[2]};
    if (!parent) {
        memcpy(world, r, sizeof r);
        memcpy(world + 9, t, sizeof t);
        return;
    }
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++)
            world[3 * i + k] = parent[3 * i] * r[k] + parent[3 * i + 1] * r[3 + k] + parent[3 * i + 2] * r[6 + k];
        world[9 + i] = parent[3 * i] * t[0] + parent[3 * i + 1] * t[1] + parent[3 * i + 2] * t[2] + parent[9 + i];
    }
}

/*
 * _codec_errors(raw, decoded, parents, shell): (F, J) float64 ACL's error of every joint at every
 * frame: both clips' local transforms through the chain to object space, virtual vertices at
 * `shell` along the joint's local x, y and z axes, the largest distance between a raw vertex
 * and its decoded one. Rotations as unit quaternions (the matrix formula of one), float64.
 */
static PyObject *py_codec_errors(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *raw, *decoded, *parents;
    double shell;
    if (!PyArg_ParseTuple(args, "OOOd:_codec_errors", &raw, &decoded, &parents, &shell) ||
        check_array(parents, NPY_INT64, 1, "parents") < 0)
        return NULL;
    const npy_intp n_joints = PyArray_DIM((PyArrayObject *)parents, 0);
    if (check_records(raw, PyArray_Check(raw) ? PyArray_DIM((PyArrayObject *)raw, 0) : 0, n_joints, "raw") < 0 ||
        check_records(decoded, PyArray_DIM((PyArrayObject *)raw, 0), n_joints, "decoded") < 0)
        return NULL;
    const int64_t *par = (const int64_t *)PyArray_DATA((PyArrayObject *)parents);
    for (npy_intp j = 0; j < n_joints; j++)
        if (par[j] < -1 || par[j] >= j) {
            PyErr_SetString(PyExc_ValueError, "parents: expected parents before children");
            return NULL;
        }
    const npy_intp n_frames = PyArray_DIM((PyArrayObject *)raw, 0);
    npy_intp shape[2] = {n_frames, n_joints};
    PyArrayObject *out = jm_new_array(2, shape, NPY_FLOAT64);
    double *world = out ? PyMem_Malloc(sizeof(double) * 24 * (size_t)(n_joints ? n_joints : 1)) : NULL;
    if (!world) {
        Py_XDECREF(out);
        return out ? PyErr_NoMemory() : NULL;
    }
    const jm_joint_quat *a = PyArray_DATA((PyArrayObject *)raw), *b = PyArray_DATA((PyArrayObject *)decoded);
    double *err = PyArray_DATA(out);
    JM_RELEASING_GIL(n_frames * n_joints >= GIL_RELEASE_MIN_RECORDS, {
        for (npy_intp f = 0; f < n_frames; f++)
            for (npy_intp j = 0; j < n_joints; j++) {
                double *wa = world + 24 * j, *wb = wa + 12;
                const npy_intp p = par[j];
                world_of(&a[f * n_joints + j], p >= 0 ? world + 24 * p : NULL, wa);
                world_of(&b[f * n_joints + j], p >= 0 ? world + 24 * p + 12 : NULL, wb);
                double worst = 0;
                for (int k = 0; k < 3; k++) { /* the vertex along local axis k: t + shell * column k */
                    double d2 = 0;
                    for (int i = 0; i < 3; i++) {
                        const double d = (wa[9 + i] - wb[9 + i]) + shell * (wa[3 * i + k] - wb[3 * i + k]);
                        d2 += d * d;
                    }
                    worst = d2 > worst || d2 != d2 ? d2 : worst; /* a NaN is the worst: never certified */
                }
                err[f * n_joints + j] = sqrt(worst);
            }
    });
    PyMem_Free(world);
    return (PyObject *)out;
}

/* The frame index and fraction of time t (seconds) in a clip of n_frames: clamped to the clip. */
static void frame_at(double t, double frame_time, npy_intp n_frames, npy_intp *i, float *frac) {
    double u = t / frame_time;
    const double last = (double)(n_frames - 1);
    u = u < 0 ? 0 : u > last ? last : u;
    double whole = floor(u);
    *i = (npy_intp)whole;
    *frac = (float)(u - whole);
    if (*i >= n_frames - 1) { /* the last frame itself */
        *i = n_frames - 1;
        *frac = 0.0f;
    }
}

static void sample_one(const char *frames, npy_intp n_frames, npy_intp n_joints, double frame_time, double t,
                       char *out) {
    npy_intp i;
    float frac;
    frame_at(t, frame_time, n_frames, &i, &frac);
    const char *a = frames + i * n_joints * 32;
    if (frac == 0.0f)
        memcpy(out, a, (size_t)n_joints * 32);
    else
        jm_active->slerp_joints(a, 32, a + n_joints * 32, 32, out, 32, (size_t)n_joints, frac);
}

/*
 * _codec_sample(frames, frame_time, times, out): the (F, J) decoded frames at `times` (a float or
 * an array of float64 seconds, finite, checked by the caller for arrays), times.shape + (J,)
 * records: slerp (jm_slerp_joints) between the two frames around each time, clamped to
 * [0, (F - 1) frame_time]. out: None or a C-contiguous JOINT_QUAT array of that shape.
 */
static PyObject *py_codec_sample(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "_codec_sample takes 4 arguments");
        return NULL;
    }
    PyObject *frames = args[0], *times = args[2], *out_obj = args[3];
    const double frame_time = PyFloat_AsDouble(args[1]);
    if (frame_time == -1.0 && PyErr_Occurred())
        return NULL;
    if (check_array(frames, -1, 2, "frames") < 0)
        return NULL;
    const npy_intp n_frames = PyArray_DIM((PyArrayObject *)frames, 0), n_joints = PyArray_DIM((PyArrayObject *)frames, 1);
    const char *base = PyArray_DATA((PyArrayObject *)frames);
    if (PyFloat_CheckExact(times)) { /* one time: the fast path of c.sample(t) */
        const double t = PyFloat_AS_DOUBLE(times);
        if (!isfinite(t)) {
            PyErr_Format(PyExc_ValueError, "times must be finite seconds, got %R", times);
            return NULL;
        }
        PyArrayObject *out;
        if (out_obj == Py_None) {
            npy_intp shape[1] = {n_joints};
            Py_INCREF(jm_joint_quat_descr);
            out = jm_new_array_descr(1, shape, jm_joint_quat_descr);
            if (!out)
                return NULL;
        } else {
            out = (PyArrayObject *)out_obj;
            Py_INCREF(out);
        }
        sample_one(base, n_frames, n_joints, frame_time, t, PyArray_DATA(out));
        return (PyObject *)out;
    }
    if (check_array(times, NPY_FLOAT64, PyArray_Check(times) ? PyArray_NDIM((PyArrayObject *)times) : 0, "times") < 0)
        return NULL;
    PyArrayObject *ta = (PyArrayObject *)times, *out;
    const npy_intp n_times = PyArray_SIZE(ta);
    if (out_obj == Py_None) {
        npy_intp shape[NPY_MAXDIMS + 1];
        const int nd = PyArray_NDIM(ta);
        if (nd >= NPY_MAXDIMS) {
            PyErr_SetString(PyExc_ValueError, "times has too many dimensions");
            return NULL;
        }
        memcpy(shape, PyArray_DIMS(ta), sizeof(npy_intp) * (size_t)nd);
        shape[nd] = n_joints;
        Py_INCREF(jm_joint_quat_descr);
        out = jm_new_array_descr(nd + 1, shape, jm_joint_quat_descr);
        if (!out)
            return NULL;
    } else {
        out = (PyArrayObject *)out_obj;
        Py_INCREF(out);
    }
    const double *tv = PyArray_DATA(ta);
    char *o = PyArray_DATA(out);
    JM_RELEASING_GIL(n_times * n_joints >= GIL_RELEASE_MIN_RECORDS, {
        for (npy_intp k = 0; k < n_times; k++)
            sample_one(base, n_frames, n_joints, frame_time, tv[k], o + k * n_joints * 32);
    });
    return (PyObject *)out;
}


PyMethodDef jm_codec_methods[] = {
    {"_codec_reconstruct", py_codec_reconstruct, METH_VARARGS, "Internal: a compressed clip's records from its integers."},
    {"_codec_decode", py_codec_decode, METH_VARARGS, "Internal: a compressed clip's records from its streams."},
    {"_codec_errors", py_codec_errors, METH_VARARGS, "Internal: ACL's object-space error of every joint and frame."},
    {"_codec_sample", (PyCFunction)(void (*)(void))py_codec_sample, METH_FASTCALL,
     "Internal: decoded frames sampled at times in seconds."},
    {NULL, NULL, 0, NULL},
};
