"""The lock step for trees: after `resolve` pinned every server, give each one that wants a
tree its [server.tree] record and tree file.

A record is kept, with no npm/uv call, while the entry runs the same thing (name, version,
launch) and its file on disk still hashes to the recorded digest; otherwise the tree is
resolved again (a tree file edited by hand is repaired this way). Files are returned, not
written: `lock` writes them before mcp.lock, and removes the files of trees it dropped.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from mcpsync.artifacts.model import StoreSettings, wanted
from mcpsync.errors import McpsyncError
from mcpsync.lock.lockfile import Lock, LockedServer, same_run
from mcpsync.lock.tree import TreeRecord, backend, digest_of, file_for, kind, tree_problem
from mcpsync.manifest.parse import Manifest


class TreeStep(Struct, frozen=True):
    lock: Lock  # the new lock, every [server.tree] set
    files: Mapping[str, bytes]  # relative path -> bytes to write (new or changed trees)
    removed: tuple[str, ...]  # relative paths of tree files no entry records any more
    repaired: Mapping[str, str]  # alias -> what was wrong with its old tree file


# npm and uv processes at once: each is mostly waiting on the registry and on its own start-up.
CONCURRENCY = 4


def lock_trees(
    manifest: Manifest, new: Lock, old: Lock | None, settings: StoreSettings
) -> TreeStep:
    from mcpsync.pool import concurrently

    root = settings.root
    plan: list[tuple[LockedServer, TreeRecord | str | None]] = []
    todo: list[LockedServer] = []  # the entries whose tree is resolved (again)
    for entry in new.servers:
        if kind(entry.launch) is None or not manifest.wants_tree(entry.alias):
            plan.append((entry, None))
            continue
        kept = _kept(root, entry, old.get(entry.alias) if old is not None else None)
        plan.append((entry, kept))
        if not isinstance(kept, TreeRecord):
            todo.append(entry)
    trees = concurrently(
        todo,
        lambda e, _abort: _resolve(manifest, e, kind(e.launch) or "", settings),
        concurrency=CONCURRENCY,
        name="mcpsync-tree",
    )
    resolved = {e.alias: data for e, data in zip(todo, trees, strict=True)}
    servers: list[LockedServer] = []
    files: dict[str, bytes] = {}
    for entry, kept in plan:
        if isinstance(kept, TreeRecord) or entry.alias not in resolved:
            servers.append(replace(entry, tree=kept if isinstance(kept, TreeRecord) else None))
            continue
        tree_kind, data = kind(entry.launch) or "", resolved[entry.alias]
        path = file_for(entry.alias, tree_kind)
        files[path] = data
        count = len(backend(tree_kind).packages(data))
        servers.append(replace(entry, tree=TreeRecord(path, digest_of(data), count)))
    repaired = {e.alias: kept for e, kept in plan if isinstance(kept, str)}
    recorded = {s.tree.file for s in servers if s.tree is not None}
    was = {s.tree.file for s in (old.servers if old else ()) if s.tree is not None}
    gone = tuple(sorted(f for f in was - recorded if (root / f).is_file()))
    return TreeStep(Lock(tuple(servers)), files, gone, repaired)


def _kept(root: Path, entry: LockedServer, before: LockedServer | None) -> TreeRecord | str | None:
    """The old record if it still holds; else why not when its file is the problem (a repair
    to report), else None (a new pin or launch: simply locked afresh)."""
    if before is None or before.tree is None or not same_run(before, entry):
        return None
    problem = tree_problem(root, entry.alias, entry.launch, before.tree)
    return problem if isinstance(problem, str) else before.tree


def _resolve(
    manifest: Manifest, entry: LockedServer, tree_kind: str, settings: StoreSettings
) -> bytes:
    launch = entry.launch
    assert launch.identifier is not None and launch.package_version is not None
    store = wanted(launch)
    if store is not None and store.store:  # the launch's own --registry / --index-url
        variable = {"npm": "npm_config_registry", "pypi": "UV_DEFAULT_INDEX"}[tree_kind]
        settings = replace(settings, env={**settings.env, variable: store.store})
    try:
        with tempfile.TemporaryDirectory(prefix="mcpsync-tree-") as work:
            return backend(tree_kind).resolve(
                launch.identifier,
                launch.package_version,
                settings,
                workdir=Path(work),
                python=manifest.python,
                platforms=manifest.platforms,
            )
    except McpsyncError as exc:
        exc.message = f"Server '{entry.alias}': {exc.message}"
        raise
