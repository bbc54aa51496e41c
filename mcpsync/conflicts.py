"""git's merge-conflict markers, found in any file mcpsync reads.

A file git could not merge holds `<<<<<<< ours`, `|||||||` base, `=======`, `>>>>>>> theirs`
lines. Parsed as JSON, YAML or TOML that is only "Invalid ..." at some column; said as what it
is, the user knows what to do. mcp.lock has its own reading of them (mcpsync.lock.merge).
"""

from __future__ import annotations

import re
from pathlib import Path

from mcpsync.errors import InputError

CONFLICT_MARKER = re.compile(r"^(<{7}|\|{7}|={7}|>{7})(?:[ \r]|$)", re.MULTILINE)
# A hunk's first or last line: git always writes both. `=======` alone is a heading underline
# in a TOML multi-line string, not a merge.
_HUNK_END = re.compile(r"^(<{7}|>{7})(?:[ \r]|$)", re.MULTILINE)


def conflict_hunks(text: str) -> list[tuple[int, int]]:
    """(first, last) line numbers (1-based) of each `<<<<<<<` ... `>>>>>>>` hunk; [] if none.
    A marker without its pair still counts, from or up to itself."""
    if not any(marker in text for marker in ("<" * 7, "=" * 7, ">" * 7, "|" * 7)):
        return []  # the common case, at the speed of a substring search
    hunks: list[tuple[int, int]] = []
    start: int | None = None
    for match in CONFLICT_MARKER.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        kind = match.group(1)[0]
        if kind == "<":
            start = line if start is None else start
        elif kind == ">":
            hunks.append((line if start is None else start, line))
            start = None
        elif start is None:  # ||||||| or ======= outside a hunk
            start = line
    if start is not None:
        hunks.append((start, text.count("\n") + (not text.endswith("\n"))))
    return hunks


def conflict_lines(hunks: list[tuple[int, int]]) -> str:
    """ "lines 10–18, 26–31" (or "line 4") for messages."""
    one = len(hunks) == 1 and hunks[0][0] == hunks[0][1]
    return ("line " if one else "lines ") + ", ".join(
        f"{a}\u2013{b}" if a != b else str(a) for a, b in hunks
    )


class ConflictMarkers(InputError):
    """A file holds merge-conflict markers: a merge is unfinished."""

    def __init__(self, path: Path, hunks: list[tuple[int, int]]) -> None:
        super().__init__(
            f"{path}: unresolved merge conflict ({conflict_lines(hunks)} hold git's "
            "<<<<<<< ======= >>>>>>> markers). File not modified.",
            hint=_hint(path),
        )
        self.hunks = hunks


def _hint(path: Path) -> str:
    if path.name == "mcp.toml":  # the user's own file: both sides' servers are wanted
        return (
            "edit it to keep both sides' servers and remove the markers, then run "
            "`mcpsync lock && mcpsync sync`"
        )
    return (
        f"mcpsync writes this file from mcp.lock: take one side (`git checkout --theirs -- "
        f"{path.name}` in its directory), resolve mcp.toml, then run `mcpsync lock && mcpsync sync`"
    )


def refuse_conflicted(path: Path, text: str) -> None:
    """Raise ConflictMarkers when `text`, read from `path`, is an unfinished merge."""
    if "<" * 7 in text or ">" * 7 in text:  # fast path: no marker, no scan
        hunks = conflict_hunks(text)
        if hunks and _HUNK_END.search(text):
            raise ConflictMarkers(path, hunks)
