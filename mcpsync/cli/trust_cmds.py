"""`probe`, `verify` and `export`: pin what a server shows, check the pins, share them.

The MCP SDK (the `mcpsync[mcp]` extra) is needed by `probe` and `verify --surface` only, and
imported by mcpsync.trust.probe when they run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from msgspec.structs import replace

from mcpsync.cli.context import Context
from mcpsync.cli.meta import category, examples
from mcpsync.cli.output import emit_json, json_option, note, say
from mcpsync.errors import InputError

if TYPE_CHECKING:
    from mcpsync.lock.lockfile import Lock, LockedServer
    from mcpsync.lock.surface import Surface
    from mcpsync.project import Project
    from mcpsync.trust.probe import Outcome

timeout_option = click.option(
    "--probe-timeout",
    "probe_timeout",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds each server gets to start and answer initialize + tools/list.",
)


def _load(ctx: Context, nothing: str) -> tuple[Project, Lock]:
    """The project and its lock, refused (2) if the lock was edited by hand: probe would start
    what the edit put in the launch, verify and export would vouch for it. `nothing`: what was
    not done, for the message."""
    from mcpsync import project
    from mcpsync.lock import integrity

    proj = project.load(ctx.root, registry_override=ctx.registry_override, timeout=ctx.timeout)
    found = proj.read_lock()
    if found is None:
        raise InputError(f"{proj.lock_path} not found", hint="run `mcpsync lock` first")
    integrity.refuse_tampered(found, nothing=nothing, root=proj.root)
    return proj, found


def _given(ctx: Context, path: Path | None) -> Path | None:
    """A FILE from the command line, relative to where the run started (`-C DIR`, as the MCP
    server runs every command), not to this process's directory."""
    return None if path is None else ctx.start / path


def _pick(lock: Lock, aliases: Sequence[str]) -> list[LockedServer]:
    unknown = sorted({a for a in aliases if lock.get(a) is None})
    if unknown:
        from mcpsync.manifest.parse import alias_list

        raise InputError(
            f"no server {', '.join(map(repr, unknown))} in mcp.lock",
            hint=f"servers: {alias_list(s.alias for s in lock.servers)}",
        )
    return [s for s in lock.servers if not aliases or s.alias in aliases]


def _probe(proj: Project, servers: list[LockedServer], timeout: float) -> list[Outcome]:
    from mcpsync.tree.launcher import started_here
    from mcpsync.trust.probe import probe_all, require_sdk

    require_sdk("probing servers")
    started = [started_here(s, proj.root) for s in servers]  # a locked tree runs as in clients
    return probe_all(started, root=proj.root, timeout=timeout)


def _failures(outcomes: Sequence[Outcome], as_json: bool) -> int:
    """Report each server that could not be probed; the exit code they call for (0: none)."""
    failed = [o for o in outcomes if o.error]
    if not as_json:
        for outcome in failed:
            note(f"error: {outcome.error}")
    if not failed:
        return 0
    return 2 if any(o.code == 2 for o in failed) else 3


# ---------------------------------------------------------------- probe


@category("write")
@examples("mcpsync probe", "mcpsync probe filesystem", "mcpsync probe --json")
@click.command()
@click.argument("aliases", nargs=-1, metavar="[ALIAS]...")
@timeout_option
@json_option
@click.pass_obj
def probe(ctx: Context, aliases: Sequence[str], probe_timeout: float, as_json: bool) -> int:
    """Start each locked server, list its tools, and pin that surface in mcp.lock.

    The surface hash (mcp-lock/1 §5: RFC 8785 JSON of the tools' name, description and
    inputSchema, sorted by name) and the tools themselves are recorded under the server.
    ${NAME} references in the launch are filled from the environment only.
    """
    proj, lock = _load(ctx, "nothing was started")
    servers = _pick(lock, aliases)
    outcomes = _probe(proj, servers, probe_timeout)
    probed = zip(servers, outcomes, strict=True)  # probe_all answers in the servers' order
    written = _record(proj, {s.alias: (s, o.surface) for s, o in probed if o.surface is not None})
    code = _failures(outcomes, as_json)
    if as_json:
        emit_json({"written": written, "servers": [_outcome_json(o) for o in outcomes]})
    else:
        for o in outcomes:
            if o.surface is not None:
                say(f"{o.alias}  {o.surface.count} tools  {o.surface.hash}  ({o.seconds:.1f}s)")
        note("mcp.lock updated." if written else "mcp.lock unchanged.")
    return code


def _outcome_json(o: Outcome) -> dict[str, Any]:
    if o.surface is None:
        return {"alias": o.alias, "error": o.error}
    return {"alias": o.alias, "hash": o.surface.hash, "tools": o.surface.count}


def _record(proj: Project, probed: dict[str, tuple[LockedServer, Surface]]) -> bool:
    """Write the new surfaces into mcp.lock, read again under the project lock: a server whose
    launch changed meanwhile (a `lock` ran) keeps what it has."""
    from mcpsync.fsutil import atomic_write, project_lock, read_text
    from mcpsync.lock import lockfile
    from mcpsync.lock.lockfile import same_run

    if not probed:
        return False
    with project_lock(proj.root):
        old_text = read_text(proj.lock_path, conflicts=True)
        if old_text is None:
            return False
        lock = lockfile.loads(old_text, proj.lock_path)
        servers = []
        for server in lock.servers:
            found = probed.get(server.alias)
            if found is not None and same_run(found[0], server):
                server = replace(server, surface=found[1])
            servers.append(server)
        text = lockfile.dumps(replace(lock, servers=tuple(servers)))
        if text == old_text:
            return False
        atomic_write(proj.lock_path, text)
        return True


# ---------------------------------------------------------------- verify


@category("read")
@examples(
    "mcpsync verify",
    "mcpsync verify --surface",
    "mcpsync verify --json",
    "mcpsync verify --mcp-lock mcp-lock.json",
)
@click.command()
@click.option("--surface", is_flag=True, help="Also probe each server and diff its tools.")
@click.option(
    "--mcp-lock",
    "mcp_lock",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Enforce an mcp-lock/1 file (the draft's §9 Enforcer) against this project.",
)
@click.option(
    "--lock-digest",
    metavar="DIGEST",
    help="With --mcp-lock: the whole-lock digest (§8.3) the file must have.",
)
@click.option(
    "--signature",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --mcp-lock: its detached signature envelope (§8.4, mcp-lock.sig).",
)
@click.option(
    "--public-key",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --signature: the ed25519 public key (PEM, or base64 SPKI DER).",
)
@click.option(
    "--artifacts/--no-artifacts",
    default=None,
    help="Re-check the recorded artifact digests at their stores (default: as `lock` decides).",
)
@timeout_option
@json_option
@click.pass_obj
def verify(
    ctx: Context,
    surface: bool,
    mcp_lock: Path | None,
    lock_digest: str | None,
    signature: Path | None,
    public_key: Path | None,
    artifacts: bool | None,
    probe_timeout: float,
    as_json: bool,
) -> int:
    """Check that what mcp.lock pins still holds; exit 1 naming each drift. Never writes.

    Each pinned version's server.json must still digest as locked at the registry (a
    re-published version does not), and pinned artifacts must still match. With --surface,
    each server with a pinned surface is started again and its tools are compared: a tool
    added, removed, or whose description or input schema changed is drift, shown as a diff.
    """
    from mcpsync.trust import verify as checks

    if (lock_digest or signature) and mcp_lock is None:
        raise InputError("--lock-digest and --signature need --mcp-lock FILE")
    if (signature is None) != (public_key is None):
        raise InputError("--signature and --public-key go together")
    proj, lock = _load(ctx, "nothing was checked")
    mcp_lock, signature, public_key = (_given(ctx, p) for p in (mcp_lock, signature, public_key))
    drift = checks.registry_drift(lock, proj.open_registry, ctx.registry_override)
    if proj.artifacts_enabled(artifacts):
        drift += checks.artifact_drift(lock, proj.store_settings())
    code, fresh, errors = 0, {}, []  # errors: servers verify --surface could not probe
    if surface:
        pinned = [s for s in lock.servers if s.surface is not None]
        outcomes = _probe(proj, pinned, probe_timeout)
        fresh = {o.alias: o.surface for o in outcomes if o.surface is not None}
        drift += checks.surface_drift(pinned, fresh)
        code = _failures(outcomes, as_json)
        errors = [o.error for o in outcomes if o.error]
    violations = []
    if mcp_lock is not None:
        key = (signature, public_key) if signature and public_key else None
        violations = _enforce(proj, lock, mcp_lock, lock_digest, key, fresh)
    unpinned = [s.alias for s in lock.servers if s.surface is None]
    _verify_report(drift, violations, unpinned if surface else [], errors, as_json)
    return 1 if drift or violations else code


def _enforce(
    proj: Project,
    lock: Lock,
    path: Path,
    lock_digest: str | None,
    signed: tuple[Path, Path] | None,
    fresh: dict[str, Surface],
) -> list[Any]:
    from mcpsync.trust.mcplock import check as mcplock_check
    from mcpsync.trust.mcplock import export as mcplock

    doc, violations = mcplock_check.read(path)
    if violations:
        return violations
    violations = mcplock_check.validate(doc)
    if violations:  # §9 (1): an entry that fails the Reader fails the gate; stop here
        return violations
    surfaces = {s.alias: s.surface for s in lock.servers if s.surface is not None} | fresh
    current = mcplock.cores(proj.manifest, lock)
    violations = mcplock_check.enforce(doc, current, surfaces, lock_digest=lock_digest)
    if signed is not None:
        violations += mcplock_check.signature(doc, *signed)
    return violations


def _verify_report(
    drift: Sequence[Any],
    violations: Sequence[Any],
    unpinned: list[str],
    errors: Sequence[str | None],
    as_json: bool,
) -> None:
    if as_json:
        emit_json(
            {
                "ok": not drift and not violations and not errors,
                "errors": errors,
                "drift": [d.to_json() for d in drift],
                "mcp_lock": [v.to_json() for v in violations],
                "unpinned_surface": unpinned,
            }
        )
        return
    for d in drift:
        note(f"drift: {d.line()}")
        if d.diff:
            note(d.diff)
    for v in violations:
        note(f"mcp-lock: {v.line()}")
    if unpinned:
        note(f"no surface pinned for {', '.join(unpinned)} (run `mcpsync probe`)")
    if not drift and not violations and not errors:
        say("mcp.lock verified: nothing drifted.")


# ---------------------------------------------------------------- export


@category("write")
@examples("mcpsync export --format mcp-lock/1 -o mcp-lock.json")
@click.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mcp-lock/1"]),
    required=True,
    help="The document to write: mcp-lock/1 (ToolPin's draft lockfile spec).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE."
)
@json_option
@click.pass_obj
def export(ctx: Context, fmt: str, output: Path | None, as_json: bool) -> int:
    """Write mcp.lock as an mcp-lock/1 document: one entry per server and client target.

    Offline. resolvedAt/lockedAt are the export time, or SOURCE_DATE_EPOCH when set. With
    -o, the whole-lock digest (§8.3) is reported, for `verify --mcp-lock FILE --lock-digest`.
    """
    from mcpsync.trust.mcplock import export as mcplock

    proj, lock = _load(ctx, "nothing was written")
    output = _given(ctx, output)
    doc = mcplock.document(proj.manifest, lock, mcplock.timestamp())
    text = mcplock.dumps(doc)
    digest = mcplock.whole_lock_digest(doc)
    if output is not None:
        from mcpsync.fsutil import atomic_write

        atomic_write(output, text)
    if as_json:
        emit_json(
            {
                "format": fmt,
                "output": str(output) if output is not None else None,
                "entries": len(doc["entries"]),
                "lock_digest": digest,
                **({} if output is not None else {"document": doc}),
            }
        )
    elif output is None:
        click.echo(text, nl=False)
    else:
        note(f"Wrote {output}: {len(doc['entries'])} entries, whole-lock digest {digest}")
    return 0
