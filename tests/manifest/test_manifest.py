"""mcp.toml: strict validation (a table of bad inputs, each through the parser and the CLI),
what a valid file parses to, and the `inputs` a lock records."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import assert_clean_failure, run_cli, write_project

from mcpsync.errors import InputError
from mcpsync.manifest.parse import ServerSpec, TargetSpec, load, parse

PATH = Path("/project/mcp.toml")
A = '[servers.a]\nname = "io.github.x/a"\n'  # a valid registry server to build on

# (id, mcp.toml text, what the error line must name). Every message also names the file.
BAD: list[tuple[str, str, list[str]]] = [
    # unknown keys, at every level
    ("top-key", "foo = 1\n", ["'foo'"]),
    (
        "registry-key",
        '[registry]\nurl = "https://r.example"\ntoken = "t"\n',
        ["[registry]", "'token'"],
    ),
    ("server-key", A + 'versoin = "1"\n', ["server 'a'", "'versoin'"]),
    (
        "custom-server-key",
        '[servers.a]\ncommand = "uvx"\nversion = "1"\n',
        ["server 'a'", "'version'"],
    ),
    ("target-key", '[[targets]]\nkind = "cursor"\nfile = "x"\n', ["[[targets]] #1", "'file'"]),
    (
        "second-target-key",
        '[[targets]]\nkind = "cursor"\n[[targets]]\nkind = "zed"\nx = 1\n',
        ["[[targets]] #2", "'x'"],
    ),
    # aliases
    ("alias-dot", '[servers."a.b"]\nname = "io.github.x/a"\n', ["alias 'a.b'"]),
    ("alias-dash-first", '[servers."-a"]\nname = "io.github.x/a"\n', ["alias '-a'"]),
    ("alias-space", '[servers."a b"]\nname = "io.github.x/a"\n', ["alias 'a b'"]),
    ("alias-empty", '[servers.""]\nname = "io.github.x/a"\n', ["alias ''"]),
    ("alias-unicode", '[servers."café"]\nname = "io.github.x/a"\n', ["alias 'café'"]),
    # constraints
    ("constraint-op", A + 'version = ">>1"\n', ["server 'a'", "`version`", "'>>1'"]),
    ("constraint-or", A + 'version = "1 || 2"\n', ["server 'a'", "`version`", "'||'"]),
    (
        "constraint-latest-and",
        A + 'version = "latest, >1"\n',
        ["server 'a'", "`version`", "latest"],
    ),
    ("constraint-hyphen", A + 'version = "1.2 - 2"\n', ["server 'a'", "`version`"]),
    (
        "constraint-compatible-one-part",
        A + 'version = "~=1"\n',
        ["server 'a'", "`version`", "'~='"],
    ),
    # registry vs custom
    ("name-and-command", A + 'command = "uvx"\n', ["server 'a'", "`name`", "`command`"]),
    ("name-and-url", A + 'url = "https://x.example/mcp"\n', ["server 'a'", "`name`", "`url`"]),
    ("neither", '[servers.a]\nargs = ["x"]\n', ["server 'a'", "`name`", "`command`"]),
    (
        "command-and-url",
        '[servers.a]\ncommand = "uvx"\nurl = "https://x.example"\n',
        ["server 'a'", "`command`", "`url`"],
    ),
    ("registry-name", '[servers.a]\nname = "no-slash"\n', ["server 'a'", "`name`", "'no-slash'"]),
    ("registry-name-two-slashes", '[servers.a]\nname = "a/b/c"\n', ["server 'a'", "`name`"]),
    ("custom-url-scheme", '[servers.a]\nurl = "ftp://x.example"\n', ["server 'a'", "`url`"]),
    ("custom-command-blank", '[servers.a]\ncommand = " "\n', ["server 'a'", "`command`"]),
    # types
    ("version-type", A + "version = 1\n", ["server 'a'", "`version`"]),
    ("name-type", "[servers.a]\nname = 1\n", ["server 'a'", "`name`"]),
    ("args-type", A + 'args = "x"\n', ["server 'a'", "`args`"]),
    ("args-item-type", A + "args = [1]\n", ["server 'a'", "`args`"]),
    ("env-type", A + 'env = "A=1"\n', ["server 'a'", "`env`"]),
    ("env-value-type", A + "env = { A = 1 }\n", ["server 'a'", "`env`"]),
    (
        "headers-type",
        '[servers.a]\nurl = "https://x.example"\nheaders = { X = true }\n',
        ["server 'a'", "`headers`"],
    ),
    ("variables-type", A + "variables = []\n", ["server 'a'", "`variables`"]),
    ("prereleases-type", A + 'prereleases = "yes"\n', ["server 'a'", "`prereleases`"]),
    ("description-type", A + "description = 1\n", ["server 'a'", "`description`"]),
    ("server-not-table", "servers = { a = 1 }\n", ["server 'a'", "[servers.a]"]),
    ("servers-type", "servers = 1\n", ["`servers`"]),
    ("registry-type", "registry = 1\n", ["`registry`"]),
    ("registry-url-empty", '[registry]\nurl = ""\n', ["[registry] url"]),
    ("targets-type", '[targets]\nkind = "cursor"\n', ["`targets`"]),
    ("target-type", "targets = [1]\n", ["[[targets]] #1"]),
    ("target-path-type", '[[targets]]\nkind = "cursor"\npath = 1\n', ["[[targets]] #1", "`path`"]),
    # choices
    ("package-choice", A + 'package = "cargo"\n', ["server 'a'", "`package`", "'cargo'"]),
    ("transport-choice", A + 'transport = "http"\n', ["server 'a'", "`transport`", "'http'"]),
    ("target-kind-missing", '[[targets]]\npath = "x"\n', ["[[targets]] #1", "`kind`"]),
    ("target-kind-choice", '[[targets]]\nkind = "vim"\n', ["[[targets]] #1", "`kind`", "'vim'"]),
    (
        "target-scope-choice",
        '[[targets]]\nkind = "cursor"\nscope = "global"\n',
        ["[[targets]] #1", "`scope`", "'global'"],
    ),
    # environment variable names
    ("env-name-dash", A + 'env = { "A-B" = "x" }\n', ["server 'a'", "`env`", "'A-B'"]),
    ("env-name-digit", A + 'env = { "1A" = "x" }\n', ["server 'a'", "`env`", "'1A'"]),
    (
        "env-name-custom",
        '[servers.a]\ncommand = "x"\nenv = { "A B" = "x" }\n',
        ["server 'a'", "`env`", "'A B'"],
    ),
    # targets naming servers that do not exist
    (
        "target-unknown-alias",
        A + '[[targets]]\nkind = "cursor"\nservers = ["a", "nope"]\n',
        ["[[targets]] #1", "`servers`", "'nope'"],
    ),
    (
        "target-servers-type",
        A + '[[targets]]\nkind = "cursor"\nservers = "a"\n',
        ["[[targets]] #1", "`servers`"],
    ),
]


@pytest.mark.parametrize(("text", "needles"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_manifest_is_an_input_error_naming_file_server_and_key(
    text: str, needles: list[str]
) -> None:
    with pytest.raises(InputError) as caught:
        parse(text, PATH)
    message = caught.value.message
    assert message.startswith("mcp.toml: "), message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"
    assert "\n" not in message
    assert message.count("invalid version constraint") <= 1  # no stutter


@pytest.mark.parametrize(("text", "needles"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_manifest_via_cli_exits_2_with_one_line(
    tmp_path: Path, text: str, needles: list[str]
) -> None:
    root = write_project(tmp_path, text)
    result = run_cli("-C", root, "lock")
    assert_clean_failure(result, 2, "mcp.toml", *needles)
    assert not (root / "mcp.lock").exists()


def test_constraint_error_keeps_the_reason_and_moves_the_forms_to_the_hint() -> None:
    with pytest.raises(InputError) as caught:
        parse(A + 'version = "1 || 2"\n', PATH)
    assert caught.value.message == (
        "mcp.toml: server 'a': `version` '1 || 2' is not a valid constraint: "
        "alternatives ('||') are not supported, use one range"
    )
    assert caught.value.hint is not None and caught.value.hint.startswith("accepted: '1.2.3'")


@pytest.mark.parametrize(
    ("toml", "hint"),
    [
        ('[servers.a]\ncommand = "x"\nenviroment = { A = "1" }\n', "did you mean: env? allowed"),
        (A + 'arguments = ["x"]\n', "did you mean: args? allowed"),
        (A + 'versoin = "1"\n', "did you mean: version? allowed"),
        ('[[targets]]\nkind = "claud-code"\n', "did you mean: claude-code? use one of"),
        ('[[targets]]\nkind = "cursor"\nservrs = []\n', "did you mean: servers? allowed"),
        ('[regsitry]\nurl = "x"\n', "did you mean: registry? allowed"),
    ],
)
def test_a_misspelled_key_or_kind_offers_the_close_one(toml: str, hint: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(toml, Path("mcp.toml"))
    assert caught.value.hint is not None and caught.value.hint.startswith(hint)


def test_a_key_like_none_offers_nothing() -> None:
    with pytest.raises(InputError) as caught:
        parse(A + 'zzz = "1"\n', Path("mcp.toml"))
    assert caught.value.hint is not None and caught.value.hint.startswith("allowed keys: ")


def test_a_misspelled_option_choice_offers_the_close_one(tmp_path: Path) -> None:
    result = run_cli("-C", write_project(tmp_path, ""), "sync", "--target", "claud-code")
    assert result.code == 2
    assert "is not one of" in result.err and "(Did you mean: claude-code?)" in result.err


def test_target_naming_an_unknown_alias_lists_the_servers_in_the_hint() -> None:
    text = A + '[servers.b]\ncommand = "x"\n[[targets]]\nkind = "cursor"\nservers = ["nope"]\n'
    with pytest.raises(InputError) as caught:
        parse(text, PATH)
    assert caught.value.message == (
        "mcp.toml: [[targets]] #1: `servers` names unknown server alias 'nope'"
    )
    assert caught.value.hint == "servers in mcp.toml: a, b"


@pytest.mark.parametrize(
    "text",
    ["[servers.a\n", A + 'name = "io.github.x/b"\n', "x = \n"],
    ids=["unclosed-header", "duplicate-key", "missing-value"],
)
def test_invalid_toml_names_the_file(tmp_path: Path, text: str) -> None:
    root = write_project(tmp_path, text)
    result = run_cli("-C", root, "lock")
    assert_clean_failure(result, 2, "Invalid TOML", str(root / "mcp.toml"))


def test_missing_manifest_says_to_run_init(tmp_path: Path) -> None:
    result = run_cli("-C", tmp_path, "lock")
    line = assert_clean_failure(result, 2, "mcp.toml not found", str(tmp_path))
    assert "mcpsync init" in result.err, line


def test_manifest_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "mcp.toml").write_bytes(b'[servers.a]\nname = "\xff"\n')
    assert_clean_failure(run_cli("-C", tmp_path, "lock"), 2, "mcp.toml", "UTF-8")


# --- what a valid manifest means ------------------------------------------------------------

FULL = """\
[registry]
url = "https://registry.example"

[servers.filesystem]
name = "io.github.modelcontextprotocol/server-filesystem"
version = "^2026.8"
args = ["/workspace"]
env = { LOG_LEVEL = "info", TOKEN = "${TOKEN}" }
package = "npm"
transport = "stdio"
prereleases = true
description = "Files"
variables = { dir = "/srv" }

[servers.plain]
name = "io.github.x/plain"

[servers.internal]
command = "uvx"
args = ["internal-mcp==1.4.2"]

[servers.web]
url = "https://mcp.internal.example/mcp"
headers = { Authorization = "Bearer ${TOKEN}" }
transport = "sse"

[[targets]]
kind = "holodeck-agent"
path = "agents/*/agent.yaml"
servers = ["filesystem"]

[[targets]]
kind = "cursor"
scope = "user"
"""


def test_full_manifest_parses_to_plain_values() -> None:
    found = parse(FULL, PATH)
    assert found.registry_url == "https://registry.example"
    assert found.root == Path("/project")
    assert list(found.servers) == ["filesystem", "plain", "internal", "web"]
    assert found.servers["filesystem"] == ServerSpec(
        alias="filesystem",
        name="io.github.modelcontextprotocol/server-filesystem",
        version="^2026.8",
        args=("/workspace",),
        env={"LOG_LEVEL": "info", "TOKEN": "${TOKEN}"},
        variables={"dir": "/srv"},
        package="npm",
        transport="stdio",
        prereleases=True,
        description="Files",
    )
    assert found.servers["plain"] == ServerSpec(alias="plain", name="io.github.x/plain")
    assert found.servers["plain"].version == "*"
    assert not found.servers["plain"].is_custom
    internal = found.servers["internal"]
    assert internal.is_custom and internal.command == "uvx" and internal.name is None
    assert found.servers["web"].url == "https://mcp.internal.example/mcp"
    assert found.targets == (
        TargetSpec("holodeck-agent", "agents/*/agent.yaml", ("filesystem",), None, 0),
        TargetSpec("cursor", None, None, "user", 1),
    )


def test_inputs_hold_only_what_the_user_set_in_a_fixed_order() -> None:
    found = parse(FULL, PATH)
    assert found.servers["plain"].inputs() == {}
    inputs = found.servers["filesystem"].inputs()
    assert inputs == {
        "version": "^2026.8",
        "args": ["/workspace"],
        "env": {"LOG_LEVEL": "info", "TOKEN": "${TOKEN}"},
        "variables": {"dir": "/srv"},
        "package": "npm",
        "transport": "stdio",
        "prereleases": True,
        "description": "Files",
    }
    assert list(inputs) == [  # the documented key order, whatever the order in mcp.toml
        "version",
        "args",
        "env",
        "variables",
        "package",
        "transport",
        "prereleases",
        "description",
    ]
    assert list(found.servers["internal"].inputs()) == ["command", "args"]
    assert found.servers["web"].inputs() == {
        "url": "https://mcp.internal.example/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}"},
        "transport": "sse",
    }


@pytest.mark.parametrize(("version", "recorded"), [("*", None), ("", None), ("^1", "^1")])
def test_star_and_empty_version_are_not_recorded(version: str, recorded: str | None) -> None:
    spec = parse(A + f'version = "{version}"\n', PATH).servers["a"]
    assert spec.version == (version or "*")
    assert spec.inputs().get("version") == recorded


def test_empty_manifest_is_valid() -> None:
    found = parse("", PATH)
    assert found.servers == {} and found.targets == () and found.registry_url is None


def test_load_reads_the_file(tmp_path: Path) -> None:
    (tmp_path / "mcp.toml").write_text(A, encoding="utf-8")
    assert load(tmp_path / "mcp.toml").servers["a"].name == "io.github.x/a"
