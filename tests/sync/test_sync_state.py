"""One all-or-nothing write for every file a sync touches: the target files, the ownership
ledger (owners.json), the project's record (mcp.synced.toml) and the stamps.

A file that cannot be written (read-only, immutable, a directory) stops the sync before its
first byte, whichever of the four kinds it is, and the next sync after the file is fixed
completes the change: no entry is left in a shared file with no project owning it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from reliability import refused_by_the_os
from sync_helpers import SERVERS, Project, make_project

from mcpsync import fsutil

GLOBAL = '[[targets]]\nkind = "holodeck-global"\n'
AGENT = '[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def global_file(project: Project) -> Path:
    return project.home / ".holodeck" / "config.yaml"


def global_names(project: Project) -> list[str]:
    data = yaml.safe_load(global_file(project).read_text(encoding="utf-8"))
    return [e["name"] for e in data["mcp_servers"]]


def owned(project: Project) -> list[str]:
    """What the ledger says this project owns in the global config."""
    real = os.path.realpath(global_file(project))
    return project.ledger()["files"].get(real, {}).get(str(project.root / "mcp.toml"), [])


def synced_both(project: Project) -> None:
    """search and weather synced into the global config and an agent.yaml, then weather
    dropped and locked: the next sync changes the global config, the agent, the ledger, the
    record and the stamps."""
    project.write("agents/a/agent.yaml", "name: a\n")
    project.manifest(SERVERS["search"], SERVERS["weather"], GLOBAL, AGENT)
    project.lock()
    assert project.sync().code == 0
    assert global_names(project) == ["search", "weather"] and owned(project) == [
        "search",
        "weather",
    ]
    project.manifest(SERVERS["search"], GLOBAL, AGENT)
    project.lock()


def tree(*folders: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for f in folders for p in sorted(f.rglob("*")) if p.is_file()}


def stamps_file(project: Project) -> Path:
    (found,) = (project.state / "stamps").iterdir()
    return found


# the four kinds of file one sync writes
KINDS: dict[str, Callable[[Project], Path]] = {
    "target": global_file,
    "ledger": lambda p: p.state / "owners.json",
    "record": lambda p: p.root / "mcp.synced.toml",
    "stamps": stamps_file,
}


def test_a_refused_record_leaves_no_orphan_in_the_shared_config(project: Project) -> None:
    """The issue's reproduction: a read-only mcp.synced.toml used to fail the sync after the
    ledger had been written, so the ledger gave `weather` to nobody while the restored global
    config still held it, for good."""
    synced_both(project)
    record = project.root / "mcp.synced.toml"
    record.chmod(0o444)
    before = tree(project.root, project.home, project.state)

    result = project.sync()

    assert result.code == 3
    assert result.err.startswith(f"error: Cannot write {record}: it is read-only (mode 0444).")
    assert tree(project.root, project.home, project.state) == before  # every file old
    record.chmod(0o644)
    assert project.sync().code == 0
    assert global_names(project) == ["search"] and owned(project) == ["search"]
    assert project.sync("--check").code == 0


@contextlib.contextmanager
def refused(path: Path, how: str) -> Iterator[str]:
    """`path` made unwritable `how`; yields what the error says. Undone on leaving: the user
    fixes the file (a directory in its place is replaced by the file as it was)."""
    if how == "read-only":
        path.chmod(0o444)
        try:
            yield "it is read-only (mode 0444)"
        finally:
            path.chmod(0o644)
    elif how == "immutable":
        with refused_by_the_os(path, how) as why:
            yield why
    else:
        data = path.read_bytes()
        path.unlink()
        path.mkdir()
        try:
            yield "it is a directory, not a file"
        finally:
            path.rmdir()
            path.write_bytes(data)


@pytest.mark.parametrize("how", ["read-only", "immutable", "directory"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_file_sync_cannot_write_stops_it_before_any_write(
    project: Project, kind: str, how: str
) -> None:
    synced_both(project)
    path = KINDS[kind](project)

    with refused(path, how) as why:
        before = tree(project.root, project.home, project.state)
        result = project.sync()
        first = result.err.splitlines()[0]
        assert result.code == 3, result.err
        assert first.startswith("error: Cannot ") and f" {path}: {why}." in first, first
        assert tree(project.root, project.home, project.state) == before  # every file old
        # the change is still to be made; a directory where a file sync reads should be
        # (all but the stamps, a cache) stops the check too, with the same error
        unreadable = how == "directory" and kind != "stamps"
        assert project.sync("--check").code == (3 if unreadable else 1)

    assert project.sync().code == 0
    assert global_names(project) == ["search"] and owned(project) == ["search"]
    assert project.sync("--check").code == 0
    after = tree(project.root, project.home, project.state)
    assert project.sync().code == 0 and tree(project.root, project.home, project.state) == after


def test_check_says_when_only_the_ledger_is_left_to_finish(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted after the last target (Ctrl-C: no restore runs, as after a kill), the
    ledger still claims the dropped `weather` too: harmless, and `sync --check` passes (the
    files match the lock) but says so; the next sync narrows it."""
    synced_both(project)
    ledger = project.state / "owners.json"
    real = fsutil.atomic_write

    def interrupted(path: Path, text: str) -> None:
        if path == ledger:  # narrowing the claims (only a name dropped: no widening write)
            raise KeyboardInterrupt
        real(path, text)

    with monkeypatch.context() as patch:
        patch.setattr(fsutil, "atomic_write", interrupted)
        assert project.sync().code == 130
    assert global_names(project) == ["search"] and owned(project) == ["search", "weather"]

    check = project.sync("--check")
    assert check.code == 0
    assert f"{ledger} is not up to date: run `mcpsync sync`" in check.err
    assert project.sync().code == 0 and owned(project) == ["search"]
    assert "owners.json" not in project.sync("--check").err
