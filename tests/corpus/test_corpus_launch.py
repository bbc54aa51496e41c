"""render() against real registry entries: every server.json either renders or fails with an
McpsyncError, never another exception.

Skipped unless MCPSYNC_CORPUS names a JSON file holding a list of ServerResponse items
({"server": {...}, "_meta": {...}}), e.g.

    MCPSYNC_CORPUS=/path/to/corpus-sample.json python -m pytest tests/test_corpus_launch.py -s
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mcpsync.errors import McpsyncError
from mcpsync.launch import LaunchOptions, render

CORPUS = os.environ.get("MCPSYNC_CORPUS")
RENDER_FLOOR = 0.70  # real entries that are complete enough to launch without any inputs

pytestmark = pytest.mark.skipif(not CORPUS, reason="set MCPSYNC_CORPUS to a ServerResponse list")


def _servers() -> list[dict[str, Any]]:
    items = json.loads(Path(str(CORPUS)).read_text(encoding="utf-8"))
    assert isinstance(items, list), "MCPSYNC_CORPUS must hold a JSON list of ServerResponse items"
    return [item["server"] for item in items if isinstance(item, dict)]


def _outcome(server: dict[str, Any]) -> str:
    try:
        launch = render(server, LaunchOptions(alias="x"))
    except McpsyncError as error:
        return f"error:{type(error).__name__}"
    return f"ok:{launch.registry_type}"


def test_every_entry_renders_or_fails_cleanly() -> None:
    servers = _servers()
    outcomes = Counter(_outcome(server) for server in servers)
    rendered = sum(n for outcome, n in outcomes.items() if outcome.startswith("ok:"))
    print(f"\ncorpus: {len(servers)} entries, {rendered} rendered")
    for outcome, n in sorted(outcomes.items()):
        print(f"  {outcome:<22} {n}")
    assert servers
    assert rendered / len(servers) >= RENDER_FLOOR, outcomes


def test_every_package_and_remote_renders_or_fails_cleanly() -> None:
    # The default choice exercises one option per entry; render each one on its own too.
    outcomes: Counter[str] = Counter()
    for server in _servers():
        for key in ("packages", "remotes"):
            entries = server.get(key)
            for entry in entries if isinstance(entries, list) else []:
                alone = {**server, "packages": [], "remotes": [], key: [entry]}
                outcomes[_outcome(alone)] += 1
    print(f"\ncorpus options: {sum(outcomes.values())}")
    for outcome, n in sorted(outcomes.items()):
        print(f"  {outcome:<22} {n}")
    rendered = sum(n for outcome, n in outcomes.items() if outcome.startswith("ok:"))
    assert rendered / sum(outcomes.values()) >= RENDER_FLOOR, outcomes
