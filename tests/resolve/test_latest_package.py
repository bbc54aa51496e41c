"""A registry package whose `version` is `latest` (issue 15, block 5; 15 of 555 npm/PyPI
packages in the registry dump): never rendered with the server's version, which the store may
not have. lock pins the store's current version (npm's `latest` dist-tag, the newest release
on the index that is not yanked) with a warning, or refuses when no store may be asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from artifact_stubs import ArtifactStub
from cli_helpers import Result, assert_clean_failure, load_toml, lock_bytes, run_cli, write_project
from registry_stub import RegistryStub, make_item, npm_package

SRI = {v: "sha512-" + c * 86 + "==" for v, c in (("0.9.0", "A"), ("1.4.2", "B"), ("1.5.0", "C"))}
FS = "io.github.agent-infra/filesystem"
NOTES = "io.github.acme/notes"


def pypi_package(identifier: str) -> dict[str, Any]:
    return {
        "registryType": "pypi",
        "identifier": identifier,
        "version": "latest",
        "transport": {"type": "stdio"},
    }


@pytest.fixture
def store() -> Iterator[ArtifactStub]:
    with ArtifactStub() as stub:
        stub.npm["@agent-infra/mcp-server-filesystem"] = {v: SRI[v] for v in ("0.9.0", "1.4.2")}
        stub.npm_tags["@agent-infra/mcp-server-filesystem"] = {"latest": "1.4.2"}
        stub.pypi["acme-notes"] = [
            "acme_notes-0.8.0.tar.gz",
            "acme_notes-0.9.0-py3-none-any.whl",
            "acme_notes-1.0.0.tar.gz",  # yanked
            "acme_notes-1.1.0rc1.tar.gz",  # a prerelease: uvx would not take it
        ]
        stub.yanked.add("acme_notes-1.0.0.tar.gz")
        yield stub


@pytest.fixture
def registry() -> Iterator[RegistryStub]:
    fs = npm_package("@agent-infra/mcp-server-filesystem", "latest")
    items = [
        make_item(FS, "1.0.0", is_latest=True, packages=[fs]),  # npm has no 1.0.0
        make_item(NOTES, "2.0.0", is_latest=True, packages=[pypi_package("acme-notes")]),
    ]
    with RegistryStub(items) as stub:
        yield stub


TOML = f'[servers.fs]\nname = "{FS}"\n\n[servers.notes]\nname = "{NOTES}"\n'


def run(registry: RegistryStub, store: ArtifactStub, root: Path, *args: str) -> Result:
    env = {**store.env(), "MCPSYNC_ARTIFACTS": "", "HOME": str(root.parent)}
    return run_cli("--registry", registry.url, "--timeout", "2", "-C", root, *args, env=env)


def entry(root: Path, alias: str) -> dict[str, Any]:
    found: dict[str, Any] = next(
        s for s in load_toml(lock_bytes(root).decode())["server"] if s["alias"] == alias
    )
    return found


def test_latest_is_pinned_to_the_store_current_version_with_a_warning(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    root = write_project(tmp_path / "p", TOML)
    result = run(registry, store, root, "lock")
    assert result.code == 0, str(result)
    fs, notes = entry(root, "fs"), entry(root, "notes")
    # was: "@agent-infra/mcp-server-filesystem@1.0.0", a version npm does not have
    assert fs["version"] == "1.0.0"
    assert fs["launch"]["args"] == ["-y", "@agent-infra/mcp-server-filesystem@1.4.2"]
    assert fs["launch"]["package-version"] == "1.4.2"
    assert fs["artifact"]["digest"] == SRI["1.4.2"]
    assert notes["launch"]["args"] == ["acme-notes==0.9.0"]  # not the yanked one, not the rc
    assert list(notes["artifact"]["files"]) == ["acme_notes-0.9.0-py3-none-any.whl"]
    assert result.err_lines[3:] == [
        f"warning: mcp.toml: server 'fs': {FS} 1.0.0 gives its npm package "
        "'@agent-infra/mcp-server-filesystem' the version 'latest'; pinned 1.4.2, its store's "
        "current version",
        "  hint: `mcpsync lock -P fs` takes a newer one",
        f"warning: mcp.toml: server 'notes': {NOTES} 2.0.0 gives its pypi package "
        "'acme-notes' the version 'latest'; pinned 0.9.0, its store's current version",
        "  hint: `mcpsync lock -P notes` takes a newer one",
    ]
    # offline: the pin is what the lock recorded, not a tamper, and --check says where from
    check = run(registry, store, root, "lock", "--check")
    assert check.code == 0, str(check)
    assert check.err_lines[0] == (
        "note: fs 1.0.0: its package says version 'latest'; mcp.lock pins 1.4.2, its store's "
        "current version when it was locked (`mcpsync lock -P fs` asks again)"
    )
    assert run(registry, store, root, "sync", "--check").code in (0, 1)  # no targets: no error

    # the pin holds: a relock asks nobody; a new `latest` is taken only when asked
    store.npm["@agent-infra/mcp-server-filesystem"]["1.5.0"] = SRI["1.5.0"]
    store.npm_tags["@agent-infra/mcp-server-filesystem"]["latest"] = "1.5.0"
    store.reset_counts()
    assert run(registry, store, root, "lock").code == 0
    assert store.request_count == 0
    (root / "mcp.toml").write_text(TOML.replace(f'"{FS}"\n', f'"{FS}"\nargs = ["/data"]\n'))
    refreshed = run(registry, store, root, "lock")  # inputs changed, pin kept: 1.4.2 stays
    assert refreshed.code == 0, str(refreshed)
    assert entry(root, "fs")["launch"]["args"][-2:] == [
        "@agent-infra/mcp-server-filesystem@1.4.2",
        "/data",
    ]
    upgraded = run(registry, store, root, "lock", "-P", "fs")
    assert upgraded.code == 0, str(upgraded)
    assert entry(root, "fs")["launch"]["package-version"] == "1.5.0"
    assert upgraded.err_lines[1] == "Changed fs 1.0.0 (package 1.4.2 -> 1.5.0)"


@pytest.mark.parametrize(
    ("setup", "hint"),
    [
        ("--no-artifacts", "run `mcpsync lock --artifacts`"),
        ("opted-out", "remove `artifacts = false` from [servers.fs]"),
    ],
)
def test_latest_without_a_store_to_ask_is_refused_with_a_way_out(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub, setup: str, hint: str
) -> None:
    toml = f'[servers.fs]\nname = "{FS}"\n'
    if setup == "opted-out":
        toml += "artifacts = false\n"
    root = write_project(tmp_path / "p", toml)
    result = run(registry, store, root, "lock", *([setup] if setup.startswith("--") else []))
    assert_clean_failure(
        result,
        2,
        f"Server 'fs' ({FS} 1.0.0): its npm package '@agent-infra/mcp-server-filesystem' says "
        "version 'latest', which pins nothing",
    )
    assert hint in result.err_lines[1]
    assert not (root / "mcp.lock").exists()
