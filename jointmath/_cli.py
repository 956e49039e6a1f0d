"""python -m jointmath [FILES/DIRS ...] [--out DIR]: compress BVH motion capture clips.

By default (--format jmc) each clip is compressed with jointmath.compress under a certified error
bound: --error (default 0.01 cm) is the largest distance any virtual vertex (--shell, default 3 cm
from each joint along its local axes) may move in object space, on every sample. Both are in
centimetres, converted to clip units with --unit-scale (cm per clip unit) or, without it, by
taking the skeleton for a 170 cm human; the report says which. Per clip and in total it prints the
bytes, bytes per joint-sample, the ratio against raw float32 (10 floats per joint-sample, as ACL
counts them: rotation, translation, scale), the size against the source BVH under gzip -9 and
xz -9, and the certified max and 99th-percentile error in clip units and in cm; --plot FILE draws
the ratio against the max error per clip (needs matplotlib).

--format packed keeps the fixed-rate packing: load -> optional resampling (--fps) -> forward
kinematics -> packing (--bits) -> unpacking -> errors (-> float64 check with --check). Prints a table per
clip (frames, seconds and frames/s of each stage, each counting the frames it processed),
the compression ratio, the packing error (rotation angle per joint; end-effector positions, at
the End Site tips, as a fraction of the skeleton's rest-pose height and in clip units, or in cm
with --unit-scale; the worst joints by name; positions compared in float64, so the figure is the
packing's alone) and a summary. Directories give their *.bvh files (not recursive; anything that
is not a regular file is skipped with a note; a directory that cannot be listed is FAILED and
the other clips go on). With no files it runs on the embedded sample clip (CMU 01_01 excerpt).

--out DIR writes, for each clip at its path relative to the inputs' common folder (inputs
whose names there are the same up to case or extension, walk.bvh and walk.BVH, are numbered
walk-1, walk-2 ... in the order of their paths, skipping any other input's own name):
  DIR/<clip>.jmc   the compressed clip (read it back with jointmath.load_compressed)
  DIR/<clip>.npz   --format packed: the packed clip, a compressed .npz (read it back with
                   jointmath.load_packed: signs made continuous along the frames, as packing
                   keeps none)
  DIR/<clip>.bvh   with --bvh: the processed clip as BVH (resampled, decoded)
and DIR/report.json (every clip, its outputs and figures; strict JSON: a figure that could not
be measured, not finite, is null) and, for --format packed, DIR/errors.png, one errors-N.png per
skeleton when the clips have several (needs matplotlib). Every file is written to a temporary name in the same
folder and renamed, so none is ever left half-written; a clip whose output cannot be written is
reported FAILED and the others go on. Nothing is deleted: the files an earlier run wrote into DIR
(as the report.json it left lists them) that this run did not write again are listed in a note
and in report.json under "stale_outputs" (never a file no report names, such as your own clips).
--dask ADDRESS processes the files on a dask.distributed scheduler (pip install "jointmath[dask]"),
sent as absolute paths: the workers must see the files at the same paths (a shared file system);
--dask local on one thread per core of this process (faster here than a local process cluster).
--selfcheck runs the kernel self-check instead (see --selfcheck --help).
Exit status: 0 when every clip was processed, 1 when any failed or none was found, 2 for a
usage error (an unknown or abbreviated option, a bad value, an empty --out, a --dask address
without a scheduler or without dask installed).
"""
import argparse
import math
import sys

from . import _plan, _report, _runners, data
from ._bvh_format import FRAME_TIME_RANGE
from ._compressed_job import DEFAULT_ERROR_CM, DEFAULT_SHELL_CM
from ._job import FORMATS

__all__ = ["MAX_FPS", "MIN_FPS", "main"]


#: Highest --fps accepted: above any capture rate, resampling only makes a clip bigger (and at
#: 1e6 frames/s a 20-second clip would need tens of GB).
MAX_FPS = 10_000.0

#: Lowest --fps accepted: the smallest rate whose frame time 1 / fps is a finite float.
MIN_FPS = math.nextafter(1 / sys.float_info.max, math.inf)


def _fps(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= MAX_FPS and math.isfinite(1 / value)):
        raise argparse.ArgumentTypeError(f"must be a frame rate from {MIN_FPS:.2g} (the smallest whose frame time "
                                         f"1/fps is finite) to {MAX_FPS:,.0f}, got {text!r}")
    return value


def _folder(text):
    if not text:
        raise argparse.ArgumentTypeError("must name a folder, got an empty string")
    return text


def _centimetres(text):
    """A positive finite length in cm (--error, --shell)."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of cm, got {text!r}")
    return value


def _unit_scale(text):
    """Centimetres per clip unit: a number or a fraction such as 2.54/0.45 (CMU's clips)."""
    try:
        parts = [float(p) for p in text.split("/")]
        value = parts[0] / parts[1] if len(parts) == 2 else parts[0] if len(parts) == 1 else None
    except (ValueError, ZeroDivisionError):
        value = None
    if value is None or not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of cm per clip unit (e.g. 2.54/0.45), "
                                         f"got {text!r}")
    return value


def _parser():
    # allow_abbrev=False: an abbreviation such as --self would be taken for --selfcheck by the
    # parser but not by main's dispatch, and run the job instead
    parser = argparse.ArgumentParser(prog="python -m jointmath", description=__doc__, allow_abbrev=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="BVH files or directories (default: the embedded sample)")
    parser.add_argument("--format", choices=FORMATS, default="jmc",
                        help="jmc: jointmath.compress under a certified error bound (default); packed: the "
                             "fixed-rate 32-bit packing (pack_joints) in a compressed .npz")
    parser.add_argument("--error", type=_centimetres, default=None, metavar="CM",
                        help=f"largest error allowed, in cm (default {DEFAULT_ERROR_CM:g}; --format jmc)")
    parser.add_argument("--shell", type=_centimetres, default=None, metavar="CM",
                        help=f"virtual-vertex distance of the error metric, in cm (default {DEFAULT_SHELL_CM:g}; "
                             f"--format jmc)")
    parser.add_argument("--plot", default=None, metavar="FILE",
                        help="draw the ratio against raw float32 by max error per clip into FILE (PNG; matplotlib)")
    parser.add_argument("--bits", type=int, choices=(10, 20), default=None,
                        help="packing size per component (--format packed; default 10)")
    parser.add_argument("--fps", type=_fps, default=None, help=f"resample to N frames per second ({MIN_FPS:.2g} <= "
                                                                f"N <= {MAX_FPS:,.0f})")
    parser.add_argument("--out", type=_folder, default=None,
                        help="folder for the .jmc (or .npz) clips and report.json")
    parser.add_argument("--bvh", action="store_true", help="also write each processed clip as BVH (needs --out)")
    parser.add_argument("--check", action="store_true",
                        help="also check the float32 forward kinematics against float64 (a 'check' stage)")
    parser.add_argument("--unit-scale", type=_unit_scale, default=None, metavar="CM",
                        help="centimetres per clip unit, for --error, --shell and errors in cm (CMU: 2.54/0.45; "
                             "default: the skeleton taken for a 170 cm human)")
    parser.add_argument("--dask", default=None, metavar="local|ADDRESS",
                        help="run on a dask.distributed scheduler at ADDRESS, or 'local': one thread per core here")
    parser.add_argument("--selfcheck", action="store_true", help="run the kernel self-check instead")
    return parser


def main(argv=None):
    """Run `python -m jointmath` with the arguments `argv` (default: sys.argv[1:]).

    Returns the exit status: 0 when every clip was processed, 1 when any failed or none was
    found. A usage error exits through argparse with status 2 (SystemExit).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--selfcheck" in argv:
        from . import _selfcheck
        return _selfcheck.main([a for a in argv if a != "--selfcheck"])
    for stream in (sys.stdout, sys.stderr):
        # a file name whose bytes are not UTF-8 (held as surrogates) prints as caf\xe9.bvh, not
        # a UnicodeEncodeError halfway through the run
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = _parser()
    args = parser.parse_args(argv)
    if args.bvh and args.out is None:
        parser.error("--bvh needs --out DIR")
    if args.bvh and args.fps is not None and 1.0 / args.fps > FRAME_TIME_RANGE[1]:
        parser.error(f"--fps {args.fps:g} with --bvh: BVH holds at most {FRAME_TIME_RANGE[1]:g} seconds a frame "
                     f"(--fps {1 / FRAME_TIME_RANGE[1]:.6g} or more)")
    if args.format == "packed" and args.out is not None and args.fps is not None \
            and 1.0 / args.fps > FRAME_TIME_RANGE[1]:
        parser.error(f"--fps {args.fps:g} with --format packed --out: a packed clip holds at most "
                     f"{FRAME_TIME_RANGE[1]:g} seconds a frame, as BVH (--fps {1 / FRAME_TIME_RANGE[1]:.6g} or more)")
    if args.format == "jmc":
        for flag, given in (("--check", args.check), ("--bits", args.bits is not None)):
            if given:
                parser.error(f"{flag} goes with --format packed (the fixed-rate packing)")
    elif args.error is not None or args.shell is not None:
        parser.error("--error and --shell go with --format jmc (the default)")
    bits = 10 if args.bits is None else args.bits
    error_cm = DEFAULT_ERROR_CM if args.error is None else args.error
    shell_cm = DEFAULT_SHELL_CM if args.shell is None else args.shell
    if args.paths:
        files, notes, unlisted = _plan.find_clips(args.paths)
    else:
        files, notes, unlisted = [data.sample_clip_path()], [], []
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not files:
        for r in unlisted:
            print(f"FAILED {r['file']}: {r['error']}", file=sys.stderr)
        print(f"error: no BVH clips found in {', '.join(args.paths)} (a directory gives its *.bvh files)",
              file=sys.stderr)
        return 1
    plans = [None] * len(files)
    if args.out is not None:
        problem = _plan.check_out(args.out)
        if problem is not None:
            parser.error(f"--out {args.out}: {problem}")
        try:
            plans = _plan.plan_outputs(files, args.out, args.bvh, args.format)
        except ValueError as exc:
            parser.error(f"--out {args.out}: {exc}")
    if args.format == "jmc":
        jobs = [{"path": f, "fps": args.fps, "outputs": plan, "format": "jmc", "error_cm": error_cm,
                 "shell_cm": shell_cm, "unit_scale": args.unit_scale} for f, plan in zip(files, plans)]
    else:
        jobs = [{"path": f, "bits": bits, "fps": args.fps, "outputs": plan, "check": args.check,
                 "format": "packed"} for f, plan in zip(files, plans)]
    if args.dask is None:
        results = _runners.run_local(jobs)
    elif args.dask == "local":
        results = _runners.run_dask(jobs, "local")
    else:
        try:
            client = _runners.connect(args.dask)
        except ValueError as exc:
            parser.error(f"--dask {args.dask}: {exc}")
        with client:
            results = _runners.run_dask(jobs, client)
    good = [r for r in results if "error" not in r]
    bad = unlisted + [r for r in results if "error" in r]
    _report.print_results(good, bad, notes, args.unit_scale)
    plots = []
    if args.plot is not None:
        plots = _report.plot_ratio_by_error(good, args.plot)
    if args.format == "jmc":
        options = {"format": "jmc", "fps": args.fps, "error_cm": error_cm, "shell_cm": shell_cm,
                   "unit_scale_cm": args.unit_scale}
    else:
        options = {"format": "packed", "bits": bits, "fps": args.fps, "check": args.check,
                   "unit_scale_cm": args.unit_scale}
    if args.out is not None and not _report.write_report(args.out, results, good, bad, notes, files, options,
                                                          plots):
        return 1
    return 1 if bad else 0
