"""Artifact digests are per server (issue 15, block 6): a server without one is recorded as such
in mcp.lock with the reason (artifacts off, opted out, store unreachable), and no unrelated
command fails on it. Workflows through the CLI against the registry and store stand-ins."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from artifact_stubs import ArtifactStub
from cli_helpers import Result, assert_clean_failure, load_toml, lock_bytes, run_cli, write_project
from registry_stub import RegistryStub, make_item, npm_package

NPM_SRI = "sha512-" + "B" * 86 + "=="
WHEEL = "acme_notes-1.0.0-py3-none-any.whl"
REMOTE = {"type": "streamable-http", "url": "https://mcp.example.com/mcp"}


@pytest.fixture
def store() -> Iterator[ArtifactStub]:
    with ArtifactStub() as stub:
        stub.npm["@acme/weather"] = {"1.2.0": NPM_SRI, "1.3.0": NPM_SRI.replace("B", "C")}
        stub.pypi["acme-notes"] = [WHEEL]
        yield stub


def _items() -> list[dict[str, Any]]:
    pypi = {
        "registryType": "pypi",
        "identifier": "acme-notes",
        "version": "1.0.0",
        "transport": {"type": "stdio"},
    }
    weather = [npm_package("@acme/weather", "1.2.0")]
    return [
        make_item("io.github.acme/weather", "1.2.0", is_latest=True, packages=weather),
        make_item("io.github.acme/notes", "1.0.0", is_latest=True, packages=[pypi]),
        make_item("io.github.acme/remote", "1.0.0", is_latest=True, remotes=[REMOTE]),
    ]


@pytest.fixture
def registry() -> Iterator[RegistryStub]:
    with RegistryStub(_items()) as stub:
        yield stub


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpsync.artifacts.session import Session

    monkeypatch.setitem(Session.__init__.__kwdefaults__, "backoff", 0.005)


def run(registry: RegistryStub, store: ArtifactStub, root: Path, *args: str, **env: str) -> Result:
    # MCPSYNC_ARTIFACTS unset: the default for an http(s) registry, which is on
    environment = {**store.env(), "MCPSYNC_ARTIFACTS": "", "HOME": str(root.parent), **env}
    return run_cli("--registry", registry.url, "--timeout", "2", "-C", root, *args, env=environment)


def entry(root: Path, alias: str) -> dict[str, Any]:
    data = load_toml(lock_bytes(root).decode())
    found: dict[str, Any] = next(s for s in data["server"] if s["alias"] == alias)
    return found


def test_an_unreachable_store_does_not_wedge_the_project(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    """The issue's sequence: the store goes away, `add` suggests --no-artifacts, and then
    `lock --check` and every later `add` of another server failed on that one server."""
    root = write_project(tmp_path / "p", '[servers.weather]\nname = "io.github.acme/weather"\n')
    assert run(registry, store, root, "lock").code == 0
    store.stop()

    refused = run(registry, store, root, "add", "io.github.acme/notes")
    assert_clean_failure(refused, 3, "package index", "could not be reached")
    assert "`--no-artifacts` (lock, add)" in refused.err_lines[1]
    assert "`artifacts = false` in [servers.notes]" in refused.err_lines[1]

    added = run(registry, store, root, "add", "io.github.acme/notes", "--no-artifacts")
    assert added.code == 0, str(added)
    assert added.err_lines[1] == "Added notes 1.0.0"
    assert added.err_lines[2].startswith("Next: say where it goes with a [[targets]] entry")
    assert entry(root, "notes")["no-artifact"] == "artifacts-off"
    assert "artifact" not in entry(root, "notes")
    assert entry(root, "weather")["artifact"]["digest"] == NPM_SRI  # untouched

    check = run(registry, store, root, "lock", "--check")
    assert (check.code, check.out) == (0, "mcp.lock is up to date.\n"), str(check)
    assert check.err_lines == [
        "note: notes 1.0.0 has no artifact digest: artifacts were off when it was locked"
    ]

    # another server, store still down: notes' digest is looked up again, cannot be, and the
    # add goes on, saying so
    other = run(registry, store, root, "add", "io.github.acme/remote")
    assert other.code == 0, str(other)
    assert other.err_lines[1] == "Added remote 1.0.0"
    assert other.err_lines[2].startswith("warning: mcp.toml: server 'notes': package index ")
    assert other.err_lines[2].endswith("; locked it without a digest")
    assert other.err_lines[3] == "  hint: `mcpsync lock` looks it up again when its store answers"
    assert entry(root, "notes")["no-artifact"] == "store-unreachable"
    assert run(registry, store, root, "lock", "--check").code == 0


def test_a_relock_records_the_digest_once_the_store_answers(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    root = write_project(tmp_path / "p", '[servers.notes]\nname = "io.github.acme/notes"\n')
    assert run(registry, store, root, "lock", "--no-artifacts").code == 0
    assert entry(root, "notes")["no-artifact"] == "artifacts-off"
    result = run(registry, store, root, "lock")
    assert result.code == 0, str(result)
    assert result.err_lines[1:] == ["Changed notes 1.0.0 (artifact digests recorded)"]
    assert "no-artifact" not in entry(root, "notes")
    assert list(entry(root, "notes")["artifact"]["files"]) == [WHEEL]


def test_one_server_opts_out_and_is_never_looked_up(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    toml = (
        '[servers.notes]\nname = "io.github.acme/notes"\nartifacts = false\n\n'
        '[servers.weather]\nname = "io.github.acme/weather"\n'
    )
    root = write_project(tmp_path / "p", toml)
    result = run(registry, store, root, "lock")
    assert result.code == 0, str(result)
    assert result.err_lines[1:] == [
        "Added notes 1.0.0",
        "Added weather 1.2.0",
        "note: notes 1.0.0 has no artifact digest: `artifacts = false` for this server in mcp.toml",
    ]
    assert not any(r.startswith("/simple/") for r in store.requests)
    assert entry(root, "notes")["no-artifact"] == "opted-out"
    assert entry(root, "notes")["inputs"] == {"artifacts": False}
    assert entry(root, "weather")["artifact"]["digest"] == NPM_SRI
    store.reset_counts()
    again = run(registry, store, root, "lock")  # no backfill of an opt-out: nothing asked
    assert again.code == 0 and len(again.err_lines) == 1, str(again)
    assert store.request_count == 0
    assert run(registry, store, root, "lock", "--check").code == 0
    # opting back in is an input change: the digest is looked up at the same pin
    (root / "mcp.toml").write_text(toml.replace("artifacts = false\n", ""))
    back = run(registry, store, root, "lock")
    assert back.err_lines[1:] == ["Changed notes 1.0.0 (artifact digests recorded)"]
    bad = write_project(tmp_path / "bad", '[servers.n]\nname = "a.b/n"\nartifacts = "no"\n')
    assert_clean_failure(run(registry, store, bad, "lock"), 2, "`artifacts` must be true or false")


def test_upgrade_with_artifacts_off_keeps_the_digests_of_unchanged_versions(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    toml = (
        '[servers.notes]\nname = "io.github.acme/notes"\n\n'
        '[servers.weather]\nname = "io.github.acme/weather"\n'
    )
    root = write_project(tmp_path / "p", toml)
    assert run(registry, store, root, "lock").code == 0
    notes = entry(root, "notes")["artifact"]
    registry.add(
        make_item(
            "io.github.acme/weather", "1.3.0", packages=[npm_package("@acme/weather", "1.3.0")]
        )
    )
    store.reset_counts()
    result = run(registry, store, root, "lock", "--upgrade", "--no-artifacts")
    assert result.code == 0, str(result)
    # was: "Changed notes 1.0.0 (artifact digests)", its record dropped
    assert result.err_lines[1:] == ["Updated weather 1.2.0 -> 1.3.0"]
    assert store.request_count == 0
    assert entry(root, "notes")["artifact"] == notes
    assert entry(root, "weather")["no-artifact"] == "artifacts-off"
    assert "artifact" not in entry(root, "weather")
