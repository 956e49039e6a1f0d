"""Clips the compressed-clip tests share: 01_01 from tests/data and small synthetic clips."""
import os

import numpy as np
import pytest

import jointmath as jm
from jointmath import bvh

DATA = os.path.join(os.path.dirname(__file__), "data")


def synthetic_clip(n_frames=50, n_joints=5, seed=0, spin=False):
    """A chain (and a branch) of joints with smooth random rotations and a moving root; `spin`
    turns the root through several whole turns (a rotation far from any single reference)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, n_frames)[:, None, None]
    freq = rng.uniform(0.5, 3, (1, n_joints, 3))
    phase = rng.uniform(0, 6.3, (1, n_joints, 3))
    angles = 40 * np.sin(2 * np.pi * freq * t + phase)
    if spin:
        angles[:, 0, 1] = 900 * t[:, 0, 0]
    q = jm.euler_to_quat(angles.astype(np.float32), "ZXY", degrees=True)
    parents = [-1] + [max(j - 2, 0) if j % 3 == 2 else j - 1 for j in range(1, n_joints)]
    offsets = np.zeros((n_joints, 3))
    offsets[1:, 1] = rng.uniform(2, 10, n_joints - 1)
    trans = np.broadcast_to(offsets, (n_frames, n_joints, 3)).copy()
    trans[:, 0] = np.cumsum(rng.normal(0, 0.3, (n_frames, 3)), axis=0) + [0, 90, 0]
    joints = jm.make_joints(q, trans.astype(np.float32))
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")] + \
        [("Zrotation", "Xrotation", "Yrotation")] * (n_joints - 1)
    return bvh.Clip(names=[f"j{k}" for k in range(n_joints)], parents=parents, offsets=offsets, channels=channels,
                    frame_time=1 / 30, joints=joints, end_sites=[n_joints - 1], end_offsets=[[0, 3, 0]],
                    name="synthetic")


def errors_of(clip, decoded, shell):
    """ACL's error of every joint at every frame, from an independent float64 NumPy forward
    kinematics of both clips (jointmath.reference)."""
    def world(joints):
        q = joints["q"].astype(np.float64)
        x, y, z, w = np.moveaxis(q, -1, 0)
        r = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                      2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                      2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1).reshape(q.shape[:-1] + (3, 3))
        t = joints["t"][..., :3].astype(np.float64)
        wr, wt = np.empty_like(r), np.empty_like(t)
        for j, p in enumerate(clip.parents):
            if p < 0:
                wr[:, j], wt[:, j] = r[:, j], t[:, j]
            else:
                wr[:, j] = wr[:, p] @ r[:, j]
                wt[:, j] = np.einsum("fik,fk->fi", wr[:, p], t[:, j]) + wt[:, p]
        return wr, wt
    ra, ta = world(clip.joints)
    rb, tb = world(decoded)
    verts_a = ta[..., None, :] + shell * np.swapaxes(ra, -1, -2)  # (F, J, axis, xyz)
    verts_b = tb[..., None, :] + shell * np.swapaxes(rb, -1, -2)
    return np.sqrt(((verts_a - verts_b) ** 2).sum(-1)).max(-1)


@pytest.fixture(scope="module")
def clip_01_01():
    return bvh.load(os.path.join(DATA, "01_01.bvh"))


@pytest.fixture(scope="module")
def compressed_01_01(clip_01_01):
    """(the compressed 01_01 at the default error, its decoded frames)."""
    c = jm.compress(clip_01_01)
    return c, jm.decompress(c).joints


@pytest.fixture(scope="module")
def small_clip():
    return synthetic_clip()
