"""`mcpsync mirror DIR`: a `file:` snapshot of what mcp.toml needs from a registry, so an
air-gapped CI locks to the same result as the registry would.

Per registry server: every version its constraint allows (prereleases included, so the
resolver's fall-back to a prerelease finds the same candidates), the version mcp.lock pins,
and the version the registry flags latest; each kept as the registry answered it, `_meta`
included, so `latest` and the version order read the same from the mirror.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

from mcpsync.lock.lockfile import Lock
from mcpsync.manifest.parse import Manifest
from mcpsync.registry.base import ServerEntry

MIRROR_FILE = "servers.json"


class Mirrored(Struct, frozen=True):
    name: str
    versions: tuple[str, ...]  # kept, newest first as the registry listed them
    available: int  # how many versions the registry had


def wanted(
    manifest: Manifest, lock: Lock | None, *, all_versions: bool = False
) -> dict[str, tuple[list[str], list[str]]]:
    """Registry name -> (constraints asking for it, versions pinned in mcp.lock)."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    for alias, spec in sorted(manifest.servers.items()):
        if spec.name is None:
            continue
        constraints, pinned = out.setdefault(spec.name, ([], []))
        constraints.append("*" if all_versions else spec.version)
        locked = lock.get(alias) if lock else None
        if locked is not None and locked.name == spec.name and locked.version:
            pinned.append(locked.version)
    return out


def select_entries(
    entries: Sequence[ServerEntry], constraints: Iterable[str], pinned: Iterable[str]
) -> list[ServerEntry]:
    from mcpsync.versions import Constraint

    parsed = [Constraint.parse(text) for text in constraints]
    keep = set(pinned)
    return [
        entry
        for entry in entries
        if entry.is_latest
        or entry.version in keep
        or any(c.allows(entry.version) for c in parsed if not c.is_latest)
    ]


def mirror_items(
    found: Mapping[str, Sequence[ServerEntry]],
    wants: Mapping[str, tuple[list[str], list[str]]],
) -> tuple[list[dict[str, Any]], list[Mirrored]]:
    items: list[dict[str, Any]] = []
    report = []
    for name in sorted(wants):
        constraints, pinned = wants[name]
        kept = select_entries(found[name], constraints, pinned)
        items += [{"server": e.server, "_meta": e.meta} for e in kept]
        report.append(Mirrored(name, tuple(e.version for e in kept), len(found[name])))
    return items, report


def dumps(items: list[dict[str, Any]]) -> str:
    """Deterministic: items sorted by (name, version), as the registry's own list orders."""
    ordered = sorted(items, key=lambda i: (i["server"]["name"], i["server"]["version"]))
    return json.dumps({"servers": ordered}, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def target_file(directory: Path) -> Path:
    return directory / MIRROR_FILE
