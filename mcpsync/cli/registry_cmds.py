"""`search` and `show`: look things up in the registry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from mcpsync.cli.context import Context
from mcpsync.cli.meta import category, examples
from mcpsync.cli.output import emit_json, json_option, note, say

if TYPE_CHECKING:
    from pathlib import Path

    from mcpsync.registry.base import Registry, ServerEntry
    from mcpsync.registry.ranking import SearchResult

SEARCH_MAX = 100  # the registry's own page limit; more is a query to refine, not to page through


def _open(ctx: Context) -> Registry:
    from mcpsync import project
    from mcpsync.errors import InputError
    from mcpsync.manifest import parse as manifest
    from mcpsync.registry import open_registry

    found = None
    root = ctx.found_root  # a project's registry if there is one; none is needed
    try:
        found = manifest.load(root / project.MANIFEST) if root is not None else None
    except InputError:
        found = None  # a broken mcp.toml should not stop a registry lookup
    url = project.registry_url(ctx.registry_override, found)
    return open_registry(url, base_dir=root or ctx.start, timeout=ctx.timeout)


@category("read")
@examples("mcpsync search filesystem", "mcpsync search github --limit 5 --json")
@click.command()
@click.argument("text")
@click.option(
    "--limit",
    type=click.IntRange(1, SEARCH_MAX),
    default=30,
    show_default=True,
    help=f"Show at most this many servers (up to {SEARCH_MAX}).",
)
@json_option
@click.pass_obj
def search(ctx: Context, text: str, limit: int, as_json: bool) -> int:
    """Find servers by name, title or description.

    Latest versions. Exact and prefix name matches rank first, then substrings of the name,
    then titles and descriptions."""
    from mcpsync.registry import ranking

    registry = _open(ctx)
    try:
        result = ranking.search(registry, text, limit)
    finally:
        registry.close()
    truncated = len(result.matches) > limit
    rows = [{**_summary(e), "matched": how} for e, how in result.matches[:limit]]
    if as_json:
        emit_json({"registry": registry.url, "servers": rows, "truncated": truncated})
    elif not rows:
        say(f"No server in {registry.url} has '{text}' in its name, title or description.")
    else:
        width = max(len(r["name"]) for r in rows)
        for row in rows:
            say(f"{row['name']:<{width}}  {row['version']:<12}  {row['description']}")
    if not as_json:
        _search_notes(result, text, limit, truncated)
    return 0


def _search_notes(result: SearchResult, text: str, limit: int, truncated: bool) -> None:
    """Say on stderr what the ranking could not see and which rows matched by description."""
    from mcpsync.registry import ranking

    if result.name_bound_hit:
        note(f"Ranked the first {ranking.SCAN_MAX} name matches of more; refine TEXT.")
    if result.by_text and result.listed:
        note(
            f"{result.by_text} more matched in the title or description of the first "
            f"{result.listed} servers the registry listed; the registry's search covers names only."
        )
    if truncated:
        wider = f" or raise --limit (up to {SEARCH_MAX})" if limit < SEARCH_MAX else ""
        note(f"Showing the first {limit} matches; there are more. Refine TEXT{wider}.")


@category("read")
@examples("mcpsync show io.github.acme/weather", "mcpsync show io.github.acme/weather@1.2.0")
@click.command()
@click.argument("spec", metavar="NAME[@VERSION]")
@json_option
@click.pass_obj
def show(ctx: Context, spec: str, as_json: bool) -> int:
    """Show a server's versions, or one version's packages and remotes with the environment
    variables, arguments and headers each takes."""
    from mcpsync.cli import server_inputs

    name, _, version = spec.partition("@")
    if "/" not in name:  # no registry name lacks one: an alias from mcp.toml
        name, version = _aliased(ctx, name, version)
    registry = _open(ctx)
    try:
        entries = _versions(registry, name)
    finally:
        registry.close()
    entry = _pick(entries, version, name, registry.url)
    data = {
        **_summary(entry),
        "versions": _newest_first(entries),
        "latest": next((e.version for e in entries if e.is_latest), None),
        "packages": entry.server.get("packages") or [],
        "remotes": entry.server.get("remotes") or [],
        "inputs": server_inputs.describe(entry.server),
    }
    if as_json:
        emit_json(data)
    else:
        _print_show(data)
    return 0


def _aliased(ctx: Context, alias: str, version: str) -> tuple[str, str]:
    """The registry name (and, unless `version` is given, the pin in mcp.lock) of the server
    that mcp.toml calls `alias`."""
    from mcpsync import project
    from mcpsync.errors import InputError
    from mcpsync.manifest import parse as manifest

    root = ctx.found_root
    toml = root / project.MANIFEST if root is not None else None
    servers = manifest.load(toml).servers if toml is not None else {}
    spec = servers.get(alias)
    if root is None or spec is None:
        raise InputError(
            f"'{alias}' is neither a registry name (those hold a '/') nor an alias in "
            + (str(toml) if toml is not None else "an mcp.toml (none found)"),
            hint=(manifest.alias_hint([alias], servers) + "; " if servers else "")
            + f"`mcpsync search {alias}` finds registry names",
        )
    if spec.name is None:
        raise InputError(
            f"'{alias}' is a custom server in {toml}, not a registry server",
            hint="`mcpsync list` shows how it is launched",
        )
    pinned = "" if version else _pin(root / project.LOCKFILE, alias, spec.name)
    note(f"{alias} is {spec.name}" + (f", locked at {pinned}" if pinned else ""))
    return spec.name, version or pinned


def _pin(path: Path, alias: str, name: str) -> str:
    """The version mcp.lock pins for `alias` as `name`, or "" (no lock, no pin, unreadable)."""
    from mcpsync.errors import InputError
    from mcpsync.lock import lockfile

    try:
        locked = lockfile.read(path)
    except InputError:
        return ""  # a broken lock costs the pin, not the lookup
    entry = locked.get(alias) if locked is not None else None
    return entry.version or "" if entry is not None and entry.name == name else ""


def _versions(registry: Registry, name: str) -> list[ServerEntry]:
    """Every version of `name`; an unknown name fails with the close names the registry has."""
    from mcpsync.errors import NotFound
    from mcpsync.suggest import did_you_mean, registry_names

    try:
        return registry.versions(name)
    except NotFound as missing:
        if missing.server is None or missing.hint is not None:
            raise
        close = did_you_mean([name], registry_names(registry, name))
        missing.hint = f"{close}`mcpsync search TEXT` lists the names that contain TEXT"
        raise


def _newest_first(entries: list[ServerEntry]) -> list[str]:
    """Versions by the registry's order, highest first (the API lists them by publish time);
    versions with no place in the order ("auto") follow, as listed."""
    from mcpsync.versions import version_key

    names = [e.version for e in entries]
    ordered = [v for v in names if version_key(v) is not None]
    ordered.sort(key=lambda v: version_key(v) or (), reverse=True)
    return ordered + [v for v in names if version_key(v) is None]


def _pick(entries: list[ServerEntry], version: str, name: str, url: str) -> ServerEntry:
    """The version asked for, from the list already fetched (it holds every live version, as
    a second request for the one version would): none or "latest" -> the flagged one."""
    from mcpsync.registry import version_not_found

    if not version or version == "latest":
        return next((e for e in entries if e.is_latest), entries[0])
    found = next((e for e in entries if e.version == version), None)
    if found is None:
        raise version_not_found(name, version, url, entries)
    return found


def _summary(entry: ServerEntry) -> dict[str, Any]:
    description = entry.server.get("description")
    return {
        "name": entry.name,
        "version": entry.version,
        "status": entry.status,
        "description": description if isinstance(description, str) else "",
    }


def _print_show(data: dict[str, Any]) -> None:
    from mcpsync.cli import server_inputs

    say(f"{data['name']} {data['version']} ({data['status']})")
    if data["description"]:
        say(f"  {data['description']}")
    say(f"  versions: {', '.join(data['versions'])}  (latest: {data['latest']})")
    several = len(data["inputs"]) > 1  # say which one lock picks only when there is a choice
    for entry in data["inputs"]:
        if entry["kind"] == "package":
            words = [entry["registry_type"], entry["identifier"], entry["version"]]
            shown = " ".join(str(w) for w in words if w)
            head = f"  package: {shown} ({entry['transport'] or '?'})"
        else:
            head = f"  remote: {entry['transport']} {entry['url']}"
        say(head + ("  [default]" if several and entry["default"] else ""))
        for line in server_inputs.lines(entry):
            say(line)
