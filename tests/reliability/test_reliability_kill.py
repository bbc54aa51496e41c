"""kill -9 anywhere in `sync` and `lock`: every file is exactly its old or its new bytes and
parses, the next run completes, its check passes, and it sweeps the killed run's temp files.

The kill points are spread over the run deterministically: a few at fractions of the time to
the first write (start-up, planning, registry requests), the rest at the moments the run's temp
file for a given target appears (mid-write) or that target has been replaced (between two
files), walking the write order of an uninterrupted run. bench/bench_kill.py runs the same at
full size (50 servers, 200 agent.yaml files).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path

import yaml
from cli_helpers import load_toml
from registry_stub import Faults, RegistryStub
from reliability import (
    CURSOR_USER,
    GLOBAL_TARGET,
    KillPoint,
    Setup,
    Tree,
    build,
    in_process,
    kill_points,
    kill_trials,
    ok,
    recovers,
    reshuffled,
    server_items,
    snapshot,
    spread,
    summary,
    upgraded,
    write_order,
)

SERVERS, AGENTS, KILLS = 10, 20, 20


def test_sync_killed_anywhere_leaves_each_file_old_or_new(tmp_path: Path) -> None:
    setup = build(tmp_path / "t", SERVERS, AGENTS, shared=GLOBAL_TARGET + CURSOR_USER)
    upgraded(setup, SERVERS)  # every agent, both user-scope files and the stamps will change
    old = snapshot(setup.base)
    order, first = write_order(setup, ["sync"], old)
    new = snapshot(setup.base)
    assert len(order) == AGENTS + 3  # the agents, the global and Cursor configs, the stamps

    points = kill_points(order, KILLS, spread(first, 4))
    trials = kill_trials(
        setup, ["sync"], old, new, points, recovers(setup, "sync", check=["sync", "--check"])
    )

    print(f"sync, {SERVERS} servers x {AGENTS} agents + 2 user files: {summary(trials)}")
    assert [(str(t.point), t.problems) for t in trials if t.problems] == []
    assert sum(t.phase == "partial" for t in trials) >= 3, summary(trials)  # kills did land
    assert any(t.leftovers for t in trials), summary(trials)  # ... also inside a write
    assert [str(t.point) for t in trials if t.left_after] == []  # the next sync swept them


def test_sync_killed_between_any_two_writes_leaves_the_claims_covering_the_files(
    tmp_path: Path,
) -> None:
    """The ledger and the record change too (a server replaced by another): killed before,
    inside or after each of the sync's writes, neither claims less than the files hold (no
    entry is left that nobody owns), `sync --check` fails exactly while a target is old, and
    the next sync completes the change."""
    setup = build(tmp_path / "t", SERVERS, CLAIM_AGENTS, shared=GLOBAL_TARGET + CURSOR_USER)
    reshuffled(setup, SERVERS)
    old = snapshot(setup.base)
    order, _ = write_order(setup, ["sync"], old)
    new = snapshot(setup.base)
    ledger, record = setup.state / "owners.json", setup.proj / "mcp.synced.toml"
    assert order[-3:-1] == [ledger, record] and order[-1].parent.name == "stamps"
    targets = order[:-3]  # the agents and the two user-scope files, between the claims
    assert len(targets) == CLAIM_AGENTS + 2
    writes = [ledger, record, *targets, ledger, record, order[-1]]  # claims widened first
    points = []
    for i, file in enumerate(writes):
        nth = writes[: i + 1].count(file)
        if file in (ledger, record):
            points.append(KillPoint(file=file, temp=True, nth=nth))  # inside the write
        points.append(KillPoint(file=file, nth=nth))  # between it and the next

    trials = kill_trials(
        setup,
        ["sync"],
        old,
        new,
        points,
        recovers(setup, "sync", check=["sync", "--check"]),
        inspect=claims_cover(setup, old, new, targets),
        between=(ledger, record),
    )

    print(f"sync changing the claims, {CLAIM_AGENTS} agents + 2 user files: {summary(trials)}")
    assert [(str(t.point), t.problems) for t in trials if t.problems] == []
    missed = [str(t.point) for t in trials[:-1] if t.exited is not None]  # a slow poll
    assert len(missed) <= 2, missed
    assert sum(t.phase == "before" for t in trials) >= 1, summary(trials)  # claims widen first
    assert [str(t.point) for t in trials if t.left_after] == []


CLAIM_AGENTS = 3
Claims = set[tuple[str, ...]]


def ledger_claims(data: bytes | None) -> Claims:
    files = json.loads(data)["files"] if data else {}
    return {(f, p, n) for f, owners in files.items() for p, names in owners.items() for n in names}


def record_claims(data: bytes | None) -> Claims:
    files = load_toml(data.decode())["files"] if data else {}
    return {(f, n) for f, names in files.items() for n in names}


def on_disk(path: Path, data: bytes) -> set[str]:
    """The names of the MCP entries a target file holds."""
    if path.suffix == ".json":
        return set(json.loads(data)["mcpServers"])
    doc = yaml.safe_load(data)
    items = doc.get("mcp_servers") or doc.get("tools") or []
    return {i["name"] for i in items if i.get("type") == "mcp"}


def claims_cover(
    setup: Setup, old: Tree, new: Tree, targets: list[Path]
) -> Callable[[], list[str]]:
    """After a kill: the ledger and the record each claim their old, their new, or both sets
    of names (nothing else), together every entry on disk, and `sync --check` fails exactly
    while a target still holds its old bytes."""
    ledger, record = setup.state / "owners.json", setup.proj / "mcp.synced.toml"

    def inspect() -> list[str]:
        problems = []
        now = snapshot(setup.base)
        claimed = {}
        for path, parse in ((ledger, ledger_claims), (record, record_claims)):
            was, will = parse(old.get(path)), parse(new.get(path))
            claimed[path] = parse(now.get(path))
            if claimed[path] not in (was, will, was | will):
                problems.append(f"{path.name} claims neither old, new nor both")
        owned = {(f, n) for f, _, n in claimed[ledger]} | {(str(f), n) for f, n in claimed[record]}
        for target in targets:
            shared = str(setup.home) in str(target)
            key = os.path.realpath(target) if shared else target.relative_to(setup.proj).as_posix()
            names = on_disk(target, now[target]) - {"users_own"}  # the user's own entry
            orphans = sorted(n for n in names if (key, n) not in owned)
            if orphans:
                problems.append(f"{target.name}: {', '.join(orphans)} claimed by nobody")
        stale = any(now[t] == old[t] for t in targets)
        code, _ = in_process(setup, "sync", "--check")
        if code != (1 if stale else 0):
            some = "some" if stale else "no"
            problems.append(f"sync --check exited {code} with {some} target holding old bytes")
        return problems

    return inspect


def test_lock_killed_mid_resolve_and_mid_write_leaves_old_or_new_lock(tmp_path: Path) -> None:
    with RegistryStub(server_items(SERVERS, ["1.0.0"]), faults=Faults(latency=0.2)) as stub:
        setup = build(tmp_path / "t", SERVERS, 0, registry=stub.url)
        ok(setup, "lock")
        stub.catalog.items = server_items(SERVERS, ["1.0.0", "1.1.0"])
        old = snapshot(setup.base)
        order, first = write_order(setup, ["lock", "-U"], old)
        new = snapshot(setup.base)
        assert [p.name for p in order] == ["mcp.lock"]

        stub.reset_counts()
        points = [KillPoint(delay=d) for d in spread(first, 7)]
        points += [KillPoint(file=order[0], temp=True), KillPoint(file=order[0])] * 2
        seen: list[int] = []

        def recover() -> None:
            seen.append(stub.request_count)  # requests the killed run had made
            recovers(setup, "lock", "-U", check=["lock", "--check"])()
            stub.reset_counts()

        trials = kill_trials(setup, ["lock", "-U"], old, new, points, recover)

    mid_resolve = sum(t.phase == "before" and n > 0 for t, n in zip(trials, seen, strict=True))
    print(
        f"lock -U, {SERVERS} servers, 200 ms registry latency: {summary(trials)}; "
        f"killed mid-resolve: {mid_resolve}"
    )
    assert [(str(t.point), t.problems) for t in trials if t.problems] == []
    assert mid_resolve >= 1, (seen, summary(trials))
    assert [str(t.point) for t in trials if t.left_after] == []


def test_a_dead_runs_temp_file_is_swept_a_live_ones_is_kept(tmp_path: Path) -> None:
    """atomic_write holds a lock on its temp file while it lives; the kernel drops it when the
    process dies, which is how the next write tells a killed run's leftovers from a running
    writer's file."""
    from mcpsync.fsutil import atomic_write

    target = tmp_path / "agent.yaml"
    target.write_text("old\n")
    dead = tmp_path / ".agent.yaml.abcd1234.tmp"
    dead.write_text("half")
    live = tmp_path / ".agent.yaml.live_123.tmp"
    live.write_text("writing")
    other = tmp_path / ".other.yaml.abcd1234.tmp"  # another file's: not ours to judge here
    other.write_text("x")
    mine = tmp_path / ".agent.yaml.notes.txt"  # not a temp file name at all
    mine.write_text("the user's")
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        atomic_write(target, "new\n")
    finally:
        os.close(fd)
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [target.name, live.name, other.name, mine.name]
    )
