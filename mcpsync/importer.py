"""`mcpsync import`: adopt existing MCP client and HoloDeck configs into mcp.toml.

Reading each format lives in import_read.py, matching entries to registry servers in
import_match.py; this module decides aliases and targets and produces mcp.toml's new text.
Plain values in and out; the imported files themselves are never written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpsync.errors import InputError
from mcpsync.import_read import KINDS, Entry, detect_kind, read_entries
from mcpsync.registry.base import Registry


@dataclass
class Source:
    """One file to import."""

    path: Path  # absolute
    shown: str  # as the user named it
    kind: str
    entries: list[Entry]


@dataclass
class Imported:
    alias: str
    table: dict[str, Any]  # the [servers.ALIAS] table
    entries: list[Entry]  # the file entries it came from (several files may agree)
    registry_name: str | None = None
    how: str | None = None  # what matched it ("npm package @x/y")
    new: bool = True  # False: mcp.toml already held exactly this table


@dataclass
class ImportPlan:
    text: str  # mcp.toml's new text
    servers: list[Imported]
    targets: list[dict[str, Any]] = field(default_factory=list)  # [[targets]] added
    warnings: list[str] = field(default_factory=list)

    @property
    def exports(self) -> list[str]:
        return sorted({n for s in self.servers for e in s.entries for n in e.exports})

    @property
    def added(self) -> list[str]:
        return [s.alias for s in self.servers if s.new]


def read_source(path: Path, shown: str, kind: str | None) -> Source:
    from mcpsync.fsutil import read_text

    text = read_text(path)  # a file that is not UTF-8 is an InputError naming it
    if text is None:
        raise InputError(f"{shown} not found", hint="name an existing config file")
    if kind is not None and kind not in KINDS:
        raise InputError(f"--kind {kind!r} is not one of: {', '.join(KINDS)}")
    kind = kind or detect_kind(path, text)
    return Source(path, shown, kind, read_entries(path, shown, text, kind))


def plan(
    sources: Sequence[Source],
    manifest_text: str,
    manifest_path: Path,
    registry: Registry | None,
    *,
    home: Path,
    add_targets: bool = True,
) -> ImportPlan:
    """mcp.toml's text with every entry of `sources` added (registry servers where `registry`
    matches them, else custom) and, with `add_targets`, a [[targets]] entry per file."""
    from mcpsync import manifest_edit
    from mcpsync.manifest import parse_toml

    data = parse_toml(manifest_text, manifest_path)
    entries = [e for s in sources for e in s.entries]
    matches = {}
    if registry is not None:
        from mcpsync.import_match import match_entries

        matches = match_entries(entries, registry)
    servers = _servers(entries, matches, data.get("servers") or {}, manifest_path)
    by_entry = {id(e): s.alias for s in servers for e in s.entries}
    everyone = set(data.get("servers") or {}) | {s.alias for s in servers}
    targets: list[dict[str, Any]] = []
    warnings: list[str] = []
    if add_targets:
        for source in sources:
            aliases = [by_entry[id(e)] for e in source.entries]
            target = _target(source, manifest_path.parent, home, aliases, everyone)
            found = _has_target(data.get("targets") or [], target)
            if found is None:
                targets.append(target)
            elif isinstance(found.get("servers"), list):
                left = sorted(set(aliases) - set(found["servers"]))
                if left:
                    warnings.append(
                        f"{source.shown}: its [[targets]] entry in {manifest_path.name} lists "
                        f"`servers` without {', '.join(left)}, so `sync` would remove them "
                        "from the file; add them to that list"
                    )
    new = {s.alias: s.table for s in servers if s.new}
    text = manifest_edit.add_tables(manifest_text, manifest_path, new, targets)
    return ImportPlan(text, servers, targets, warnings)


# ------------------------------------------------------------------------ servers and aliases


def _servers(
    entries: list[Entry], matches: dict[int, Any], existing: dict[str, Any], manifest: Path
) -> list[Imported]:
    from mcpsync.manifest_edit import default_alias

    out: dict[str, Imported] = {}
    for i, entry in enumerate(entries):
        match = matches.get(i)
        table = match.table if match is not None else custom_table(entry)
        alias = default_alias(entry.key)
        seen = out.get(alias)
        if seen is not None:
            if seen.table != table:
                raise _conflict(entry, alias, seen.entries[0].source)
            seen.entries.append(entry)
            continue
        if alias in existing and existing[alias] != table:
            raise _conflict(entry, alias, manifest.name)
        out[alias] = Imported(
            alias,
            table,
            [entry],
            registry_name=match.name if match is not None else None,
            how=match.how if match is not None else None,
            new=alias not in existing,
        )
    return list(out.values())


def _conflict(entry: Entry, alias: str, other: str) -> InputError:
    return InputError(
        f"{entry.where} differs from server '{alias}' in {other}. Nothing written.",
        hint="make the two agree, or rename one of them, then import again",
    )


def custom_table(entry: Entry) -> dict[str, Any]:
    """A server mcp.toml declares itself: command/args/env, or url/headers."""
    table: dict[str, Any]
    if entry.url:
        table = {"url": entry.url}
        if entry.headers:
            table["headers"] = dict(entry.headers)
        if entry.transport == "sse":
            table["transport"] = "sse"
    else:
        table = {"command": entry.command}
        if entry.args:
            table["args"] = list(entry.args)
        if entry.env:
            table["env"] = dict(entry.env)
    if entry.description:
        table["description"] = entry.description
    return table


# ------------------------------------------------------------------------ targets


def _target(
    source: Source, root: Path, home: Path, aliases: list[str], everyone: set[str]
) -> dict[str, Any]:
    """The [[targets]] entry that makes `sync` write this file back, with the same servers."""
    target: dict[str, Any] = {"kind": source.kind}
    default, user_default = _defaults(source.kind, root, home)
    path = source.path
    if source.kind == "holodeck-agent" or path not in (default, user_default):
        target["path"] = _relative(path, root, home)
    if path == user_default and default is not None:
        target["scope"] = "user"
    elif path not in (default, user_default) and default is not None:
        target["scope"] = "project" if path.is_relative_to(root) else "user"
    if set(aliases) != everyone:  # the file keeps exactly the servers it had
        target["servers"] = sorted(set(aliases))
    return target


def _defaults(kind: str, root: Path, home: Path) -> tuple[Path | None, Path | None]:
    """(project file, user file) of a target kind, as sync would pick them."""
    if kind == "holodeck-agent":
        return None, None
    if kind == "holodeck-global":
        from mcpsync.targets.holodeck import global_file

        return None, global_file(home)
    if kind == "codex":
        from mcpsync.targets.codex import PROJECT_FILE, user_config

        return root / PROJECT_FILE, user_config(home)
    from mcpsync.targets import client_format

    fmt = client_format(kind)
    try:
        user = fmt.user_file(home)
    except InputError:  # Claude Desktop on Linux has no default file
        user = None
    return (root / fmt.project_file if fmt.project_file else None), user


def _relative(path: Path, root: Path, home: Path) -> str:
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    if path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return path.as_posix()


def _has_target(existing: list[Any], target: dict[str, Any]) -> dict[str, Any] | None:
    """The [[targets]] entry already writing the same file, if any."""

    def key(t: Any) -> Any:
        return {k: v for k, v in t.items() if k != "servers"} if isinstance(t, dict) else t

    return next((t for t in existing if key(t) == key(target)), None)
