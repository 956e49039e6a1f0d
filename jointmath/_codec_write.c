/*
 * _codec_write.c - the compressed clip's Rice streams written (the encoder's last step): for each
 * block of a row of integers, the predictor order and Rice parameter that code it in the fewest
 * bits, then the bits (the format csrc/codec.c reads, docs/formats.md).
 *
 * Integers only: the same bytes on every machine. Plain C compiled once (not a per-ISA kernel).
 */
#include "_core.h"

#include <string.h>

/* An MSB-first bit writer into a buffer sized beforehand (the exact bit count is known). */
typedef struct {
    uint8_t *buf;
    uint64_t acc;  /* pending bits, right-aligned */
    unsigned n;    /* how many */
    size_t bytes;  /* bytes written */
} bit_writer;

static inline void put_bits(bit_writer *w, uint64_t code, unsigned len) { /* len <= 32 */
    w->acc = (w->acc << len) | (code & (((uint64_t)1 << len) - 1));
    w->n += len;
    while (w->n >= 8) {
        w->n -= 8;
        w->buf[w->bytes++] = (uint8_t)(w->acc >> w->n);
    }
}

/* zigzag residuals of order `order` of x[start..end) into u (order min(order, i) at value i) */
static void residuals(const int32_t *x, size_t start, size_t end, unsigned order, uint64_t *u) {
    for (size_t i = start; i < end; i++) {
        const size_t p = i < order ? i : order;
        const int64_t x1 = p >= 1 ? x[i - 1] : 0, x2 = p >= 2 ? x[i - 2] : 0, x3 = p >= 3 ? x[i - 3] : 0;
        const int64_t prediction = p == 0 ? 0 : p == 1 ? x1 : p == 2 ? 2 * x1 - x2 : 3 * x1 - 3 * x2 + x3;
        const int64_t e = (int64_t)x[i] - prediction;
        u[i - start] = ((uint64_t)e << 1) ^ (uint64_t)(e >> 63);
    }
}

/* The bits of n residuals at Rice parameter k (escapes included). */
static uint64_t rice_bits(const uint64_t *u, size_t n, unsigned k) {
    uint64_t bits = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t q = u[i] >> k;
        bits += q >= JM_CODEC_ESCAPE ? JM_CODEC_ESCAPE + 32 : q + 1 + k;
    }
    return bits;
}

/* The cheapest (order, k) of a block and its bits (header included). */
static uint64_t choose_block(const int32_t *x, size_t start, size_t end, unsigned *best_order, unsigned *best_k) {
    uint64_t u[JM_CODEC_BLOCK], best = UINT64_MAX;
    const size_t n = end - start;
    for (unsigned order = 0; order < 4; order++) {
        residuals(x, start, end, order, u);
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += u[i];
        if (sum == 0) {
            if (7 < best)
                best = 7, *best_order = order, *best_k = JM_CODEC_ZERO_BLOCK;
            continue;
        }
        unsigned k0 = 0; /* about log2 of the mean residual */
        while (k0 < JM_CODEC_MAX_K && ((uint64_t)1 << (k0 + 1)) <= sum / n)
            k0++;
        for (unsigned k = k0 ? k0 - 1 : 0; k <= k0 + 1 && k <= JM_CODEC_MAX_K; k++) {
            const uint64_t bits = 7 + rice_bits(u, n, k);
            if (bits < best)
                best = bits, *best_order = order, *best_k = k;
        }
    }
    return best;
}

/*
 * _codec_write_rows(values): the Rice stream of each row of a (R, F) int32 array (values within
 * +-JM_CODEC_MAX_VALUE), as a list of bytes objects.
 */
static PyObject *py_codec_write_rows(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyArray_Check(arg) || PyArray_TYPE((PyArrayObject *)arg) != NPY_INT32 || PyArray_NDIM((PyArrayObject *)arg) != 2 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)arg)) {
        PyErr_SetString(PyExc_ValueError, "values: expected a C-contiguous (R, F) int32 array");
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)arg;
    const npy_intp n_rows = PyArray_DIM(a, 0), n = PyArray_DIM(a, 1);
    const int32_t *all = PyArray_DATA(a);
    for (npy_intp i = 0; i < n_rows * n; i++)
        if (all[i] > JM_CODEC_MAX_VALUE || all[i] < -JM_CODEC_MAX_VALUE) {
            PyErr_SetString(PyExc_ValueError, "values: out of range");
            return NULL;
        }
    const size_t n_blocks = ((size_t)n + JM_CODEC_BLOCK - 1) / JM_CODEC_BLOCK;
    PyObject *list = PyList_New(n_rows);
    unsigned *orders = PyMem_Malloc((n_blocks + 1) * 2 * sizeof(unsigned));
    if (!list || !orders) {
        Py_XDECREF(list);
        PyMem_Free(orders);
        return PyErr_NoMemory();
    }
    unsigned *ks = orders + n_blocks + 1;
    for (npy_intp r = 0; r < n_rows; r++) {
        const int32_t *x = all + r * n;
        uint64_t total = 0;
        for (size_t b = 0; b < n_blocks; b++) {
            const size_t start = b * JM_CODEC_BLOCK, end = (size_t)n - start < JM_CODEC_BLOCK ? (size_t)n : start + JM_CODEC_BLOCK;
            total += choose_block(x, start, end, &orders[b], &ks[b]);
        }
        PyObject *bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((total + 7) / 8));
        if (!bytes) {
            Py_DECREF(list);
            PyMem_Free(orders);
            return NULL;
        }
        bit_writer w = {(uint8_t *)PyBytes_AS_STRING(bytes), 0, 0, 0};
        uint64_t u[JM_CODEC_BLOCK];
        for (size_t b = 0; b < n_blocks; b++) {
            const size_t start = b * JM_CODEC_BLOCK, end = (size_t)n - start < JM_CODEC_BLOCK ? (size_t)n : start + JM_CODEC_BLOCK;
            const unsigned k = ks[b];
            put_bits(&w, orders[b] << 5 | k, 7);
            if (k == JM_CODEC_ZERO_BLOCK)
                continue;
            residuals(x, start, end, orders[b], u);
            for (size_t i = 0; i < end - start; i++) {
                const uint64_t q = u[i] >> k;
                if (q >= JM_CODEC_ESCAPE) {
                    put_bits(&w, ((uint64_t)1 << JM_CODEC_ESCAPE) - 1, JM_CODEC_ESCAPE);
                    put_bits(&w, u[i], 32);
                } else {
                    put_bits(&w, (((uint64_t)1 << q) - 1) << 1, (unsigned)q + 1);
                    if (k)
                        put_bits(&w, u[i], k);
                }
            }
        }
        if (w.n) /* the last byte, zero-padded */
            w.buf[w.bytes++] = (uint8_t)(w.acc << (8 - w.n));
        PyList_SET_ITEM(list, r, bytes);
    }
    PyMem_Free(orders);
    return list;
}

PyMethodDef jm_codec_write_methods[] = {
    {"_codec_write_rows", py_codec_write_rows, METH_O, "Internal: the Rice streams of rows of integers."},
    {NULL, NULL, 0, NULL},
};
