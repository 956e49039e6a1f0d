"""The compressed-clip decoder and sampler (csrc/codec.c, jointmath/_codec.c) on every ISA path:
the same records from every path, sample() against a float64 slerp of the decoded frames."""
import numpy as np
import pytest

import jointmath as jm

from codec_clips import clip_01_01, compressed_01_01, small_clip, synthetic_clip  # noqa: F401  (shared fixtures)


def test_decode_is_the_same_on_every_path(compressed_01_01):
    """The frames every path decodes equal the ones the encoder certified (decoded on the
    scalar path when the fixture compressed): bit for bit."""
    c, reference = compressed_01_01
    again = jm.CompressedClip.frombytes(c.tobytes())
    got = jm.decompress(again).joints
    assert got.tobytes() == reference.tobytes()


def test_sample_on_frames_gives_the_frames(compressed_01_01):
    c, reference = compressed_01_01
    frames = np.array([0, 1, 7, c.num_frames - 1])
    got = c.sample(frames * c.frame_time)
    assert np.array_equal(got["q"], reference[frames]["q"])
    assert np.array_equal(got["t"], reference[frames]["t"])


def _slerp64(a, b, t):
    a, b = a.astype(np.float64), b.astype(np.float64)
    d = (a * b).sum(-1, keepdims=True)
    b = np.where(d < 0, -b, b)
    d = np.abs(d).clip(max=1.0)
    theta = np.arccos(d)
    s = np.sin(theta)
    small = s < 1e-6
    wa = np.where(small, 1 - t, np.sin((1 - t) * theta) / np.where(small, 1, s))
    wb = np.where(small, t, np.sin(t * theta) / np.where(small, 1, s))
    return wa * a + wb * b


def test_sample_between_frames_is_the_slerp_of_decoded_frames(compressed_01_01):
    c, reference = compressed_01_01
    rng = np.random.default_rng(3)
    times = rng.uniform(0, (c.num_frames - 1) * c.frame_time, 64)
    got = c.sample(times)
    u = times / c.frame_time
    i = np.floor(u).astype(int)
    frac = (u - i)[:, None, None]
    want_q = _slerp64(reference["q"][i], reference["q"][i + 1], frac)
    sign = np.where((got["q"] * want_q).sum(-1, keepdims=True) < 0, -1, 1)
    assert np.abs(got["q"] * sign - want_q).max() < 2e-6
    want_t = (1 - frac) * reference["t"][i].astype(np.float64) + frac * reference["t"][i + 1]
    assert np.abs(got["t"] - want_t).max() < 1e-4 * np.abs(want_t).max()


def test_sample_clamps_and_takes_out(compressed_01_01):
    c, reference = compressed_01_01
    assert np.array_equal(c.sample(-5.0), reference[0])
    assert np.array_equal(c.sample(1e9), reference[-1])
    out = np.zeros((2, 3, c.num_joints), jm.JOINT_QUAT)
    res = c.sample(np.full((2, 3), 0.25), out=out)
    assert res is out and np.array_equal(out[1, 2], c.sample(0.25))


def test_small_clip_round_trip_on_every_path(small_clip):
    c = jm.compress(small_clip, error=1e-3, shell=0.5)
    back = jm.decompress(c)
    assert back.joints.shape == small_clip.joints.shape
    assert np.abs(back.joints["t"] - small_clip.joints["t"]).max() < 1e-3


def test_decoding_a_large_clip_releases_the_gil(compressed_01_01):
    from jointmath import _core
    c = compressed_01_01[0]
    before = _core._gil_releases()
    jm.CompressedClip.frombytes(c.tobytes())
    c.sample(np.zeros(200))
    assert _core._gil_releases() >= before + 2


_MODE_CLIPS = {}


def _mode_clip(n_frames, tiny):
    """A compressed synthetic clip (a spinning root: four-component rotations; constant offsets;
    moving tracks quantized, or raw at an error float32 cannot meet) and its scalar path's
    decoded frames, made once per case."""
    key = (n_frames, tiny)
    if key not in _MODE_CLIPS:
        from jointmath import _core
        clip = synthetic_clip(n_frames=n_frames, n_joints=7, seed=n_frames, spin=True)
        before = jm.isa()
        _core._set_isa("scalar")
        try:
            c = jm.compress(clip, error=1e-12 if tiny else 1e-3, shell=1.0)
            _MODE_CLIPS[key] = clip, c, jm.decompress(c).joints
        finally:
            _core._set_isa(before)
    return _MODE_CLIPS[key]


@pytest.mark.parametrize("n_frames", [1, 17, 130, 300])
@pytest.mark.parametrize("tiny", [False, True])
def test_every_track_mode_decodes_alike_on_every_path(n_frames, tiny):
    """Frame counts off the decoder's block (128) and vector widths, every track mode: the frames
    this path decodes equal the scalar path's bit for bit (the encoder certified those), and
    raw tracks are the clip's own floats."""
    clip, c, reference = _mode_clip(n_frames, tiny)
    modes = {r.mode for r in c.stats.bit_rates}
    assert modes >= ({"raw"} if tiny and n_frames > 1 else {"quantized4", "constant"} if n_frames > 1 else {"constant"})
    got = jm.decompress(jm.CompressedClip.frombytes(c.tobytes())).joints
    assert got.tobytes() == reference.tobytes()
    if tiny:
        assert np.array_equal(got, clip.joints)
