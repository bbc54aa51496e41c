"""import's matching against real registry entries: each latest server's own rendered launch,
written as a client entry, must be matched back to that server (or kept custom with a note),
and never to another server.

Skipped unless MCPSYNC_CORPUS names a JSON file holding a list of ServerResponse items, e.g.

    MCPSYNC_CORPUS=/path/to/corpus-sample.json python -m pytest tests/test_corpus_import.py -s
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mcpsync.errors import McpsyncError
from mcpsync.importing.match import match_entries
from mcpsync.importing.read import Entry
from mcpsync.launch import LaunchOptions, render
from mcpsync.registry.snapshot import SnapshotRegistry

CORPUS = os.environ.get("MCPSYNC_CORPUS")
MATCH_FLOOR = 0.90  # of the latest servers that render, matched back by their own launch

pytestmark = pytest.mark.skipif(not CORPUS, reason="set MCPSYNC_CORPUS to a ServerResponse list")


def _entry(name: str, server: dict[str, Any]) -> Entry | None:
    try:
        launch = render(server, LaunchOptions(alias="x"))
    except McpsyncError:
        return None
    if launch.url and not launch.command:
        return Entry(
            "corpus",
            "claude-code",
            name,
            launch.transport,
            url=launch.url,
            headers=dict(launch.headers),
        )
    if not launch.command:
        return None  # an mcpb bundle: nothing a client config could hold
    return Entry(
        "corpus",
        "claude-code",
        name,
        command=launch.command,
        args=list(launch.args),
        env=dict(launch.env),
    )


def test_each_latest_server_is_matched_back_by_its_own_launch(tmp_path: Path) -> None:
    shutil.copy(str(CORPUS), tmp_path / "corpus.json")
    registry = SnapshotRegistry(tmp_path, "file:corpus")
    items = json.loads(Path(str(CORPUS)).read_text(encoding="utf-8"))
    latest = {
        i["server"]["name"]: i["server"]
        for i in items
        if i.get("_meta", {}).get("io.modelcontextprotocol.registry/official", {}).get("isLatest")
    }
    outcomes: Counter[str] = Counter()
    notes: Counter[str] = Counter()
    for name, server in sorted(latest.items()):
        entry = _entry(name, server)
        if entry is None:
            continue
        match = match_entries([entry], registry).get(0)
        if match is None:
            outcomes["custom"] += 1
            notes.update(entry.notes)
        else:
            outcomes["same" if match.name == name else f"other:{name}->{match.name}"] += 1
    total = sum(outcomes.values())
    print(f"\ncorpus: {len(latest)} latest servers, {total} with a launch: {dict(outcomes)}")
    print(f"  why custom: {dict(notes)}")
    assert not [o for o in outcomes if o.startswith("other:")], outcomes
    assert outcomes["same"] / total >= MATCH_FLOOR, (outcomes, notes)
