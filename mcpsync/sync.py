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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mcpsync.errors import InputError, McpsyncError
from mcpsync.lockfile import Lock
from mcpsync.manifest import Manifest
from mcpsync.targets.base import FileChange, SyncContext, text_digest

STAMPS_VERSION = 1


@dataclass
class SyncPlan:
    changes: list[FileChange]
    ctx: SyncContext  # the ledger and stamps as read
    ledger_new: str | None  # None: no shared file touched, leave no ledger behind

    @property
    def changed(self) -> list[FileChange]:
        return [c for c in self.changes if c.changed]

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


def plan(
    manifest: Manifest, lock: Lock, ctx: SyncContext, *, again: SyncPlan | None = None
) -> SyncPlan:
    """Every target's changes. `again`: a plan made before the shared-files lock was taken;
    only its targets that touch shared files are planned again (under that lock, with the
    ledger read anew); the others, this project's own files, keep their changes."""
    from mcpsync import targets
    from mcpsync.targets.base import label

    changes: list[FileChange] = []
    for spec in manifest.targets:
        before = [c for c in again.changes if c.target == label(spec)] if again else []
        if before and not any(c.shared for c in before):
            changes += before
        else:
            changes += targets.make(spec).plan(lock.servers, ctx)
    _no_file_twice(changes)
    for change in changes:
        if change.shared:
            ctx.ledger.record(change.real, ctx.project_id, change.owned)
    untouched = ctx.ledger.text is None and not ctx.ledger.files
    return SyncPlan(changes, ctx, None if untouched else ctx.ledger.dumps())


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
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
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
    name = display(change.path, root)
    old = (change.old or "").splitlines(keepends=True)
    new = change.new.splitlines(keepends=True)
    lines = difflib.unified_diff(
        old,
        new,
        fromfile=f"a/{name}" if change.old is not None else "/dev/null",
        tofile=f"b/{name}",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def display(path: Path, root: Path) -> str:
    """`path` relative to the project root when it is under it."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def write(the_plan: SyncPlan) -> list[FileChange]:
    """Write every changed file atomically; on failure restore those already written."""
    from mcpsync.fsutil import atomic_write

    ctx = the_plan.ctx
    done: list[FileChange] = []
    try:
        for change in the_plan.changed:
            atomic_write(change.path, change.new)
            done.append(change)
        if the_plan.ledger_new is not None and the_plan.ledger_new != ctx.ledger.text:
            atomic_write(ctx.ledger.path, the_plan.ledger_new)
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
