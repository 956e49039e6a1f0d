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
