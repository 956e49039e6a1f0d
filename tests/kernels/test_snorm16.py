"""glTF's signed 16-bit normalized rotations (jointmath.gltf.save's rotations="normalized16"):
_core._pack_snorm16 against the exact rounding of the float32 input, on every path."""
import numpy as np
import pytest

from jointmath import _core

from adversarial import SIZES, assert_threads_agree, hard_quats, layouts, random_unit_quats


def _exact(q):
    """round(f * 32767), ties to even, clamped to +-32767: f * 32767 is exact in float64 (24 + 15 bits)."""
    return np.clip(np.rint(np.asarray(q, np.float64) * 32767), -32767, 32767).astype(np.int16)


@pytest.mark.parametrize("n", SIZES)
def test_random_unit_quats_exactly_rounded(n):
    q = random_unit_quats(np.random.default_rng(n), n)
    codes = _core._pack_snorm16(q)
    assert codes.dtype == np.int16 and codes.shape == (n, 4)
    np.testing.assert_array_equal(codes, _exact(q))


def test_hard_quats_ties_and_bounds():
    q = np.concatenate([hard_quats(np.random.default_rng(0)),
                        # 0.5 * 32767 = 16383.5, a tie (to even: 16384); its float32 neighbours
                        # fall on either side; +-1 give +-32767; beyond 1 clamps
                        np.array([[0.5, -0.5, 0.5, -0.5],
                                  [np.nextafter(np.float32(0.5), 1), np.nextafter(np.float32(0.5), 0), 1, -1],
                                  [1.0000001, -1.0000001, 0, 1e-30]], np.float32)]).astype(np.float32)
    codes = _core._pack_snorm16(q)
    np.testing.assert_array_equal(codes, _exact(q))
    assert codes[-3].tolist() == [16384, -16384, 16384, -16384]
    assert codes[-2].tolist() == [16384, 16383, 32767, -32767] and codes[-1].tolist() == [32767, -32767, 0, 0]


def test_bound_of_the_decoded_rotation():
    """Each component within half a step: the rotation of c / 32767 within 2 asin(1/32767)."""
    q = random_unit_quats(np.random.default_rng(5), 100_000)
    decoded = _core._pack_snorm16(q).astype(np.float64) / 32767
    decoded /= np.linalg.norm(decoded, axis=1, keepdims=True)
    exact = q.astype(np.float64) / np.linalg.norm(q.astype(np.float64), axis=1, keepdims=True)
    dots = np.abs(np.einsum("ij,ij->i", decoded, exact))
    assert (2 * np.arccos(np.minimum(dots, 1)) <= 2 * np.arcsin(1 / 32767) + 1e-6).all()


def test_layouts_and_shapes_leave_the_input_alone():
    q = random_unit_quats(np.random.default_rng(7), 40)
    expected = _exact(q)
    for name, view in layouts(q).items():
        before = view.copy()
        np.testing.assert_array_equal(_core._pack_snorm16(view), expected, err_msg=name)
        np.testing.assert_array_equal(view, before, err_msg=name)
    np.testing.assert_array_equal(_core._pack_snorm16(q.reshape(5, 8, 4)), expected.reshape(5, 8, 4))


def test_invalid_quaternions_and_types():
    for bad in ([0, 0, 0, 0], [np.nan, 0, 0, 1], [0, np.inf, 0, 1]):
        q = np.tile(np.float32([0, 0, 0, 1]), (9, 1))
        q[6] = bad
        with pytest.raises(ValueError, match="1 zero or non-finite quaternion.*index 6"):
            _core._pack_snorm16(q)
    with pytest.raises(TypeError, match="float32"):
        _core._pack_snorm16(np.zeros((2, 4)) + [0, 0, 0, 1])
    with pytest.raises(ValueError):
        _core._pack_snorm16(np.zeros((2, 3), np.float32))


def test_threads_agree():
    q = random_unit_quats(np.random.default_rng(9), 50_000)
    assert_threads_agree(lambda: _core._pack_snorm16(q))
