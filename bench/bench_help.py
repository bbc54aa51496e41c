"""`mcpsync --help` start-up time against bare `python -c pass`, and which heavy modules it
imports. Prints figures (medians of several runs); never fails on a missed target.

    python bench/bench_help.py [--runs 21]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

TARGET_RATIO = 2.0  # --help answered from its cache (mcpsync/cli/help_cache.py)
# Modules `--help` must not import: each costs tens of milliseconds at start-up.
MUST_NOT = ("urllib3", "httpx", "httpcore", "yaml", "tomlkit", "mcp")
ALSO_WATCHED = (
    "msgspec",
    "anyio",
    "trio",
    "pydantic",
    "rich",
    "packaging",
    "h11",
    "certifi",
    "ssl",
)


def mcpsync_command() -> list[str]:
    """This Python's own console script (not a pyenv/asdf shim, which adds a shell), or -m."""
    script = Path(sys.executable).with_name("mcpsync")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "mcpsync"]


def child_env() -> dict[str, str]:
    """The user's environment, minus mcpsync settings; bytecode caching on, as installed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSYNC_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def median_ms(command: Sequence[str], runs: int, env: dict[str, str]) -> tuple[float, float]:
    """(median, min) wall time in ms over `runs` runs, after two warm-up runs."""
    for _ in range(2):
        subprocess.run(command, capture_output=True, env=env, check=True)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, env=env, check=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), min(times)


_LIST_MODULES = "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"


def modules_loaded(env: dict[str, str], *, after_help: bool) -> set[str]:
    """Top-level modules in sys.modules after `--help` (or after nothing: bare start-up)."""
    code = "import contextlib, io, json, sys\n"
    if after_help:
        code += (
            "from mcpsync.cli.main import run\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    code = run(['--help'])\n"
            "assert code == 0, code\n"
        )
    code += _LIST_MODULES
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return set(json.loads(done.stdout))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="timed runs per command")
    args = parser.parse_args(argv)
    env = child_env()
    command = mcpsync_command()

    bare, bare_min = median_ms([sys.executable, "-c", "pass"], args.runs, env)
    helped, helped_min = median_ms([*command, "--help"], args.runs, env)
    ratio = helped / bare
    print(f"python -c pass     {bare:7.1f} ms median  ({bare_min:.1f} min) of {args.runs} runs")
    print(
        f"mcpsync --help     {helped:7.1f} ms median  ({helped_min:.1f} min)  [{' '.join(command)}]"
    )
    verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
    print(f"ratio              {ratio:7.2f} x        target <= {TARGET_RATIO:.0f} x: {verdict}")

    loaded = modules_loaded(env, after_help=True)
    baseline = modules_loaded(env, after_help=False)
    bad = [m for m in MUST_NOT if m in loaded - baseline]
    print("imported by --help:")
    for module in (*MUST_NOT, *ALSO_WATCHED):
        flag = "yes" if module in loaded else "no"
        if module in baseline:
            flag += " (bare python imports it too, via site)"
        must = "  (must not)" if module in MUST_NOT else ""
        print(f"  {module:<10} {flag}{must}")
    print(f"mcpsync's own top-level imports: {', '.join(sorted(loaded - baseline))}")
    print(f"heavy modules imported: {', '.join(bad) if bad else 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
