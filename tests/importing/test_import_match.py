"""import_match: reading package launches, and finding the registry server an entry runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import fast_retries
from client_helpers import Project, make_project, registry_items
from registry_stub import ALWAYS, RegistryStub, make_item, npm_package

from mcpsync.importing.match import MAX_SEARCHES, PackageRef, package_of


@pytest.mark.parametrize(
    ("command", "args", "ref"),
    [
        (
            "npx",
            ["-y", "@scope/pkg@1.2.3", "/data"],
            ("npm", "@scope/pkg", "1.2.3", ("-y",), ("/data",)),
        ),
        ("npx", ["pkg"], ("npm", "pkg", None, (), ())),
        ("npx", ["-y", "pkg@latest", "--flag"], ("npm", "pkg", None, ("-y",), ("--flag",))),
        ("npx", ["-y", "@scope/pkg@^1.2"], ("npm", "@scope/pkg", None, ("-y",), ())),
        ("/usr/local/bin/npx.cmd", ["--yes", "a@v2.0.0"], ("npm", "a", "v2.0.0", ("--yes",), ())),
        (
            "uvx",
            ["mcp-server-fetch==2025.1.17", "--x"],
            ("pypi", "mcp-server-fetch", "2025.1.17", (), ("--x",)),
        ),
        ("uvx", ["pkg@1.0"], ("pypi", "pkg", "1.0", (), ())),
        (
            "uvx",
            ["--from", "my-pkg==0.3.1", "my-cmd", "a"],
            ("pypi", "my-pkg", "0.3.1", ("--from", "my-pkg==0.3.1"), ("a",)),
        ),
        (
            "uvx",
            ["--python", "3.12", "pkg[extra]"],
            ("pypi", "pkg[extra]", None, ("--python", "3.12"), ()),
        ),
        (
            "docker",
            ["run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/acme/srv:1.4", "stdio"],
            ("oci", "ghcr.io/acme/srv", "1.4", ("-i", "--rm", "-e", "TOKEN"), ("stdio",)),
        ),
        (
            "docker",
            ["run", "-i", "docker.io/library/redis-mcp"],
            ("oci", "redis-mcp", None, ("-i",), ()),
        ),
        (
            "dnx",
            ["Acme.Mcp@1.0.0", "--yes", "--", "--verbose"],
            ("nuget", "Acme.Mcp", "1.0.0", (), ("--verbose",)),
        ),
    ],
)
def test_package_of(command: str, args: list[str], ref: tuple[object, ...]) -> None:
    assert package_of(command, args) == PackageRef(*ref)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("node", ["server.js"]),
        ("python", ["-m", "srv"]),
        ("docker", ["exec", "x"]),
        ("npx", ["-y"]),
    ],
)
def test_not_a_package_launch(command: str, args: list[str]) -> None:
    assert package_of(command, args) is None


# --------------------------------------------------------------------------- against a registry


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    proj = make_project(tmp_path, monkeypatch)
    proj.write("mcp.toml", '[registry]\nurl = "file:registry"\n')
    return proj


def imported(project: Project, servers: dict[str, object], *flags: str) -> dict[str, object]:
    project.write(".mcp.json", json.dumps({"mcpServers": servers}))
    result = project.run("import", ".mcp.json", "--json", "--dry-run", *flags)
    assert result.code == 0, result.text
    return {s["alias"]: s for s in result.json()["servers"]}


def test_an_unpinned_launch_matches_and_lock_pins_it(project: Project) -> None:
    found = imported(project, {"f": {"command": "npx", "args": ["@acme/files-mcp", "/w"]}})
    assert found["f"]["table"] == {"name": "io.github.acme/files", "args": ["/w"]}
    assert found["f"]["notes"] == ["was unpinned; `mcpsync lock` pins 1.2.0"]


def test_a_version_the_registry_lacks_stays_custom(project: Project) -> None:
    found = imported(
        project, {"f": {"command": "npx", "args": ["-y", "@acme/files-mcp@0.9.0", "/w"]}}
    )
    assert found["f"]["registry_name"] is None
    assert found["f"]["table"]["command"] == "npx"
    assert found["f"]["notes"] == [
        "registry server io.github.acme/files has no version 0.9.0 of @acme/files-mcp; kept custom"
    ]


def test_a_launch_the_registry_would_not_reproduce_stays_custom(project: Project) -> None:
    # the registry runs `npx -y @acme/files-mcp@1.2.0 DIR`; `--prefer-offline` is not in it
    args = ["-y", "--prefer-offline", "@acme/files-mcp@1.2.0", "/w"]
    found = imported(project, {"f": {"command": "npx", "args": args}})
    assert found["f"]["table"] == {"command": "npx", "args": args}
    assert found["f"]["notes"] == [
        "matches registry server io.github.acme/files, but its launch differs; kept custom"
    ]


def test_two_servers_with_one_package_are_ambiguous(project: Project) -> None:
    items = registry_items()
    items.append(
        make_item(
            "io.github.fork/files",
            "1.2.0",
            is_latest=True,
            packages=[npm_package("@acme/files-mcp", "1.2.0")],
        )
    )
    project.write_registry(items)
    found = imported(project, {"f": {"command": "npx", "args": ["-y", "@acme/files-mcp@1.2.0"]}})
    assert found["f"]["registry_name"] is None
    assert found["f"]["notes"] == [
        "several registry servers match (io.github.acme/files, io.github.fork/files); kept custom"
    ]


def test_registry_requests_are_bounded(project: Project) -> None:
    """Sixty packages, twenty in the registry: at most MAX_SEARCHES searches (one page each)
    and one versions request per matched server, whatever the number of entries."""
    items = [
        make_item(
            f"io.github.team/tool{i:02d}",
            "1.0.0",
            is_latest=True,
            packages=[npm_package(f"@team/tool{i:02d}-mcp", "1.0.0")],
        )
        for i in range(20)
    ]
    servers = {
        f"t{i:02d}": {"command": "npx", "args": ["-y", f"@team/tool{i:02d}-mcp@1.0.0"]}
        for i in range(60)
    }
    with RegistryStub(items) as stub:
        project.write("mcp.toml", f'[registry]\nurl = "{stub.url}"\n')
        found = imported(project, servers)
        searches, versions = (
            stub.count("/v0.1/servers"),
            stub.request_count - stub.count("/v0.1/servers"),
        )
    matched = [a for a, s in found.items() if s["registry_name"]]
    assert searches <= MAX_SEARCHES
    assert versions == len(matched)
    assert matched  # the first entries' searches found their servers
    assert any("too many entries" in n for s in found.values() for n in s["notes"])


def test_an_unreachable_registry_fails_naming_no_match(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_retries(monkeypatch)
    with RegistryStub([]) as stub:
        stub.faults.fail_first = ALWAYS
        stub.faults.fail_status = 503
        project.write("mcp.toml", f'[registry]\nurl = "{stub.url}"\n')
        project.write(
            ".mcp.json", '{"mcpServers": {"f": {"command": "npx", "args": ["acme-files@1.0.0"]}}}'
        )
        result = project.run("import", ".mcp.json")
    assert result.code == 3, result.text
    assert "--no-match" in result.err
    assert project.read("mcp.toml") == f'[registry]\nurl = "{stub.url}"\n'
