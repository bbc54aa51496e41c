"""The root click group and its global options. Imported when a command runs; `mcpsync
--help` is answered without it while help_cache holds its current text."""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from mcpsync import __version__
from mcpsync.cli.commands import COLOR_MODES, COMMANDS, TIMEOUT_MIN
from mcpsync.cli.context import Context
from mcpsync.cli.output import set_color
from mcpsync.cli.params import Choice


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        # Every module is part of mcpsync: one that fails to import is a bug to report, not a
        # command to hide (`mcpsync lock` answering "No such command 'lock'").
        module, attr = spec.split(":")
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--registry",
    envvar="MCPSYNC_REGISTRY",
    metavar="URL",
    help="Registry URL (overrides mcp.toml; env MCPSYNC_REGISTRY). http(s):// or file:DIR.",
)
@click.option(
    "-C",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run as if started in DIR (mcp.toml is looked for there, then above).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=TIMEOUT_MIN),
    envvar="MCPSYNC_TIMEOUT",
    default=5.0,
    show_default=True,
    help="Seconds to wait for each registry request (env MCPSYNC_TIMEOUT).",
)
@click.option(
    "--color",
    type=Choice(COLOR_MODES),
    envvar="MCPSYNC_COLOR",
    default="auto",
    show_default=True,
    help="Colour: on a terminal (auto), always, never. NO_COLOR and FORCE_COLOR are honoured.",
)
# The version as a string, not package_name: finding it in the installed metadata imports
# importlib.metadata (~15 ms, more than the rest of `--version`); a test keeps the two equal.
@click.version_option(__version__, prog_name="mcpsync")
@click.pass_context
def cli(
    ctx: click.Context, registry: str | None, directory: Path | None, timeout: float, color: str
) -> None:
    """Reproducible MCP server setups: mcp.toml -> mcp.lock -> agent and client configs.

    \b
    Typical use:
      mcpsync init                  write a commented mcp.toml
      mcpsync add NAME@^1.2         declare a server and lock it
      mcpsync lock                  resolve mcp.toml against the registry into mcp.lock
      mcpsync sync                  write every target config from mcp.lock (offline)
      mcpsync lock --check && mcpsync sync --check     in CI
    """
    set_color(color)
    if directory is not None and not directory.is_dir():
        # here, once, before any command: each one would otherwise fail its own way (a search
        # of the registry, "mcp.lock not found", ...)
        from mcpsync.errors import InputError

        raise InputError(f"{directory}: no such directory", hint="check the -C DIR argument")
    start = Path(directory) if directory is not None else Path.cwd()
    ctx.obj = Context(start=start, registry_override=registry, timeout=timeout)
