"""Differential fuzzer: every public kernel on every ISA path, inside and outside its input domain.

Each round draws inputs from a mix of in-domain values (unit quaternions, rotations, fractions in
[0, 1]) and adversarial ones (huge: up to the dtype's largest finite, tiny and denormal, 0, +-inf,
NaN, non-orthogonal and zero matrices, non-unit quaternions, all 2^32 code patterns), runs every
public kernel on each path the CPU has, and compares the results element by element with the
first path's: the class of each element (NaN, +inf, -inf, finite) must agree on every path, and a
refusal must be the same exception. It reports each kernel's disagreements (counts, an example
input) and how many results were bit-identical across paths.

Run: PYTHONPATH=. python tools/path_fuzz.py [--rounds 200] [--size 64] [--seed 0]
Exit status 1 when any class or exception disagrees. tests/test_path_agreement.py runs a small
fixed-seed version.
"""
import argparse
import sys

import numpy as np

import jointmath as jm
from jointmath import _core

ORDERS = ["ZYX", "XYZ", "zxz", "yxy"]


def special_values(dtype):
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, info.max, -info.max, info.max / 4, 1e20, -1e20, 1e-20,
                     float(info.tiny), float(info.smallest_subnormal), -float(info.smallest_subnormal), np.inf,
                     -np.inf, np.nan, 1e10, 3.0, 1 + float(info.eps)], dtype)


def values(rng, shape, dtype, adversarial):
    """Random normal values with a fraction `adversarial` replaced by special ones or scaled far."""
    x = rng.standard_normal(shape).astype(dtype)
    pick = rng.uniform(size=shape) < adversarial
    specials = special_values(dtype)
    x[pick] = specials[rng.integers(0, len(specials), pick.sum())]
    # whole records scaled by a random power of two, from the denormals to the largest finite
    scale = rng.uniform(size=shape[0]) < adversarial
    exponents = rng.integers(np.finfo(dtype).minexp - 20, np.finfo(dtype).maxexp, scale.sum())
    with np.errstate(over="ignore", invalid="ignore"):
        x[scale] = (x[scale] * np.ldexp(1.0, exponents).reshape((-1,) + (1,) * (x.ndim - 1))).astype(dtype)
    return x


def unit_quats(rng, n, dtype):
    q = rng.standard_normal((n, 4))
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(dtype)


def quats(rng, n, dtype):
    q = unit_quats(rng, n, dtype)
    mode = rng.integers(0, 4)
    if mode == 0:
        return q
    if mode == 1:  # non-unit, any scale
        with np.errstate(over="ignore"):
            return (q * np.ldexp(1.0, rng.integers(np.finfo(dtype).minexp - 20, np.finfo(dtype).maxexp, (n, 1)))).astype(dtype)
    return values(rng, (n, 4), dtype, 0.3)


def matrices(rng, n, dtype):
    mode = rng.integers(0, 4)
    if mode == 0:
        return jm.quat_to_matrix(unit_quats(rng, n, np.float64)).astype(dtype)
    if mode == 1:  # non-orthogonal
        return rng.standard_normal((n, 3, 3)).astype(dtype)
    return values(rng, (n, 9), dtype, 0.3).reshape(n, 3, 3)


def fractions(rng, n, dtype):
    t = rng.uniform(size=n)
    edge = rng.uniform(size=n) < 0.2
    t[edge] = rng.choice([0.0, 1.0, 1e-30, 1 - 1e-7], edge.sum())
    return t.astype(dtype)


def joint_records(rng, n):
    j = np.zeros(n, jm.JOINT_QUAT)
    j["q"] = quats(rng, n, np.float32)
    j["t"][:, :3] = values(rng, (n, 3), np.float32, 0.2)
    return j


def mat_records(rng, n):
    m = np.zeros(n, jm.JOINT_MAT)
    m["m"][:, :, :3] = matrices(rng, n, np.float32)
    m["m"][:, :, 3] = values(rng, (n, 3), np.float32, 0.2)
    return m


def calls(rng, n):
    """(kernel name, zero-argument call) for one round: every public kernel, both dtypes."""
    out = []
    for dtype in (np.float32, np.float64):
        q, q1, a = quats(rng, n, dtype), quats(rng, n, dtype), matrices(rng, n, dtype)
        t = fractions(rng, n, dtype)
        order, degrees = ORDERS[rng.integers(0, len(ORDERS))], bool(rng.integers(0, 2))
        angles = values(rng, (n, 3), dtype, 0.3)
        name = np.dtype(dtype).name
        out += [
            (f"quat_to_matrix {name}", lambda q=q: jm.quat_to_matrix(q)),
            (f"matrix_to_quat {name}", lambda a=a: jm.matrix_to_quat(a)),
            (f"slerp {name}", lambda q=q, q1=q1, t=t: jm.slerp(q, q1, t)),
            (f"nlerp {name}", lambda q=q, q1=q1, t=t: jm.nlerp(q, q1, t)),
            (f"euler_to_quat {name}", lambda x=angles, o=order, d=degrees: jm.euler_to_quat(x, o, degrees=d)),
            (f"quat_to_euler {name}", lambda q=q, o=order, d=degrees: jm.quat_to_euler(q, o, degrees=d)),
            (f"make_continuous {name}", lambda q=q: jm.make_continuous(q)),
            (f"extract_rotation {name}", lambda a=a: jm.extract_rotation(a, return_iterations=True)),
            (f"pack_quats bits=10 {name}", lambda q=q: jm.pack_quats(q, bits=10)),
            (f"pack_quats bits=20 {name}", lambda q=q: jm.pack_quats(q, bits=20)),
        ]
    codes32 = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    codes64 = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n).astype(np.uint64)
    j0, j1, mats = joint_records(rng, n), joint_records(rng, n), mat_records(rng, n)
    tj = float(fractions(rng, 1, np.float64)[0])
    parents = np.concatenate([[-1], rng.integers(0, np.arange(1, n))]) if n > 1 else np.array([-1])
    out += [
        ("unpack_quats uint32", lambda: jm.unpack_quats(codes32)),
        ("unpack_quats uint64", lambda: jm.unpack_quats(codes64)),
        ("joints_to_mats", lambda: jm.joints_to_mats(j0)),
        ("mats_to_joints", lambda: jm.mats_to_joints(mats)),
        ("compose_mats", lambda: jm.compose_mats(mats, mats[::-1].copy())),
        ("forward_kinematics", lambda: jm.forward_kinematics(j0[None], parents)),
        ("slerp_joints", lambda: jm.slerp_joints(j0, j1, tj)),
        ("lerp_joints", lambda: jm.lerp_joints(j0, j1, tj)),
        ("pack_joints bits=10", lambda: jm.pack_joints(j0, bits=10)),
        ("pack_joints bits=20", lambda: jm.pack_joints(j0, bits=20)),
        ("unpack_joints", lambda: jm.unpack_joints(jm.pack_joints(j0, bits=10))),
        ("extract_rotation JOINT_MAT", lambda: jm.extract_rotation(mats)),
    ]
    return out


def flat_fields(result):
    """The result as a list of flat arrays (tuples and record fields taken apart)."""
    if isinstance(result, tuple):
        return [a for r in result for a in flat_fields(r)]
    result = np.asarray(result)
    if result.dtype.names:
        return [a for f in result.dtype.names for a in flat_fields(result[f])]
    return [result.reshape(-1)]


def classes(a):
    """Per element: 0 finite, 1 NaN, 2 +inf, 3 -inf (integers: all finite)."""
    if a.dtype.kind != "f":
        return np.zeros(a.shape, np.int8)
    return np.select([np.isnan(a), a == np.inf, a == -np.inf], [1, 2, 3], 0).astype(np.int8)


def run(rounds, size, seed, paths=None, verbose=True):
    """Returns {kernel: [class disagreements, bit-identical results, results, example]}."""
    paths = paths or jm.available_isas()
    before = jm.isa()
    rng = np.random.default_rng(seed)
    report = {}
    try:
        for _ in range(rounds):
            n = int(rng.integers(1, size + 1))
            with np.errstate(all="ignore"):
                round_calls = calls(rng, n)  # the same inputs on every path (kernels never write into them)
            for name, call in round_calls:
                results = []
                for isa in paths:
                    _core._set_isa(isa)
                    try:
                        with np.errstate(all="ignore"):
                            results.append(("ok", flat_fields(call())))
                    except Exception as exc:  # noqa: BLE001 - any refusal is compared by type
                        results.append(("raised", type(exc).__name__))
                entry = report.setdefault(name, [0, 0, 0, None])
                first = results[0]
                for k, other in enumerate(results[1:], 1):
                    entry[2] += 1
                    if first[0] != other[0] or (first[0] == "raised" and first[1] != other[1]):
                        entry[0] += 1
                        entry[3] = entry[3] or f"{first[1]} vs {other[1]} (n={n})"
                        continue
                    if first[0] == "raised":
                        entry[1] += 1
                        continue
                    differ = sum(int(np.sum(classes(x) != classes(y))) for x, y in zip(first[1], other[1]))
                    if differ:
                        entry[0] += differ
                        entry[3] = entry[3] or _example(first[1], other[1], paths, k)
                    elif all(x.tobytes() == y.tobytes() for x, y in zip(first[1], other[1])):
                        entry[1] += 1
    finally:
        _core._set_isa(before)
    if verbose:
        print(f"paths {', '.join(paths)}; {rounds} rounds of up to {size} records, seed {seed}")
        print(f"{'kernel':30} {'class disagreements':>20} {'bit-identical':>14}  example")
        for name, (bad, same, total, example) in report.items():
            print(f"{name:30} {bad:20d} {same:8d}/{total:<5d}  {example or ''}")
    return report


def _example(a, b, paths, other):
    for x, y in zip(a, b):
        where = np.flatnonzero(classes(x) != classes(y))
        if len(where):
            i = where[0]
            return f"element {i}: {paths[0]} {x[i]!r}, {paths[other]} {y[i]!r}"
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    report = run(args.rounds, args.size, args.seed)
    sys.exit(1 if any(entry[0] for entry in report.values()) else 0)


if __name__ == "__main__":
    main()
