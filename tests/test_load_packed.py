"""load_packed on files that are not complete, consistent packed clips: a ValueError naming the
file, whatever is wrong with it (a seeded mutation fuzz included)."""
import dataclasses
import io
import json
from pathlib import Path

import numpy as np
import pytest

import jointmath
from jointmath import _job, _packed, bvh

DATA = Path(__file__).resolve().parent / "data"

@pytest.fixture
def archive(tmp_path):
    """A packed clip archive of the embedded sample."""
    clip = bvh.load(jointmath.data.sample_clip_path())
    _, packed, clip, _ = _job.process_clip(clip)
    return _packed.save_packed(clip, str(tmp_path / "clip.npz"), packed=packed)


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
    with np.load(_packed.save_packed(clip, str(tmp_path / "clip20.npz"), packed=packed20)) as data:
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
                                   ("ends.npz", {"end_sites": fields["end_sites"][:, None]}, r"end_sites must be \(E,\) integers"),
                                   ("names.npz", {"names": np.arange(len(fields["names"]))}, "names must be \\(31,\\) str")):
        np.savez(tmp_path / name, **{**fields, **changed})
        with pytest.raises(ValueError, match=rf"{name}' holds an inconsistent packed clip: .*{message}"):
            jointmath.load_packed(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        jointmath.load_packed(tmp_path / "missing.npz")


def _members(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def test_load_packed_deleted_byte_names_the_file(archive, tmp_path):
    # a deleted byte shifts every zip offset after it: zipfile seeks before the start (OSError, no name)
    data = open(archive, "rb").read()
    for at in (len(data) // 2, len(data) - 200, 100):
        path = tmp_path / f"deleted_{at}.npz"
        path.write_bytes(data[:at] + data[at + 1:])
        with pytest.raises(ValueError, match=rf"path '{path}' is not a (complete )?packed clip archive") as caught:
            jointmath.load_packed(path)
        assert caught.value.__cause__ is not None


def test_load_packed_a_bvh_file_is_not_an_archive_and_nothing_is_unpickled(archive, tmp_path):
    with pytest.raises(ValueError, match=r"sample_01_01.bvh' is not a packed clip archive \(.npz written by "
                                         r"jointmath\): it looks like a BVH file") as caught:
        jointmath.load_packed(jointmath.data.sample_clip_path())
    assert "pickle" not in str(caught.value)
    np.savez(tmp_path / "objects.npz", **{**_members(archive), "names": np.array([{"a": 1}], dtype=object)})
    with pytest.raises(ValueError, match=r"objects.npz' is not a complete packed clip archive .*Python objects"):
        jointmath.load_packed(tmp_path / "objects.npz")


def test_load_packed_without_pack_format_lists_what_it_lacks(archive, tmp_path):
    fields = _members(archive)
    np.savez(tmp_path / "old.npz", **{k: v for k, v in fields.items() if k not in ("pack_format", "orders", "names")})
    with pytest.raises(ValueError, match=r"old.npz' is not a packed clip archive of format 2: it lacks pack_format, "
                                         r"names, orders \(") as caught:
        jointmath.load_packed(tmp_path / "old.npz")
    assert "holds packed format 1" not in str(caught.value)


def test_load_packed_missing_file_or_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        jointmath.load_packed(tmp_path / "missing.npz")
    with pytest.raises(IsADirectoryError):
        jointmath.load_packed(tmp_path)


def test_load_packed_checks_every_member_against_the_others(archive, tmp_path):
    fields = _members(archive)
    n_joints = len(fields["names"])
    no_rotation = json.dumps([[c for c in ch if "rotation" not in c] for ch in json.loads(str(fields["channels"]))])
    cases = {  # each loaded before, and bvh.save refused the clip (or it disagreed with itself)
        "empty_names": ({"names": np.array([""] * n_joints)}, r"names\[0\] = '' cannot be written as BVH"),
        "tab_name": ({"names": np.array(["Hips\tx"] + list(fields["names"][1:]))}, r"cannot be written as BVH"),
        "empty_channels": ({"channels": np.array(json.dumps([[]] * n_joints))},
                           r"orders\[0\] = 'ZYX' is not the rotation order of joint 0's \('Hips'\) channels \(none\)"),
        "orders": ({"orders": np.array(["XYZ"] * n_joints)}, r"orders\[0\] = 'XYZ' is not the rotation order"),
        "orders_short": ({"orders": fields["orders"][:-1]}, rf"orders must be \({n_joints},\) str"),
        "orders_bytes": ({"orders": fields["orders"].astype("S")}, r"orders must be .* got \|S3"),
        # channels and orders agree, but the joints rotate and BVH has no channel to say so
        "no_rotation": ({"channels": np.array(no_rotation), "orders": np.array([""] * n_joints)},
                        r"is not the identity rotation in frame 0"),
        "names_2d": ({"names": fields["names"][:, None]}, r"names must be"),
        "parents_float": ({"parents": fields["parents"].astype(np.float64)}, r"parents must be .*integers"),
        "offsets_float32": ({"offsets": fields["offsets"].astype(np.float32)}, r"offsets must be .*float64"),
        "channels_list": ({"channels": np.array([str(fields["channels"])])}, r"channels must be a str \(0-d\)"),
        "channels_dict": ({"channels": np.array("{}")}, r"channels must be a JSON list of lists"),
        "channels_numbers": ({"channels": np.array("[[1, 2, 3]]")}, r"channels must be a JSON list of lists"),
        "time_float32": ({"frame_time": fields["frame_time"].astype(np.float32)}, r"frame_time must be a float64"),
        "packed_dtype_int": ({"packed_dtype": np.array(16)}, r"packed_dtype is 16, which no packed clip has"),
    }
    for name, (changed, message) in cases.items():
        path = tmp_path / f"{name}.npz"
        np.savez(path, **{**fields, **changed})
        with pytest.raises(ValueError, match=rf"path '{path}' holds an inconsistent packed clip: .*{message}"):
            jointmath.load_packed(path)
    # member order, string widths and integer sizes are free (an int32 holds the same parents)
    same = {**fields, "names": fields["names"].astype("U40"), "parents": fields["parents"].astype(np.int32)}
    np.savez(tmp_path / "same.npz", **dict(reversed(list(same.items()))))
    again = jointmath.load_packed(tmp_path / "same.npz")
    again.name = "clip"
    assert again == jointmath.load_packed(archive)
    bvh.save(again, io.StringIO())


def _position_values(clip):
    """(F, k) the values of every position channel of `clip`, in file order."""
    columns = [k for k, name in enumerate(c for ch in clip.channels for c in ch) if name.endswith("position")]
    return clip.motion[:, columns]


def test_load_packed_keeps_the_position_channel_convention(tmp_path):
    # Blender's export: position channels below the root hold whole local translations (their OFFSETs)
    clip = bvh.load(DATA / "01_01_blender.bvh")
    assert clip.position_channels == "channel"
    again = jointmath.load_packed(jointmath.save_packed(clip, str(tmp_path / "blender.npz"), bits=20))
    assert again.position_channels == "channel"
    # bvh.save writes the numbers the file held (within the 20-bit packing and float32), not
    # translations less the OFFSETs (off by up to a bone's length)
    np.testing.assert_allclose(_position_values(again), _position_values(clip), rtol=0, atol=1e-3)
    text = io.StringIO()
    bvh.save(again, text)
    text.seek(0)
    assert bvh.load(text, positions="auto").position_channels == "channel"
    # and the default convention stays the default
    sample = bvh.load(jointmath.data.sample_clip_path())
    assert jointmath.load_packed(jointmath.save_packed(sample, str(tmp_path / "sample.npz"))).position_channels \
        == "offset+channel"


def test_load_packed_archive_without_position_channels_loads_with_the_default(archive, tmp_path):
    # archives written before the member: their clips were saved as "offset+channel"
    fields = _members(archive)
    assert str(fields["position_channels"]) == "offset+channel"
    del fields["position_channels"]
    np.savez(tmp_path / "before.npz", **fields)
    before = jointmath.load_packed(tmp_path / "before.npz")
    assert before.position_channels == "offset+channel"
    before.name = "clip"
    assert before == jointmath.load_packed(archive)


def test_load_packed_checks_position_channels(archive, tmp_path):
    fields = _members(archive)
    cases = {"unknown": (np.array("offset"), r"position_channels must be one of 'offset\+channel', 'channel', "
                                             r"got 'offset'"),
             "empty": (np.array(""), r"position_channels must be one of"),
             "bytes": (np.array(b"channel"), r"position_channels must be a str \(0-d\)"),
             "list": (np.array(["channel"]), r"position_channels must be a str \(0-d\)"),
             "number": (np.array(1), r"position_channels must be a str \(0-d\)")}
    for name, (member, message) in cases.items():
        path = tmp_path / f"{name}.npz"
        np.savez(path, **{**fields, "position_channels": member})
        with pytest.raises(ValueError, match=rf"path '{path}' holds an inconsistent packed clip: {message}"):
            jointmath.load_packed(path)


# ------------------------------------------------------------------------------ mutation fuzz --

def _same_clip(a, b):
    return a == dataclasses.replace(b, name=a.name, joints=b.joints)


def _byte_mutants(data, boundaries, rng, count_per_kind):
    """(kind, bytes) mutants of the archive's bytes: half the positions near a zip structure
    (a local header, the central directory, the end record), half anywhere."""
    def position():
        if rng.random() < 0.5:
            return int(np.clip(rng.choice(boundaries) + rng.integers(-48, 48), 0, len(data) - 1))
        return int(rng.integers(0, len(data)))

    for _ in range(count_per_kind):
        at, n = position(), int(rng.integers(1, 9))
        yield "deletion", data[:at] + data[at + n:]
    for _ in range(count_per_kind):
        at, n = position(), int(rng.integers(1, 9))
        yield "insertion", data[:at] + rng.integers(0, 256, n, dtype=np.uint8).tobytes() + data[at:]
    for _ in range(count_per_kind):
        yield "truncation", data[:position()]
    for _ in range(count_per_kind):
        flipped = bytearray(data)
        at = position()
        flipped[at] ^= 1 << int(rng.integers(0, 8))
        yield "bit flip", bytes(flipped)


def _member_edits(fields, rng):
    """(kind, members) mutants: one member of the archive edited (its names, channels, orders,
    position_channels, shape or dtype), the archive written again with np.savez."""
    n_joints = len(fields["names"])
    channels = json.loads(str(fields["channels"]))
    rotation = ["Xrotation", "Yrotation", "Zrotation"]

    def some_joint():
        return int(rng.integers(0, n_joints))

    def names():
        edited = list(fields["names"])
        j = some_joint()
        edited[j] = [" ", "", "a  b", " lead", "tail ", "tab\there", "line\nbreak", "nul\x00x"][int(rng.integers(0, 8))]
        return {"names": np.array(edited)}

    def channel_edit():
        edited = [list(ch) for ch in channels]
        j = some_joint()
        choice = int(rng.integers(0, 7))
        if choice == 0:
            edited[j] = [c for c in edited[j] if c not in rotation]  # no rotation: orders disagree
        elif choice == 1:
            edited[j] = edited[j] + [edited[j][-1]]  # a channel twice
        elif choice == 2:
            edited[j] = edited[j][:-1]  # two rotation channels
        elif choice == 3:
            edited[j] = edited[j] + ["Wrotation"]
        elif choice == 4:
            edited[j] = list(reversed(edited[j]))  # another order than orders says
        elif choice == 5:
            edited = edited[:-1]
        else:
            return {"channels": np.array(json.dumps(edited)[:int(rng.integers(0, len(json.dumps(edited))))])}
        return {"channels": np.array(json.dumps(edited))}

    def orders():
        edited = list(fields["orders"])
        j = some_joint()
        edited[j] = [o for o in ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "", "XY", "ZYXZ") if o != edited[j]][
            int(rng.integers(0, 8))]
        return {"orders": np.array(edited)}

    def shape():
        name = str(rng.choice(sorted(fields)))
        array = fields[name]
        choice = int(rng.integers(0, 4))
        if choice == 0:
            edited = array[None]
        elif choice == 1 and array.ndim:
            axis = (2 if rng.random() < 0.5 else 1) if name == "packed" else 0  # frames are free: not axis 0
            edited = np.concatenate([array, np.take(array, [0], axis=axis)], axis=axis)
        elif choice == 2 and array.ndim and array.shape[-1] > 1:
            edited = array[..., :-1] if name != "packed" or rng.random() < 0.5 else array[:, :-1]
        elif choice == 3 and array.ndim:
            edited = array.reshape(array.shape + (1,))
        else:
            edited = np.stack([array, array])
        return {name: edited}

    def dtype():
        name = str(rng.choice(sorted(fields)))
        array = fields[name]
        if array.dtype.kind == "U":
            targets = ["S", "U64", np.int64, ">U16"]
        else:
            targets = [np.int8, np.int32, np.uint64, np.float32, np.float16, np.float64, np.int64, np.bool_, "U8",
                       array.dtype.newbyteorder(">")]
        target = targets[int(rng.integers(0, len(targets)))]
        try:
            with np.errstate(invalid="ignore"):  # the mutant may hold values the target cannot
                return {name: array.astype(target)}
        except (TypeError, ValueError):  # a string that is not a number
            return {name: np.zeros(array.shape, target)}

    def position_channels():
        # any other text than the two conventions (the other convention is another, valid clip;
        # NumPy drops trailing NULs, so "channel\\x00" is "channel")
        edited = ["", "Channel", "offset", "offset + channel", "channel ", "channels", "offset+channel+channel",
                  "chan\x00nel", "positions"][int(rng.integers(0, 9))]
        return {"position_channels": np.array(edited)}

    kinds = {"names": names, "channels": channel_edit, "orders": orders, "shape": shape, "dtype": dtype,
             "position_channels": position_channels}
    for kind, edit in kinds.items():
        for _ in range(60):
            yield f"member {kind}", {**fields, **edit()}


def test_load_packed_mutants_load_identical_or_name_the_file(tmp_path):
    """Every mutant of a packed clip (bytes deleted, inserted, truncated or flipped; a member's
    names, channels, orders, position_channels, shape or dtype edited) loads the identical clip or is a ValueError
    naming the file."""
    import collections
    import zipfile

    clip = bvh.load(jointmath.data.sample_clip_path())
    clip = dataclasses.replace(clip, joints=clip.joints[:12].copy())  # small: zip structure is a larger share
    _, packed, clip, _ = _job.process_clip(clip)
    original = _packed.save_packed(clip, str(tmp_path / "original.npz"), packed=packed)
    reference = jointmath.load_packed(original)
    data = open(original, "rb").read()
    with zipfile.ZipFile(original) as archive:
        boundaries = [info.header_offset for info in archive.infolist()]
    boundaries += [data.rfind(b"PK\x01\x02"), data.rfind(b"PK\x05\x06"), len(data) - 1]
    rng = np.random.default_rng(20240)
    mutants = list(_byte_mutants(data, boundaries, rng, 150)) + list(_member_edits(_members(original), rng))
    outcomes = collections.Counter()
    for i, (kind, mutant) in enumerate(mutants):
        path = tmp_path / f"mutant_{i}.npz"
        if isinstance(mutant, dict):
            np.savez(path, **mutant)
        else:
            path.write_bytes(mutant)
        try:
            loaded = jointmath.load_packed(path)
        except ValueError as exc:
            assert str(path) in str(exc), (kind, i, exc)
            outcomes[kind, "ValueError"] += 1
        else:
            assert _same_clip(reference, loaded), (kind, i)
            outcomes[kind, "identical"] += 1
    assert len(mutants) >= 500
    print(dict(sorted(outcomes.items())))
    for kind in {kind for kind, _ in mutants}:
        assert outcomes[kind, "ValueError"] > 0, kind  # every kind of mutation reaches the checks
