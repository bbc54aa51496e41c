"""Sync targets, one module per kind behind the interface in targets/base.py.

May import: lock (the pinned entries), manifest, launch.checks, edit, fsutil and errors."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcpsync.manifest.parse import TargetSpec
from mcpsync.sync.targets.base import Target

if TYPE_CHECKING:
    from mcpsync.lock.lockfile import LockedServer
    from mcpsync.sync.targets.clients import ClientFormat

# kind -> "module:class"; modules are imported only for kinds a project uses
KINDS: dict[str, str] = {
    "holodeck-agent": "mcpsync.sync.targets.holodeck:AgentTarget",
    "holodeck-global": "mcpsync.sync.targets.holodeck:GlobalTarget",
    "claude-code": "mcpsync.sync.targets.clients:ClientTarget",
    "cursor": "mcpsync.sync.targets.clients:ClientTarget",
    "vscode": "mcpsync.sync.targets.vscode:VSCodeTarget",
    "codex": "mcpsync.sync.targets.codex:CodexTarget",
    "gemini": "mcpsync.sync.targets.clients:ClientTarget",
    "claude-desktop": "mcpsync.sync.targets.clients:ClientTarget",
    "windsurf": "mcpsync.sync.targets.clients:ClientTarget",
    "zed": "mcpsync.sync.targets.clients:ClientTarget",
}


def make(spec: TargetSpec) -> Target:
    from mcpsync.errors import InputError

    where = KINDS.get(spec.kind)
    if where is None:
        raise InputError(f"mcp.toml: target kind '{spec.kind}' is not supported yet")
    module, cls = where.split(":")
    return getattr(importlib.import_module(module), cls)(spec)  # type: ignore[no-any-return]


def scope(spec: TargetSpec) -> str:
    """Where a target's file lives: "project" (in the repository) or "user" (in the home
    directory, shared with the user and other projects), as the target itself decides."""
    if spec.kind == "holodeck-agent":
        return "project"
    if spec.kind == "holodeck-global":
        return "user"
    if spec.scope is not None:
        return spec.scope
    if spec.kind == "codex":
        return "project"
    return "project" if client_format(spec.kind).project_file else "user"


def client_format(kind: str) -> ClientFormat:
    """The format of a JSON client kind. Here, above both modules, because VS Code's (with its
    `inputs`) lives in vscode.py, which builds on clients.py."""
    if kind == "vscode":
        from mcpsync.sync.targets.vscode import VSCODE

        return VSCODE
    from mcpsync.sync.targets.clients import CLIENTS

    return CLIENTS[kind]


def rendered(
    spec: TargetSpec, servers: Sequence[LockedServer]
) -> dict[str, tuple[str, dict[str, Any]]]:
    """alias -> (entry name, the entry `sync` writes for it in this target), through each
    target kind's own renderer, with no file to read (mcp.lock export, `import` telling
    entries sync wrote). Raises InputError as sync would."""
    from mcpsync.sync.targets.base import label, mapped_names, selected

    where = label(spec)
    if spec.kind.startswith("holodeck-"):
        from mcpsync.sync.targets import holodeck

        named = mapped_names(selected(spec, servers), spec, holodeck.NAME_PATTERN, dash="_")
        return {s.alias: (n, holodeck.render_entry(n, s, where)) for n, s in named.items()}
    from mcpsync.sync.targets.clients import NAME_PATTERN, render_all

    style, render = _client_renderer(spec.kind)
    out = render_all(spec, servers, style, render, {}).entries
    named = mapped_names(selected(spec, servers), spec, NAME_PATTERN)
    return {s.alias: (n, out[n]) for n, s in named.items()}


def _client_renderer(kind: str) -> tuple[Any, Any]:
    if kind == "vscode":
        from mcpsync.sync.targets.vscode import VSCODE

        return VSCODE.style, VSCODE.render
    if kind == "codex":
        from mcpsync.sync.targets import codex
        from mcpsync.sync.targets.render import no_syntax

        return no_syntax, codex.render  # key order is no matter to the callers
    from mcpsync.sync.targets.clients import CLIENTS

    fmt = CLIENTS.get(kind)
    if fmt is None:
        from mcpsync.errors import InputError

        raise InputError(f"mcp.toml: target kind '{kind}' is not supported yet")
    return fmt.style, fmt.render
