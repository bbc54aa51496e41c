"""Merges: git's conflict markers in any file mcpsync reads, the merge-friendly
mcp.synced.toml, and real `git merge`s of two branches that each `mcpsync add` a server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import REPO
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


# --- real git merges of two branches that each `mcpsync add` a server ------------------------

DRIVEN = ("mcp.toml", "mcp.lock", "mcp.synced.toml", ".mcp.json", "agents/*/agent.yaml")


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert not check or done.returncode == 0, done.stdout + done.stderr
    return done


def _two_branches(project: Project, *, driver: bool) -> subprocess.CompletedProcess[str]:
    """main synced with `files`; branch `a` adds weather, branch `b` adds search (each
    `mcpsync add` then `mcpsync sync`, committed); then `a` merges `b`."""
    project.write("agents/a/agent.yaml", "name: a\n")
    project.setup(
        ["files"], target("claude-code"), target("holodeck-agent", path="agents/*/agent.yaml")
    )
    root = project.root
    _git(root, "init", "-q", "-b", "main")
    if driver:
        project.write(".gitattributes", "".join(f"{p} merge=mcpsync\n" for p in DRIVEN))
        _git(root, "config", "merge.mcpsync.name", "mcpsync")
        _git(
            root,
            "config",
            "merge.mcpsync.driver",
            f"{sys.executable} -m mcpsync merge-driver %O %A %B %P",
        )
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "main")
    for branch, name in (("a", "io.github.acme/weather"), ("b", "com.acme/search")):
        _git(root, "checkout", "-q", "-b", branch, "main")
        added = project.run("add", name)
        assert added.code == 0, added.text
        assert project.sync().code == 0
        _git(root, "add", ".")
        _git(root, "commit", "-qm", f"add {name}")
    _git(root, "checkout", "-q", "a")
    return _git(root, "merge", "--no-edit", "b", check=False)


def _servers_everywhere(project: Project) -> None:
    assert project.run("lock", "--check").code == 0
    check = project.sync("--check")
    assert check.code == 0, check.text
    assert sorted(json.loads(project.read(".mcp.json"))["mcpServers"]) == [
        "files",
        "search",
        "weather",
    ]


def test_without_the_driver_the_conflicts_are_named_and_the_recovery_works(
    project: Project,
) -> None:
    merged = _two_branches(project, driver=False)
    assert merged.returncode == 1
    conflicted = _git(project.root, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert {"mcp.toml", "mcp.lock", "mcp.synced.toml", ".mcp.json"} <= set(conflicted)
    stuck = project.sync()
    assert stuck.code == 2 and "mcp.toml: unresolved merge conflict" in stuck.err
    # the README's recovery: mcp.toml by hand (both servers), the generated files from theirs
    toml = project.read("mcp.toml")
    project.write(
        "mcp.toml",
        "".join(
            line
            for line in toml.splitlines(keepends=True)
            if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))
        ),
    )
    generated = [f for f in conflicted if f != "mcp.toml"]
    _git(project.root, "checkout", "--theirs", "--", *generated)
    assert project.run("lock").code == 0
    assert project.sync().code == 0
    _servers_everywhere(project)


def test_with_the_driver_the_merge_leaves_a_project_in_sync(project: Project) -> None:
    """mcp.toml, mcp.lock and mcp.synced.toml merge; the synced configs both branches changed
    on neighbouring lines stop the merge (ours kept, no markers) until `mcpsync sync`."""
    merged = _two_branches(project, driver=True)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    conflicted = _git(project.root, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert sorted(conflicted) == [".mcp.json", "agents/a/agent.yaml"]
    assert (
        "mcpsync merge-driver: .mcp.json: both branches changed it; kept this branch's version. "
        "mcpsync writes it from mcp.lock: run `mcpsync sync`, then `git add .mcp.json` and commit"
    ) in merged.stderr
    for rel in ("mcp.toml", "mcp.lock", "mcp.synced.toml", ".mcp.json"):
        assert "<<<<<<<" not in project.read(rel)
    assert sorted(json.loads(project.read(".mcp.json"))["mcpServers"]) == ["files", "weather"]
    assert project.run("lock", "--check").code == 0  # the lock holds both servers already
    assert project.sync().code == 0
    _git(project.root, "add", ".")
    _git(project.root, "commit", "-qm", "merge b")
    _servers_everywhere(project)
    assert project.sync().text.count("already match mcp.lock") == 1  # a second run: nothing


def test_the_driver_merges_each_file_by_what_it_holds() -> None:
    from mcpsync.sync.mergedriver import merge, three_way

    assert three_way({"a": 1, "b": 2}, {"a": 1, "b": 3}, {"b": 2, "c": 4}) == {"b": 3, "c": 4}
    assert three_way({"a": 1}, {"a": 2}, {"a": 3}) is None
    base = '[servers.a]\ncommand = "a"\n'
    ours = base + '\n[servers.b]\ncommand = "b"\n'
    theirs = base + '\n[servers.c]\ncommand = "c"\n'
    both = merge(base, ours, theirs, "mcp.toml")
    assert both.clean and both.text == ours + '\n[servers.c]\ncommand = "c"\n'
    edited = merge(base, base.replace('"a"', '"a1"'), base.replace('"a"', '"a2"'), "mcp.toml")
    assert not edited.clean and "<<<<<<< ours:mcp.toml" in edited.text
    assert "keep what each side wants" in (edited.message or "")
    head = "version = 1\n\n[files]\n"
    record = merge(
        head + '".mcp.json" = ["a", "x"]\n',
        head + '".mcp.json" = ["a", "b"]\n',
        head + '".mcp.json" = ["a", "c", "x"]\n',
        "sub/mcp.synced.toml",
    )
    assert record.clean and record.text.endswith(
        '".mcp.json" = [\n    "a",\n    "b",\n    "c",\n]\n'
    )  # x: dropped by ours
