"""mcp.lock size and `mcpsync lock --check` time (which re-renders every entry from its recorded
inputs and server.json, offline) for the quickstart example and for many servers.
Prints figures (medians of several runs); never fails on a missed target.

    python bench/bench_lock_check.py [--servers 100] [--runs 7]

Two catalogs of `--servers` servers: bench_lock's synthetic one (small server.json files), and,
when MCPSYNC_CORPUS names the real-registry sample, the first servers of that sample that
render with the default choice (real server.json sizes). Everything runs from `file:`
snapshots, so no network is involved; `lock --check` runs as a fresh process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from bench_help import child_env, mcpsync_command  # noqa: E402  (this script's own directory)
from bench_lock import catalog  # noqa: E402

TARGET_CHECK_S = 0.1  # it runs in every pre-commit hook


def corpus_catalog(path: str, count: int) -> tuple[list[dict[str, Any]], str]:
    """The first `count` servers of the sample that lock with the default choice."""
    from mcpsync.errors import McpsyncError
    from mcpsync.launch import LaunchOptions, render

    items = json.loads(Path(path).read_text(encoding="utf-8"))
    chosen: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in items:
        server = item["server"]
        if server["name"] in seen:
            continue
        try:
            render(server, LaunchOptions(alias="x"))
        except McpsyncError:
            continue
        seen.add(server["name"])
        chosen.append(item)
        if len(chosen) == count:
            break
    toml = "\n".join(
        f'[servers.s{i:03d}]\nname = "{server["name"]}"\nversion = "{server["version"]}"\n'
        for i, server in enumerate(it["server"] for it in chosen)
    )
    return chosen, toml


def project(root: Path, items: list[dict[str, Any]], toml: str) -> Path:
    (root / "registry").mkdir(parents=True)
    (root / "registry" / "servers.json").write_text(json.dumps({"servers": items}))
    (root / "mcp.toml").write_text('[registry]\nurl = "file:registry"\n\n' + toml)
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*mcpsync_command(), "-C", str(root), *args],
        capture_output=True,
        text=True,
        env=child_env(),
        check=False,
    )


def measure(label: str, root: Path, runs: int) -> None:
    locked = run(root, "lock")
    if locked.returncode != 0:
        raise SystemExit(f"lock failed:\n{locked.stderr}")
    size = (root / "mcp.lock").stat().st_size
    run(root, "lock", "--check")  # warm-up: bytecode caches
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = run(root, "lock", "--check")
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"lock --check failed:\n{done.stderr}")
    help_times = []
    for _ in range(runs):  # the process floor, to tell start-up from the check itself
        started = time.perf_counter()
        run(root, "--version")
        help_times.append(time.perf_counter() - started)
    check, floor = statistics.median(times), statistics.median(help_times)
    verdict = "met" if check <= TARGET_CHECK_S else "MISSED"
    inner = in_process(root, runs * 3)
    print(
        f"[{label}] mcp.lock {size:,} bytes; lock --check {check * 1000:.0f} ms median "
        f"(min {min(times) * 1000:.0f}; `--version` {floor * 1000:.0f} ms; in-process "
        f"{inner * 1000:.1f} ms median); target <= {TARGET_CHECK_S} s: {verdict}"
    )


def in_process(root: Path, runs: int) -> float:
    """Median seconds of `lock --check` run in this process (imports done): the check itself,
    without Python's start-up, which dominates the process figure on a busy machine."""
    import contextlib
    import io

    from mcpsync.cli.main import run as cli

    times = []
    for _ in range(runs + 2):
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = cli(["-C", str(root), "lock", "--check"])
        times.append(time.perf_counter() - started)
        if code != 0:
            raise SystemExit(f"lock --check failed in-process ({code})")
    return statistics.median(times[2:])  # the first two warm caches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        quick = Path(tmp) / "quickstart"
        shutil.copytree(REPO / "examples" / "quickstart", quick)
        measure("quickstart", quick, args.runs)
        items, toml = catalog(args.servers)
        measure(
            f"{args.servers} synthetic", project(Path(tmp) / "synthetic", items, toml), args.runs
        )
        corpus = os.environ.get("MCPSYNC_CORPUS")
        if corpus:
            items, toml = corpus_catalog(corpus, args.servers)
            label = f"{len(items)} from the corpus"
            measure(label, project(Path(tmp) / "corpus", items, toml), args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
