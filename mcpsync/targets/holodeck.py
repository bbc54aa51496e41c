"""HoloDeck targets: agent.yaml `tools:` and the global config's `mcp_servers:`.

agent.yaml is a project file: its `type: mcp` tools are generated from the lock, and a tool
sync did not write (per mcp.synced.toml, see ownership.py) is taken over only with --adopt.

Rules from HoloDeck 0.7.1 (holodeck/models/tool.py MCPTool, config/loader.py): names match
^[0-9A-Za-z_]+$, unknown keys are rejected, stdio `command` is one of npx/node/uvx/docker,
transports are stdio/sse/http (http = streamable HTTP), `${VAR}` is substituted at load time,
global entries without `type: mcp` are dropped when merged into an agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpsync.errors import InputError
from mcpsync.lockfile import LockedServer
from mcpsync.manifest import TargetSpec
from mcpsync.ownership import foreign
from mcpsync.targets.base import (
    REFERENCE_RE,
    FileChange,
    SyncContext,
    label,
    map_change,
    mapped_names,
    removals,
    selected,
    stamp,
)

NAME_PATTERN = r"[0-9A-Za-z_]+"
COMMANDS = ("npx", "node", "uvx", "docker")
TRANSPORTS = {"stdio": "stdio", "sse": "sse", "streamable-http": "http"}


def render_entry(name: str, server: LockedServer, where: str) -> dict[str, Any]:
    """One HoloDeck MCP tool entry (key order as HoloDeck documents it)."""
    launch = server.launch
    entry: dict[str, Any] = {
        "name": name,
        "description": _literal(server.description or server.name or server.alias),
        "type": "mcp",
        "transport": TRANSPORTS[launch.transport],
    }
    if launch.transport == "stdio":
        entry.update(_stdio(server, where))
    else:
        if launch.command:  # a package that serves HTTP locally: HoloDeck would only connect
            raise InputError(
                f"Server '{server.alias}' cannot be written to {where}: it is a "
                f"{launch.registry_type or 'local'} package serving {launch.url}, and HoloDeck "
                f"connects to a url but never starts `{launch.command}` for it",
                hint='set `transport = "stdio"` in mcp.toml if the package offers it, or '
                "start the server yourself and declare it as a custom server with `url`",
            )
        entry["url"] = launch.url
        if launch.headers:
            entry["headers"] = dict(launch.headers)
    if server.name:
        entry["registry_name"] = server.name
    return entry


def _literal(text: str) -> str:
    """Free text with `${NAME}` defused: HoloDeck substitutes every ${NAME} in the file's raw
    text at load and fails when NAME is unset, so one in a registry description would break
    every load of the agent."""
    return REFERENCE_RE.sub(r"$ {\1}", text)


def _stdio(server: LockedServer, where: str) -> dict[str, Any]:
    launch = server.launch
    if launch.command not in COMMANDS:
        raise InputError(
            f"Server '{server.alias}' cannot be written to {where}: HoloDeck runs only "
            f"{', '.join(COMMANDS)}, and this server needs "
            f"{launch.command or f'a {launch.registry_type} package'}",
            hint="set `package` in mcp.toml to npm, pypi, oci or remote if the server offers "
            "one, or leave it out of this target with `servers = [...]`",
        )
    out: dict[str, Any] = {"command": launch.command, "args": list(launch.args)}
    if launch.env:
        out["env"] = dict(launch.env)
    return out


def _entries(spec: TargetSpec, servers: Sequence[LockedServer]) -> dict[str, dict[str, Any]]:
    where = label(spec)
    named = mapped_names(selected(spec, servers), spec, NAME_PATTERN, dash="_")
    return {name: render_entry(name, server, where) for name, server in named.items()}


@dataclass
class AgentTarget:
    """agent.yaml files: every `type: mcp` tool is generated from the lock."""

    spec: TargetSpec

    def plan(self, servers: Sequence[LockedServer], ctx: SyncContext) -> list[FileChange]:
        entries = _entries(self.spec, servers)
        inputs = stamp("holodeck-agent", "tools", entries)
        changes = []
        for path in self._files(ctx):
            old = ctx.read(path) or ""
            if ctx.unchanged_since_sync(path, old, inputs):
                new = old  # a no-op sync of an untouched file needs no parse (and every
                # `type: mcp` tool in it is one sync wrote)
            else:
                new, tools = _edit_tools(old, path, entries)
                ctx.take(path, foreign(ctx.recorded(path), tools, entries))
            owned = tuple(entries)
            changes.append(FileChange(path, old, new, label(self.spec), owned, stamp=inputs))
        return changes

    def _files(self, ctx: SyncContext) -> list[Path]:
        pattern = self.spec.path or "agent.yaml"
        try:
            found = _glob(ctx.resolve(pattern))
        except OSError as exc:  # e.g. a path component longer than the file system allows
            raise InputError(
                f"Cannot search for agent.yaml files of target {label(self.spec)} "
                f"('{pattern}'): {exc.strerror}",
                hint="fix `path` in mcp.toml (a glob relative to mcp.toml)",
            ) from None
        if not found:
            raise InputError(
                f"No agent.yaml found for target {label(self.spec)}: '{pattern}' matches "
                f"nothing under {ctx.root}",
                hint="fix `path` in mcp.toml (a glob relative to mcp.toml)",
            )
        return found


def _glob(pattern: Path) -> list[Path]:
    """Files matching an absolute glob: Path.glob takes only relative patterns, so glob the
    part from the first wildcard on under the fixed directory before it."""
    parts = pattern.parts
    first = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), None)
    if first is None:
        return [pattern] if pattern.is_file() else []
    base, rest = Path(*parts[:first]), str(Path(*parts[first:]))
    return sorted(p for p in base.glob(rest) if p.is_file())


def _edit_tools(
    text: str, path: Path, entries: dict[str, dict[str, Any]]
) -> tuple[str, list[tuple[str, Any]]]:
    """agent.yaml with its `type: mcp` tools replaced by `entries`, parsing the file once;
    and the (name, tool) of every `type: mcp` tool it held."""
    from mcpsync.edit import yamledit

    taken: list[dict[str, Any]] = []  # other tools named like one of our entries
    mcp: list[tuple[str, Any]] = []

    def managed(item: Any) -> bool:  # called on every item of `tools`
        if _is_mcp(item):
            name = item.get("name")
            mcp.append((name if isinstance(name, str) else "", item))
            return True
        if isinstance(item, dict) and item.get("name") in entries:
            taken.append(item)
        return False

    items = list(entries.values())
    new = yamledit.replace_list_items(text, "tools", managed, items, path=str(path))
    if taken:
        raise InputError(
            f"{path}: a {taken[0].get('type')} tool is already named '{taken[0]['name']}'. "
            "File not modified.",
            hint="rename the server's alias in mcp.toml",
        )
    return new, mcp


def _is_mcp(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "mcp"


@dataclass
class GlobalTarget:
    """~/.holodeck/config.yaml `mcp_servers:`, shared: only this project's entries change."""

    spec: TargetSpec

    def plan(self, servers: Sequence[LockedServer], ctx: SyncContext) -> list[FileChange]:
        from mcpsync.edit import yamledit

        path = self._path(ctx)
        old = ctx.read(path)
        text = old or ""
        entries = _entries(self.spec, servers)
        data = yamledit.load(text, path=str(path)) or {}
        existing = _by_name(data.get("mcp_servers") if isinstance(data, dict) else None)
        ours = set(entries) | removals(self.spec, ctx, path, existing, entries, shared=True)
        new = yamledit.replace_list_items(
            text,
            "mcp_servers",
            lambda item: isinstance(item, dict) and item.get("name") in ours,
            list(entries.values()),
            path=str(path),
        )
        return map_change(self.spec, path, old, new, entries, shared=True)

    def _path(self, ctx: SyncContext) -> Path:
        return ctx.resolve(self.spec.path) if self.spec.path else global_file(ctx.home)


def global_file(home: Path) -> Path:
    """HoloDeck's global config: ~/.holodeck/config.yml if there is one, else config.yaml."""
    folder = home / ".holodeck"
    yml = folder / "config.yml"
    return yml if yml.exists() else folder / "config.yaml"


def _by_name(items: Any) -> dict[str, Any]:
    if not isinstance(items, list):
        return {}
    return {i["name"]: i for i in items if isinstance(i, dict) and isinstance(i.get("name"), str)}
