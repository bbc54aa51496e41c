"""Merges: git's conflict markers in any file mcpsync reads, the merge-friendly
mcp.synced.toml, and real `git merge`s of two branches that each `mcpsync add` a server."""

from __future__ import annotations

from pathlib import Path

import pytest
from client_helpers import Project, make_project, target


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def _conflicted(ours: str, theirs: str) -> str:
    return f"<<<<<<< HEAD\n{ours}=======\n{theirs}>>>>>>> other\n"


TARGETS = (
    target("claude-code"),
    target("vscode"),
    target("holodeck-agent", path="agent.yaml"),
    target("codex"),
)

# file -> (ours, theirs) of one conflicted region, in each file's own format
CONFLICTS = {
    ".mcp.json": ('{"mcpServers": {"a": {}}}\n', '{"mcpServers": {"b": {}}}\n'),
    ".vscode/mcp.json": ('{"servers": {}} // ours\n', '{"servers": {}}\n'),
    "agent.yaml": ("name: a\n", "name: b\n"),
    ".codex/config.toml": ("[mcp_servers.a]\n", "[mcp_servers.b]\n"),
    "mcp.synced.toml": ("version = 1\n", "version = 2\n"),
}


@pytest.mark.parametrize("rel", sorted(CONFLICTS))
def test_a_conflicted_file_sync_reads_is_named_with_its_lines(project: Project, rel: str) -> None:
    project.write("agent.yaml", "name: a\n")
    project.setup(["files", "notes"], *TARGETS)
    text = "# kept\n" + _conflicted(*CONFLICTS[rel])
    project.write(rel, text)
    result = project.sync()
    assert result.code == 2, result.text
    assert result.err.splitlines()[0] == (
        f"error: {project.path(rel)}: unresolved merge conflict (lines 2\u20136 hold git's "
        "<<<<<<< ======= >>>>>>> markers). File not modified."
    )
    assert "  hint: mcpsync writes this file from mcp.lock: take one side" in result.err
    assert "Invalid" not in result.err
    assert project.read(rel) == text


def test_a_conflicted_mcp_toml_says_keep_both_sides(project: Project) -> None:
    project.setup(["files"], target("claude-code"))
    text = project.read("mcp.toml") + _conflicted(
        '[servers.a]\ncommand = "a"\n', '[servers.b]\ncommand = "b"\n'
    )
    project.write("mcp.toml", text)
    for argv in (["lock"], ["sync"], ["add", "io.github.acme/weather"], ["remove", "files"]):
        result = project.run(*argv)
        assert result.code == 2, (argv, result.text)
        first, hint = result.err.splitlines()[:2]
        assert first.startswith(f"error: {project.path('mcp.toml')}: unresolved merge conflict")
        assert hint == (
            "  hint: edit it to keep both sides' servers and remove the markers, then run "
            "`mcpsync lock && mcpsync sync`"
        )
    assert project.read("mcp.toml") == text


def test_import_of_a_conflicted_file_names_it(project: Project) -> None:
    project.write(".mcp.json", _conflicted(*CONFLICTS[".mcp.json"]))
    result = project.run("import", str(project.path(".mcp.json")), "--no-match")
    assert result.code == 2, result.text
    assert "/.mcp.json: unresolved merge conflict (lines 1\u20135" in result.err
    assert not project.path("mcp.toml").exists()


def test_a_lone_rule_line_is_no_conflict(project: Project) -> None:
    """`=======` alone (a heading underline in a TOML multi-line string) is text."""
    project.setup(["files"], target("codex"))
    path = project.path(".codex/config.toml")
    path.write_text('notes = """\nTitle\n=======\n"""\n' + path.read_text())
    assert project.sync().code == 0
