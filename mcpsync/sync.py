"""sync: every target's intended files from the lock, then check, diff or write them all.

All or nothing: every target is planned (read, parsed, rendered, verified) before the first
byte is written; if a write fails midway, the files already replaced are put back.

Stamps (a cache, never a source of truth): after a successful write, sync keeps for each file
the digest of the text it wrote and of the inputs that text came from (entries, editor and
renderer source). A later run that finds the same text for the same inputs knows the edit would
give that text back (sync is idempotent), so it skips parsing the file. A missing, corrupt or
stale stamp only costs the parse.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from mcpsync.errors import InputError, McpsyncError
from mcpsync.lockfile import Lock
from mcpsync.manifest import Manifest, TargetSpec
from mcpsync.targets.base import FileChange, SyncContext, text_digest

STAMPS_VERSION = 1


@dataclass
class SyncPlan:
    changes: list[FileChange]
    ctx: SyncContext  # the ledger and stamps as read
    ledger_new: str | None  # None: no shared file touched, leave no ledger behind
    record_new: str | None = None  # mcp.synced.toml; None: nothing to record, none there

    @property
    def changed(self) -> list[FileChange]:
        return [c for c in self.changes if c.changed]

    @property
    def foreign(self) -> list[FileChange]:
        """The changes that take over entries mcpsync did not write."""
        return [c for c in self.changes if c.foreign]

    @property
    def notes(self) -> list[str]:
        exports = [
            f"{c.path}: export {', '.join(c.missing_env)} (this client has no reference syntax)"
            for c in self.changes
            if c.missing_env
        ]
        return exports + [note for c in self.changes for note in c.notes]

    @property
    def stamps_new(self) -> str | None:
        return _stamps_text(self.changes) if self.ctx.stamps_path else None


def select(
    specs: Sequence[TargetSpec], kinds: Sequence[str] = (), scope: str | None = None
) -> list[TargetSpec]:
    """The targets a run is limited to: of one of `kinds` (if any) and of `scope` (if set).
    A kind that mcp.toml does not declare is bad input (a typo would check nothing)."""
    from mcpsync import targets

    declared = {s.kind for s in specs}
    unknown = [k for k in dict.fromkeys(kinds) if k not in declared]
    if unknown:
        raise InputError(
            f"mcp.toml declares no [[targets]] of kind {', '.join(map(repr, unknown))}",
            hint=f"kinds in mcp.toml: {', '.join(sorted(declared)) or 'none'}",
        )
    return [
        s
        for s in specs
        if (not kinds or s.kind in kinds) and (scope is None or targets.scope(s) == scope)
    ]


def plan(
    manifest: Manifest,
    lock: Lock,
    ctx: SyncContext,
    *,
    again: SyncPlan | None = None,
    only: Sequence[TargetSpec] | None = None,
) -> SyncPlan:
    """Every target's changes (`only`: just these targets). `again`: a plan made before the
    shared-files lock was taken; only its targets that touch shared files are planned again
    (under that lock, with the ledger read anew); the others, this project's own files, keep
    their changes."""
    from mcpsync import targets
    from mcpsync.targets.base import label

    specs = manifest.targets if only is None else only
    changes: list[FileChange] = []
    for spec in specs:
        before = [c for c in again.changes if c.target == label(spec)] if again else []
        if before and not any(c.shared for c in before):
            changes += before
            continue
        for change in targets.make(spec).plan(lock.servers, ctx):
            found = ctx.found.pop(ctx.real(change.path), None)
            changes.append(replace(change, foreign=tuple(found)) if found else change)
    _no_file_twice(changes)
    for change in changes:
        if change.shared:
            ctx.ledger.record(change.real, ctx.project_id, change.owned)
    untouched = ctx.ledger.text is None and not ctx.ledger.files
    partial = len(specs) < len(manifest.targets)  # --target / --scope left some out
    record = _record_text(changes, ctx, partial)
    return SyncPlan(changes, ctx, None if untouched else ctx.ledger.dumps(), record)


def _record_text(changes: Sequence[FileChange], ctx: SyncContext, partial: bool) -> str | None:
    """mcp.synced.toml after this run: the names sync owns in each project file it planned
    (a filtered run keeps what it says of the others; a full run drops files no target
    writes any more)."""
    record = ctx.record
    if record is None:
        return None
    files = dict(record.files) if partial else {}
    for change in changes:
        if not change.shared:
            key = record.key(change.path)
            files.pop(key, None)
            if change.owned:
                files[key] = list(change.owned)
    if not files and record.text is None:
        return None
    return record.dumps(files)


def refuse_foreign(the_plan: SyncPlan, root: Path) -> None:
    """Stop before writing when the plan would replace or remove entries mcpsync did not
    write (a hand-written MCP tool in agent.yaml, a server added to .mcp.json by hand)."""
    found = the_plan.foreign
    if not found:
        return
    lines = [f"  {display(c.path, root)}: {f.describe()}" for c in found for f in c.foreign]
    raise InputError(
        "mcpsync did not write these entries, and syncing would replace or remove them; "
        "nothing was written:\n" + "\n".join(lines),
        hint="keep them by declaring them in mcp.toml (`mcpsync add`, `mcpsync import`), or "
        "run `mcpsync sync --adopt` to let mcp.lock replace and remove them "
        "(`mcpsync sync --adopt --diff` shows how)",
    )


def make_context(
    root: Path, manifest_path: Path, home: Path, *, adopt: bool = False
) -> SyncContext:
    """What targets may know about a run of this project: its ledger, record and stamps as
    read. `adopt`: take over entries sync did not write (`sync --adopt`)."""
    import os

    from mcpsync.ownership import Ledger, Record, state_dir

    project_id = os.path.realpath(manifest_path)
    stamps_path = stamps_file(state_dir(home), project_id)
    stamps, stamps_text = load_stamps(stamps_path)
    return SyncContext(
        root=root,
        home=home,
        project_id=project_id,
        ledger=Ledger.load(home),
        stamps=stamps,
        stamps_path=stamps_path,
        stamps_text=stamps_text,
        record=Record.load(root),
        adopt=adopt,
    )


def stamps_file(state: Path, project_id: str) -> Path:
    """This project's stamps, beside the ownership ledger."""
    name = hashlib.sha256(project_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return state / "stamps" / f"{name}.json"


def load_stamps(path: Path) -> tuple[dict[str, tuple[str, str]], str | None]:
    """The stamps kept at `path` and the text read; anything unreadable counts as none."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}, None
    try:
        data = json.loads(text)
        if data.get("version") != STAMPS_VERSION:
            return {}, text
        stamps = {str(k): (str(v[0]), str(v[1])) for k, v in data["files"].items()}
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError):
        return {}, text
    return stamps, text


def _stamps_text(changes: Sequence[FileChange]) -> str | None:
    files = {str(c.real): [text_digest(c.new), c.stamp] for c in changes if c.stamp}
    if not files:
        return None
    return json.dumps({"version": STAMPS_VERSION, "files": dict(sorted(files.items()))}) + "\n"


def _no_file_twice(changes: Sequence[FileChange]) -> None:
    seen: dict[Path, str] = {}
    for change in changes:
        other = seen.setdefault(change.real, change.target)
        if other != change.target:
            raise InputError(
                f"{change.path} is written by two targets ({other} and {change.target})",
                hint="give each target its own file in mcp.toml",
            )


def diff(change: FileChange, root: Path) -> str:
    before, after = diff_names(change.path, root)
    old = (change.old or "").splitlines(keepends=True)
    new = change.new.splitlines(keepends=True)
    lines = difflib.unified_diff(
        old, new, fromfile=before if change.old is not None else "/dev/null", tofile=after
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def diff_names(path: Path, root: Path) -> tuple[str, str]:
    """The diff headers for `path`: git's `a/` and `b/` on the project-relative path, or, for
    a file outside the project, the path as one would type it (`~/.claude.json`) on both,
    never `b//home/...`."""
    try:
        rel = path.absolute().relative_to(root.absolute()).as_posix()
    except ValueError:
        typed = str(path.absolute())
        home = str(Path.home())
        if typed.startswith(home + os.sep):
            typed = "~" + typed[len(home) :]
        return typed, typed
    return f"a/{rel}", f"b/{rel}"


def display(path: Path, root: Path) -> str:
    """`path` relative to the project root when it is under it."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def write(the_plan: SyncPlan) -> list[FileChange]:
    """Write every changed file atomically; on failure restore those already written."""
    from mcpsync.fsutil import atomic_write, refuse_read_only

    ctx = the_plan.ctx
    for change in the_plan.changed:  # before the first byte: a read-only file stops them all
        refuse_read_only(change.path)
    done: list[FileChange] = []
    try:
        for change in the_plan.changed:
            atomic_write(change.path, change.new)
            done.append(change)
        if the_plan.ledger_new is not None and the_plan.ledger_new != ctx.ledger.text:
            atomic_write(ctx.ledger.path, the_plan.ledger_new)
        record = the_plan.record_new
        if ctx.record and record is not None and record != ctx.record.text:
            atomic_write(ctx.record.path, record)
    except Exception:
        _restore(done)
        raise
    stamps = the_plan.stamps_new
    if ctx.stamps_path and stamps is not None and stamps != ctx.stamps_text:
        with contextlib.suppress(McpsyncError):  # a cache: failing to keep it costs only speed
            atomic_write(ctx.stamps_path, stamps)
    return done


def _restore(done: Sequence[FileChange]) -> None:
    from mcpsync.fsutil import atomic_write

    for change in reversed(done):
        with contextlib.suppress(Exception):
            if change.old is None:
                change.real.unlink()
            else:
                atomic_write(change.path, change.old)
