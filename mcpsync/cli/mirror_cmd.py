"""`mcpsync mirror DIR`: write a file: snapshot of what mcp.toml needs from the registry."""

from __future__ import annotations

from pathlib import Path

import click

from mcpsync.cli.context import Context
from mcpsync.cli.meta import category, examples
from mcpsync.cli.output import emit_json, json_option, note


@category("write")
@examples("mcpsync mirror vendor/mcp-registry", "mcpsync --registry file:vendor/mcp-registry lock")
@click.command()
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--all-versions", is_flag=True, help="Mirror every version, not only those mcp.toml allows."
)
@json_option
@click.pass_obj
def mirror(ctx: Context, directory: Path, all_versions: bool, as_json: bool) -> int:
    """Write DIR/servers.json: a file: registry snapshot of the servers mcp.toml names.

    Per server: every version its constraint allows, the version mcp.lock pins and the one
    the registry marks latest, exactly as the registry answered. Lock against it with
    `--registry file:DIR` (or `[registry] url = "file:DIR"`) where there is no network.
    """
    from mcpsync import project
    from mcpsync.fsutil import atomic_write, read_text
    from mcpsync.resolve import mirror as mirror_mod

    proj = project.load(ctx.root, registry_override=ctx.registry_override, timeout=ctx.timeout)
    wants = mirror_mod.wanted(proj.manifest, proj.read_lock(), all_versions=all_versions)
    found = {}
    if wants:
        registry = proj.registry_opener()()
        try:
            found = registry.versions_many(sorted(wants))
        finally:
            registry.close()
    items, report = mirror_mod.mirror_items(found, wants)
    target = mirror_mod.target_file(ctx.start / directory)  # an absolute DIR replaces start
    text = mirror_mod.dumps(items)
    changed = read_text(target, conflicts=True) != text  # an unchanged mirror stays
    if changed:
        atomic_write(target, text)
    if as_json:
        rows = [
            {"name": r.name, "versions": list(r.versions), "available": r.available} for r in report
        ]
        emit_json({"path": str(target), "written": changed, "servers": rows})
        return 0
    for r in report:
        note(f"Mirrored {r.name}: {len(r.versions)} of {r.available} version(s)")
    done = "Wrote" if changed else "Unchanged:"
    note(f"{done} {target} ({len(items)} entries) from {proj.registry_url}")
    return 0
