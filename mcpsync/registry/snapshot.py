"""A registry read from a directory of JSON files (`file:` URLs), for offline use and CI.

Every `*.json` file in the directory (sorted by name; or the one file the URL names) holds a
ServerList (`{"servers": [...]}`), a list of ServerResponse items, one item, or a bare
server.json. Queries answer as the live registry would: deleted versions are hidden,
versions come newest published first, search matches names case-insensitively.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec

from mcpsync.errors import InputError, NotFound
from mcpsync.registry import server_not_found, version_not_found
from mcpsync.registry.base import OFFICIAL_META, ServerEntry, check_server

_RFC3339 = re.compile(
    r"(\d{4}-\d\d-\d\d)[Tt ](\d\d:\d\d:\d\d)(\.\d+)?([Zz]|[+-]\d\d:\d\d)?", re.ASCII
)
_UNDATED = datetime.min.replace(tzinfo=timezone.utc)


class _Loaded(msgspec.Struct, frozen=True):
    """One entry as read, before the snapshot as a whole is known."""

    entry: ServerEntry
    file: Path
    official: bool  # carries the registry's own meta (status, isLatest)


class SnapshotRegistry:
    """A Registry over a snapshot directory; loaded on first use, never touches the network."""

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self.url = url
        self.local = True
        self._by_name: dict[str, list[ServerEntry]] | None = None
        self._lock = threading.Lock()

    @property
    def request_count(self) -> int:
        return 0

    def versions(self, name: str) -> list[ServerEntry]:
        found = self._index().get(name)
        if not found:
            raise server_not_found(name, self.url)
        return list(found)

    def versions_many(self, names: Sequence[str]) -> dict[str, list[ServerEntry]]:
        return {name: self.versions(name) for name in names}

    def versions_or_missing(self, names: Sequence[str]) -> dict[str, list[ServerEntry] | NotFound]:
        found: dict[str, list[ServerEntry] | NotFound] = {}
        for name in names:
            try:
                found[name] = self.versions(name)
            except NotFound as missing:
                found[name] = missing
        return found

    def get(self, name: str, version: str) -> ServerEntry:
        known = self.versions(name)
        for entry in known:
            if entry.version == version or (version == "latest" and entry.is_latest):
                return entry
        raise version_not_found(name, version, self.url, known)

    def search(self, text: str, *, limit: int = 30, latest_only: bool = True) -> list[ServerEntry]:
        needle = text.lower()
        found = [
            entry
            for name, entries in self._index().items()
            if needle in name.lower()
            for entry in entries
            if entry.is_latest or not latest_only
        ]
        found.sort(key=lambda entry: (entry.name, entry.version))  # the live API's order
        return found[: max(limit, 0)]

    def search_many(
        self, texts: Sequence[str], *, limit: int = 30, latest_only: bool = True
    ) -> dict[str, list[ServerEntry]]:
        return {t: self.search(t, limit=limit, latest_only=latest_only) for t in texts}

    def close(self) -> None:
        pass

    def _index(self) -> dict[str, list[ServerEntry]]:
        with self._lock:  # resolvers may ask from several threads; load once
            if self._by_name is None:
                self._by_name = _index(_load(self.path))
            return self._by_name


# --- loading ----------------------------------------------------------------------------------


def _load(path: Path) -> list[_Loaded]:
    """Every entry in the snapshot, in file order, with duplicates that agree dropped."""
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(path.glob("*.json"))
    else:
        raise InputError(f"Registry snapshot {path} does not exist")
    seen: dict[tuple[str, str], _Loaded] = {}
    for file in files:
        for loaded in _read_file(file):
            key = (loaded.entry.name, loaded.entry.version)
            first = seen.setdefault(key, loaded)
            if first.entry != loaded.entry:
                raise InputError(
                    f"Registry snapshot files {first.file} and {file} disagree about "
                    f"{key[0]} {key[1]}"
                )
    return list(seen.values())


def _read_file(file: Path) -> list[_Loaded]:
    try:
        data = json.loads(file.read_bytes())
        return [_read_item(item, file) for item in _items(data)]
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(f"Registry snapshot file {file} is not usable: {exc}") from None


def _items(data: Any) -> list[Any]:
    """A ServerList, a list of items, or one item (a ServerResponse or a bare server.json)."""
    if isinstance(data, dict) and "servers" in data:
        servers = data["servers"]
        if not isinstance(servers, list):
            raise ValueError("'servers' is not a list")
        return servers
    return data if isinstance(data, list) else [data]


def _read_item(item: Any, file: Path) -> _Loaded:
    if isinstance(item, dict) and "server" not in item:
        check_server(item)  # a bare server.json: no registry meta, so active
        return _Loaded(ServerEntry(server=item), file, official=False)
    entry = ServerEntry.from_response(item)
    return _Loaded(entry, file, official=bool(entry.meta.get(OFFICIAL_META)))


def _index(loaded: list[_Loaded]) -> dict[str, list[ServerEntry]]:
    """Live versions per name, newest first, with `isLatest` filled in where no meta said."""
    by_name: dict[str, list[_Loaded]] = {}
    for item in loaded:
        if item.entry.status != "deleted":
            by_name.setdefault(item.entry.name, []).append(item)
    return {name: _newest_first(_with_latest(items)) for name, items in by_name.items()}


def _with_latest(items: list[_Loaded]) -> list[ServerEntry]:
    entries = [item.entry for item in items]
    if any(item.official for item in items):
        return entries  # the registry already decided
    from mcpsync.versions import registry_latest  # only bare server.json files need it

    latest = registry_latest([entry.version for entry in entries])
    return [msgspec.structs.replace(e, is_latest=e.version == latest) for e in entries]


def _newest_first(entries: list[ServerEntry]) -> list[ServerEntry]:
    # Without publishedAt, a later entry in the files is the newer one. Undated entries go
    # after dated ones; sort(reverse=True) keeps equal keys in their (reversed) order.
    return sorted(reversed(entries), key=lambda e: _instant(e.published_at), reverse=True)


def _instant(text: str | None) -> datetime:
    """An RFC 3339 timestamp (any fraction digits, as Go writes them) as an aware datetime."""
    match = _RFC3339.fullmatch(text.strip()) if text else None
    if match is None:
        return _UNDATED
    date, clock, fraction, zone = match.groups()
    micros = (fraction or ".0")[1:7].ljust(6, "0")
    offset = "+00:00" if zone in (None, "Z", "z") else zone
    try:
        return datetime.fromisoformat(f"{date}T{clock}.{micros}{offset}")
    except ValueError:
        return _UNDATED
