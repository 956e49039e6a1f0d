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


def source_sizes(path):
    """{"source_bytes", "gzip9_bytes", "xz9_bytes"}: the file at `path` as it is, under gzip at
    level 9 and under xz (lzma) at preset 9.

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
            "xz9_bytes": len(lzma.compress(text, preset=9))}
