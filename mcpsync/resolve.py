"""Inputs + registry -> pins. Keeps every existing pin that still answers its inputs."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from mcpsync.errors import InputError, NotFound, ServerFailures
from mcpsync.launch import LaunchOptions, render, render_custom
from mcpsync.lockfile import Lock, LockedServer, digest
from mcpsync.manifest import Manifest, ServerSpec
from mcpsync.registry.base import Registry, ServerEntry


@dataclass(frozen=True)
class Change:
    """One line of the change report: Added / Updated / Removed / Changed."""

    action: str
    alias: str
    old: str | None = None
    new: str | None = None

    def render(self) -> str:
        if self.action == "Updated":
            return f"Updated {self.alias} {self.old or '(custom)'} -> {self.new or '(custom)'}"
        version = self.old if self.action == "Removed" else self.new
        line = f"{self.action} {self.alias}" + (f" {version}" if version else "")
        return line + " (launch inputs)" if self.action == "Changed" else line


@dataclass(frozen=True)
class LockWarning:
    """Something that does not stop the lock but is likely a mistake (a typo in an env or
    variables key, a server a target cannot write). Reported on stderr and in --json."""

    alias: str
    kind: str  # env | variables | target
    message: str
    key: str | None = None  # the mcp.toml key (env, variables) or the target's label
    suggestions: tuple[str, ...] = ()
    hint: str | None = None

    def render(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"

    def as_json(self) -> dict[str, object]:
        return {
            "server": self.alias,
            "kind": self.kind,
            "key": self.key,
            "suggestions": list(self.suggestions),
            "message": self.message,
            "hint": self.hint,
        }


Warn = Callable[[LockWarning], None]


@dataclass(frozen=True)
class Plan:
    """Which servers keep their lock entry as is, and which need the registry."""

    keep: dict[str, LockedServer]
    refresh: dict[str, str]  # alias -> pinned version to keep if the registry still has it
    resolve: list[str]  # aliases to resolve afresh


def plan(
    manifest: Manifest,
    old: Lock | None,
    registry_url: str,
    *,
    upgrade_all: bool = False,
    upgrade: Collection[str] = (),
    registry_named: bool = True,
) -> Plan:
    """`registry_named`: whether a pin must have come from `registry_url` to be kept; False
    when no one named a registry (a pin from a one-off --registry stays, see the README)."""
    required = registry_url if registry_named else None
    keep: dict[str, LockedServer] = {}
    refresh: dict[str, str] = {}
    todo: list[str] = []
    for alias, spec in sorted(manifest.servers.items()):
        entry = old.get(alias) if old else None
        if spec.is_custom:
            continue
        if upgrade_all or alias in upgrade or not _same_source(spec, entry, required):
            todo.append(alias)
        elif entry is not None and dict(entry.inputs) == spec.inputs():
            keep[alias] = entry
        elif entry is not None and entry.version and _allows(spec, entry.version):
            refresh[alias] = entry.version
        else:
            todo.append(alias)
    return Plan(keep, refresh, todo)


def _same_source(spec: ServerSpec, entry: LockedServer | None, registry: str | None) -> bool:
    if entry is None or entry.name != spec.name:
        return False
    return registry is None or entry.registry == registry


def _allows(spec: ServerSpec, version: str) -> bool:
    """Whether a pin still answers changed inputs: the constraint allows it, and it is no
    prerelease unless prereleases are asked for (else re-resolving may pick a stable one;
    select() falls back to prereleases when nothing stable matches)."""
    from mcpsync.versions import Constraint, is_prerelease

    constraint = Constraint.parse(spec.version)
    if constraint.is_latest or not constraint.allows(version):
        return False
    return spec.prereleases or constraint.names_prerelease or not is_prerelease(version)


def resolve(
    manifest: Manifest,
    old: Lock | None,
    registry_url: str,
    open_registry: Callable[[], Registry],
    *,
    upgrade_all: bool = False,
    upgrade: Collection[str] = (),
    registry_named: bool = True,
    warn: Warn | None = None,
) -> Lock:
    """The new lock. Opens the registry only when some server needs it. `warn` hears of
    mcp.toml keys a (re)resolved server does not use.

    Every server is tried: the ones that fail for their own reason (not in the registry, no
    matching version, unsafe data, a required value missing) are raised together as one
    ServerFailures. A registry that fails (RegistryError) stops the run at once."""
    the_plan = plan(
        manifest,
        old,
        registry_url,
        upgrade_all=upgrade_all,
        upgrade=upgrade,
        registry_named=registry_named,
    )
    names = [manifest.servers[a].name for a in [*the_plan.refresh, *the_plan.resolve]]
    found: Mapping[str, list[ServerEntry] | NotFound] = {}
    if names:
        found = _fetch(open_registry, sorted({n for n in names if n}))
    servers: list[LockedServer] = []
    failures: list[tuple[str, str, InputError]] = []
    for alias, spec in sorted(manifest.servers.items()):
        try:
            servers.append(_server(manifest, spec, the_plan, found, registry_url, warn))
        except InputError as exc:
            failures.append((alias, _detail(spec, exc), exc))
    if failures:
        raise ServerFailures(manifest.path.name, failures)
    return Lock(tuple(servers))


def _server(
    manifest: Manifest,
    spec: ServerSpec,
    the_plan: Plan,
    found: Mapping[str, list[ServerEntry] | NotFound],
    registry_url: str,
    warn: Warn | None,
) -> LockedServer:
    if spec.alias in the_plan.keep:
        return the_plan.keep[spec.alias]
    if spec.is_custom:
        return _custom(spec)
    entries = found[spec.name or ""]
    if isinstance(entries, NotFound):
        raise NotFound(
            f"{manifest.path.name}: server '{spec.alias}': {entries.message}",
            hint=f"{entries.hint or ''}check `name` in mcp.toml "
            "(`mcpsync search TEXT` lists matching names)",
        )
    entry = _pick(spec, entries, the_plan.refresh.get(spec.alias), registry_url)
    locked = _locked(spec, entry, registry_url)
    if warn is not None:
        _warn_unused(manifest, spec, entry, warn)
    return locked


def _detail(spec: ServerSpec, exc: InputError) -> str:
    """The message without the words that name the server, for a line that starts with it."""
    alias = re.escape(spec.alias)
    named = re.match(rf"(?:Server '{alias}'(?: \([^)]*\))?|.*?: server '{alias}'): ", exc.message)
    return exc.message[named.end() :] if named else exc.message


def _fetch(
    open_registry: Callable[[], Registry], names: list[str]
) -> Mapping[str, list[ServerEntry] | NotFound]:
    registry = open_registry()
    try:
        found = registry.versions_or_missing(names)
        missing = {name: got for name, got in found.items() if isinstance(got, NotFound)}
        if missing:  # close names for each, while the registry is open
            found = {**found, **_with_suggestions(registry, missing)}
        return found
    finally:
        registry.close()


def _with_suggestions(registry: Registry, missing: Mapping[str, NotFound]) -> dict[str, NotFound]:
    """Each missing name's NotFound with "did you mean: …? " as its hint (or none). The
    searches behind the hints run concurrently: a run with many typos waits once, not once
    per typo."""
    from concurrent.futures import ThreadPoolExecutor

    from mcpsync.suggest import did_you_mean, registry_names

    def suggest(name: str) -> str:
        return did_you_mean([name], registry_names(registry, name))

    with ThreadPoolExecutor(min(8, len(missing)), thread_name_prefix="mcpsync-hint") as pool:
        hints = dict(zip(missing, pool.map(suggest, missing), strict=True))
    out: dict[str, NotFound] = {}
    for name, original in missing.items():
        out[name] = NotFound(original.message, hint=hints[name] or None)
        out[name].server = original.server
    return out


def _pick(
    spec: ServerSpec, entries: Sequence[ServerEntry], pinned: str | None, registry_url: str
) -> ServerEntry:
    by_version = {e.version: e for e in entries}
    if pinned is not None and pinned in by_version:
        return by_version[pinned]
    from mcpsync.versions import Constraint, select

    constraint = Constraint.parse(spec.version)
    latest = next((e.version for e in entries if e.is_latest), None)
    chosen = select(list(by_version), constraint, prereleases=spec.prereleases, latest=latest)
    if chosen is None:
        raise InputError(
            f"Server '{spec.alias}' ({spec.name}): no version in {registry_url} "
            f"matches {spec.version!r}",
            hint=f"available: {_some(list(by_version))}; change `version` in mcp.toml",
        )
    return by_version[chosen]


def _some(versions: list[str], limit: int = 8) -> str:
    shown = ", ".join(versions[:limit])
    return shown + (f", … ({len(versions)} in all)" if len(versions) > limit else "") or "none"


def _options(spec: ServerSpec) -> LaunchOptions:
    return LaunchOptions(
        alias=spec.alias,
        package=spec.package,
        transport=spec.transport,
        args=spec.args,
        env=dict(spec.env),
        headers=dict(spec.headers),
        variables=dict(spec.variables),
    )


def _locked(spec: ServerSpec, entry: ServerEntry, registry_url: str) -> LockedServer:
    launch = render(entry.server, _options(spec))
    description = spec.description or entry.server.get("description")
    return LockedServer(
        alias=spec.alias,
        launch=launch,
        inputs=spec.inputs(),
        name=spec.name,
        version=entry.version,
        registry=registry_url,
        digest=digest(entry.server),
        description=description if isinstance(description, str) else None,
    )


def _warn_unused(manifest: Manifest, spec: ServerSpec, entry: ServerEntry, warn: Warn) -> None:
    """env keys the chosen package does not declare, variables keys nothing reads: typos,
    most likely (an extra env var may be deliberate, so this warns and never fails)."""
    from mcpsync.launch import unused_inputs

    for unused in unused_inputs(entry.server, _options(spec)):
        if unused.close:
            hint = f"did you mean: {', '.join(unused.close)}?"
        else:
            hint = f"{unused.known_label}: {', '.join(unused.known) or 'none'}"
        where = f"{spec.name} {entry.version} ({unused.source})"
        warn(
            LockWarning(
                alias=spec.alias,
                kind=unused.field,
                key=unused.key,
                suggestions=unused.close,
                message=f"{manifest.path.name}: server '{spec.alias}': `{unused.field}` key "
                f"'{unused.key}' is {unused.problem} {where}; {hint}",
            )
        )


def _custom(spec: ServerSpec) -> LockedServer:
    launch = render_custom(_options(spec), command=spec.command, url=spec.url)
    return LockedServer(
        alias=spec.alias, launch=launch, inputs=spec.inputs(), description=spec.description
    )


def changes(old: Lock | None, new: Lock) -> list[Change]:
    """uv-style report lines, sorted by alias."""
    before = {s.alias: s for s in old.servers} if old else {}
    after = {s.alias: s for s in new.servers}
    out: list[Change] = []
    for alias in sorted(set(before) | set(after)):
        a, b = before.get(alias), after.get(alias)
        if a is None and b is not None:
            out.append(Change("Added", alias, new=b.version))
        elif b is None and a is not None:
            out.append(Change("Removed", alias, old=a.version))
        elif a is not None and b is not None:
            # Only what a user runs counts: a new constraint that keeps the pin is no change.
            if a.version != b.version:
                out.append(Change("Updated", alias, a.version, b.version))
            elif a.launch != b.launch:
                out.append(Change("Changed", alias, new=b.version))
    return out
