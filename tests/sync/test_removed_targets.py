"""A [[targets]] entry removed from mcp.toml: the next full sync takes out of its files the
entries sync wrote there (the record for project files, the ledger for shared ones) and
nothing else; filtered runs leave such files alone. (HoloDeck's global config, read back by
HoloDeck itself: tests/test_holodeck_workflows.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from project_helpers import Result, invoke
from sync_helpers import SERVERS, Project, make_project

CLAUDE = '[[targets]]\nkind = "claude-code"'
AGENTS = '[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"'
CURSOR_USER = '[[targets]]\nkind = "cursor"\nscope = "user"'
AGENT = "name: a\ntools:\n  - {name: f, type: function}\n"
EXTRA = (  # an MCP tool written by hand after sync
    "  - name: extra\n    description: By hand\n    type: mcp\n    command: uvx\n    args: [x]\n"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def ok(project: Project, *argv: str) -> Result:
    result = project.sync(*argv)
    assert result.code == 0, result.text
    return result


def test_removed_project_targets_lose_only_what_sync_wrote(project: Project) -> None:
    project.write("agents/a/agent.yaml", AGENT)
    project.manifest(SERVERS["files"], SERVERS["notes"], CLAUDE, AGENTS)
    project.lock()
    ok(project)
    mcp_json = project.path(".mcp.json")
    data = json.loads(mcp_json.read_text())
    data["mcpServers"]["mine"] = {"command": "uvx", "args": ["mine"]}  # a teammate's own
    mcp_json.write_text(json.dumps(data, indent=2) + "\n")
    agent = project.path("agents/a/agent.yaml")
    agent.write_text(agent.read_text() + EXTRA)
    # both targets removed, another added
    project.manifest(SERVERS["files"], SERVERS["notes"], CURSOR_USER)

    # a run limited to user files leaves the project's files, and what the record says of them
    ok(project, "--scope", "user")
    assert "files" in json.loads(mcp_json.read_text())["mcpServers"]
    assert ".mcp.json" in project.read_text("mcp.synced.toml")
    # CI's gate covers project files: every project target is planned, so it sees them too
    check = project.sync("--check", "--scope", "project")
    assert check.code == 1, check.text
    assert "2 of 2 file(s) differ from mcp.lock: .mcp.json, agents/a/agent.yaml" in check.err

    result = ok(project)
    assert (
        f"{mcp_json}: removed files, notes, written for a claude-code target mcp.toml no "
        "longer declares" in result.err
    )
    assert json.loads(mcp_json.read_text()) == {"mcpServers": {"mine": data["mcpServers"]["mine"]}}
    assert agent.read_text() == AGENT + EXTRA  # sync's tools out, byte for byte
    assert ".mcp.json" not in project.read_text("mcp.synced.toml")
    assert "agent.yaml" not in project.read_text("mcp.synced.toml")
    assert "removed" not in ok(project).err
    assert ok(project, "--check").code == 0


def test_a_shared_entry_another_project_still_writes_stays(project: Project) -> None:
    other = project.sibling("other")
    for proj in (project, other):
        proj.manifest(SERVERS["files"], CURSOR_USER)
        proj.lock()
        ok(proj)
    cursor = project.path("~/.cursor/mcp.json")
    both = cursor.read_text()
    project.manifest(SERVERS["files"])  # this project no longer writes ~/.cursor/mcp.json

    result = ok(project)
    assert "removed" not in result.err  # `other` still writes `files` there
    assert cursor.read_text() == both
    assert list(project.ledger()["files"][str(cursor)]) == [str(other.root / "mcp.toml")]
    other.manifest(SERVERS["files"])
    assert f"{cursor}: removed files" in ok(other).err
    assert json.loads(cursor.read_text()) == {"mcpServers": {}}


def test_a_removed_target_whose_file_is_gone_is_forgotten(project: Project) -> None:
    project.manifest(SERVERS["files"], CURSOR_USER)
    project.lock()
    ok(project)
    cursor = project.path("~/.cursor/mcp.json")
    cursor.unlink()
    project.manifest(SERVERS["files"])
    assert "nothing to sync" in ok(project).err
    project.manifest(SERVERS["files"], CLAUDE)
    assert "removed" not in ok(project).err
    assert project.ledger()["files"] == {}  # nothing to remove there: the file is forgotten
    assert not cursor.exists()


def test_a_removed_target_is_cleaned_up_with_a_relative_project_dir(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.manifest(SERVERS["files"], CLAUDE, AGENTS)
    project.write("agents/a/agent.yaml", AGENT)
    project.lock()
    ok(project)
    project.manifest(SERVERS["files"], AGENTS)
    monkeypatch.chdir(project.root.parent)
    result = invoke(["-C", project.root.name, "sync"])
    assert result.code == 0, result.text
    assert "removed files, written for a claude-code target" in result.err
    assert json.loads(project.read_text(".mcp.json")) == {"mcpServers": {}}
