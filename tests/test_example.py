"""The README's example, end to end, as a user runs it: lock, list, sync, check; then no-ops."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from project_helpers import age, snapshot

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "quickstart"


def _run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpsync", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture()
def demo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "demo"
    shutil.copytree(EXAMPLE, project)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "MCPSYNC_STATE_DIR": str(tmp_path / "st")}
    env.pop("MCPSYNC_REGISTRY", None)
    return project, env


def test_example_locks_lists_syncs_offline(demo: tuple[Path, dict[str, str]]) -> None:
    project, env = demo
    locked = _run(project, env, "lock")
    assert locked.returncode == 0, locked.stderr
    assert "Added files 1.2.0" in locked.stderr  # ^1.1 -> highest stable, not 2.0.0-beta.1
    listed = _run(project, env, "list", "--json")
    rows = {r["alias"]: r for r in json.loads(listed.stdout)["servers"]}
    assert {a: r["version"] for a, r in rows.items()} == {
        "files": "1.2.0",
        "notes": None,
        "postgres": "3.1.0",
        "search": "1.0.0",
        "weather": "0.5.0",
    }
    assert _run(project, env, "sync").returncode == 0
    assert _run(project, env, "sync", "--check").returncode == 0
    agent = (project / "agents/research/agent.yaml").read_text()
    assert "name: cite" in agent and "registry_name: io.github.acme/files" in agent
    glob = (project / "holodeck/config.yaml").read_text()
    assert "name: my_tool" in glob and "name: search" in glob and "name: weather" not in glob


def test_example_second_runs_change_nothing(demo: tuple[Path, dict[str, str]]) -> None:
    project, env = demo
    assert _run(project, env, "lock").returncode == 0
    assert _run(project, env, "sync").returncode == 0
    files = [project / "mcp.lock", *sorted(project.glob("agents/*/agent.yaml"))]
    files.append(project / "holodeck/config.yaml")
    age(files)
    before = snapshot(files)
    assert _run(project, env, "lock").returncode == 0
    assert _run(project, env, "sync").returncode == 0
    assert snapshot(files) == before
