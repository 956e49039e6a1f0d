"""Call cost: one-element calls of every public array function, as a ratio to np.add on 4 float32.

Each ratio is the median over rounds of (time of the call) / (time of np.add(a, b) on two (4,)
float32 arrays), the two timed back to back in every round (benchmarks/timing.py), so a slow
spell of the shared machine slows both sides. Goals: every function <= 3x np.add,
forward_kinematics <= 5x.

    python benchmarks/bench_call_cost.py [--rounds 31]
"""
import argparse

import numpy as np

import jointmath as jm
from timing import median_ratio, median_seconds


def calls():
    """[(function name, call description, callable)]: one element each (float32 unless said)."""
    q = np.array([0.1, 0.2, 0.3, 0.9], np.float32)
    q2 = np.array([0.3, -0.1, 0.2, 0.9], np.float32)
    m = jm.quat_to_matrix(q)
    angles = np.array([0.1, 0.2, 0.3], np.float32)
    code = jm.pack_quats(q)
    joints = jm.make_joints(q[None], [[1, 2, 3]])
    blend = jm.make_joints(q2[None])
    mats = jm.joints_to_mats(joints)
    packed = jm.pack_joints(joints)
    frames = jm.make_joints(np.stack([q, q2])[:, None], np.zeros((2, 1, 3)))
    parents = np.array([-1])
    index = jm.joint_index([0], 1)
    clip = q[None]
    return [
        ("quat_to_matrix", "q (4,)", lambda: jm.quat_to_matrix(q)),
        ("matrix_to_quat", "m (3, 3)", lambda: jm.matrix_to_quat(m)),
        ("slerp", "q0, q1 (4,), t float", lambda: jm.slerp(q, q2, 0.5)),
        ("nlerp", "q0, q1 (4,), t float", lambda: jm.nlerp(q, q2, 0.5)),
        ("euler_to_quat", "angles (3,), 'ZXY'", lambda: jm.euler_to_quat(angles, "ZXY")),
        ("quat_to_euler", "q (4,), 'ZXY'", lambda: jm.quat_to_euler(q, "ZXY")),
        ("pack_quats", "q (4,)", lambda: jm.pack_quats(q)),
        ("unpack_quats", "one uint32 code", lambda: jm.unpack_quats(code)),
        ("make_continuous", "q (1, 4)", lambda: jm.make_continuous(clip)),
        ("extract_rotation", "a (3, 3)", lambda: jm.extract_rotation(m)),
        ("joints_to_mats", "joints (1,)", lambda: jm.joints_to_mats(joints)),
        ("mats_to_joints", "mats (1,)", lambda: jm.mats_to_joints(mats)),
        ("compose_mats", "mats (1,) x2", lambda: jm.compose_mats(mats, mats)),
        ("slerp_joints", "joints (1,), t float", lambda: jm.slerp_joints(joints, blend, 0.5)),
        ("lerp_joints", "joints (1,), t float", lambda: jm.lerp_joints(joints, blend, 0.5)),
        ("joint_index", "[0], 1 joint", lambda: jm.joint_index([0], 1)),
        ("slerp_joints", "joints (1,), t float, a joint_index", lambda: jm.slerp_joints(joints, blend, 0.5, index=index)),
        ("make_joints", "q (1, 4)", lambda: jm.make_joints(clip)),
        ("pack_joints", "joints (1,)", lambda: jm.pack_joints(joints)),
        ("unpack_joints", "packed (1,)", lambda: jm.unpack_joints(packed)),
        ("forward_kinematics", "1 frame x 1 joint", lambda: jm.forward_kinematics(joints, parents)),
        ("resample_joints", "2 frames x 1 joint", lambda: jm.resample_joints(frames, 1 / 30, 30)),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    args = parser.parse_args()
    a, b = np.ones(4, np.float32), np.ones(4, np.float32)

    def add():
        return np.add(a, b)

    print(f"path {jm.isa()}; np.add on 4 float32: {median_seconds(add) * 1e6:.3f} us per call\n")
    print("| function | call | ratio to np.add | goal |")
    print("|---|---|---:|---:|")
    for name, call, func in calls():
        goal = 5 if name == "forward_kinematics" else 3
        ratio = median_ratio(func, add, rounds=args.rounds)
        flag = "" if ratio <= goal else " (over)"
        print(f"| `{name}` | {call} | {ratio:.2f}x{flag} | <= {goal}x |")


if __name__ == "__main__":
    main()
