"""The sizes `python -m jointmath` compares a compressed clip with: raw float32 samples and the
source file under general-purpose compressors (gzip -9 and xz -9, as Python's gzip and lzma
modules write them at their highest preset)."""
import gzip
import lzma

__all__ = ["FLOATS_PER_JOINT_SAMPLE", "raw_float32_bytes", "source_sizes"]

#: Floats per joint-sample in the raw float32 size: a rotation (4), a translation (3) and a scale
#: (3), the count ACL's statistics use for raw_size, so the ratios compare with its.
FLOATS_PER_JOINT_SAMPLE = 10


def raw_float32_bytes(frames, joints):
    """Bytes of `frames` x `joints` joint-samples as FLOATS_PER_JOINT_SAMPLE float32 each."""
    return int(frames) * int(joints) * FLOATS_PER_JOINT_SAMPLE * 4


def _xz9(data):
    """`data` under xz at preset 9, its dictionary no larger than the data needs (the next power
    of two, at least 4 KiB): the same bytes' length as preset 9's 64 MiB dictionary, which no
    match in a smaller file can use, without the ~670 MiB that preset allocates per call (one per
    thread of --dask local)."""
    dictionary = min(max(1 << 12, 1 << max(len(data) - 1, 1).bit_length()), 64 << 20)
    return lzma.compress(data, filters=[{"id": lzma.FILTER_LZMA2, "preset": 9, "dict_size": dictionary}])


def source_sizes(path):
    """{"source_bytes", "gzip9_bytes", "xz9_bytes"}: the file at `path` as it is, under gzip at
    level 9 and under xz (lzma) at preset 9 (the sizes `gzip -9` and `xz -9` give, less gzip's
    file name field).

    Examples
    --------
    >>> from jointmath import data
    >>> from jointmath._sizes import source_sizes
    >>> sizes = source_sizes(data.sample_clip_path())
    >>> sizes["xz9_bytes"] < sizes["gzip9_bytes"] < sizes["source_bytes"]
    True
    """
    with open(path, "rb") as f:
        text = f.read()
    return {"source_bytes": len(text),
            "gzip9_bytes": len(gzip.compress(text, compresslevel=9, mtime=0)),
            "xz9_bytes": len(_xz9(text))}
