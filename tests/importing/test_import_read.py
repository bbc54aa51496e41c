"""import_read: which file is which, entries in mcp.toml's terms, and the secret rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpsync.errors import InputError
from mcpsync.importing.read import Entry, detect_kind, read_entries


@pytest.mark.parametrize(
    ("path", "text", "kind"),
    [
        ("p/.mcp.json", "{}", "claude-code"),
        ("home/.claude.json", "{}", "claude-code"),
        ("p/.cursor/mcp.json", "{}", "cursor"),
        ("p/.vscode/mcp.json", "{}", "vscode"),
        ("p/.gemini/settings.json", "{}", "gemini"),
        ("p/.zed/settings.json", "{}", "zed"),
        ("p/.codex/config.toml", "", "codex"),
        ("x/claude_desktop_config.json", "{}", "claude-desktop"),
        ("x/.codeium/windsurf/mcp_config.json", "{}", "windsurf"),
        ("agents/a/agent.yaml", "", "holodeck-agent"),
        ("home/.holodeck/config.yml", "", "holodeck-global"),
        # by content, whatever the name
        ("team.toml", "[mcp_servers.x]\ncommand = 'a'\n", "codex"),
        ("bot.yaml", "name: bot\ntools:\n  - type: mcp\n", "holodeck-agent"),
        ("shared.yml", "mcp_servers:\n  - name: x\n", "holodeck-global"),
        ("editor.json", '{"servers": {}, "inputs": []}', "vscode"),
    ],
)
def test_detect_kind(path: str, text: str, kind: str) -> None:
    assert detect_kind(Path(path), text) == kind


def test_an_unknown_file_asks_for_kind() -> None:
    with pytest.raises(InputError) as err:
        detect_kind(Path("servers.json"), '{"mcpServers": {}}')
    assert "cannot tell which client's config this is" in err.value.message
    assert "pass --kind" in str(err.value.hint)


def entry(kind: str, raw: dict[str, object], key: str = "srv") -> Entry:
    maps = {"vscode": "servers", "zed": "context_servers"}
    text = json.dumps({maps.get(kind, "mcpServers"): {key: raw}})
    (found,) = read_entries(Path("f.json"), "f.json", text, kind)
    return found


@pytest.mark.parametrize(
    ("kind", "value", "written", "exports"),
    [
        # references in each client's syntax become ${NAME}
        ("cursor", "${env:API_TOKEN}", "${API_TOKEN}", ["API_TOKEN"]),
        ("vscode", "${input:mcpsync-GH_TOKEN}", "${GH_TOKEN}", ["GH_TOKEN"]),
        ("vscode", "${input:github-token}", "${GITHUB_TOKEN}", ["GITHUB_TOKEN"]),
        ("claude-code", "${API_TOKEN:-dev}", "${API_TOKEN}", ["API_TOKEN"]),
        ("gemini", "$API_TOKEN", "${API_TOKEN}", ["API_TOKEN"]),
        ("claude-code", "$API_TOKEN", "${API_TOKEN}", ["API_TOKEN"]),  # secret name: hidden
        # literal secrets never reach mcp.toml: the variable's own name is the reference
        ("claude-code", "s3cr3t", "${API_TOKEN}", ["API_TOKEN"]),
        ("claude-code", "true", "true", []),  # a switch, not a secret
    ],
)
def test_env_values(kind: str, value: str, written: str, exports: list[str]) -> None:
    found = entry(kind, {"command": "x", "env": {"API_TOKEN": value}})
    assert found.env == {"API_TOKEN": written}
    assert found.exports == exports


@pytest.mark.parametrize(
    ("name", "value", "written"),
    [
        ("LOG_LEVEL", "debug", "debug"),  # not secret: kept
        ("LOG_LEVEL", "ghp_0123456789abcdef", "${LOG_LEVEL}"),  # shaped like a GitHub token
        ("DB_PASSWORD", "hunter2", "${DB_PASSWORD}"),
        ("OPENAI_API_KEY", "anything", "${OPENAI_API_KEY}"),
        ("AWS_SECRET_ACCESS_KEY", "x", "${AWS_SECRET_ACCESS_KEY}"),
        ("SESSION_COOKIE", "x", "${SESSION_COOKIE}"),
        ("HOME_DIR", "/home/me", "/home/me"),
    ],
)
def test_the_secret_rule_for_env(name: str, value: str, written: str) -> None:
    assert entry("claude-code", {"command": "x", "env": {name: value}}).env == {name: written}


def test_headers_args_and_urls_lose_their_secrets() -> None:
    found = entry(
        "claude-code",
        {
            "command": "node",
            "args": ["s.js", "--api-key", "k-123", "--token=t-456", "--port", "8080", "sk-abcdef"],
            "env": {},
        },
        key="my-tool",
    )
    assert found.args == [
        "s.js",
        "--api-key",
        "${MY_TOOL_API_KEY}",
        "--token=${MY_TOOL_TOKEN}",
        "--port",
        "8080",
        "${MY_TOOL_SECRET}",
    ]
    remote = entry(
        "claude-code",
        {
            "type": "sse",
            "url": "https://mcp.example.com/sse?api_key=abc&region=eu",
            "headers": {"Authorization": "Bearer abc", "X-Api-Key": "k", "X-Team": "core"},
        },
        key="remote",
    )
    assert remote.transport == "sse"
    assert remote.url == "https://mcp.example.com/sse?api_key=${REMOTE_API_KEY}&region=eu"
    assert remote.headers == {
        "Authorization": "Bearer ${REMOTE_TOKEN}",
        "X-Api-Key": "${REMOTE_X_API_KEY}",
        "X-Team": "core",
    }
    assert remote.exports == ["REMOTE_API_KEY", "REMOTE_TOKEN", "REMOTE_X_API_KEY"]


def test_codex_names_become_references() -> None:
    text = """
[mcp_servers.a]
command = "npx"
args = ["-y", "a@1.0.0"]
env = { MODE = "fast" }
env_vars = ["A_TOKEN"]
startup_timeout_sec = 20

[mcp_servers.b]
url = "https://b.example/mcp"
bearer_token_env_var = "B_TOKEN"
env_http_headers = { X-Org = "B_ORG" }
http_headers = { X-Team = "core" }
"""
    a, b = read_entries(Path(".codex/config.toml"), "c", text, "codex")
    assert a.env == {"MODE": "fast", "A_TOKEN": "${A_TOKEN}"}
    assert a.notes == ["not carried over: startup_timeout_sec"]
    assert b.transport == "streamable-http"
    assert b.headers == {
        "X-Team": "core",
        "X-Org": "${B_ORG}",
        "Authorization": "Bearer ${B_TOKEN}",
    }


def test_gemini_url_is_sse_and_http_url_streamable() -> None:
    assert entry("gemini", {"url": "https://g.example/sse"}).transport == "sse"
    assert entry("gemini", {"httpUrl": "https://g.example/mcp"}).transport == "streamable-http"
    assert entry("cursor", {"url": "https://c.example/mcp"}).transport == "streamable-http"


def test_vscode_predefined_variables_are_noted() -> None:
    found = entry("vscode", {"command": "node", "args": ["${workspaceFolder}/s.js"]})
    assert found.args == ["${workspaceFolder}/s.js"]
    assert found.notes == [
        "${workspaceFolder} is a client variable mcpsync cannot write; replace it in mcp.toml"
    ]


def test_holodeck_agent_reads_only_mcp_tools() -> None:
    text = """
tools:
  - {name: calc, type: function, file: c.py}
  - {name: files, type: mcp, command: npx, args: ["-y", "f@1.0.0"], registry_name: io.github.a/f,
     description: Files, request_timeout: 30}
"""
    (files,) = read_entries(Path("agent.yaml"), "agent.yaml", text, "holodeck-agent")
    assert (files.key, files.registry_name, files.description) == (
        "files",
        "io.github.a/f",
        "Files",
    )
    assert files.notes == []  # HoloDeck's per-tool settings are carried over
    assert files.holodeck == {"request_timeout": 30}
