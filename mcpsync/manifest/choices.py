"""The values mcp.toml's enumerated keys accept (`package`, `transport`, a target's `kind`).

Plain tuples with no imports: the CLI's options offer them as choices at start-up, and
`mcpsync --help` must not pay for importing the mcp.toml parser (mcpsync.manifest.parse) to list
them.
"""

from __future__ import annotations

PACKAGES = ("npm", "pypi", "oci", "nuget", "mcpb", "remote")
TRANSPORTS = ("stdio", "streamable-http", "sse")
TARGET_KINDS = (
    "holodeck-agent",
    "holodeck-global",
    "claude-code",
    "cursor",
    "vscode",
    "codex",
    "gemini",
    "claude-desktop",
    "windsurf",
    "zed",
)
