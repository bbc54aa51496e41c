"""Where a project is: the nearest directory holding mcp.toml.

Standard library only and no dataclasses (their import pulls in `inspect`): a warm `mcpsync
run` finds its project with this before it execs the server (cli/main.py `warm_run`).
"""

from __future__ import annotations

from pathlib import Path

MANIFEST = "mcp.toml"


def find_root(start: Path) -> Path | None:
    """The nearest directory holding mcp.toml: `start` itself, else its parents up to the
    filesystem root (as uv, npm and Cargo look for their manifests); None if there is none.

    `start` is returned as given when it holds mcp.toml, so paths in messages stay as typed."""
    if _has_manifest(start):
        return start
    return next((d for d in start.absolute().parents if _has_manifest(d)), None)


def _has_manifest(directory: Path) -> bool:
    try:
        return (directory / MANIFEST).is_file()
    except OSError:  # an unreadable directory on the way up holds nothing we can use
        return False
