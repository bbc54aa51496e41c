"""`mcpsync lock`: resolve mcp.toml into mcp.lock; `--check` says whether it is stale."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from mcpsync.cli.complete import aliases
from mcpsync.cli.context import Context
from mcpsync.cli.meta import category, examples
from mcpsync.cli.output import Progress, emit_json, json_option, note, say, stderr_is_tty
from mcpsync.cli.output import change as report_change

if TYPE_CHECKING:
    from mcpsync.integrity import Triage
    from mcpsync.lockfile import Lock
    from mcpsync.project import Project
    from mcpsync.resolve import Change, LockWarning, Warn


@category("write", read_when=("check",))
@examples("mcpsync lock", "mcpsync lock --check", "mcpsync lock -P filesystem", "mcpsync lock -U")
@click.command()
@click.option("-U", "--upgrade", is_flag=True, help="Re-resolve every server, ignoring pins.")
@click.option(
    "-P",
    "--upgrade-package",
    "upgrade_package",
    multiple=True,
    metavar="ALIAS",
    shell_complete=aliases,
    help="Re-resolve this server only (repeatable).",
)
@click.option("--check", is_flag=True, help="Offline: exit 0 if mcp.lock matches mcp.toml, else 1.")
@click.option(
    "--artifacts/--no-artifacts",
    default=None,
    help="Record (or not) each package's digest from its npm registry, package index, OCI "
    "registry or bundle URL. Default: env MCPSYNC_ARTIFACTS, then [lock] artifacts in "
    "mcp.toml, then on for an http(s) registry and off for a file: snapshot.",
)
@json_option
@click.pass_obj
def lock(
    ctx: Context,
    upgrade: bool,
    upgrade_package: Sequence[str],
    check: bool,
    artifacts: bool | None,
    as_json: bool,
) -> int:
    """Resolve mcp.toml against the registry and pin versions in mcp.lock.

    Existing pins are kept while they still satisfy mcp.toml; a lock that is already
    up to date makes no registry request and is not rewritten. Entries edited by hand are
    rendered again (pins kept), and a merge-conflicted lock is resolved from both sides.
    """
    from mcpsync import project

    proj = project.load(ctx.root, registry_override=ctx.registry_override, timeout=ctx.timeout)
    if check:
        return _check(proj, as_json, proj.artifacts_enabled(artifacts))
    proj.check_aliases(upgrade_package, "-P/--upgrade-package")
    return run_lock(
        proj,
        upgrade=upgrade,
        upgrade_package=upgrade_package,
        as_json=as_json,
        artifacts=artifacts,
    )


def run_lock(
    proj: Project,
    *,
    upgrade: bool = False,
    upgrade_package: Sequence[str] = (),
    as_json: bool,
    before_write: Callable[[], None] | None = None,
    review: Callable[[Lock, Warn], Lock] | None = None,
    artifacts: bool | None = None,
) -> int:
    """Lock a loaded project and report; shared with `add` and `remove`. `review` sees the
    resolved lock before it is written, may amend it (`add` records the constraint it writes)
    and may warn."""
    from mcpsync import lockfile, resolve
    from mcpsync.errors import RegistryError
    from mcpsync.fsutil import atomic_write, project_lock, read_text

    started = time.monotonic()
    warnings: list[LockWarning] = []
    with project_lock(proj.root):
        old_text = read_text(proj.lock_path, conflicts=True)  # read once: parsed, compared
        old = _read_old(proj, old_text)
        progress = Progress(proj.registry_url) if stderr_is_tty() and not as_json else None
        try:
            new = resolve.resolve(
                proj.manifest,
                old.triage.lock,
                proj.registry_url,
                proj.registry_opener(),
                upgrade_all=upgrade,
                upgrade=upgrade_package,
                warn=warnings.append,
                registry_named=proj.registry_named,
                artifacts=proj.artifact_opener(artifacts),
                progress=progress,
                refetch=old.triage.refetch,
            )
        except RegistryError as exc:
            if exc.hint is None:  # say what did not happen, and what to try
                exc.hint = (
                    f"{proj.lock_path.name} was not changed; try again later, or check the "
                    "registry URL (--registry) and the timeout (--timeout SECONDS)"
                )
            raise
        finally:
            if progress is not None:
                progress.clear()
        if review is not None:
            new = review(new, warnings.append)
        text = lockfile.dumps(new)
        if before_write is not None:  # `add`/`remove` write mcp.toml only once resolution worked
            before_write()
        written = old_text != text  # never rewrite an unchanged lock
        if written:
            atomic_write(proj.lock_path, text)
    changes = resolve.changes(old.report, new, old.triage.repaired)
    _report(new, changes, written, time.monotonic() - started, as_json, warnings, old.conflict)
    return 0


@dataclass(frozen=True)
class _Old:
    """The lock on disk, as `lock` plans from it."""

    triage: Triage  # pins to plan from, with entries edited by hand rendered again or refetched
    report: Lock | None  # what the change report compares the new lock with (the pins kept)
    conflict: str | None = None  # the line telling how a merge conflict was resolved


def _read_old(proj: Project, text: str | None) -> _Old:
    from mcpsync import integrity, lockfile, lockmerge

    if text is None:
        return _Old(integrity.triage(lockfile.Lock()), None)
    hunks = lockfile.conflict_hunks(text)
    if not hunks:
        triaged = integrity.triage(lockfile.loads(text, proj.lock_path))
        return _Old(triaged, triaged.lock)
    merged = lockmerge.merge(text, proj.lock_path, proj.manifest, proj.pinned_registry)
    kept = merged.triage.lock
    pins = sum(1 for s in kept.servers if s.version)
    line = (
        f"{proj.lock_path.name} had merge conflict markers ({lockfile.conflict_lines(hunks)}): "
        f"resolved from mcp.toml, keeping {pins} pin{'s' if pins != 1 else ''} from both sides"
    )
    if merged.parsed < 2:
        line += f" ({2 - merged.parsed} side{'s' if merged.parsed == 0 else ''} did not parse)"
    return _Old(merged.triage, kept, line)


def _report(
    new: Lock,
    changes: list[Change],
    written: bool,
    seconds: float,
    as_json: bool,
    warnings: Sequence[LockWarning] = (),
    conflict: str | None = None,
) -> None:
    if as_json:
        emit_json(
            {
                "written": written,
                "merge_conflict": conflict is not None,
                "changes": [_change_json(c) for c in changes],
                "servers": [
                    {"alias": s.alias, "name": s.name, "version": s.version} for s in new.servers
                ],
                "warnings": [w.as_json() for w in warnings],
            }
        )
        return
    if conflict is not None:
        note(conflict)
    note(
        f"Resolved {len(new.servers)} server{'s' if len(new.servers) != 1 else ''} "
        f"in {seconds * 1000:.0f}ms"
    )
    for change in changes:
        report_change(change.render())
    for warning in warnings:
        note(f"warning: {warning.render()}")


def _change_json(change: Change) -> dict[str, str | None]:
    row = {"action": change.action, "alias": change.alias, "old": change.old, "new": change.new}
    if change.detail is not None:  # Repaired: what was wrong with the old entry
        row["detail"] = change.detail
    return row


def _check(proj: Project, as_json: bool, artifacts: bool) -> int:
    from mcpsync import integrity, lockfile
    from mcpsync.fsutil import read_text

    text = read_text(proj.lock_path, conflicts=True)
    hunks = lockfile.conflict_hunks(text) if text is not None else []
    if hunks:  # what `mcpsync lock` repairs is a difference (1), like a stale lock
        return _check_conflict(proj, hunks, as_json)
    lock = None if text is None else lockfile.loads(text, proj.lock_path)
    tampers = integrity.check(lock) if lock is not None else []
    found = integrity.verdict(lock, tampers) if lock is not None and tampers else None
    reasons = lockfile.stale_reasons(proj.manifest, lock, proj.pinned_registry, artifacts=artifacts)
    differs = bool(reasons or found)
    if as_json:
        edited = list(found.block[-1:] if found.old_format else found.lines) if found else []
        emit_json(
            {
                "fresh": not differs,
                "reasons": edited + reasons,
                "tampered": [t.as_json() for t in tampers],
            }
        )
        return 1 if differs else 0
    if found is not None:
        for line in found.block:
            note(line)
    if reasons:
        note("mcp.lock is out of date with mcp.toml:")
        for reason in reasons:
            note(f"  - {reason}")
    if differs:
        todo = found.todo if found is not None else "run `mcpsync lock` to update it"
        note(todo[0].upper() + todo[1:] + ".")
    else:
        say("mcp.lock is up to date.")
    return 1 if differs else 0


def _check_conflict(proj: Project, hunks: list[tuple[int, int]], as_json: bool) -> int:
    from mcpsync.lockfile import MergeConflict

    conflict = MergeConflict(proj.lock_path, hunks)
    if as_json:
        emit_json({"fresh": False, "reasons": [conflict.message], "tampered": []})
    else:
        note(f"{conflict.message}; {conflict.hint}")
    return 1
