"""File safety: atomic writes that keep mode and follow symlinks, and the run lock."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from mcpsync.errors import EnvFailure

RUN_LOCK_WAIT = 10.0  # seconds a second concurrent run waits before failing clearly


def real_target(path: Path) -> Path:
    """The file a (possibly symlinked) config path really names: we replace that file."""
    return Path(os.path.realpath(path))


def read_text(path: Path, *, conflicts: bool = False) -> str | None:
    """The file's text with line endings untouched, or None when it does not exist.

    A file holding git's merge-conflict markers is refused (ConflictMarkers names the file,
    the lines and what to do), whatever its format; `conflicts`: the caller reads them itself
    (mcp.lock, which `mcpsync lock` resolves)."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        from mcpsync.errors import InputError

        raise InputError(f"{path} is not UTF-8 text. File not modified.") from None
    except IsADirectoryError:
        raise EnvFailure(
            f"Cannot read {path}: it is a directory, not a file. Nothing written.",
            hint="move the directory away, or point mcp.toml at a file",
        ) from None
    except OSError as exc:
        raise EnvFailure(f"Cannot read {path}: {exc.strerror}") from None
    if not conflicts:
        from mcpsync.conflicts import refuse_conflicted

        refuse_conflicted(path, text)
    return text


def refuse_read_only(path: Path) -> None:
    """A file whose permission bits allow no writing is left alone, also by root and although
    the rename would replace it: someone made it read-only on purpose (Perforce checkouts,
    a config frozen against an app's rewrites)."""
    try:
        mode = real_target(path).stat().st_mode
    except OSError:
        return  # missing (created) or unreadable: the write itself says what is wrong
    if stat.S_ISREG(mode) and not mode & 0o222:
        raise EnvFailure(
            f"Cannot write {path}: it is read-only (mode {mode & 0o7777:04o}). File not modified.",
            hint="make it writable (chmod u+w) if mcpsync should update it",
        )


def atomic_write(path: Path, text: str) -> None:
    """Write via a temp file beside the target, fsync, rename; keep the file's mode."""
    refuse_read_only(path)
    target = real_target(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = _mode_for(target)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise EnvFailure(f"Cannot write {path}: {exc.strerror}. File not modified.") from None
    _hold(fd)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise EnvFailure(f"Cannot write {path}: {exc.strerror}. File not modified.") from None
    _fsync_dir(target.parent)
    _sweep(target)


# A temp file of ours is ".NAME." + mkstemp's 8 random characters + ".tmp".
_TEMP_TAIL = r"\.[a-z0-9_]{8}\.tmp"


def _hold(fd: int) -> None:
    """Lock our temp file while it lives: the kernel drops the lock when the writer dies
    (kill -9 included), so a later write can tell a dead run's leftover from a live one."""
    with contextlib.suppress(ImportError, OSError):
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _sweep(target: Path) -> None:
    """Remove the temp files a killed earlier write of `target` left beside it; a temp file
    still locked belongs to a live writer and stays. Best effort: leftovers are never read."""
    try:
        import fcntl

        names = os.listdir(target.parent)
    except (ImportError, OSError):
        return
    pattern = re.compile(re.escape(f".{target.name}") + _TEMP_TAIL)
    for name in names:
        if pattern.fullmatch(name):
            with contextlib.suppress(OSError):
                _remove_if_dead(fcntl, target.parent / name)


def _remove_if_dead(fcntl: object, path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[attr-defined]
        os.unlink(path)  # while we hold its lock: no writer can have it
    finally:
        os.close(fd)


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is; not possible on every OS.
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def project_lock(directory: Path, *, wait: float = RUN_LOCK_WAIT) -> Iterator[None]:
    """Serialize runs on one project: an advisory lock on the directory itself.

    Locking the directory (not a file in it) leaves nothing behind for users to ignore.
    """
    try:
        import fcntl
    except ImportError:  # Windows: no advisory directory locks; runs are not serialized
        yield
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError as exc:
        raise EnvFailure(f"Cannot open {directory}: {exc.strerror}") from None
    try:
        _acquire(fcntl, fd, directory, wait)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _acquire(fcntl: object, fd: int, directory: Path, wait: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[attr-defined]
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise EnvFailure(
                    f"Another mcpsync run is working in {directory}; waited {wait:.0f} s",
                    hint="wait for it to finish, then run again",
                ) from None
            time.sleep(0.05)
