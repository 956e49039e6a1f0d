"""Fits the polynomial coefficients of csrc/slerp_lanes.h (float32) and csrc/quat_math.h (float64) (run: python tools/fit_interp_polys.py
[--float64]).

sinc_0_half_pi: sin(x) / x = 1 + s P(s), s = x^2, x in [0, pi/2]
atanc_0_1:      atan(a) / a = 1 + s Q(s), s = a^2, a in [0, 1]

Both are minimax fits in RELATIVE error (the slerp weights multiply them, so relative error is
what reaches the result), by Lawson's iteratively reweighted least squares in float64. The
coefficients are rounded to float32 and the float32 evaluation is checked on a dense grid.

float64 (sinc_f64, atanc_f64: the float64 kernels jm_slerp_quats_f64):
sinc_f64:       sin(x) / x = 1 + s P(s), s = x^2, x in [0, pi/2]        (8 coefficients)
atanc_f64:      atan(y) / y = 1 + s Q(s), s = y^2, y in [0, tan(pi/8)]  (11 coefficients)
float64 needs more than float64 arithmetic to fit: P and Q are Chebyshev fits of
(f(x) / x - 1) / s in s, made and checked with mpmath at 50 digits (near-minimax; the relative
error of 1 + s P is s times P's absolute error), the check with the coefficients rounded to
double. `--float64` prints only these (needs mpmath).

FIXED_T_FIT (the slerp with one t for every lane): the weight sin(t w) / sin(w), w in [0, pi/2],
as sum_k c_k(t) u^k with u = 2 cos(w) - 1 and c_k(t) = t sum_j A[k][j] t^(2j): a minimax fit in
ABSOLUTE error (the weight multiplies a unit quaternion) over a grid of t and u, by the same
reweighting. The c_k are computed in float64 per call and rounded to float32; the float32
evaluation (even and odd terms by Horner's scheme, as the kernel) is checked on a dense grid.
"""
import numpy as np


def lawson(x, f, degree, iterations=300):
    """Coefficients c1..c_degree of x (1 + sum c_k x^(2k)) minimising max |p / f - 1|."""
    basis = np.stack([x ** (2 * k + 1) for k in range(1, degree + 1)], axis=1) / f[:, None]
    rhs = (f - x) / f
    weights = np.full(len(x), 1.0 / len(x))
    for _ in range(iterations):
        root = np.sqrt(weights)
        c = np.linalg.lstsq(basis * root[:, None], rhs * root, rcond=None)[0]
        residual = np.abs(basis @ c - rhs)
        weights *= residual
        weights /= weights.sum()
    return c, residual.max()


def float32_error(x, f, c):
    """Max relative error of the float32 Horner evaluation with the float32 coefficients."""
    x32 = x.astype(np.float32)
    s = x32 * x32
    p = np.float32(c[-1])
    for ck in c[-2::-1]:
        p = p * s + np.float32(ck)
    value = x32 * (p * s + np.float32(1))
    return np.abs(value / f - 1).max()


FIXED_T_TERMS, FIXED_T_T_TERMS = 9, 5  # powers of u; odd powers of t


def slerp_weight(t, u):
    """sin(t w) / sin(w) for cos(w) = (u + 1) / 2 (t at w = 0)."""
    w = np.arccos((u + 1) / 2)
    s = np.sin(w)
    return np.where(s < 1e-9, t, np.sin(t * w) / np.where(s < 1e-9, 1, s))


def fixed_t_coefficients(table, t):
    """c_k(t) for k < FIXED_T_TERMS, in float64."""
    return np.array([t * np.polynomial.polynomial.polyval(t * t, row) for row in table])


def even_odd32(c, u):
    """The kernel's evaluation in float32, without fused multiply-adds: E(u^2) + u O(u^2), the even
    and the odd coefficients each by Horner's scheme (fixed_t_weight)."""
    c = c.astype(np.float32)
    u2 = u * u

    def horner(coefficients):
        p = np.full_like(u, coefficients[-1])
        for ck in coefficients[-2::-1]:
            p = p * u2 + ck
        return p

    return horner(c[0::2]) + u * horner(c[1::2])


def fit_fixed_t(iterations=200):
    u = np.cos(np.linspace(0, np.pi, 301))
    t = np.linspace(0, 1, 101)
    uu, tt = (a.ravel() for a in np.meshgrid(u, t))
    basis = np.stack([tt ** (2 * j + 1) * uu ** k for k in range(FIXED_T_TERMS) for j in range(FIXED_T_T_TERMS)], 1)
    f = slerp_weight(tt, uu)
    weights = np.full(len(f), 1.0 / len(f))
    for _ in range(iterations):
        root = np.sqrt(weights)
        c = np.linalg.lstsq(basis * root[:, None], f * root, rcond=None)[0]
        residual = np.abs(basis @ c - f)
        weights *= residual
        weights /= weights.sum()
    table = c.reshape(FIXED_T_TERMS, FIXED_T_T_TERMS)
    dense_u = np.linspace(-1, 1, 20001)
    worst64 = worst32 = 0.0
    for ti in np.linspace(0, 1, 257):
        exact = slerp_weight(ti, dense_u)
        ck = fixed_t_coefficients(table, ti)
        worst64 = max(worst64, np.abs(np.polynomial.polynomial.polyval(dense_u, ck) - exact).max())
        worst32 = max(worst32, np.abs(even_odd32(ck, dense_u.astype(np.float32)) - exact).max())
    return table, worst64, worst32


def fit_float64(name, func, s_max, terms, dps=50, checks=4000):
    """(coefficients of P highest first, rounded to double; max relative error of 1 + s P(s) with
    them against func(x) / x, x = sqrt(s), on a grid of s in (0, s_max]), all in mpmath."""
    import mpmath as mp

    mp.mp.dps = dps

    def g(s):
        x = mp.sqrt(s if s else mp.mpf(10) ** -40)
        return (func(x) / x - 1) / x**2

    coefficients = [float(c) for c in mp.chebyfit(g, [0, s_max], terms)]
    worst = mp.mpf(0)
    for k in range(1, checks + 1):
        s = s_max * k / checks
        p = mp.mpf(0)
        for c in coefficients:
            p = p * s + c
        x = mp.sqrt(s)
        worst = max(worst, abs((1 + s * p) / (func(x) / x) - 1))
    return coefficients, float(worst)


def main_float64():
    import mpmath as mp

    mp.mp.dps = 50
    for name, func, s_max, terms in [("sinc_f64", mp.sin, (mp.pi / 2) ** 2, 8),
                                     ("atanc_f64", mp.atan, mp.tan(mp.pi / 8) ** 2, 11)]:
        c, err = fit_float64(name, func, s_max, terms)
        print(f"{name}: {terms} coefficients, relative error {err:.2g} with them rounded to double")
        print("  highest first:", ", ".join(f"{v:.17g}" for v in c))


def main():
    import sys

    if "--float64" in sys.argv[1:]:
        main_float64()
        return
    for name, top, func, degree in [("sinc_0_half_pi", np.pi / 2, np.sin, 4), ("atanc_0_1", 1.0, np.arctan, 8)]:
        x = np.linspace(1e-4, top, 200001)
        f = func(x)
        c, err = lawson(x, f, degree)
        print(f"{name}: degree {2 * degree + 1}, relative error {err:.2g} in float64, "
              f"{float32_error(x, f, c):.2g} evaluated in float32")
        print("  highest first:", ", ".join(f"{np.float32(v)!r}"[11:-1] + "f" for v in c[::-1]))
    table, err64, err32 = fit_fixed_t()
    print(f"FIXED_T_FIT: abs error {err64:.2g} in float64, {err32:.2g} evaluated in float32")
    for row in table:
        print("    {" + ", ".join(f"{v:.17g}" for v in row) + "},")
    try:
        main_float64()
    except ImportError:
        print("float64 fits skipped: they need mpmath")


if __name__ == "__main__":
    main()
