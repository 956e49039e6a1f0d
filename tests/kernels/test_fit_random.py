"""random_quats on every path: bit-exact against a NumPy rendering of the same method on the same
stream, and uniform over the rotations (Kolmogorov-Smirnov tests of the angle and the axis
over 10^6 samples with a fixed seed)."""
import numpy as np
import pytest

import jointmath as jm

stats = pytest.importorskip("scipy.stats")

N_KS = 10**6
KS_P_MIN = 1e-3  # a fixed seed: the p-values are fixed numbers, far above this for a uniform sampler


SIN_P = [1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
         -1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1]
COS_Q = [-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
         2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2]


def stream_words(key, count):
    """SplitMix64's outputs for the counters key + (j + 1) * gamma, j < count (uint64 wrap-around)."""
    with np.errstate(over="ignore"):
        z = np.uint64(key) + (np.arange(count, dtype=np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


SIN_P_FLOAT = [float.fromhex(h) for h in ("-0x1.9943f2p-13", "0x1.11073cp-7", "-0x1.555546p-3")]
COS_Q_FLOAT = [float.fromhex(h) for h in ("0x1.99eb9cp-16", "-0x1.6c0c34p-10", "0x1.55554ap-5")]


def quarter_turns(word, x, sin_x, cos_x, top):
    """(sin, cos) of x plus k quarter turns, k the two bits of `word` from bit `top` down."""
    k1 = ((word >> np.uint64(top)) & np.uint64(1)).astype(bool)
    k0 = ((word >> np.uint64(top - 1)) & np.uint64(1)).astype(bool)
    sine, cosine = np.where(k0, cos_x, sin_x), np.where(k0, sin_x, cos_x)
    return np.where(k1, -sine, sine), np.where(k1 ^ k0, -cosine, cosine)


def shoemake_float32_oracle(key, n):
    """The float32 kernel: two words per quaternion, every operation in float32."""
    f32 = np.float32
    words = stream_words(key, 2 * n).reshape(n, 2)
    u = (2 * (words[:, 0] >> np.uint64(41)).astype(np.int32) + 1).astype(f32) * f32(2.0**-24)
    radius = [np.sqrt(f32(1) - u), np.sqrt(u)]
    columns = []
    for a, bits in enumerate([words[:, 0] & np.uint64(0xFFFFFFFF), words[:, 1] >> np.uint64(32)]):
        m = ((bits >> np.uint64(7)) & np.uint64(2**23 - 1)).astype(np.int32)
        x = (2 * m + 1 - 2**23).astype(f32) * f32(float.fromhex("0x1.921fb6p-24"))
        x2 = x * x
        p = np.full_like(x, f32(SIN_P_FLOAT[0]))
        for c in SIN_P_FLOAT[1:]:
            p = p * x2 + f32(c)
        s = x + p * x2 * x
        r = np.full_like(x, f32(COS_Q_FLOAT[0]))
        for c in COS_Q_FLOAT[1:]:
            r = r * x2 + f32(c)
        cos_x = (f32(1) - f32(0.5) * x2) + r * x2 * x2
        sine, cosine = quarter_turns(bits, x, s, cos_x, 31)
        columns += [radius[a] * sine, radius[a] * cosine]
    q = np.stack(columns, axis=-1)
    q[:, 3] = np.abs(q[:, 3])  # w >= 0 by reflecting w alone
    return q


def shoemake_oracle(seed, n, dtype):
    """Shoemake's method on the counter-based stream keyed by the first word of PCG64(seed), as
    csrc/fit.c documents it, in NumPy float64 (float32: in float32) with the same IEEE operations
    in the same order, so the same bits."""
    key = int(np.random.PCG64(seed).random_raw())
    if dtype == np.float32:
        return shoemake_float32_oracle(key, n)
    words = stream_words(key, 3 * n).reshape(n, 3)
    u = (2 * (words[:, 0] >> np.uint64(12)).astype(np.int64) + 1).astype(np.float64) * 2.0**-53
    radius = [np.sqrt(1.0 - u), np.sqrt(u)]
    columns = []
    for a in range(2):
        word = words[:, 1 + a]
        m = ((word >> np.uint64(10)) & np.uint64(2**52 - 1)).astype(np.int64)
        x = (2 * m + 1 - 2**52).astype(np.float64) * float.fromhex("0x1.921fb54442d18p-53")
        x2 = x * x
        p = np.full_like(x, SIN_P[0])
        for c in SIN_P[1:]:
            p = p * x2 + c
        s = x + p * x2 * x
        r = np.full_like(x, COS_Q[0])
        for c in COS_Q[1:]:
            r = r * x2 + c
        cos_x = (1.0 - 0.5 * x2) + r * x2 * x2
        sine, cosine = quarter_turns(word, x, s, cos_x, 63)
        columns += [radius[a] * sine, radius[a] * cosine]
    q = np.stack(columns, axis=-1)
    q[:, 3] = np.abs(q[:, 3])  # w >= 0 by reflecting w alone
    return q.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_quats_bit_exact_against_the_method(dtype):
    got = jm.random_quats(1000, rng=np.random.Generator(np.random.PCG64(11)), dtype=dtype)
    np.testing.assert_array_equal(got, shoemake_oracle(11, 1000, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_quats_are_unit_canonical_and_deterministic(dtype):
    q = jm.random_quats((10, 7), rng=3, dtype=dtype)
    assert q.shape == (10, 7, 4) and q.dtype == dtype
    assert np.all(q[..., 3] >= 0)
    norms = np.linalg.norm(q.astype(np.float64), axis=-1)
    assert np.max(np.abs(norms - 1)) <= 2 * np.finfo(dtype).eps
    np.testing.assert_array_equal(jm.random_quats((10, 7), rng=3, dtype=dtype), q)
    np.testing.assert_array_equal(jm.random_quats(70, rng=np.random.SeedSequence(3), dtype=dtype).reshape(q.shape), q)
    assert not np.array_equal(jm.random_quats((10, 7), rng=4, dtype=dtype), q)
    generator = np.random.default_rng(3)
    first = jm.random_quats(5, rng=generator, dtype=dtype)
    second = jm.random_quats(5, rng=generator, dtype=dtype)  # the Generator's state advanced
    assert not np.array_equal(first, second)
    bit_generator = np.random.PCG64(3)
    np.testing.assert_array_equal(jm.random_quats(5, rng=bit_generator, dtype=dtype), first)


def _ks_pvalues(q):
    q = q.astype(np.float64)
    angles = 2 * np.arccos(np.clip(np.abs(q[:, 3]), 0, 1))
    axes = q[:, :3] / np.linalg.norm(q[:, :3], axis=1, keepdims=True)
    return {
        "angle": stats.kstest(angles, lambda t: (t - np.sin(t)) / np.pi).pvalue,
        "axis z": stats.kstest(axes[:, 2], stats.uniform(-1, 2).cdf).pvalue,
        "azimuth": stats.kstest(np.arctan2(axes[:, 1], axes[:, 0]), stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue,
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_quats_are_uniform(dtype):
    """The rotation angle of a uniform rotation has the CDF (t - sin t) / pi on [0, pi]; its axis
    is uniform on the sphere (z uniform on [-1, 1], the azimuth uniform)."""
    p = _ks_pvalues(jm.random_quats(N_KS, rng=20261205, dtype=dtype))
    assert min(p.values()) > KS_P_MIN, p


def test_the_uniformity_test_rejects_a_biased_sampler():
    """The KS test above has power: normalised uniform cubes (not uniform rotations) fail it."""
    rng = np.random.default_rng(1)
    q = rng.uniform(-1, 1, (N_KS, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    assert _ks_pvalues(q)["angle"] < 1e-10


def test_random_quats_arguments():
    assert jm.random_quats((), rng=1).shape == (4,)
    assert jm.random_quats(0, rng=1).shape == (0, 4)
    assert jm.random_quats([2, 3], rng=1).shape == (2, 3, 4)
    assert jm.random_quats(np.int64(2), rng=1, dtype="float64").dtype == np.float64
    assert jm.random_quats(2, rng=1, dtype=None).dtype == np.float32
    assert jm.random_quats(2).shape == (2, 4)  # fresh entropy
    with pytest.raises(ValueError, match="shape"):
        jm.random_quats(-1)
    for bad in (2.0, True, "2", (2, 1.5)):
        with pytest.raises(TypeError, match="shape"):
            jm.random_quats(bad)
    for bad in (np.int32, np.float16, np.dtype(">f8"), complex):
        with pytest.raises(TypeError, match="dtype"):
            jm.random_quats(2, dtype=bad)
    with pytest.raises(TypeError, match="rng"):
        jm.random_quats(2, rng=True)
    with pytest.raises((TypeError, ValueError)):
        jm.random_quats(2, rng="seed")
    with pytest.raises(ValueError, match="allocate|large|bytes"):
        jm.random_quats((2**40, 2**20))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_quats_into_out(dtype):
    """out= receives the same quaternions as a fresh result, the Generator advancing alike; a
    C-ordered out is written in place, any other layout through a copy."""
    fresh_generator, out_generator = np.random.default_rng(8), np.random.default_rng(8)
    expected = jm.random_quats((3, 5), rng=fresh_generator, dtype=dtype)
    out = np.full((3, 5, 4), np.nan, dtype)
    assert jm.random_quats((3, 5), rng=out_generator, dtype=dtype, out=out) is out
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(jm.random_quats(2, rng=out_generator, dtype=dtype),
                                  jm.random_quats(2, rng=fresh_generator, dtype=dtype))
    strided = np.full((3, 5, 8), np.nan, dtype)[..., ::2]
    transposed = np.full((5, 3, 4), np.nan, dtype).transpose(1, 0, 2)
    for layout in (strided, transposed):
        assert jm.random_quats((3, 5), rng=8, dtype=dtype, out=layout) is layout
        np.testing.assert_array_equal(layout, expected)
    single = np.full(4, np.nan, dtype)
    assert jm.random_quats((), rng=8, dtype=dtype, out=single) is single
    np.testing.assert_array_equal(single, expected[0, 0])
    empty = np.empty((0, 4), dtype)
    assert jm.random_quats(0, rng=8, dtype=dtype, out=empty) is empty


def test_random_quats_out_errors_name_out():
    with pytest.raises(ValueError, match="out"):
        jm.random_quats(3, rng=1, out=np.empty((4, 4), np.float32))
    with pytest.raises(ValueError, match="out"):
        jm.random_quats(3, rng=1, out=np.empty((3, 3), np.float32))
    with pytest.raises(TypeError, match="out.*float32"):
        jm.random_quats(3, rng=1, out=np.empty((3, 4)))  # dtype says float32 (the default)
    with pytest.raises(TypeError, match="out.*float64"):
        jm.random_quats(3, rng=1, dtype=np.float64, out=np.empty((3, 4), np.float32))
    with pytest.raises(TypeError, match="out"):
        jm.random_quats(3, rng=1, out=[[0.0] * 4] * 3)
    read_only = np.zeros((3, 4), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="out.*writeable"):
        jm.random_quats(3, rng=1, out=read_only)
    assert not read_only.any()
    generator = np.random.default_rng(5)
    with pytest.raises(ValueError, match="out"):
        jm.random_quats(3, rng=generator, out=np.empty((2, 4), np.float32))
    np.testing.assert_array_equal(jm.random_quats(3, rng=generator), jm.random_quats(3, rng=5))  # not advanced
