"""Relocking keeps pins (a table in the spirit of pip-tools' test_minimal_upgrade), the uv-style
change report, and the resolver's choices, all through `mcpsync lock` against the stand-in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import (
    assert_clean_failure,
    npm_server,
    pins,
    registry_toml,
    run_cli,
    set_latest,
    set_status,
    write_project,
)
from registry_stub import RegistryStub

from mcpsync.launch import Launch
from mcpsync.lock.lockfile import Lock, LockedServer
from mcpsync.resolve.resolver import Change, changes

A, B, C = "io.github.t/alpha", "io.github.t/beta", "io.github.t/gamma"
PATH = {name: f"/v0.1/servers/{name.replace('/', '%2F')}/versions" for name in (A, B, C)}
BEFORE = {"a": {"name": A, "version": "^1.0"}, "b": {"name": B, "version": "^1.0"}}


def initial_items() -> list[dict[str, Any]]:
    return [*npm_server(A, ["1.0.0", "1.1.0"]), *npm_server(B, ["1.0.0", "1.1.0"])]


def newer_items() -> list[dict[str, Any]]:
    """Published after the first lock: every pin now has newer versions."""
    return [
        *npm_server(A, ["1.2.0", "2.0.0", "2.1.0-beta.1"], latest="2.1.0-beta.1", day=10),
        *npm_server(B, ["1.2.0"], day=10),
        *npm_server(C, ["2.0.0"], day=10),
    ]


@dataclass(frozen=True)
class Case:
    id: str
    servers: dict[str, dict[str, Any]]  # mcp.toml after the edit
    expected: dict[str, str]  # alias -> pin after the relock
    report: list[str]  # change lines on stderr
    fetched: set[str]  # registry names whose versions were asked for
    args: tuple[str, ...] = ()
    registry_change: Callable[[list[dict[str, Any]]], None] | None = None


def edit(alias: str, **fields: Any) -> dict[str, dict[str, Any]]:
    servers = {k: dict(v) for k, v in BEFORE.items()}
    servers[alias].update(fields)
    return servers


def delete_alpha_110(items: list[dict[str, Any]]) -> None:
    set_status(items, A, "1.1.0", "deleted")


CASES = [
    Case("unchanged", BEFORE, {"a": "1.1.0", "b": "1.1.0"}, [], set()),
    Case(
        "constraint-widened",
        edit("a", version=">=1.0"),
        {"a": "1.1.0", "b": "1.1.0"},
        [],
        {A},
    ),
    Case(
        "constraint-narrowed-keeping-pin",
        edit("a", version="~1.1"),
        {"a": "1.1.0", "b": "1.1.0"},
        [],
        {A},
    ),
    Case(
        "constraint-narrowed-past-pin",
        edit("a", version="<1.1"),
        {"a": "1.0.0", "b": "1.1.0"},
        ["Downgraded a 1.1.0 -> 1.0.0"],  # issue 15: was "Updated"
        {A},
    ),
    Case(
        "constraint-to-latest",
        edit("a", version="latest"),
        {"a": "2.1.0-beta.1", "b": "1.1.0"},
        ["Updated a 1.1.0 -> 2.1.0-beta.1"],
        {A},
    ),
    Case(
        "constraint-to-exact-older",
        edit("a", version="1.0.0"),
        {"a": "1.0.0", "b": "1.1.0"},
        ["Downgraded a 1.1.0 -> 1.0.0"],  # issue 15: was "Updated"
        {A},
    ),
    Case(
        "prereleases-turned-on-keeps-stable-pin",
        edit("a", version="*", prereleases=True),
        {"a": "1.1.0", "b": "1.1.0"},
        [],
        {A},
    ),
    Case(
        "args-changed-keeps-pin-new-launch",
        edit("a", args=["--verbose"]),
        {"a": "1.1.0", "b": "1.1.0"},
        ["Changed a 1.1.0 (launch inputs)"],
        {A},
    ),
    Case("server-removed", {"a": BEFORE["a"]}, {"a": "1.1.0"}, ["Removed b 1.1.0"], set()),
    Case(
        "server-added",
        {**BEFORE, "c": {"name": C}},
        {"a": "1.1.0", "b": "1.1.0", "c": "2.0.0"},
        ["Added c 2.0.0"],
        {C},
    ),
    Case(
        "server-renamed",
        edit("a", name=C, version="*"),
        {"a": "2.0.0", "b": "1.1.0"},
        ["Updated a 1.1.0 -> 2.0.0"],
        {C},
    ),
    Case(
        "upgrade-one-of-several",
        BEFORE,
        {"a": "1.2.0", "b": "1.1.0"},
        ["Updated a 1.1.0 -> 1.2.0"],
        {A},
        args=("-P", "a"),
    ),
    Case(
        "upgrade-two-of-several",
        {**BEFORE, "c": {"name": C}},
        {"a": "1.2.0", "b": "1.2.0", "c": "2.0.0"},
        ["Updated a 1.1.0 -> 1.2.0", "Updated b 1.1.0 -> 1.2.0", "Added c 2.0.0"],
        {A, B, C},
        args=("--upgrade-package", "a", "-P", "b"),
    ),
    Case(
        "upgrade-all",
        BEFORE,
        {"a": "1.2.0", "b": "1.2.0"},
        ["Updated a 1.1.0 -> 1.2.0", "Updated b 1.1.0 -> 1.2.0"],
        {A, B},
        args=("--upgrade",),
    ),
    Case(
        "upgrade-all-short-flag",
        BEFORE,
        {"a": "1.2.0", "b": "1.2.0"},
        ["Updated a 1.1.0 -> 1.2.0", "Updated b 1.1.0 -> 1.2.0"],
        {A, B},
        args=("-U",),
    ),
    Case(
        "pin-deleted-inputs-unchanged-kept-offline",
        BEFORE,
        {"a": "1.1.0", "b": "1.1.0"},
        [],
        set(),
        registry_change=delete_alpha_110,
    ),
    Case(
        "pin-deleted-inputs-changed-re-resolved",
        edit("a", args=["--verbose"]),
        {"a": "1.2.0", "b": "1.1.0"},
        ["Updated a 1.1.0 -> 1.2.0"],
        {A},
        registry_change=delete_alpha_110,
    ),
]


@pytest.fixture
def stub() -> Iterator[RegistryStub]:
    with RegistryStub(initial_items()) as running:
        yield running


def report(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if not line.startswith("Resolved ")]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_keep_pins(tmp_path: Path, stub: RegistryStub, case: Case) -> None:
    root = write_project(tmp_path, registry_toml(BEFORE))
    first = run_cli("--registry", stub.url, "-C", root, "lock")
    assert first.code == 0, str(first)
    assert pins(root) == {"a": "1.1.0", "b": "1.1.0"}
    assert report(first.err) == ["Added a 1.1.0", "Added b 1.1.0"]

    stub.add(*newer_items())
    if case.registry_change is not None:
        case.registry_change(stub.items)
    (root / "mcp.toml").write_text(registry_toml(case.servers), encoding="utf-8")
    stub.reset_counts()

    result = run_cli("--registry", stub.url, "-C", root, "lock", *case.args)
    assert result.code == 0, str(result)
    assert pins(root) == case.expected
    assert report(result.err) == case.report
    assert {p for p in stub.path_counts} == {PATH[n] for n in case.fetched}
    assert stub.request_count == len(case.fetched)  # one request per server, no more


def test_report_is_json_with_json(tmp_path: Path, stub: RegistryStub) -> None:
    root = write_project(tmp_path, registry_toml(BEFORE))
    assert run_cli("--registry", stub.url, "-C", root, "lock").code == 0
    stub.add(*newer_items())
    result = run_cli("--registry", stub.url, "-C", root, "lock", "-P", "a", "--json")
    assert result.code == 0 and result.err == "", str(result)
    assert result.json() == {
        "written": True,
        "merge_conflict": False,
        "changes": [{"action": "Updated", "alias": "a", "old": "1.1.0", "new": "1.2.0"}],
        "servers": [
            {"alias": "a", "name": A, "version": "1.2.0", "no_artifact": "artifacts-off"},
            {"alias": "b", "name": B, "version": "1.1.0", "no_artifact": "artifacts-off"},
        ],
        "warnings": [],
    }
    again = run_cli("--registry", stub.url, "-C", root, "lock", "--json")
    assert again.json()["written"] is False and again.json()["changes"] == []


def test_upgrade_package_unknown_alias_is_bad_usage(tmp_path: Path, stub: RegistryStub) -> None:
    root = write_project(tmp_path, registry_toml(BEFORE))
    result = run_cli("--registry", stub.url, "-C", root, "lock", "-P", "nope")
    assert_clean_failure(result, 2, "-P/--upgrade-package: no server 'nope' in ")
    assert result.err_lines[1] == "  hint: servers: a, b"
    assert stub.request_count == 0
    assert not (root / "mcp.lock").exists()


def test_prerelease_pin_is_re_resolved_when_prereleases_are_turned_off(
    tmp_path: Path, stub: RegistryStub
) -> None:
    stub.add(*npm_server(C, ["1.0.0", "2.0.0-rc.1"], day=10))
    root = write_project(tmp_path, registry_toml({"c": {"name": C, "prereleases": True}}))
    assert run_cli("--registry", stub.url, "-C", root, "lock").code == 0
    assert pins(root) == {"c": "2.0.0-rc.1"}
    (root / "mcp.toml").write_text(registry_toml({"c": {"name": C}}), encoding="utf-8")
    result = run_cli("--registry", stub.url, "-C", root, "lock")
    assert result.code == 0, str(result)
    assert pins(root) == {"c": "1.0.0"}
    assert report(result.err) == ["Downgraded c 2.0.0-rc.1 -> 1.0.0"]


def test_prerelease_pin_named_by_the_constraint_is_kept(tmp_path: Path, stub: RegistryStub) -> None:
    stub.add(*npm_server(C, ["1.0.0", "2.0.0-rc.1", "2.0.0-rc.2"], day=10))
    root = write_project(tmp_path, registry_toml({"c": {"name": C, "version": "2.0.0-rc.1"}}))
    assert run_cli("--registry", stub.url, "-C", root, "lock").code == 0
    assert pins(root) == {"c": "2.0.0-rc.1"}
    widened = {"c": {"name": C, "version": ">=2.0.0-rc.1"}}
    (root / "mcp.toml").write_text(registry_toml(widened), encoding="utf-8")
    assert run_cli("--registry", stub.url, "-C", root, "lock").code == 0
    assert pins(root) == {"c": "2.0.0-rc.1"}


def test_only_prereleases_match_falls_back_to_them(tmp_path: Path, stub: RegistryStub) -> None:
    stub.add(*npm_server(C, ["3.0.0-alpha.99", "3.0.0-alpha.104", "3.0.0-alpha.2"], day=10))
    root = write_project(tmp_path, registry_toml({"c": {"name": C}}))
    assert run_cli("--registry", stub.url, "-C", root, "lock").code == 0
    assert pins(root) == {"c": "3.0.0-alpha.104"}  # semver: numeric identifiers, not text
    # "^3" means >=3.0.0: a 3.0.0 prerelease is below it, so nothing matches at all.
    (root / "mcp.toml").write_text(registry_toml({"c": {"name": C, "version": "^3"}}))
    assert_clean_failure(run_cli("--registry", stub.url, "-C", root, "lock"), 2, "'^3'")


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("*", "1.2.0"),  # highest stable (2.0.0-beta.1 is a prerelease)
        ("latest", "2.0.0-beta.1"),  # whatever the registry flags isLatest
        ("^1.1", "1.2.0"),
        ("~1.0", "1.0.5"),
        ("1.0.0", "1.0.0"),
        ("==1.0.*", "1.0.5"),
        (">=1.0,<1.2,!=1.1.0", "1.0.5"),
        ("1.x", "1.2.0"),
        (">=2.0.0-alpha", "2.0.0-beta.1"),
    ],
)
def test_constraint_picks(tmp_path: Path, stub: RegistryStub, version: str, expected: str) -> None:
    stub.add(
        *npm_server(
            C, ["1.0.0", "1.0.5", "1.1.0", "2.0.0-beta.1", "1.2.0"], latest="2.0.0-beta.1", day=10
        )
    )
    root = write_project(tmp_path, registry_toml({"c": {"name": C, "version": version}}))
    result = run_cli("--registry", stub.url, "-C", root, "lock")
    assert result.code == 0, str(result)
    assert pins(root) == {"c": expected}


def test_latest_follows_the_flag_not_the_highest(tmp_path: Path, stub: RegistryStub) -> None:
    set_latest(stub.items, A, "1.0.0")  # e.g. the registry moved the flag back
    root = write_project(tmp_path, registry_toml({"a": {"name": A, "version": "latest"}}))
    assert run_cli("--registry", stub.url, "-C", root, "lock").code == 0
    assert pins(root) == {"a": "1.0.0"}


def test_no_version_matches_names_server_and_constraint(tmp_path: Path, stub: RegistryStub) -> None:
    root = write_project(tmp_path, registry_toml({"a": {"name": A, "version": "^7"}}))
    result = run_cli("--registry", stub.url, "-C", root, "lock")
    assert_clean_failure(result, 2, "Server 'a'", A, "'^7'", stub.url)
    assert "1.1.0" in result.err  # the hint lists what there is
    assert not (root / "mcp.lock").exists()


def test_unknown_server_is_exit_2_naming_it(tmp_path: Path, stub: RegistryStub) -> None:
    root = write_project(tmp_path, registry_toml({"z": {"name": "io.github.t/nope"}}))
    result = run_cli("--registry", stub.url, "-C", root, "lock")
    assert_clean_failure(result, 2, f"Server 'io.github.t/nope' not found in registry {stub.url}")


# --- the change report, unit-level ---------------------------------------------------------


def locked(alias: str, version: str | None, *args: str) -> LockedServer:
    return LockedServer(
        alias=alias,
        launch=Launch(transport="stdio", command="npx", args=args),
        name=None if version is None else f"io.github.t/{alias}",
        version=version,
    )


def test_changes_are_sorted_by_alias_and_say_what_moved() -> None:
    old = Lock((locked("b", "1.0.0"), locked("c", "1.0.0"), locked("d", "1.0.0", "x")))
    new = Lock((locked("a", "0.1.0"), locked("b", "1.1.0"), locked("d", "1.0.0", "y")))
    assert [c.render() for c in changes(old, new)] == [
        "Added a 0.1.0",
        "Updated b 1.0.0 -> 1.1.0",
        "Removed c 1.0.0",
        "Changed d 1.0.0 (launch inputs)",
    ]


def test_changes_for_custom_servers_have_no_version_words() -> None:
    old = Lock((locked("x", None, "a"), locked("y", None)))
    new = Lock((locked("x", None, "b"), locked("y", "1.0.0"), locked("z", None)))
    assert [c.render() for c in changes(old, new)] == [
        "Changed x (launch inputs)",
        "Updated y (custom) -> 1.0.0",
        "Added z",
    ]
    assert changes(None, Lock()) == []
    assert Change("Removed", "q").render() == "Removed q"


def test_inputs_only_change_is_not_reported() -> None:
    a = locked("a", "1.0.0")
    b = LockedServer(alias="a", launch=a.launch, name=a.name, version="1.0.0", inputs={"x": 1})
    assert changes(Lock((a,)), Lock((b,))) == []
