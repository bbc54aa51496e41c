"""A project on disk: mcp.toml, mcp.lock and the registry they name, as plain values."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from mcpsync.errors import InputError
from mcpsync.project_root import MANIFEST as MANIFEST
from mcpsync.project_root import find_root as find_root

if TYPE_CHECKING:  # imported where used: `mcpsync run` finds the root with none of them
    from mcpsync.artifacts import Lookup, StoreSettings
    from mcpsync.lock.lockfile import Lock
    from mcpsync.manifest.parse import Manifest
    from mcpsync.registry.base import Registry

LOCKFILE = "mcp.lock"
# Requests in flight at once, to the registry and to the artifact stores each (one keep-alive
# connection per request in flight). 100 servers at 50 ms a round trip take 4 waves (~0.2 s)
# at 32 and one at 128; the live registry allows bursts of about 540 requests per IP.
REGISTRY_CONCURRENCY = 128


class Project(Struct):
    root: Path
    manifest: Manifest
    registry_url: str  # where lookups go: --registry, else mcp.toml's, else the official one
    timeout: float = 5.0
    # Whether someone named the registry (--registry, MCPSYNC_REGISTRY or mcp.toml): only then
    # must a pin have come from it. See `pinned_registry`.
    registry_named: bool = True

    @property
    def pinned_registry(self) -> str | None:
        """The registry every registry pin must come from to count as fresh, or None when no
        one named one (a pin locked with a one-off `--registry` then stays valid, as a pin
        from the default does: the same command line works twice, and a bare one after it)."""
        return self.registry_url if self.registry_named else None

    @property
    def lock_path(self) -> Path:
        return self.root / LOCKFILE

    def read_lock(self) -> Lock | None:
        from mcpsync.lock import lockfile

        return lockfile.read(self.lock_path)

    def registry_opener(self) -> Callable[[], Registry]:
        return lambda: self.open_registry(self.registry_url)

    def open_registry(self, url: str) -> Registry:
        """The registry at `url` (a lock's pins may name another than `registry_url`), with
        this project's base directory, timeout and concurrency."""
        from mcpsync.registry import open_registry

        return open_registry(
            url, base_dir=self.root, timeout=self.timeout, concurrency=REGISTRY_CONCURRENCY
        )

    def artifacts_enabled(self, flag: bool | None = None) -> bool:
        """--artifacts/--no-artifacts, then MCPSYNC_ARTIFACTS, then mcp.toml's [lock] artifacts,
        then on for an http(s) registry and off for a `file:` snapshot (made for offline use)."""
        for choice in (flag, _env_flag("MCPSYNC_ARTIFACTS"), self.manifest.artifacts):
            if choice is not None:
                return choice
        return self.registry_url.startswith(("http://", "https://"))

    def artifact_opener(self, flag: bool | None = None) -> Callable[[], Lookup] | None:
        """Opens the artifact stores for resolve(); None when artifacts are off."""
        if not self.artifacts_enabled(flag):
            return None
        from mcpsync.artifacts import Stores

        settings = self.store_settings()
        return lambda: Stores(settings)

    def store_settings(self) -> StoreSettings:
        """How the artifact stores are reached: this project's root, environment, timeout."""
        from mcpsync.artifacts import StoreSettings

        return StoreSettings(
            self.root, dict(os.environ), self.timeout, concurrency=REGISTRY_CONCURRENCY
        )

    def check_aliases(self, aliases: Collection[str], flag: str) -> None:
        from mcpsync.manifest import parse as manifest

        unknown = sorted(set(aliases) - set(self.manifest.servers))
        if unknown:
            raise InputError(
                f"{flag}: no server {', '.join(map(repr, unknown))} in {self.manifest.path}",
                hint=manifest.alias_hint(unknown, self.manifest.servers),
            )


def _env_flag(name: str) -> bool | None:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return None
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise InputError(
        f"{name}={value!r} is not a yes/no value", hint="use 1/0, true/false or on/off"
    )


def registry_url(override: str | None, found: Manifest | None) -> str:
    """--registry / MCPSYNC_REGISTRY, then mcp.toml's [registry] url, then the official one."""
    from mcpsync.registry.base import DEFAULT_REGISTRY

    url = override or (found.registry_url if found else None) or DEFAULT_REGISTRY
    return url.rstrip("/") if url.startswith(("http://", "https://")) else url


def load(root: Path, *, registry_override: str | None = None, timeout: float = 5.0) -> Project:
    from mcpsync.manifest import parse as manifest

    return with_manifest(root, manifest.load(root / MANIFEST), registry_override, timeout)


def with_manifest(
    root: Path, found: Manifest, registry_override: str | None, timeout: float = 5.0
) -> Project:
    """A project for an mcp.toml already parsed (`add`/`remove` lock an edited one)."""
    named = bool(registry_override or found.registry_url)
    return Project(root, found, registry_url(registry_override, found), timeout, named)


def require_root(start: Path) -> Path:
    if not start.is_dir():  # -C DIR that is not there: say so rather than search above it
        raise InputError(f"{start}: no such directory", hint="check the -C DIR argument")
    found = find_root(start)
    if found is None:
        raise InputError(
            f"{MANIFEST} not found in {start.absolute()} or any directory above it",
            hint="run `mcpsync init` to create one there, or pass -C DIR",
        )
    return found
