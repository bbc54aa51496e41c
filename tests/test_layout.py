"""The package layout's rules hold: stages import only the stages below them, no circles.

The rules are the import-linter contracts in pyproject.toml; this runs the real `lint-imports`
on the package, then on a copy with one planted upward import, which it must refuse.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command; "
            "sys.exit(lint_imports_command())",
            "--config",
            str(root / "pyproject.toml"),
            "--no-cache",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(
        REPO / "mcpsync", root / "mcpsync", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def test_the_layout_contracts_hold() -> None:
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


def test_an_upward_import_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    # The lock layer reaching up into sync: the kind of arrow the layering forbids.
    planted = root / "mcpsync" / "lock" / "planted.py"
    planted.write_text("from mcpsync.sync import plan\n")
    done = _lint(root)
    assert done.returncode == 1
    assert "mcpsync.lock.planted -> mcpsync.sync.plan" in done.stdout


def test_a_circle_inside_a_package_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    targets = root / "mcpsync" / "sync" / "targets"
    # clients.py <-> vscode.py was such a circle (broken by moving client_format up).
    with (targets / "clients.py").open("a") as f:
        f.write("\nfrom mcpsync.sync.targets import vscode as _circle  # noqa: E402,F401\n")
    done = _lint(root)
    assert done.returncode == 1
    assert "No circles" in done.stdout and "BROKEN" in done.stdout
