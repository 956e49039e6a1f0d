"""The element-wise rotation algebra (quat_multiply, quat_conjugate, quat_inverse, rotate_vectors,
quat_to_rotvec, rotvec_to_quat, quat_angle, quat_angle_between, swing_twist, quat_to_6d,
sixd_to_quat) on every path: float32 against jointmath.reference in float64, float64 against the
same formulas in np.longdouble (extended precision), both against scipy's Rotation, on random and
adversarial data. Arguments, layouts and edge cases: test_algebra_arguments.py."""

import numpy as np
import pytest

import jointmath as jm
from jointmath import reference as ref

from adversarial import hard_quats, random_unit_quats
from longdouble_oracle import LD, ld_angle, needs_extended_precision

Rotation = pytest.importorskip("scipy.spatial.transform").Rotation

# the bounds of the docstrings and docs/families/algebra.md
BOUND = {np.float32: 5e-7, np.float64: 2e-15}
SIXD_ANGLE_BOUND = {np.float32: 1e-6, np.float64: 2e-15}  # rad, matrix_to_quat's
SIXD_FORWARD_BOUND = {np.float32: 5e-7, np.float64: 1e-15}  # quat_to_matrix's
ROTVEC_WIDE_BOUND = {np.float32: 6e-7, np.float64: 2e-15}  # rad, angles in (pi/2, pi]
ROTVEC_DEGREES_BOUND = {np.float32: 4e-5, np.float64: 2e-15 * 180 / np.pi}  # degrees: + the degree result's rounding
EPS = {np.float32: 2.0**-24, np.float64: 2.0**-53}
DTYPES = [np.float32, pytest.param(np.float64, marks=needs_extended_precision)]
TINY = {np.float32: np.float32(2.0**-149), np.float64: 2.0**-1074}


def oracle_input(x, dtype):
    """what the oracle reads: the kernel's input exactly, in float64 (float32 kernels) or
    np.longdouble (float64 kernels)"""
    return np.asarray(x).astype(np.float64 if dtype == np.float32 else LD)


def modulo_sign(a, b):
    """max over records of the component error of a against b or -b, whichever is closer"""
    a, b = np.asarray(a, LD), np.asarray(b, LD)
    return np.max(np.minimum(np.abs(a - b).max(-1), np.abs(a + b).max(-1))).astype(np.float64)


def quats(rng, dtype, n=20000):
    """unit quaternions: random, the hard ones, near-identity and near-half-turn ones (vector part or
    w down to the dtype's smallest numbers), both signs"""
    q = [random_unit_quats(rng, n, np.float64), hard_quats(rng, np.float64)]
    axes = rng.standard_normal((64, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    for small in [1e-3, 1e-6, 1e-9, 1e-20, 1e-38, 1e-300]:
        q.append(np.concatenate([axes * small, np.ones((64, 1))], 1))  # angle ~ 2 small
        q.append(np.concatenate([axes, np.full((64, 1), small)], 1))  # angle ~ pi - 2 small
    q = np.concatenate(q)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    q = q * rng.choice([-1.0, 1.0], (len(q), 1))
    return q.astype(dtype)


def scaled(rng, q):
    """q times random powers of two over the dtype's whole range, the subnormals included"""
    info = np.finfo(q.dtype)
    k = rng.integers(info.minexp - info.nmant + 2, info.maxexp - 2, (len(q), 1))
    return (q.astype(LD) * np.ldexp(LD(1), k)).astype(q.dtype)


# ------------------------------------------------------------------------ accuracy --


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_multiply_accuracy(rng, dtype):
    p, q = quats(rng, dtype), quats(rng, dtype)[::-1]
    got = jm.quat_multiply(p, q)
    assert got.dtype == dtype
    exact = ref.quat_multiply(oracle_input(p, dtype), oracle_input(q, dtype))
    assert np.abs(got - exact).max() <= BOUND[dtype]
    # any scale: relative to |p| |q| (scales kept within the range of the product)
    ps, qs = p * dtype(2.0**40), q * dtype(2.0**-70)
    exact = ref.quat_multiply(oracle_input(ps, dtype), oracle_input(qs, dtype))
    assert np.abs(jm.quat_multiply(ps, qs) - exact).max() <= BOUND[dtype] * 2.0**-30


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_conjugate_is_exact(rng, dtype):
    q = scaled(rng, quats(rng, dtype))
    got = jm.quat_conjugate(q)
    assert got.dtype == dtype
    assert np.array_equal(got, np.concatenate([-q[:, :3], q[:, 3:]], 1))
    assert np.array_equal(np.signbit(jm.quat_conjugate(np.zeros(4, dtype))), [True, True, True, False])


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_inverse_accuracy_at_any_scale(rng, dtype):
    q = quats(rng, dtype)
    exact = ref.quat_inverse(oracle_input(q, dtype))
    assert np.abs(jm.quat_inverse(q) - exact).max() <= BOUND[dtype]
    # relative to 1 / |q| from the smallest subnormal to the largest finite scale
    qs = scaled(rng, q)
    exact = ref.quat_inverse(oracle_input(qs, dtype))
    norms = np.sqrt(np.sum(oracle_input(qs, dtype) ** 2, axis=1, keepdims=True))
    with np.errstate(over="ignore"):
        finite = np.all(np.abs(exact) < np.finfo(dtype).max / 2, axis=1) & np.all(
            (np.abs(exact) > np.finfo(dtype).tiny * 2**24) | (exact == 0), axis=1)
    got = jm.quat_inverse(qs)
    assert np.all(np.abs(got - exact)[finite] * norms[finite] <= BOUND[dtype])
    # beyond the range: inf where the exact inverse overflows
    huge = np.abs(exact).max(1) > float(np.finfo(dtype).max) * 1.01
    assert np.all(np.isinf(got[huge]).any(1))
    # q * q^-1 = identity
    ident = jm.quat_multiply(q, jm.quat_inverse(q))
    assert np.abs(ident - [0, 0, 0, 1]).max() <= 2 * BOUND[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("inverse", [False, True])
def test_rotate_vectors_accuracy(rng, dtype, inverse):
    q = quats(rng, dtype)
    v = rng.standard_normal((len(q), 3)) * np.exp(rng.uniform(-20, 20, (len(q), 1)))
    v = v.astype(dtype)
    q = scaled(rng, q)
    got = jm.rotate_vectors(q, v, inverse=inverse)
    assert got.dtype == dtype
    exact = ref.rotate_vectors(oracle_input(q, dtype), oracle_input(v, dtype), inverse)
    norms = np.linalg.norm(v.astype(np.float64), axis=1, keepdims=True)
    assert np.all(np.abs(got - exact) <= BOUND[dtype] * norms + np.finfo(dtype).smallest_subnormal * 8)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("degrees", [False, True])
def test_quat_to_rotvec_accuracy(rng, dtype, degrees):
    q = quats(rng, dtype)
    qs = scaled(rng, q)
    for x in (q, qs):
        got = jm.quat_to_rotvec(x, degrees=degrees)
        assert got.dtype == dtype
        exact = ref.quat_to_rotvec(oracle_input(x, dtype))
        if degrees:
            assert np.abs(got - np.degrees(exact)).max() <= ROTVEC_DEGREES_BOUND[dtype]
        else:
            # float32 beyond pi/2: components up to pi, whose ulp is 2.4e-7 (the stated 6e-7)
            wide = np.linalg.norm(exact.astype(np.float64), axis=1) > np.pi / 2
            assert np.abs(got - exact)[~wide].max() <= BOUND[dtype]
            assert np.abs(got - exact)[wide].max() <= ROTVEC_WIDE_BOUND[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("degrees", [False, True])
def test_rotvec_to_quat_accuracy(rng, dtype, degrees):
    axes = rng.standard_normal((20000, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    angles = np.concatenate([rng.uniform(0, np.pi, 10000), rng.uniform(0, 8 * np.pi, 5000),
                             np.ldexp(1.0, rng.integers(-1074 if dtype == np.float64 else -149, 0, 4000)),
                             np.full(500, np.pi), rng.uniform(0.2, 0.3, 500)])
    v = axes * angles[:, None]
    if degrees:
        v = np.degrees(v)
    v = v.astype(dtype)
    got = jm.rotvec_to_quat(v, degrees=degrees)
    assert got.dtype == dtype
    exact = ref.rotvec_to_quat(oracle_input(v, dtype), degrees=degrees)
    # the bound plus what the rounding of |v| itself moves the half angle by (conditioning)
    assert np.all(np.abs(got - exact) <= BOUND[dtype] + 2 * EPS[dtype] * angles[:, None])
    if not degrees:  # tiny and subnormal vectors: v / 2, rounded once
        assert np.all(got[:, :3][angles < 1e-30] == (v[angles < 1e-30] / 2).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_rotvec_to_quat_far_angles(rng, dtype):
    """beyond the kernels' reduction (float32 32 rad / 1800 degrees, float64 2^20): computed in
    double with libm, still within the bound of the exact value of the given vector"""
    axes = rng.standard_normal((2000, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    limit = 1e6 if dtype == np.float32 else 1e12
    v = (axes * np.exp(rng.uniform(0, np.log(limit), (2000, 1)))).astype(dtype)
    theta = np.linalg.norm(v.astype(np.float64), axis=1, keepdims=True)
    for degrees in (False, True):
        exact = ref.rotvec_to_quat(oracle_input(v, dtype), degrees=degrees)
        radians = theta * (np.pi / 180 if degrees else 1)
        got = jm.rotvec_to_quat(v, degrees=degrees)
        assert np.all(np.abs(got - exact) <= BOUND[dtype] + 2 * EPS[dtype] * radians)


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_angle_accuracy(rng, dtype):
    q = quats(rng, dtype)
    for x in (q, scaled(rng, q)):
        got = jm.quat_angle(x)
        assert got.dtype == dtype and got.shape == (len(q),)
        assert np.abs(got - ref.quat_angle(oracle_input(x, dtype))).max() <= BOUND[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_angle_between_accuracy(rng, dtype):
    p = quats(rng, dtype)
    near = p.astype(np.float64) + rng.standard_normal(p.shape) * np.exp(rng.uniform(-30, 0, (len(p), 1)))
    q = np.concatenate([quats(rng, dtype)[::-1], near.astype(dtype)])
    p = np.concatenate([p, p])
    angle = ld_angle if dtype == np.float64 else ref.angle_between
    for a, b in ((p, q), (scaled(rng, p), scaled(rng, q))):
        got = jm.quat_angle_between(a, b)
        assert got.dtype == dtype
        assert np.abs(got - angle(oracle_input(a, dtype), oracle_input(b, dtype))).max() <= BOUND[dtype]
    # sign-invariant: antipodal pairs are 0 apart, -p / -q give the same angle
    assert np.all(jm.quat_angle_between(p, -p) <= BOUND[dtype])
    assert np.array_equal(jm.quat_angle_between(p, q), jm.quat_angle_between(-p, q))
    assert np.array_equal(jm.quat_angle_between(p, q), jm.quat_angle_between(p, -q))


@pytest.mark.parametrize("dtype", DTYPES)
def test_swing_twist_accuracy(rng, dtype):
    q = quats(rng, dtype)
    axis = rng.standard_normal((len(q), 3)).astype(dtype)
    for qq in (q, scaled(rng, q)):
        swing, twist = jm.swing_twist(qq, axis)
        assert swing.dtype == twist.dtype == dtype
        exact_s, exact_t = ref.swing_twist(oracle_input(qq, dtype), oracle_input(axis, dtype))
        unit = ref.quat_multiply(exact_s, exact_t)
        # conditioning: the twist's direction is that of (p, w), whose length n bounds the error
        u = oracle_input(axis, dtype) / np.linalg.norm(oracle_input(axis, dtype), axis=1, keepdims=True)
        n = np.hypot(np.sum(unit[:, :3] * u, 1), unit[:, 3])[:, None]
        assert np.all(np.abs(swing - exact_s) * n <= BOUND[dtype])
        assert np.all(np.abs(twist - exact_t) * n <= BOUND[dtype])
        # everywhere: q / |q| = swing * twist, twist about the axis, swing perpendicular to it
        product = ref.quat_multiply(oracle_input(swing, dtype), oracle_input(twist, dtype))
        assert np.abs(product - unit).max() <= 2 * BOUND[dtype]
        u = axis / np.linalg.norm(axis.astype(np.float64), axis=1, keepdims=True)
        assert np.abs(np.cross(twist[:, :3], u)).max() <= 2 * BOUND[dtype]
        assert np.abs(np.sum(swing[:, :3] * u, axis=1)).max() <= 4 * BOUND[dtype]
        assert np.all(swing[:, 3] >= 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_to_6d_accuracy(rng, dtype):
    q = quats(rng, dtype)
    for x in (q, scaled(rng, q)):
        got = jm.quat_to_6d(x)
        assert got.dtype == dtype and got.shape == (len(q), 6)
        assert np.abs(got - ref.quat_to_6d(oracle_input(x, dtype))).max() <= SIXD_FORWARD_BOUND[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_sixd_to_quat_accuracy(rng, dtype):
    q = quats(rng, dtype)
    x = ref.quat_to_6d(q.astype(np.float64)).astype(dtype)
    angle = ld_angle if dtype == np.float64 else ref.angle_between
    exact_m = ref.quat_to_matrix(ref.sixd_to_quat(x))  # the float64 Gram-Schmidt of the given input
    got = jm.sixd_to_quat(x)
    assert got.dtype == dtype
    assert angle(oracle_input(got, dtype), ref.sixd_to_quat(x)).max() <= SIXD_ANGLE_BOUND[dtype]
    assert np.abs(ref.quat_to_matrix(got) - exact_m).max() <= 2 * SIXD_ANGLE_BOUND[dtype]
    # any scale of each column
    k = rng.integers(-60, 60, (len(x), 2))
    xs = (x.reshape(-1, 2, 3) * np.ldexp(1.0, k)[:, :, None]).reshape(-1, 6).astype(dtype)
    assert angle(oracle_input(jm.sixd_to_quat(xs), dtype), ref.sixd_to_quat(x)).max() <= SIXD_ANGLE_BOUND[dtype]


def test_sixd_to_quat_is_gram_schmidt_not_the_nearest_rotation(rng):
    """a non-orthogonal pair: the first column keeps its direction (the paper's map), which the
    rotation nearest to [a1 a2 a1 x a2] does not"""
    a1 = np.array([1.0, 0.0, 0.0])
    a2 = np.array([1.0, 1.0, 0.0])  # 45 degrees from a1
    q = jm.sixd_to_quat(np.concatenate([a1, a2]))
    r = jm.quat_to_matrix(q)
    assert np.allclose(r[:, 0], a1, atol=1e-15) and np.allclose(r[:, 1], [0, 1, 0], atol=1e-15)
    # against the reference on random non-orthogonal input
    x = rng.standard_normal((1000, 6))
    exact = ref.sixd_to_quat(x)
    assert modulo_sign(jm.sixd_to_quat(x), exact) <= 1e-14
    assert modulo_sign(jm.sixd_to_quat(x.astype(np.float32)), ref.sixd_to_quat(x.astype(np.float32))) <= 1e-5


# --------------------------------------------------------------------- against scipy --


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_scipy(rng, dtype):
    """every function against scipy's Rotation on the same (float64) values"""
    q = quats(rng, dtype, 5000)
    p = quats(rng, dtype, 5000)[::-1]
    q64, p64 = q.astype(np.float64), p.astype(np.float64)
    rq, rp = Rotation.from_quat(q64), Rotation.from_quat(p64)
    tol = 6e-7 if dtype == np.float32 else 4e-15
    assert modulo_sign(jm.quat_multiply(p, q), (rp * rq).as_quat()) <= tol
    assert modulo_sign(jm.quat_inverse(q), rq.inv().as_quat()) <= tol
    assert modulo_sign(jm.quat_conjugate(q), rq.inv().as_quat()) <= tol
    v = rng.standard_normal((len(q), 3)).astype(dtype)
    for inverse in (False, True):
        want = rq.apply(v.astype(np.float64), inverse=inverse)
        assert np.abs(jm.rotate_vectors(q, v, inverse=inverse) - want).max() <= tol * 4
    assert np.abs(jm.quat_to_rotvec(q) - rq.as_rotvec()).max() <= tol
    assert np.abs(jm.quat_to_rotvec(q, degrees=True) - rq.as_rotvec(degrees=True)).max() <= tol * 60
    rv = (rng.standard_normal((len(q), 3)) * 2).astype(dtype)
    assert np.abs(jm.rotvec_to_quat(rv) - Rotation.from_rotvec(rv.astype(np.float64)).as_quat(canonical=False)).max() <= tol
    rvd = np.degrees(rv).astype(dtype)
    want = Rotation.from_rotvec(rvd.astype(np.float64), degrees=True).as_quat(canonical=False)
    assert np.abs(jm.rotvec_to_quat(rvd, degrees=True) - want).max() <= tol
    assert np.abs(jm.quat_angle(q) - rq.magnitude()).max() <= tol
    assert np.abs(jm.quat_angle_between(p, q) - (rp.inv() * rq).magnitude()).max() <= tol * 2
    six = np.concatenate([rq.as_matrix()[:, :, 0], rq.as_matrix()[:, :, 1]], 1)
    assert np.abs(jm.quat_to_6d(q) - six).max() <= tol
    assert modulo_sign(jm.sixd_to_quat(six.astype(dtype)), q64) <= (1e-6 if dtype == np.float32 else 4e-15)
    swing, twist = jm.swing_twist(q, [0, 0, 1])
    assert modulo_sign(jm.quat_multiply(swing, twist), q64) <= tol * 2
    # the twist's angle is the Davenport angle about z of the "zyx"-free decomposition: q's own
    # rotation about z after the swing is taken out; checked through its rotation vector
    assert np.abs(jm.quat_to_rotvec(twist)[:, :2]).max() == 0


def test_rotvec_sign_at_pi_as_scipy():
    """w < 0 negates; at w = +-0 (a half turn) the first non-zero of x, y, z comes out positive, as
    scipy's as_rotvec (its canonical quaternion)"""
    for q in ([0.6, 0.0, -0.8, 0.0], [0.6, 0.0, -0.8, -0.0], [-0.6, 0.0, 0.8, 0.0], [0.0, -0.6, 0.8, -0.0],
              [0.0, 0.0, -1.0, 0.0], [-0.0, 0.0, -1.0, -0.0], [0.6, 0.0, -0.8, -1e-30], [-0.6, 0.0, 0.8, 1e-30]):
        want = Rotation.from_quat(q).as_rotvec()
        assert np.abs(jm.quat_to_rotvec(np.array(q)) - want).max() <= 1e-15
        assert np.abs(jm.quat_to_rotvec(np.array(q, np.float32)) - want).max() <= 5e-7
