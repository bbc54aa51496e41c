"""Helpers for the MCP client target tests: their registry items, mcp.toml snippets and
project (on tests/project_helpers.py), and readers for what the clients parse.

Each test gets its own project directory, HOME and MCPSYNC_STATE_DIR (all temp dirs), a
snapshot registry written here, and runs the real `mcpsync lock` and `mcpsync sync`
in-process. The parse helpers read written files the way each client does, with code that
shares nothing with mcpsync's own editors.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import project_helpers
import pytest
from project_helpers import (
    Result,
    bundle_mcpb,
    new_project,
    postgres_oci,
    search_remote,
    weather_pypi,
)
from registry_stub import make_item, npm_package

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
            packages=[weather_pypi()],
        ),
        item(
            "io.github.acme/postgres",
            version="3.1.0",
            packages=[postgres_oci()],
        ),
        item(
            "com.acme/search",
            remotes=[search_remote()],
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
            packages=[bundle_mcpb()],
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


class Project(project_helpers.Project):
    """mcp.toml from SERVERS by alias; files read back as text."""

    def read(self, rel: str) -> str:
        return self.read_text(rel)

    def manifest(self, servers: Iterable[str], *targets: str) -> None:
        self.write_manifest([SERVERS[s] for s in servers], tail="\n".join(targets))

    def setup(self, servers: Iterable[str], *targets: str) -> Result:
        """mcp.toml, lock, sync; the sync must succeed."""
        self.manifest(servers, *targets)
        self.lock()
        result = self.sync()
        assert result.code == 0, result.text
        return result


def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str = "proj") -> Project:
    for var, value in SECRET_VALUES.items():
        monkeypatch.setenv(var, value)
    return new_project(Project, tmp_path, monkeypatch, registry_items(), name)


@contextlib.contextmanager
def platform(monkeypatch: pytest.MonkeyPatch, name: str) -> Iterator[None]:
    from mcpsync.sync.targets import clients

    with monkeypatch.context() as m:
        m.setattr(clients, "platform", lambda: name)
        yield


# --------------------------------------------------------------------------- client readers


def strict_json(text: str) -> Any:
    """Claude Code, Cursor, Windsurf, Claude Desktop: JSON.parse, nothing more."""
    return json.loads(text)


def _string_end(text: str, i: int) -> int:
    """One past the closing quote of the string that opens at `i`."""
    j = i + 1
    while text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return j + 1


def strip_comments(text: str) -> str:
    """// and /* */ comments outside strings blanked, as strip-json-comments does."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
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
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
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
