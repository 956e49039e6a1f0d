"""What `python -m jointmath` says of its clips: a table per clip on stdout, the summary, and
with --out the plots of the packing error (errors.png, needs matplotlib) and report.json."""
import json
import math
import os

from ._files import write_atomic
from ._plan import stale_outputs

__all__ = ["json_ready", "print_results", "write_json", "write_report"]


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


def _print_clip(r, unit_scale):
    height = r["skeleton_height"]
    print(f"\n{r['file']}: {r['frames']} frames x {r['joints']} joints"
          + (f" (resampled from {r['source_frames']})" if r["frames"] != r["source_frames"] else "")
          + f", compression {r['compression_ratio']:.2f}x ({r['bits']}-bit)")
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
        for path in r["outputs"].values():
            print(f"  wrote {path}")
    frames = sum(r["frames"] for r in good)
    print(f"\nsummary: {len(good)} clips processed, {len(bad)} failed, {len(notes)} skipped, {frames} frames")


def write_report(out, results, good, bad, notes, files, options):
    """Write the plots and report.json into `out` and say so: `results` all clips' results (for
    the files they wrote), `good` and `bad` the processed and the failed ones, `notes` the inputs
    skipped, `files` the inputs (never listed as stale), `options` the run's settings (bits, fps,
    check, unit_scale_cm: report.json's last keys). Files an earlier run wrote there and this one
    did not are listed (stale_outputs), never deleted. False when report.json could not be
    written (said on stdout)."""
    plots = _plot(good, out) if good else []
    written = [target for r in results for target in r["outputs"].values()] + [p["path"] for p in plots]
    stale = stale_outputs(out, written, files)
    if stale:
        print(f"note: files in {out} that an earlier run wrote and this run did not write again (left as "
              f"they are, listed in report.json under stale_outputs):")
        for stale_path in stale:
            print(f"  {stale_path}")
    report = {"clips": [{k: v for k, v in r.items() if not k.startswith("_")} for r in good], "failed": bad,
              "skipped": notes, "plots": plots, "stale_outputs": stale, **options}
    path = os.path.join(out, "report.json")
    try:
        write_json(path, report)
    except OSError as exc:
        print(f"FAILED to write {path}: {type(exc).__name__}: {exc}")
        return False
    for plot in plots:
        print(f"wrote {plot['path']}")
    print(f"wrote {path}")
    return True
