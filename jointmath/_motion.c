/*
 * _motion.c - the MOTION block of a BVH file: text <-> float32 channel values, in one pass.
 *
 * Plain C on bytes (not a per-ISA kernel: parsing is branchy and memory-bound). jointmath/bvh.py
 * reads the HIERARCHY and the two header lines in Python and hands the rest of the file here.
 *
 * Numbers: [+-] digits [. digits] [(e|E) [+-] digits], or with a leading dot (".5"); ASCII only
 * (no "inf", "nan", "1_000", hexadecimal or full-width digits). Each is rounded correctly to
 * float32 (round to nearest, ties to even), like strtof:
 *   - fastest path: a mantissa m <= 2^24 and a power of ten k with |k| <= 10 (e.g. "-0.037842"):
 *     m and 10^|k| are exact floats, so m * 10^k or m / 10^-k in float32 is correctly rounded;
 *   - fast path: up to 19 significant digits as an integer m and a power of ten k with
 *     m <= 2^53 and |k| <= 22, so m and 10^|k| are exact doubles and d = m * 10^k (or m / 10^-k)
 *     is the correctly rounded double of the decimal. Rounding d to float32 then gives the float32
 *     nearest the decimal unless d is exactly halfway between two float32 (a double rounding
 *     could then go the wrong way: if a float32 halfway point lay strictly between the decimal
 *     and d, it would be a double nearer the decimal than d is), so that case, and results
 *     outside the normal float32 range, take the slow path;
 *   - slow path: strtof on a NUL-terminated copy of the token (C locale's decimal point).
 * Typical mocap values ("-17.0000", "0.034512") all take the fast path.
 *
 * Lines end at \n, \r\n or \r only. Separators inside a line: space, tab, \v, \f.
 */
#include "_core.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static const float POW10F[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};

/* The fast paths need each float and double operation rounded once, to its own type (not x87's
   extended precision, which would round twice). */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define FAST_PATHS 1
#else
#define FAST_PATHS 0
#endif

static inline int is_separator(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
static inline int is_line_end(char c) { return c == '\n' || c == '\r'; }

/* The float32 nearest m * 10^k when the fast path decides it (returns 1), else 0. m != 0. */
static int exact_float32(uint64_t m, int k, float *out) {
    if (m > (1ull << 53) || k < -22 || k > 22)
        return 0;
    const double d = k >= 0 ? (double)m * POW10[k] : (double)m / POW10[-k];
    if (!(d >= FLT_MIN && d <= FLT_MAX))
        return 0;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    /* the 29 low mantissa bits a float32 drops: exactly 1000...0 means halfway between two */
    if ((bits & ((1ull << 29) - 1)) == (1ull << 28))
        return 0;
    *out = (float)d;
    return 1;
}

enum { NUMBER_OK = 0, NUMBER_INVALID = 1, NUMBER_NOT_FINITE = 2 };

static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Reads a run of digits at *pp into mantissa (wrapping past 19 digits: the caller goes to strtof
   then); returns how many. */
static inline int read_digits(const char **pp, const char *end, uint64_t *mantissa) {
    const char *p = *pp;
    int count = 0;
    for (; p < end && is_digit(*p); p++, count++)
        *mantissa = *mantissa * 10 + (uint64_t)(*p - '0');
    *pp = p;
    return count;
}

/*
 * Parses the number at *pp (see the file comment) into *out, moving *pp past it. The caller
 * checks that a separator or line end follows. Up to 19 digits (leading zeros included) are
 * gathered into an integer; longer numbers, and what the fast path cannot decide, go to strtof.
 */
static inline int parse_float32(const char **pp, const char *end, float *out) {
    const char *s = *pp, *p = s;
    int negative = 0;
    if (p < end && (*p == '+' || *p == '-'))
        negative = *p++ == '-';
    uint64_t mantissa = 0;
    int digits = read_digits(&p, end, &mantissa), exponent = 0;
    int any_digit = digits > 0;
    if (p < end && *p == '.') {
        p++;
        const int fraction = read_digits(&p, end, &mantissa);
        exponent = -fraction;
        digits += fraction;
        any_digit |= fraction > 0;
    }
    if (!any_digit)
        return NUMBER_INVALID;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int exponent_negative = 0, written = 0;
        if (p < end && (*p == '+' || *p == '-'))
            exponent_negative = *p++ == '-';
        const char *first = p;
        for (; p < end && is_digit(*p); p++)
            if (written < 100000)  /* far past float32's range either way: stop growing */
                written = written * 10 + (*p - '0');
        if (p == first)
            return NUMBER_INVALID;
        exponent += exponent_negative ? -written : written;
    }
    *pp = p;
    float value;
    if (mantissa == 0 && digits <= 19) {
        value = 0.0f;
    } else if (FAST_PATHS && digits <= 19 && mantissa <= (1u << 24) && exponent >= -10 && exponent <= 10) {
        /* m and 10^|k| are exact floats: one float32 operation rounds the decimal correctly */
        value = exponent < 0 ? (float)mantissa / POW10F[-exponent] : (float)mantissa * POW10F[exponent];
    } else if (digits > 19 || !FAST_PATHS || !exact_float32(mantissa, exponent, &value)) {
        const size_t length = (size_t)(p - s);
        char small[64];
        char *copy = length < sizeof small ? small : (char *)malloc(length + 1);
        if (!copy)
            return NUMBER_INVALID;
        memcpy(copy, s, length);
        copy[length] = '\0';
        value = fabsf(strtof(copy, NULL));
        if (copy != small)
            free(copy);
    }
    if (!isfinite(value))
        return NUMBER_NOT_FINITE;
    *out = negative ? -value : value;
    return NUMBER_OK;
}

/* What read_motion found wrong, for the Python side's message. */
typedef struct {
    Py_ssize_t line;      /* 1-based line number in the file */
    int kind;             /* 0 none, 1 wrong value count, 2 not a number, 3 not finite */
    Py_ssize_t count;     /* kind 1: the values found on that line */
    const char *token;    /* kinds 2, 3: the token */
    size_t token_length;
} motion_error;

/*
 * Reads frame lines from text[0, size): each non-blank line holds exactly n_channels numbers
 * (with n_channels 0, every line is a frame line and must be blank: a frame without values).
 * The first `rows` frames go to values (rows x n_channels, C order); later ones are checked and
 * counted only. Returns the number of frame lines; *last_line is the number of the file's last
 * line; on a bad line, error->kind is set and the scan stops there.
 */
static Py_ssize_t read_motion(const char *text, size_t size, Py_ssize_t first_line, Py_ssize_t n_channels,
                              float *values, Py_ssize_t rows, float *scratch, Py_ssize_t *last_line,
                              motion_error *error) {
    const char *p = text, *end = text + size;
    Py_ssize_t line = first_line, frames = 0;
    while (p < end) {
        float *row = frames < rows ? values + frames * n_channels : scratch;
        Py_ssize_t count = 0;
        int bad = NUMBER_OK;
        const char *bad_token = NULL;
        size_t bad_length = 0;
        for (;;) {
            while (p < end && is_separator(*p))
                p++;
            if (p == end || is_line_end(*p))
                break;
            const char *token = p;
            int status = NUMBER_OK;
            if (count < n_channels && bad == NUMBER_OK) {
                status = parse_float32(&p, end, row + count);
                if (status == NUMBER_OK && p < end && !is_separator(*p) && !is_line_end(*p))
                    status = NUMBER_INVALID;  /* "1_000", "2O": the number stops inside the token */
            }
            while (p < end && !is_separator(*p) && !is_line_end(*p))
                p++;
            if (status != NUMBER_OK) {
                bad = status;
                bad_token = token;
                bad_length = (size_t)(p - token);
            }
            count++;
        }
        if (count && (count != n_channels || bad != NUMBER_OK)) {
            error->line = line;
            error->kind = count != n_channels ? 1 : bad == NUMBER_INVALID ? 2 : 3;
            error->count = count;
            error->token = bad_token;
            error->token_length = bad_length;
            *last_line = line;
            return frames;
        }
        frames += count != 0 || n_channels == 0;
        if (p == end)
            break;
        p += (*p == '\r' && p + 1 < end && p[1] == '\n') ? 2 : 1;
        line++;
    }
    /* a file that ends with a line break has no line after it */
    *last_line = (size > 0 && is_line_end(end[-1])) ? line - 1 : line;
    if (*last_line < first_line)
        *last_line = first_line - 1;
    return frames;
}

PyDoc_STRVAR(read_motion_doc,
             "_read_motion(data, offset, first_line, n_channels, n_frames)\n--\n\n"
             "Internal (jointmath.bvh): the frame lines of data[offset:], line first_line onwards\n"
             "(n_channels 0: every line is a frame line, blank).\n"
             "Returns (values, frame_lines, last_line, None) with values float32 (R, n_channels),\n"
             "R = min(n_frames, frame_lines), or (None, line, kind, detail) for a bad line: kind\n"
             "'count' (detail: values found), 'number' or 'finite' (detail: the token, bytes).");

static PyObject *py_read_motion(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buffer;
    Py_ssize_t offset, first_line, n_channels, n_frames;
    if (!PyArg_ParseTuple(args, "y*nnnn", &buffer, &offset, &first_line, &n_channels, &n_frames))
        return NULL;
    PyObject *result = NULL;
    float *scratch = NULL;
    if (offset < 0 || offset > buffer.len || n_channels < 0 || n_frames < 0) {
        PyErr_SetString(PyExc_ValueError, "internal: _read_motion takes offset within data, counts >= 0");
        goto done;
    }
    const char *text = (const char *)buffer.buf + offset;
    const size_t size = (size_t)(buffer.len - offset);
    /* a frame takes at least 2 n_channels - 1 bytes plus a line break (a line break without
       channels): a huge "Frames:" of a short file is refused as truncated after the scan, without
       allocating for it first */
    Py_ssize_t rows = n_frames;
    const size_t most_rows = n_channels > 0 ? (size + 1) / (size_t)(2 * n_channels) : size + 1;
    if ((size_t)rows > most_rows)
        rows = (Py_ssize_t)most_rows;
    npy_intp dims[2] = {rows, n_channels};
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT32);
    scratch = (float *)malloc((size_t)(n_channels > 0 ? n_channels : 1) * sizeof(float));
    if (!values || !scratch) {
        Py_XDECREF(values);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    motion_error error = {0, 0, 0, NULL, 0};
    Py_ssize_t last_line = 0;
    Py_ssize_t frames;
    JM_RELEASING_GIL(size >= (1u << 16), frames = read_motion(text, size, first_line, n_channels,
                                                              (float *)PyArray_DATA(values), rows, scratch,
                                                              &last_line, &error));
    if (error.kind == 0) {
        if (frames < rows) {
            /* fewer frame lines than rows: the caller reports the truncation; hand back what was read */
            PyObject *head = PySequence_GetSlice((PyObject *)values, 0, frames);
            Py_DECREF(values);
            values = (PyArrayObject *)head;
            if (!values)
                goto done;
        }
        result = Py_BuildValue("(NnnO)", values, frames, last_line, Py_None);
    } else {
        Py_DECREF(values);
        if (error.kind == 1)
            result = Py_BuildValue("(Onsn)", Py_None, error.line, "count", error.count);
        else
            result = Py_BuildValue("(Onsy#)", Py_None, error.line, error.kind == 2 ? "number" : "finite",
                                   error.token, (Py_ssize_t)error.token_length);
    }
done:
    free(scratch);
    PyBuffer_Release(&buffer);
    return result;
}

/* ---------------------------------------------------------------- channels -> joints -- */

/* Rotating joints of one Euler order: their quaternions of a chunk of frames sit in the working
   buffers from `first` on, frame by frame (count per frame). */
typedef struct {
    int axes[3];
    Py_ssize_t first, count;
} order_group;

/* Angles of a chunk of frames per kernel call: 1,024 triples (12 KB) and their quaternions
   (16 KB) stay in L1 between the gather, the kernel and the write of the records. */
#define JOINTS_CHUNK_TRIPLES 1024

/*
 * The records of frames [f0, f0 + nf): q from the Euler kernel (intrinsic rotations, degrees) of
 * each rotating joint's three rotation values in its channel order, (0, 0, 0, 1) for a joint
 * without rotation channels; t = (rest + the joint's position values, 0), a missing position
 * channel counting 0. Each record is written once, whole. group_of[j] < 0: no rotation;
 * slot[j]: the joint's index within its group.
 */
static void joints_of_chunk(const float *motion, Py_ssize_t n_channels, Py_ssize_t n_joints, Py_ssize_t f0,
                            Py_ssize_t nf, const int64_t *columns, const float *rest, const int *group_of,
                            const Py_ssize_t *slot, const order_group *groups, int n_groups, float *angles,
                            float *quats, jm_joint_quat *out) {
    for (int g = 0; g < n_groups; g++) {
        float *a = angles + 3 * groups[g].first * nf;
        for (Py_ssize_t f = f0; f < f0 + nf; f++) {
            const float *row = motion + f * n_channels;
            for (Py_ssize_t j = 0; j < n_joints; j++) {
                if (group_of[j] != g)
                    continue;
                const int64_t *c = columns + 6 * j;
                *a++ = row[c[0]];
                *a++ = row[c[1]];
                *a++ = row[c[2]];
            }
        }
        jm_active->euler_to_quats(angles + 3 * groups[g].first * nf, quats + 4 * groups[g].first * nf,
                                  (size_t)(groups[g].count * nf), groups[g].axes, 1, 1);
    }
    for (Py_ssize_t f = 0; f < nf; f++) {
        const float *row = motion + (f0 + f) * n_channels;
        jm_joint_quat *record = out + (f0 + f) * n_joints;
        for (Py_ssize_t j = 0; j < n_joints; j++, record++) {
            const int64_t *c = columns + 6 * j;
            if (group_of[j] >= 0) {
                const order_group *group = groups + group_of[j];
                memcpy(record->q, quats + 4 * (group->first * nf + f * group->count + slot[j]), 4 * sizeof(float));
            } else {
                record->q[0] = record->q[1] = record->q[2] = 0.0f;
                record->q[3] = 1.0f;
            }
            for (int k = 0; k < 3; k++)
                record->t[k] = c[3 + k] >= 0 ? rest[4 * j + k] + row[c[3 + k]] : rest[4 * j + k];
            record->t[3] = 0.0f;
        }
    }
}

PyDoc_STRVAR(motion_to_joints_doc,
             "_motion_to_joints(motion, rest, columns, axes)\n--\n\n"
             "Internal (jointmath.bvh): (F, J) JOINT_QUAT records from float32 (F, C) C-contiguous\n"
             "channel values. rest: float32 (J, 4) C-contiguous, each joint's OFFSET and 0;\n"
             "columns: int64 (J, 6) C-contiguous, the columns of the three rotation channels in\n"
             "channel order, then of Xposition Yposition Zposition, -1 where absent (no rotation:\n"
             "all three -1); axes: int64 (J, 3), each rotation channel's axis (0 X, 1 Y, 2 Z).\n"
             "q = euler_to_quat(intrinsic, degrees) of the rotation values, identity without\n"
             "rotation; t = (rest + the position values, 0).");

static PyObject *py_motion_to_joints(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *motion, *rest, *columns_array, *axes_array;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyArray_Type, &motion, &PyArray_Type, &rest, &PyArray_Type,
                          &columns_array, &PyArray_Type, &axes_array))
        return NULL;
    const int64_t *columns = (const int64_t *)PyArray_DATA(columns_array);
    const int64_t *axes = (const int64_t *)PyArray_DATA(axes_array);
    const npy_intp n_joints = PyArray_NDIM(rest) == 2 ? PyArray_DIM(rest, 0) : -1;
    int ok = PyArray_TYPE(motion) == NPY_FLOAT32 && PyArray_NDIM(motion) == 2 && PyArray_IS_C_CONTIGUOUS(motion) &&
             PyArray_TYPE(rest) == NPY_FLOAT32 && n_joints >= 0 && PyArray_DIM(rest, 1) == 4 &&
             PyArray_IS_C_CONTIGUOUS(rest);
    ok = ok && PyArray_TYPE(columns_array) == NPY_INT64 && PyArray_NDIM(columns_array) == 2 &&
         PyArray_DIM(columns_array, 0) == n_joints && PyArray_DIM(columns_array, 1) == 6 &&
         PyArray_IS_C_CONTIGUOUS(columns_array);
    ok = ok && PyArray_TYPE(axes_array) == NPY_INT64 && PyArray_NDIM(axes_array) == 2 &&
         PyArray_DIM(axes_array, 0) == n_joints && PyArray_DIM(axes_array, 1) == 3 &&
         PyArray_IS_C_CONTIGUOUS(axes_array);
    const npy_intp n_frames = ok ? PyArray_DIM(motion, 0) : 0, n_channels = ok ? PyArray_DIM(motion, 1) : 0;
    for (npy_intp j = 0; ok && j < n_joints; j++) {
        for (int k = 0; k < 6; k++)
            ok &= columns[6 * j + k] >= -1 && columns[6 * j + k] < n_channels;
        ok &= (columns[6 * j] < 0) == (columns[6 * j + 1] < 0) && (columns[6 * j] < 0) == (columns[6 * j + 2] < 0);
        for (int k = 0; k < 3; k++)
            ok &= axes[3 * j + k] >= 0 && axes[3 * j + k] <= 2;
        ok &= columns[6 * j] < 0 ||
              (axes[3 * j] != axes[3 * j + 1] && axes[3 * j] != axes[3 * j + 2] && axes[3 * j + 1] != axes[3 * j + 2]);
    }
    if (!ok)
        return PyErr_Format(PyExc_ValueError, "internal: _motion_to_joints takes float32 (F, C), float32 (J, 4), "
                                              "int64 (J, 6) columns in [-1, C) and int64 (J, 3) axes in 0..2, distinct"
                                              " for a rotating joint");
    /* the rotating joints, grouped by order (at most the six Tait-Bryan orders) */
    order_group groups[6];
    int n_groups = 0;
    int *group_of = (int *)malloc((size_t)(n_joints ? n_joints : 1) * sizeof(int));
    Py_ssize_t *slot = (Py_ssize_t *)malloc((size_t)(n_joints ? n_joints : 1) * sizeof(Py_ssize_t));
    Py_ssize_t n_rotating = 0;
    for (npy_intp j = 0; group_of && slot && j < n_joints; j++) {
        group_of[j] = -1;
        if (columns[6 * j] < 0)
            continue;
        int g = 0;
        while (g < n_groups && !(groups[g].axes[0] == axes[3 * j] && groups[g].axes[1] == axes[3 * j + 1] &&
                                 groups[g].axes[2] == axes[3 * j + 2]))
            g++;
        if (g == n_groups) { /* a new order: six at most, the axes being distinct */
            for (int k = 0; k < 3; k++)
                groups[g].axes[k] = (int)axes[3 * j + k];
            groups[g].count = 0;
            n_groups++;
        }
        group_of[j] = g;
        slot[j] = groups[g].count++;
        n_rotating++;
    }
    Py_ssize_t first = 0;
    for (int g = 0; g < n_groups; g++) {
        groups[g].first = first;
        first += groups[g].count;
    }
    /* frames per chunk: about JOINTS_CHUNK_TRIPLES rotations, at least one frame */
    const Py_ssize_t chunk = JOINTS_CHUNK_TRIPLES / (n_rotating > 0 ? n_rotating : 1) + 1;
    float *angles = (float *)malloc((size_t)(chunk * n_rotating + 1) * 3 * sizeof(float));
    float *quats = (float *)malloc((size_t)(chunk * n_rotating + 1) * 4 * sizeof(float));
    npy_intp dims[2] = {n_frames, n_joints};
    Py_INCREF(jm_joint_quat_descr);
    PyArrayObject *joints = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, jm_joint_quat_descr, 2, dims, NULL,
                                                                  NULL, 0, NULL);
    if (joints && group_of && slot && angles && quats) {
        jm_joint_quat *out = (jm_joint_quat *)PyArray_DATA(joints);
        const float *values = (const float *)PyArray_DATA(motion);
        PyThreadState *saved = jm_release_gil(n_frames * n_joints >= GIL_RELEASE_MIN_RECORDS);
        for (npy_intp f0 = 0; f0 < n_frames; f0 += chunk)
            joints_of_chunk(values, n_channels, n_joints, f0, n_frames - f0 < chunk ? n_frames - f0 : chunk, columns,
                            (const float *)PyArray_DATA(rest), group_of, slot, groups, n_groups, angles, quats, out);
        jm_restore_gil(saved);
    } else if (joints) {
        Py_CLEAR(joints);
        PyErr_NoMemory();
    }
    free(group_of);
    free(slot);
    free(angles);
    free(quats);
    return (PyObject *)joints;
}

PyDoc_STRVAR(first_moved_joint_doc,
             "_first_moved_joint(joints, offsets, fixed, tolerance)\n--\n\n"
             "Internal (jointmath.bvh.save): the first record f * J + j (frame by frame) of (F, J)\n"
             "C-contiguous JOINT_QUAT joints whose translation differs from offsets[j] (float64\n"
             "(J, 3) C-contiguous) by more than tolerance on an axis k with bit k of fixed[j] set\n"
             "(uint8 (J,): the axes without a position channel; |t - offset| in float64, NaN counts\n"
             "as more), or -1.");

static PyObject *py_first_moved_joint(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *joints, *offsets, *fixed;
    double tolerance;
    if (!PyArg_ParseTuple(args, "O!O!O!d", &PyArray_Type, &joints, &PyArray_Type, &offsets, &PyArray_Type, &fixed,
                          &tolerance))
        return NULL;
    const npy_intp n_joints = PyArray_NDIM(joints) == 2 ? PyArray_DIM(joints, 1) : -1;
    if (!PyArray_EquivTypes(PyArray_DESCR(joints), jm_joint_quat_descr) || n_joints < 0 ||
        !PyArray_IS_C_CONTIGUOUS(joints) || PyArray_TYPE(offsets) != NPY_FLOAT64 || PyArray_NDIM(offsets) != 2 ||
        PyArray_DIM(offsets, 0) != n_joints || PyArray_DIM(offsets, 1) != 3 || !PyArray_IS_C_CONTIGUOUS(offsets) ||
        PyArray_TYPE(fixed) != NPY_UINT8 || PyArray_NDIM(fixed) != 1 || PyArray_DIM(fixed, 0) != n_joints ||
        !PyArray_IS_C_CONTIGUOUS(fixed))
        return PyErr_Format(PyExc_ValueError, "internal: _first_moved_joint takes (F, J) JOINT_QUAT, float64 (J, 3) "
                                              "and uint8 (J,), C-contiguous");
    const jm_joint_quat *record = (const jm_joint_quat *)PyArray_DATA(joints);
    const double *offset = (const double *)PyArray_DATA(offsets);
    const npy_uint8 *fixed_axes = (const npy_uint8 *)PyArray_DATA(fixed);
    const npy_intp n = PyArray_SIZE(joints);
    for (npy_intp i = 0; i < n; i++) {
        const npy_intp j = i % n_joints;
        for (int k = 0; k < 3; k++)
            if (fixed_axes[j] >> k & 1 && !(fabs((double)record[i].t[k] - offset[3 * j + k]) <= tolerance))
                return PyLong_FromSsize_t(i);
    }
    return PyLong_FromLong(-1);
}

/* ------------------------------------------------------------------------- writing -- */

/* Whether the decimal m * 10^k reads back as x (fast path, else strtof on its text). */
static int reads_back_as(uint64_t m, int k, float x) {
    float value;
    if (FAST_PATHS && exact_float32(m, k, &value))
        return value == x;
    char text[48];
    snprintf(text, sizeof text, "%llue%d", (unsigned long long)m, k);
    return strtof(text, NULL) == x;
}

/* 10^k for k in [-46, 39], the double nearest it (the compiler rounds decimal literals
   correctly; exact from 10^0 to 10^22): POW10_NEAREST[k + 46]. */
static const double POW10_NEAREST[86] = {
    1e-46, 1e-45, 1e-44, 1e-43, 1e-42, 1e-41, 1e-40, 1e-39, 1e-38, 1e-37,
    1e-36, 1e-35, 1e-34, 1e-33, 1e-32, 1e-31, 1e-30, 1e-29, 1e-28, 1e-27,
    1e-26, 1e-25, 1e-24, 1e-23, 1e-22, 1e-21, 1e-20, 1e-19, 1e-18, 1e-17,
    1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7,
    1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3,
    1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
    1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23,
    1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31, 1e32, 1e33,
    1e34, 1e35, 1e36, 1e37, 1e38, 1e39,
};

/* e with ax in [2^(e-1), 2^e) for a finite float32 ax > 0 (subnormals: -125 at most). */
static inline int binary_exponent(float ax) {
    uint32_t bits;
    memcpy(&bits, &ax, sizeof bits);
    return (int)(bits >> 23) - 126;
}

/* The decimal exponent of a finite float32 ax > 0: the largest e with POW10_NEAREST[e] <= ax. */
static inline int decimal_exponent(float ax) {
    int e10 = (binary_exponent(ax) - 1) * 30103 / 100000; /* about log10(ax); the loops settle it */
    while (e10 < 39 && (double)ax >= POW10_NEAREST[e10 + 1 + 46])
        e10++;
    while (e10 > -46 && (double)ax < POW10_NEAREST[e10 + 46])
        e10--;
    return e10;
}

/* nearbyint for 0 <= v < 2^52 (round to nearest, ties to even): adding 2^52 leaves no fraction
   bits; with x87's extended precision (no FAST_PATHS), libm's nearbyint. */
static inline double round_to_integer(double v) {
    return FAST_PATHS ? (v + 4503599627370496.0) - 4503599627370496.0 : nearbyint(v);
}

/*
 * One candidate length of format_float32: whether a decimal of `digits` significant digits
 * reads back as ax (the finite float32 |x| > 0 with decimal exponent e10; half_gap: half the
 * smaller gap to its float32 neighbours): the one nearest ax,
 * or, when ax sits within 1e-3 of a tie between two (the scaled product is a rounded double),
 * the other one, each checked exactly (reads_back_as). 1 and *m, *k set (the decimal m 10^k);
 * 0 if neither reads back; -1 if 10^(digits - 1 - e10) is outside the exact powers of ten.
 */
static int shortest_candidate(double ax, float target, int e10, int digits, double half_gap, uint64_t *m,
                              int *k) {
    const int scale = digits - 1 - e10; /* ax * 10^scale has `digits` digits before the point */
    if (scale < -22 || scale > 22)
        return -1;
    const double scaled = scale >= 0 ? ax * POW10[scale] : ax / POW10[-scale];
    const double nearest = round_to_integer(scaled);
    const double other = scaled >= nearest ? nearest + 1 : nearest - 1;
    /* certain without the exact check: nearest lies inside the rounding interval (half_gap, the
       smaller half of it, either side) by more than the error of scaled (<= 2^-53 scaled <
       1.2e-7; the margin is 2.5e-7) */
    const double gap = half_gap * POW10_NEAREST[scale + 46] * (1 - 1e-9);
    if (nearest >= 1 && fabs(nearest - scaled) + 2.5e-7 < gap) {
        *m = (uint64_t)nearest, *k = -scale;
        return 1;
    }
    if (nearest >= 1 && reads_back_as((uint64_t)nearest, -scale, target)) {
        *m = (uint64_t)nearest, *k = -scale;
        return 1;
    }
    if (fabs(scaled - nearest) > 0.499 && other >= 1 && reads_back_as((uint64_t)other, -scale, target)) {
        *m = (uint64_t)other, *k = -scale;
        return 1;
    }
    return 0;
}

/*
 * Bit digits - 1 set for each length, 1 to 9 digits, whose candidates (shortest_candidate) may
 * read back as ax; a clear bit is certain not to (so only the set ones are checked exactly,
 * shortest first). A decimal reads back when it lies within the rounding interval of ax, whose
 * half-width is at most half an ulp: scaled like the digits, that is `gap`. The nearest
 * candidate lies `distance` from ax 10^scale, the other one 1 - distance. Computed with a
 * product by a rounded 10^scale (error <= 2^-52 of scaled < 1e9, under 2.5e-7) and a margin of
 * 5e-7 on top. All nine are computed without a branch between them (they overlap in the CPU).
 * e10 in [-14, 22], so that every scale is within [-22, 22].
 */
static inline unsigned lengths_that_may_read_back(double ax, int e10, double half_ulp) {
    unsigned maybe = 0;
    for (int digits = 1; digits <= 9; digits++) {
        const double power = POW10_NEAREST[digits - 1 - e10 + 46];
        const double scaled = ax * power, gap = half_ulp * power * (1 + 1e-9) + 5e-7;
        const double distance = fabs(scaled - round_to_integer(scaled));
        maybe |= (unsigned)(distance <= gap || 1 - distance <= gap) << (digits - 1);
    }
    return maybe;
}

/*
 * Writes the shortest decimal that reads back as the finite float32 x (correctly rounded) to
 * out; returns its length (<= 17). Candidates with p = 1, 2, ... 9 significant digits
 * (shortest_candidate; the lengths that cannot read back are skipped first, by
 * lengths_that_may_read_back). Nine digits always read back for float32. Layout as repr of a
 * float: -17 for -17.0, 0.001 for 1e-3, 1.5e-07 in exponent form below 1e-5 and from 1e16.
 */
static int format_float32(float x, char *out) {
    char *p = out;
    if (signbit(x))
        *p++ = '-';
    const double ax = fabs((double)x);
    if (ax == 0) {
        *p++ = '0';
        return (int)(p - out);
    }
    const float target = fabsf(x);
    const int e10 = decimal_exponent(target);
    /* half an ulp of target, 2^(e - 25) (24-bit significand; subnormals have the ulp of FLT_MIN) */
    const int e2 = binary_exponent(target) > -125 ? binary_exponent(target) : -125;
    const uint64_t half_ulp_bits = (uint64_t)(e2 - 25 + 1023) << 52;
    double half_ulp;
    memcpy(&half_ulp, &half_ulp_bits, sizeof half_ulp);
    /* at a power of two (not FLT_MIN) the float32 below is nearer: half that gap is a quarter ulp */
    uint32_t target_bits;
    memcpy(&target_bits, &target, sizeof target_bits);
    const double half_gap = (target_bits & 0x7FFFFF) == 0 && e2 > -125 ? half_ulp / 2 : half_ulp;
    const unsigned maybe = e10 >= -14 && e10 <= 22 ? lengths_that_may_read_back(ax, e10, half_ulp) : 0x1FF;
    uint64_t m = 0;
    int k = 0, found = 0;
    for (int digits = 1; digits <= 9 && !found; digits++) {
        if (!(maybe >> (digits - 1) & 1))
            continue;
        found = shortest_candidate(ax, target, e10, digits, half_gap, &m, &k);
        if (found < 0) {
            found = 0;
            break;
        }
    }
    if (!found) {
        /* outside the fast path's powers of ten (|x| < 1e-13 or > 1e22): printf's exact digits */
        char text[32];
        for (int digits = 1; digits <= 9 && !found; digits++) {
            snprintf(text, sizeof text, "%.*e", digits - 1, ax);
            if (strtof(text, NULL) == target) {
                char *exponent_at = strchr(text, 'e');
                m = 0;
                for (const char *c = text; c < exponent_at; c++)
                    if (*c != '.')
                        m = m * 10 + (uint64_t)(*c - '0');
                k = atoi(exponent_at + 1) - (digits - 1);
                found = 1;
            }
        }
    }
    while (m % 10 == 0) {
        m /= 10;
        k++;
    }
    char digits[24];
    int n = 0;
    for (uint64_t rest = m; rest; rest /= 10)
        digits[n++] = (char)('0' + rest % 10);
    /* digits[] is reversed; `leading` is the decimal exponent of the first digit */
    const int leading = n - 1 + k;
    if (leading >= -5 && leading < 16) {
        if (leading < 0) {
            *p++ = '0';
            *p++ = '.';
            for (int z = -1; z > leading; z--)
                *p++ = '0';
            for (int i = n - 1; i >= 0; i--)
                *p++ = digits[i];
        } else {
            for (int i = n - 1, position = leading; i >= 0 || position >= 0; i--, position--) {
                if (position == -1)
                    *p++ = '.';
                *p++ = i >= 0 ? digits[i] : '0';
            }
        }
    } else {
        *p++ = digits[n - 1];
        if (n > 1) {
            *p++ = '.';
            for (int i = n - 2; i >= 0; i--)
                *p++ = digits[i];
        }
        p += sprintf(p, "e%c%02d", leading < 0 ? '-' : '+', leading < 0 ? -leading : leading);
    }
    return (int)(p - out);
}


PyDoc_STRVAR(format_motion_doc,
             "_format_motion(values)\n--\n\n"
             "Internal (jointmath.bvh): a float32 (F, C) C-contiguous array as BVH frame lines,\n"
             "values separated by a space, each line ended by \\n, each value the shortest decimal\n"
             "that reads back as the same float32. Returns bytes, or the flat index (int) of the\n"
             "first non-finite value, which BVH cannot hold.");

static PyObject *py_format_motion(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyArray_Check(arg) || PyArray_TYPE((PyArrayObject *)arg) != NPY_FLOAT32 ||
        PyArray_NDIM((PyArrayObject *)arg) != 2 || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)arg))
        return PyErr_Format(PyExc_ValueError, "internal: _format_motion takes a C-contiguous float32 (F, C) array");
    PyArrayObject *values = (PyArrayObject *)arg;
    const npy_intp rows = PyArray_DIM(values, 0), columns = PyArray_DIM(values, 1);
    const float *v = (const float *)PyArray_DATA(values);
    const npy_intp n = rows * columns;
    for (npy_intp i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return PyLong_FromSsize_t(i);
    /* 18 bytes per value at most (a separator and "-1234567890000000"), one line break per row */
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, n * 18 + rows + 1);
    if (!bytes)
        return NULL;
    char *start = PyBytes_AS_STRING(bytes), *p = start;
    PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
    for (npy_intp r = 0; r < rows; r++) {
        for (npy_intp c = 0; c < columns; c++) {
            if (c)
                *p++ = ' ';
            p += format_float32(v[r * columns + c], p);
        }
        *p++ = '\n';
    }
    jm_restore_gil(saved);
    if (_PyBytes_Resize(&bytes, p - start) < 0)
        return NULL;
    return bytes;
}

PyDoc_STRVAR(packing_angles_doc,
             "_packing_angles(a, b)\n--\n\n"
             "Internal (jointmath._job): the rotation angle in radians between the quaternions q of two\n"
             "C-contiguous JOINT_QUAT arrays of one shape, as a float64 array of that shape, any scale,\n"
             "modulo sign: 2 atan2(|v|, |w|) of r = conj(a.q) b.q in float64, |w| = |a.q . b.q|,\n"
             "v = a.w b.v - b.w a.v - a.v x b.v (accurate for the tiny angles of packing, where\n"
             "2 acos(a.q . b.q) loses half the digits). Runs without the GIL for large arrays.");

static PyObject *py_packing_angles(PyObject *self, PyObject *args) {
    (void)self;
    PyArrayObject *a, *b;
    if (!PyArg_ParseTuple(args, "O!O!:_packing_angles", &PyArray_Type, &a, &PyArray_Type, &b))
        return NULL;
    if (!PyArray_EquivTypes(PyArray_DESCR(a), jm_joint_quat_descr) ||
        !PyArray_EquivTypes(PyArray_DESCR(b), jm_joint_quat_descr) || !PyArray_IS_C_CONTIGUOUS(a) ||
        !PyArray_IS_C_CONTIGUOUS(b) || !PyArray_SAMESHAPE(a, b))
        return PyErr_Format(PyExc_ValueError, "internal: _packing_angles takes two C-contiguous JOINT_QUAT arrays "
                                              "of one shape");
    PyArrayObject *angles = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(a), PyArray_DIMS(a), NPY_FLOAT64);
    if (!angles)
        return NULL;
    const jm_joint_quat *p = (const jm_joint_quat *)PyArray_DATA(a), *r = (const jm_joint_quat *)PyArray_DATA(b);
    double *out = (double *)PyArray_DATA(angles);
    const npy_intp n = PyArray_SIZE(a);
    PyThreadState *saved = jm_release_gil(n >= GIL_RELEASE_MIN_RECORDS);
    for (npy_intp i = 0; i < n; i++) {
        const double x0 = p[i].q[0], y0 = p[i].q[1], z0 = p[i].q[2], w0 = p[i].q[3];
        const double x1 = r[i].q[0], y1 = r[i].q[1], z1 = r[i].q[2], w1 = r[i].q[3];
        const double vx = w0 * x1 - w1 * x0 - (y0 * z1 - z0 * y1);
        const double vy = w0 * y1 - w1 * y0 - (z0 * x1 - x0 * z1);
        const double vz = w0 * z1 - w1 * z0 - (x0 * y1 - y0 * x1);
        const double w = fabs(x0 * x1 + y0 * y1 + z0 * z1 + w0 * w1);
        out[i] = 2 * atan2(sqrt(vx * vx + vy * vy + vz * vz), w);
    }
    jm_restore_gil(saved);
    return (PyObject *)angles;
}

PyMethodDef jm_motion_methods[] = {
    {"_read_motion", py_read_motion, METH_VARARGS, read_motion_doc},
    {"_format_motion", py_format_motion, METH_O, format_motion_doc},
    {"_motion_to_joints", py_motion_to_joints, METH_VARARGS, motion_to_joints_doc},
    {"_first_moved_joint", py_first_moved_joint, METH_VARARGS, first_moved_joint_doc},
    {"_packing_angles", py_packing_angles, METH_VARARGS, packing_angles_doc},
    {NULL, NULL, 0, NULL},
};
