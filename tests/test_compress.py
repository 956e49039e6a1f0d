"""Compressed clips (jointmath.compress): the certified error bound against an independent float64
oracle, the same bytes on every ISA path, the container's round trips, argument errors and a
mutation fuzz of the bytes."""
import hashlib
import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import jointmath as jm
from jointmath import bvh

from codec_clips import clip_01_01, compressed_01_01, errors_of, synthetic_clip  # noqa: F401

# SHA-256 of tests/data/01_01.bvh's joints as bvh.load gives them on the scalar path, and of
# jm.compress(that clip).tobytes() at the defaults: the encoder's decisions are integer and
# correctly rounded float64 arithmetic only, so every machine must give these bytes
GOLDEN_01_01_INPUT = "7088cba91d6c0a13ee11dba13803d1a88a92ac4a6647fb36bdaac0581266f940"
GOLDEN_01_01 = "2408e7efdfc5e60e27d5db923535d61ea535e89f38636ec26d8a21ec335ccfa4"


def test_certified_on_01_01(compressed_01_01, clip_01_01):
    c, decoded = compressed_01_01
    errors = errors_of(clip_01_01, decoded, c.shell)
    assert errors.max() <= c.error * (1 + 1e-9)
    assert abs(errors.max() - c.stats.max_error) <= 1e-9 * c.error + 1e-7 * c.stats.max_error
    assert np.allclose(errors.max(axis=0), c.stats.joint_max_error, rtol=1e-6, atol=1e-12)
    assert c.stats.p99_error <= c.stats.max_error
    h = clip_01_01.skeleton_height()
    assert c.error == pytest.approx(0.01 * h / 170) and c.shell == pytest.approx(3 * h / 170)
    assert c.stats.bytes_per_joint_sample == c.nbytes / (c.num_frames * c.num_joints)


def test_01_01_at_24_fps_is_certified_and_small(clip_01_01):
    clip = bvh.resample(clip_01_01, 24)
    c = jm.compress(clip)
    assert errors_of(clip, jm.decompress(c).joints, c.shell).max() <= c.error * (1 + 1e-9)
    assert c.nbytes < 60_857  # ACL's default output for this clip (docs/families/compression.md)


@pytest.mark.parametrize("seed,spin", [(0, False), (1, True), (2, False)])
@pytest.mark.parametrize("error", [1e-2, 1e-4])
def test_certified_on_synthetic_clips(seed, spin, error):
    clip = synthetic_clip(n_frames=40 + 7 * seed, n_joints=4 + 3 * seed, seed=seed, spin=spin)
    c = jm.compress(clip, error=error, shell=2.0)
    decoded = jm.decompress(c)
    assert errors_of(clip, decoded.joints, 2.0).max() <= error * (1 + 1e-9)
    assert decoded.names == clip.names and decoded.channels == clip.channels
    assert decoded.frame_time == clip.frame_time and np.array_equal(decoded.offsets, clip.offsets)
    assert np.array_equal(decoded.parents, clip.parents) and np.array_equal(decoded.end_sites, clip.end_sites)


def test_one_frame_and_constant_clips():
    clip = synthetic_clip(n_frames=1)
    c = jm.compress(clip, error=1e-3, shell=1.0)
    assert np.array_equal(jm.decompress(c).joints, clip.joints)  # constant tracks are exact
    assert c.sample(3.0).shape == (clip.n_joints,)


def _run(code, isa, *args):
    # the interpreter imports the jointmath under test (an installed wheel or an in-place build),
    # not the unbuilt folder of the checkout it runs in (-P: no current folder on sys.path)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(jm.__file__)))
    env = dict(os.environ, JOINTMATH_ISA=isa, PYTHONPATH=package_root)
    out = subprocess.run([sys.executable, "-P", "-c", code, *args], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_the_compressed_bytes_are_golden():
    """01_01 loaded on the scalar path (its Euler angles converted by the scalar kernels: the
    input's digest is checked first, so that a difference in loading is told apart from one in
    the encoder), compressed at the defaults: the bytes every machine must give."""
    path = os.path.join(os.path.dirname(__file__), "data", "01_01.bvh")
    code = ("import hashlib, sys, jointmath as jm; from jointmath import bvh; clip = bvh.load(sys.argv[1]); "
            "print(hashlib.sha256(clip.joints.tobytes()).hexdigest(), hashlib.sha256(jm.compress(clip).tobytes()).hexdigest())")
    loaded, compressed = _run(code, "scalar", path)
    assert loaded == GOLDEN_01_01_INPUT, "the clip loads differently here (bvh.load), not the encoder"
    assert compressed == GOLDEN_01_01


def test_the_same_bytes_on_every_path(clip_01_01, tmp_path):
    """The same clip (made once, on this path) compressed on every path: the same bytes."""
    import pickle
    clip = bvh.resample(clip_01_01, 24)
    path = tmp_path / "clip.pickle"
    path.write_bytes(pickle.dumps(clip))
    code = ("import hashlib, pickle, sys, jointmath as jm; clip = pickle.load(open(sys.argv[1], 'rb')); "
            "print(jm.isa(), hashlib.sha256(jm.compress(clip).tobytes()).hexdigest())")
    digests = set()
    for isa in jm.available_isas():
        name, digest = _run(code, isa, str(path))
        assert name == isa
        digests.add(digest)
    digests.add(hashlib.sha256(jm.compress(clip).tobytes()).hexdigest())
    assert len(digests) == 1


def test_decompress_gives_clips_of_their_own(compressed_01_01):
    """Each decompress() decodes anew: a clip edited in place (frames, names, skeleton arrays)
    changes neither the next clip nor the compressed clip's samples."""
    c, reference = compressed_01_01
    first = jm.decompress(c)
    first.joints["q"][:] = 0
    first.names[0] = "edited"
    first.offsets[:] = 0
    first.parents[1:] = 0
    second = jm.decompress(c)
    assert second.joints.tobytes() == reference.tobytes() and second.joints is not first.joints
    assert second.names[0] == "Hips" and np.abs(second.offsets).max() > 0
    assert np.array_equal(second.parents, c._skeleton.parents)
    assert np.array_equal(c.sample(0.0), reference[0])


def test_round_trips(compressed_01_01, tmp_path):
    c, decoded = compressed_01_01
    b = c.tobytes()
    assert len(b) == c.nbytes
    again = jm.CompressedClip.frombytes(bytearray(b))
    assert again.tobytes() == b and again.names == c.names and again.num_frames == c.num_frames
    assert again.stats.max_error == c.stats.max_error and again.stats.bit_rates == c.stats.bit_rates
    assert np.array_equal(again.stats.joint_max_error, c.stats.joint_max_error)
    path = tmp_path / "walk.jmc"
    c.save(path)
    assert os.listdir(tmp_path) == ["walk.jmc"]
    loaded = jm.load_compressed(path)
    assert loaded.tobytes() == b
    assert np.array_equal(jm.decompress(loaded).joints, decoded)
    back = jm.decompress(loaded)
    assert back.frame_time == c.frame_time and back.names == c.names


def test_save_leaves_nothing_behind_on_error(compressed_01_01, tmp_path):
    c = compressed_01_01[0]
    target = tmp_path / "folder"
    target.mkdir()  # os.replace cannot put a file over a folder
    with pytest.raises(OSError):
        c.save(target)
    assert os.listdir(tmp_path) == ["folder"] and os.listdir(target) == []


def test_argument_errors(clip_01_01):
    with pytest.raises(TypeError, match="clip"):
        jm.compress(clip_01_01.joints)
    for name in ("error", "shell"):
        for bad in (0, -1.0, float("nan"), float("inf")):
            with pytest.raises(ValueError, match=name):
                jm.compress(clip_01_01, **{name: bad})
        with pytest.raises(TypeError, match=name):
            jm.compress(clip_01_01, **{name: "1"})
    with pytest.raises(TypeError, match="c must be"):
        jm.decompress(clip_01_01)
    with pytest.raises(TypeError, match="CompressedClip is made by"):
        jm.CompressedClip()
    with pytest.raises(TypeError, match="bytes-like"):
        jm.CompressedClip.frombytes(3)


@pytest.mark.parametrize("field,value", [("q", np.nan), ("t", np.inf)])
def test_non_finite_clips_are_refused_naming_joint_and_frame(field, value):
    clip = synthetic_clip()
    clip.joints[field][17, 3, 1] = value
    with pytest.raises(ValueError, match=r"joint 3 \('j3'\), frame 17"):
        jm.compress(clip, error=1e-3, shell=1.0)


def test_zero_quaternions_are_refused_naming_joint_and_frame():
    clip = synthetic_clip()
    clip.joints["q"][9, 2] = 0
    with pytest.raises(ValueError, match=r"zero quaternion .*joint 2 \('j2'\), frame 9"):
        jm.compress(clip, error=1e-3, shell=1.0)


def test_the_error_measure_counts_nan_as_failing(clip_01_01):
    """A decoded NaN must never certify (a comparison with NaN is false)."""
    from jointmath import _core
    joints = np.ascontiguousarray(clip_01_01.joints[:3])
    bad = joints.copy()
    bad["q"][1, 4] = np.nan
    errors = _core._codec_errors(joints, bad, clip_01_01.parents, 1.0)
    assert np.isnan(errors[1, 4]) and not errors.max() <= 1.0


def test_sample_errors(compressed_01_01):
    c = compressed_01_01[0]
    with pytest.raises(ValueError, match="finite"):
        c.sample(float("nan"))
    with pytest.raises(ValueError, match="finite"):
        c.sample([0.0, np.inf])
    with pytest.raises(TypeError, match="times"):
        c.sample("0.5")
    with pytest.raises(ValueError, match="out"):
        c.sample([0.0, 0.1], out=np.zeros((3, c.num_joints), jm.JOINT_QUAT))
    with pytest.raises(TypeError, match="out"):
        c.sample([0.0], out=np.zeros((1, c.num_joints), np.float64))
    out = np.zeros(c.num_joints, jm.JOINT_QUAT)
    assert c.sample(0.5, out=out) is out and np.array_equal(out, c.sample(0.5))


def test_bad_bytes_name_what_is_wrong(compressed_01_01, tmp_path):
    b = compressed_01_01[0].tobytes()
    cases = {
        b"PK\x03\x04" + b[4:]: "magic",
        b[:40]: "truncated",
        b[:-1]: "truncated",
        b + b"\0": "extra bytes",
        b[:8] + struct.pack("<I", 2) + b[12:]: "version 2",
        b[:-5] + bytes([b[-5] ^ 1]) + b[-4:]: "checksum",
    }
    for bad, what in cases.items():
        with pytest.raises(ValueError, match=f"bytes: .*{what}"):
            jm.CompressedClip.frombytes(bad)
    path = tmp_path / "broken.jmc"
    path.write_bytes(b[:100])
    with pytest.raises(ValueError, match="broken.jmc"):
        jm.load_compressed(path)


def _with_crc(b):
    """b with its checksum recomputed: a mutant that only the checks after the checksum see."""
    crc = zlib.crc32(b[64:], zlib.crc32(b[:60]))
    return b[:60] + struct.pack("<I", crc) + b[64:]


def test_fuzz_mutants_raise_value_error_or_decode():
    """1,200 mutants of a small clip's bytes (bit flips, truncations, deletions, insertions,
    header and table edits, some with the checksum made right again): each raises ValueError
    or decodes (only mutants whose checksum was made right may); never a crash."""
    clip = synthetic_clip(n_frames=300, n_joints=6, seed=4, spin=True)
    b = jm.compress(clip, error=1e-3, shell=1.0).tobytes()
    rng = np.random.default_rng(48)
    n = len(b)
    decoded = 0
    for k in range(1200):
        kind = k % 6
        m = bytearray(b)
        if kind == 0:
            for _ in range(rng.integers(1, 4)):
                pos = int(rng.integers(n))
                m[pos] ^= 1 << int(rng.integers(8))
        elif kind == 1:
            m = m[:int(rng.integers(n))]
        elif kind == 2:
            pos = int(rng.integers(n))
            del m[pos:pos + int(rng.integers(1, 9))]
        elif kind == 3:
            pos = int(rng.integers(n))
            m[pos:pos] = bytes(rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8))
        elif kind == 4:  # a header field set to an edge value
            field = int(rng.integers(8, 64)) // 4 * 4
            m[field:field + 4] = struct.pack("<I", int(rng.choice([0, 1, 2, 0xFFFFFFFF, 0x7FFFFFFF, rng.integers(1 << 32)])))
        else:  # bits flipped after the header, checksum recomputed: the structural checks and the decoder
            for _ in range(rng.integers(1, 4)):
                pos = int(rng.integers(64, n))
                m[pos] ^= 1 << int(rng.integers(8))
        fixed = kind >= 4 and rng.integers(2) == 1 or kind == 5
        m = _with_crc(bytes(m)) if fixed and len(m) >= 64 else bytes(m)
        if m == b:
            continue
        try:
            c = jm.CompressedClip.frombytes(m)
        except ValueError as exc:
            assert str(exc).startswith("bytes: ")
            continue
        assert fixed, f"mutant {k} decoded without its checksum made right"
        decoded += 1
        c.sample(0.1)
        jm.decompress(c)
    assert decoded < 600


def test_peak_memory_while_compressing_is_a_few_clips(clip_01_01):
    """NumPy's and the C core's allocations (tracemalloc sees both) stay within 8 times the
    clip's float32 records while compress() runs."""
    import tracemalloc
    tracemalloc.start()
    try:
        jm.compress(clip_01_01)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 8 * clip_01_01.joints.nbytes
