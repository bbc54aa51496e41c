"""Sync targets, one module per kind behind the interface in targets/base.py."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from mcpsync.manifest import TargetSpec
from mcpsync.targets.base import Target

if TYPE_CHECKING:
    from mcpsync.targets.clients import ClientFormat

# kind -> "module:class"; modules are imported only for kinds a project uses
KINDS: dict[str, str] = {
    "holodeck-agent": "mcpsync.targets.holodeck:AgentTarget",
    "holodeck-global": "mcpsync.targets.holodeck:GlobalTarget",
    "claude-code": "mcpsync.targets.clients:ClientTarget",
    "cursor": "mcpsync.targets.clients:ClientTarget",
    "vscode": "mcpsync.targets.vscode:VSCodeTarget",
    "codex": "mcpsync.targets.codex:CodexTarget",
    "gemini": "mcpsync.targets.clients:ClientTarget",
    "claude-desktop": "mcpsync.targets.clients:ClientTarget",
    "windsurf": "mcpsync.targets.clients:ClientTarget",
    "zed": "mcpsync.targets.clients:ClientTarget",
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
        from mcpsync.targets.vscode import VSCODE

        return VSCODE
    from mcpsync.targets.clients import CLIENTS

    return CLIENTS[kind]
