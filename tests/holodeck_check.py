"""Load agent.yaml files through HoloDeck's own config path; print the merged tools as JSON.

Run with the interpreter of a venv that has holodeck-ai installed (not mcpsync's):

    $MCPSYNC_HOLODECK_PYTHON tests/holodeck_check.py agents/a/agent.yaml [...]

Each agent goes through `holodeck.config.loader.load_agent_with_config`, the call
`holodeck chat` makes: ${VAR} substitution from the environment, the user's
~/.holodeck/config.yaml (from HOME) merged in, then validation against the Agent schema.
The output is one JSON document:

    {"holodeck": "0.7.1", "agents": [{"path": ..., "ok": true, "tools": [...]},
                                     {"path": ..., "ok": false, "error": "..."}]}

This file must not import mcpsync: it runs where only HoloDeck is installed.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from typing import Any

FIELDS = (
    "name",
    "description",
    "type",
    "transport",
    "command",
    "args",
    "env",
    "url",
    "headers",
    "registry_name",
    "file",
    "function",
)


# MCPTool's per-tool settings, shown with `--settings` (as resolved: defaults included)
SETTINGS = (
    "defer_loading",
    "load_tools",
    "load_prompts",
    "request_timeout",
    "is_retrieval",
    "timeout",
    "sse_read_timeout",
    "terminate_on_close",
    "encoding",
    "env_file",
    "config",
)


def tool_view(tool: Any, fields: tuple[str, ...] = FIELDS) -> dict[str, Any]:
    """The fields a config writer controls, as HoloDeck resolved them (enums as values)."""
    data = tool.model_dump(mode="json", exclude_none=True)
    return {key: data[key] for key in fields if key in data}


def load(path: str, fields: tuple[str, ...] = FIELDS) -> dict[str, Any]:
    from holodeck.config.loader import load_agent_with_config

    try:
        agent, _config, _loader = load_agent_with_config(path)
    except Exception as exc:  # noqa: BLE001 - report every failure as data
        return {"path": path, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {"path": path, "ok": True, "tools": [tool_view(t, fields) for t in agent.tools or []]}


def main(argv: list[str]) -> int:
    import logging

    logging.disable(logging.CRITICAL)  # HoloDeck logs to stdout/stderr; keep stdout JSON
    fields = FIELDS
    if argv[:1] == ["--settings"]:
        argv, fields = argv[1:], (*FIELDS, *SETTINGS)
    report = {"holodeck": version("holodeck-ai"), "agents": [load(p, fields) for p in argv]}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
