"""Long fuzzing run: the hypothesis tests of tests/test_fuzz.py with many more examples,
random (not the suite's derandomized set), and huge values at full size (10 MB).

    python bench/fuzz_long.py [--examples 500] [--huge 10000000] [-k mcp_toml]

Prints, per input kind, the examples run and the failures found (hypothesis shrinks each
failure and prints the mutations and a reproduce blob; add the minimized document to
tests/fuzz_seeds/<kind>/ with the fix). Same oracle as the suite (tests/fuzz_helpers.py).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STATS = re.compile(r"(\d+) passing, (\d+) failing")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500, help="examples per input kind")
    parser.add_argument("--huge", type=int, default=10_000_000, help="bytes of a huge value")
    parser.add_argument("-k", default="test_fuzz_", help="pytest -k expression")
    args = parser.parse_args()
    env = {
        **os.environ,
        "MCPSYNC_FUZZ_EXAMPLES": str(args.examples),
        "MCPSYNC_FUZZ_HUGE": str(args.huge),
        "HYPOTHESIS_PROFILE": "long",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA"]
    command += ["--hypothesis-show-statistics", "-k", args.k, "tests/test_fuzz.py"]
    start = time.monotonic()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    print(done.stdout[-20_000:] if done.returncode else "", end="")
    print(f"{'test':<34}{'examples':>10}{'failing':>9}")
    for test, body in re.findall(r"(test_fuzz\.py::\S+):\n(.*?)(?=\n\S|\Z)", done.stdout, re.S):
        runs = [(int(p), int(f)) for p, f in STATS.findall(body)]
        passing, failing = sum(p for p, _ in runs), sum(f for _, f in runs)
        print(f"{test.split('::')[1]:<34}{passing + failing:>10}{failing:>9}")
    for test in re.findall(r"^FAILED tests/test_fuzz\.py::(\S+)", done.stdout, re.M):
        print(f"{test:<34}{'FAILED (see above)':>19}")
    print(f"pytest exit {done.returncode} in {seconds:.0f} s ({args.huge:,}-byte huge values)")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
