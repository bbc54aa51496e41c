"""The stamps key on what decides a file's text besides its inputs: mcpsync's version and the
stamps' format number, not a hand-kept list of module sources (a list that misses a module
lets a stale stamp skip an edit the new code would make)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sync_helpers import AGENT_TARGET, SERVERS, Project, make_project

import mcpsync
from mcpsync.edit import yamledit
from mcpsync.sync.targets import base


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def test_a_stamp_names_the_version_and_the_format(monkeypatch: pytest.MonkeyPatch) -> None:
    first = base.stamp("holodeck-agent", "tools", {"a": 1})
    assert base.stamp("holodeck-agent", "tools", {"a": 1}) == first
    assert base.stamp("holodeck-agent", "tools", {"a": 2}) != first
    monkeypatch.setattr(mcpsync, "__version__", "99.0.0")
    assert base.stamp("holodeck-agent", "tools", {"a": 1}) != first
    monkeypatch.undo()
    monkeypatch.setattr(base, "STAMPS_VERSION", base.STAMPS_VERSION + 1)
    assert base.stamp("holodeck-agent", "tools", {"a": 1}) != first


def edits(project: Project, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many agent.yaml files a no-op sync parses and edits (a stamp skips the rest)."""
    calls: list[str] = []
    real = yamledit.replace_list_items

    def counting(text: str, *args: object, **kwargs: object) -> str:
        calls.append(text)
        return real(text, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(yamledit, "replace_list_items", counting)
        assert project.sync().code == 0
    return len(calls)


def test_a_stamp_from_another_version_is_not_trusted(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write("agents/a/agent.yaml", "name: a\n")
    project.manifest(SERVERS["notes"], AGENT_TARGET)
    project.lock()
    assert project.sync().code == 0
    assert edits(project, monkeypatch) == 0  # stamped: not parsed again

    monkeypatch.setattr(mcpsync, "__version__", "99.0.0")  # an upgraded mcpsync

    assert edits(project, monkeypatch) == 1  # the new code edits the file itself
    assert edits(project, monkeypatch) == 0  # and stamps it for its own version
