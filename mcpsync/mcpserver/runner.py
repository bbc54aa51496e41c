"""Run one mcpsync command in-process with its output captured, and shape the result envelope.

Commands run through `mcpsync.cli.main.run`, the same path as the real CLI, so a tool call and a
command line behave alike. sys.stdout/sys.stderr are process-wide, hence one command at a time.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout, suppress
from typing import Any

from msgspec import Struct

from mcpsync.mcpserver.calls import Call

EXIT_MEANINGS = {
    1: "a check found a difference, or the command failed",
    2: "bad usage or bad input",
    3: "the environment failed (registry unreachable, timeout, permission)",
    70: "an internal error in mcpsync (a bug)",
    130: "interrupted",
}

_ONE_AT_A_TIME = threading.Lock()


class Outcome(Struct, frozen=True):
    exit_code: int
    stdout: str
    stderr: str


def run_captured(argv: Sequence[str]) -> Outcome:
    """Run `mcpsync ARGV` in this process; never raises (run() turns errors into exit codes)."""
    from mcpsync.cli.main import run

    out, err = io.StringIO(), io.StringIO()
    with _ONE_AT_A_TIME, redirect_stdout(out), redirect_stderr(err), _no_stdin():
        code = run(["--color", "never", *argv])  # captured text is parsed, never painted
    return Outcome(code, out.getvalue(), err.getvalue())


@contextmanager
def _no_stdin() -> Iterator[None]:
    """A command that prompts gets end-of-file instead of reading the MCP wire or a terminal."""
    saved = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        yield
    finally:
        sys.stdin = saved


def envelope(call: Call, outcome: Outcome) -> dict[str, Any]:
    """{return_value, data, output, stderr}: data is the parsed --json output, else null."""
    data, output, stderr = None, outcome.stdout, outcome.stderr
    if call.json and outcome.stdout.strip():
        # A command that broke its --json promise keeps its text in `output`.
        with suppress(ValueError):
            data, output = json.loads(outcome.stdout), ""
    if call.fields and data is not None and not is_error_document(data):
        available = _top_keys(data)
        data, missing = keep_fields(data, call.fields)
        if missing:  # said on stderr: the command itself worked
            stderr += (
                f"mcpsync mcp: no field {', '.join(missing)} in data; "
                f"its fields are: {', '.join(available) or 'none'}\n"
            )
    return {"return_value": outcome.exit_code, "data": data, "output": output, "stderr": stderr}


def is_error_document(data: Any) -> bool:
    """The `{"error": {...}}` document a failing command prints under --json."""
    return isinstance(data, Mapping) and set(data) == {"error"}


def failed(call: Call, outcome: Outcome) -> bool:
    """Exit 1 from a check (`lock --check`, `sync --diff`) is an answer, not a failure."""
    return outcome.exit_code != 0 and not (outcome.exit_code == 1 and call.check)


def keep_fields(data: Any, fields: Sequence[str]) -> tuple[Any, list[str]]:
    """Only `fields` of an object (or of each object in a list); and the fields found nowhere."""
    rows = data if isinstance(data, list) else [data]
    objects = [row for row in rows if isinstance(row, Mapping)]
    if not objects:
        return data, []
    missing = [f for f in fields if not any(f in row for row in objects)]

    def keep(row: Any) -> Any:
        return {k: row[k] for k in fields if k in row} if isinstance(row, Mapping) else row

    return ([keep(r) for r in data] if isinstance(data, list) else keep(data)), missing


def _error_document(text: str) -> bool:
    try:
        return is_error_document(json.loads(text))
    except ValueError:
        return False


def _top_keys(data: Any) -> list[str]:
    rows = data if isinstance(data, list) else [data]
    keys: dict[str, None] = {}
    for row in rows:
        if isinstance(row, Mapping):
            keys.update(dict.fromkeys(row))
    return list(keys)


def failure_text(call: Call, outcome: Outcome) -> str:
    meaning = EXIT_MEANINGS.get(outcome.exit_code, "failed")
    lines = [f"`{call.cli}` failed with exit code {outcome.exit_code} ({meaning})."]
    if outcome.stderr.strip():
        lines += ["stderr:", outcome.stderr.rstrip()]
    if outcome.stdout.strip() and not _error_document(outcome.stdout):
        lines += ["stdout:", outcome.stdout.rstrip()]  # the error document repeats stderr
    return "\n".join(lines)
