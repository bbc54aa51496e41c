"""Shared by the probe/verify/export tests: projects whose servers are tests/surface_server.py
(a tiny MCP server written with the SDK) with a tools file the test edits.

Not a test module."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cli_helpers import write_project

SERVER = Path(__file__).resolve().parent / "surface_server.py"

# The draft's own surface vector (mcp-lock/1 test vectors, "surface"): these two tools hash
# to VECTOR_HASH with coverage name, description, inputSchema.
VECTOR_TOOLS: list[dict[str, Any]] = [
    {
        "name": "query",
        "description": "Run a read-only SQL query.",
        "inputSchema": {
            "type": "object",
            "properties": {"sql": {"type": "string"}},
            "required": ["sql"],
        },
    },
    {
        "name": "list_tables",
        "description": "List tables in the connected database.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]
VECTOR_HASH = "sha256-N7FpXYufkx6EkTV30ezEC5M4ITYGQErrU3F2PZDV5Is="


def write_tools(root: Path, tools: Sequence[dict[str, Any]], name: str = "tools.json") -> Path:
    path = root / name
    path.write_text(json.dumps(list(tools)), encoding="utf-8")
    return path


def toml_str(value: str) -> str:
    return json.dumps(value)


def server_table(alias: str, *args: str, env: dict[str, str] | None = None) -> str:
    arg_list = ", ".join(toml_str(a) for a in (str(SERVER), *args))
    lines = [f"[servers.{alias}]", f"command = {toml_str(sys.executable)}", f"args = [{arg_list}]"]
    if env:
        lines.append("env = { " + ", ".join(f"{k} = {toml_str(v)}" for k, v in env.items()) + " }")
    return "\n".join(lines) + "\n"


def surface_project(root: Path, tables: Sequence[str], targets: str = "") -> Path:
    """A project of custom servers (no registry needed to lock it)."""
    return write_project(root, "\n".join(tables) + targets)
