"""Writing files so that a failure never leaves one half-written: bvh.save and the command's
outputs (python -m jointmath) go through write_atomic."""
import errno
import os
import stat
import tempfile


def write_atomic(path, write, text=False):
    """Write `path` through write(file): into a temporary file in the same folder, flushed to
    disk, then renamed over `path` (os.replace), so a crash, a full disk or a file size limit
    never leaves a truncated `path`, and a file it replaces stays whole until then. A symbolic
    link at `path` keeps pointing where it did: the file it names is the one replaced. The new
    file keeps the permission bits of the file it replaces, else has a new file's mode (0o666
    less the umask); another hard link to the old file keeps the old contents. The temporary
    file is removed on any error, which propagates (FileNotFoundError for a folder that does
    not exist, another OSError for an unwritable one or a directory at `path`). Returns `path`."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):  # named as the user gave it, not as the temporary file mkstemp would make
        raise FileNotFoundError(errno.ENOENT, f"{os.strerror(errno.ENOENT)} (the folder to write {path} in)", folder)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(target) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w" if text else "wb", **({"newline": "\n", "encoding": "utf-8"} if text else {})) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        try:  # mkstemp makes it private: give it the mode of the file it replaces, or a new file's
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            mode = 0o666 & ~umask()
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return path


def umask():
    """The process's umask, read without changing it where the OS says it (Linux: /proc), else
    by setting and restoring it once (cached)."""
    if not _UMASK:
        try:
            with open("/proc/self/status") as f:
                _UMASK.append(next(int(line.split()[1], 8) for line in f if line.startswith("Umask:")))
        except (OSError, StopIteration, ValueError, IndexError):
            _UMASK.append(os.umask(0o022))
            os.umask(_UMASK[0])
    return _UMASK[0]


_UMASK: list[int] = []  # filled once by umask()
