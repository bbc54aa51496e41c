"""Terminal manners: colour (--color, NO_COLOR, FORCE_COLOR, a real terminal) and click's
shell completion of aliases and target kinds."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import REPO, run_cli, run_process, write_project, write_snapshot
from registry_stub import make_item, npm_package

ESC = "\x1b["
GREEN_ADDED = "\x1b[32mAdded\x1b[0m"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    items = [make_item("io.github.acme/files", "1.0.0", packages=[npm_package("@a/f", "1.0.0")])]
    url = write_snapshot(root, items)
    return write_project(
        root,
        f'[registry]\nurl = "{url}"\n\n[servers.files]\nname = "io.github.acme/files"\n\n'
        '[servers.other-one]\ncommand = "npx"\n\n[[targets]]\nkind = "cursor"\n',
    )


@pytest.mark.parametrize(
    ("args", "env", "coloured"),
    [
        ((), {}, False),  # captured output is no terminal
        (("--color", "always"), {}, True),
        (("--color", "always"), {"NO_COLOR": "1"}, True),  # the flag beats the variable
        ((), {"FORCE_COLOR": "1"}, True),
        ((), {"FORCE_COLOR": "0"}, False),
        ((), {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        ((), {"MCPSYNC_COLOR": "always"}, True),
        (("--color", "never"), {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_settings(
    project: Path, args: tuple[str, ...], env: dict[str, str], coloured: bool
) -> None:
    saved = {k: os.environ.pop(k) for k in ("NO_COLOR", "FORCE_COLOR") if k in os.environ}
    try:
        result = run_cli(*args, "lock", cwd=project, env=env)
    finally:
        os.environ.update(saved)
    assert result.code == 0, result
    assert (GREEN_ADDED in result.err) is coloured
    assert (ESC in result.err) is coloured
    assert "Added files 1.0.0" in result.err.replace(GREEN_ADDED, "Added")


def test_json_is_never_coloured(project: Path) -> None:
    result = run_cli("--color", "always", "lock", "--json", cwd=project)
    assert result.code == 0, result
    assert ESC not in result.out
    assert [c["action"] for c in json.loads(result.out)["changes"]] == ["Added", "Added"]
    failed = run_cli("--color", "always", "remove", "nope", "--json", cwd=project)
    assert failed.code == 2, failed
    assert failed.err.startswith("\x1b[31m\x1b[1merror:\x1b[0m ")
    assert ESC not in failed.out
    assert json.loads(failed.out)["error"]["message"] == "mcp.toml: no server 'nope' to remove"


def _on_a_terminal(project: Path, *args: str, env: dict[str, str]) -> str:
    """Run mcpsync with stderr on a pseudo-terminal; returns what the terminal showed."""
    main, secondary = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environ.update(env, PYTHONPATH=str(REPO))
    with subprocess.Popen(
        [sys.executable, "-m", "mcpsync", *args],
        cwd=project,
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=secondary,
    ) as process:
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal closed: the process is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=60)
    os.close(main)
    return b"".join(chunks).decode()


def test_a_real_terminal_gets_colour_unless_no_color(project: Path) -> None:
    shown = _on_a_terminal(project, "lock", env={})
    assert GREEN_ADDED in shown
    (project / "mcp.lock").unlink()
    plain = _on_a_terminal(project, "lock", env={"NO_COLOR": "1"})
    # the progress line still rewrites itself (erase-line is no colour); nothing is coloured
    assert "Resolving 1/1 server from file:registry …" in plain
    assert "Added files 1.0.0" in plain and ESC not in plain.replace("\r\x1b[K", "")


def _complete(project: Path, words: str) -> list[str]:
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    env = {"_MCPSYNC_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    done = run_process(cwd=project, env=env)
    assert done.code == 0, done
    return done.out.splitlines()


def test_completion_of_aliases_and_commands(project: Path, tmp_path: Path) -> None:
    assert _complete(project, "mcpsync remove ") == ["plain,files", "plain,other-one"]
    assert _complete(project, "mcpsync remove o") == ["plain,other-one"]
    assert _complete(project, "mcpsync lock -P f") == ["plain,files"]
    assert _complete(project / "registry", "mcpsync remove ") == [
        "plain,files",
        "plain,other-one",
    ]  # from a subfolder: mcp.toml is found upward
    assert _complete(tmp_path, f"mcpsync -C {project} remove f") == ["plain,files"]
    assert "plain,doctor" in _complete(project, "mcpsync d")
    assert _complete(project, "mcpsync sync --target ") == ["plain,cursor"]  # declared ones
    assert _complete(tmp_path, "mcpsync sync --target clau") == [
        "plain,claude-code",
        "plain,claude-desktop",
    ]  # no mcp.toml here: every kind
    (project / "mcp.toml").write_text("[servers\n")  # broken: completes nothing, no traceback
    assert _complete(project, "mcpsync remove ") in ([], [""])


def test_completion_script_for_each_shell(project: Path) -> None:
    for shell, needle in [
        ("bash", "complete -o nosort -F"),
        ("zsh", "#compdef mcpsync"),
        ("fish", "complete --no-files --command mcpsync"),
    ]:
        done = run_process(cwd=project, env={"_MCPSYNC_COMPLETE": f"{shell}_source"})
        assert done.code == 0 and needle in done.out, (shell, done)
