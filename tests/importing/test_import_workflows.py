"""`import` in a project mcpsync already manages, end to end: init/add/lock/sync, a teammate's
hand edit to a synced file, import, lock, sync, sync --check, on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import load_toml
from project_helpers import Result
from sync_helpers import SERVERS, Project, make_project

AGENT = "name: {name}\nmodel: {{provider: openai, name: gpt-4o}}\ninstructions: {{inline: hi}}\n"
FILES_TOOL = (  # as a teammate writes it, after `holodeck mcp add`
    "  - name: files\n"
    "    description: Read and write files\n"
    "    type: mcp\n"
    "    transport: stdio\n"
    "    command: npx\n"
    "    args: [-y, '@acme/files-mcp@1.2.0', /workspace]\n"
    "    registry_name: io.github.acme/files\n"
)
FILES_TABLE = (
    '[servers.files]\nname = "io.github.acme/files"\nversion = "1.2.0"\nargs = ["/workspace"]\n\n'
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def ok(project: Project, *argv: str) -> Result:
    result = project.run(*argv)
    assert result.code == 0, result.text
    return result


# --- block 2: a file an existing glob target covers ---------------------------------------


def test_import_of_an_agent_a_glob_target_covers_reuses_that_target(project: Project) -> None:
    project.write("agents/research/agent.yaml", AGENT.format(name="research"))
    project.write("agents/support/agent.yaml", AGENT.format(name="support"))
    project.manifest(
        SERVERS["notes"], '[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"'
    )
    project.lock()
    ok(project, "sync")
    # a teammate adds a tool to one agent by hand, then imports it
    research = project.path("agents/research/agent.yaml")
    research.write_text(research.read_text() + FILES_TOOL)
    before = project.read_text("mcp.toml")

    imported = ok(project, "import", str(research), "--json").json()
    assert imported["targets"] == []  # the glob target writes it
    toml = project.read_text("mcp.toml")
    assert toml.count("[[targets]]") == 1
    assert toml.replace(FILES_TABLE, "") == before  # only the new server is added
    assert "agents/research/agent.yaml" not in toml

    ok(project, "sync")
    ok(project, "sync", "--check")
    # the glob target gives every agent every server, the imported one included
    for name in ("research", "support"):
        text = project.read_text(f"agents/{name}/agent.yaml")
        assert "name: files" in text and "name: notes" in text, text
    again = project.run("import", str(research))
    assert again.code == 0, again.text
    assert project.read_text("mcp.toml") == toml  # importing again adds nothing


# --- block 3: re-importing a file sync wrote -----------------------------------------------

WEATHER = {  # hand-added by a teammate, as Claude Code's `claude mcp add` writes it
    "type": "stdio",
    "command": "uvx",
    "args": ["acme-weather-mcp==0.5.0"],
    "env": {"WEATHER_API_KEY": "${WEATHER_API_KEY}"},
}


def test_reimport_of_a_synced_file_adds_only_the_hand_added_server(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPSYNC_REGISTRY", f"file:{project.root / 'registry'}")
    ok(project, "init")
    ok(project, "add", "io.github.acme/files", "--arg", "/workspace")
    manifest = project.path("mcp.toml")
    manifest.write_text(manifest.read_text() + '\n[[targets]]\nkind = "claude-code"\n')
    ok(project, "lock")
    ok(project, "sync")
    declared = manifest.read_text()
    assert 'version = "^1.2.0"' in declared  # a caret; the file runs 1.2.0 exactly
    synced = json.loads(project.read_text(".mcp.json"))
    synced["mcpServers"]["weather"] = WEATHER
    project.write(".mcp.json", json.dumps(synced, indent=2) + "\n")

    imported = ok(project, "import", ".mcp.json", "--json").json()
    assert [(s["alias"], s["added"]) for s in imported["servers"]] == [
        ("files", False),
        ("weather", True),
    ]
    assert imported["targets"] == []
    assert imported["export"] == ["WEATHER_API_KEY"]  # the new server's; none for `files`
    toml = load_toml(manifest.read_text())
    assert toml["servers"]["files"]["version"] == "^1.2.0"  # untouched
    assert sorted(toml["servers"]) == ["files", "weather"]
    ok(project, "lock")
    ok(project, "sync")
    ok(project, "sync", "--check")
    ok(project, "lock", "--check")
    servers = json.loads(project.read_text(".mcp.json"))["mcpServers"]
    assert servers["weather"] == WEATHER
    assert servers["files"] == synced["mcpServers"]["files"]
