"""jointmath.bvh.Clip: one source of truth (skeleton + joints), save/load round trips of any
clip, shortest decimals, deep hierarchies, equality, display and world-space helpers. They run
once; the few that ask for the `isa` fixture (a clip's joints, motion and world positions through
the kernels) run on every path."""
import dataclasses
import errno
import hashlib
import io
import os
import re
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import jointmath as jm
from jointmath import _bvh_format, _job, _packed, bvh
from jointmath import reference as ref

from adversarial import run_python

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def sample():
    return bvh.load(jm.data.sample_clip_path())


def reload(clip):
    out = io.BytesIO()
    bvh.save(clip, out)
    out.seek(0)
    return bvh.load(out), out.getvalue()


def assert_same_motion(a, b):
    """Rotations within 1e-6 rad, translations within 1e-6 relative (of the skeleton's scale)."""
    assert a.joints.shape == b.joints.shape
    assert ref.angle_between(a.joints["q"], b.joints["q"].astype(np.float64)).max(initial=0) < 1e-6
    scale = max(1.0, float(np.abs(b.joints["t"]).max(initial=0)))
    np.testing.assert_allclose(a.joints["t"], b.joints["t"], rtol=0, atol=1e-6 * scale)


def nearest_float32(text):
    """The float32 nearest the decimal `text`, ties to even, by exact rational arithmetic
    (NumPy's string -> float32 goes through float64 and can round twice)."""
    exact = Fraction(text.decode() if isinstance(text, bytes) else text)
    guess = np.float32(float(exact))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))]
    distances = [abs(Fraction(float(c)) - exact) if np.isfinite(c) else None for c in candidates]
    best = min(d for d in distances if d is not None)
    ties = [c for c, d in zip(candidates, distances) if d == best]
    return min(ties, key=lambda c: int(c.view(np.uint32)) & 1)


def random_quats(rng, shape):
    q = rng.standard_normal(shape + (4,))
    return (q / np.linalg.norm(q, axis=-1, keepdims=True)).astype(np.float32)


def test_save_writes_edited_joints(isa, sample):
    """Edits through joints survive save/load: in place and through dataclasses.replace."""
    rng = np.random.default_rng(1)
    edited = dataclasses.replace(sample, joints=sample.joints.copy())
    edited.joints["q"][:, 3:9] = random_quats(rng, (sample.n_frames, 6))
    jm.translations(edited.joints)[:, 0] += [1.5, -2.0, 0.25]
    again, _ = reload(edited)
    assert_same_motion(again, edited)
    # the original rotations are gone from the file: far from the edited ones
    assert ref.angle_between(again.joints["q"][:, 3:9], sample.joints["q"][:, 3:9]).max() > 0.1
    # blended with slerp_joints and replaced: also saved as blended
    other = dataclasses.replace(sample, joints=sample.joints[::-1].copy())
    blended = dataclasses.replace(sample, joints=jm.slerp_joints(sample.joints, other.joints, 0.5))
    assert_same_motion(reload(blended)[0], blended)


def test_motion_is_derived_from_joints(isa, sample):
    loaded = bvh.load(jm.data.sample_clip_path())
    motion = loaded.motion
    assert motion.dtype == np.float32 and motion.shape == (loaded.n_frames, sum(len(c) for c in loaded.channels))
    # rebuilt from the derived motion, the joints come back
    rebuilt = bvh.joints_from_motion(motion, loaded.offsets, loaded.channels)
    assert ref.angle_between(rebuilt["q"], loaded.joints["q"].astype(np.float64)).max() < 1e-6
    # an edit of joints shows in motion at once: they cannot disagree
    loaded.joints["q"][:, 0] = [0, 0, 0, 1]
    jm.translations(loaded.joints)[:, 0] = loaded.offsets[0] + [1, 2, 3]
    root = loaded.motion[:, :6]
    np.testing.assert_allclose(root[:, :3], np.tile([1, 2, 3], (loaded.n_frames, 1)), atol=1e-5)
    np.testing.assert_allclose(root[:, 3:], 0, atol=1e-5)
    assert not hasattr(dataclasses.fields(bvh.Clip), "motion")
    assert "motion" not in {f.name for f in dataclasses.fields(bvh.Clip)}


@pytest.mark.parametrize("n_frames", [0, 1, 34, 35, 36, 200])
def test_joints_from_motion_is_euler_to_quat_plus_offsets(isa, n_frames):
    """The one-pass C builder: every record bit for bit what euler_to_quat (degrees) and OFFSET +
    position channels give, over chunk boundaries (1,024 rotations a chunk: 35 frames here),
    mixed orders, partial position channels and joints without rotation."""
    rng = np.random.default_rng(n_frames)
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"),
                ("Yrotation", "Zposition", "Zrotation", "Xrotation"), (), ("Xposition",)]
    channels += [("Zrotation", "Yrotation", "Xrotation"), ("Xrotation", "Yrotation", "Zrotation")] * 13
    channels += [("Zrotation", "Yrotation", "Xrotation")]
    offsets = rng.uniform(-10, 10, (len(channels), 3))
    motion = rng.uniform(-400, 400, (n_frames, sum(map(len, channels)))).astype(np.float32)
    joints = bvh.joints_from_motion(motion, offsets, channels)
    assert joints.dtype == jm.JOINT_QUAT and joints.shape == (n_frames, len(channels))
    column = 0
    for j, ch in enumerate(channels):
        columns = dict(zip(ch, range(column, column + len(ch))))
        column += len(ch)
        order = "".join(c[0] for c in ch if c.endswith("rotation"))
        expected_q = (jm.euler_to_quat(np.ascontiguousarray(motion[:, [columns[a + "rotation"] for a in order]]),
                                       order, degrees=True) if order else np.tile(np.float32([0, 0, 0, 1]), (n_frames, 1)))
        np.testing.assert_array_equal(joints["q"][:, j], expected_q)
        expected_t = np.tile(offsets[j].astype(np.float32), (n_frames, 1))
        for axis, name in enumerate(("Xposition", "Yposition", "Zposition")):
            if name in columns:
                expected_t[:, axis] += motion[:, columns[name]]
        np.testing.assert_array_equal(joints["t"][:, j, :3], expected_t)
        np.testing.assert_array_equal(joints["t"][:, j, 3], 0)
    with pytest.raises(ValueError, match=r"motion must have one column per channel \(%d\)" % column):
        bvh.joints_from_motion(motion[:, 1:], offsets, channels)
    with pytest.raises(ValueError, match=r"offsets must have shape \(%d, 3\)" % len(channels)):
        bvh.joints_from_motion(motion, offsets[1:], channels)


def test_loaded_clip_saves_the_file_values_exactly():
    clip = bvh.load(DATA / "01_01.bvh")
    again, text = reload(clip)
    np.testing.assert_array_equal(again.motion, clip.motion)
    np.testing.assert_array_equal(again.joints, clip.joints)
    # shortest decimals: the CMU file's "-17.0000"-style values come back without noise
    frames = text.split(b"Frame Time:")[1].split(b"\n", 2)[2]
    tokens = frames.split()
    assert b"0" in tokens and all(len(t) <= 15 for t in tokens[:5000])
    assert all(not t.endswith(b".0") and b"0000001" not in t for t in tokens[:5000])


def test_edited_frames_continue_and_the_others_keep_the_file_values():
    """Frames edited in place are computed from joints and continue from their neighbours by
    whole turns; every other frame keeps the file's values exactly. 01_01's root channel crosses
    -180 near frame 1135 (-180.01 between -179.6 and -179.7): the same rotations written as -q
    (new bytes, edited frames) must come back there, not as 179.99."""
    clip = bvh.load(DATA / "01_01.bvh")
    file_motion = clip.motion
    rotation = _bvh_format._rotation_columns(clip.channels)
    clip.joints["q"][1000:1300] *= -1  # the same rotations, other bytes
    clip.joints["q"][2000:2003, 5] = random_quats(np.random.default_rng(4), (3,))
    motion = clip.motion
    edited = np.zeros(clip.n_frames, bool)
    edited[1000:1300] = edited[2000:2003] = True
    np.testing.assert_array_equal(motion[~edited], file_motion[~edited])
    assert np.abs(file_motion[1135, rotation]).max() > 180
    np.testing.assert_allclose(motion[1000:1300], file_motion[1000:1300], rtol=0, atol=1e-4)
    steps = np.abs(np.diff(motion[:, rotation], axis=0))
    file_steps = np.abs(np.diff(file_motion[:, rotation], axis=0))
    np.testing.assert_array_less(steps[:1990], file_steps[:1990] + 1e-3)
    again, _ = reload(clip)
    assert_same_motion(again, clip)
    np.testing.assert_array_equal(again.motion, motion)


def test_rotations_from_joints_continue_by_whole_turns():
    """A hand-built clip turning through 180 degrees about Z writes 170 ... 190, not a jump to
    -170; a joint spinning many turns continues up to +-CONTINUED_ANGLE_MAX (float32 would lose
    precision far out) and takes a whole turn back at each frame that would reach it (90, 180,
    then -90, not 270: one jump a turn); both save and load back within 1e-6 rad."""
    angles = np.radians(np.linspace(170.0, 190.0, 41))
    spin = np.radians(np.linspace(0.0, 3600.0, 41))
    q = np.zeros((41, 2, 4), np.float32)
    q[:, 0, 2], q[:, 0, 3] = np.sin(angles / 2), np.cos(angles / 2)
    q[:, 1, 2], q[:, 1, 3] = np.sin(spin / 2), np.cos(spin / 2)
    channels = [("Zrotation", "Xrotation", "Yrotation")] * 2
    clip = bvh.Clip(names=["a", "b"], parents=[-1, 0], offsets=np.zeros((2, 3)), channels=channels,
                    frame_time=0.01, joints=jm.make_joints(q))
    motion = clip.motion
    np.testing.assert_allclose(motion[:, 0], np.linspace(170.0, 190.0, 41), rtol=0, atol=1e-4)
    assert np.abs(motion[:, 3]).max() < bvh.CONTINUED_ANGLE_MAX
    assert (np.abs(np.diff(motion[:, 3])) > 180).sum() == 10
    assert_same_motion(reload(clip)[0], clip)


def test_replaced_joints_save_the_file_curves():
    """01_01.bvh with its joints replaced by a copy (dataclasses.replace, so every frame is
    computed from the joints), saved and loaded: no rotation channel jumps by more than 180
    degrees between frames (the file has no such jump), the values stay within
    +-CONTINUED_ANGLE_MAX, the root's channels are the file's (its middle angle reaches -95.7
    near frame 2017, where quat_to_euler gives the other solution) and the rotations come back
    within 1e-6 rad, and so are every other joint's; frames from 2010 on edited in place continue
    the file's curves. Before,
    the root's continued curve left +-256 there, so its whole channel fell back to +-180
    values: 13 jumps of 360 degrees in Zrotation and in Xrotation."""
    clip = bvh.load(DATA / "01_01.bvh")
    back, _ = reload(dataclasses.replace(clip, joints=clip.joints.copy()))
    rotation = _bvh_format._rotation_columns(clip.channels)
    assert not (np.abs(np.diff(clip.motion[:, rotation], axis=0)) > 180).any()
    assert not (np.abs(np.diff(back.motion[:, rotation], axis=0)) > 180).any()
    assert np.abs(back.motion[:, rotation]).max() < bvh.CONTINUED_ANGLE_MAX
    assert clip.motion[:, 4].min() < -95
    # every rotation channel is the file's: the root's through its passage, and the joints whose
    # T-pose first frame lies more than EULER_JUMP from both solutions of the second keep
    # quat_to_euler's there (the nearer one was the other solution, kept for the whole clip)
    np.testing.assert_allclose(back.motion[:, rotation], clip.motion[:, rotation], rtol=0, atol=1e-3)
    assert_same_motion(back, clip)
    # edited in place from just before the root's middle angle passes -90 on: the file's curves
    file_motion = clip.motion
    clip.joints["q"][2010:] *= -1  # the same rotations, other bytes
    np.testing.assert_allclose(clip.motion, file_motion, rtol=0, atol=1e-3)


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_euler_curves_continue_through_the_other_solution(order):
    """A joint built from smooth Euler curves whose middle angle goes beyond -90 degrees (to -115
    and back), whose first angle crosses 180 and whose last goes to -230, and a second joint that
    turns about its first axis across 180 four times and then on to 270: the written curves
    are the ones they were built from (float32 precision near the lock: 0.045 degrees off -90 at
    worst), except the one whole turn back where the second reaches +CONTINUED_ANGLE_MAX; both
    save and load back within 1e-6 rad. Each intrinsic order (BVH's)."""
    t = np.arange(240) / 240
    smooth = np.stack([150 + 80 * t, -60 - 55 * np.sin(2 * np.pi * t), -170 + 60 * np.sin(3 * np.pi * t)], -1)
    turning = np.zeros((240, 3))
    turning[:, 0] = np.interp(t, [0, 0.2, 0.3, 0.4, 0.5, 1], [0, 200, 170, 200, 170, 270])
    q = ref.euler_to_quat(np.stack([smooth, turning], 1), order, degrees=True).astype(np.float32)
    channels = [tuple(f"{axis}rotation" for axis in order)] * 2
    clip = bvh.Clip(names=["a", "b"], parents=[-1, 0], offsets=np.zeros((2, 3)), channels=channels,
                    frame_time=0.01, joints=jm.make_joints(q))
    motion = clip.motion
    np.testing.assert_allclose(motion[:, :3], smooth, rtol=0, atol=2e-3)
    expected = np.where(turning >= bvh.CONTINUED_ANGLE_MAX, turning - 360, turning)
    np.testing.assert_allclose(motion[:, 3:], expected, rtol=0, atol=1e-3)
    assert_same_motion(reload(clip)[0], clip)


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
@pytest.mark.parametrize("lock", [90.0, -90.0])
def test_euler_curves_hold_a_gimbal_lock(order, lock):
    """A joint whose middle angle rises to exactly +-90 degrees, holds there and leaves again,
    the outer angles 30 and 40 all along: at lock quat_to_euler gives (70 or -10, +-90, 0), so the
    written curves stepped by 40 degrees in both outer channels entering and leaving the hold;
    now the third angle keeps its value from before the lock and the curves are the ones built
    (float32 next to the lock: within 0.05 degrees). Saves and loads back within 1e-6 rad."""
    middle = np.r_[np.linspace(lock - np.sign(lock) * 5, lock, 6), np.full(6, lock),
                   np.linspace(lock, lock - np.sign(lock) * 5, 6)]
    built = np.stack([np.full(18, 30.0), middle, np.full(18, 40.0)], -1)
    q = ref.euler_to_quat(built, order, degrees=True).astype(np.float32)[:, None]
    clip = bvh.Clip(names=["a"], parents=[-1], offsets=np.zeros((1, 3)),
                    channels=[tuple(f"{axis}rotation" for axis in order)], frame_time=1 / 30, joints=jm.make_joints(q))
    np.testing.assert_allclose(clip.motion, built, rtol=0, atol=0.05)
    assert_same_motion(reload(clip)[0], clip)


def test_continued_angles_stay_below_the_limit_as_written():
    """A joint spinning 7 degrees a frame: every written value below CONTINUED_ANGLE_MAX on every
    path (the check ran in float64, and 255.99999 was written as 256.0 on avx2 and avx512)."""
    spin = np.radians(7.0 * np.arange(400))
    q = np.zeros((400, 1, 4), np.float32)
    q[:, 0, 2], q[:, 0, 3] = np.sin(spin / 2), np.cos(spin / 2)
    clip = bvh.Clip(names=["a"], parents=[-1], offsets=np.zeros((1, 3)),
                    channels=[("Zrotation", "Xrotation", "Yrotation")], frame_time=0.01, joints=jm.make_joints(q))
    assert np.abs(clip.motion).max() < bvh.CONTINUED_ANGLE_MAX
    assert_same_motion(reload(clip)[0], clip)


def test_shortest_decimals_read_back_exactly():
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    values = np.concatenate([values[np.isfinite(values)], np.float32([-17, 0, -0.0, 1e-45, 3.4028235e38, 1e-5,
                                                                       123456789, 0.1, 1 / 3, 1e16, 1e15])])
    text = jm._core._format_motion(values.reshape(1, -1))
    tokens = text.split()
    back = np.array([nearest_float32(t) for t in tokens[::13]], np.float32)
    np.testing.assert_array_equal(back.view(np.uint32), values[::13].view(np.uint32))
    assert tokens[-11:-5] == [b"-17", b"0", b"-0", b"1e-45", b"3.4028235e+38", b"0.00001"]

    def significant(token):
        return len(token.lower().split(b"e")[0].lstrip(b"-").replace(b".", b"").strip(b"0"))

    # as short as NumPy's shortest repr (Dragon4) of every value
    for token, value in zip(tokens[::97], values[::97]):
        assert significant(token) <= significant(np.format_float_scientific(value, unique=True).encode())
    # and our reader gives them back exactly too
    read, frames, _, _ = jm._core._read_motion(text, 0, 1, len(values), 1)
    assert frames == 1
    np.testing.assert_array_equal(read[0].view(np.uint32), values.view(np.uint32))


def shortest_token(value):
    """The writer's token for a float32, from NumPy's shortest round-trip digits (Dragon4):
    positional from 1e-5 to below 1e16 ("-17", "0.00001"), else d.ddde+XX ("1e-45")."""
    mantissa, exponent = np.format_float_scientific(value, unique=True).split("e")
    sign = "-" if mantissa.startswith("-") else ""
    digits, leading = mantissa.lstrip("-").replace(".", "").rstrip("0"), int(exponent)
    if not digits:
        return sign + "0"
    if -5 <= leading < 16:
        if leading < 0:
            return sign + "0." + "0" * (-leading - 1) + digits
        whole, fraction = digits[: leading + 1].ljust(leading + 1, "0"), digits[leading + 1:]
        return sign + whole + ("." + fraction if fraction else "")
    return sign + digits[0] + ("." + digits[1:] if len(digits) > 1 else "") + f"e{exponent[0]}{abs(leading):02d}"


def writer_test_values():
    """1,000,000 random bit patterns and, at both signs, subnormals, every power of two and its
    two neighbours, -0.0 and the extremes; the finite ones."""
    bits = np.random.default_rng(20).integers(0, 2**32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    exponents = np.arange(0, 255, dtype=np.uint32) << 23
    special = np.concatenate([np.arange(0, 2**23, 4099, dtype=np.uint32), exponents, exponents[1:] - 1,
                              exponents + 1, np.uint32([0x80000000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001])])
    values = np.concatenate([bits, special, special | np.uint32(0x80000000)]).view(np.float32)
    return values[np.isfinite(values)]


def test_writer_output_is_byte_identical_to_the_earlier_writer():
    """The C writer's bytes (shortest decimals, layout) pinned by SHA-256 digests of what the
    writer at commit 3043a07 wrote for 01_01 and for writer_test_values(); the tokens are
    NumPy's shortest round-trip digits, except three powers of two (printf's nearest 8 digits
    lie in the narrower half of their rounding interval, so the writer takes 9)."""
    clip = bvh.load(DATA / "01_01.bvh")
    motion = jm._core._format_motion(np.ascontiguousarray(clip.motion))
    assert hashlib.sha256(motion).hexdigest() == "6942fdcd468e4b6937ea80595de548d07b6d0505d9615a1d81677d67af3528ce"
    values = writer_test_values()
    text = jm._core._format_motion(values.reshape(1, -1))
    assert hashlib.sha256(text).hexdigest() == "8b30e63a4d48e022842c176f2b4dda1764a919e1c01efe4eb8634ce64eb389b5"
    nine_digits = {0x0F800000: "1.26217745e-29", 0x6B000000: "1.54742505e+26", 0x6C800000: "1.23794004e+27"}
    tokens = text.split()
    for index in list(range(0, 1_000_000, 29)) + list(range(1_000_000, len(values))):
        value = values[index]
        expected = nine_digits.get(int(abs(value).view(np.uint32)))
        expected = ("-" if np.signbit(value) else "") + expected if expected else shortest_token(value)
        assert tokens[index] == expected.encode(), (index, value)


def test_reader_rounds_like_strtof():
    """Decimals next to float32 halfway points, long mantissas, exponents: correctly rounded."""
    rng = np.random.default_rng(3)
    f = rng.standard_normal(3000).astype(np.float32)
    up = np.nextafter(f, np.float32(np.inf))
    halfway = (f.astype(np.float64) + up.astype(np.float64)) / 2  # exact in float64
    texts = ([f"{h:.17g}" for h in halfway] + [f"{h:.25e}" for h in halfway[:1000]]
             + [f"{v:.6f}" for v in rng.uniform(-400, 400, 3000)] + ["0.000000000000000000000000123456789",
                                                                        "123456789012345678901234", "1e-46", "-.5e+3"])
    values, frames, _, _ = jm._core._read_motion(" ".join(texts).encode(), 0, 1, len(texts), 1)
    expected = np.array([nearest_float32(t) for t in texts], np.float32)
    np.testing.assert_array_equal(values[0].view(np.uint32), expected.view(np.uint32))


def test_packed_resampled_and_hand_built_clips_round_trip(isa, sample, tmp_path):
    # packed and unpacked (load_packed): used to fail on reload ("ends after 0 frames")
    result, packed, clip, _ = _job.process_clip(sample)
    unpacked = jm.load_packed(_packed.save_packed(clip, str(tmp_path / "c.npz"), packed=packed))
    assert_same_motion(reload(unpacked)[0], unpacked)
    resampled = bvh.resample(sample, 30)
    again = reload(resampled)[0]
    assert_same_motion(again, resampled)
    assert again.fps == pytest.approx(30)
    # by hand: a skeleton and joint records
    rng = np.random.default_rng(2)
    offsets = rng.uniform(-10, 10, (4, 3))
    joints = jm.make_joints(random_quats(rng, (5, 4)), np.broadcast_to(offsets, (5, 4, 3)).copy())
    jm.translations(joints)[:, 0] = rng.uniform(-100, 100, (5, 3))
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"),
                ("Xrotation", "Yrotation", "Zrotation"), ("Yrotation", "Zrotation", "Xrotation", "Zposition"), ()]
    jm.translations(joints)[:, 2, 2] += rng.uniform(-1, 1, 5).astype(np.float32)
    joints["q"][:, 3] = [0, 0, 0, 1]  # no rotation channels: identity
    hand = bvh.Clip(names=["root", "a", "b", "tip"], parents=[-1, 0, 1, 1], offsets=offsets, channels=channels,
                    frame_time=0.04, joints=joints, end_sites=[3], end_offsets=[[0, 1, 0]])
    again = reload(hand)[0]
    assert_same_motion(again, hand)
    assert again.names == hand.names and again.channels == hand.channels and again.orders == ["ZXY", "XYZ", "YZX", ""]


def test_save_refuses_what_bvh_cannot_hold(sample):
    broken = dataclasses.replace(sample, joints=sample.joints.copy())
    broken.joints["q"][7, 4] = np.nan
    with pytest.raises(ValueError, match=r"non-finite .* frame 7, joint 4 \('LeftFoot'\)"):
        bvh.save(broken, io.BytesIO())
    moved = dataclasses.replace(sample, joints=sample.joints.copy())
    jm.translations(moved.joints)[3, 5] += 1  # joint 5 has rotation channels only
    with pytest.raises(ValueError, match=r"joint 5 .* differs from its OFFSET in frame 3"):
        bvh.save(moved, io.BytesIO())
    # the same through a strided view of the records (every other frame: frame 3 is record 6)
    jm.translations(moved.joints)[6, 7] += np.float32(np.nan)
    strided = dataclasses.replace(sample, joints=moved.joints[::2])
    with pytest.raises(ValueError, match=r"joint 7 .* differs from its OFFSET in frame 3"):
        bvh.save(strided, io.BytesIO())
    with pytest.raises(TypeError, match="clip must be a jointmath.bvh.Clip"):
        bvh.save(sample.joints, io.BytesIO())
    with pytest.raises(TypeError, match="path_or_file must be a path or a file"):
        bvh.save(sample, 3)


def test_failed_save_keeps_the_file_it_would_replace(sample, tmp_path):
    """A save that fails while writing (here a file size limit, in a fresh process) leaves the
    earlier file whole and no temporary file; a clip whose frame time BVH cannot hold is refused
    before anything is written."""
    target = tmp_path / "clip.bvh"
    edited = dataclasses.replace(sample, joints=sample.joints[:3].copy())
    bvh.save(edited, target)
    before = target.read_bytes()
    script = (f"import resource\nfrom jointmath import bvh, data\n"
              f"resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.RLIM_INFINITY))\n"
              f"try:\n    bvh.save(bvh.load(data.sample_clip_path()), {str(target)!r})\n"
              f"except OSError as exc:\n    print('OSError', exc.errno)\n")
    done = run_python("-c", script)
    assert done.returncode == 0 and done.stdout.split() == ["OSError", str(errno.EFBIG)], done.stderr
    assert target.read_bytes() == before and os.listdir(tmp_path) == ["clip.bvh"]
    for frame_time in (3600.5, 1e4, 5e-7):
        with pytest.raises(ValueError, match="frame_time must be between 1e-06 and 3600 seconds"):
            bvh.save(dataclasses.replace(edited, frame_time=frame_time), target)
        assert target.read_bytes() == before and os.listdir(tmp_path) == ["clip.bvh"]
    slowest = dataclasses.replace(edited, frame_time=3600.0)
    bvh.save(slowest, target)
    assert bvh.load(target).frame_time == 3600.0


def test_save_refuses_a_rotation_without_rotation_channels():
    """A joint without rotation channels cannot hold a rotation in BVH: save refuses one that is
    not the identity (within 1e-6 rad, either sign, any scale) instead of dropping it."""
    joints = jm.make_joints(np.tile([0, 0, 0, 1], (3, 2, 1)), np.tile([[0, 0, 0], [0, 1, 0]], (3, 1, 1)))
    clip = bvh.Clip(names=["root", "tip"], parents=[-1, 0], offsets=[[0, 0, 0], [0, 1, 0]],
                    channels=[("Xposition", "Yposition", "Zposition"), ()], frame_time=0.1, joints=joints,
                    end_sites=[1], end_offsets=[[0, 1, 0]])
    for q in ([0, 0, 0, -2], [4e-7, 0, 0, 1], [0, 0, -4e-7, -1]):  # the identity: saved, reloaded as it
        edited = dataclasses.replace(clip, joints=joints.copy())
        edited.joints["q"][1:] = q
        again = reload(edited)[0]
        np.testing.assert_array_equal(again.joints["q"], np.tile([0, 0, 0, 1], (3, 2, 1)))
    for q in ([0, 0.6, 0, 0.8], [1e-6, 0, 0, 1], [0, 0, 0, 0], [np.nan, 0, 0, 1], [0, 0, 0, np.inf]):
        edited = dataclasses.replace(clip, joints=joints.copy())
        edited.joints["q"][2, 0] = q
        with pytest.raises(ValueError, match=r"joint 0 \('root'\) is not the identity rotation in frame 2 .* "
                                             r"no rotation channels"):
            bvh.save(edited, io.BytesIO())


NO_CHANNELS = """HIERARCHY
ROOT A
{
\tOFFSET 1 2 3
\tCHANNELS 0
\tJOINT B
\t{
\t\tOFFSET 0 1.5 0
\t\tCHANNELS 0
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 1 0
\t\t}
\t}
}
MOTION
Frames: 3
Frame Time: 0.5
"""


def test_clip_without_channels_saves_and_reloads(tmp_path):
    """No joint has a channel: each frame is a blank line, so save writes Frames: N and N blank
    lines and load gives the N frames back (it used to fail: "ends after 0 frames")."""
    clip = bvh.load(io.StringIO(NO_CHANNELS + "\n\n\n"))
    assert clip.joints.shape == (3, 2) and clip.motion.shape == (3, 0)
    np.testing.assert_array_equal(clip.joints["q"], np.tile(np.float32([0, 0, 0, 1]), (3, 2, 1)))
    np.testing.assert_array_equal(jm.translations(clip.joints), np.tile(np.float32([[1, 2, 3], [0, 1.5, 0]]), (3, 1, 1)))
    again, text = reload(clip)
    assert again == clip and text.endswith(b"MOTION\nFrames: 3\nFrame Time: 0.5\n\n\n\n")
    # built by hand, through a path; and no frames at all
    for n_frames in (4, 0):
        joints = jm.make_joints(np.tile(np.float32([0, 0, 0, 1]), (n_frames, 2, 1)),
                                np.tile(np.float32([[1, 2, 3], [0, 1.5, 0]]), (n_frames, 1, 1)))
        hand = bvh.Clip(names=["A", "B"], parents=[-1, 0], offsets=[[1, 2, 3], [0, 1.5, 0]], channels=[(), ()],
                        frame_time=0.5, joints=joints, name="hand")
        bvh.save(hand, tmp_path / "hand.bvh")
        assert bvh.load(tmp_path / "hand.bvh") == hand
    # fewer blank lines than frames is a truncation; a value in a frame line has no channel to go to
    with pytest.raises(ValueError, match=r":20: Frames: 3 but the file ends after 2 frames"):
        bvh.load(io.StringIO(NO_CHANNELS + "\n\n"))
    with pytest.raises(ValueError, match=r":21: a frame needs 0 values, got 1"):
        bvh.load(io.StringIO(NO_CHANNELS + "\n\n0\n"))
    # blank lines past the declared frames are ignored, without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bvh.load(io.StringIO(NO_CHANNELS + "\n" * 5)).n_frames == 3


def test_ten_thousand_deep_chain(tmp_path):
    depth = 10_000
    joints = jm.make_joints(np.tile([0, 0, 0, 1], (2, depth, 1)), np.tile([0, 1.0, 0], (2, depth, 1)))
    chain = bvh.Clip(names=[f"j{i}" for i in range(depth)], parents=np.arange(-1, depth - 1),
                     offsets=np.tile([0, 1.0, 0], (depth, 1)), channels=[("Zrotation", "Xrotation", "Yrotation")] * depth,
                     frame_time=1 / 30, joints=joints, end_sites=[depth - 1], end_offsets=[[0, 1, 0]])
    path = tmp_path / "chain.bvh"
    bvh.save(chain, path)
    assert path.stat().st_size < 3_000_000  # indentation stops growing at MAX_INDENT
    again = bvh.load(path)
    assert again.n_joints == depth and (again.parents == chain.parents).all()
    assert again.height() == pytest.approx(depth + 1 - 1)  # root at y = 1 ... tip at depth + 1
    assert again.positions()[1, -1, 1] == pytest.approx(depth + 1)


def test_equality_repr_and_html(sample):
    clip = bvh.load(jm.data.sample_clip_path())
    assert clip == clip and clip == bvh.load(jm.data.sample_clip_path())
    assert clip != dataclasses.replace(clip, frame_time=0.5)
    changed = dataclasses.replace(clip, joints=clip.joints.copy())
    changed.joints["q"][0, 0] *= -1
    assert changed != clip and clip != "clip"
    with pytest.raises(TypeError, match="unhashable"):
        hash(clip)
    text = repr(clip)
    assert "\n" not in text and len(text) < 120
    assert text == "<Clip 'sample_01_01': 31 joints, 381 frames at 120 fps, 3.16665 s>"
    page = clip._repr_html_()
    assert page.count("<tr>") == 1 + clip.n_joints
    assert "<td>ZYX</td>" in page and "Xposition Yposition Zposition Zrotation Yrotation Xrotation" in page
    assert "381 frames" in page and "120 fps" in page and "3.16665 s" in page


def test_world_positions_and_height(isa, sample):
    world = sample.world()
    expected = ref.forward_kinematics(sample.joints, sample.parents)["m"]
    assert world.dtype == jm.JOINT_MAT and world.shape == sample.joints.shape
    np.testing.assert_allclose(world["m"], expected, atol=1e-3)
    positions = sample.positions()
    n_ends = len(sample.end_sites)
    assert positions.shape == (sample.n_frames, sample.n_joints + n_ends, 3) and n_ends == 7
    np.testing.assert_allclose(positions[:, :sample.n_joints], expected[..., 3], atol=1e-3)
    tips = np.einsum("fejk,ek->fej", expected[:, sample.end_sites, :, :3], sample.end_offsets) \
        + expected[:, sample.end_sites][..., 3]
    np.testing.assert_allclose(positions[:, sample.n_joints:], tips, atol=1e-3)
    assert sample.positions(end_sites=False).shape == (sample.n_frames, sample.n_joints, 3)
    # rest pose: CMU skeletons are about 30 units tall (head tip to toe tips)
    rest = sample.rest_positions()
    assert sample.height() == pytest.approx(rest[:, 1].max() - rest[:, 1].min())
    assert 25 < sample.height() < 40
    with pytest.raises(ValueError, match="axis must be 0, 1 or 2"):
        sample.height(3)
    for axis in (True, 1.0, np.array(True), np.array([1])):  # True indexed as a mask: the extent over all axes
        with pytest.raises(TypeError, match=r"axis must be an int, 0, 1 or 2 \(X, Y or Z\), got (bool|float|ndarray)"):
            sample.height(axis)
    for axis in (np.int64(1), np.array(1, np.uint8), np.array(1, ">i4")):  # NumPy integers as ints
        assert sample.height(axis) == sample.height()
    for axis in (np.ma.array(1), np.ma.array(1, mask=True)):  # masked: refused, as every argument
        with pytest.raises(TypeError, match="axis must not be a masked array"):
            sample.height(axis)


def test_clip_checks_its_fields(sample):
    with pytest.raises(ValueError, match=r"joints must have shape \(frames, 31\)"):
        dataclasses.replace(sample, joints=sample.joints[:, :3])
    with pytest.raises(TypeError, match="joints must be a numpy array of dtype jointmath.JOINT_QUAT"):
        dataclasses.replace(sample, joints=np.zeros((3, 31, 8), np.float32))
    with pytest.raises(ValueError, match=r"channels of joint 0 \('Hips'\): unknown channel 'Wrotation'"):
        dataclasses.replace(sample, channels=[("Wrotation",)] + sample.channels[1:])
    with pytest.raises(ValueError, match="frame_time must be a positive number"):
        dataclasses.replace(sample, frame_time=0)


def test_fields_assigned_after_construction_are_checked_where_used(sample):
    """The methods that compute from the skeleton check its fields as Clip() does: an End Site
    assigned -1 was read as the last joint by positions(), parents or offsets assigned as lists
    broke height() and motion with AttributeError. frame_time takes any real number of seconds,
    as resample's fps does (a Fraction or a 0-d array was refused)."""
    clip = dataclasses.replace(sample, joints=sample.joints[:4].copy())
    before = clip.positions(), clip.height(), clip.motion
    clip.parents, clip.offsets = clip.parents.tolist(), clip.offsets.tolist()
    np.testing.assert_array_equal(clip.positions(), before[0])
    assert clip.height() == before[1]
    np.testing.assert_array_equal(clip.motion, before[2])
    clip.end_sites = clip.end_sites.copy()
    clip.end_sites[0] = -1
    for method in (clip.positions, clip.rest_positions, clip.height):
        with pytest.raises(ValueError, match="end_sites must be joint indices"):
            method()
    clip.end_sites = sample.end_sites
    clip.parents = np.arange(31) + 1
    for method in (clip.world, clip.positions, clip.height):
        with pytest.raises(ValueError, match="parents must list parents before children"):
            method()
    for seconds in (Fraction(1, 30), np.array(1 / 30), np.float32(1 / 30)):
        assert dataclasses.replace(sample, frame_time=seconds).frame_time == float(seconds)
    with pytest.raises(ValueError, match="frame_time must be a positive number of seconds"):
        dataclasses.replace(sample, frame_time=10**400)  # was OverflowError
    with pytest.raises(TypeError, match="frame_time must be a real number of seconds, got timedelta64"):
        dataclasses.replace(sample, frame_time=np.timedelta64(1, "s"))
    # tuples where arrays were stored, frames of another shape, a negative frame time
    clip.parents, clip.offsets, clip.end_sites = tuple(sample.parents), tuple(map(tuple, sample.offsets)), \
        tuple(sample.end_sites)
    assert bvh.resample(clip, 60).n_frames == 2 and clip.parents == tuple(sample.parents)
    clip.joints = sample.joints[0]
    for method in (lambda: clip.motion, clip.positions, clip.world, lambda: bvh.resample(clip, 60)):
        with pytest.raises(ValueError, match=r"joints must have shape \(frames, 31\), got shape \(31,\)"):
            method()
    clip.joints, clip.frame_time = sample.joints[:4], -0.5
    for method in (lambda: clip.fps, lambda: clip.duration, lambda: repr(clip), lambda: bvh.resample(clip, 60)):
        with pytest.raises(ValueError, match="frame_time must be a positive number of seconds, got -0.5"):
            method()


def test_translations_accessor(isa):
    joints = np.zeros((4, 3), jm.JOINT_QUAT)
    xyz = np.arange(36, dtype=np.float32).reshape(4, 3, 3)
    jm.translations(joints)[:] = xyz
    np.testing.assert_array_equal(joints["t"][..., :3], xyz)
    np.testing.assert_array_equal(joints["t"][..., 3], 0)
    np.testing.assert_array_equal(jm.translations(joints), xyz)
    assert jm.translations(joints).shape == (4, 3, 3)
    with pytest.raises(TypeError, match="joints must be a numpy array of dtype jointmath.JOINT_QUAT"):
        jm.translations(xyz)


def breadth_first_clip(rng):
    """Hips with two legs listed breadth-first (a valid Clip: parents before children, but not
    the depth-first order a BVH file nests them in), each joint turned differently."""
    names = ["Hips", "LeftUpLeg", "RightUpLeg", "LeftLeg", "RightLeg"]
    offsets = [[0, 0, 0], [1, -2, 0], [-1, -2, 0], [0, -2, 0], [0, -2, 0]]
    joints = jm.make_joints(random_quats(rng, (4, 5)), np.broadcast_to(offsets, (4, 5, 3)).copy())
    jm.translations(joints)[:, 0] = rng.uniform(-5, 5, (4, 3))
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")] + [
        ("Zrotation", "Xrotation", "Yrotation")] * 4
    return bvh.Clip(names=names, parents=[-1, 0, 0, 1, 2], offsets=offsets, channels=channels, frame_time=0.04,
                    joints=joints, end_sites=[4, 3, 0], end_offsets=[[0, -1, 0], [0, -1.5, 0], [0, 3, 0]])


def test_a_clip_in_another_order_saves_each_joint_with_its_own_motion():
    """A clip whose joints are not in depth-first order (breadth-first here, as converters from
    other formats list them; or several roots) is written depth-first with every joint's
    channel values under it: before, the motion columns stayed in the clip's order under the
    depth-first hierarchy (RightUpLeg's rotation loaded as LeftLeg's)."""
    clip = breadth_first_clip(np.random.default_rng(11))
    again, text = reload(clip)
    assert again.names == ["Hips", "LeftUpLeg", "LeftLeg", "RightUpLeg", "RightLeg"]
    order = [0, 1, 3, 2, 4]
    assert again.parents.tolist() == [-1, 0, 1, 0, 3]
    assert np.array_equal(again.offsets, clip.offsets[order])
    assert ref.angle_between(again.joints["q"], clip.joints["q"][:, order]).max() < 1e-6
    assert np.array_equal(again.joints["t"], clip.joints["t"][:, order])
    # the world positions of every joint and End Site tip are the clip's, in the file's order
    tip_of = {clip.names[j]: k for k, j in enumerate(clip.end_sites.tolist())}  # one End Site per joint here
    end_order = [tip_of[again.names[j]] for j in again.end_sites.tolist()]
    assert sorted(end_order) == [0, 1, 2]
    assert np.allclose(again.positions(), clip.positions()[:, order + [5 + k for k in end_order]], atol=1e-5)
    # two roots, the second one's child listed before the first one's
    rng = np.random.default_rng(12)
    joints = jm.make_joints(random_quats(rng, (3, 3)), np.zeros((3, 3, 3)))
    two = bvh.Clip(names=["A", "B", "A1"], parents=[-1, -1, 0], offsets=np.zeros((3, 3)),
                   channels=[("Zrotation", "Xrotation", "Yrotation")] * 3, frame_time=0.1, joints=joints)
    again = reload(two)[0]
    assert again.names == ["A", "A1", "B"]
    assert ref.angle_between(again.joints["q"], joints["q"][:, [0, 2, 1]]).max() < 1e-6


def test_translation_on_an_axis_without_a_position_channel_is_refused(sample):
    """A joint with some position channels keeps its OFFSET on the other axes: an edit there was
    dropped on save (Y edited by 10 on a joint with only Xposition, saved, reloaded unchanged).
    Any edit beyond 1e-6 of the largest OFFSET is refused now, also below the 1e-5 it was."""
    channels = [("Xposition", "Zrotation", "Xrotation", "Yrotation")] + sample.channels[1:]
    clip = dataclasses.replace(sample, channels=channels, joints=sample.joints[:4].copy())
    jm.translations(clip.joints)[:, 0, 1] = sample.offsets[0, 1]
    jm.translations(clip.joints)[:, 0, 2] = sample.offsets[0, 2]
    jm.translations(clip.joints)[:, 0, 0] += 3  # on the axis it has: saved
    again = reload(clip)[0]
    assert np.array_equal(again.joints["t"], clip.joints["t"])
    jm.translations(clip.joints)[2, 0, 1] += 10
    with pytest.raises(ValueError, match=r"joint 0 \('Hips'\) differs from its OFFSET in frame 2 .* give the "
                                         r"joint Yposition Zposition"):
        bvh.save(clip, io.BytesIO())
    scale = np.abs(sample.offsets).max()
    small = dataclasses.replace(sample, joints=sample.joints[:2].copy())
    jm.translations(small.joints)[1, 5, 0] += np.float32(3e-6 * scale)  # joint 5 has no position channel
    with pytest.raises(ValueError, match=r"joint 5 .* differs from its OFFSET in frame 1"):
        bvh.save(small, io.BytesIO())


@pytest.mark.parametrize("name", ["", " Hips", "Hips ", "Spine  2", "Spine\tL", "left\nknee", "a\rb", "x\x0by"])
def test_names_bvh_cannot_hold_are_refused(sample, name, tmp_path):
    """A name that would not read back as itself was written anyway: an empty one or one with a
    line break made a file load() refuses (replacing a good one), others came back changed."""
    target = tmp_path / "clip.bvh"
    bvh.save(sample, target)
    before = target.read_bytes()
    renamed = dataclasses.replace(sample, names=sample.names[:3] + [name] + sample.names[4:])
    with pytest.raises(ValueError, match=r"clip.names\[3\] = .* cannot be written as BVH"):
        bvh.save(renamed, target)
    assert target.read_bytes() == before


@pytest.mark.parametrize("name", ["Spi\xa0ne", "x\u2028y", "Ζ σπονδυλική", "a {", "End"])
def test_names_round_trip_as_they_are(sample, name):
    """Words are split at ASCII whitespace only: a no-break space or another Unicode space in a
    name stays (before, str.split() turned 'Spi\\xa0ne' into 'Spi ne' on load)."""
    renamed = dataclasses.replace(sample, names=sample.names[:3] + [name] + sample.names[4:])
    assert reload(renamed)[0].names == renamed.names


def test_save_checks_fields_assigned_after_construction(sample):
    """Assigning a field skips Clip's checks: save checks them again. A NumPy frame_time was
    written as 'np.float64(0.016666666666666666)' (a file load() refuses), True was taken as 1 s."""
    clip = dataclasses.replace(sample, joints=sample.joints[:3].copy())
    clip.frame_time = np.float64(1) / 60
    again, text = reload(clip)
    assert b"Frame Time: 0.016666666666666666\n" in text and again.frame_time == 1 / 60
    clip.frame_time = "0.1"
    with pytest.raises(TypeError, match="frame_time must be a real number of seconds, got str"):
        bvh.save(clip, io.BytesIO())
    with pytest.raises(TypeError, match="frame_time must be a real number of seconds, got bool"):
        dataclasses.replace(sample, frame_time=True)
    with pytest.raises(ValueError, match="names must list at least one joint"):
        bvh.Clip(names=[], parents=[], offsets=np.zeros((0, 3)), channels=[], frame_time=0.1,
                 joints=np.zeros((2, 0), jm.JOINT_QUAT))
    with pytest.raises(ValueError, match="offsets must be finite"):
        dataclasses.replace(sample, offsets=np.where(np.arange(31)[:, None] == 3, np.nan, sample.offsets))
    with pytest.raises(ValueError, match="end_sites must be a 1-D array of joint indices"):
        dataclasses.replace(sample, end_sites=sample.end_sites[:, None])


def test_editing_a_loaded_clip_s_channels(sample):
    """Adding the position channels that save asked for (or dropping the root's) made motion and
    save fail ('motion must have one column per channel (99), got shape (381, 96)'): the file's
    values kept for unedited frames were read with the new channels."""
    clip = bvh.load(jm.data.sample_clip_path())
    jm.translations(clip.joints)[:, 1] += [0, .5, 0]
    clip.channels[1] = ("Xposition", "Yposition", "Zposition") + clip.channels[1]
    again = reload(clip)[0]
    assert np.allclose(again.joints["t"], clip.joints["t"], atol=1e-5)
    assert ref.angle_between(again.joints["q"], clip.joints["q"]).max() < 1e-6
    clip = bvh.load(jm.data.sample_clip_path())
    clip.channels[0] = ("Zrotation", "Xrotation", "Yrotation")
    jm.translations(clip.joints)[:, 0] = clip.offsets[0]
    assert clip.motion.shape == (clip.n_frames, 93)
    assert ref.angle_between(reload(clip)[0].joints["q"], clip.joints["q"]).max() < 1e-6


def test_resample_copies_the_skeleton(sample):
    before = dataclasses.replace(sample, offsets=sample.offsets.copy(), names=list(sample.names))
    low = bvh.resample(sample, 30)
    low.offsets *= 2.54
    low.end_offsets *= 2.54
    low.names[0] = "Root"
    low.parents[1] = -1
    assert sample == before and not np.array_equal(low.offsets, sample.offsets)


def test_joints_from_motion_checks_its_arguments():
    zxy = ("Zrotation", "Xrotation", "Yrotation")
    good = bvh.joints_from_motion(np.zeros((2, 3)), np.zeros((1, 3)), [zxy])
    assert good.shape == (2, 1) and np.array_equal(good["q"], np.tile([0, 0, 0, 1], (2, 1, 1)))
    for motion, offsets, channels, kind, message in [
            (np.zeros((2, 3)), np.zeros((1, 3)), [("Zrot", "X", "Y")], ValueError, r"channels\[0\]: unknown channel"),
            (np.zeros((2, 2)), np.zeros((1, 3)), [zxy[:2]], ValueError, "0 or 3 rotation channels, got 2"),
            (np.zeros((2, 3)), np.zeros((1, 3)), [zxy[:2] + zxy[:1]], ValueError, "appears twice"),
            (np.zeros((2, 3)), np.zeros((1, 3)), ["Zrotation Xrotation Yrotation"], TypeError,
             r"channels\[0\] must be a sequence of channel names"),
            (np.zeros((2, 3)), np.zeros((1, 3)), "ZXY", TypeError, "channels must be a sequence"),
            (np.zeros(3), np.zeros((1, 3)), [zxy], ValueError, r"motion must be a 2-D array, got shape \(3,\)"),
            ([["1", "2", "3"]], np.zeros((1, 3)), [zxy], TypeError, "motion must hold real numbers"),
            (np.zeros((2, 3), complex), np.zeros((1, 3)), [zxy], TypeError, "motion must hold real numbers"),
            (np.zeros((2, 4)), np.zeros((1, 3)), [zxy], ValueError, "motion must have one column per channel"),
            (np.zeros((2, 3)), np.zeros((2, 3)), [zxy], ValueError, r"offsets must have shape \(1, 3\)")]:
        with pytest.raises(kind, match=message):
            bvh.joints_from_motion(motion, offsets, channels)


def test_a_replaced_file_keeps_its_permissions(sample, tmp_path):
    target = tmp_path / "private.bvh"
    target.write_text("old")
    os.chmod(target, 0o600)
    loaded = bvh.load(jm.data.sample_clip_path())  # on this test's path (the module's sample may come from another)
    bvh.save(loaded, target)
    assert (os.stat(target).st_mode & 0o777) == 0o600 and bvh.load(target) == dataclasses.replace(loaded, name="private")
    missing = tmp_path / "missing" / "clip.bvh"
    with pytest.raises(FileNotFoundError, match=rf"the folder to write {re.escape(str(missing))} in\): "
                                                rf"'{re.escape(str(missing.parent))}'"):  # not created; not the .tmp
        bvh.save(sample, missing)
    assert os.listdir(tmp_path) == ["private.bvh"]


def test_save_refuses_offsets_and_names_load_would_refuse(sample, tmp_path):
    """An OFFSET beyond float32 (1e39: a finite float64 the Clip holds) and a name with a NUL or a
    lone surrogate were written over a good file, which load() then refused."""
    target = tmp_path / "walk.bvh"
    bvh.save(sample, target)
    before = target.read_bytes()
    for changed, message in [
            ({"end_offsets": np.full_like(sample.end_offsets, 1e39)}, r"clip.end_offsets\[0\] .*End Site 0 of joint"),
            ({"offsets": np.where(np.arange(31)[:, None] == 7, -1e39, sample.offsets)},
             r"clip.offsets\[7\] .*joint 7 .* beyond float32's range"),
            ({"names": sample.names[:2] + ["a\x00b"] + sample.names[3:]}, r"clip.names\[2\]"),
            ({"names": sample.names[:2] + ["a\udc80"] + sample.names[3:]}, r"clip.names\[2\]")]:
        with pytest.raises(ValueError, match=message):
            bvh.save(dataclasses.replace(sample, **changed), target)
        assert target.read_bytes() == before
    largest = dataclasses.replace(sample, end_offsets=np.full_like(sample.end_offsets, 3.4028234e38))
    assert np.array_equal(reload(largest)[0].end_offsets, largest.end_offsets)  # FLT_MAX itself is fine


def test_clip_refuses_fields_it_would_misread(sample):
    """uint64 parents beyond int64 wrapped to -1 (a root); None or a string as names, complex or
    text offsets and masked arrays were taken; channels of the wrong kind gave bare TypeErrors."""
    parents = np.array([2**64 - 1] + list(range(30)), np.uint64)
    for changed, kind, message in [
            ({"parents": parents}, ValueError, r"parents\[0\] = 18446744073709551615"),
            ({"names": [None] * 31}, TypeError, r"names\[0\] must be a str, got NoneType"),
            ({"names": "a" * 31}, TypeError, "names must be a sequence of str"),
            ({"names": 5}, TypeError, "names must be a sequence of str"),
            ({"channels": None}, TypeError, "channels must be a sequence of channel-name tuples"),
            ({"channels": [5] * 31}, TypeError, r"channels\[0\] must be a sequence of channel names"),
            ({"offsets": sample.offsets.astype(complex)}, TypeError, "offsets must hold real numbers"),
            ({"offsets": sample.offsets.astype(str)}, TypeError, "offsets must hold real numbers"),
            ({"joints": np.ma.masked_array(sample.joints)}, TypeError, "joints must not be a masked array"),
            ({"offsets": np.ma.masked_invalid(sample.offsets)}, TypeError, "offsets must not be a masked array")]:
        with pytest.raises(kind, match=message):
            dataclasses.replace(sample, **changed)
    with pytest.raises(TypeError, match="motion must not be a masked array"):
        bvh.joints_from_motion(np.ma.masked_array(np.zeros((1, 3)), [[0, 1, 0]]), np.zeros((1, 3)),
                               [("Zrotation", "Xrotation", "Yrotation")])
    assert dataclasses.replace(sample, names=np.array(sample.names)).names == sample.names  # str arrays are fine


def test_clip_knows_its_end_effectors_bare_leaves_and_height(sample):
    """End Site tips first (a joint with two numbers them), then the leaf joints without an End
    Site; their columns among positions(); the height along Y, or the larger extent when the
    skeleton lies flat."""
    leaves = [j for j in range(sample.n_joints) if j not in set(sample.parents.tolist())]
    assert sample.bare_leaves == [] and sorted(sample.end_sites.tolist()) == leaves
    assert sample.end_effectors == [sample.names[j] + " End Site" for j in sample.end_sites]
    np.testing.assert_array_equal(sample.end_effector_columns,
                                  np.arange(sample.n_joints, sample.n_joints + len(sample.end_sites)))
    assert sample.skeleton_height() == sample.height() > 0
    bare = dataclasses.replace(sample, end_sites=[], end_offsets=np.zeros((0, 3)))
    assert bare.bare_leaves == leaves and bare.end_effectors == [sample.names[j] for j in leaves]
    assert bare.end_effector_columns.tolist() == leaves
    head = sample.names.index("Head")
    two = dataclasses.replace(sample, end_sites=[head, head], end_offsets=[[0, 2, 0], [1, 0, 0]])
    assert two.end_effectors[:2] == ["Head End Site", "Head End Site 2"]
    assert two.end_effector_columns.tolist() == [sample.n_joints, sample.n_joints + 1] + [j for j in leaves if j != head]
    assert two.positions()[:, two.end_effector_columns].shape == (sample.n_frames, len(two.end_effectors), 3)
    flat = dataclasses.replace(sample, offsets=sample.offsets * [1, 0, 1], end_offsets=sample.end_offsets * [1, 0, 1])
    assert flat.height() == 0 and flat.skeleton_height() == max(flat.height(0), flat.height(2)) > 0
    edited = dataclasses.replace(sample)  # a field assigned since construction is checked before use
    edited.end_sites, edited.end_offsets = np.array([-1]), np.zeros((1, 3))
    with pytest.raises(ValueError, match="end_sites must be joint indices"):
        edited.end_effectors


def test_resample_clip_saves_and_reloads(tmp_path):
    clip = bvh.load(DATA / "01_01.bvh")
    for fps in (30, 100, 240):
        new = bvh.resample(clip, fps)
        assert new.frame_time == 1 / fps
        assert new.n_frames == int(np.floor((clip.n_frames - 1) * clip.frame_time * fps + 1e-9)) + 1
        bvh.save(new, tmp_path / "r.bvh")
        again = bvh.load(tmp_path / "r.bvh")
        assert ref.angle_between(again.joints["q"], new.joints["q"]).max() < 2e-6
        np.testing.assert_allclose(again.joints["t"], new.joints["t"], atol=1e-4)
