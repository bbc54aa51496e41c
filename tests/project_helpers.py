"""An isolated project on disk with a `file:` registry, and the CLI run in-process.

Not a test module: shared by the sync tests (tests/sync_helpers.py) and the client target
tests (tests/client_helpers.py), which add their own registry items, mcp.toml snippets and a
`Project` subclass with their `manifest` and `read`.

Every project lives in a temp dir with HOME and MCPSYNC_STATE_DIR pointing at temp dirs too,
so no test reads or writes the real home. Locks are built by the real `mcpsync lock` from a
`file:` snapshot registry written here (items shaped by tests/registry_stub.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from mcpsync.cli.main import run


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
        """`~/...` is in HOME; anything else is in the project."""
        return self.home / rel[2:] if rel.startswith("~/") else self.root / rel

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, str):
            text = text.encode("utf-8")
        path.write_bytes(text)
        return path

    def read_bytes(self, rel: str) -> bytes:
        return self.path(rel).read_bytes()

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8")

    def write_manifest(
        self, snippets: Iterable[str], *, registry: str = "file:registry", tail: str = ""
    ) -> None:
        """mcp.toml: the registry, the snippets (dedented) as paragraphs, then `tail`."""
        body = "".join(textwrap.dedent(s).strip("\n") + "\n\n" for s in snippets)
        self.write("mcp.toml", f'[registry]\nurl = "{registry}"\n\n{body}{tail}')

    def write_registry(self, items: Iterable[dict[str, Any]]) -> None:
        """The snapshot registry that mcp.toml's `file:registry` names."""
        self.write("registry/servers.json", json.dumps({"servers": list(items)}, indent=2))

    def ledger(self) -> dict[str, Any]:
        return json.loads((self.state / "owners.json").read_text(encoding="utf-8"))

    # commands

    def run(self, *args: str) -> Result:
        return invoke(["-C", str(self.root), *args])

    def lock(self) -> None:
        result = self.run("lock")
        assert result.code == 0, result.text

    def sync(self, *args: str) -> Result:
        return self.run("sync", *args)


P = TypeVar("P", bound=Project)


def invoke(argv: list[str]) -> Result:
    """The CLI in-process, through the same entry point as the console script."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(argv)
    return Result(code, out.getvalue(), err.getvalue())


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """HOME and MCPSYNC_STATE_DIR in temp dirs; nothing from the environment that would move
    them (or the registry) elsewhere."""
    home, state = tmp_path / "home", tmp_path / "state"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MCPSYNC_STATE_DIR", str(state))
    for name in ("MCPSYNC_REGISTRY", "XDG_STATE_HOME", "USERPROFILE", "APPDATA", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home, state


def new_project(
    kind: type[P],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    items: Iterable[dict[str, Any]],
    name: str = "proj",
) -> P:
    """An empty project dir `name` with the snapshot registry `items`, isolated from the real
    home."""
    home, state = isolate(tmp_path, monkeypatch)
    proj = kind(tmp_path / name, home, state)
    proj.root.mkdir()
    proj.write_registry(items)
    return proj


# --- registry packages and remotes both families serve --------------------------------------


def weather_pypi(*, runtime_hint: str | None = None) -> dict[str, Any]:
    """acme-weather-mcp 0.5.0: a required secret and an optional variable with a default."""
    package: dict[str, Any] = {
        "registryType": "pypi",
        "identifier": "acme-weather-mcp",
        "version": "0.5.0",
    }
    if runtime_hint is not None:
        package["runtimeHint"] = runtime_hint
    package["transport"] = {"type": "stdio"}
    package["environmentVariables"] = [
        {"name": "WEATHER_API_KEY", "isRequired": True, "isSecret": True},
        {"name": "WEATHER_UNITS", "default": "celsius"},
    ]
    return package


def postgres_oci() -> dict[str, Any]:
    """An image pinned by its tag, with a required variable and a required secret."""
    return {
        "registryType": "oci",
        "identifier": "docker.io/acme/postgres-mcp:3.1.0",
        "transport": {"type": "stdio"},
        "environmentVariables": [
            {"name": "PGHOST", "isRequired": True},
            {"name": "PGPASSWORD", "isRequired": True, "isSecret": True},
        ],
    }


def search_remote() -> dict[str, Any]:
    """Streamable HTTP with a secret `Authorization: Bearer {token}` header."""
    return {
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


def bundle_mcpb() -> dict[str, Any]:
    """An mcpb bundle: no launcher, a URL and a digest."""
    return {
        "registryType": "mcpb",
        "identifier": "https://github.com/acme/bundle/releases/download/v1/b.mcpb",
        "version": "1.0.0",
        "fileSha256": "a" * 64,
        "transport": {"type": "stdio"},
    }


# --- file observations -----------------------------------------------------------------------


def snapshot(paths: Iterable[Path]) -> dict[Path, tuple[bytes, int]]:
    """Bytes and mtime (ns) of each file, to assert that nothing was written."""
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths}


def age(paths: Iterable[Path], seconds: float = 10.0) -> None:
    """Set mtimes in the past, so a rewrite within the same clock tick still shows."""
    for p in paths:
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))
