"""`mcpsync --help` without importing click: click's own rendering, kept in the user's cache.

Importing click alone takes about as long as starting Python, so the top-level help would
always cost more than twice a bare start. Its text depends only on the CLI's source files, on
click (its version and the terminal width it formats for) and on Python; the cache records
all of that in its first line, and any change (an edit, an upgrade, a reinstall, a wider
terminal) renders it again through click. A cache that cannot be read or written is ignored.

Standard library only (os, sys), and nothing from mcpsync beyond this package: this runs
before anything else is imported.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from contextlib import suppress

HELP_REQUESTS = (["--help"], ["-h"])
CACHE_ENV = "XDG_CACHE_HOME"


def answer(argv: Sequence[str]) -> bool:
    """Print the top-level help and return True if `argv` asks only for it; else False."""
    if list(argv) not in HELP_REQUESTS:
        return False
    columns = _columns()
    try:
        key = _key(columns)
    except OSError:  # sources not in a folder (a zip): click answers, as for any command
        return False
    path = _path(columns)
    text = _cached(path, key)
    if text is None:
        text = render()
        _store(path, key, text)
    sys.stdout.write(text + "\n")  # what click's help option prints: the text, a newline
    sys.stdout.flush()
    return True


def render() -> str:
    """The top-level help as click formats it (the same call its --help option makes)."""
    import click

    from mcpsync.cli.root import cli

    ctx = click.Context(cli, info_name="mcpsync", **cli.context_settings)
    return ctx.get_help()


def _columns() -> int:
    """The terminal width click formats for (shutil.get_terminal_size's rule, without the
    import of shutil)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _key(columns: int) -> str:
    """Everything the text depends on: Python, click's module, the CLI's sources, the width."""
    parts = [sys.version.split()[0], str(columns), _stamp(_click_origin())]
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (here, os.path.dirname(here)):  # mcpsync/cli, then mcpsync (choices.py …)
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    parts.append(f"{entry.name}={info.st_mtime_ns}:{info.st_size}")
    return " ".join(parts)


def _stamp(path: str | None) -> str:
    if path is None:
        return "-"
    try:
        info = os.stat(path)
    except OSError:
        return "-"
    return f"{info.st_mtime_ns}:{info.st_size}"


def _click_origin() -> str | None:
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec("click")
    return spec.origin if spec is not None else None


def _path(columns: int) -> str:
    base = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mcpsync", f"help-{columns}.txt")


def _cached(path: str, key: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            first, _, text = handle.read().partition("\n")
    except (OSError, UnicodeDecodeError):
        return None
    return text if first == key else None


def _store(path: str, key: str, text: str) -> None:
    """Write via a temp file and a rename: a concurrent --help reads the old text or the new."""
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(f"{key}\n{text}")
        os.replace(temp, path)
    except OSError:
        with suppress(OSError):
            os.unlink(temp)
