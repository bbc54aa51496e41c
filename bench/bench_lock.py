"""`mcpsync lock` of many servers against the registry stand-in with per-request latency:
cold (no mcp.lock) vs the sequential floor, and the no-op relock (requests made, time).
Prints figures (medians of several runs); never fails on a missed target.

    python bench/bench_lock.py [--servers 100] [--latency 0.05] [--runs 5] [--artifacts-only]
    python bench/bench_lock.py --servers 1000 --artifacts-only --runs 3   # peak RSS of 1,000

The registry-only modes lock with MCPSYNC_ARTIFACTS=0. The last mode records artifact digests
too: a third of the servers each npm, PyPI and OCI, their stores (tests/artifact_stubs.py, the
OCI one with its bearer-token challenge) answering at the same latency as the registry.

Each lock runs `mcpsync` as a fresh process, so times include Python start-up and imports.
The stand-in as shipped leaves Nagle's algorithm on, which stalls every keep-alive answer
(headers and body go out as two writes) for the client's delayed ACK, ~40 ms on Linux; real
HTTP servers (Go's net/http, which the registry runs) set TCP_NODELAY. Both are measured.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import registry_stub  # noqa: E402  (the stand-in lives with the tests)
from artifact_stubs import ArtifactStub  # noqa: E402
from bench_help import child_env, mcpsync_command  # noqa: E402  (this script's own directory)
from registry_stub import RegistryStub, make_item, npm_package  # noqa: E402

TARGET_COLD_S = 0.3  # registry only; with artifact digests TARGET_ARTIFACTS_S (idle machine)
TARGET_ARTIFACTS_S = 0.4
TARGET_NOOP_S = 0.1
TARGET_NOOP_REQUESTS = 0
TARGET_PEAK_MB = 100  # for 1,000 servers
RESOLVED = re.compile(r"Resolved (\d+) servers? in (\d+)ms")


def catalog(count: int, store: ArtifactStub | None = None) -> tuple[list[dict[str, Any]], str]:
    """`count` servers with three versions each (npm and pypi; with `store`, a third each npm,
    pypi and oci, every version also in the store), and an mcp.toml using them with a mix of
    constraints."""
    items: list[dict[str, Any]] = []
    toml: list[str] = []
    constraints = ["^1", "*", "latest", "~1.1", ">=1.0,<2"]
    for i in range(count):
        name = f"io.github.bench/server-{i:03d}"
        for day, version in enumerate(["1.0.0", "1.1.0", "2.0.0-beta.1"]):
            if store is not None:
                package = _stored(store, i, version)
            elif i % 2:
                package = {
                    "registryType": "pypi",
                    "identifier": f"bench-server-{i:03d}",
                    "version": version,
                    "transport": {"type": "stdio"},
                }
            else:
                package = npm_package(f"@bench/server-{i:03d}", version)
            items.append(
                make_item(
                    name,
                    version,
                    is_latest=version == "1.1.0",
                    published_at=f"2025-06-{day + 1:02d}T12:00:00Z",
                    packages=[package],
                )
            )
        constraint = constraints[i % len(constraints)]
        toml.append(f'[servers.s{i:03d}]\nname = "{name}"\nversion = "{constraint}"\n')
    return items, "\n".join(toml)


def _stored(store: ArtifactStub, i: int, version: str) -> dict[str, Any]:
    """Server i's package, of kind npm, pypi or oci by i % 3, put in the artifact store too."""
    stdio = {"transport": {"type": "stdio"}}
    if i % 3 == 0:
        store.npm.setdefault(f"@bench/server-{i:03d}", {})[version] = f"sha512-{i:03d}{version}"
        return npm_package(f"@bench/server-{i:03d}", version)
    if i % 3 == 1:
        files = store.pypi.setdefault(f"bench-server-{i:03d}", [])
        files.append(f"bench_server_{i:03d}-{version.replace('-beta.', 'b')}.tar.gz")
        name = f"bench-server-{i:03d}"
        return {"registryType": "pypi", "identifier": name, "version": version, **stdio}
    store.images.setdefault(f"bench/server-{i:03d}", set()).add(version)
    image = f"{store.host}/bench/server-{i:03d}"
    return {"registryType": "oci", "identifier": image, "version": version, **stdio}


@dataclass
class Run:
    wall_s: float
    inner_ms: int  # what `lock` itself reports: "Resolved N servers in Xms"
    requests: int
    peak_mb: float  # the process's peak resident set size


# `mcpsync` in a Python where `import trio` fails, as in a clean install: httpcore imports trio
# when it is there (here it may be, installed on its own), which costs ~60-80 ms.
WITHOUT_TRIO = [
    sys.executable,
    "-c",
    "import sys; sys.modules['trio'] = None\nfrom mcpsync.cli.main import main\nmain()",
]


def trio_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("trio") is not None


def lock_once(
    stub: RegistryStub,
    root: Path,
    env: dict[str, str],
    command: Sequence[str] = (),
    store: ArtifactStub | None = None,
) -> Run:
    stub.reset_counts()
    if store is not None:
        store.reset_counts()
    argv = [*(command or mcpsync_command()), "--registry", stub.url, "-C", str(root), "lock"]
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # its own rusage: the peak RSS of this run
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    if proc.returncode != 0:
        raise SystemExit(f"lock failed ({proc.returncode}):\n{stderr}")
    match = RESOLVED.search(stderr)
    requests = stub.request_count + (store.request_count if store is not None else 0)
    peak = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return Run(wall, int(match.group(2)) if match else -1, requests, peak)


def measure(
    items: list[dict[str, Any]],
    toml: str,
    latency: float,
    runs: int,
    nodelay: bool,
    command: Sequence[str] = (),
    store: ArtifactStub | None = None,
) -> tuple[list[Run], list[Run], bool]:
    registry_stub._Handler.disable_nagle_algorithm = nodelay  # type: ignore[attr-defined]
    env = {**child_env(), "MCPSYNC_ARTIFACTS": "0"}
    if store is not None:
        env.update({**store.env(), "MCPSYNC_ARTIFACTS": "1"})
        store.latency = latency
    with RegistryStub(items) as stub, tempfile.TemporaryDirectory() as tmp:
        stub.faults.latency = latency
        root = Path(tmp)
        env["HOME"] = tmp  # no user .npmrc
        (root / "mcp.toml").write_text(toml, encoding="utf-8")
        lock_once(stub, root, env, command, store)  # warm-up: bytecode caches, stand-in threads
        cold = []
        for _ in range(runs):
            (root / "mcp.lock").unlink()
            cold.append(lock_once(stub, root, env, command, store))
        before = (root / "mcp.lock").stat().st_mtime_ns
        noop = [lock_once(stub, root, env, command, store) for _ in range(runs)]
        untouched = (root / "mcp.lock").stat().st_mtime_ns == before
    return cold, noop, untouched


def report(
    label: str,
    cold: list[Run],
    noop: list[Run],
    untouched: bool,
    floor: float,
    target: float = TARGET_COLD_S,
) -> None:
    wall = statistics.median(r.wall_s for r in cold)
    inner = statistics.median(r.inner_ms for r in cold)
    print(f"\n[{label}]")
    print(
        f"cold lock     {wall:6.3f} s wall median (min {min(r.wall_s for r in cold):.3f}), "
        f"{inner / 1000:.3f} s inside `lock`, {statistics.median(r.requests for r in cold):.0f}"
        f" requests"
    )
    print(f"              {floor / wall:5.1f}x faster than the sequential floor ({floor:.2f} s)")
    verdict = "met" if wall <= target else "MISSED"
    print(f"              target <= {target} s (wall, process included, idle machine): {verdict}")
    peak = max(r.peak_mb for r in cold)
    print(f"              peak RSS {peak:.1f} MB (1,000 servers: target < {TARGET_PEAK_MB} MB)")
    noop_wall = statistics.median(r.wall_s for r in noop)
    requests = max(r.requests for r in noop)
    print(
        f"no-op lock    {noop_wall:6.3f} s wall median (target <= {TARGET_NOOP_S} s: "
        f"{'met' if noop_wall <= TARGET_NOOP_S else 'MISSED'}), {requests} requests "
        f"(target {TARGET_NOOP_REQUESTS}: {'met' if requests == 0 else 'MISSED'}), "
        f"mcp.lock {'untouched' if untouched else 'REWRITTEN'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--artifacts-only", action="store_true", help="only the artifacts mode")
    args = parser.parse_args(argv)
    items, toml = catalog(args.servers)
    floor = args.servers * args.latency
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{args.servers} servers, {args.latency * 1000:.0f} ms a request, {args.runs} runs; "
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load:.2f}"
    )
    if args.artifacts_only:
        return bench_artifacts(args.servers, args.latency, args.runs, floor)
    shipped = bool(getattr(registry_stub._Handler, "disable_nagle_algorithm", False))
    modes = [(shipped, "stand-in as shipped" + (" (TCP_NODELAY)" if shipped else ""))]
    if not shipped:
        modes.append((True, "stand-in with TCP_NODELAY, as real HTTP servers"))
    for nodelay, label in modes:
        cold, noop, untouched = measure(items, toml, args.latency, args.runs, nodelay)
        report(label, cold, noop, untouched, floor)
    if trio_installed():  # what a clean install (no trio) would see, with TCP_NODELAY
        cold, noop, untouched = measure(items, toml, args.latency, args.runs, True, WITHOUT_TRIO)
        report(
            "TCP_NODELAY, and no trio to import, as a clean install", cold, noop, untouched, floor
        )
    return bench_artifacts(args.servers, args.latency, args.runs, floor)


def bench_artifacts(servers: int, latency: float, runs: int, floor: float) -> int:
    with ArtifactStub() as store:
        items, toml = catalog(servers, store)
        cold, noop, untouched = measure(items, toml, latency, runs, True, store=store)
    # Each server costs a registry request and a store request (an OCI image two or three).
    report(
        "with artifact digests: npm, PyPI and OCI stores at the same latency",
        cold,
        noop,
        untouched,
        2 * floor,
        TARGET_ARTIFACTS_S,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
