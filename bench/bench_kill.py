"""kill -9 at full size: `sync` of 50 servers into 200 agent.yaml files and 2 user-scope files,
and `lock -U` of 50 servers against the registry stand-in with latency. Prints N/N clean.

    python bench/bench_kill.py [--servers 50] [--agents 200] [--kills 50] [--lock-kills 20]

Each kill: the tree is put back to its before-state, `mcpsync` is started as a real process
and SIGKILLed at a deterministic point (a few at fractions of the time to its first write, the
rest when its temp file for the k-th file it writes appears or that file has been replaced);
then every file must be exactly its old or its new bytes and parse, and the next run of the
same command must complete and its check pass. The harness is tests/reliability.py, the same
as tests/test_reliability_kill.py runs at a smaller size. Never fails; prints figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from registry_stub import Faults, RegistryStub  # noqa: E402  (the stand-in lives with the tests)
from reliability import (  # noqa: E402
    CURSOR_USER,
    GLOBAL_TARGET,
    KillPoint,
    Trial,
    build,
    kill_points,
    kill_trials,
    ok,
    recovers,
    server_items,
    snapshot,
    spread,
    summary,
    upgraded,
    write_order,
)


def report(label: str, trials: list[Trial], seconds: float) -> None:
    print(f"{label}: {summary(trials)}  [{seconds:.0f} s]")
    for trial in trials:
        if trial.problems:
            print(f"  at {trial.point}: " + "; ".join(trial.problems[:3]))


def sync_kills(base: Path, servers: int, agents: int, kills: int) -> None:
    setup = build(base, servers, agents, shared=GLOBAL_TARGET + CURSOR_USER)
    upgraded(setup, servers)
    old = snapshot(setup.base)
    order, first = write_order(setup, ["sync"], old)
    new = snapshot(setup.base)
    print(f"sync rewrites {len(order)} files; first write {first * 1000:.0f} ms after start")
    started = time.perf_counter()
    points = kill_points(order, kills, spread(first, max(1, kills // 5)))
    recover = recovers(setup, "sync", check=["sync", "--check"])
    trials = kill_trials(setup, ["sync"], old, new, points, recover)
    report(
        f"sync, {servers} servers x {agents} agents + 2 user files",
        trials,
        time.perf_counter() - started,
    )


def lock_kills(base: Path, servers: int, kills: int, latency: float) -> None:
    with RegistryStub(server_items(servers, ["1.0.0"]), faults=Faults(latency=latency)) as stub:
        setup = build(base, servers, 0, registry=stub.url)
        ok(setup, "lock")
        stub.catalog.items = server_items(servers, ["1.0.0", "1.1.0"])
        old = snapshot(setup.base)
        order, first = write_order(setup, ["lock", "-U"], old)
        new = snapshot(setup.base)
        timed = max(1, kills * 2 // 3)
        points = [KillPoint(delay=d) for d in spread(first, timed)]
        points += [KillPoint(file=order[0], temp=i % 2 == 0) for i in range(kills - timed)]
        seen: list[int] = []

        def recover() -> None:
            seen.append(stub.request_count)
            recovers(setup, "lock", "-U", check=["lock", "--check"])()
            stub.reset_counts()

        stub.reset_counts()
        started = time.perf_counter()
        trials = kill_trials(setup, ["lock", "-U"], old, new, points, recover)
    mid = sum(t.phase == "before" and n > 0 for t, n in zip(trials, seen, strict=True))
    report(
        f"lock -U, {servers} servers, {latency * 1000:.0f} ms latency "
        f"(first write {first * 1000:.0f} ms after start; killed mid-resolve: {mid})",
        trials,
        time.perf_counter() - started,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--lock-kills", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpsync-bench-kill-") as tmp:
        sync_kills(Path(tmp) / "sync", args.servers, args.agents, args.kills)
        lock_kills(Path(tmp) / "lock", args.servers, args.lock_kills, args.latency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
