"""Fits the polynomial coefficients of csrc/interp.c (run: python benchmarks/fit_interp_polys.py).

sinc_0_half_pi: sin(x) / x = 1 + s P(s), s = x^2, x in [0, pi/2]
atanc_0_1:      atan(a) / a = 1 + s Q(s), s = a^2, a in [0, 1]

Both are minimax fits in RELATIVE error (the slerp weights multiply them, so relative error is
what reaches the result), by Lawson's iteratively reweighted least squares in float64. The
coefficients are rounded to float32 and the float32 evaluation is checked on a dense grid.
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


def main():
    for name, top, func, degree in [("sinc_0_half_pi", np.pi / 2, np.sin, 4), ("atanc_0_1", 1.0, np.arctan, 8)]:
        x = np.linspace(1e-4, top, 200001)
        f = func(x)
        c, err = lawson(x, f, degree)
        print(f"{name}: degree {2 * degree + 1}, relative error {err:.2g} in float64, "
              f"{float32_error(x, f, c):.2g} evaluated in float32")
        print("  highest first:", ", ".join(f"{np.float32(v)!r}"[11:-1] + "f" for v in c[::-1]))


if __name__ == "__main__":
    main()
