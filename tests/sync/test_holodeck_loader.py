"""What sync writes, loaded by HoloDeck 0.7.1 itself (the path `holodeck chat` takes).

Skipped unless MCPSYNC_HOLODECK_PYTHON names the interpreter of a venv with
`holodeck-ai==0.7.1 exceptiongroup` installed (.ci/run makes one). tests/holodeck_check.py
runs there, with HOME pointing at a temp home whose .holodeck/config.yaml sync wrote, and
every ${VAR} the files reference set, since HoloDeck substitutes them when it loads.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sync_helpers import AGENT_TARGET, SERVERS, Project, make_project

HOLODECK_PYTHON = os.environ.get("MCPSYNC_HOLODECK_PYTHON")
CHECK = Path(__file__).resolve().parents[1].joinpath("holodeck_check.py")

pytestmark = pytest.mark.skipif(
    not HOLODECK_PYTHON, reason="MCPSYNC_HOLODECK_PYTHON is not set (HoloDeck venv)"
)

ENV = {
    "WEATHER_API_KEY": "wk-123",
    "PGHOST": "db.internal",
    "PGPASSWORD": "pw-456",
    "TOKEN": "tok-789",
}

RESEARCH = (
    "# Research agent, CRLF line endings\r\n"
    "name: research\r\n"
    "model: {provider: openai, name: gpt-4o}\r\n"
    "instructions:\r\n"
    "  inline: Be careful.\r\n"
    "tools:\r\n"
    "  # a hand-written function tool\r\n"
    "  - name: cite\r\n"
    "    description: Format a citation\r\n"
    "    type: function\r\n"
    "    file: tools/cite.py\r\n"
    "    function: cite\r\n"
)
SUPPORT = (
    "name: support\n"
    "model: {provider: openai, name: gpt-4o-mini}\n"
    "instructions: {inline: Be kind.}\n"
    "tools: [{name: faq, description: FAQ lookup, type: function, file: faq.py, function: faq}]"
)
USER_GLOBAL = (
    "# my own HoloDeck settings\n"
    "mcp_servers:\n"
    "  # written by hand; mcpsync keeps it\n"
    "  - name: mine\n"
    "    description: My own server\n"
    "    type: mcp\n"
    "    command: npx\n"
    '    args: ["-y", "mine-mcp@1.0.0"]\n'
)
MY_TOOLS = """
    [servers.my-tools]
    command = "npx"
    args = ["-y", "@acme/my-tools@2.0.0"]
    description = "Team tools"
    """


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def holodeck_load(
    project: Project, *agents: str, env: dict[str, str] | None = None, settings: bool = False
) -> Any:
    """`settings`: show each tool's per-tool settings too (request_timeout, ...)."""
    assert HOLODECK_PYTHON
    flags = ["--settings"] if settings else []
    proc = subprocess.run(
        [HOLODECK_PYTHON, str(CHECK), *flags, *(str(project.path(a)) for a in agents)],
        cwd=project.root,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(project.home), **ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["holodeck"] == "0.7.1"
    return {Path(a["path"]).relative_to(project.root).as_posix(): a for a in report["agents"]}


def synced_project(project: Project) -> None:
    project.write("agents/research/agent.yaml", RESEARCH)
    project.write("agents/research/tools/cite.py", "def cite(text: str) -> str:\n    return text\n")
    project.write("agents/support/agent.yaml", SUPPORT)
    project.write("agents/support/faq.py", "def faq(q: str) -> str:\n    return q\n")
    global_file = project.home / ".holodeck" / "config.yaml"
    global_file.parent.mkdir()
    global_file.write_text(USER_GLOBAL)
    project.manifest(
        SERVERS["files"],
        SERVERS["weather"],
        SERVERS["postgres"],
        SERVERS["search"],
        SERVERS["notes"],
        MY_TOOLS,
        """
        [[targets]]
        kind = "holodeck-agent"
        path = "agents/research/agent.yaml"

        [[targets]]
        kind = "holodeck-agent"
        path = "agents/support/agent.yaml"
        servers = ["files", "my-tools"]

        [[targets]]
        kind = "holodeck-global"
        servers = ["search", "weather"]
        """,
    )
    project.lock()
    result = project.sync()
    assert result.code == 0, result.text
    assert project.sync("--check").code == 0


FILES = {
    "name": "files",
    "description": "Read and write files",
    "type": "mcp",
    "transport": "stdio",
    "command": "npx",
    "args": ["-y", "@acme/files-mcp@1.2.0", "/workspace"],
    "registry_name": "io.github.acme/files",
}
MY_TOOLS_ENTRY = {
    "name": "my_tools",
    "description": "Team tools",
    "type": "mcp",
    "transport": "stdio",
    "command": "npx",
    "args": ["-y", "@acme/my-tools@2.0.0"],
}
NOTES = {
    "name": "notes",
    "description": "Team notes",
    "type": "mcp",
    "transport": "stdio",
    "command": "uvx",
    "args": ["acme-notes-mcp==1.4.2"],
}
POSTGRES = {
    "name": "postgres",
    "description": "Query PostgreSQL",
    "type": "mcp",
    "transport": "stdio",
    "command": "docker",
    "args": [
        "run",
        "-i",
        "--rm",
        "-e",
        "PGHOST",
        "-e",
        "PGPASSWORD",
        "docker.io/acme/postgres-mcp:3.1.0",
    ],
    "env": {"PGHOST": "db.internal", "PGPASSWORD": "pw-456"},
    "registry_name": "io.github.acme/postgres",
}
SEARCH = {
    "name": "search",
    "description": "Web search",
    "type": "mcp",
    "transport": "http",
    "url": "https://mcp.acme.example/search",
    "headers": {"Authorization": "Bearer tok-789"},
    "registry_name": "com.acme/search",
}
WEATHER = {
    "name": "weather",
    "description": "Forecasts",
    "type": "mcp",
    "transport": "stdio",
    "command": "uvx",
    "args": ["acme-weather-mcp==0.5.0"],
    "env": {"WEATHER_API_KEY": "wk-123"},
    "registry_name": "io.github.acme/weather",
}
MINE = {
    "name": "mine",
    "description": "My own server",
    "type": "mcp",
    "transport": "stdio",
    "command": "npx",
    "args": ["-y", "mine-mcp@1.0.0"],
}


def test_holodeck_loads_synced_agents_with_the_right_merged_tools(project: Project) -> None:
    synced_project(project)
    agents = holodeck_load(project, "agents/research/agent.yaml", "agents/support/agent.yaml")
    research, support = agents["agents/research/agent.yaml"], agents["agents/support/agent.yaml"]
    assert research["ok"], research.get("error")
    assert support["ok"], support.get("error")
    cite = {
        "name": "cite",
        "description": "Format a citation",
        "type": "function",
        "file": "tools/cite.py",
        "function": "cite",
    }
    faq = {
        "name": "faq",
        "description": "FAQ lookup",
        "type": "function",
        "file": "faq.py",
        "function": "faq",
    }
    # research declares every server itself, so the global `search` and `weather` are skipped
    # (the agent's own entry wins) and only the user's `mine` is merged in
    assert research["tools"] == [
        cite,
        FILES,
        MY_TOOLS_ENTRY,
        NOTES,
        POSTGRES,
        SEARCH,
        WEATHER,
        MINE,
    ]
    # support gets its subset, then the global entries in the global file's order
    assert support["tools"] == [faq, FILES, MY_TOOLS_ENTRY, MINE, SEARCH, WEATHER]
    for agent in (research, support):
        names = [t["name"] for t in agent["tools"]]
        assert len(names) == len(set(names))


def test_holodeck_refuses_a_missing_variable(project: Project) -> None:
    # Not a sync problem, but the reason the env must be complete: HoloDeck fails the load.
    synced_project(project)
    agents = holodeck_load(project, "agents/support/agent.yaml", env={"TOKEN": ""})
    assert agents["agents/support/agent.yaml"]["ok"]  # empty is set
    proc = subprocess.run(
        [str(HOLODECK_PYTHON), str(CHECK), str(project.path("agents/support/agent.yaml"))],
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(project.home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    (agent,) = json.loads(proc.stdout)["agents"]
    assert not agent["ok"]
    assert "Environment variable 'TOKEN' not found" in agent["error"]


def test_duplicate_global_name_breaks_every_holodeck_load_so_sync_never_writes_one(
    project: Project,
) -> None:
    synced_project(project)
    global_file = project.home / ".holodeck" / "config.yaml"
    # HoloDeck accepts a global file with two entries of one name, then fails every agent
    duplicated = global_file.read_text() + (
        "  - name: mine\n    description: again\n    type: mcp\n    command: uvx\n    args: [x]\n"
    )
    global_file.write_text(duplicated)
    agents = holodeck_load(project, "agents/support/agent.yaml")
    error = agents["agents/support/agent.yaml"]["error"]
    assert "Duplicate tool names found: mine" in error

    # sync refuses to add an entry whose name the user already uses, so it never makes one
    global_file.write_text(USER_GLOBAL.replace("name: mine", "name: search"))
    before = global_file.read_bytes()
    (project.state / "owners.json").unlink()
    result = project.sync()
    assert result.code == 2
    assert "entry 'search' belongs to you" in result.err
    assert global_file.read_bytes() == before


def test_reference_in_a_registry_description_does_not_break_loads(project: Project) -> None:
    # HoloDeck substitutes ${NAME} anywhere in the raw text; a description is not a reference
    from registry_stub import make_item, npm_package

    project.registry(
        [
            make_item(
                "io.github.acme/odd",
                "1.0.0",
                is_latest=True,
                description="Set ${ODD_API_KEY} before use",
                packages=[npm_package("@acme/odd", "1.0.0")],
            )
        ]
    )
    project.write(
        "agents/a/agent.yaml",
        "name: a\nmodel: {provider: openai, name: x}\ninstructions: {inline: hi}\n",
    )
    project.manifest(
        '[servers.odd]\nname = "io.github.acme/odd"\n',
        '[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"\n',
    )
    project.lock()
    assert project.sync().code == 0
    agent = holodeck_load(project, "agents/a/agent.yaml")["agents/a/agent.yaml"]
    assert agent["ok"], agent.get("error")
    assert agent["tools"][0]["description"] == "Set $ {ODD_API_KEY} before use"


# --- per-tool settings: declared in mcp.toml, written by sync, kept from the files ------------

AGENT = "name: a\nmodel: {provider: openai, name: gpt-4o}\ninstructions: {inline: Hi.}\n"
DEFAULTS = {
    "defer_loading": True,
    "load_tools": True,
    "load_prompts": True,
    "request_timeout": 60,
    "is_retrieval": False,
}


def settings_of(project: Project, agent: str) -> dict[str, dict[str, Any]]:
    loaded = holodeck_load(project, agent, settings=True)[agent]
    assert loaded["ok"], loaded
    names = ("name", *DEFAULTS, "timeout", "config")
    return {t["name"]: {k: t[k] for k in names if k in t and k != "name"} for t in loaded["tools"]}


def test_holodeck_tool_settings_from_mcp_toml_reach_holodeck(project: Project) -> None:
    project.write("agents/a/agent.yaml", AGENT)
    project.manifest(
        SERVERS["files"],
        SERVERS["notes"] + "holodeck = { request_timeout = 120, defer_loading = false }\n",
        """
        [[targets]]
        kind = "holodeck-agent"
        path = "agents/*/agent.yaml"
        holodeck = { load_prompts = false, request_timeout = 30 }
        """,
    )
    project.lock()
    assert project.sync().code == 0
    assert settings_of(project, "agents/a/agent.yaml") == {
        "files": {**DEFAULTS, "load_prompts": False, "request_timeout": 30},  # the target's
        "notes": {
            **DEFAULTS,
            "load_prompts": False,
            "request_timeout": 120,
            "defer_loading": False,
        },
    }
    assert project.sync("--check").code == 0
    assert project.run("lock", "--check").code == 0  # settings are not lock inputs


def test_a_setting_typed_into_agent_yaml_is_kept_by_sync_and_adopt(project: Project) -> None:
    path = project.write(
        "agents/a/agent.yaml",
        AGENT + "tools:\n  - name: files\n    description: mine\n    type: mcp\n"
        "    command: npx\n    args: [-y, my-files@0.1]\n    is_retrieval: true\n"
        "    request_timeout: 300\n",
    )
    project.manifest(SERVERS["files"], AGENT_TARGET)
    project.lock()
    assert project.sync().code == 2  # a hand-written tool: refused without --adopt
    adopted = project.sync("--adopt")
    assert adopted.code == 0, adopted.text
    want = {**DEFAULTS, "is_retrieval": True, "request_timeout": 300}
    assert settings_of(project, "agents/a/agent.yaml") == {"files": want}  # not reverted
    path.write_text(path.read_text().replace("request_timeout: 300", "request_timeout: 90"))
    assert project.sync().code == 0
    assert settings_of(project, "agents/a/agent.yaml")["files"]["request_timeout"] == 90
    # a setting mcp.toml declares wins over the file's
    project.manifest(SERVERS["files"] + "holodeck = { request_timeout = 45 }\n", AGENT_TARGET)
    assert project.sync().code == 0
    assert settings_of(project, "agents/a/agent.yaml")["files"]["request_timeout"] == 45


def test_import_carries_holodeck_tool_settings_into_mcp_toml(project: Project) -> None:
    project.write(
        "agents/a/agent.yaml",
        AGENT + "tools:\n  - name: notes\n    description: Team notes\n    type: mcp\n"
        "    command: uvx\n    args: [acme-notes-mcp==1.4.2]\n    request_timeout: 300\n"
        "    defer_loading: false\n",
    )
    project.manifest()
    result = project.run("import", "agents/a/agent.yaml")
    assert result.code == 0, result.text
    assert (
        "holodeck = { defer_loading = false, request_timeout = 300 }"
        in project.read("mcp.toml").decode()
    )
    assert "not carried over" not in result.text
    project.lock()
    assert project.sync().code == 0
    assert settings_of(project, "agents/a/agent.yaml")["notes"] == {
        **DEFAULTS,
        "request_timeout": 300,
        "defer_loading": False,
    }


@pytest.mark.parametrize(
    ("snippet", "needle"),
    [
        (
            "holodeck = { request_timout = 5 }",
            "mcp.toml: server 'notes': `holodeck` key 'request_timout' is not a HoloDeck tool "
            "setting\n  hint: did you mean: request_timeout? HoloDeck's MCP tools take: config,",
        ),
        ("holodeck = { request_timeout = 0 }", "must be a positive whole number of seconds"),
        ("holodeck = { defer_loading = 1 }", "'defer_loading' must be true or false, got 1"),
    ],
)
def test_holodeck_settings_are_checked_against_the_keys_holodeck_knows(
    project: Project, snippet: str, needle: str
) -> None:
    project.manifest(SERVERS["notes"] + snippet + "\n", AGENT_TARGET)
    result = project.run("lock")
    assert result.code == 2 and needle in result.err, result.text
    assert "Traceback" not in result.err


def test_holodeck_settings_on_a_client_target_are_refused(project: Project) -> None:
    project.manifest(
        SERVERS["notes"], '[[targets]]\nkind = "cursor"\nholodeck = { load_tools = false }\n'
    )
    result = project.run("lock")
    assert result.code == 2
    assert "`holodeck` settings apply to HoloDeck targets only, not cursor" in result.err


def test_holodeck_global_tool_settings_reach_every_agent(project: Project) -> None:
    project.write("agents/a/agent.yaml", AGENT)
    project.manifest(
        SERVERS["files"],
        SERVERS["notes"],
        """
        [[targets]]
        kind = "holodeck-agent"
        path = "agents/*/agent.yaml"
        servers = ["files"]

        [[targets]]
        kind = "holodeck-global"
        servers = ["notes"]
        holodeck = { request_timeout = 15, config = { mode = "fast" } }
        """,
    )
    project.lock()
    assert project.sync().code == 0, project.sync().text
    assert settings_of(project, "agents/a/agent.yaml") == {
        "files": DEFAULTS,
        "notes": {**DEFAULTS, "request_timeout": 15, "config": {"mode": "fast"}},
    }
