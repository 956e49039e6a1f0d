"""The compressed clip's container (docs/formats.md, "Compressed clip (.jmc)"): bytes <-> its
parts, every size and offset checked before it is used."""
import json
import struct
import zlib

import numpy as np

from ._codec_encode import CONSTANT, QUANTIZED, QUANTIZED4, RAW, STREAM_RAW32, STREAM_RICE, TRACK_DTYPE

MAGIC = b"\x89JMC\r\n\x1a\n"
VERSION = 1
HEADER = struct.Struct("<8sIIIIII3dII")  # magic, version, header size, frames, joints, rows, meta size,
                                          # frame_time, error, shell, data size, crc32
HEADER_SIZE = HEADER.size  # 64
STREAM = np.dtype([("nbytes", "<u4")])
MAX_JOINTS = 1 << 16


def pack(parts):
    """The container's bytes from a dict of its parts (see unpack)."""
    meta = json.dumps(parts["meta"], separators=(",", ":"), allow_nan=False).encode()
    streams = parts["streams"]
    table = np.array([len(s) for s in streams], "<u4")
    data = b"".join(streams)
    if len(data) > 0xFFFFFFFF or len(meta) > 0xFFFFFFFF:
        raise ValueError("the clip is too large for the compressed-clip format (its data exceeds 4 GiB)")
    header = HEADER.pack(MAGIC, VERSION, HEADER_SIZE, parts["n_frames"], parts["n_joints"], len(streams), len(meta),
                         parts["frame_time"], parts["error"], parts["shell"], len(data), 0)
    body = meta + parts["tracks"].astype(TRACK_DTYPE).tobytes() + table.tobytes() + data
    crc = zlib.crc32(body, zlib.crc32(header[:-4]))
    return header[:-4] + struct.pack("<I", crc) + body


def unpack(b, source):
    """The parts of container bytes `b` (bytes-like), checked; ValueError naming `source` (a
    file name or "bytes") and what is wrong."""
    def bad(what):
        return ValueError(f"{source}: not a valid compressed clip: {what}")

    view = memoryview(b).cast("B")
    if len(view) < 8 or bytes(view[:8]) != MAGIC:
        raise bad("it does not start with the compressed-clip magic number (a foreign file?)")
    if len(view) < HEADER_SIZE:
        raise bad(f"truncated: {len(view)} bytes, shorter than the {HEADER_SIZE}-byte header")
    (_, version, header_size, n_frames, n_joints, n_rows, meta_size, frame_time, error, shell, data_size,
     crc) = HEADER.unpack_from(view)
    if version != VERSION:
        raise bad(f"format version {version}; this jointmath reads version {VERSION}"
                  + (" (a newer jointmath wrote it)" if version > VERSION else ""))
    if header_size != HEADER_SIZE:
        raise bad(f"header size {header_size}, expected {HEADER_SIZE}")
    expected = (HEADER_SIZE + meta_size + n_joints * TRACK_DTYPE.itemsize + n_rows * STREAM.itemsize + data_size)
    if len(view) != expected:
        raise bad(f"{'truncated' if len(view) < expected else 'extra bytes'}: {len(view)} bytes, the header "
                  f"says {expected}")
    actual = zlib.crc32(view[HEADER_SIZE:], zlib.crc32(view[:HEADER_SIZE - 4]))
    if actual != crc:
        raise bad(f"checksum mismatch (stored {crc:#010x}, computed {actual:#010x}): the bytes are corrupted")
    # from here the bytes are as written; still check what the decoder relies on
    if not (1 <= n_joints <= MAX_JOINTS and n_frames >= 1):
        raise bad(f"{n_frames} frames of {n_joints} joints")
    if not (np.isfinite(frame_time) and frame_time > 0 and np.isfinite(error) and error > 0
            and np.isfinite(shell) and shell > 0):
        raise bad("frame_time, error and shell must be positive and finite")
    at = HEADER_SIZE
    try:
        meta = json.loads(bytes(view[at:at + meta_size]).decode())
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad(f"its skeleton record does not parse ({exc})") from None
    at += meta_size
    tracks = np.frombuffer(view, TRACK_DTYPE, n_joints, at).copy()
    at += n_joints * TRACK_DTYPE.itemsize
    table = np.frombuffer(view, STREAM, n_rows, at)
    at += n_rows * STREAM.itemsize
    if int(table["nbytes"].sum(dtype=np.int64)) != data_size:
        raise bad("the stream sizes do not add up to the data size")
    kinds = _check_tracks(tracks, table, n_rows, n_frames, bad)
    offsets = np.concatenate([[0], np.cumsum(table["nbytes"], dtype=np.int64)])[:n_rows].astype(np.int64) + at
    streams = np.stack([offsets, table["nbytes"].astype(np.int64), kinds], axis=1)
    return dict(n_frames=n_frames, n_joints=n_joints, frame_time=frame_time, error=error, shell=shell, meta=meta,
                tracks=tracks, streams=np.ascontiguousarray(streams), stream_nbytes=table["nbytes"].copy())


def track_rows(tracks):
    """(J, 2) int64: how many streams each joint's rotation and translation track use (0 for a
    constant track, 4 for a raw or quantized4 rotation, else 3), or -1 for an unknown mode."""
    rot, trans = tracks["rot_mode"].astype(np.int64), tracks["trans_mode"].astype(np.int64)
    rot_count = np.select([rot == CONSTANT, (rot == RAW) | (rot == QUANTIZED4), rot == QUANTIZED], [0, 4, 3], -1)
    trans_count = np.select([trans == CONSTANT, (trans == RAW) | (trans == QUANTIZED)], [0, 3], -1)
    return np.stack([rot_count, trans_count], axis=1)


def _check_tracks(tracks, table, n_rows, n_frames, bad):
    """Every row used by exactly one track; finite values and positive steps. Returns each row's
    stream kind (raw for the rows of raw tracks, Rice for the others)."""
    counts = track_rows(tracks)
    if (counts < 0).any():
        j, k = (int(i[0]) for i in np.nonzero(counts < 0))
        what = ("rotation", "translation")[k]
        raise bad(f"joint {j}'s {what} track has unknown mode {int(tracks[('rot_mode', 'trans_mode')[k]][j])}")
    starts = np.stack([tracks["rot_row"], tracks["trans_row"]], axis=1).astype(np.int64)
    used = counts > 0
    if ((starts < 0) | (starts > n_rows - counts))[used].any() or int(counts.sum()) != n_rows:
        raise bad(f"the tracks' streams do not cover the {n_rows} streams once each")
    owner = np.zeros(n_rows, np.int64)
    for start, count in zip(starts[used].tolist(), counts[used].tolist()):
        owner[start:start + count] += 1
    if (owner != 1).any():
        raise bad(f"the tracks' streams do not cover the {n_rows} streams once each")
    kinds = np.full(n_rows, STREAM_RICE, np.int64)
    for which, mode in ((0, tracks["rot_mode"]), (1, tracks["trans_mode"])):
        for start, count in zip(starts[mode == RAW, which].tolist(), counts[mode == RAW, which].tolist()):
            kinds[start:start + count] = STREAM_RAW32
    values = np.concatenate([tracks["rot"], tracks["trans"], tracks["rot_step"][:, None], tracks["trans_step"][:, None]], 1)
    if not np.isfinite(values).all():
        raise bad(f"joint {int(np.nonzero(~np.isfinite(values).all(axis=1))[0][0])}'s track values are not finite")
    bad_step = ((counts[:, 0] > 0) & (tracks["rot_mode"] != RAW) & ~(tracks["rot_step"] > 0)) | (
        (tracks["trans_mode"] == QUANTIZED) & ~(tracks["trans_step"] > 0))
    if bad_step.any():
        raise bad(f"joint {int(np.nonzero(bad_step)[0][0])}'s quantization step is not positive")
    if ((kinds == STREAM_RAW32) & (table["nbytes"] != 4 * n_frames)).any():
        raise bad("a raw stream's size is not 4 bytes a frame")
    return kinds
