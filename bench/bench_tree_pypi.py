"""PyPI trees (mcpsync/tree/pypi.py) against a local index (tests/pypi_index.py) and the real
uv: resolution time for N servers, cold and warm materialise, start time through `argv` vs
`uvx id==ver` directly, tree file sizes. Prints figures (medians); never fails on a target.

    python bench/bench_tree_pypi.py [--servers 10] [--runs 7] [--latency 0.0]

Each server `bench-mcp-NN` is a console script depending on three of eight small libraries
(each library has three versions); every wheel is built on the fly. `--latency` adds that many
seconds to every index answer (a remote index), the local one answers in well under 1 ms.
"Cold" is an empty uv cache; "warm" is the cache the previous step filled (materialise then
runs offline). The start times run a script that prints and exits, so they measure start-up:
the venv's Python running the console script (what `mcpsync run` execs) against `uvx`, which
checks its cached tool environment against the index on every start.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from pypi_index import PypiIndex, library_wheel, server_wheel  # noqa: E402  (with the tests)

from mcpsync.artifacts.model import StoreSettings  # noqa: E402
from mcpsync.tree import pypi  # noqa: E402

LIBRARIES = [f"bench-lib-{i}" for i in range(8)]


def publish(index: PypiIndex, servers: int) -> list[str]:
    for library in LIBRARIES:
        for version in ("1.0.0", "1.0.1", "1.1.0"):
            index.publish(*library_wheel(library, version))
    names = []
    for i in range(servers):
        name = f"bench-mcp-{i:02d}"
        uses = [LIBRARIES[(i + k) % len(LIBRARIES)] for k in range(3)]
        requires = [f"{lib}>=1" for lib in uses]
        index.publish(*server_wheel(name, "1.0.0", library=uses[0], requires=requires))
        names.append(name)
    return names


def settings(index_url: str, cache: Path) -> StoreSettings:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    env.update(UV_INDEX_URL=index_url, UV_CACHE_DIR=str(cache), UV_PYTHON_DOWNLOADS="never")
    return StoreSettings(root=cache.parent, env=env)


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f})"


def bench_resolve(names: list[str], work: Path, url: str) -> dict[str, bytes]:
    cache = work / "resolve-cache"
    trees: dict[str, bytes] = {}
    for label in ("cold uv cache", "warm uv cache"):
        each = []
        total = time.perf_counter()
        for name in names:
            start = time.perf_counter()
            trees[name] = pypi.resolve(
                name, "1.0.0", settings(url, cache), workdir=work / "resolve" / name
            )
            each.append(time.perf_counter() - start)
        total = time.perf_counter() - total
        print(f"resolve {len(names)} servers, {label}: {total:.2f} s in all; each {ms(each)}")
    return trees


def bench_materialise(trees: dict[str, bytes], work: Path, url: str, runs: int) -> Path:
    tree = next(iter(trees.values()))
    cold, warm = [], []
    for run in range(runs):
        cache = work / f"mat-cache-{run}"
        dest = work / f"venv-cold-{run}"
        cold.append(timed(lambda: pypi.materialise(tree, dest, settings(url, cache))))  # noqa: B023
        again = work / f"venv-warm-{run}"
        warm.append(timed(lambda: pypi.materialise(tree, again, settings(url, cache))))  # noqa: B023
        shutil.rmtree(cache)
    print(f"materialise one tree ({len(pypi.packages(tree))} packages), cold: {ms(cold)}")
    print(f"materialise one tree, warm (offline): {ms(warm)}")
    return work / "venv-warm-0"


def bench_start(dest: Path, name: str, url: str, work: Path, runs: int) -> None:
    env = dict(settings(url, work / "uvx-cache").env, UV_TOOL_DIR=str(work / "tools"))
    direct = pypi.argv(dest, name, "1.0.0", [])
    uvx = [pypi.find_uv(env), "tool", "run", "--no-config", f"{name}==1.0.0"]
    subprocess.run(uvx, env=env, capture_output=True, check=True)  # fill uvx's cache first
    for label, command in (("argv (venv python + script)", direct), ("uvx id==ver, warm", uvx)):
        times = [
            timed(lambda c=command: subprocess.run(c, env=env, capture_output=True, check=True))
            for _ in range(runs)
        ]
        print(f"start {label}: {ms(times)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--latency", type=float, default=0.0)
    options = parser.parse_args()
    uv = subprocess.run([pypi.find_uv(os.environ), "--version"], capture_output=True, text=True)
    print(f"{uv.stdout.strip()}, Python {pypi.current_python()}, {options.servers} servers")
    with tempfile.TemporaryDirectory(prefix="bench-tree-pypi-") as scratch:
        work = Path(scratch)
        with PypiIndex(work / "index") as index:
            index.latency = options.latency
            names = publish(index, options.servers)
            trees = bench_resolve(names, work, index.url)
            sizes = sorted(len(t) for t in trees.values())
            counts = sorted(len(pypi.packages(t)) for t in trees.values())
            print(
                f"tree files: {sizes[0]}-{sizes[-1]} bytes (median {statistics.median(sizes):.0f}),"
                f" {counts[0]}-{counts[-1]} packages each"
            )
            dest = bench_materialise(trees, work, index.url, options.runs)
            bench_start(dest, names[0], index.url, work, options.runs)


if __name__ == "__main__":
    main()
