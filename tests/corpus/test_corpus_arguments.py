"""Counts, over real registry entries, the cases issue 15 (block 5) is about: packages whose
version says `latest`, and arguments whose rendering lock warns about (launch.argument_notes).

Skipped unless MCPSYNC_CORPUS names a JSON file holding a list of ServerResponse items, e.g.

    MCPSYNC_CORPUS=/path/to/corpus-sample.json python -m pytest tests/test_corpus_arguments.py -s
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mcpsync.errors import McpsyncError
from mcpsync.launch import LATEST, LaunchOptions, argument_notes, render

CORPUS = os.environ.get("MCPSYNC_CORPUS")

pytestmark = pytest.mark.skipif(not CORPUS, reason="set MCPSYNC_CORPUS to a ServerResponse list")


def _servers() -> list[dict[str, Any]]:
    items = json.loads(Path(str(CORPUS)).read_text(encoding="utf-8"))
    assert isinstance(items, list), "MCPSYNC_CORPUS must hold a JSON list of ServerResponse items"
    return [item["server"] for item in items if isinstance(item, dict)]


def test_latest_packages_and_ambiguous_arguments_are_counted() -> None:
    counts: Counter[str] = Counter()
    for server in _servers():
        packages = server.get("packages")
        for pkg in packages if isinstance(packages, list) else []:
            if isinstance(pkg, dict) and pkg.get("version") == LATEST:
                counts[f"package says latest ({pkg.get('registryType')})"] += 1
        try:
            launch = render(server, LaunchOptions(alias="x"))
            notes = argument_notes(server, LaunchOptions(alias="x"))
        except McpsyncError:
            counts["does not render"] += 1
            continue
        # never the server's version in place of `latest`: it stays `latest` until lock pins it
        counts["rendered"] += 1
        if launch.package_version == LATEST:  # an OCI `:latest` tag is a real one
            counts[f"rendered as latest ({launch.registry_type})"] += 1
        for note in notes:
            counts["argument: " + note.split(" (", 1)[0].split(";")[0][:40]] += 1
    print("\n" + "\n".join(f"  {n:>5}  {what}" for what, n in sorted(counts.items())))
    assert counts["rendered"] > 0
