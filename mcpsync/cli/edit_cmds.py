"""`init`, `add`, `remove`: edit mcp.toml (comments kept), then lock."""

from __future__ import annotations

from collections.abc import Callable

import click

from mcpsync.cli.context import Context
from mcpsync.cli.meta import category, examples
from mcpsync.cli.output import emit_json, json_option, say
from mcpsync.errors import InputError


@category("write")
@examples("mcpsync init")
@click.command()
@click.option("--force", is_flag=True, help="Overwrite an existing mcp.toml.")
@json_option
@click.pass_obj
def init(ctx: Context, force: bool, as_json: bool) -> int:
    """Write a commented mcp.toml in the project directory."""
    from mcpsync.fsutil import atomic_write
    from mcpsync.manifest_edit import INIT_TEMPLATE

    path = ctx.manifest_path
    if path.exists() and not force:
        raise InputError(f"{path} already exists", hint="edit it, or pass --force to start over")
    atomic_write(path, INIT_TEMPLATE)
    if as_json:
        emit_json({"written": str(path)})
    else:
        say(f"Wrote {path}. Add a server with `mcpsync add NAME`.")
    return 0


@category("write")
@examples(
    "mcpsync add io.github.modelcontextprotocol/server-filesystem",
    "mcpsync add io.github.acme/weather@^1.2 --as weather",
)
@click.command()
@click.argument("spec", metavar="NAME[@CONSTRAINT]")
@click.option("--as", "alias", metavar="ALIAS", help="The server's alias (default: from NAME).")
@json_option
@click.pass_obj
def add(ctx: Context, spec: str, alias: str | None, as_json: bool) -> int:
    """Declare a registry server in mcp.toml, then lock.

    If locking fails, mcp.toml and mcp.lock are left as they were.
    """
    from mcpsync import manifest_edit

    name, _, version = spec.partition("@")
    alias = alias or manifest_edit.default_alias(name)
    return _edit_then_lock(
        ctx,
        lambda text: manifest_edit.add_server(
            text, ctx.manifest_path, alias, name, version or None
        ),
        [alias],
        as_json,
    )


@category("write")
@examples("mcpsync remove filesystem")
@click.command()
@click.argument("alias")
@json_option
@click.pass_obj
def remove(ctx: Context, alias: str, as_json: bool) -> int:
    """Remove a server from mcp.toml (and from target subsets), then lock."""
    from mcpsync import manifest_edit

    return _edit_then_lock(
        ctx, lambda text: manifest_edit.remove_server(text, ctx.manifest_path, alias), [], as_json
    )


def _edit_then_lock(
    ctx: Context, edit: Callable[[str], str], upgrade: list[str], as_json: bool
) -> int:
    """Edit mcp.toml in memory, lock against the edited manifest, write mcp.toml only then."""
    from mcpsync import manifest, project
    from mcpsync.cli.lock_cmd import run_lock
    from mcpsync.fsutil import atomic_write, read_text

    path = ctx.manifest_path
    text = read_text(path)
    if text is None:
        raise InputError(f"{path} not found", hint="run `mcpsync init` first")
    new_text = edit(text)
    edited = manifest.parse(new_text, path)
    proj = project.Project(
        ctx.root, edited, project.registry_url(ctx.registry_override, edited), ctx.timeout
    )

    def write_manifest() -> None:
        if new_text != text:
            atomic_write(path, new_text)

    return run_lock(proj, upgrade_package=upgrade, as_json=as_json, before_write=write_manifest)
