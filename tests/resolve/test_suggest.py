"""Typos: "did you mean" for registry names (lock, add, show; HTTP stand-in and `file:`
snapshot) and aliases (remove, -P, target subsets), and the lock-time warning about `env` and
`variables` keys the server does not read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import age, assert_clean_failure, pins, run_cli, write_project, write_snapshot
from registry_stub import RegistryStub, sample_items

from mcpsync.suggest import close

WEATHER, POSTGRES = "io.github.example/weather", "io.github.example/postgres"


@pytest.fixture
def stub() -> Iterator[RegistryStub]:
    with RegistryStub(sample_items()) as running:
        yield running


def cli(stub: RegistryStub, root: Path, *args: str) -> Any:
    return run_cli("--registry", stub.url, "-C", root, *args)


def test_close_ignores_case_and_keeps_spelling() -> None:
    assert close("API_key", ["API_KEY", "LOG_LEVEL"]) == ["API_KEY"]
    assert close("wether", ["weather", "notes", "search"]) == ["weather"]
    assert close("nope", ["notes", "weather"]) == []  # 0.67: not close enough
    assert close("weather", ["weather"]) == []  # the word itself is no suggestion


# --- registry names --------------------------------------------------------------------------


NAME_HINT = "check `name` in mcp.toml (`mcpsync search TEXT` lists matching names)"


@pytest.mark.parametrize(
    ("typo", "searches"),
    [
        ("io.github.example/wether", ["io.github.example%2F", "wether"]),  # the server part
        ("io.github.exmaple/weather", ["io.github.exmaple%2F", "weather"]),  # the namespace
        ("IO.github.example/weather", ["IO.github.example%2F", "weather"]),  # names are cased
    ],
)
def test_lock_suggests_close_registry_names_in_two_searches(
    tmp_path: Path, stub: RegistryStub, typo: str, searches: list[str]
) -> None:
    root = write_project(tmp_path, f'[servers.w]\nname = "{typo}"\n')
    result = cli(stub, root, "lock")
    assert_clean_failure(result, 2, f"mcp.toml: server 'w': Server '{typo}' not found")
    assert result.err_lines[1] == f"  hint: did you mean: {WEATHER}? {NAME_HINT}"
    assert stub.requests[1:] == [
        f"/v0.1/servers?limit=100&search={text}&version=latest" for text in searches
    ]
    assert not (root / "mcp.lock").exists()


def test_no_close_name_keeps_the_old_hint(tmp_path: Path, stub: RegistryStub) -> None:
    root = write_project(tmp_path, '[servers.w]\nname = "io.github.other/thing"\n')
    result = cli(stub, root, "lock")
    assert_clean_failure(result, 2, "Server 'io.github.other/thing' not found")
    assert result.err_lines[1] == f"  hint: {NAME_HINT}"


def test_lock_suggests_from_a_file_snapshot(tmp_path: Path) -> None:
    url = write_snapshot(tmp_path, sample_items())
    root = write_project(
        tmp_path, f'[registry]\nurl = "{url}"\n[servers.w]\nname = "com.example/serch"\n'
    )
    result = run_cli("-C", root, "lock")
    assert_clean_failure(result, 2, "Server 'com.example/serch' not found")
    assert result.err_lines[1] == f"  hint: did you mean: com.example/search? {NAME_HINT}"


def test_add_suggests_and_writes_nothing(tmp_path: Path, stub: RegistryStub) -> None:
    root = write_project(tmp_path, "[servers]\n")
    before = age(root / "mcp.toml")
    result = cli(stub, root, "add", "io.github.example/postgress")
    assert_clean_failure(result, 2, "Server 'io.github.example/postgress' not found")
    assert result.err_lines[1] == f"  hint: did you mean: {POSTGRES}? {NAME_HINT}"
    assert (root / "mcp.toml").read_text() == "[servers]\n"
    assert (root / "mcp.toml").stat().st_mtime_ns == before
    assert not (root / "mcp.lock").exists()


def test_show_suggests(tmp_path: Path, stub: RegistryStub) -> None:
    result = cli(stub, tmp_path, "show", "io.github.example/wether@1.0.0")
    assert_clean_failure(result, 2, "Server 'io.github.example/wether' not found")
    assert result.err_lines[1] == (
        f"  hint: did you mean: {WEATHER}? `mcpsync search TEXT` lists the names that contain TEXT"
    )
    assert len(stub.requests) == 3  # the lookup and two searches


# --- aliases ---------------------------------------------------------------------------------


TEAM = """\
[servers.weather]
name = "io.github.example/weather"

[servers.notes]
name = "io.github.example/notes"
variables = { dir = "/srv" }
"""


@pytest.fixture
def team(tmp_path: Path, stub: RegistryStub) -> Path:
    root = write_project(tmp_path / "team", TEAM)
    assert cli(stub, root, "lock").code == 0
    return root


def test_remove_suggests_the_alias(team: Path, stub: RegistryStub) -> None:
    result = cli(stub, team, "remove", "wether")
    assert_clean_failure(result, 2, "no server 'wether' to remove")
    assert result.err_lines[1] == "  hint: did you mean: weather? servers: notes, weather"


def test_upgrade_package_suggests_the_alias(team: Path, stub: RegistryStub) -> None:
    result = cli(stub, team, "lock", "-P", "Notes", "-P", "weather")
    assert_clean_failure(result, 2, "-P/--upgrade-package: no server 'Notes'")
    assert result.err_lines[1] == "  hint: did you mean: notes? servers: notes, weather"


def test_target_subset_suggests_the_alias(team: Path, stub: RegistryStub) -> None:
    (team / "mcp.toml").write_text(TEAM + '\n[[targets]]\nkind = "cursor"\nservers = ["weathr"]\n')
    result = cli(stub, team, "lock")
    assert_clean_failure(result, 2, "unknown server alias 'weathr'")
    assert (
        result.err_lines[1] == "  hint: did you mean: weather? servers in mcp.toml: notes, weather"
    )


# --- env and variables keys the server does not read -----------------------------------------


def test_lock_warns_on_unknown_env_and_variables_keys(tmp_path: Path, stub: RegistryStub) -> None:
    toml = (
        f'[servers.db]\nname = "{POSTGRES}"\n'
        'env = { DATABSE_URL = "${DB}", CUSTOM = "1", LOG_LEVEL = "debug" }\n\n'
        '[servers.notes]\nname = "io.github.example/notes"\n'
        'variables = { dir = "/srv", notes_dir = "/x" }\n\n'
        '[servers.search]\nname = "com.example/search"\nvariables = { tokn = "${T}" }\n'
    )
    root = write_project(tmp_path, toml)
    result = cli(stub, root, "lock")
    assert result.code == 0, str(result)
    pg = f"{POSTGRES} 3.1.0 (oci package docker.io/example/postgres-mcp:3.1.0)"
    assert [line for line in result.err_lines if line.startswith("warning:")] == [
        f"warning: mcp.toml: server 'db': `env` key 'DATABSE_URL' is not declared by {pg}; "
        "did you mean: DATABASE_URL?",
        f"warning: mcp.toml: server 'db': `env` key 'CUSTOM' is not declared by {pg}; "
        "it declares: DATABASE_URL, LOG_LEVEL",
        "warning: mcp.toml: server 'notes': `variables` key 'notes_dir' is not used by "
        "io.github.example/notes 1.0.0 (pypi package notes-mcp); did you mean: notes-dir?",
        "warning: mcp.toml: server 'search': `variables` key 'tokn' is not used by "
        "com.example/search 2.0.0 (streamable-http remote); did you mean: token?",
    ]
    assert pins(root) == {"db": "3.1.0", "notes": "1.0.0", "search": "2.0.0"}  # still locked
    # A no-op lock asks the registry nothing, so it has nothing to check and stays quiet.
    stub.reset_counts()
    again = cli(stub, root, "lock", "--json")
    assert again.json()["warnings"] == [] and stub.request_count == 0


def test_lock_json_lists_the_warnings(tmp_path: Path, stub: RegistryStub) -> None:
    root = write_project(
        tmp_path, f'[servers.db]\nname = "{POSTGRES}"\nenv = {{ log_level = "x" }}\n'
    )
    result = cli(stub, root, "lock", "--json")
    assert result.code == 0 and result.err == "", str(result)
    assert result.json()["warnings"] == [
        {
            "server": "db",
            "kind": "env",
            "key": "log_level",
            "suggestions": ["LOG_LEVEL"],
            "message": "mcp.toml: server 'db': `env` key 'log_level' is not declared by "
            f"{POSTGRES} 3.1.0 (oci package docker.io/example/postgres-mcp:3.1.0); "
            "did you mean: LOG_LEVEL?",
            "hint": None,
        }
    ]


def test_declared_keys_custom_servers_and_undocumented_env_do_not_warn(
    tmp_path: Path, stub: RegistryStub
) -> None:
    toml = (
        f'[servers.db]\nname = "{POSTGRES}"\nenv = {{ LOG_LEVEL = "debug" }}\n\n'
        '[servers.notes]\nname = "io.github.example/notes"\n'
        'variables = { notes-dir = "/srv" }\n\n'
        '[servers.mine]\ncommand = "uvx"\nenv = { ANYTHING = "1" }\n\n'
        # weather's npm package declares no env vars: its env is not checked
        f'[servers.weather]\nname = "{WEATHER}"\nenv = {{ WEATHER_LOG = "1" }}\n'
    )
    root = write_project(tmp_path, toml)
    result = cli(stub, root, "lock")
    assert result.code == 0 and "warning" not in result.err, str(result)


def test_add_with_a_mistyped_env_key_warns_and_still_adds(
    tmp_path: Path, stub: RegistryStub
) -> None:
    root = write_project(tmp_path, "[servers]\n")
    result = cli(stub, root, "add", POSTGRES, "--env", "LOG_LEVLE=debug")
    assert result.code == 0, str(result)
    assert result.err_lines[2].startswith(
        "warning: mcp.toml: server 'postgres': `env` key 'LOG_LEVLE' is not declared by"
    )
    assert result.err_lines[2].endswith("did you mean: LOG_LEVEL?")
    assert 'env = { LOG_LEVLE = "debug" }' in (root / "mcp.toml").read_text()
