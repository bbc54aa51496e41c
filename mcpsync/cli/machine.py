"""`mcpsync help [--machine] [COMMAND...]`: help for people, or JSON for tools and AI agents."""

from __future__ import annotations

from collections.abc import Sequence

import click

from mcpsync.cli.meta import category
from mcpsync.cli.output import emit_json, say
from mcpsync.errors import InputError


@category("admin")
@click.command("help")
@click.option(
    "--machine",
    "--json",
    "machine",
    is_flag=True,
    help="Print one JSON document describing the commands, their flags and examples.",
)
@click.argument("command", nargs=-1, metavar="[COMMAND]...")
@click.pass_context
def help_cmd(ctx: click.Context, machine: bool, command: Sequence[str]) -> int:
    """Show help for mcpsync or one command; --machine prints it as JSON.

    \b
    Examples:
      mcpsync help lock
      mcpsync help --machine
      mcpsync help --machine sync
    """
    root = ctx.find_root()
    if not isinstance(root.command, click.Group):  # help is always registered on the root group
        raise InputError("help needs the mcpsync command group")
    if machine:
        return _machine(root.command, command)
    say(_plain(root, command))
    return 0


def _machine(group: click.Group, command: Sequence[str]) -> int:
    from mcpsync import __version__
    from mcpsync.cli.machine_help import UnknownCommand, build_machine_help

    only = [" ".join(command)] if command else []
    try:
        doc = build_machine_help(group, version=__version__, only=only)
    except UnknownCommand as exc:
        raise InputError(str(exc), hint="run `mcpsync help` for the list") from exc
    emit_json(doc)
    return 0


def _plain(root: click.Context, command: Sequence[str]) -> str:
    """The same text as `mcpsync COMMAND --help`, found by walking the group tree."""
    ctx = click.Context(root.command, info_name=root.info_name, **root.command.context_settings)
    cmd: click.Command = root.command
    for name in command:
        found = cmd.get_command(ctx, name) if isinstance(cmd, click.Group) else None
        if found is None:
            raise InputError(
                f"unknown command {' '.join(command)!r}", hint="run `mcpsync help` for the list"
            )
        ctx = click.Context(found, info_name=name, parent=ctx, **found.context_settings)
        cmd = found
    return cmd.get_help(ctx)
