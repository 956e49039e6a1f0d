"""Scale invariance, zero quaternions and gimbal lock of the conversion and Euler kernels, measured
on every ISA path against the float64 jointmath.reference (the bounds in README.md, csrc/convert.c
and csrc/euler.c come from this script).

Run: PYTHONPATH=. python tools/convert_numerics.py [--quick]

1. The adversarial quaternions of the scale-invariance fix, one row per case and function: the
   max abs element error of quat_to_matrix / joints_to_mats, and the rotation error of the
   quat_to_euler angles (the angle between the rotation they give and q's), or NaN.
2. Scale sweep: random unit quaternions with random signs times 2^k for every k from -149 to 127
   (float32's range, subnormals included; records rounded to zero are left out); the error is
   against the reference of the float32 input exactly as given. The float64 path (NumPy) the
   same over 2^-1074 ... 2^1023.
3. Gimbal lock: quaternions of random outer angles and a middle angle within +-1e-5 rad of
   +-90 degrees (a dense sweep, every order), and random quaternions: the round trip error of
   euler_to_quat(quat_to_euler(q)) in float32, that of the angles alone (converted back in
   float64), each angle's own error against the reference for the random q more than 1e-3 rad
   from the lock (closer, the outer angles are ill-conditioned), and the lock threshold as it acts: the largest distance from +-90 degrees (of the
   exact input) at which the third angle came out 0, and the smallest at which it did not.
"""
import argparse

import numpy as np

import jointmath as jm
from jointmath import _core, reference

ORDERS = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "xyz", "xzy", "yxz", "yzx", "zxy", "zyx"]
CASES = {
    "(0, 0, 0, 1e20)": (0, 0, 0, 1e20),
    "(0, 0, 0, 1e-40)": (0, 0, 0, 1e-40),
    "(1e-20, 0, 0, 0)": (1e-20, 0, 0, 0),
    "(1e-30, 1e-30, 1e-30, 1e-30)": (1e-30, 1e-30, 1e-30, 1e-30),
    "(-2^-149, 0, 2^-149, 0)": (-2.0**-149, 0, 2.0**-149, 0),
    "(FLT_MAX, -FLT_MAX, FLT_MAX, FLT_MAX)": (3.4028235e38, -3.4028235e38, 3.4028235e38, 3.4028235e38),
    "(0, 0, 0, 0)": (0, 0, 0, 0),
}


def matrix_error(q, exact):
    """max abs element error of quat_to_matrix and joints_to_mats against the reference of the
    float64 quaternions `exact` (the same rotation as the float32 q)."""
    expected = reference.quat_to_matrix(exact)
    m = jm.quat_to_matrix(q)
    mats = jm.joints_to_mats(jm.make_joints(q, np.zeros(q.shape[:-1] + (3,), np.float32)))["m"][..., :3]
    with np.errstate(invalid="ignore"):
        return np.maximum(np.abs(m - expected).max(axis=(-2, -1)), np.abs(mats - expected).max(axis=(-2, -1)))


def euler_error(q, exact, order):
    """rotation error (rad) of quat_to_euler(q): angle between the rotation of its angles
    (converted back in float64) and exact's."""
    angles = jm.quat_to_euler(q, order, degrees=False)
    with np.errstate(invalid="ignore"):
        return reference.angle_between(reference.euler_to_quat(angles.astype(np.float64), order, degrees=False), exact)


def fmt(values):
    values = np.asarray(values, np.float64)
    if np.isnan(values).all():
        return "NaN"
    if np.isnan(values).any():
        return f"{np.nanmax(values):.1e} + NaN"
    return f"{values.max():.1e}"


def adversarial_cases():
    print("1. adversarial quaternions: max abs matrix element error | quat_to_euler rotation error (rad, 12 orders)")
    isas = jm.available_isas()
    print(f"  {'q':<40}" + "".join(f"{isa:>26}" for isa in isas))
    for label, case in CASES.items():
        exact = np.array([case], np.float64)
        q = exact.astype(np.float32)
        cells = []
        for isa in isas:
            _core._set_isa(isa)
            if (q == 0).all():  # no rotation: what comes out (NaN is the documented answer)
                m = jm.quat_to_matrix(q)
                e = np.concatenate([jm.quat_to_euler(q, order) for order in ORDERS])
                cells.append(f"{'NaN' if np.isnan(m).all() else 'finite'} | {'NaN' if np.isnan(e).all() else 'finite'}")
                continue
            m = matrix_error(q, exact)
            e = np.concatenate([euler_error(q, exact, order) for order in ORDERS])
            cells.append(f"{fmt(m)} | {fmt(e)}")
        print(f"  {label:<40}" + "".join(f"{c:>26}" for c in cells))


def unit_quats(rng, n):
    q = rng.standard_normal((n, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def scale_sweep(rng, per_scale):
    print(f"\n2. scale sweep, {per_scale} random quaternions per power of two (random signs): max error")
    exponents = np.arange(-149, 128)
    base = unit_quats(rng, per_scale * len(exponents)) * rng.choice([-1.0, 1.0], (per_scale * len(exponents), 4))
    k = np.repeat(exponents, per_scale)
    q = (base * np.exp2(k)[:, None]).astype(np.float32)  # rounded (subnormals lose digits) ...
    exact = q.astype(np.float64) * np.exp2(-k)[:, None]  # ... and the reference sees that input
    keep = (q != 0).any(axis=1)
    q, exact = q[keep], exact[keep]
    print(f"  {'path':<10}{'matrix elements':>18}{'Euler rotation (rad)':>24}   ({len(q):,} quaternions, 2^-149 ... 2^127)")
    for isa in jm.available_isas():
        _core._set_isa(isa)
        e = max(float(np.max(euler_error(q, exact, order))) for order in ORDERS[:: 5])
        print(f"  {isa:<10}{fmt(matrix_error(q, exact)):>18}{e:>24.1e}")
    # float64: the NumPy path over float64's whole range, subnormals included
    exponents64 = np.arange(-1074, 1024)
    k = np.repeat(exponents64, 4)
    base = unit_quats(rng, len(k)) * rng.choice([-1.0, 1.0], (len(k), 4))
    with np.errstate(under="ignore"):
        q64 = base * np.exp2(k.astype(np.float64))[:, None]
    keep = (q64 != 0).any(axis=1) & (k > -1022)  # below 2^-1022 the input itself has lost digits:
    exact = base[keep]  # the reference there is the rounded input, checked for finite unit results below
    m = np.abs(jm.quat_to_matrix(q64[keep]) - reference.quat_to_matrix(exact)).max()
    e = reference.angle_between(reference.euler_to_quat(jm.quat_to_euler(q64[keep], "ZXY", False), "ZXY", False),
                                exact).max()
    tiny = q64[(q64 != 0).any(axis=1) & (k <= -1022)]
    tiny_ok = np.isfinite(jm.quat_to_matrix(tiny)).all() and np.isfinite(jm.quat_to_euler(tiny, "ZXY")).all()
    print(f"  {'float64':<10}{m:>18.1e}{e:>24.1e}   (2^-1021 ... 2^1023; below, subnormal: finite {tiny_ok})")


def euler_quats(order, middle, rng):
    n = len(middle)
    angles = np.column_stack([rng.uniform(-np.pi, np.pi, n), middle, rng.uniform(-np.pi, np.pi, n)])
    return reference.euler_to_quat(angles, order, degrees=False).astype(np.float32)


def true_lock_distance(q, order):
    """distance (rad) of the exact input's middle angle from +-90 degrees, in float64"""
    middle = reference.quat_to_euler(q.astype(np.float64), order, degrees=False)[:, 1]
    return np.pi / 2 - np.abs(middle)


def gimbal_lock(rng, sweep, n_random):
    print(f"\n3. gimbal lock: {sweep:,} middle angles per sign within +-1e-5 rad of +-90 deg x 12 orders; "
          f"{n_random:,} random q x 12 orders")
    offsets = np.concatenate([np.linspace(-1e-5, 1e-5, sweep), np.geomspace(1e-9, 1e-5, 200), -np.geomspace(1e-9, 1e-5, 200)])
    print(f"  {'path':<10}{'round trip, lock':>18}{'angles, lock':>15}{'round trip, random':>21}"
          f"{'each angle, random':>21}{'lock at most':>15}{'no lock from':>15}")
    inputs = {}
    for order in ORDERS:
        middle = np.concatenate([np.pi / 2 + offsets, -np.pi / 2 - offsets])
        lock_q = euler_quats(order, middle, rng)
        random_q = unit_quats(rng, n_random).astype(np.float32)
        inputs[order] = (lock_q, true_lock_distance(lock_q, order), random_q)
    for isa in jm.available_isas():
        _core._set_isa(isa)
        trip_lock = alone_lock = trip_random = each_angle = 0.0
        locked_max, free_min = 0.0, np.inf
        for order, (lock_q, distance, random_q) in inputs.items():
            angles = jm.quat_to_euler(lock_q, order, degrees=False)
            trip_lock = max(trip_lock, reference.angle_between(jm.euler_to_quat(angles, order, False), lock_q).max())
            alone_lock = max(alone_lock, reference.angle_between(
                reference.euler_to_quat(angles.astype(np.float64), order, False), lock_q).max())
            random_angles = jm.quat_to_euler(random_q, order, False)
            back = jm.euler_to_quat(random_angles, order, False)
            trip_random = max(trip_random, reference.angle_between(back, random_q).max())
            expected = reference.quat_to_euler(random_q, order, False)
            clear = np.pi / 2 - np.abs(expected[:, 1]) > 1e-3
            difference = (random_angles - expected + np.pi) % (2 * np.pi) - np.pi
            each_angle = max(each_angle, np.abs(difference[clear]).max())
            locked = angles[:, 2] == 0  # the third angle, set to 0 at lock (scipy's convention)
            locked_max = max(locked_max, distance[locked].max(initial=0))
            free_min = min(free_min, distance[~locked].min(initial=np.inf))
        print(f"  {isa:<10}{trip_lock:>18.2e}{alone_lock:>15.2e}{trip_random:>21.2e}{each_angle:>21.2e}"
              f"{locked_max:>15.2e}{free_min:>15.2e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sweeps")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    before = jm.isa()
    try:
        adversarial_cases()
        scale_sweep(rng, 20 if args.quick else 200)
        gimbal_lock(rng, 2001 if args.quick else 20001, 10_000 if args.quick else 100_000)
    finally:
        _core._set_isa(before)


if __name__ == "__main__":
    main()
