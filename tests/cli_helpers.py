"""Shared helpers for the lock-side tests: run mcpsync (in-process or as a real process),
write projects, build registry items, and check what an expected failure looks like.

Not a test module: imported by tests/test_manifest.py, test_lockfile.py, test_resolve.py,
test_cli_lock.py, test_cli_commands.py and test_corpus_resolve.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from registry_stub import OFFICIAL, Item, make_item, npm_package

REPO = Path(__file__).resolve().parent.parent
OLD_NS = 1_000_000_000 * 10**9  # 2001-09-09: an mtime no run of the tests can produce
ENV_PREFIX = "MCPSYNC_"
# The registry stand-in serves the registry only: locks made through these helpers record no
# artifact digests (which would ask the real npm registry) unless a test passes
# MCPSYNC_ARTIFACTS or --artifacts itself, pointing the stores at tests/artifact_stubs.py.
QUIET = {"MCPSYNC_ARTIFACTS": "0"}


@dataclass(frozen=True)
class Result:
    """What one mcpsync run did."""

    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()

    def json(self) -> Any:
        return json.loads(self.out)

    def __str__(self) -> str:  # pytest shows this when an assertion on a Result fails
        return f"exit {self.code}\n--- stdout\n{self.out}--- stderr\n{self.err}"


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None, cwd: Path | None) -> Iterator[None]:
    """MCPSYNC_* cleared (so the caller's shell cannot leak in), `env` applied, cwd set."""
    saved = dict(os.environ)
    saved_cwd = os.getcwd()
    for key in [k for k in os.environ if k.startswith(ENV_PREFIX)]:
        del os.environ[key]
    os.environ.update({**QUIET, **(env or {})})
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved)


def run_cli(
    *args: str | Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Result:
    """Run `mcpsync ARGS` in this process through `run(argv)`, capturing stdout and stderr."""
    from mcpsync.cli.main import run

    out, err = io.StringIO(), io.StringIO()
    with (
        _environment(env, cwd),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = run([str(a) for a in args])
    return Result(code, out.getvalue(), err.getvalue())


def run_process(
    *args: str | Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> Result:
    """Run `python -m mcpsync ARGS` as a real process (MCPSYNC_* cleared, then `env`)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIX)}
    environment.update({**QUIET, **(env or {})})
    done = subprocess.run(
        [sys.executable, "-m", "mcpsync", *map(str, args)],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def assert_clean_failure(result: Result, code: int, *needles: str) -> str:
    """An expected failure: exit `code`, nothing on stdout, one `error:` line (plus at most a
    `  hint:` line) on stderr, no traceback, and every needle in the error line. Returns it."""
    assert result.code == code, str(result)
    assert "Traceback" not in result.err, str(result)
    assert result.out == "", str(result)
    lines = result.err_lines
    assert 1 <= len(lines) <= 2, str(result)
    assert lines[0].startswith("error: "), str(result)
    if len(lines) == 2:
        assert lines[1].startswith("  hint: "), str(result)
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return lines[0]


def fast_retries(monkeypatch: Any) -> None:
    """Keep HttpRegistry's retry count but make its backoff milliseconds, so a persistent
    fault fails fast (pass pytest's `monkeypatch`)."""
    from mcpsync.registry.http import HttpRegistry

    defaults = HttpRegistry.__init__.__kwdefaults__
    assert defaults is not None and "backoff" in defaults and "max_backoff" in defaults
    monkeypatch.setitem(defaults, "backoff", 0.005)
    monkeypatch.setitem(defaults, "max_backoff", 0.02)


# --- projects -------------------------------------------------------------------------------


def write_project(root: Path, toml: str) -> Path:
    """A project directory holding `toml` as mcp.toml; returns the directory."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "mcp.toml").write_text(toml, encoding="utf-8")
    return root


def write_snapshot(root: Path, items: Sequence[Item], name: str = "registry") -> str:
    """Write `items` as a file: snapshot directory under `root`; returns its registry URL."""
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "servers.json").write_text(json.dumps({"servers": list(items)}, indent=2))
    return f"file:{name}"


def registry_toml(servers: Mapping[str, Mapping[str, Any]], *, registry: str | None = None) -> str:
    """A simple mcp.toml: one [servers.ALIAS] table per entry, string/bool/list values only."""
    lines = [f'[registry]\nurl = "{registry}"\n'] if registry else []
    for alias, fields in servers.items():
        body = "\n".join(f"{key} = {_toml_value(value)}" for key, value in fields.items())
        lines.append(f"[servers.{alias}]\n{body}\n")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def lock_bytes(root: Path) -> bytes:
    return (root / "mcp.lock").read_bytes()


def age(path: Path) -> int:
    """Give `path` an old mtime; returns it (ns) for comparing with st_mtime_ns later."""
    os.utime(path, ns=(OLD_NS, OLD_NS))
    return path.stat().st_mtime_ns


def pins(root: Path) -> dict[str, str | None]:
    """alias -> pinned version, read from mcp.lock with a TOML parser (not with mcpsync)."""
    data = load_toml((root / "mcp.lock").read_text(encoding="utf-8"))
    return {entry["alias"]: entry.get("version") for entry in data.get("server", [])}


def load_toml(text: str) -> dict[str, Any]:
    """Parse TOML with tomllib (3.11+) or tomlkit (3.10)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomlkit

        return dict(tomlkit.parse(text).unwrap())
    return tomllib.loads(text)


# --- registry items -------------------------------------------------------------------------


def npm_server(
    name: str,
    versions: Sequence[str],
    *,
    latest: str | None = None,
    identifier: str | None = None,
    day: int = 1,
) -> list[Item]:
    """One npm package per version, published a day apart in list order (oldest first).

    `latest` (the isLatest flag) defaults to the last one listed."""
    latest = versions[-1] if latest is None else latest
    ident = identifier or "@test/" + name.rsplit("/", 1)[-1]
    return [
        make_item(
            name,
            version,
            is_latest=version == latest,
            published_at=f"2025-{1 + (day + i) // 28:02d}-{1 + (day + i) % 28:02d}T12:00:00Z",
            packages=[npm_package(ident, version)],
        )
        for i, version in enumerate(versions)
    ]


def set_status(items: Sequence[Item], name: str, version: str, status: str) -> None:
    """Change one version's registry status in place (e.g. to "deleted")."""
    for item in items:
        if item["server"]["name"] == name and item["server"]["version"] == version:
            item["_meta"][OFFICIAL]["status"] = status
            if status == "deleted":
                item["_meta"][OFFICIAL]["isLatest"] = False
            return
    raise KeyError((name, version))


def set_latest(items: Sequence[Item], name: str, version: str) -> None:
    """Move the isLatest flag of `name` to `version`."""
    for item in items:
        if item["server"]["name"] == name:
            item["_meta"][OFFICIAL]["isLatest"] = item["server"]["version"] == version
