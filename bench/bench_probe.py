"""`mcpsync probe` of 10 servers and `mcpsync verify`: wall time, medians of several runs.
Prints figures; never fails on a missed target.

    python bench/bench_probe.py [--servers 10] [--runs 5] [--registry-servers 100]

The servers are tests/surface_server.py (a tiny MCP server written with the SDK, a Python
process each, so a probe's time is mostly their start-up); each run is a fresh `mcpsync`
process. `verify` (the registry digest check) runs against the registry stand-in with
`--registry-servers` pinned servers; `verify --surface` probes the 10 servers again.
The cpu column (mcpsync and the servers it started) shows what bounds the wall time on a
machine with few cores: each SDK server spends most of a second importing Python modules.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from bench_help import child_env, mcpsync_command  # noqa: E402  (this script's own directory)
from bench_lock import catalog  # noqa: E402
from registry_stub import RegistryStub  # noqa: E402
from trust_helpers import VECTOR_TOOLS, server_table, write_tools  # noqa: E402

TARGET_PROBE_10_S = 5.0
CPU_SECONDS: list[float] = []


def timed(args: list[str], root: Path, runs: int, env: dict[str, str]) -> list[float]:
    """Wall seconds of each run; CPU_SECONDS gets the CPU time the run and its children used."""
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [*mcpsync_command(), "-C", str(root), *args], capture_output=True, env=env, text=True
        )
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        CPU_SECONDS.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"mcpsync {' '.join(args)} failed:\n{done.stderr}")
    return times


def show(label: str, times: list[float], target: float | None = None) -> None:
    median = statistics.median(times)
    goal = f"  (target < {target:g}s: {'met' if median < target else 'MISSED'})" if target else ""
    cpu = statistics.median(CPU_SECONDS[-len(times) :])
    print(f"{label:<44} median {median:6.2f}s  min {min(times):6.2f}s  cpu {cpu:5.1f}s{goal}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--registry-servers", type=int, default=100)
    opts = parser.parse_args()
    env = child_env()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "probe"
        root.mkdir()
        write_tools(root, VECTOR_TOOLS)
        tables = [server_table(f"s{i:02d}", "tools.json") for i in range(opts.servers)]
        (root / "mcp.toml").write_text("\n".join(tables))
        timed(["lock"], root, 1, env)
        show(
            f"probe, {opts.servers} servers (8 at a time)",
            timed(["probe"], root, opts.runs, env),
            TARGET_PROBE_10_S,
        )
        show(
            f"verify --surface, {opts.servers} servers",
            timed(["verify", "--surface"], root, opts.runs, env),
        )

        items, toml = catalog(opts.registry_servers)
        reg = Path(tmp) / "registry"
        reg.mkdir()
        (reg / "mcp.toml").write_text(toml)
        with RegistryStub(items) as stub:
            renv = env | {"MCPSYNC_REGISTRY": stub.url, "MCPSYNC_ARTIFACTS": "0"}  # no stores
            timed(["lock"], reg, 1, renv)
            pinned = json.loads(
                subprocess.run(
                    [*mcpsync_command(), "-C", str(reg), "list", "--json"],
                    capture_output=True,
                    env=renv,
                    text=True,
                    check=True,
                ).stdout
            )["servers"]
            show(
                f"verify (registry digests), {len(pinned)} servers",
                timed(["verify"], reg, opts.runs, renv),
            )


if __name__ == "__main__":
    main()
