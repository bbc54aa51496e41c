"""Helpers for the sync tests: their registry items, mcp.toml snippets and project (on
tests/project_helpers.py: an isolated project on disk, a file: registry, the CLI in-process).

    @pytest.fixture
    def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
        return make_project(tmp_path, monkeypatch)

    def test_x(project: Project) -> None:
        project.manifest(SERVERS["files"], AGENT_TARGET)
        project.write("agents/a/agent.yaml", "name: a\\n")
        project.lock()
        assert project.sync().code == 0
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import project_helpers
import pytest
from project_helpers import bundle_mcpb, new_project, postgres_oci, search_remote, weather_pypi
from registry_stub import make_item, npm_package

# --- a registry snapshot ---------------------------------------------------------------------


def registry_items() -> list[dict[str, Any]]:
    """npm, pypi, oci, remote and mcpb servers, one or two versions each."""
    files_args = [
        {
            "type": "positional",
            "valueHint": "allowed_dir",
            "description": "Directory the server may access",
            "isRequired": True,
            "isRepeated": True,
        }
    ]
    items = [
        make_item(
            "io.github.acme/files",
            version,
            is_latest=version == "1.2.0",
            published_at=f"2025-09-0{i + 1}T10:00:00Z",
            description="Read and write files",
            packages=[
                npm_package("@acme/files-mcp", version, packageArguments=files_args),
            ],
        )
        for i, version in enumerate(["1.1.0", "1.2.0"])
    ]
    items.append(
        make_item(
            "io.github.acme/weather",
            "0.5.0",
            is_latest=True,
            description="Forecasts",
            packages=[weather_pypi(runtime_hint="uvx")],
        )
    )
    items.append(
        make_item(
            "io.github.acme/postgres",
            "3.1.0",
            is_latest=True,
            description="Query PostgreSQL",
            packages=[postgres_oci()],
        )
    )
    items.append(
        make_item(
            "com.acme/search",
            "1.0.0",
            is_latest=True,
            description="Web search",
            remotes=[search_remote()],
        )
    )
    items.append(
        make_item(
            "io.github.acme/bundle",
            "1.0.0",
            is_latest=True,
            description="Only an mcpb bundle",
            packages=[bundle_mcpb()],
        )
    )
    return items


# mcp.toml snippets, by alias
SERVERS: dict[str, str] = {
    "files": """
        [servers.files]
        name = "io.github.acme/files"
        version = "^1.1"
        args = ["/workspace"]
        """,
    "weather": """
        [servers.weather]
        name = "io.github.acme/weather"
        """,
    "postgres": """
        [servers.postgres]
        name = "io.github.acme/postgres"
        """,
    "search": """
        [servers.search]
        name = "com.acme/search"
        """,
    "notes": """
        [servers.notes]
        command = "uvx"
        args = ["acme-notes-mcp==1.4.2"]
        description = "Team notes"
        """,
}

AGENT_TARGET = """
    [[targets]]
    kind = "holodeck-agent"
    path = "agents/*/agent.yaml"
    """

GLOBAL_TARGET = """
    [[targets]]
    kind = "holodeck-global"
    path = "holodeck/config.yaml"
    """


# --- the project -----------------------------------------------------------------------------


class Project(project_helpers.Project):
    """mcp.toml from snippets; files read back as bytes."""

    def read(self, rel: str) -> bytes:
        return self.read_bytes(rel)

    def manifest(self, *snippets: str, registry: str = "file:registry") -> None:
        """mcp.toml from mcp.toml snippets (dedented), with the snapshot registry."""
        self.write_manifest(snippets, registry=registry)

    def registry(self, items: Iterable[dict[str, Any]] | None = None) -> None:
        self.write_registry(registry_items() if items is None else items)

    def sibling(self, name: str) -> Project:
        """Another project on the same machine: same HOME, same state dir."""
        other = Project(self.root.parent / name, self.home, self.state)
        other.root.mkdir()
        other.registry()
        return other


def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An empty project dir with the snapshot registry, isolated from the real home."""
    return new_project(Project, tmp_path, monkeypatch, registry_items())
