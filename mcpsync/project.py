"""A project on disk: mcp.toml, mcp.lock and the registry they name, as plain values."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from mcpsync import lockfile, manifest
from mcpsync.errors import InputError
from mcpsync.lockfile import Lock
from mcpsync.manifest import Manifest
from mcpsync.registry.base import DEFAULT_REGISTRY, Registry

MANIFEST = "mcp.toml"
LOCKFILE = "mcp.lock"
# Registry requests in flight at once. 100 servers at 50 ms a round trip take 7 waves (~0.4 s)
# at 16 and 4 (~0.2 s) at 32; the live registry allows bursts of about 540 requests per IP.
REGISTRY_CONCURRENCY = 32


@dataclass
class Project:
    root: Path
    manifest: Manifest
    registry_url: str
    timeout: float = 5.0

    @property
    def lock_path(self) -> Path:
        return self.root / LOCKFILE

    def read_lock(self) -> Lock | None:
        return lockfile.read(self.lock_path)

    def registry_opener(self) -> Callable[[], Registry]:
        def opener() -> Registry:
            from mcpsync.registry import open_registry

            return open_registry(
                self.registry_url,
                base_dir=self.root,
                timeout=self.timeout,
                concurrency=REGISTRY_CONCURRENCY,
            )

        return opener

    def check_aliases(self, aliases: Collection[str], flag: str) -> None:
        unknown = sorted(set(aliases) - set(self.manifest.servers))
        if unknown:
            raise InputError(
                f"{flag}: no server {', '.join(map(repr, unknown))} in {self.manifest.path}",
                hint=manifest.alias_hint(unknown, self.manifest.servers),
            )


def registry_url(override: str | None, found: Manifest | None) -> str:
    """--registry / MCPSYNC_REGISTRY, then mcp.toml's [registry] url, then the official one."""
    url = override or (found.registry_url if found else None) or DEFAULT_REGISTRY
    return url.rstrip("/") if url.startswith(("http://", "https://")) else url


def load(root: Path, *, registry_override: str | None = None, timeout: float = 5.0) -> Project:
    found = manifest.load(root / MANIFEST)
    return Project(root, found, registry_url(registry_override, found), timeout)
