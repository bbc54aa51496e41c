"""A merge-conflicted mcp.lock read back as the pins both sides hold (as npm and pnpm do).

git leaves `<<<<<<<` ours `|||||||` base `=======` theirs `>>>>>>>` hunks; the lines outside
them plus one side's lines are that side's lock (git merged the rest line by line). Each side
that parses offers its entries (entries edited by the merge are rendered again from their own
server.json, as for any tampered entry); a side that does not parse offers none. For each
server in mcp.toml one offer is kept, the first by: the same server from the same registry,
a pin mcp.toml's constraint allows, the higher version (pnpm's rule: one branch upgraded it),
recorded inputs equal to mcp.toml's, intact records, an artifact record; a surface probed on
either side (`mcpsync probe`) for the same name, version and launch is kept with it. Which side
is "ours" does not matter, so a merge and a rebase give the same lock. `mcpsync lock` then
plans from these pins as from any lock (an offer whose inputs differ from mcp.toml keeps its
pin and is rendered again) and writes a clean lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from msgspec import Struct

from mcpsync.conflicts import CONFLICT_MARKER
from mcpsync.errors import InputError
from mcpsync.lock.integrity import Triage, triage
from mcpsync.lock.lockfile import (
    Lock,
    LockedServer,
    NewerLock,
    keep_surface,
    loads,
)
from mcpsync.manifest.parse import Manifest, ServerSpec


def sides(text: str) -> tuple[str, str]:
    """(ours, theirs): the text with each conflict hunk cut down to one side."""
    ours: list[str] = []
    theirs: list[str] = []
    state = "both"
    lines = text.split("\n")  # git's lines end at \n only (splitlines also splits at U+2028)
    for number, line in enumerate(lines, 1):
        if CONFLICT_MARKER.match(line):
            state = {"<": "ours", "|": "base", "=": "theirs", ">": "both"}[line[0]]
            continue
        line += "\n" if number < len(lines) else ""
        if state in ("both", "ours"):
            ours.append(line)
        if state in ("both", "theirs"):
            theirs.append(line)
    return "".join(ours), "".join(theirs)


class Merged(Struct, frozen=True):
    triage: Triage  # the kept pins, as `mcpsync lock` plans from them
    parsed: int  # how many sides parsed (0, 1 or 2)


def merge(text: str, path: Path, manifest: Manifest, registry: str | None) -> Merged:
    """The pins to keep from both sides of the conflicted lock `text`, for `manifest`.
    `registry`: the one a pin must come from (Project.pinned_registry; None: any)."""
    offers: list[Triage] = []
    for side in sides(text):
        try:
            offers.append(triage(loads(side, path)))
        except NewerLock:  # a newer mcpsync wrote it: writing ours over it would lose data
            raise
        except InputError:  # that side is no lock: it offers no pins
            continue
    servers: list[LockedServer] = []
    repaired: dict[str, str] = {}
    refetch: set[str] = set()
    for alias, spec in sorted(manifest.servers.items()):
        found = [(t, e) for t in offers if (e := t.lock.get(alias)) is not None]
        if not found:
            continue
        best, entry = max(found, key=lambda te: _rank(spec, te, found, registry))
        for _, other in found:  # one side probed it, the other recorded its artifact
            entry = keep_surface(entry, other)
        servers.append(entry)
        if alias in best.repaired:
            repaired[alias] = best.repaired[alias]
        if alias in best.refetch:
            refetch.add(alias)
    return Merged(Triage(Lock(tuple(servers)), repaired, frozenset(refetch)), len(offers))


def _rank(
    spec: ServerSpec,
    offer: tuple[Triage, LockedServer],
    found: Sequence[tuple[Triage, LockedServer]],
    registry: str | None,
) -> tuple[bool, bool, bool, bool, bool, bool]:
    from mcpsync.versions import Constraint, select

    side, entry = offer
    same_registry = spec.is_custom or registry is None or entry.registry == registry
    same_source = entry.name == spec.name and same_registry
    versions = [e.version for _, e in found if e.version]
    highest = select(versions, Constraint.parse("*"), prereleases=True) if versions else None
    return (
        same_source,
        entry.version is not None and Constraint.parse(spec.version).allows(entry.version),
        entry.version is not None and entry.version == highest,
        dict(entry.inputs) == spec.inputs(),
        entry.alias not in side.refetch,
        entry.artifact is not None,  # the same pin with its artifact record: no lookup needed
    )
