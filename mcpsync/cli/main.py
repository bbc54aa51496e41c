"""The entry point (the command table is in commands.py). The root click group and its
global options are in root.py, imported when a command runs (errors become exit codes in
errors.py): `mcpsync --help` is answered by help_cache, without importing click, while its
cached text is current, and a warm `mcpsync run ALIAS` execs the server without importing
click either (`warm_run`)."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any

from mcpsync.cli.commands import COLOR_MODES, COMMANDS, TIMEOUT_MIN  # noqa: F401  (tests patch COMMANDS here)


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code; never raises (used by main and the MCP server)."""
    from mcpsync.cli.errors import invoke
    from mcpsync.cli.root import cli

    return invoke(cli, list(argv) if argv is not None else sys.argv[1:])


def main() -> None:
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    _tune_gc()
    from mcpsync.cli import help_cache

    if help_cache.answer(sys.argv[1:]):
        sys.exit(0)
    warm_run(sys.argv[1:], os.environ)
    code = run()
    gc.freeze()  # the interpreter's last full collection would walk every object: skip it
    sys.exit(code)


def _tune_gc() -> None:
    """Collect reference cycles rarely, as mypy does: a command is short, makes few cycles,
    and the default (a young collection every 700 allocations) spent ~10 ms of a 0.42 s cold
    `lock` and more at exit. A 1,000-server lock peaked at 45.2 MB instead of 44.9 MB;
    `mcp serve`, which runs for hours, still collects, only less often."""
    gc.set_threshold(200_000, 30, 30)


def warm_run(argv: Sequence[str], environ: Mapping[str, str]) -> None:
    """`[-C DIR] run ALIAS [ARGS]...` with a warm start recorded (launcher.quick): exec the
    server at once. Importing click costs about as much as Python's own start, and a client
    pays it on every server start. Returns (and click handles the command, with its help,
    usage errors and refusals) for anything else: other options, no record, a failed exec."""
    request = _run_request(argv, environ)
    if request is None:
        return
    directory, alias, extra = request
    from pathlib import Path

    from mcpsync.errors import McpsyncError
    from mcpsync.project_root import find_root
    from mcpsync.tree import launcher

    start = Path(directory) if directory is not None else Path.cwd()
    root = find_root(start) if start.is_dir() else None
    found = launcher.quick(root, alias, environ, extra) if root is not None else None
    if found is not None:
        with suppress(McpsyncError):  # exec failed: the full path below says so, in one line
            launcher.exec_server(*found)


def _run_request(
    argv: Sequence[str], environ: Mapping[str, str]
) -> tuple[str | None, str, list[str]] | None:
    """(DIR of -C or None, ALIAS, ARGS) of a `run` command line the root group would accept
    as is; None for anything click must see (--help, other options, a value it would reject).
    As click parses `run`, every word after ALIAS goes to the server, `--` included."""
    words = list(argv)
    directory = None
    if words[:1] == ["-C"] and len(words) > 1 and words[1]:
        directory, words = words[1], words[2:]
    if len(words) < 2 or words[0] != "run" or words[1].startswith("-") or not words[1]:
        return None
    return (directory, words[1], words[2:]) if _globals_valid(environ) else None


def _globals_valid(environ: Mapping[str, str]) -> bool:
    """The root group's options read from the environment hold values it accepts: a bad one
    is a usage error click reports, even for `run` (root.py: --timeout, --color)."""
    timeout, color = environ.get("MCPSYNC_TIMEOUT"), environ.get("MCPSYNC_COLOR")
    if color is not None and color not in COLOR_MODES:
        return False
    if timeout is None:
        return True
    try:
        return float(timeout) >= TIMEOUT_MIN
    except ValueError:
        return False


def __getattr__(name: str) -> Any:
    """`cli`, the root click group, for code and tests that drive click directly."""
    if name == "cli":
        from mcpsync.cli.root import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
