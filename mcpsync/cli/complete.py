"""Shell completion values (click's): aliases from mcp.toml, target kinds.

Completion runs before any command callback, so nothing here may fail or be slow: mcp.toml is
read with the standard TOML parser, unvalidated, and any problem completes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem


def _manifest(ctx: click.Context) -> dict[str, Any]:
    root = ctx.find_root().params.get("directory") or Path.cwd()
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: completion of aliases needs 3.11
        return {}
    for folder in [Path(root), *Path(root).resolve().parents]:
        path = folder / "mcp.toml"
        if path.is_file():
            try:
                return tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return {}
    return {}


def aliases(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    servers = _manifest(ctx).get("servers")
    if not isinstance(servers, dict):
        return []
    return [CompletionItem(alias) for alias in sorted(servers) if alias.startswith(incomplete)]


def target_kinds(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The kinds mcp.toml's [[targets]] declare (`sync --target` refuses any other), in file
    order; every kind when there is no readable mcp.toml."""
    targets = _manifest(ctx).get("targets")
    declared = (
        [t.get("kind") for t in targets if isinstance(t, dict)] if isinstance(targets, list) else []
    )
    if not declared:
        from mcpsync.targets import KINDS

        declared = list(KINDS)
    kinds = [k for k in dict.fromkeys(declared) if isinstance(k, str)]
    return [CompletionItem(kind) for kind in kinds if kind.startswith(incomplete)]
