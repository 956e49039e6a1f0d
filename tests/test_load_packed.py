"""load_packed on files that are not complete packed clips: a ValueError naming the file."""
import numpy as np
import pytest

import jointmath
from jointmath import _job, _packed, bvh


@pytest.fixture
def archive(tmp_path):
    """A packed clip archive of the embedded sample."""
    clip = bvh.load(jointmath.data.sample_clip_path())
    _, packed, clip, _ = _job.process_clip(clip)
    return _packed.save_packed(str(tmp_path / "clip.npz"), clip, packed)


def test_load_packed_reads_a_complete_archive(archive):
    assert jointmath.load_packed(archive).n_frames == 381


def test_load_packed_quaternions_are_sign_continuous(archive):
    # unpacking makes each quaternion's largest component positive: neighbouring frames of the
    # sample land on opposite hemispheres (a jump for differences, blends, averages, PCA)
    unpacked = jointmath.unpack_joints(_job.process_clip(bvh.load(jointmath.data.sample_clip_path()))[1])["q"]
    assert (np.sum(unpacked[1:] * unpacked[:-1], axis=-1) < 0).any()
    loaded = jointmath.load_packed(archive).joints["q"]
    assert (np.sum(loaded[1:] * loaded[:-1], axis=-1) >= 0).all()
    # only signs changed, whole quaternions at a time, the first frame's kept
    assert ((loaded == unpacked).all(axis=-1) | (loaded == -unpacked).all(axis=-1)).all()
    np.testing.assert_array_equal(loaded[0], unpacked[0])


def test_load_packed_empty_truncated_corrupt(archive, tmp_path):
    data = open(archive, "rb").read()
    cases = {"empty.npz": b"", "head.npz": data[:len(data) // 2], "tail.npz": data[:-40], "text.npz": b"not an archive\n"}
    corrupt = bytearray(data)
    corrupt[len(data) // 3] ^= 0xFF  # inside a member: its CRC check fails when read
    cases["corrupt.npz"] = bytes(corrupt)
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ValueError, match=rf"path '.*{name}' is not a (complete )?packed clip archive \(.npz written by jointmath\)"):
            jointmath.load_packed(path)


def test_load_packed_incomplete_or_not_an_archive(archive, tmp_path):
    with np.load(archive) as data:
        fields = {k: data[k] for k in data.files}
    np.savez(tmp_path / "nothing.npz")
    with pytest.raises(ValueError, match=r"nothing.npz' is not a packed clip archive \(.npz written by jointmath\): it lacks pack_format, packed, "
                                         r"packed_dtype, names"):
        jointmath.load_packed(tmp_path / "nothing.npz")
    # another program's archive: not "format 1" (an old packed clip, which has packed but no pack_format)
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(ValueError, match=r"other.npz' is not a packed clip archive \(.npz written by jointmath\): it lacks pack_format, packed"):
        jointmath.load_packed(tmp_path / "other.npz")
    np.savez(tmp_path / "old.npz", **{k: v for k, v in fields.items() if k != "pack_format"})
    with pytest.raises(ValueError, match=r"old.npz' is not a packed clip archive of format 2: it lacks pack_format \("):
        jointmath.load_packed(tmp_path / "old.npz")
    np.savez(tmp_path / "bare.npz", pack_format=fields["pack_format"])
    with pytest.raises(ValueError, match=r"bare.npz' is an incomplete packed clip archive: it lacks packed, "
                                         r"packed_dtype, names, parents"):
        jointmath.load_packed(tmp_path / "bare.npz")
    np.savez(tmp_path / "partial.npz", **{k: v for k, v in fields.items() if k not in ("parents", "frame_time")})
    with pytest.raises(ValueError, match=r"partial.npz' is an incomplete packed clip archive: it lacks parents, "
                                         r"frame_time$"):
        jointmath.load_packed(tmp_path / "partial.npz")
    np.save(tmp_path / "single.npy", fields["packed"])
    with pytest.raises(ValueError, match=r"single.npy' holds a single array"):
        jointmath.load_packed(tmp_path / "single.npy")
    np.savez(tmp_path / "odd.npz", **{**fields, "packed": fields["packed"][..., :3]})
    with pytest.raises(ValueError, match=r"odd.npz' holds an inconsistent packed clip"):
        jointmath.load_packed(tmp_path / "odd.npz")
    # the same bytes as another element type, a joint short of the skeleton, channels that are not JSON
    # ... and frame times Clip or save refuse (True was taken as 1 s, 1e9 s loaded but did not save)
    for name, changed in (("float.npz", {"packed": fields["packed"].view(np.float32)}),
                          ("short.npz", {"packed": fields["packed"][:, :-1]}),
                          ("channels.npz", {"channels": np.array("not json")}),
                          ("bool_time.npz", {"frame_time": np.array(True)}),
                          ("long_time.npz", {"frame_time": np.array(1e9)})):
        np.savez(tmp_path / name, **{**fields, **changed})
        with pytest.raises(ValueError, match=rf"{name}' holds an inconsistent packed clip"):
            jointmath.load_packed(tmp_path / name)
    for name, changed in (("format_text.npz", {"pack_format": np.array("x")}),
                          ("format_list.npz", {"pack_format": np.array([2, 2])})):
        np.savez(tmp_path / name, **{**fields, **changed})
        with pytest.raises(ValueError, match=rf"{name}' holds packed format ('x'|\[2, 2\])"):
            jointmath.load_packed(tmp_path / name)
    # a record size the format does not define: "17" with 20-byte records loaded as a 20-bit clip
    clip = bvh.load(jointmath.data.sample_clip_path())
    _, packed20, clip, _ = _job.process_clip(clip, bits=20)
    with np.load(_packed.save_packed(str(tmp_path / "clip20.npz"), clip, packed20)) as data:
        fields20 = {k: data[k] for k in data.files}
    for name, base, value in (("size17.npz", fields20, np.array("17")), ("size_int.npz", fields20, np.array(17)),
                              ("size_text.npz", fields, np.array("sixteen")),
                              ("size_list.npz", fields, np.array(["16", "16"]))):
        np.savez(tmp_path / name, **{**base, "packed_dtype": value})
        with pytest.raises(ValueError, match=rf"{name}' holds an inconsistent packed clip: packed_dtype is .*, which no packed clip has: '16' "
                                             rf"\(PACKED_JOINT, 10-bit codes\) or '20'"):
            jointmath.load_packed(tmp_path / name)
    np.savez(tmp_path / "size20.npz", **{**fields, "packed_dtype": np.array("20")})  # defined, but not these bytes
    with pytest.raises(ValueError, match=r"size20.npz' holds an inconsistent packed clip"):
        jointmath.load_packed(tmp_path / "size20.npz")
    for name, changed, message in (("nan.npz", {"offsets": fields["offsets"] * np.nan}, "offsets must be finite"),
                                   ("ends.npz", {"end_sites": fields["end_sites"][:, None]}, r"end_sites must be \(E,\) int64"),
                                   ("names.npz", {"names": np.arange(len(fields["names"]))}, "names must be \\(31,\\) str")):
        np.savez(tmp_path / name, **{**fields, **changed})
        with pytest.raises(ValueError, match=rf"{name}' holds an inconsistent packed clip: .*{message}"):
            jointmath.load_packed(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        jointmath.load_packed(tmp_path / "missing.npz")
