"""Writes zxy_extra_frame.bvh: a generated 21-joint clip (no third-party data) for the cases a
real clip in another layout covers: every joint in ZXY channel order, a root with positions first,
End Sites, 100 fps, and one frame line more than the header declares (the reader warns and
ignores it). Deterministic: run `python tests/data/make_zxy_clip.py` to rewrite the same file."""
from pathlib import Path

import numpy as np

FRAMES = 150  # declared; the file holds FRAMES + 1 frame lines
# (name, parent index, offset): a root, a spine of 4, two arms of 4, two legs of 4
CHAIN = [("Hips", -1, (0, 90, 0))]
for side, x in (("Left", 1), ("Right", -1)):
    base = len(CHAIN)
    CHAIN += [(f"{side}UpLeg", 0, (9 * x, -5, 0)), (f"{side}Leg", base, (0, -40, 2)),
              (f"{side}Foot", base + 1, (0, -38, -3)), (f"{side}Toe", base + 2, (0, -6, 12))]
spine = len(CHAIN)
CHAIN += [("Spine", 0, (0, 10, 0)), ("Chest", spine, (0, 20, 0)), ("Neck", spine + 1, (0, 22, 0)),
          ("Head", spine + 2, (0, 9, 2))]
for side, x in (("Left", 1), ("Right", -1)):
    base = len(CHAIN)
    CHAIN += [(f"{side}Shoulder", spine + 1, (6 * x, 18, 0)), (f"{side}Arm", base, (13 * x, 0, 0)),
              (f"{side}ForeArm", base + 1, (28 * x, 0, 0)), (f"{side}Hand", base + 2, (25 * x, 0, 0))]


def hierarchy():
    children = {i: [j for j, (_, p, _) in enumerate(CHAIN) if p == i] for i in range(len(CHAIN))}
    lines = ["HIERARCHY"]
    stack = [(0, 0, "open")]
    while stack:  # depth first, without recursion
        j, depth, state = stack.pop()
        pad = "\t" * depth
        if state == "close":
            lines.append(pad + "}")
            continue
        name, parent, offset = CHAIN[j]
        lines.append(pad + ("ROOT " if parent < 0 else "JOINT ") + name)
        lines.append(pad + "{")
        lines.append(pad + "\tOFFSET " + " ".join(f"{v:.5f}" for v in offset))
        position = "Xposition Yposition Zposition " if parent < 0 else ""
        lines.append(pad + f"\tCHANNELS {6 if parent < 0 else 3} {position}Zrotation Xrotation Yrotation")
        if not children[j]:
            lines += [pad + "\tEnd Site", pad + "\t{", pad + "\t\tOFFSET 0.00000 3.00000 0.00000", pad + "\t}"]
        stack.append((j, depth, "close"))
        stack += [(c, depth + 1, "open") for c in reversed(children[j])]
    return lines


def motion():
    rng = np.random.default_rng(20261123)
    t = np.arange(FRAMES + 1)[:, None] / 100.0
    amplitude = rng.uniform(5, 60, (1, 3 * len(CHAIN)))
    frequency = rng.uniform(0.3, 2.0, (1, 3 * len(CHAIN)))
    phase = rng.uniform(0, 2 * np.pi, (1, 3 * len(CHAIN)))
    angles = amplitude * np.sin(2 * np.pi * frequency * t + phase)
    root = np.hstack([30 * t, 90 + 2 * np.sin(6 * t), 5 * np.cos(3 * t)])
    values = np.hstack([root, angles])
    return [" ".join(f"{v:.4f}" for v in row) for row in values]


if __name__ == "__main__":
    text = hierarchy() + ["MOTION", f"Frames: {FRAMES}", "Frame Time: 0.01"] + motion()
    Path(__file__).with_name("zxy_extra_frame.bvh").write_text("\n".join(text) + "\n")
