"""`mcpsync verify`: does what mcp.lock says still hold? Read-only; never rewrites the lock.

Three checks, each a list of Drift: the registry still serves the same server.json for each
pinned version (a re-published version changes its digest); the artifacts the lock pins still
have their digests (when the lock records any); and, asked for, a fresh probe still lists the
pinned tools, described and shaped as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from mcpsync.artifacts.model import StoreSettings
from mcpsync.errors import NotFound
from mcpsync.lock.lockfile import Lock, LockedServer, digest
from mcpsync.lock.surface import Surface, compare
from mcpsync.registry.base import Registry, ServerEntry


class Drift(Struct, frozen=True):
    """One thing that no longer holds. `kind`: digest | version-gone | artifact | surface."""

    alias: str
    kind: str
    message: str
    diff: str = ""
    tool: str | None = None
    change: str | None = None  # for surface drift: added | removed | description | schema

    def line(self) -> str:
        return f"server '{self.alias}': {self.message}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"alias": self.alias, "kind": self.kind, "message": self.message}
        if self.tool is not None:
            out |= {"tool": self.tool, "change": self.change}
        if self.diff:
            out["diff"] = self.diff
        return out


# ---------------------------------------------------------------- the registry


def registry_drift(
    lock: Lock, open_registry: Callable[[str], Registry], override: str | None = None
) -> list[Drift]:
    """Each pinned registry server's server.json, fetched again and digested as `lock` does.
    Raises RegistryError (exit 3) when a registry cannot be reached."""
    by_url: dict[str, list[LockedServer]] = {}
    for server in lock.servers:
        if server.name and server.version and server.registry:
            by_url.setdefault(override or server.registry, []).append(server)
    drift: list[Drift] = []
    for url, servers in sorted(by_url.items()):
        registry = open_registry(url)
        try:
            found = _versions(registry, sorted({s.name for s in servers if s.name}))
        finally:
            registry.close()
        for server in servers:
            drift += _digest_drift(server, found.get(server.name or ""), url)
    return drift


def _versions(registry: Registry, names: Sequence[str]) -> dict[str, list[ServerEntry] | None]:
    """versions_many, but a name the registry no longer has is an answer (None), not an error."""
    try:
        return dict(registry.versions_many(names))
    except NotFound:
        pass
    out: dict[str, list[ServerEntry] | None] = {}
    for name in names:  # one went missing: ask one by one to tell which
        try:
            out[name] = registry.versions(name)
        except NotFound:
            out[name] = None
    return out


def _digest_drift(
    server: LockedServer, entries: Sequence[ServerEntry] | None, url: str
) -> list[Drift]:
    if entries is None:
        return [Drift(server.alias, "version-gone", f"{server.name} is no longer in {url}")]
    entry = next((e for e in entries if e.version == server.version), None)
    if entry is None:
        message = f"{server.name} {server.version} is no longer in {url} (deleted?)"
        return [Drift(server.alias, "version-gone", message)]
    now = digest(entry.server)
    if now == server.digest:
        return []
    message = (
        f"{server.name} {server.version} was re-published: its server.json digest is {now}, "
        f"mcp.lock pins {server.digest}"
    )
    return [Drift(server.alias, "digest", message)]


# ---------------------------------------------------------------- artifacts


def artifact_drift(lock: Lock, settings: StoreSettings) -> list[Drift]:
    """Each `[server.artifact]` record looked up again in its store (mcpsync.artifacts, as at
    lock time); where the store no longer agrees, a Drift. Entries without a record are not
    asked about. Raises EnvFailure (exit 3) when a store cannot be reached."""
    from mcpsync.artifacts import check_many

    out = []
    for found in check_many(lock.servers, settings):
        prefix = f"server '{found.alias}': "
        what = found.message[len(prefix) :] if found.message.startswith(prefix) else found.message
        message = f"artifact {what}: mcp.lock pins {found.locked}, the store now has {found.found}"
        out.append(Drift(found.alias, "artifact", message))
    return out


# ---------------------------------------------------------------- the surface


def surface_drift(servers: Sequence[LockedServer], fresh: Mapping[str, Surface]) -> list[Drift]:
    """Pinned surface vs a fresh probe, one Drift per tool added, removed or changed."""
    drift: list[Drift] = []
    for server in servers:
        now = fresh.get(server.alias)
        if server.surface is None or now is None or now.hash == server.surface.hash:
            continue
        for change in compare(server.surface, now):
            drift.append(
                Drift(
                    server.alias,
                    "surface",
                    change.line(),
                    diff=change.diff,
                    tool=change.tool,
                    change=change.change,
                )
            )
    return drift
