"""What `python -m jointmath` says of its clips: a table per clip on stdout, the summary with the
totals, --plot's figure of ratio against max error, and with --out report.json and (for
--format packed) the plots of the packing error (errors.png); the plots need matplotlib."""
import json
import math
import os

from ._files import write_atomic
from ._plan import stale_outputs
from ._sizes import FLOATS_PER_JOINT_SAMPLE

__all__ = ["json_ready", "plot_ratio_by_error", "print_results", "totals", "write_json", "write_report"]


def _length(value, height, unit_scale):
    """'0.0847 units (0.28 % of height)' or with unit_scale '0.48 cm (0.28 % of height)'; 'not
    measurable' for a value that is not finite."""
    if not math.isfinite(value):
        return "not measurable"
    text = f"{value * unit_scale:.3g} cm" if unit_scale else f"{value:.3g} units"
    return text + (f" ({100 * value / height:.2g} % of height)" if height else "")


def _not_finite(result):
    """The keys of a clip's result whose figures hold a NaN or an infinity (a figure that could
    not be measured, e.g. float32 world positions beyond float32's range under --check): those
    report.json holds as null."""
    return [key for key, value in result.items() if not key.startswith("_") and json_ready(value) != value]


def _sizes_line(r):
    """The archive's size against raw float32 and the source BVH under gzip -9 and xz -9."""
    return (f"  size: {r['bytes']:,} bytes, {r['bytes_per_joint_sample']:.3g} bytes per joint-sample; "
            f"{r['ratio_float32']:.3g}x smaller than raw float32 ({r['raw_float32_bytes']:,} bytes, "
            f"{FLOATS_PER_JOINT_SAMPLE} floats per joint-sample); source BVH {r['source_bytes']:,} bytes, "
            f"gzip -9 {r['gzip9_bytes']:,} ({r['ratio_gzip9']:.3g}x this), xz -9 {r['xz9_bytes']:,} "
            f"({r['ratio_xz9']:.3g}x this)")


def _print_notes(r):
    """The clip's notes (Clip.notes: what the reader decided, such as position channels read as
    whole translations), a line each under the line naming the clip, without the file's name
    that each note starts with."""
    prefix = f"{r['file']}: "
    for note in r.get("notes", ()):
        print(f"  note: {note[len(prefix):] if note.startswith(prefix) else note}")


def _print_compressed(r):
    """The table of a clip compressed with jointmath.compress (format jmc)."""
    print(f"\n{r['file']}: {r['frames']} frames x {r['joints']} joints"
          + (f" (resampled from {r['source_frames']})" if r["frames"] != r["source_frames"] else "")
          + f", compressed to {r['bytes']:,} bytes (.jmc)")
    _print_notes(r)
    print(f"  {'stage':20s} {'frames':>8s} {'seconds':>10s} {'frames/s':>12s}")
    for name, sec in r["seconds"].items():
        fps = r["frames_per_second"][name]
        print(f"  {name:20s} {r['stage_frames'][name]:8d} {sec:10.5f} {fps if fps is not None else float('inf'):12.0f}")
    print(_sizes_line(r))
    print(f"  bound: error {r['error_bound_cm']:g} cm = {r['error_bound']:.4g} units, shell {r['shell_cm']:g} cm = "
          f"{r['shell']:.4g} units ({r['unit_scale_cm']:.4g} cm per unit: {r['unit_scale_from']})")
    print(f"  certified error (every sample): max {r['max_error']:.4g} units = {r['max_error_cm']:.4g} cm, "
          f"p99 {r['p99_error']:.4g} units = {r['p99_error_cm']:.4g} cm")
    print("  worst joints: " + ", ".join(f"{w['name']} {w['max_error_cm']:.3g} cm" for w in r["worst_joints"]))
    for kind, path in r["outputs"].items():
        print(f"  wrote {path}")


def _print_clip(r, unit_scale):
    if r.get("format") == "jmc":
        _print_compressed(r)
        return
    height = r["skeleton_height"]
    print(f"\n{r['file']}: {r['frames']} frames x {r['joints']} joints"
          + (f" (resampled from {r['source_frames']})" if r["frames"] != r["source_frames"] else "")
          + f", compression {r['compression_ratio']:.2f}x ({r['bits']}-bit)")
    _print_notes(r)
    unmeasured = _not_finite(r)
    if unmeasured:
        print(f"  warning: not measurable for this clip (not finite, e.g. positions beyond float32's range; null in "
              f"report.json): {', '.join(unmeasured)}")
    print(f"  {'stage':20s} {'frames':>8s} {'seconds':>10s} {'frames/s':>12s}")
    for name, sec in r["seconds"].items():
        fps = r["frames_per_second"][name]
        print(f"  {name:20s} {r['stage_frames'][name]:8d} {sec:10.5f} {fps if fps is not None else float('inf'):12.0f}")
    print(f"  skeleton height (rest pose): {_length(height, 0, unit_scale)}")
    print(f"  packing rotation error: max {max(r['angle_error_max'], default=0):.3g} rad, mean "
          f"{sum(r['angle_error_mean']) / max(len(r['angle_error_mean']), 1):.3g} rad")
    print(f"  end-effector position error: max {_length(r['end_effector_error_max'], height, unit_scale)}, "
          f"mean {_length(r['end_effector_error_mean'], height, unit_scale)}")
    print("  worst joints: " + ", ".join(f"{w['name']} {_length(w['position_error_max'], height, unit_scale)}"
                                         for w in r["worst_joints"]))
    if "forward_kinematics_error_max" in r:
        print(f"  check: float32 forward kinematics vs float64: max "
              f"{_length(r['forward_kinematics_error_max'], height, unit_scale)}")
    if "bytes" in r:
        print(_sizes_line(r))
    for kind, path in r["outputs"].items():
        print(f"  wrote {path}")


def _skeletons(results):
    """Results grouped by skeleton (joint names and parents), in order of first appearance."""
    groups = {}
    for r in results:
        groups.setdefault((tuple(r["names"]), tuple(r["parents"])), []).append(r)
    return list(groups.values())


def _label(text):
    """`text` as matplotlib shows it literally: the bytes of a file name that are not UTF-8 as
    U+FFFD, and `$` as a dollar sign, not the start of a formula."""
    return str(text).encode("utf-8", "surrogateescape").decode("utf-8", "replace").replace("$", r"\$")


def _error_figure(group):
    """The Figure of one skeleton's clips (results with the same joint names and parents): the
    max position error per joint by joint name (a bar for the worst clip, a dot per clip when
    there are several) and the position error over time of the worst end effectors of the worst
    clip, both as % of the skeleton height (clip units if a height is 0), y from 0."""
    import numpy as np
    from matplotlib.figure import Figure

    names = group[0]["names"]
    relative = all(r["skeleton_height"] for r in group)
    unit = "% of skeleton height" if relative else "clip units"

    def scaled(r, values):
        return np.asarray(values, np.float64) * (100 / r["skeleton_height"] if relative else 1.0)

    per_clip = np.array([scaled(r, r["position_error_max"]) for r in group])
    worst = group[int(np.argmax(per_clip.max(axis=1, initial=0.0)))]
    fig = Figure(figsize=(max(8.0, 0.3 * len(names) + 2), 8), layout="constrained")
    top, bottom = fig.subplots(2, 1)
    x = np.arange(len(names))
    top.bar(x, per_clip.max(axis=0), color="tab:blue", alpha=0.5,
            label="worst clip" if len(group) > 1 else _label(os.path.basename(worst["file"])))
    if len(group) > 1:
        for row in per_clip:
            top.plot(x, row, ".", color="black", markersize=3)
        top.plot([], [], ".", color="black", label="each clip")
    top.set_xticks(x, [_label(n) for n in names], rotation=90, fontsize=7)
    top.set_xlim(-0.6, len(names) - 0.4)
    top.set_ylim(bottom=0)
    top.set_xlabel("joint")
    top.set_ylabel(f"max position error ({unit})")
    top.set_title(f"Packing error per joint ({worst['bits']}-bit): skeleton of {len(names)} joints "
                  f"(root {_label(names[0])}), {len(group)} clip{'s' if len(group) > 1 else ''}")
    top.legend(loc="upper left")
    series = worst["_series"]
    for name, errors in zip(series["names"], series["errors"]):
        bottom.plot(np.arange(len(errors)) * worst["frame_time"], scaled(worst, errors), linewidth=0.8,
                    label=_label(name))
    bottom.set_ylim(bottom=0)
    bottom.set_xlabel("time (s)")
    bottom.set_ylabel(f"position error ({unit})")
    bottom.set_title(f"Worst end effectors over time: {_label(os.path.basename(worst['file']))}")
    if series["names"]:
        bottom.legend(loc="upper left")
    return fig


def _plot(results, out):
    """One PNG per skeleton (_error_figure): errors.png, or errors-1.png, errors-2.png ... when
    the clips have several skeletons. Returns [{"path", "clips"}]; [] with a note when
    matplotlib is not installed."""
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        print("note: matplotlib is not installed, no plot written")
        return []
    groups = _skeletons(results)
    plots = []
    for k, group in enumerate(groups, 1):
        path = os.path.join(out, "errors.png" if len(groups) == 1 else f"errors-{k}.png")
        try:  # a figure that cannot be drawn costs that figure, never the report after it
            fig = _error_figure(group)
            write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=90))
        except (OSError, ValueError, TypeError, RuntimeError) as exc:
            print(f"FAILED to write {path}: {type(exc).__name__}: {exc}")
            continue
        plots.append({"path": path, "clips": [r["file"] for r in group]})
    return plots


def json_ready(value):
    """`value` (dicts, lists and numbers) with every NaN and infinity as None: JSON has neither,
    so json.dump would write NaN / Infinity, which strict readers (jq, JSON.parse) refuse."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def write_json(path, value):
    """value as indented strict JSON at `path` (json_ready: NaN and infinities as null), written
    atomically."""
    return write_atomic(path, lambda f: json.dump(json_ready(value), f, indent=1, allow_nan=False), text=True)


def print_results(good, bad, notes, unit_scale):
    """Print each processed clip's table (`good`: process_file's results), each failed clip with
    what it wrote (`bad`), and the summary line (`notes`: the inputs skipped)."""
    for r in good:
        _print_clip(r, unit_scale)
    for r in bad:
        print(f"\nFAILED {r['file']}: {r['error']}")
        _print_notes(r)
        for path in r["outputs"].values():
            print(f"  wrote {path}")
    frames = sum(r["frames"] for r in good)
    print(f"\nsummary: {len(good)} clips processed, {len(bad)} failed, {len(notes)} skipped, {frames} frames")
    total = totals(good)
    if total is not None:
        line = (f"total: {total['bytes']:,} bytes, {total['bytes_per_joint_sample']:.3g} bytes per joint-sample, "
                f"{total['ratio_float32']:.3g}x smaller than raw float32 ({FLOATS_PER_JOINT_SAMPLE} floats per "
                f"joint-sample); the source BVH under gzip -9 {total['ratio_gzip9']:.3g}x and xz -9 "
                f"{total['ratio_xz9']:.3g}x this")
        if "max_error_cm" in total:
            line += (f"; certified max error {total['max_error_cm']:.4g} cm, largest p99 "
                     f"{total['p99_error_cm']:.4g} cm")
        print(line)


def totals(good):
    """The totals over the clips that report sizes: bytes, joint-samples, bytes per joint-sample,
    the ratios against raw float32 and the sources under gzip -9 and xz -9, and for compressed
    clips the largest max error and the largest 99th percentile (cm, and clip units when all
    clips share a unit scale); None when no clip reports sizes."""
    sized = [r for r in good if "bytes" in r]
    if not sized:
        return None
    total = {k: sum(r[k] for r in sized) for k in ("bytes", "raw_float32_bytes", "gzip9_bytes", "xz9_bytes",
                                                     "source_bytes")}
    samples = sum(r["frames"] * r["joints"] for r in sized)
    total.update(clips=len(sized), joint_samples=samples,
                 bytes_per_joint_sample=total["bytes"] / samples if samples else None,
                 ratio_float32=total["raw_float32_bytes"] / total["bytes"],
                 ratio_gzip9=total["gzip9_bytes"] / total["bytes"], ratio_xz9=total["xz9_bytes"] / total["bytes"])
    compressed = [r for r in sized if r.get("format") == "jmc"]
    if compressed:
        total["max_error_cm"] = max(r["max_error_cm"] for r in compressed)
        total["p99_error_cm"] = max(r["p99_error_cm"] for r in compressed)
        if len({r["unit_scale_cm"] for r in compressed}) == 1:
            total["max_error"] = max(r["max_error"] for r in compressed)
            total["p99_error"] = max(r["p99_error"] for r in compressed)
    return total


def _ratio_figure(results):
    """The Figure of the ratio against raw float32 by the max error (cm) per clip."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 5), layout="constrained")
    ax = fig.subplots()
    for r in results:
        ax.plot(r["max_error_cm"], r["ratio_float32"], "o", color="tab:blue")
        ax.annotate(_label(os.path.basename(r["file"])), (r["max_error_cm"], r["ratio_float32"]),
                    textcoords="offset points", xytext=(4, 4), fontsize=7)
    bounds = sorted({r["error_bound_cm"] for r in results})
    for bound in bounds:
        ax.axvline(bound, color="tab:red", linewidth=0.8, linestyle="--")
    ax.plot([], [], "--", color="tab:red", linewidth=0.8, label="error bound (--error)")
    ax.set_xlim(left=0, right=max([r["max_error_cm"] for r in results] + bounds) * 1.15)
    ax.set_ylim(bottom=0, top=max(r["ratio_float32"] for r in results) * 1.15)
    ax.set_xlabel("certified max error (cm)")
    ax.set_ylabel(f"ratio against raw float32 ({FLOATS_PER_JOINT_SAMPLE} floats per joint-sample)")
    ax.set_title(f"Compression ratio by max error: {len(results)} clip{'s' * (len(results) != 1)}")
    ax.legend(loc="lower right")
    return fig


def plot_ratio_by_error(good, path):
    """Draw the ratio against raw float32 by the certified max error per compressed clip into
    `path` (PNG, atomically) and say so. Returns [{"path", "clips"}], [] with a note when
    matplotlib is missing, no clip is compressed (--format packed) or the file cannot be
    written."""
    compressed = [r for r in good if r.get("format") == "jmc"]
    if not compressed:
        print(f"note: no compressed clip to plot, {path} not written (--plot draws --format jmc clips)")
        return []
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        print("note: matplotlib is not installed, no plot written")
        return []
    try:
        fig = _ratio_figure(compressed)
        write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=90))
    except (OSError, ValueError, TypeError, RuntimeError) as exc:
        print(f"FAILED to write {path}: {type(exc).__name__}: {exc}")
        return []
    print(f"wrote {path}")
    return [{"path": path, "clips": [r["file"] for r in compressed]}]


def write_report(out, results, good, bad, notes, files, options, extra_plots=()):
    """Write the plots and report.json into `out` and say so: `results` all clips' results (for
    the files they wrote), `good` and `bad` the processed and the failed ones, `notes` the inputs
    skipped, `files` the inputs (never listed as stale), `options` the run's settings (bits, fps,
    check, unit_scale_cm: report.json's last keys), `extra_plots` the plots already written
    (--plot). The packing-error plots are drawn for the packed clips. Files an earlier run wrote there and this one
    did not are listed (stale_outputs), never deleted. False when report.json could not be
    written (said on stdout)."""
    packed = [r for r in good if r.get("format", "packed") == "packed"]
    plots = (_plot(packed, out) if packed else []) + list(extra_plots)
    written = [target for r in results for target in r["outputs"].values()] + [p["path"] for p in plots]
    stale = stale_outputs(out, written, files)
    if stale:
        print(f"note: files in {out} that an earlier run wrote and this run did not write again (left as "
              f"they are, listed in report.json under stale_outputs):")
        for stale_path in stale:
            print(f"  {stale_path}")
    report = {"clips": [{k: v for k, v in r.items() if not k.startswith("_")} for r in good], "failed": bad,
              "skipped": notes, "total": totals(good), "plots": plots, "stale_outputs": stale, **options}
    path = os.path.join(out, "report.json")
    try:
        write_json(path, report)
    except OSError as exc:
        print(f"FAILED to write {path}: {type(exc).__name__}: {exc}")
        return False
    for plot in plots[:len(plots) - len(extra_plots)]:
        print(f"wrote {plot['path']}")
    print(f"wrote {path}")
    return True
