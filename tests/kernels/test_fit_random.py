"""random_quats on every path: bit-exact against a NumPy rendering of the same method on the same
bit stream, and uniform over the rotations (Kolmogorov-Smirnov tests of the angle and the axis
over 10^6 samples with a fixed seed)."""
import numpy as np
import pytest

import jointmath as jm

stats = pytest.importorskip("scipy.stats")

N_KS = 10**6
KS_P_MIN = 1e-3  # a fixed seed: the p-values are fixed numbers, far above this for a uniform sampler


def marsaglia_oracle(seed, n, dtype):
    """Marsaglia's method on the words of PCG64(seed), as csrc/fit_template.h documents it, in
    NumPy float64 (the same IEEE operations, so the same bits)."""
    words = iter(np.random.PCG64(seed).random_raw(40 * n + 100).tolist())
    bits = 32 if dtype == np.float32 else 52
    scale = float(2**bits)

    def uniform(u):
        return (float(2 * u + 1) - scale) / scale

    out = []
    for _ in range(n):
        xs, ss = [], []
        for _half in range(2):
            while True:
                if bits == 32:
                    word = next(words)
                    u, v = uniform(word >> 32), uniform(word & 0xFFFFFFFF)
                else:
                    u, v = uniform(next(words) >> 12), uniform(next(words) >> 12)
                s = u * u + v * v
                if s < 1.0:
                    break
            xs += [u, v]
            ss.append(s)
        f = np.sqrt((1.0 - ss[0]) / ss[1])
        q = np.array([xs[0], xs[1], xs[2] * f, xs[3] * f])
        out.append(-q if q[3] < 0 else q)
    return np.array(out).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_quats_bit_exact_against_the_method(dtype):
    got = jm.random_quats(1000, rng=np.random.Generator(np.random.PCG64(11)), dtype=dtype)
    np.testing.assert_array_equal(got, marsaglia_oracle(11, 1000, dtype))


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
