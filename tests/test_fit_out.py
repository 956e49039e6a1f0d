"""out= of quat_mean (run once: the kernels are the ones tests/kernels/test_fit.py checks on
every path): the same means as a fresh result, in place or through a copy, out sharing memory
with the input, and the errors naming out. random_quats' out= is in tests/kernels/test_fit_random.py."""
import numpy as np
import pytest

import jointmath as jm


def quats(rng, shape, dtype=np.float64):
    q = rng.standard_normal(shape + (4,)) * [0.2, 0.2, 0.2, 1]
    return q.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quat_mean_into_out(dtype):
    rng = np.random.default_rng(1)
    q, weights = quats(rng, (40, 6), dtype), rng.uniform(0, 1, (40, 6))
    for kwargs, shape in [({}, (4,)), ({"axis": 0}, (6, 4)), ({"axis": 0, "weights": weights}, (6, 4)),
                          ({"axis": ()}, (40, 6, 4))]:
        expected = jm.quat_mean(q, **kwargs)
        out = np.full(shape, np.nan, dtype)
        assert jm.quat_mean(q, out=out, **kwargs) is out
        np.testing.assert_array_equal(out, expected)
        strided = np.full(shape[:-1] + (8,), np.nan, dtype)[..., ::2]  # not C-ordered: through a copy
        assert jm.quat_mean(q, out=strided, **kwargs) is strided
        np.testing.assert_array_equal(strided, expected)


def test_quat_mean_out_sharing_memory_with_q():
    """The means of sets written over the quaternions the later sets read: as a fresh result."""
    rng = np.random.default_rng(2)
    q = quats(rng, (64, 16))
    expected = jm.quat_mean(q, axis=1)
    flat = q.reshape(-1).copy()
    q_view = flat.reshape(64, 16, 4)
    out = flat[: 64 * 4].reshape(64, 4)  # the first sets' quaternions
    assert jm.quat_mean(q_view, axis=1, out=out) is out
    np.testing.assert_array_equal(out, expected)
    normalised = q.copy()  # axis=(): item for item on the same memory
    np.testing.assert_array_equal(jm.quat_mean(normalised, axis=(), out=normalised), jm.quat_mean(q, axis=()))


def test_quat_mean_out_errors_name_out():
    q = quats(np.random.default_rng(3), (5, 3))
    with pytest.raises(ValueError, match="out"):
        jm.quat_mean(q, axis=0, out=np.empty((4,)))
    with pytest.raises(ValueError, match="out"):
        jm.quat_mean(q, out=np.empty((3, 4)))
    with pytest.raises(TypeError, match="out.*float64"):
        jm.quat_mean(q, axis=0, out=np.empty((3, 4), np.float32))
    with pytest.raises(TypeError, match="out.*float32"):
        jm.quat_mean(q.astype(np.float32), axis=0, out=np.empty((3, 4)))
    with pytest.raises(TypeError, match="out"):
        jm.quat_mean(q, out=[0.0, 0.0, 0.0, 1.0])
    read_only = np.zeros((3, 4))
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="out.*writeable"):
        jm.quat_mean(q, axis=0, out=read_only)
    with pytest.raises(ValueError, match="weights"):  # the weights' own error, out given or not
        jm.quat_mean(q, weights=-np.ones((5, 3)), axis=0, out=np.empty((3, 4)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_align_vectors_into_out(dtype):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((6, 8, 3)).astype(dtype), rng.standard_normal((6, 8, 3)).astype(dtype)
    expected_q, expected_rssd = jm.align_vectors(a, b)
    quats, rssd = np.full((6, 4), np.nan, dtype), np.full(6, np.nan, dtype)
    got = jm.align_vectors(a, b, out=(quats, rssd))
    assert type(got) is tuple and got[0] is quats and got[1] is rssd
    np.testing.assert_array_equal(quats, expected_q)
    np.testing.assert_array_equal(rssd, expected_rssd)
    strided_q, strided_rssd = np.full((6, 8), np.nan, dtype)[:, ::2], np.full(12, np.nan, dtype)[::2]
    got = jm.align_vectors(a, b, out=(strided_q, strided_rssd))  # not C-ordered: through copies
    assert got[0] is strided_q and got[1] is strided_rssd
    np.testing.assert_array_equal(strided_q, expected_q)
    np.testing.assert_array_equal(strided_rssd, expected_rssd)
    one_q, one_rssd = np.empty(4, dtype), np.empty((), dtype)  # a single set: rssd 0-d
    assert jm.align_vectors(a[0], b[0], out=(one_q, one_rssd))[1] is one_rssd
    np.testing.assert_array_equal(one_q, expected_q[0])
    assert one_rssd == expected_rssd[0]


def test_align_vectors_out_sharing_memory_with_a():
    """quats written over a's first sets, which later sets are read after: as a fresh result."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((64, 2, 3)), rng.standard_normal((64, 2, 3))
    expected_q, expected_rssd = jm.align_vectors(a, b)
    flat = a.reshape(-1).copy()
    quats = flat[: 64 * 4].reshape(64, 4)
    rssd = np.empty(64)
    jm.align_vectors(flat.reshape(64, 2, 3), b, out=(quats, rssd))
    np.testing.assert_array_equal(quats, expected_q)
    np.testing.assert_array_equal(rssd, expected_rssd)


def test_align_vectors_out_errors_name_out():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((3, 5, 3)), rng.standard_normal((3, 5, 3))
    for bad in (np.empty((3, 4)), [np.empty((3, 4)), np.empty(3)], (np.empty((3, 4)),), (np.empty((3, 4)), None)):
        with pytest.raises(TypeError, match="out"):
            jm.align_vectors(a, b, out=bad)
    with pytest.raises(ValueError, match="out"):
        jm.align_vectors(a, b, out=(np.empty((3, 3)), np.empty(3)))
    with pytest.raises(ValueError, match="out"):
        jm.align_vectors(a, b, out=(np.empty((3, 4)), np.empty(4)))
    with pytest.raises(TypeError, match="out.*float64"):
        jm.align_vectors(a, b, out=(np.empty((3, 4), np.float32), np.empty(3, np.float32)))
    read_only = np.zeros(3)
    read_only.flags.writeable = False
    quats = np.zeros((3, 4))
    with pytest.raises(ValueError, match="out.*writeable"):
        jm.align_vectors(a, b, out=(quats, read_only))
    assert not quats.any()  # both checked before either is written
