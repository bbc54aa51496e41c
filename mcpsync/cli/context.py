"""What every command needs from the global options, as plain values."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Context:
    root: Path  # the directory holding mcp.toml
    registry_override: str | None = None
    timeout: float = 5.0

    @property
    def manifest_path(self) -> Path:
        return self.root / "mcp.toml"

    @property
    def lock_path(self) -> Path:
        return self.root / "mcp.lock"
