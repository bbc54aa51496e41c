"""Which target kind a config file is, from its name and place, else from what it holds:
for `import` (import_read.detect_kind) and for the files of a removed target
(targets/removed.py), which sync edits without a [[targets]] entry to say."""

from __future__ import annotations

import re
from pathlib import Path

# By file name, then by (parent directory, file name): the files each client reads.
_BY_NAME = {
    ".mcp.json": "claude-code",
    ".claude.json": "claude-code",
    "claude_desktop_config.json": "claude-desktop",
    "mcp_config.json": "windsurf",
    "agent.yaml": "holodeck-agent",
    "agent.yml": "holodeck-agent",
}
_BY_DIR = {
    (".cursor", "mcp.json"): "cursor",
    (".vscode", "mcp.json"): "vscode",
    ("User", "mcp.json"): "vscode",
    (".gemini", "settings.json"): "gemini",
    (".zed", "settings.json"): "zed",
    ("zed", "settings.json"): "zed",
    (".codex", "config.toml"): "codex",
    (".holodeck", "config.yaml"): "holodeck-global",
    (".holodeck", "config.yml"): "holodeck-global",
}


def file_kind(path: Path, text: str) -> str | None:
    """The file's kind, or None when neither its name nor its content tells."""
    kind = _BY_NAME.get(path.name) or _BY_DIR.get((path.parent.name, path.name))
    if kind is not None:
        return kind
    suffix = path.suffix.lower()
    if suffix == ".toml" and re.search(r"^\s*\[\s*mcp_servers[.\]]", text, re.MULTILINE):
        return "codex"
    if suffix in (".yaml", ".yml"):
        if re.search(r"^mcp_servers\s*:", text, re.MULTILINE):
            return "holodeck-global"
        if re.search(r"^tools\s*:", text, re.MULTILINE):
            return "holodeck-agent"
    if suffix == ".json" and re.search(r'"servers"\s*:', text) and '"mcpServers"' not in text:
        return "vscode"
    return None
