"""Concurrent runs at full size: 8 `sync`s at once in one project of 50 servers x 200 agents
(+ global config + user-scope Cursor file), and 4 projects of 50 servers each syncing at once
into one shared HoloDeck global config and one shared Cursor file, twice (add, then upgrade).

    python bench/bench_concurrency.py [--servers 50] [--agents 200] [--projects 4] [--rounds 3]

Prints each run's exit code and wall time (the 8 same-project runs queue on the project lock,
whose wait is 10 s) and whether the final files hold every project's entries. Never fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import yaml  # noqa: E402
from reliability import (  # noqa: E402
    CURSOR_USER,
    GLOBAL_TARGET,
    Outcome,
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


def line(label: str, outcomes: list[Outcome]) -> None:
    codes = sorted({o.code for o in outcomes})
    times = [o.seconds for o in outcomes]
    print(
        f"  {label}: exit codes {codes}, finished after {min(times):.2f} .. {max(times):.2f} s "
        f"(median {statistics.median(times):.2f} s)"
    )
    for outcome in outcomes:
        if outcome.code:
            print(f"    exit {outcome.code}: {outcome.err.strip()}")


def one_project(base: Path, servers: int, agents: int, runs: int, rounds: int) -> None:
    setup = build(base, servers, agents, shared=GLOBAL_TARGET + CURSOR_USER)
    upgraded(setup, servers)
    old = snapshot(setup.base)
    ok(setup, "sync")
    new = snapshot(setup.base)
    print(f"{runs} syncs at once in one project ({servers} servers x {agents} agents + 2 shared):")
    same = 0
    for r in range(rounds):
        restore(setup.base, old)
        outcomes = at_once([(setup, ["sync"])] * runs)
        line(f"round {r + 1}", outcomes)
        same += snapshot(setup.base) == new and in_process(setup, "sync", "--check")[0] == 0
    print(f"  final tree byte for byte as one sync writes it, check passes: {same}/{rounds}")


def shared_files(base: Path, servers: int, agents: int, projects: int, rounds: int) -> None:
    print(f"{projects} projects x {servers} servers syncing at once into shared user files:")
    kept = 0
    for r in range(rounds):
        root = base / f"round{r}"
        setups = [
            build(
                root,
                servers,
                agents,
                name=f"p{k}",
                prefix=f"p{k}",
                shared=GLOBAL_TARGET + CURSOR_USER,
            )
            for k in range(projects)
        ]
        for setup in setups:
            ok(setup, "lock")
        line(f"round {r + 1}, add", at_once([(s, ["sync"]) for s in setups]))
        for setup in setups:
            write_registry(setup, server_items(servers, ["1.0.0", "1.1.0"], setup.name))
            ok(setup, "lock", "-U")
        line(f"round {r + 1}, upgrade", at_once([(s, ["sync"]) for s in setups]))
        wanted = {f"p{k}_{i:03d}" for k in range(projects) for i in range(servers)}
        home = root / "home"
        config = yaml.safe_load((home / ".holodeck" / "config.yaml").read_text())
        holodeck = {e["name"]: e["args"][-1] for e in config["mcp_servers"]}
        cursor = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
        good = (
            set(holodeck) == wanted | {"users_own"}
            and set(cursor) == wanted
            and all(holodeck[n].endswith("@1.1.0") for n in wanted)
            and all(cursor[n]["args"][-1].endswith("@1.1.0") for n in wanted)
            and all(in_process(s, "sync", "--check")[0] == 0 for s in setups)
        )
        print(
            f"    global config {len(holodeck)} entries, Cursor file {len(cursor)}: "
            f"{'every project kept' if good else 'ENTRIES LOST'}"
        )
        kept += good
    print(f"  every project's entries, at the new version, in both files: {kept}/{rounds}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--projects", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpsync-bench-conc-") as tmp:
        one_project(Path(tmp) / "one", args.servers, args.agents, args.runs, args.rounds)
        shared_files(Path(tmp) / "shared", args.servers, 5, args.projects, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
