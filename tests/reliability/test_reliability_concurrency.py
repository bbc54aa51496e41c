"""Concurrent runs: 8 syncs in one project end as one sync would; 4 projects syncing into one
shared HoloDeck global config and one shared user-scope client file at once lose nothing.

Runs in one project serialize on the project directory's lock; projects that share user-scope
files serialize on the ownership ledger's directory and plan those files again under that lock.
bench/bench_concurrency.py runs the same at full size.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from reliability import (
    CURSOR_USER,
    GLOBAL_TARGET,
    at_once,
    build,
    in_process,
    ok,
    restore,
    server_items,
    snapshot,
    upgraded,
    write_registry,
)


def test_eight_syncs_at_once_in_one_project_end_as_one_sync(tmp_path: Path) -> None:
    setup = build(tmp_path / "t", 10, 20, shared=GLOBAL_TARGET + CURSOR_USER)
    upgraded(setup, 10)
    old = snapshot(setup.base)
    ok(setup, "sync")
    new = snapshot(setup.base)
    assert new != old
    restore(setup.base, old)

    outcomes = at_once([(setup, ["sync"])] * 8)

    assert [(o.code, o.err) for o in outcomes if o.code] == []  # none gave up waiting
    assert snapshot(setup.base) == new  # byte for byte what one sync writes, nothing else
    assert in_process(setup, "sync", "--check")[0] == 0


def test_four_projects_sync_into_shared_user_files_at_once(tmp_path: Path) -> None:
    servers, agents = 5, 3
    setups = [
        build(
            tmp_path,
            servers,
            agents,
            name=f"p{k}",
            prefix=f"p{k}",
            shared=GLOBAL_TARGET + CURSOR_USER,
        )
        for k in range(4)
    ]
    for setup in setups:
        ok(setup, "lock")

    first = at_once([(s, ["sync"]) for s in setups])  # every project adds its entries
    for setup in setups:  # then every project upgrades: its entries are replaced
        write_registry(setup, server_items(servers, ["1.0.0", "1.1.0"], setup.name))
        ok(setup, "lock", "-U")
    second = at_once([(s, ["sync"]) for s in setups])

    assert [(o.code, o.err) for o in first + second if o.code] == []
    home = tmp_path / "home"
    wanted = {f"p{k}_{i:03d}" for k in range(4) for i in range(servers)}
    config = yaml.safe_load((home / ".holodeck" / "config.yaml").read_text())
    entries = {e["name"]: e for e in config["mcp_servers"]}
    assert set(entries) == wanted | {"users_own"}
    assert all(e["args"][-1].endswith("@1.1.0") for n, e in entries.items() if n in wanted)
    cursor = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert set(cursor) == wanted
    assert all(e["args"][-1].endswith("@1.1.0") for e in cursor.values())
    ledger = json.loads((tmp_path / "state" / "owners.json").read_text())["files"]
    for owners in ledger.values():
        assert {Path(p).parent.name: set(n) for p, n in owners.items()} == {
            f"p{k}": {f"p{k}_{i:03d}" for i in range(servers)} for k in range(4)
        }
    for setup in setups:
        assert in_process(setup, "sync", "--check")[0] == 0
