"""`lock` tries every server and reports every one that fails, in one run (one line each,
alias first), leaving mcp.lock as it was; `--json` lists them in the error document."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import (
    age,
    fast_retries,
    lock_bytes,
    npm_server,
    registry_toml,
    run_cli,
    run_process,
    write_project,
)
from registry_stub import RegistryStub, make_item, npm_package

GOOD, UNSAFE, NEEDS = "io.github.t/good", "io.github.t/unsafe", "io.github.t/needs"
SERVERS: dict[str, dict[str, Any]] = {
    "good": {"name": GOOD},
    "ghost": {"name": "io.github.t/ghost"},
    "phantom": {"name": "io.github.t/phantom"},
    "old": {"name": GOOD, "version": "^9"},
    "unsafe": {"name": UNSAFE},
    "needs": {"name": NEEDS},
}


def items() -> list[dict[str, Any]]:
    needs_arg = npm_package(
        "@t/needs",
        "1.0.0",
        packageArguments=[{"type": "named", "name": "--root", "isRequired": True}],
    )
    return [
        *npm_server(GOOD, ["1.0.0"]),
        make_item(UNSAFE, "1.0.0", is_latest=True, packages=[npm_package("-rf", "1.0.0")]),
        make_item(NEEDS, "1.0.0", is_latest=True, packages=[needs_arg]),
    ]


@pytest.fixture
def stub() -> Iterator[RegistryStub]:
    with RegistryStub(items()) as running:
        yield running


@pytest.fixture
def root(tmp_path: Path, stub: RegistryStub) -> Path:
    """A project locked with its one good server, then given five that cannot be locked."""
    project = write_project(tmp_path / "p", registry_toml({"good": SERVERS["good"]}))
    assert run_cli("--registry", stub.url, "-C", project, "lock").code == 0
    (project / "mcp.toml").write_text(registry_toml(SERVERS))
    return project


def test_every_failing_server_in_one_run(root: Path, stub: RegistryStub) -> None:
    before, mtime = lock_bytes(root), age(root / "mcp.lock")
    result = run_process("--registry", stub.url, "lock", cwd=root)
    assert result.code == 2, str(result)
    assert result.out == "" and "Traceback" not in result.err
    lines = result.err.splitlines()
    assert lines[0] == "error: mcp.toml: 5 servers cannot be locked; mcp.lock was not changed:"
    assert lines[1:6] == [
        f"  ghost: Server 'io.github.t/ghost' not found in registry {stub.url}",
        "  needs: the registry requires argument 'root' and gives no value; set it in "
        'mcp.toml under [servers.needs] variables = { root = "..." }',
        f"  old: no version in {stub.url} matches '^9'",
        f"  phantom: Server 'io.github.t/phantom' not found in registry {stub.url}",
        "  unsafe: refusing registry data: package identifier '-rf' starts with '-' or holds "
        "whitespace/shell characters",
    ]
    # each hint once, after the list, naming the servers it is for
    assert lines[6:] == [
        "  hint (ghost, phantom): check `name` in mcp.toml (`mcpsync search TEXT` lists "
        "matching names)",
        "  hint (old): available: 1.0.0; change `version` in mcp.toml",
        "  hint (unsafe): the registry's server.json for this version is unsafe or malformed; "
        "pin another version or declare the server with command/url in mcp.toml",
    ]
    assert (lock_bytes(root), (root / "mcp.lock").stat().st_mtime_ns) == (before, mtime)
    # every name was asked once, in the same run (concurrently, not one run per failure)
    assert stub.count("/v0.1/servers/io.github.t%2Fghost/versions") == 1
    assert stub.count("/v0.1/servers/io.github.t%2Fphantom/versions") == 1


def test_the_failures_as_json(root: Path, stub: RegistryStub) -> None:
    before = lock_bytes(root)
    result = run_cli("--registry", stub.url, "-C", root, "lock", "--json")
    assert result.code == 2
    error = result.json()["error"]
    assert (error["kind"], error["exit_code"]) == ("ServerFailures", 2)
    assert error["message"] == "mcp.toml: 5 servers cannot be locked; mcp.lock was not changed:"
    assert [(s["alias"], s["kind"], s["exit_code"]) for s in error["servers"]] == [
        ("ghost", "NotFound", 2),
        ("needs", "InputError", 2),
        ("old", "InputError", 2),
        ("phantom", "NotFound", 2),
        ("unsafe", "UnsafeData", 2),
    ]
    assert error["servers"][0]["message"] == (
        f"mcp.toml: server 'ghost': Server 'io.github.t/ghost' not found in registry {stub.url}"
    )
    assert lock_bytes(root) == before


def test_one_failure_reads_as_before(root: Path, stub: RegistryStub) -> None:
    (root / "mcp.toml").write_text(registry_toml({k: SERVERS[k] for k in ("good", "ghost")}))
    result = run_cli("--registry", stub.url, "-C", root, "lock")
    assert result.code == 2
    assert result.err_lines == [
        f"error: mcp.toml: server 'ghost': Server 'io.github.t/ghost' not found in registry "
        f"{stub.url}",
        "  hint: check `name` in mcp.toml (`mcpsync search TEXT` lists matching names)",
    ]


def test_a_registry_failure_still_stops_the_run_with_exit_3(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_retries(monkeypatch)
    result = run_cli("--registry", "http://127.0.0.1:9", "--timeout", "0.2", "-C", root, "lock")
    assert result.code == 3
    assert result.err_lines[0].startswith("error: Registry http://127.0.0.1:9 ")


def test_versions_or_missing_answers_every_name(stub: RegistryStub, tmp_path: Path) -> None:
    """The registry seam behind it: a 404 becomes that name's NotFound, in either backend."""
    from cli_helpers import write_snapshot

    from mcpsync.errors import NotFound
    from mcpsync.registry import open_registry

    url = write_snapshot(tmp_path, items())
    names = [GOOD, "io.github.t/ghost", UNSAFE]
    for registry in (
        open_registry(stub.url, base_dir=tmp_path),
        open_registry(url, base_dir=tmp_path),
    ):
        try:
            found = registry.versions_or_missing(names)
        finally:
            registry.close()
        assert list(found) == names
        good = found[GOOD]
        assert isinstance(good, list) and [e.version for e in good] == ["1.0.0"]
        missing = found["io.github.t/ghost"]
        assert isinstance(missing, NotFound) and missing.server == "io.github.t/ghost"


def test_each_missing_name_keeps_its_did_you_mean(root: Path, stub: RegistryStub) -> None:
    typos = {"a": {"name": "io.github.t/goood"}, "b": {"name": "io.github.t/unsafee"}}
    (root / "mcp.toml").write_text(registry_toml({**SERVERS, **typos}))
    result = run_cli("--registry", stub.url, "-C", root, "lock")
    assert result.code == 2
    hints = [line for line in result.err_lines if line.startswith("  hint (")]
    check = "check `name` in mcp.toml (`mcpsync search TEXT` lists matching names)"
    assert f"  hint (a): did you mean: {GOOD}? {check}" in hints
    assert f"  hint (b): did you mean: {UNSAFE}? {check}" in hints
    assert f"  hint (ghost, phantom): {check}" in hints
