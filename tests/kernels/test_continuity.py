"""make_continuous: quaternion signs made continuous along a time axis, in float32 and float64."""
import warnings

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import random_unit_quats


def test_make_continuous_names_what_is_missing():
    with pytest.raises(ValueError, match=r"needs q with a time axis before the components, shape \(frames, \.\.\., 4\), "
                                         r"got q of shape \(4,\)"):
        jm.make_continuous(np.array([1.0, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"axis must be 0 or -2 \(the time axis\) for q of shape \(3, 4\), got axis=1"):
        jm.make_continuous(np.zeros((3, 4)), axis=1)


def test_make_continuous(rng):
    q = random_unit_quats(rng, 200 * 5).reshape(200, 5, 4)
    # a smooth motion, then random sign flips as exporters write them
    smooth = ref.slerp(np.repeat(q[:1], 200, 0), np.repeat(q[1:2], 200, 0), np.linspace(0, 1, 200)[:, None])
    flips = np.where(rng.random((200, 5)) < 0.5, -1.0, 1.0)[..., None]
    flipped = (smooth * flips).astype(np.float32)
    before = flipped.copy()
    fixed = jm.make_continuous(flipped)
    np.testing.assert_array_equal(flipped, before)
    assert (np.sum(fixed[1:] * fixed[:-1], axis=-1) >= 0).all()
    np.testing.assert_array_equal(np.abs(fixed), np.abs(flipped))
    np.testing.assert_array_equal(fixed[0], flipped[0])
    # in chunks with prev = the last frame of the previous chunk: the same answer
    first = jm.make_continuous(flipped[:77])
    second = jm.make_continuous(flipped[77:], prev=first[-1])
    np.testing.assert_array_equal(np.concatenate([first, second]), fixed)
    # along another axis
    np.testing.assert_array_equal(jm.make_continuous(np.swapaxes(flipped, 0, 1), axis=1), np.swapaxes(fixed, 0, 1))
    with pytest.raises(ValueError, match="prev must have shape"):
        jm.make_continuous(flipped, prev=flipped[0, 0])
    for axis in (2, -1, 3, -4):  # the component axis, or no axis of q
        with pytest.raises(ValueError, match=rf"axis must be 0, 1, -3 or -2 \(the time axis: any axis but the last\) .*got axis={axis};"):
            jm.make_continuous(flipped, axis=axis)
    # float64 runs its own kernel: the same signs
    np.testing.assert_array_equal(jm.make_continuous(flipped.astype(np.float64)), fixed)


@pytest.mark.parametrize("dtype, scales", [(np.float32, [2.0 ** k for k in range(-149, 128, 3)] + [3e38]),
                                           (np.float64, [2.0 ** k for k in range(-1074, 1024, 31)] + [1e308])])
def test_make_continuous_at_any_scale(rng, dtype, scales):
    """Non-unit quaternions of any finite size: a float32 dot product that underflowed (1e-23
    quaternions) or overflowed (2e19: +inf + -inf = NaN) kept opposite signs, as did float64's
    at 1e-170 and 1e170. Every frame pair, in blocks and in the tails (17 joints)."""
    q = random_unit_quats(rng, 40 * 17, np.float64).reshape(40, 17, 4)
    smooth = ref.slerp(q[:1], q[1:2], np.linspace(0, 0.3, 40)[:, None])  # close neighbours
    scale = rng.choice(scales, (40, 17, 1))
    flips = np.where(rng.random((40, 17, 1)) < 0.5, -1.0, 1.0)
    with np.errstate(over="ignore"):
        flipped = (smooth * flips * scale).astype(dtype)
    assert np.isfinite(flipped).all()
    fixed = jm.make_continuous(flipped)
    np.testing.assert_array_equal(np.abs(fixed), np.abs(flipped))
    units = fixed / np.abs(fixed).max(axis=-1, keepdims=True)  # exact: scaled by a power of two or one number
    assert (np.einsum("fjk,fjk->fj", units[1:].astype(np.float64), units[:-1].astype(np.float64)) > 0).all()


def test_make_continuous_float64_prev_of_any_size_for_float32_q():
    """A float64 prev is converted to float32 q's dtype: -1e-50 became 0 (no flip) and 1e50 inf
    (with NumPy's overflow warning); each prev quaternion is scaled by a power of two first."""
    q = np.array([[[0, 0, 0, 1.0]]], np.float32)
    for p, flipped in ((-1e-50, True), (-1e50, True), (-1e-320, True), (1e-50, False), (0.0, False)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = jm.make_continuous(q, 0, np.array([[0, 0, 0, p]]))
        assert got.dtype == np.float32 and got[0, 0, 3] == (-1 if flipped else 1)


def test_make_continuous_matches_the_numpy_definition(rng):
    q = random_unit_quats(rng, 6 * 7 * 5).reshape(6, 7, 5, 4)
    q *= np.where(rng.random((6, 7, 5, 1)) < 0.5, -1, 1).astype(np.float32)
    for dtype in (np.float32, np.float64):
        x = q.astype(dtype)
        for axis in (0, 1, 2, -2, -3, -4):
            moved = np.moveaxis(x, axis, 0)
            dots = np.sum(moved[1:].astype(np.float64) * moved[:-1], axis=-1)
            signs = np.cumprod(np.concatenate([np.ones((1,) + moved.shape[1:-1]), np.where(dots < 0, -1, 1)]), axis=0)
            expected = np.moveaxis(moved * signs[..., None].astype(dtype), 0, axis)
            got = jm.make_continuous(x, axis=axis)
            assert got.dtype == dtype and got.shape == x.shape
            np.testing.assert_array_equal(got, expected)
            # in two chunks with prev
            cut = moved.shape[0] // 2
            first = jm.make_continuous(np.moveaxis(moved[:cut], 0, axis), axis=axis)
            second = jm.make_continuous(np.moveaxis(moved[cut:], 0, axis), axis=axis,
                                        prev=np.take(first, -1, axis=axis))
            np.testing.assert_array_equal(np.concatenate([first, second], axis=axis), expected)
    for bad in (True, 1.0, "0", None):
        with pytest.raises(TypeError, match="axis must be an int"):
            jm.make_continuous(q, axis=bad)
    with pytest.raises(ValueError, match=r"axis must be .* \(the time axis: any axis but the last\) for q of shape .*, got axis=-1;"):
        jm.make_continuous(q, axis=-1)
    with pytest.raises(ValueError, match=r"prev must have shape \(7, 5, 4\) \(q's without axis 0\), got shape"):
        jm.make_continuous(q, prev=q[0, 0])
