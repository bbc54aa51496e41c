"""Helpers for the MCP client target tests: a project on disk, a file: registry, the CLI.

Each test gets its own project directory, HOME and MCPSYNC_STATE_DIR (all temp dirs), a
snapshot registry written here, and runs the real `mcpsync lock` and `mcpsync sync`
in-process. The parse helpers read written files the way each client does, with code that
shares nothing with mcpsync's own editors.
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

# --------------------------------------------------------------------------- the registry


def registry_items() -> list[dict[str, Any]]:
    """npm, pypi with a secret, oci with a secret, remotes with secret headers, an mcpb."""

    def item(name: str, **fields: Any) -> dict[str, Any]:
        return make_item(name, fields.pop("version", "1.0.0"), is_latest=True, **fields)

    positional = {"type": "positional", "valueHint": "dir", "isRequired": True}
    return [
        item(
            "io.github.acme/files",
            version="1.2.0",
            packages=[npm_package("@acme/files-mcp", "1.2.0", packageArguments=[positional])],
        ),
        item(
            "io.github.acme/weather",
            version="0.5.0",
            packages=[
                {
                    "registryType": "pypi",
                    "identifier": "acme-weather-mcp",
                    "version": "0.5.0",
                    "transport": {"type": "stdio"},
                    "environmentVariables": [
                        {"name": "WEATHER_API_KEY", "isRequired": True, "isSecret": True},
                        {"name": "WEATHER_UNITS", "default": "celsius"},
                    ],
                }
            ],
        ),
        item(
            "io.github.acme/postgres",
            version="3.1.0",
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
        ),
        item(
            "com.acme/search",
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
        ),
        item(
            "com.acme/events",
            remotes=[
                {
                    "type": "sse",
                    "url": "https://mcp.acme.example/events/sse",
                    "headers": [{"name": "X-Api-Key", "isRequired": True, "isSecret": True}],
                }
            ],
        ),
        item(
            "io.github.acme/bundle",
            packages=[
                {
                    "registryType": "mcpb",
                    "identifier": "https://github.com/acme/bundle/releases/download/v1/b.mcpb",
                    "version": "1.0.0",
                    "fileSha256": "a" * 64,
                    "transport": {"type": "stdio"},
                }
            ],
        ),
    ]


# mcp.toml snippets by alias: npm, pypi, oci-with-secret-env, remote-with-secret-header, custom
SERVERS: dict[str, str] = {
    "files": """
        [servers.files]
        name = "io.github.acme/files"
        args = ["/workspace"]
        """,
    "weather": """
        [servers.weather]
        name = "io.github.acme/weather"
        env = { WEATHER_UNITS = "fahrenheit" }
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
        env = { NOTES_TOKEN = "${NOTES_TOKEN}", LOG_LEVEL = "info" }
        """,
    "events": """
        [servers.events]
        name = "com.acme/events"
        """,
    "bundle": """
        [servers.bundle]
        name = "io.github.acme/bundle"
        """,
    "internal": """
        [servers.internal]
        url = "https://mcp.internal.example/mcp"
        headers = { X-Team = "core" }
        """,
}
FIVE = ("files", "weather", "postgres", "search", "notes")

# What a user might have exported: none of it may ever reach a written file.
SECRET_VALUES = {
    "WEATHER_API_KEY": "sk-weather-9f8e7d",
    "PGPASSWORD": "pg-pass-4c3b2a",
    "TOKEN": "tok-search-1a2b3c",
    "NOTES_TOKEN": "tok-notes-5d6e7f",
    "X_API_KEY": "key-events-8a9b0c",
}


def target(kind: str, **fields: Any) -> str:
    lines = ["[[targets]]", f'kind = "{kind}"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the project


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

    def path(self, rel: str) -> Path:
        return self.home / rel[2:] if rel.startswith("~/") else self.root / rel

    def write(self, rel: str, text: str) -> Path:
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return path

    def read(self, rel: str) -> str:
        return self.path(rel).read_bytes().decode("utf-8")

    def manifest(self, servers: Iterable[str], *targets: str) -> None:
        body = "".join(textwrap.dedent(SERVERS[s]).strip("\n") + "\n\n" for s in servers)
        self.write("mcp.toml", '[registry]\nurl = "file:registry"\n\n' + body + "\n".join(targets))

    def run(self, *args: str) -> Result:
        return invoke(["-C", str(self.root), *args])

    def lock(self) -> None:
        result = self.run("lock")
        assert result.code == 0, result.text

    def sync(self, *args: str) -> Result:
        return self.run("sync", *args)

    def setup(self, servers: Iterable[str], *targets: str) -> Result:
        """mcp.toml, lock, sync; the sync must succeed."""
        self.manifest(servers, *targets)
        self.lock()
        result = self.sync()
        assert result.code == 0, result.text
        return result


def invoke(argv: list[str]) -> Result:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(argv)
    return Result(code, out.getvalue(), err.getvalue())


def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str = "proj") -> Project:
    home, state = tmp_path / "home", tmp_path / "state"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MCPSYNC_STATE_DIR", str(state))
    for var in ("MCPSYNC_REGISTRY", "XDG_STATE_HOME", "USERPROFILE", "APPDATA"):
        monkeypatch.delenv(var, raising=False)
    for var, value in SECRET_VALUES.items():
        monkeypatch.setenv(var, value)
    root = tmp_path / name
    root.mkdir()
    proj = Project(root, home, state)
    proj.write("registry/servers.json", json.dumps({"servers": registry_items()}, indent=2))
    return proj


def snapshot(paths: Iterable[Path]) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths}


def age(paths: Iterable[Path], seconds: float = 10.0) -> None:
    """Move mtimes into the past, so a rewrite within the same clock tick still shows."""
    for p in paths:
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


@contextlib.contextmanager
def platform(monkeypatch: pytest.MonkeyPatch, name: str) -> Iterator[None]:
    from mcpsync.targets import clients

    with monkeypatch.context() as m:
        m.setattr(clients, "platform", lambda: name)
        yield


# --------------------------------------------------------------------------- client readers


def strict_json(text: str) -> Any:
    """Claude Code, Cursor, Windsurf, Claude Desktop: JSON.parse, nothing more."""
    return json.loads(text)


def strip_comments(text: str) -> str:
    """// and /* */ comments outside strings blanked, as strip-json-comments does."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.index("*/", i + 2)
            out.append(" ")
            i = j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_trailing_commas(text: str) -> str:
    """A comma followed (after blanks) by } or ], outside strings, removed."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if c == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                i += 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def jsonc(text: str) -> Any:
    """VS Code and Zed: comments and trailing commas allowed."""
    return json.loads(strip_trailing_commas(strip_comments(text)))


def gemini_json(text: str) -> Any:
    """Gemini CLI: JSON.parse(stripJsonComments(text)): comments yes, trailing commas no."""
    return json.loads(strip_comments(text))


def codex_toml(text: str) -> dict[str, Any]:
    """Codex: TOML, and every server table of ours holds only keys Codex knows."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomlkit

        return tomlkit.parse(text).unwrap()
    return tomllib.loads(text)


CODEX_STDIO = {"command", "args", "env", "env_vars", "cwd"}
CODEX_HTTP = {"url", "bearer_token_env_var", "http_headers", "env_http_headers"}
