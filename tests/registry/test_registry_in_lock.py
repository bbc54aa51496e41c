"""The registry a pin came from is recorded in mcp.lock; it decides staleness only when someone
names a registry (--registry, MCPSYNC_REGISTRY, or mcp.toml's [registry] url). So the same
command line works twice in a row, and a bare run after a one-off --registry is not stale."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import (
    age,
    load_toml,
    lock_bytes,
    npm_server,
    registry_toml,
    run_cli,
    run_process,
    write_project,
    write_snapshot,
)
from registry_stub import RegistryStub

A, B = "io.github.t/alpha", "io.github.t/beta"
SERVERS = {"a": {"name": A, "version": "^1"}, "b": {"name": B}}
# Unroutable (TEST-NET-1): a run that asked it would fail, not pass by luck.
NOWHERE = "https://192.0.2.1"


@pytest.fixture
def stub() -> Iterator[RegistryStub]:
    with RegistryStub([*npm_server(A, ["1.0.0", "1.1.0"]), *npm_server(B, ["2.0.0"])]) as running:
        yield running


def recorded(root: Path) -> set[str]:
    return {entry["registry"] for entry in load_toml((root / "mcp.lock").read_text())["server"]}


def test_env_registry_lock_then_check_twice_and_bare_check(
    tmp_path: Path, stub: RegistryStub
) -> None:
    root = write_project(tmp_path / "p", registry_toml(SERVERS))  # no [registry] in mcp.toml
    env = {"MCPSYNC_REGISTRY": stub.url}
    first = run_process("lock", cwd=root, env=env)
    assert first.code == 0, str(first)
    assert recorded(root) == {stub.url}
    mtime = age(root / "mcp.lock")
    before, asked = lock_bytes(root), stub.request_count
    for _ in range(2):
        again = run_process("lock", cwd=root, env=env)
        assert again.code == 0 and again.err.splitlines()[1:] == [], str(again)
        named = run_process("lock", "--check", cwd=root, env=env)
        assert (named.code, named.out) == (0, "mcp.lock is up to date.\n"), str(named)
        bare = run_process("lock", "--check", cwd=root)
        assert (bare.code, bare.out) == (0, "mcp.lock is up to date.\n"), str(bare)
    assert stub.request_count == asked  # relocking kept every pin without asking
    assert (lock_bytes(root), (root / "mcp.lock").stat().st_mtime_ns) == (before, mtime)


def test_bare_lock_and_sync_after_a_one_off_registry_keep_the_pins(
    tmp_path: Path, stub: RegistryStub
) -> None:
    root = write_project(tmp_path / "p", registry_toml(SERVERS))
    assert run_cli("--registry", stub.url, "-C", root, "lock").code == 0
    before = lock_bytes(root)
    # The default registry is not asked (it would be unreachable here, exit 3).
    bare = run_cli("--timeout", "0.2", "-C", root, "lock")
    assert bare.code == 0, str(bare)
    assert lock_bytes(root) == before
    frozen_free = run_cli("-C", root, "sync", "--check")  # not refused as a stale lock
    assert frozen_free.code == 0, str(frozen_free)


def test_naming_another_registry_makes_the_lock_stale(tmp_path: Path, stub: RegistryStub) -> None:
    root = write_project(tmp_path / "p", registry_toml(SERVERS))
    assert run_cli("--registry", stub.url, "-C", root, "lock").code == 0
    other = run_cli("--registry", NOWHERE, "-C", root, "lock", "--check", "--json")
    assert other.code == 1
    assert other.json()["reasons"] == [
        f"server 'a': registry changed {stub.url} -> {NOWHERE}",
        f"server 'b': registry changed {stub.url} -> {NOWHERE}",
    ]


def test_mcp_toml_registry_is_a_named_registry(tmp_path: Path, stub: RegistryStub) -> None:
    """mcp.toml's [registry] url is part of what mcp.toml asks: a lock from elsewhere does not
    answer it, while the same --registry line keeps working."""
    root = write_project(tmp_path / "p", registry_toml(SERVERS, registry="file:snapshot"))
    write_snapshot(root, npm_server(A, ["1.0.0"]) + npm_server(B, ["2.0.0"]), name="snapshot")
    for _ in range(2):
        assert run_process("--registry", stub.url, "lock", cwd=root).code == 0
        assert run_process("--registry", stub.url, "lock", "--check", cwd=root).code == 0
    bare = run_process("lock", "--check", cwd=root)
    assert bare.code == 1
    assert f"server 'a': registry changed {stub.url} -> file:snapshot" in bare.err
    assert run_process("lock", cwd=root).code == 0  # re-resolved from mcp.toml's registry
    assert recorded(root) == {"file:snapshot"}
    for _ in range(2):
        assert run_process("lock", "--check", cwd=root).code == 0


def test_a_file_registry_from_the_command_line_is_relative_to_mcp_toml(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", registry_toml(SERVERS))
    write_snapshot(root, npm_server(A, ["1.0.0"]) + npm_server(B, ["2.0.0"]), name="snap")
    (root / "sub").mkdir()
    env = {"MCPSYNC_REGISTRY": "file:snap"}
    for cwd in (root, root / "sub"):
        assert run_process("lock", cwd=cwd, env=env).code == 0
        assert run_process("lock", "--check", cwd=cwd, env=env).code == 0
        assert run_process("lock", "--check", cwd=cwd).code == 0
    assert recorded(root) == {"file:snap"}
