"""HoloDeck workflows end to end, read back by HoloDeck 0.7.1 itself: its loader (the path
`holodeck chat` takes, tests/holodeck_check.py) and its CLI (`holodeck mcp list --all`).

Skipped unless MCPSYNC_HOLODECK_PYTHON names the interpreter of a venv with holodeck-ai 0.7.1
(.ci/run makes one). HOME is the project's temp home, so ~/.holodeck/config.yaml is the one
sync wrote, and it is merged into every agent HoloDeck loads, this project's or not.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from registry_stub import make_item, npm_package
from sync_helpers import Project, make_project

HOLODECK_PYTHON = os.environ.get("MCPSYNC_HOLODECK_PYTHON")
CHECK = Path(__file__).resolve().parents[1].joinpath("holodeck_check.py")

pytestmark = pytest.mark.skipif(
    not HOLODECK_PYTHON, reason="MCPSYNC_HOLODECK_PYTHON is not set (HoloDeck venv)"
)

AGENT = "name: {name}\nmodel: {{provider: openai, name: gpt-4o}}\ninstructions: {{inline: hi}}\n"
REQUIRED = {"DOCS_TOKEN": "dt-1"}  # every required variable exported, as in the issue
OPTIONAL = {"CONTEXT7_API_KEY": "c7-2", "X_WIKI_KEY": "wk-3"}


def items() -> list[dict[str, Any]]:
    context7 = npm_package(
        "@upstash/context7-mcp",
        "1.0.20",
        environmentVariables=[{"name": "CONTEXT7_API_KEY", "isSecret": True}],  # optional
    )
    docs = npm_package(
        "@acme/docs-mcp",
        "2.0.0",
        environmentVariables=[{"name": "DOCS_TOKEN", "isRequired": True, "isSecret": True}],
    )
    wiki = {
        "type": "streamable-http",
        "url": "https://mcp.acme.example/wiki",
        "headers": [{"name": "X-Wiki-Key", "isSecret": True}],  # optional secret header
    }
    return [
        make_item("io.github.upstash/context7", "1.0.20", is_latest=True, packages=[context7]),
        make_item("io.github.acme/docs", "2.0.0", is_latest=True, packages=[docs]),
        make_item("com.acme/wiki", "1.0.0", is_latest=True, remotes=[wiki]),
    ]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    proj = make_project(tmp_path, monkeypatch)
    proj.registry(items())
    return proj


def holodeck(project: Project, *argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A HoloDeck venv program (`holodeck_check.py` through its python, or its CLI), run
    with HOME = the project's home and only `env` exported."""
    assert HOLODECK_PYTHON
    return subprocess.run(
        list(argv),
        cwd=project.root,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(project.home), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def load(project: Project, agent: Path, env: dict[str, str]) -> dict[str, Any]:
    """The agent as HoloDeck's loader sees it: ok and its tools, or its error."""
    assert HOLODECK_PYTHON
    proc = holodeck(project, HOLODECK_PYTHON, str(CHECK), str(agent), env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["holodeck"] == "0.7.1"
    result: dict[str, Any] = report["agents"][0]
    return result


def mcp_list(project: Project, agent: Path, env: dict[str, str]) -> tuple[int, str]:
    """`holodeck mcp list --agent AGENT --all --json`: exit code and output."""
    assert HOLODECK_PYTHON
    cli = str(Path(HOLODECK_PYTHON).with_name("holodeck"))
    proc = holodeck(project, cli, "mcp", "list", "--agent", str(agent), "--all", "--json", env=env)
    return proc.returncode, proc.stdout + proc.stderr


def listed(output: str) -> list[tuple[str, str]]:
    data = json.loads(output[output.index("{") :])
    return [(s["name"], s["source"]) for s in data["servers"]]


# --- block 1: unset optional secrets ------------------------------------------------------


def test_holodeck_loads_agents_and_the_global_config_with_optional_secrets_unset(
    project: Project,
) -> None:
    project.write("agents/research/agent.yaml", AGENT.format(name="research"))
    elsewhere = project.root.parent / "elsewhere" / "agent.yaml"  # another project's agent
    elsewhere.parent.mkdir()
    elsewhere.write_text(AGENT.format(name="elsewhere"))
    project.manifest(
        '[servers.context7]\nname = "io.github.upstash/context7"',
        '[servers.docs]\nname = "io.github.acme/docs"',
        '[servers.wiki]\nname = "com.acme/wiki"',
        '[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"',
        '[[targets]]\nkind = "holodeck-global"\nservers = ["context7", "wiki"]',
    )
    project.lock()
    result = project.sync()
    assert result.code == 0, result.text
    # said once per target, when sync writes the entries; not again on a no-op run
    notes = [line for line in result.err.splitlines() if "left out" in line]
    assert notes == [
        f"{kind} (target #{n}): optional CONTEXT7_API_KEY, X_WIKI_KEY left out (HoloDeck "
        "fails to load a ${NAME} that is unset); to pass one, set it in the server's `env` "
        "or `headers` in mcp.toml, which makes it required"
        for kind, n in (("holodeck-agent", 1), ("holodeck-global", 2))
    ]
    again = project.sync()
    assert again.code == 0 and "left out" not in again.text, again.text
    assert project.sync("--check").code == 0

    agent = project.path("agents/research/agent.yaml")
    for env in (REQUIRED, {**REQUIRED, **OPTIONAL}):  # optional ones unset, then set
        research = load(project, agent, env)
        assert research["ok"], research.get("error")
        tools = {t["name"]: t for t in research["tools"]}
        assert sorted(tools) == ["context7", "docs", "wiki"]  # the agent's own win
        assert "env" not in tools["context7"]
        assert tools["docs"]["env"] == {"DOCS_TOKEN": "dt-1"}
        assert "headers" not in tools["wiki"]
        # an unrelated agent sees only the global config, which must load as well
        other = load(project, elsewhere, env)
        assert other["ok"], other.get("error")
        assert [t["name"] for t in other["tools"]] == ["context7", "wiki"]
        for path, expected in (
            (agent, [("context7", "agent"), ("docs", "agent"), ("wiki", "agent")]),
            (elsewhere, []),
        ):
            code, output = mcp_list(project, path, env)
            assert code == 0, output
            assert listed(output) == [*expected, ("context7", "global"), ("wiki", "global")]


def test_an_optional_secret_declared_in_mcp_toml_is_written_and_required(
    project: Project,
) -> None:
    project.write("agents/a/agent.yaml", AGENT.format(name="a"))
    project.manifest(
        '[servers.context7]\nname = "io.github.upstash/context7"\n'
        'env = { CONTEXT7_API_KEY = "${CONTEXT7_API_KEY}" }',
        '[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"',
    )
    project.lock()
    result = project.sync()
    assert result.code == 0 and "left out" not in result.text, result.text
    agent = project.path("agents/a/agent.yaml")
    loaded = load(project, agent, OPTIONAL)
    assert loaded["ok"], loaded.get("error")
    assert loaded["tools"][0]["env"] == {"CONTEXT7_API_KEY": "c7-2"}
    assert "'CONTEXT7_API_KEY' not found" in load(project, agent, {})["error"]


# --- block 4: removing a target -----------------------------------------------------------

USER_GLOBAL = (
    "# my own HoloDeck settings\n"
    "mcp_servers:\n"
    "  - name: mine\n"
    "    description: My own server\n"
    "    type: mcp\n"
    "    command: npx\n"
    '    args: ["-y", "mine-mcp@1.0.0"]\n'
)


def test_a_removed_global_target_gives_back_what_sync_wrote(project: Project) -> None:
    project.write("agents/research/agent.yaml", AGENT.format(name="research"))
    global_file = project.write("~/.holodeck/config.yaml", USER_GLOBAL)
    agent_target = '[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"'
    servers = (
        '[servers.docs]\nname = "io.github.acme/docs"',
        '[servers.wiki]\nname = "com.acme/wiki"',
    )
    project.manifest(*servers, agent_target, '[[targets]]\nkind = "holodeck-global"')
    project.lock()
    assert project.sync().code == 0
    assert "name: docs" in global_file.read_text()
    project.manifest(*servers, agent_target)  # the team drops the global target

    refused = project.sync("--target", "holodeck-global")
    assert refused.code == 2
    assert refused.err == (
        "error: mcp.toml declares no [[targets]] of kind 'holodeck-global' any more; entries "
        f"sync wrote for it are still in {global_file} (docs, wiki)\n"
        "  hint: run `mcpsync sync` without --target to remove them (`mcpsync sync --dry-run` "
        "shows how), or declare the target again in mcp.toml to keep them\n"
    )
    check = project.sync("--check")
    assert check.code == 1 and str(global_file) in check.err, check.text
    result = project.sync()
    assert result.code == 0, result.text
    assert f"Updated {global_file}" in result.err
    assert (
        f"{global_file}: removed docs, wiki, written for a holodeck-global target mcp.toml "
        "no longer declares" in result.err
    )
    assert global_file.read_text() == USER_GLOBAL  # the user's own entry and comment stay
    assert project.ledger()["files"] == {}
    again = project.sync()
    assert again.code == 0 and "already match" in again.err and "removed" not in again.err
    assert project.sync("--check").code == 0

    agent = load(project, project.path("agents/research/agent.yaml"), REQUIRED)
    assert agent["ok"], agent.get("error")
    assert [(t["name"], t.get("command")) for t in agent["tools"]] == [
        ("docs", "npx"),
        ("wiki", None),
        ("mine", "npx"),  # the global config, merged in: only the user's entry is left
    ]
    code, output = mcp_list(project, project.path("agents/research/agent.yaml"), REQUIRED)
    assert code == 0, output
    assert listed(output) == [("docs", "agent"), ("wiki", "agent"), ("mine", "global")]
