"""The one network seam: what the resolver needs from a registry, whatever the backend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from msgspec import Struct, field

from mcpsync.errors import NotFound
from mcpsync.jsontypes import json_type

OFFICIAL_META = "io.modelcontextprotocol.registry/official"
DEFAULT_REGISTRY = "https://registry.modelcontextprotocol.io"


class ServerEntry(Struct, frozen=True):
    """One version of one server, as a registry returns it (server.json plus official meta)."""

    server: dict[str, Any]
    status: str = "active"  # active | deprecated | deleted
    is_latest: bool = False
    published_at: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # not compared: see __eq__

    def __eq__(self, other: object) -> bool:
        """Equal when all but `meta` (the registry's own bookkeeping) are."""
        if type(other) is not ServerEntry:
            return NotImplemented
        mine = (self.server, self.status, self.is_latest, self.published_at)
        return mine == (other.server, other.status, other.is_latest, other.published_at)

    __hash__ = None  # type: ignore[assignment]  # it holds dicts

    @property
    def name(self) -> str:
        return str(self.server.get("name", ""))

    @property
    def version(self) -> str:
        return str(self.server.get("version", ""))

    @classmethod
    def from_response(cls, item: Any) -> ServerEntry:
        """A ServerResponse item ({"server": {...}, "_meta": {...official...}}) → ServerEntry,
        checking every field mcpsync relies on.

        Raises ValueError saying what is wrong; callers add the file or URL."""
        if not isinstance(item, dict):
            raise ValueError(f"an item is {json_type(item)}, not an object")
        server = item.get("server")
        if not isinstance(server, dict):
            raise ValueError("an item has no 'server' object")
        check_server(server)
        meta = item.get("_meta") or {}
        official = (meta.get(OFFICIAL_META) or {}) if isinstance(meta, dict) else None
        if not isinstance(official, dict):
            raise ValueError(f"{_label(server)}: '_meta' is not an object of objects")
        _check_official(server, official)
        return cls(
            server=server,
            status=str(official.get("status") or "active"),
            is_latest=bool(official.get("isLatest", False)),
            published_at=official.get("publishedAt"),
            meta=meta,
        )


def check_server(server: dict[str, Any]) -> None:
    """A server.json must at least carry string `name` and `version`."""
    for key in ("name", "version"):
        if not isinstance(server.get(key), str) or not server[key]:
            raise ValueError(f"a server has no '{key}' string ({_label(server)})")


def _check_official(server: dict[str, Any], official: dict[str, Any]) -> None:
    expected = {"status": str, "publishedAt": str, "isLatest": bool}
    for key, kind in expected.items():
        value = official.get(key)
        if value is not None and not isinstance(value, kind):
            raise ValueError(f"{_label(server)}: '{key}' is {json_type(value)}")


def _label(server: dict[str, Any]) -> str:
    name, version = server.get("name"), server.get("version")
    return f"{name!r} {version!r}" if name or version else "unnamed server"


class Registry(Protocol):
    """A registry backend: the v0.1 HTTP client or a file:// snapshot."""

    url: str
    # True for a file: snapshot, searched and listed in memory: nothing to bound or page
    local: bool

    def versions(self, name: str) -> list[ServerEntry]:
        """Every non-deleted version of `name`. Raises NotFound if the name is unknown."""
        ...

    def versions_many(self, names: Sequence[str]) -> dict[str, list[ServerEntry]]:
        """versions() for many names at once, with bounded concurrency.

        Raises the first failure (NotFound, RegistryError); never returns a partial result."""
        ...

    def versions_or_missing(self, names: Sequence[str]) -> dict[str, list[ServerEntry] | NotFound]:
        """versions_many(), except that a name the registry does not have maps to its NotFound
        instead of failing the batch, so `lock` can name every missing server in one run.

        Any other failure (RegistryError) is raised as in versions_many()."""
        ...

    def get(self, name: str, version: str) -> ServerEntry:
        """One exact version (or "latest"). Raises NotFound."""
        ...

    def search(self, text: str, *, limit: int = 30, latest_only: bool = True) -> list[ServerEntry]:
        """Servers whose name contains `text` (case-insensitive), following cursors up to limit."""
        ...

    def search_many(
        self, texts: Sequence[str], *, limit: int = 30, latest_only: bool = True
    ) -> dict[str, list[ServerEntry]]:
        """search() for many texts at once, with bounded concurrency (`import` asks by several
        name fragments). Raises the first failure; never returns a partial result."""
        ...

    def close(self) -> None: ...

    @property
    def request_count(self) -> int:
        """How many HTTP requests were made (0 for a snapshot); benchmarks report it."""
        ...
