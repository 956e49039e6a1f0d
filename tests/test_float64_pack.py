"""pack_quats on float64 input: the float64 kernels (csrc/pack.c, jm_pack_quats32_f64 /
jm_pack_quats64_f64) on every path against exact rational rounding: ties to even, near ties,
denormal and huge scales, float32 input widened to float64 giving the float32 packer's codes,
invalid quaternions, sizes and layouts."""

import sys
from fractions import Fraction

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import SIZES, assert_threads_agree, hard_quats, layouts, random_unit_quats

BITS = [10, 20]


def exact_codes(q, bits):
    """The codes by definition, in rational arithmetic: index of the largest |component| (lowest on
    ties), each other component c = other / largest as round(c M) + M, ties to even."""
    m = 2 ** (bits - 1) - 1
    q = np.asarray(q, np.float64).reshape(-1, 4)
    codes = []
    for row in q:
        mags = [abs(Fraction(float(v))) for v in row]
        index = mags.index(max(mags))
        largest = Fraction(float(row[index]))
        code = index
        for k in range(4):
            if k != index:
                code = (code << bits) | (round(Fraction(float(row[k])) * m / largest) + m)
        codes.append(code)
    return np.array(codes, np.uint32 if bits == 10 else np.uint64)


def tie_quats(rng, bits, n):
    """Quaternions whose fields are ties or within an ulp or two of one: half with the largest
    l = M (others k + 1/2: v = k + 1/2 exactly, or one ulp off), half with a random l and others
    fl((k + 1/2) l / M) moved by -2 .. 2 ulps (v within a few ulps of the half-integer, where a
    rounded estimate can fall on either side); any power-of-two scale, signs and positions."""
    m = 2 ** (bits - 1) - 1
    k = rng.integers(-m, m, (n, 3)).astype(np.float64) + 0.5
    largest = np.where(np.arange(n) < n // 2, float(m), rng.uniform(1, 2, n))
    q = np.concatenate([k * largest[:, None] / m, largest[:, None]], 1)
    for _ in range(2):
        q = np.nextafter(q, q + rng.choice([-1.0, 0.0, 0.0, 1.0], q.shape))
    q[:, 3] = largest
    q *= rng.choice([-1.0, 1.0], (n, 1))
    for row in q:
        rng.shuffle(row)
    return q * 2.0 ** rng.integers(-60, 60, (n, 1))


@pytest.mark.parametrize("bits", BITS)
def test_random_quaternions_at_any_scale(rng, bits):
    q = rng.standard_normal((20000, 4)) * 2.0 ** rng.integers(-1000, 1000, (20000, 1))
    codes = jm.pack_quats(q, bits)
    assert codes.dtype == (np.uint32 if bits == 10 else np.uint64) and codes.shape == (20000,)
    np.testing.assert_array_equal(codes[:500], exact_codes(q[:500], bits))
    np.testing.assert_array_equal(codes, ref.pack_quats(q, bits))  # rational near ties too


@pytest.mark.parametrize("bits", BITS)
def test_ties_round_to_even_and_near_ties_by_the_exact_quotient(rng, bits):
    q = tie_quats(rng, bits, 3000)
    np.testing.assert_array_equal(jm.pack_quats(q, bits), exact_codes(q, bits))
    # a plain tie: c M = 1/2 and 3/2 round to 0 and 2
    m = 2 ** (bits - 1) - 1
    tie = np.array([[0.5, 1.5, -0.5, m], [-1.5, 2.5, m, 0.0]])
    f = [(jm.pack_quats(tie, bits)[i] >> np.uint64(bits * s)) & np.uint64(2**bits - 1) for i in range(2) for s in (2, 1, 0)]
    assert [int(v) - m for v in f] == [0, 2, 0, -2, 2, 0]


@pytest.mark.parametrize("bits", BITS)
def test_denormal_and_huge_scales_give_the_unit_scale_codes(rng, bits):
    ints = rng.integers(-2**20, 2**20, (2000, 4)).astype(np.float64)
    ints[ints == 0] = 1
    codes = jm.pack_quats(ints, bits)
    np.testing.assert_array_equal(codes, exact_codes(ints, bits))
    for scale in (2.0**-1074, 2.0**-1060, 2.0**-1030, 2.0**-1001, 2.0**-1000, 2.0**-500, 2.0**500, 2.0**1000,
                  2.0**1001, 2.0**1003):
        np.testing.assert_array_equal(jm.pack_quats(ints * scale, bits), codes)  # exact scalings
    # blocks mixing quaternions whose largest |component| is in [2^-1000, 2^1000] (the kernels'
    # unscaled estimate) with ones outside it (scaled first)
    scales = np.resize([1.0, 2.0**-1040, 2.0**1002, 1.0, 2.0**-1074, 2.0**-990, 0.5, 2.0**1003, 1.0], len(ints))
    np.testing.assert_array_equal(jm.pack_quats(ints * scales[:, None], bits), codes)
    tiny = np.array([[5e-324, 0, 0, 0], [5e-324, -5e-324, 1e-323, 0], [2.2e-308, 1e-310, 0, -3e-320]])
    np.testing.assert_array_equal(jm.pack_quats(tiny, bits), exact_codes(tiny, bits))
    big = np.finfo(np.float64).max
    huge = np.array([[big, -big, big / 3, 0], [big, big, big, big], [1.0, big, 1e300, -1e-300]])
    np.testing.assert_array_equal(jm.pack_quats(huge, bits), exact_codes(huge, bits))


@pytest.mark.parametrize("bits", BITS)
def test_sign_and_scale_invariant(rng, bits):
    q = random_unit_quats(rng, 1000, np.float64)
    codes = jm.pack_quats(q, bits)
    np.testing.assert_array_equal(jm.pack_quats(-q, bits), codes)
    np.testing.assert_array_equal(jm.pack_quats(q * 0.25, bits), codes)
    zero_components = hard_quats(rng, np.float64)
    np.testing.assert_array_equal(jm.pack_quats(zero_components, bits), exact_codes(zero_components, bits))


@pytest.mark.parametrize("bits", BITS)
def test_float32_widened_gives_the_float32_codes(rng, bits):
    q32 = np.concatenate([
        random_unit_quats(rng, 20000, np.float32),
        hard_quats(rng, np.float32),
        tie_quats(rng, bits, 2000).astype(np.float32) if bits == 10 else tie_quats(rng, bits, 2000) * 2.0**-40,
        (rng.standard_normal((2000, 4)) * 2.0 ** rng.integers(-149, 127, (2000, 1))).astype(np.float32),
    ]).astype(np.float32)
    q32 = q32[np.isfinite(q32).all(1) & (q32 != 0).any(1)]
    np.testing.assert_array_equal(jm.pack_quats(q32.astype(np.float64), bits), jm.pack_quats(q32, bits))


@pytest.mark.parametrize("bits", BITS)
def test_codes_unpack_to_the_quaternion(rng, bits):
    q = random_unit_quats(rng, 5000, np.float64)
    back = jm.unpack_quats(jm.pack_quats(q, bits))
    assert ref.angle_between(q, back).max() <= (0.0033 if bits == 10 else 3.3e-6)


@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("n", SIZES)
def test_invalid_quaternions_are_reported(rng, bits, n):
    q = random_unit_quats(rng, n, np.float64)
    np.testing.assert_array_equal(jm.pack_quats(q, bits), exact_codes(q, bits).reshape(n))
    for bad in (0.0, np.nan, np.inf, -np.inf):
        for at in {0, n // 2, n - 1} if n else ():
            broken = q.copy()
            broken[at] = 0.0 if bad == 0.0 else q[at]
            broken[at, at % 4] = bad
            if n > 3:
                broken[n - 2:] = 0.0  # a second and third, in the tail
            count = 1 + (2 if n > 3 and at < n - 2 else 1 if n > 3 else 0)
            with pytest.raises(ValueError, match=rf"q holds {count} zero or non-finite quaternion.* index {min(at, n - 2) if n > 3 else at}\b"):
                jm.pack_quats(broken, bits)


def test_shapes_layouts_and_threads(rng):
    q = random_unit_quats(rng, 60, np.float64).reshape(3, 20, 4)
    for bits in BITS:
        codes = jm.pack_quats(q, bits)
        assert codes.shape == (3, 20)
        for name, q_layout in layouts(q).items():
            np.testing.assert_array_equal(jm.pack_quats(q_layout, bits), codes, err_msg=name)
        single = jm.pack_quats(q[1, 2], bits)
        assert isinstance(single, np.generic) and single.dtype == codes.dtype and single == codes[1, 2]  # a NumPy scalar
        interleaved = np.zeros((3, 20, 4, 2))
        interleaved[..., 0] = q
        np.testing.assert_array_equal(jm.pack_quats(interleaved[..., 0], bits), codes)
    big = random_unit_quats(rng, 300000, np.float64)
    assert_threads_agree(lambda: jm.pack_quats(big, 20))


def test_inputs_are_never_modified_and_no_numpy_route(rng, monkeypatch):
    q = random_unit_quats(rng, 99, np.float64) * 3
    copy = q.copy()

    def refuse(*args, **kwargs):
        raise AssertionError("jointmath.reference on the product path")

    expected = exact_codes(q, 10)
    monkeypatch.setattr(ref, "pack_quats", refuse)
    monkeypatch.setattr(ref, "invalid_quats", refuse)
    np.testing.assert_array_equal(jm.pack_quats(q), expected)
    with pytest.raises(ValueError, match="zero or non-finite"):
        jm.pack_quats(np.zeros((2, 4)))
    np.testing.assert_array_equal(q, copy)
    assert "jointmath.reference" in sys.modules  # imported by the tests, never called
