"""`search` ranking: which servers best match a text, and by which field.

The registry's own `search` is a name-only substring match in name order, so the server a user
means (`github` → io.github.github/github-mcp-server) can sit past the first hundred rows. We
scan a bounded number of matches, rank them here and show the first few.

Order (first rule that holds wins; within a rule, more name segments equal to TEXT first —
io.github.github/github-mcp-server before io.github.acme/github-issues — then by name):
 0. the whole name equals TEXT
 1. the server part (after the last "/") equals TEXT
 2. a segment of the server part (split on . - _) equals TEXT
 3. the server part starts with TEXT
 4. any segment of the name (split on / . - _) equals TEXT
 5. the title equals TEXT
 6. TEXT is in the name
 7. TEXT is in the title
 8. TEXT is in the description
All comparisons are case-insensitive.
"""

from __future__ import annotations

import re
import sys

from msgspec import Struct

from mcpsync.registry.base import Registry, ServerEntry

SCAN_MAX = 1000  # matches read to rank: 10 pages of 100, a few seconds at worst
_SEGMENTS = re.compile(r"[/._-]")


def match(entry: ServerEntry, text: str) -> tuple[int, str] | None:
    """(rank, matched field) of `entry` for `text`, or None if it does not match at all."""
    needle = text.lower()
    name = entry.name.lower()
    part = name.rsplit("/", 1)[-1]
    title = str(entry.server.get("title") or "").lower()
    rules = (
        name == needle,
        part == needle,
        needle in _SEGMENTS.split(part),
        part.startswith(needle),
        needle in _SEGMENTS.split(name),
    )
    for rank, holds in enumerate(rules):
        if holds:
            return rank, "name"
    if title == needle:
        return 5, "title"
    if needle in name:
        return 6, "name"
    if needle in title:
        return 7, "title"
    if needle in str(entry.server.get("description") or "").lower():
        return 8, "description"
    return None


def rank(entries: list[ServerEntry], text: str) -> list[tuple[ServerEntry, str]]:
    """The entries that match `text`, best first, each with the field that matched."""
    needle = text.lower()
    scored = [(found, entry) for entry in entries if (found := match(entry, text)) is not None]
    scored.sort(key=lambda pair: (pair[0][0], -_equal_segments(pair[1], needle), pair[1].name))
    return [(entry, found[1]) for found, entry in scored]


def _equal_segments(entry: ServerEntry, needle: str) -> int:
    return _SEGMENTS.split(entry.name.lower()).count(needle)


class SearchResult(Struct, frozen=True):
    """Ranked matches plus what the scan could not cover, for the CLI to say."""

    matches: list[tuple[ServerEntry, str]]
    name_bound_hit: bool  # more name matches exist than were ranked
    listed: int  # servers read from the unfiltered listing of a remote registry (0: none read)
    by_text: int  # matches found only in that listing's titles/descriptions


def search(registry: Registry, text: str, limit: int) -> SearchResult:
    """Rank name matches (up to SCAN_MAX of them); when they are fewer than `limit`, also look
    for `text` in the titles and descriptions of the first SCAN_MAX servers the registry lists.

    A local snapshot is ranked whole: every server is already in memory."""
    if registry.local:
        return SearchResult(rank(registry.search("", limit=sys.maxsize), text), False, 0, 0)
    named = registry.search(text, limit=SCAN_MAX + 1)
    hit = len(named) > SCAN_MAX
    named = named[:SCAN_MAX]
    known = {entry.name for entry in named}
    listed = registry.search("", limit=SCAN_MAX) if len(named) < limit else []
    extra = [entry for entry in listed if entry.name not in known]
    matches = rank(named + extra, text)
    by_text = sum(1 for entry, _ in matches if entry.name not in known)
    return SearchResult(matches, hit, len(listed), by_text)
