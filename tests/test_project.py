"""Finding the project: mcp.toml is looked for in the starting directory (the current one, or
-C DIR), then in each directory above it, as uv, npm and Cargo do; paths in mcp.toml stay
relative to mcp.toml; `init` writes where it starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import (
    assert_clean_failure,
    npm_server,
    pins,
    registry_toml,
    run_cli,
    run_process,
    write_project,
    write_snapshot,
)

from mcpsync.project import find_root, require_root

A = "io.github.t/alpha"
TOML = registry_toml({"a": {"name": A, "version": "^1"}}, registry="file:registry") + (
    '\n[[targets]]\nkind = "claude-code"\n'
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project whose registry (file:registry) and target (.mcp.json) are relative to it,
    with an empty subdirectory two levels down."""
    project = write_project(tmp_path / "project", TOML)
    write_snapshot(project, npm_server(A, ["1.0.0", "1.1.0"]))
    (project / "src" / "deep").mkdir(parents=True)
    return project


def test_find_root_walks_up_and_the_nearest_wins(root: Path) -> None:
    deep = root / "src" / "deep"
    assert find_root(root) == root
    assert find_root(deep) == root
    (root / "src" / "mcp.toml").write_text("[servers]\n")
    assert find_root(deep) == root / "src"


def test_a_directory_named_mcp_toml_is_not_a_manifest(root: Path) -> None:
    (root / "src" / "mcp.toml").mkdir()
    assert find_root(root / "src" / "deep") == root


def test_lock_sync_list_and_check_from_a_subdirectory(root: Path) -> None:
    deep = root / "src" / "deep"
    for _ in range(2):  # the same command line twice: the second run changes nothing
        locked = run_process("lock", cwd=deep)
        assert locked.code == 0, str(locked)
    assert pins(root) == {"a": "1.1.0"}
    assert not (deep / "mcp.lock").exists() and not (root / "src" / "mcp.lock").exists()
    synced = run_process("sync", cwd=deep)
    assert synced.code == 0, str(synced)
    written = json.loads((root / ".mcp.json").read_text())
    assert written["mcpServers"]["a"]["args"] == ["-y", "@test/alpha@1.1.0"]
    assert not (deep / ".mcp.json").exists()
    assert run_process("lock", "--check", cwd=deep).code == 0
    assert run_process("sync", "--check", cwd=deep).code == 0
    listed = run_process("list", "--json", cwd=deep)
    assert [s["alias"] for s in json.loads(listed.out)["servers"]] == ["a"]


def test_dash_c_starts_the_search_there(root: Path, tmp_path: Path) -> None:
    result = run_cli("-C", root / "src" / "deep", "lock")
    assert result.code == 0, str(result)
    assert pins(root) == {"a": "1.1.0"}


def test_search_and_show_from_a_subdirectory_use_the_project_registry(root: Path) -> None:
    found = run_cli("search", "alpha", "--json", cwd=root / "src" / "deep")
    assert found.code == 0, str(found)
    assert [s["name"] for s in found.json()["servers"]] == [A]
    assert found.json()["registry"] == "file:registry"
    shown = run_cli("show", A, "--json", cwd=root / "src")
    assert (shown.code, shown.json()["version"]) == (0, "1.1.0")


def test_no_manifest_anywhere_names_the_start_and_suggests_init(tmp_path: Path) -> None:
    empty = tmp_path / "empty" / "sub"
    empty.mkdir(parents=True)
    assert find_root(empty) is None  # nothing above the test's tmp dir holds an mcp.toml
    result = run_process("lock", cwd=empty)
    line = assert_clean_failure(
        result, 2, f"mcp.toml not found in {empty} or any directory above it"
    )
    assert line.startswith("error: mcp.toml not found")
    assert "hint: run `mcpsync init`" in result.err


def test_dash_c_to_a_missing_directory_is_bad_usage(tmp_path: Path) -> None:
    assert_clean_failure(run_cli("-C", tmp_path / "nowhere", "lock"), 2, "no such directory")
    with pytest.raises(Exception, match="no such directory"):
        require_root(tmp_path / "nowhere")


@pytest.mark.parametrize(
    "argv",
    [["sync"], ["search", "x"], ["show", "x"], ["add", "x"], ["list"], ["doctor"], ["init"]],
)
def test_dash_c_to_a_missing_directory_is_one_error_for_every_command(
    tmp_path: Path, argv: list[str]
) -> None:
    """Said once, before the command runs: not a registry search, nor "mcp.lock not found"."""
    missing = tmp_path / "nowhere"
    result = run_cli("-C", missing, *argv, env={"MCPSYNC_REGISTRY": "http://127.0.0.1:9"})
    assert (result.code, result.err) == (
        2,
        f"error: {missing}: no such directory\n  hint: check the -C DIR argument\n",
    )
    assert not missing.exists()


def test_init_writes_in_the_starting_directory_not_above(root: Path) -> None:
    before = (root / "mcp.toml").read_bytes()
    deep = root / "src" / "deep"
    result = run_cli("init", cwd=deep)
    assert result.code == 0, str(result)
    assert (deep / "mcp.toml").is_file()
    assert (root / "mcp.toml").read_bytes() == before
    # ... and from then on that nearer mcp.toml is the project for runs below it
    assert find_root(deep) == deep


def test_add_from_a_subdirectory_edits_the_project_manifest(root: Path) -> None:
    result = run_cli("add", f"{A}@^1.0", "--as", "b", cwd=root / "src")
    assert result.code == 0, str(result)
    assert "[servers.b]" in (root / "mcp.toml").read_text()
    assert pins(root) == {"a": "1.1.0", "b": "1.1.0"}
    assert not (root / "src" / "mcp.toml").exists()


def test_import_from_a_subdirectory_adds_to_the_project(root: Path) -> None:
    """FILE is relative to where the run starts; the servers go into the project's mcp.toml."""
    deep = root / "src" / "deep"
    (deep / "client.json").write_text(
        '{"mcpServers": {"notes": {"command": "uvx", "args": ["n==1"]}}}'
    )
    result = run_cli("import", "client.json", "--kind", "claude-code", "--no-match", cwd=deep)
    assert result.code == 0, str(result)
    assert '[servers.notes]\ncommand = "uvx"\nargs = ["n==1"]\n' in (root / "mcp.toml").read_text()
    assert pins(root) == {"a": "1.1.0", "notes": None}
    assert not (deep / "mcp.toml").exists()
