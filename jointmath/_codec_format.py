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


def _check_tracks(tracks, table, n_rows, n_frames, bad):
    """Every row used by exactly one track; finite values and positive steps. Returns each row's
    stream kind (raw for the rows of raw tracks, Rice for the others)."""
    owner = np.full(n_rows, -1)
    kinds = np.full(n_rows, STREAM_RICE, np.int64)
    for j, tr in enumerate(tracks):
        for mode_field, row_field, raw_rows, what in (("rot_mode", "rot_row", 4, "rotation"),
                                                       ("trans_mode", "trans_row", 3, "translation")):
            mode, row = int(tr[mode_field]), int(tr[row_field])
            if mode not in ((CONSTANT, QUANTIZED, RAW, QUANTIZED4) if what == "rotation" else (CONSTANT, QUANTIZED, RAW)):
                raise bad(f"joint {j}'s {what} track has unknown mode {mode}")
            if mode == CONSTANT:
                continue
            count = raw_rows if mode in (RAW, QUANTIZED4) else 3
            if not (0 <= row <= n_rows - count) or (owner[row:row + count] != -1).any():
                raise bad(f"joint {j}'s {what} track has rows {row}..{row + count - 1} of {n_rows}")
            owner[row:row + count] = j
            kinds[row:row + count] = STREAM_RAW32 if mode == RAW else STREAM_RICE
        if not (np.isfinite(tr["rot"]).all() and np.isfinite(tr["trans"]).all()
                and np.isfinite(tr["rot_step"]) and np.isfinite(tr["trans_step"])):
            raise bad(f"joint {j}'s track values are not finite")
        if (tr["rot_mode"] in (QUANTIZED, QUANTIZED4) and not tr["rot_step"] > 0) or (
                tr["trans_mode"] == QUANTIZED and not tr["trans_step"] > 0):
            raise bad(f"joint {j}'s quantization step is not positive")
    if (owner == -1).any():
        raise bad("a stream belongs to no track")
    if ((kinds == STREAM_RAW32) & (table["nbytes"] != 4 * n_frames)).any():
        raise bad("a raw stream's size is not 4 bytes a frame")
    return kinds
