"""Clip compression (jointmath.compress) on real clips, beside ACL's acl_compressor in the same run.

For every clip, at its native rate and resampled to 24 fps (the same resampled clip for both
codecs): bytes, bytes per joint-sample, max and 99th-percentile error (ACL's error metric, in clip
units and in cm), compression time (median, one thread), whole-clip decompression in joint-samples
per second and the time of one ``c.sample(t)`` call from Python.

Both codecs get ACL's default precision, 0.01 cm, and shell (virtual-vertex distance), 3 cm,
converted to clip units with --unit-scale (cm per clip unit; CMU's clips are 2.54/0.45); without
it, 170 / skeleton height (the skeleton taken for a 170 cm human, as compress() does by default).

--acl PATH runs ACL's acl_compressor (built from nfrechette/acl, tools/acl_compressor) on the same
clips, converted with bvh_to_acl_sjson.py, with its default settings, and reads its statistics
(compressed size without metadata, its own max error, its own compression time). With
--acl-decompress PATH (acl_decompress.cpp built against ACL, see its header) it also times ACL's
sequential whole-pose decompression of the same clip. The ratios are jointmath / ACL.

Decompression, both sides in the thread's CPU time, the two taken alternately (a round of each,
medians over the rounds, as the compression times): jointmath's decompress(c), which decodes the
bytes on every call into a new Clip (every frame written to fresh memory, the skeleton copied);
ACL's every sample of the clip in order, seek + decompress_tracks into one pose buffer that
stays in cache (its context initialised once, outside the timing).

Run: python benchmarks/bench_compress.py [CLIP.bvh ...] [--unit-scale 2.54/0.45] [--acl PATH]
     [--acl-decompress PATH] [--quick]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import jointmath as jm
from jointmath import bvh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bvh_to_acl_sjson import ACL_ERROR_CM, ACL_SHELL_CM, default_unit_scale, parse_unit_scale, write_acl_sjson  # noqa: E402
from timing import median_seconds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CLIPS = [ROOT / "tests" / "data" / "01_01.bvh"]

#: The rate every clip is also measured at.
LOW_FPS = 24.0


def _wall(func):
    """Wall time of one call of func()."""
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def measure_jointmath(clip, scale):
    """The figures of jointmath.compress on `clip` at ACL's defaults converted by `scale`, and two
    functions, one that compresses it once more (its wall time) and one that times decompress()
    (seconds per whole clip, the thread's CPU time), for the caller to take alternately with
    ACL's."""
    error, shell = ACL_ERROR_CM / scale, ACL_SHELL_CM / scale
    c = jm.compress(clip, error=error, shell=shell)
    samples = clip.n_frames * clip.n_joints
    stats = c.stats
    t = 0.5 * (clip.n_frames - 1) * clip.frame_time + 0.25 * clip.frame_time  # between two samples
    out = np.empty((1, clip.n_joints), jm.JOINT_QUAT) if clip.n_joints else None
    sample_s = median_seconds(lambda: c.sample(t), min_time=0.2, repeats=15, cpu=True)
    sample_out_s = median_seconds(lambda: c.sample([t], out=out), min_time=0.2, repeats=15, cpu=True)
    # decompress() decodes the bytes on every call (nothing cached) into a new Clip: the whole
    # clip's frames, its skeleton copied; the thread's CPU time, as acl_decompress times ACL's
    # side (waiting for a core counts on neither side)
    return ({"bytes": int(c.nbytes), "per_sample": c.nbytes / samples,
             "max_error": float(stats.max_error), "p99_error": float(stats.p99_error),
             "samples": samples, "sample_s": sample_s, "sample_out_s": sample_out_s},
            lambda: _wall(lambda: jm.compress(clip, error=error, shell=shell)),
            lambda: median_seconds(lambda: jm.decompress(c), min_time=0.1, repeats=5, cpu=True))


_NUMBER = r"([-+0-9.eE]+)"


def _stat(text, key):
    """The first `key = number` of an ACL stats file."""
    found = re.search(rf"\b{key}\s*=\s*{_NUMBER}", text)
    if found is None:
        raise ValueError(f"acl_compressor's statistics lack {key}")
    return float(found.group(1))


def measure_acl(clip, scale, acl, acl_decompress, folder, label):
    """The figures of ACL's acl_compressor on `clip` (converted with `scale`), read from its -stats
    output (compression_time: its own timer around the compression alone), and two functions, one
    that compresses it once more and returns that time, and (with acl_decompress) one that times
    ACL's sequential decompression of its output: every sample in order, seek + decompress_tracks
    into one pose buffer, the median over rounds of the thread's CPU time (acl_decompress.cpp),
    as seconds per whole clip."""
    raw = os.path.join(folder, f"{label}.acl.sjson")
    with open(raw, "w", encoding="utf-8", newline="\n") as f:
        write_acl_sjson(clip, f, scale, name=label)
    stats_path = os.path.join(folder, f"{label}.stats.sjson")

    def run():
        subprocess.run([acl, f"-acl={raw}", f"-stats={stats_path}"], check=True, capture_output=True)
        return Path(stats_path).read_text()

    text = run()
    samples = clip.n_frames * clip.n_joints
    size = int(_stat(text, "compressed_size"))
    result = {"bytes": size, "per_sample": size / samples, "max_error_cm": _stat(text, "max_error"),
              "raw_bytes": int(_stat(text, "raw_size")), "samples": samples}
    decompress_again = None
    if acl_decompress:
        binary = os.path.join(folder, f"{label}.acl")
        subprocess.run([acl, f"-acl={raw}", f"-out={binary}"], check=True, capture_output=True)

        def decompress_again():
            done = subprocess.run([acl_decompress, binary], check=True, capture_output=True, text=True).stdout
            return float(re.search(r"ns_per_pose\s*=\s*" + _NUMBER, done).group(1)) * 1e-9 * clip.n_frames
    return result, lambda: _stat(run(), "compression_time"), decompress_again


def _fmt(value, spec):
    return "—" if value is None else format(value, spec)


def print_table(rows, have_acl):
    print("\nclip                     rate  | jointmath: bytes   B/js  max cm  p99 cm  compress  decomp Mjs/s  sample µs"
          + ("  | ACL: bytes   B/js  max cm  compress  decomp Mjs/s | bytes x  time x  decomp x" if have_acl else ""))
    totals = {"jm": 0, "acl": 0}
    for r in rows:
        j = r["jm"]
        line = (f"{r['label']:<24} {r['fps']:>5.0f}  | {j['bytes']:>15,} {j['per_sample']:>6.2f} "
                f"{j['max_error'] * r['scale']:>7.4f} {j['p99_error'] * r['scale']:>7.4f} "
                f"{j['compress_s'] * 1e3:>7.1f}ms {j['decompress_rate'] / 1e6:>12.1f} {j['sample_s'] * 1e6:>9.2f}")
        totals["jm"] += j["bytes"]
        if have_acl:
            a = r["acl"]
            rate = a.get("decompress_rate")
            line += (f"  | {a['bytes']:>10,} {a['per_sample']:>6.2f} {a['max_error_cm']:>7.4f} "
                     f"{a['compress_s'] * 1e3:>7.1f}ms {_fmt(rate and rate / 1e6, '>12.1f')} | "
                     f"{j['bytes'] / a['bytes']:>7.3f} {j['compress_s'] / a['compress_s']:>7.2f} "
                     f"{_fmt(rate and j['decompress_rate'] / rate, '>9.2f')}")
            totals["acl"] += a["bytes"]
        print(line)
    print(f"total bytes: jointmath {totals['jm']:,}" + (f", ACL {totals['acl']:,}, ratio {totals['jm'] / totals['acl']:.3f}"
                                                         if have_acl else ""))
    print("B/js: bytes per joint-sample; errors: ACL's metric (object space, virtual vertices at the shell "
          "distance), in cm; jointmath's certified over every sample, ACL's as acl_compressor measures it; "
          "compress: medians of wall times, one thread, taken alternately; decomp and sample: medians of "
          "the thread's CPU time, decomp taken alternately too; decomp: joint-samples decompressed per second "
          "(jointmath: decompress(), the whole clip from its bytes to a new Clip, decoded on every call; ACL: "
          "every sample in order, seek + decompress_tracks into one pose buffer); sample µs: one c.sample(t) "
          "call from Python, 1 time x all joints")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clips", nargs="*", type=Path, default=DEFAULT_CLIPS)
    parser.add_argument("--unit-scale", type=parse_unit_scale, default=None, metavar="CM",
                        help="cm per clip unit for every clip (default: 170 / skeleton height per clip)")
    parser.add_argument("--acl", default=None, metavar="PATH", help="ACL's acl_compressor executable")
    parser.add_argument("--acl-decompress", default=None, metavar="PATH",
                        help="acl_decompress built from benchmarks/acl_decompress.cpp (needs --acl)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats of the compressions")
    args = parser.parse_args(argv)
    if args.acl_decompress and not args.acl:
        parser.error("--acl-decompress needs --acl")
    repeats = 3 if args.quick else 9
    print(f"jointmath {jm.__version__} on path {jm.isa()}; ACL: {args.acl or 'not run (--acl PATH)'}")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for path in args.clips:
            source = bvh.load(path)
            for fps in (None, LOW_FPS):
                clip = source if fps is None else bvh.resample(source, fps)
                scale = args.unit_scale if args.unit_scale is not None else default_unit_scale(source)
                label = path.stem
                row = {"label": label, "fps": clip.fps, "scale": scale}
                row["jm"], compress_jm, decompress_jm = measure_jointmath(clip, scale)
                sides = [("jm", compress_jm, decompress_jm)]
                if args.acl:
                    row["acl"], compress_acl, decompress_acl = measure_acl(clip, scale, args.acl, args.acl_decompress,
                                                                           folder, f"{label}-{clip.fps:.0f}")
                    sides.append(("acl", compress_acl, decompress_acl))
                times = {side: [] for side, _, _ in sides}
                decode_times = {side: [] for side, _, decompress in sides if decompress}
                for _ in range(repeats):  # alternately: a slow spell of a shared machine slows both
                    for side, again, decompress in sides:
                        times[side].append(again())
                        if decompress:
                            decode_times[side].append(decompress())
                for side, _, _ in sides:
                    row[side]["compress_s"] = statistics.median(times[side])
                for side, seconds in decode_times.items():
                    row[side]["decompress_rate"] = row[side]["samples"] / statistics.median(seconds)
                rows.append(row)
                print(f"  measured {label} at {clip.fps:.0f} fps ({clip.n_frames} x {clip.n_joints}, "
                      f"{scale:.4g} cm per unit)", file=sys.stderr)
    print_table(rows, bool(args.acl))
    return 0


if __name__ == "__main__":
    sys.exit(main())
