"""Resolution checked against the registry's own answers, on real registry entries.

Skipped unless MCPSYNC_CORPUS names a JSON file holding a list of ServerResponse items
({"server": {...}, "_meta": {...}}). The corpus is served by the registry stand-in over real
HTTP and resolved by mcpsync's resolver; for every server with several versions:

- `version = "latest"` must pin exactly the version the registry flags `isLatest`;
- `version = "*"` must pin the highest stable version, computed here by a small reference
  implementation (semver 2.0 precedence, semver above PEP 440, pip's prerelease fallback),
  independent of mcpsync.versions.

    MCPSYNC_CORPUS=/path/to/corpus-sample.json python -m pytest tests/test_corpus_resolve.py -s
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from registry_stub import OFFICIAL, RegistryStub

from mcpsync.launch import Launch
from mcpsync.lock import integrity
from mcpsync.manifest.parse import parse
from mcpsync.registry import open_registry
from mcpsync.resolve import resolver as resolve

CORPUS = os.environ.get("MCPSYNC_CORPUS")

pytestmark = pytest.mark.skipif(not CORPUS, reason="set MCPSYNC_CORPUS to a ServerResponse list")

# --- a reference order, written from the specs, not from mcpsync.versions --------------------

_SEMVER = re.compile(
    r"v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
)


def _semver(v: str) -> tuple[tuple[int, int, int], tuple[tuple[int, int, str], ...] | None] | None:
    m = _SEMVER.fullmatch(v)
    if m is None:
        return None
    pre = m.group(4)
    if pre is not None and any(
        p.isdigit() and len(p) > 1 and p.startswith("0") for p in pre.split(".")
    ):
        return None  # leading zeros in a numeric identifier: not semver
    ids = None
    if pre is not None:
        # Rule 11: numeric identifiers compare as numbers and below alphanumeric ones, which
        # compare in ASCII order; a shorter list of equal identifiers is lower.
        ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    release = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return release, ids


def reference_key(v: str) -> tuple[Any, ...] | None:
    """Semver (by precedence) above every PEP 440 version (by PEP 440); None: no order."""
    sem = _semver(v)
    if sem is not None:
        release, pre = sem
        return (1, release, 0 if pre is not None else 1, pre or ())
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(v))
    except InvalidVersion:
        return None


def reference_stable(v: str) -> bool:
    sem = _semver(v)
    if sem is not None:
        return sem[1] is None
    from packaging.version import Version

    return not Version(v).is_prerelease


def reference_star(versions: list[str]) -> str | None:
    """Highest stable version; if none is stable, the highest prerelease (pip's fallback).
    Among equal precedence ("1.0.0" and "1.0.0+b"), the shortest, then first, spelling."""
    ordered = [v for v in versions if reference_key(v) is not None]
    pool = [v for v in ordered if reference_stable(v)] or ordered
    if not pool:
        return None
    best = max(reference_key(v) for v in pool)  # type: ignore[type-var]
    return min((v for v in pool if reference_key(v) == best), key=lambda v: (len(v), v))


def test_reference_order_on_the_traps() -> None:
    order = ["1.2.3-0", "1.2.3-alpha.99", "1.2.3-alpha.104", "1.2.3", "v1.2.4", "2.0.0-rc.1"]
    assert sorted(order, key=reference_key) == order  # type: ignore[arg-type,return-value]
    assert reference_star(order) == "v1.2.4"
    assert reference_star(["0.7.10.dev1", "0.7.9"]) == "0.7.9"
    assert reference_star(["2.1", "1.0.0"]) == "1.0.0"  # semver beats non-semver
    assert reference_star(["3.0.0-beta", "2.1"]) == "2.1"  # stable first
    assert reference_star(["3.0.0-beta", "3.0.0-alpha"]) == "3.0.0-beta"  # fallback
    assert reference_star(["1.0.0+b", "1.0.0"]) == "1.0.0"
    assert reference_star(["auto"]) is None


# --- the corpus ------------------------------------------------------------------------------


def _items() -> list[dict[str, Any]]:
    data = json.loads(Path(str(CORPUS)).read_text(encoding="utf-8"))
    items = data.get("servers") if isinstance(data, dict) else data
    assert isinstance(items, list), "MCPSYNC_CORPUS must hold a JSON list of ServerResponse items"
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("server"), dict)]


def _live(item: dict[str, Any]) -> bool:
    return item.get("_meta", {}).get(OFFICIAL, {}).get("status") != "deleted"


def _several_versions(items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by_name: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        if _live(item):
            by_name[item["server"]["name"]].append(item)
    return {name: found for name, found in sorted(by_name.items()) if len(found) > 1}


def test_latest_and_star_pin_what_the_registry_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = _items()
    servers = _several_versions(items)
    assert servers, "the corpus has no server with several versions"
    aliases: dict[str, tuple[str, str]] = {}  # alias -> (name, what it checks)
    lines: list[str] = []
    for n, name in enumerate(servers):
        for kind, constraint in (("latest", "latest"), ("star", "*")):
            alias = f"{kind}-{n:04d}"
            aliases[alias] = (name, kind)
            lines.append(f"[servers.{alias}]\nname = {json.dumps(name)}\n")
            lines.append(f"version = {json.dumps(constraint)}\n\n")
    manifest = parse("".join(lines), tmp_path / "mcp.toml")

    # Launch rendering is not under test here (many real entries need inputs to launch).
    # (resolve renders to look up artifacts, then builds its entries with integrity's
    # builders: the renderer is patched in both)
    def stdio(server: object, opts: object, **_: object) -> Launch:
        return Launch(transport="stdio")

    monkeypatch.setattr(integrity, "render", stdio)
    monkeypatch.setattr(resolve, "render", stdio)

    with RegistryStub(items) as stub:
        lock = resolve.resolve(
            manifest,
            None,
            stub.url,
            lambda: open_registry(stub.url, base_dir=tmp_path, timeout=10),
        )
        requests = stub.request_count
    pinned = {s.alias: s.version for s in lock.servers}

    latest_wrong, star_wrong, star_checked, star_unordered = [], [], 0, 0
    for alias, (name, kind) in aliases.items():
        versions = [i["server"]["version"] for i in servers[name]]
        if kind == "latest":
            flagged = [
                i["server"]["version"] for i in servers[name] if i["_meta"][OFFICIAL]["isLatest"]
            ]
            assert len(flagged) == 1, f"{name}: isLatest on {flagged}"
            if pinned[alias] != flagged[0]:
                latest_wrong.append(f"{name}: latest pinned {pinned[alias]}, flag {flagged[0]}")
            continue
        expected = reference_star(versions)
        if expected is None:
            star_unordered += 1
            continue
        star_checked += 1
        if pinned[alias] != expected:
            star_wrong.append(
                f"{name}: * pinned {pinned[alias]}, expected {expected} of {versions}"
            )

    pre_only = sum(
        1
        for found in servers.values()
        if not any(
            reference_stable(i["server"]["version"])
            for i in found
            if reference_key(i["server"]["version"]) is not None
        )
    )
    print(
        f"\ncorpus: {len(items)} versions of {len({i['server']['name'] for i in items})} "
        f"servers; {len(servers)} with several versions; {requests} HTTP requests\n"
        f"latest: {len(servers) - len(latest_wrong)}/{len(servers)} pin the isLatest version\n"
        f"*: {star_checked - len(star_wrong)}/{star_checked} pin the highest stable version "
        f"({star_unordered} without an orderable version, {pre_only} prerelease-only)"
    )
    assert requests == len(servers)  # one versions request per server, both aliases share it
    assert not latest_wrong, "\n".join(latest_wrong)
    assert not star_wrong, "\n".join(star_wrong)
