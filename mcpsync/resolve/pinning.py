"""What lock pins for one server beyond its version, once the registry has answered: the package
version in place of a server.json's `latest` (its store's current one), and the artifact record,
or why there is none (artifacts.model.NO_ARTIFACT). resolve.py asks, per server, as it settles.

What the old lock recorded is kept where it is still true: a `latest` pinned while the server's
pin stays, the record of a package that did not change while the stores are off or cannot be
reached (so one server's store never wedges a lock of the others).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

from msgspec import Struct, field

from mcpsync.artifacts import CURRENT_KINDS, Artifact, Wanted, wanted
from mcpsync.errors import EnvFailure, InputError
from mcpsync.launch import LATEST, Launch
from mcpsync.lock.lockfile import Lock, LockedServer
from mcpsync.manifest.parse import ServerSpec
from mcpsync.registry.base import ServerEntry
from mcpsync.resolve.lockwarning import LockWarning

if TYPE_CHECKING:
    from mcpsync.artifacts import Lookup

Warn = Callable[["LockWarning"], None]

# The launchers that put the package version on the command line (npx, uvx, dnx): `latest`
# there is no pin. An OCI `latest` is a real tag, pinned by its image digest.
NAMED_VERSIONS = ("npm", "pypi", "nuget")


def needs_latest(launch: Launch) -> bool:
    """A launch whose package version is the server.json's `latest`, which pins nothing."""
    return launch.package_version == LATEST and launch.registry_type in NAMED_VERSIONS


class Pins(Struct, frozen=True):
    """What the old lock lets a (re)resolved entry keep."""

    file: str = "mcp.toml"  # for warnings
    refresh: Collection[str] = ()  # aliases whose pin stays (looked up again at that version)
    old: Mapping[str, LockedServer] = field(default_factory=dict)

    @classmethod
    def of(
        cls, file: str, refresh: Collection[str], old: Lock | None, refetch: Collection[str]
    ) -> Pins:
        """The old entries, without the ones triage found edited (none of their records can
        be trusted)."""
        kept = {s.alias: s for s in old.servers if s.alias not in refetch} if old else {}
        return cls(file, frozenset(refresh), kept)

    def latest(
        self,
        spec: ServerSpec,
        entry: ServerEntry,
        launch: Launch,
        stores: Lookup | None,
        abort: threading.Event,
        warn: Warn,
    ) -> str:
        """The version to pin a package whose server.json says `latest` to: the one the lock
        has while the server's pin stays, else its store's current version (with a warning).
        Refused when no store can be asked: the server's own version may not exist there."""

        before = self.old.get(spec.alias)
        if (
            spec.alias in self.refresh
            and before is not None
            and before.version == entry.version
            and before.launch.identifier == launch.identifier
            and before.launch.package_version not in (None, LATEST)
        ):
            return str(before.launch.package_version)
        want = wanted(launch)
        if stores is None or not spec.artifacts or want is None or want.kind not in CURRENT_KINDS:
            raise _no_store_for_latest(spec, entry, launch, stores is not None)
        current = stores.current(spec.alias, want, abort)
        warn(
            LockWarning(
                alias=spec.alias,
                kind="latest",
                message=f"{self.file}: server '{spec.alias}': {spec.name} {entry.version} "
                f"gives its {launch.registry_type} package '{launch.identifier}' the version "
                f"'latest'; pinned {current}, its store's current version",
                hint=f"`mcpsync lock -P {spec.alias}` takes a newer one",
            )
        )
        return current

    def artifact(
        self,
        spec: ServerSpec,
        want: Wanted | None,
        stores: Lookup | None,
        abort: threading.Event,
        warn: Warn,
    ) -> tuple[Artifact | None, str | None]:
        """The [server.artifact] record for `want`, or None and why (NO_ARTIFACT). The lock's
        record of the same package is kept when the stores are off or cannot be reached: it
        is as true as it was (so `lock -U --no-artifacts` drops no digest of an unchanged
        version). A store that fails for a package the lock has no record of fails the run."""
        if want is None:
            return None, None
        if not spec.artifacts:
            return None, "opted-out"
        before = self.old.get(spec.alias)
        same = before if before is not None and wanted(before.launch) == want else None
        if stores is None:
            return (same.artifact, None) if same and same.artifact else (None, "artifacts-off")
        try:
            return stores.lookup(spec.alias, want, abort), None
        except EnvFailure as exc:
            if same is None or abort.is_set():
                raise
            warn(_unreachable(self.file, spec, exc, same.artifact is not None))
            return (same.artifact, None) if same.artifact else (None, "store-unreachable")


def _no_store_for_latest(
    spec: ServerSpec, entry: ServerEntry, launch: Launch, stores_on: bool
) -> InputError:
    what = (
        f"Server '{spec.alias}' ({spec.name} {entry.version}): its {launch.registry_type} "
        f"package '{launch.identifier}' says version 'latest', which pins nothing (and "
        f"{entry.version}, the server's version, need not exist as a package version)"
    )
    if launch.registry_type not in CURRENT_KINDS:
        hint = (
            f"mcpsync cannot ask that package's store for its current version; declare the "
            f"server with command and args under [servers.{spec.alias}], pinning a version"
        )
    elif stores_on:  # on for the run, off for this server
        hint = (
            f"lock asks the package's store for its current version and pins that; remove "
            f"`artifacts = false` from [servers.{spec.alias}] so that it may"
        )
    else:
        hint = (
            "lock asks the package's store for its current version and pins that, and "
            "artifact lookups are off for this lock: run `mcpsync lock --artifacts` (or set "
            "[lock] artifacts = true), or pick a server version whose package names its "
            "version (`mcpsync show NAME` lists them)"
        )
    return InputError(what, hint=hint)


def _unreachable(file: str, spec: ServerSpec, exc: EnvFailure, kept: bool) -> LockWarning:
    """An entry whose pin did not change but whose store failed: the lock goes on without
    (or with the earlier) record, so that this server does not wedge every other command."""

    what = "kept the digest recorded before" if kept else "locked it without a digest"
    reason = exc.message.removeprefix(f"Server '{spec.alias}': ")
    return LockWarning(
        alias=spec.alias,
        kind="artifact",
        message=f"{file}: server '{spec.alias}': {reason}; {what}",
        hint="`mcpsync lock` looks it up again when its store answers",
    )
