"""Helpers for the sync tests: an isolated project on disk, a file: registry, the CLI in-process.

Every project lives in a temp dir with HOME and MCPSYNC_STATE_DIR pointing at temp dirs too,
so no test reads or writes the real home. Locks are built by the real `mcpsync lock` from a
`file:` snapshot registry written here (items shaped by tests/registry_stub.py).

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

import contextlib
import io
import json
import os
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from registry_stub import make_item, npm_package

from mcpsync.cli.main import run

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
            packages=[
                {
                    "registryType": "pypi",
                    "identifier": "acme-weather-mcp",
                    "version": "0.5.0",
                    "runtimeHint": "uvx",
                    "transport": {"type": "stdio"},
                    "environmentVariables": [
                        {"name": "WEATHER_API_KEY", "isRequired": True, "isSecret": True},
                        {"name": "WEATHER_UNITS", "default": "celsius"},
                    ],
                }
            ],
        )
    )
    items.append(
        make_item(
            "io.github.acme/postgres",
            "3.1.0",
            is_latest=True,
            description="Query PostgreSQL",
            packages=[
                {
                    "registryType": "oci",
                    "identifier": "docker.io/acme/postgres-mcp:3.1.0",
                    "transport": {"type": "stdio"},
                    "environmentVariables": [
                        {"name": "PGHOST", "isRequired": True},
                        {"name": "PGPASSWORD", "isRequired": True, "isSecret": True},
                    ],
                }
            ],
        )
    )
    items.append(
        make_item(
            "com.acme/search",
            "1.0.0",
            is_latest=True,
            description="Web search",
            remotes=[
                {
                    "type": "streamable-http",
                    "url": "https://mcp.acme.example/search",
                    "headers": [
                        {
                            "name": "Authorization",
                            "value": "Bearer {token}",
                            "isRequired": True,
                            "isSecret": True,
                            "variables": {"token": {"isRequired": True, "isSecret": True}},
                        }
                    ],
                }
            ],
        )
    )
    items.append(
        make_item(
            "io.github.acme/bundle",
            "1.0.0",
            is_latest=True,
            description="Only an mcpb bundle",
            packages=[
                {
                    "registryType": "mcpb",
                    "identifier": "https://github.com/acme/bundle/releases/download/v1/b.mcpb",
                    "version": "1.0.0",
                    "fileSha256": "a" * 64,
                    "transport": {"type": "stdio"},
                }
            ],
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


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class Project:
    root: Path
    home: Path
    state: Path

    # files

    def path(self, rel: str) -> Path:
        return self.root / rel

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, str):
            text = text.encode("utf-8")
        path.write_bytes(text)
        return path

    def read(self, rel: str) -> bytes:
        return self.path(rel).read_bytes()

    def manifest(self, *snippets: str, registry: str = "file:registry") -> None:
        """mcp.toml from mcp.toml snippets (dedented), with the snapshot registry."""
        body = "".join(textwrap.dedent(s).strip("\n") + "\n\n" for s in snippets)
        self.write("mcp.toml", f'[registry]\nurl = "{registry}"\n\n{body}')

    def registry(self, items: Iterable[dict[str, Any]] | None = None) -> None:
        data = {"servers": list(registry_items() if items is None else items)}
        self.write("registry/servers.json", json.dumps(data, indent=2))

    # commands

    def run(self, *args: str) -> Result:
        return invoke(["-C", str(self.root), *args])

    def lock(self) -> None:
        result = self.run("lock")
        assert result.code == 0, result.text

    def sync(self, *args: str) -> Result:
        return self.run("sync", *args)

    def sibling(self, name: str) -> Project:
        """Another project on the same machine: same HOME, same state dir."""
        other = Project(self.root.parent / name, self.home, self.state)
        other.root.mkdir()
        other.registry()
        return other

    def ledger(self) -> dict[str, Any]:
        return json.loads((self.state / "owners.json").read_text(encoding="utf-8"))


def invoke(argv: list[str]) -> Result:
    """The CLI in-process, through the same entry point as the console script."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(argv)
    return Result(code, out.getvalue(), err.getvalue())


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """HOME and MCPSYNC_STATE_DIR in temp dirs; no registry override from the environment."""
    home, state = tmp_path / "home", tmp_path / "state"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MCPSYNC_STATE_DIR", str(state))
    for name in ("MCPSYNC_REGISTRY", "XDG_STATE_HOME", "USERPROFILE"):
        monkeypatch.delenv(name, raising=False)
    return home, state


def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An empty project dir with the snapshot registry, isolated from the real home."""
    home, state = isolate(tmp_path, monkeypatch)
    proj = Project(tmp_path / "proj", home, state)
    proj.root.mkdir()
    proj.registry()
    return proj


# --- file observations -----------------------------------------------------------------------


def snapshot(paths: Iterable[Path]) -> dict[Path, tuple[bytes, int]]:
    """Bytes and mtime (ns) of each file, to assert that nothing was written."""
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths}


def age(paths: Iterable[Path], seconds: float = 10.0) -> None:
    """Set mtimes in the past, so a rewrite within the same clock tick still shows."""
    for p in paths:
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


@contextlib.contextmanager
def cwd(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)
