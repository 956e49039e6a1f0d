"""Where `python -m jointmath` finds its clips and writes its outputs: the clips of the file and
folder arguments, one output name per clip under --out (never an input's own file), and the
files an earlier run left there."""
import collections
import json
import os
import stat
import tempfile

__all__ = ["check_out", "find_clips", "plan_outputs", "stale_outputs"]


def find_clips(paths):
    """The BVH files of file and folder arguments.

    Parameters
    ----------
    paths : sequence of str
        Files and folders, as the command's arguments. A folder gives its *.bvh files (any case
        of the extension), sorted, not recursive.

    Returns
    -------
    files : list of str
        Each clip once. A path that does not exist is kept: it is reported FAILED like any
        unreadable clip.
    notes : list of str
        One for every path skipped: anything that is not a regular file (a FIFO or a device
        would block or never end) and repeated paths.
    failed : list of dict
        A failed result ({"file", "error", "outputs", "warnings"}, as process_file returns for
        a clip it cannot read) for every folder that cannot be listed (no permission, an I/O
        error).

    Examples
    --------
    >>> import os
    >>> from jointmath import data
    >>> from jointmath.__main__ import find_clips
    >>> folder = os.path.dirname(data.sample_clip_path())
    >>> files, notes, failed = find_clips([folder, data.sample_clip_path()])
    >>> [os.path.basename(f) for f in files], notes == [f"skipped {data.sample_clip_path()}: given twice"], failed
    (['sample_01_01.bvh'], True, [])
    """
    files, notes, failed, seen = [], [], [], set()

    def add(path):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            notes.append(f"skipped {path}: not a regular file")
        elif os.path.abspath(path) in seen:
            notes.append(f"skipped {path}: given twice")
        else:
            seen.add(os.path.abspath(path))
            files.append(path)

    for path in paths:
        if not os.path.isdir(path):
            add(path)
            continue
        try:
            names = sorted(os.listdir(path))
        except OSError as exc:
            failed.append({"file": path, "error": f"cannot list the folder: {type(exc).__name__}: {exc}",
                           "outputs": {}, "warnings": []})
            continue
        for name in names:
            if name.lower().endswith(".bvh"):
                add(os.path.join(path, name))
    return files, notes, failed


def _output_stems(relative):
    """The output name (without extension) of each input path `relative` (relative to the
    inputs' common folder): its own name without the extension, unless another input's is the
    same up to case (walk.bvh, walk.BVH, Walk.bvh: one name on a case-insensitive file system).
    Those inputs are numbered, walk-1, walk-2 ..., in the code-point order of their paths,
    skipping every name some input has as its own (walk-2.bvh keeps walk-2) and every number
    given before. So an input whose own name no other input shares always keeps it, a numbered
    one never takes another input's own name, and no name depends on the order of the inputs."""
    own = [os.path.splitext(rel)[0] for rel in relative]
    sharing = collections.Counter(stem.casefold() for stem in own)
    taken = set(sharing)
    stems = list(own)
    for i in sorted(range(len(own)), key=lambda i: relative[i]):
        if sharing[own[i].casefold()] > 1:
            k = 1
            while f"{own[i]}-{k}".casefold() in taken:
                k += 1
            stems[i] = f"{own[i]}-{k}"
            taken.add(stems[i].casefold())
    return stems


def plan_outputs(files, out, bvh=False, format="packed"):
    """The output paths of each clip under --out.

    Each clip's outputs are OUT/<name> + .jmc (format "jmc") or .npz (format "packed"), and
    .bvh with `bvh`, its path relative to the files'
    common folder, so inputs with the same name in different folders keep apart; inputs whose
    names there are the same up to case or extension (walk.bvh, walk.BVH) are numbered walk-1,
    walk-2 ... in the order of their paths, skipping any other input's own name.

    Parameters
    ----------
    files : sequence of str
        The clips, as find_clips gives them.
    out : str
        The output folder.
    bvh : bool, optional
        Whether each clip is also written as BVH (--bvh).
    format : {"packed", "jmc"}, optional
        The archive written per clip (--format).

    Returns
    -------
    list of dict
        {"packed": path[, "bvh": path]} (or {"compressed": path ...} for "jmc") per file, in order.

    Raises
    ------
    ValueError
        When an output would replace one of the inputs: the same path, or the same file
        reached another way (a symbolic link on either side, a hard link).

    Examples
    --------
    >>> import os
    >>> from jointmath.__main__ import plan_outputs
    >>> plans = plan_outputs(["clips/walk.bvh", "clips/run/walk.bvh", "clips/Jump.BVH"], "out", bvh=True)
    >>> [sorted(p.replace(os.sep, "/") for p in plan.values()) for plan in plans]
    [['out/walk.bvh', 'out/walk.npz'], ['out/run/walk.bvh', 'out/run/walk.npz'], ['out/Jump.bvh', 'out/Jump.npz']]
    """
    absolute = [os.path.abspath(f) for f in files]
    try:
        base = os.path.commonpath([os.path.dirname(a) for a in absolute]) if absolute else ""
        relative = [os.path.relpath(a, base) for a in absolute]
    except ValueError:  # different drives (Windows)
        relative = [os.path.basename(a) for a in absolute]
    plans = []
    inputs = set(os.path.normcase(os.path.realpath(a)) for a in absolute)
    input_files = set()  # (device, inode) of the inputs that exist
    for a in absolute:
        try:
            info = os.stat(a)
            input_files.add((info.st_dev, info.st_ino))
        except OSError:
            pass

    def replaces_an_input(target):
        if os.path.normcase(os.path.realpath(target)) in inputs:
            return True
        try:
            info = os.stat(target)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) in input_files

    for stem in _output_stems(relative):
        plan = ({"compressed": os.path.join(out, stem + ".jmc")} if format == "jmc"
                else {"packed": os.path.join(out, stem + ".npz")})
        if bvh:
            plan["bvh"] = os.path.join(out, stem + ".bvh")
        for target in plan.values():
            if replaces_an_input(target):
                raise ValueError(f"{target} would replace an input clip; choose another --out folder")
        plans.append(plan)
    return plans


def _looks_like_output(name):
    """True for a file name this command writes into --out: *.jmc, *.npz, *.bvh, errors*.png."""
    name = name.lower()
    return name.endswith((".jmc", ".npz", ".bvh")) or (name.startswith("errors") and name.endswith(".png"))


def stale_outputs(out, written, inputs=()):
    """The files an earlier run wrote into `out` that this run did not write again.

    They are read from the report.json an earlier run left in `out` (each clip's outputs, its
    plots and what it listed as stale itself): those still there that this run did not write
    (`written`) nor read (`inputs`), e.g. a .bvh of an earlier --bvh run, errors-2.png of more
    skeletons, the .npz of a clip that failed this time. Only files named like outputs (*.jmc, *.npz,
    *.bvh, errors*.png) inside `out` are listed, and only from such a report: a folder without
    one (or with an unreadable one) has none, so the user's own clips beside the outputs are
    never listed. Call it before this run writes its report.json. Nothing is deleted.

    Parameters
    ----------
    out : str
        The output folder.
    written : iterable of str
        The files this run wrote.
    inputs : iterable of str, optional
        The clips this run read.

    Returns
    -------
    list of str
        The stale files' paths, sorted.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from jointmath.__main__ import stale_outputs
    >>> with tempfile.TemporaryDirectory() as out:
    ...     for name in ("walk.npz", "walk.bvh"):
    ...         open(os.path.join(out, name), "w").close()
    ...     report = {"clips": [{"outputs": {"packed": os.path.join(out, "walk.npz"),
    ...                                      "bvh": os.path.join(out, "walk.bvh")}}]}
    ...     with open(os.path.join(out, "report.json"), "w") as f:
    ...         json.dump(report, f)
    ...     [os.path.basename(p) for p in stale_outputs(out, [os.path.join(out, "walk.npz")])]
    ['walk.bvh']
    """
    def key(path):
        return os.path.normcase(os.path.realpath(path))

    try:
        with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
            earlier = json.load(f)
    except (OSError, ValueError):
        return []
    if not isinstance(earlier, dict):
        return []
    listed = []
    for entry in (earlier.get("clips") or []) + (earlier.get("failed") or []) + (earlier.get("plots") or []):
        if isinstance(entry, dict):
            paths = entry.get("outputs") if isinstance(entry.get("outputs"), dict) else {"plot": entry.get("path")}
            listed += list(paths.values())
    listed += earlier.get("stale_outputs") or []
    root = key(out)
    known = {key(path) for path in (*written, *inputs)}
    stale = set()
    for path in listed:
        if not isinstance(path, str) or not _looks_like_output(os.path.basename(path)):
            continue
        resolved = key(path)
        if (resolved not in known and os.path.commonpath([root, resolved]) == root and resolved != root
                and os.path.isfile(path)):
            stale.add(path)
    return sorted(stale)


def check_out(out):
    """None when files can be created in `out` (made if missing), else the reason."""
    try:
        os.makedirs(out, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        return f"cannot write there ({type(exc).__name__}: {exc.strerror or exc})"
    return None
