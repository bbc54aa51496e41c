"""Benchmark `mcpsync sync`: 50 servers into 200 agent.yaml files, and the no-op sync.

    python bench/bench_sync.py [--servers 50] [--agents 200] [--repeat 7] [--profile] [--global]

Targets (issue 3): a full sync <= 1 s, a no-op sync <= 0.4 s. Both are measured in-process
(`mcpsync.cli.main.run`, imports warm) and as a subprocess (`python -m`-style, cold start
included); the no-op also without sync's stamps (a fresh checkout, as in CI: every file is
parsed). Prints medians; asserts nothing. HOME and MCPSYNC_STATE_DIR point into the temp
project, so the real home is never touched. `--profile` prints the top of a cProfile of one
in-process full sync and one no-op sync. `--global` adds a holodeck-global target (a shared
file: sync then also takes the ledger's lock).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

AGENT = """\
# Agent {i}: hand-written, with comments and a function tool
name: agent_{i}
description: Benchmark agent number {i}
model:
  provider: openai
  name: gpt-4o
instructions:
  inline: You are agent {i}.
tools:
  # a function tool that sync leaves alone
  - name: lookup_{i}
    description: Look something up
    type: function
    file: tools/lookup.py
    function: lookup
"""

CODE = "import sys; from mcpsync.cli.main import run; sys.exit(run(sys.argv[1:]))"


def item(i: int) -> dict[str, object]:
    name = f"io.github.bench/server-{i:02d}"
    if i % 3 == 1:
        package: dict[str, object] = {
            "registryType": "pypi",
            "identifier": f"bench-server-{i:02d}",
            "version": "1.0.0",
            "transport": {"type": "stdio"},
            "environmentVariables": [
                {"name": f"BENCH_KEY_{i:02d}", "isRequired": True, "isSecret": True}
            ],
        }
    else:
        package = {
            "registryType": "npm",
            "identifier": f"@bench/server-{i:02d}",
            "version": "1.0.0",
            "transport": {"type": "stdio"},
        }
    meta = {
        "status": "active",
        "publishedAt": "2025-01-01T00:00:00Z",
        "updatedAt": "2025-01-01T00:00:00Z",
        "isLatest": True,
    }
    server = {
        "name": name,
        "description": f"Benchmark server {i}",
        "version": "1.0.0",
        "packages": [package],
    }
    return {"server": server, "_meta": {"io.modelcontextprotocol.registry/official": meta}}


def build(root: Path, servers: int, agents: int, shared: bool = False) -> list[Path]:
    (root / "registry").mkdir(parents=True)
    items = [item(i) for i in range(servers)]
    (root / "registry" / "servers.json").write_text(json.dumps({"servers": items}))
    lines = ['[registry]\nurl = "file:registry"\n']
    for i in range(servers):
        lines.append(f'[servers.server-{i:02d}]\nname = "io.github.bench/server-{i:02d}"\n')
    lines.append('[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"\n')
    if shared:
        lines.append('[[targets]]\nkind = "holodeck-global"\npath = "holodeck/config.yaml"\n')
    (root / "mcp.toml").write_text("\n".join(lines))
    paths = []
    for i in range(agents):
        path = root / "agents" / f"a{i:03d}" / "agent.yaml"
        path.parent.mkdir(parents=True)
        path.write_text(AGENT.format(i=i))
        paths.append(path)
    return paths


def reset(paths: list[Path]) -> None:
    for i, path in enumerate(paths):
        path.write_text(AGENT.format(i=i))


def in_process(argv: list[str]) -> Callable[[], int]:
    from mcpsync.cli.main import run

    def call() -> int:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return run(argv)

    return call


def subprocess_call(argv: list[str]) -> Callable[[], int]:
    def call() -> int:
        return subprocess.run(
            [sys.executable, "-c", CODE, *argv], capture_output=True, check=False
        ).returncode

    return call


def measure(
    label: str, call: Callable[[], int], repeat: int, before: Callable[[], None] | None = None
) -> float:
    times = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        code = call()
        times.append(time.perf_counter() - start)
        if code != 0:
            raise SystemExit(f"{label}: exit code {code}")
    median = statistics.median(times)
    print(f"  {label:<44} median {median * 1000:7.1f} ms   (min {min(times) * 1000:.1f} ms)")
    return median


def profile(label: str, call: Callable[[], int], before: Callable[[], None] | None) -> None:
    if before:
        before()
    prof = cProfile.Profile()
    prof.enable()
    call()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
    print(f"\n--- cProfile: {label} (cumulative) ---")
    print(out.getvalue())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--global", dest="shared", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="mcpsync-bench-") as tmp:
        root = Path(tmp) / "proj"
        os.environ["HOME"] = str(Path(tmp) / "home")
        os.environ["MCPSYNC_STATE_DIR"] = str(Path(tmp) / "state")
        os.environ.pop("MCPSYNC_REGISTRY", None)
        paths = build(root, args.servers, args.agents, args.shared)
        base = ["-C", str(root)]
        if in_process([*base, "lock"])() != 0:
            raise SystemExit("lock failed")
        py = sys.version.split()[0]
        print(f"{args.servers} servers x {args.agents} agent.yaml files, python {py}")

        def fresh() -> None:
            reset(paths)

        results = {}
        print("in-process (imports warm):")
        results["full"] = measure(
            "sync, every file rewritten", in_process([*base, "sync"]), args.repeat, fresh
        )
        size = sum(len(p.read_bytes()) for p in paths)
        results["noop"] = measure("sync, nothing to do", in_process([*base, "sync"]), args.repeat)
        measure("sync --check, in sync", in_process([*base, "sync", "--check"]), args.repeat)
        stamps = Path(tmp) / "state" / "stamps"

        def forget() -> None:  # a fresh checkout (CI): no stamps, every file parsed
            shutil.rmtree(stamps, ignore_errors=True)

        results["noop_cold"] = measure(
            "sync --check, in sync, no stamps",
            in_process([*base, "sync", "--check"]),
            args.repeat,
            forget,
        )
        print("subprocess (interpreter start and imports included):")
        results["full_sub"] = measure(
            "sync, every file rewritten", subprocess_call([*base, "sync"]), args.repeat, fresh
        )
        results["noop_sub"] = measure(
            "sync, nothing to do", subprocess_call([*base, "sync"]), args.repeat
        )
        measure("sync --check, in sync", subprocess_call([*base, "sync", "--check"]), args.repeat)
        print(f"(synced files total {size / 1e6:.1f} MB)")
        print(
            f"targets: full <= 1000 ms: in-process {results['full'] * 1000:.0f} ms, "
            f"subprocess {results['full_sub'] * 1000:.0f} ms; "
            f"no-op <= 400 ms: in-process {results['noop'] * 1000:.0f} ms, "
            f"subprocess {results['noop_sub'] * 1000:.0f} ms "
            f"(without stamps: in-process {results['noop_cold'] * 1000:.0f} ms)"
        )
        if args.profile:
            profile("full sync", in_process([*base, "sync"]), fresh)
            profile("no-op sync", in_process([*base, "sync"]), None)
            profile(
                "no-op sync --check without stamps", in_process([*base, "sync", "--check"]), forget
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
