"""The root command group, global options, and the one place errors become exit codes."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from mcpsync.cli.context import Context
from mcpsync.cli.output import COLOR_MODES, set_color
from mcpsync.cli.params import Choice

# Command name -> "module:attribute". Loaded only when listed or invoked, so `mcpsync --help`
# imports no command's dependencies.
COMMANDS: dict[str, str] = {
    "init": "mcpsync.cli.edit_cmds:init",
    "add": "mcpsync.cli.edit_cmds:add",
    "remove": "mcpsync.cli.edit_cmds:remove",
    "import": "mcpsync.cli.import_cmd:import_cmd",
    "lock": "mcpsync.cli.lock_cmd:lock",
    "sync": "mcpsync.cli.sync_cmd:sync",
    "search": "mcpsync.cli.registry_cmds:search",
    "show": "mcpsync.cli.registry_cmds:show",
    "list": "mcpsync.cli.report_cmds:list_cmd",
    "outdated": "mcpsync.cli.report_cmds:outdated",
    "doctor": "mcpsync.cli.doctor_cmd:doctor",
    "mirror": "mcpsync.cli.mirror_cmd:mirror",
    "probe": "mcpsync.cli.trust_cmds:probe",
    "verify": "mcpsync.cli.trust_cmds:verify",
    "export": "mcpsync.cli.trust_cmds:export",
    "merge-driver": "mcpsync.cli.merge_cmd:merge_driver",
    "help": "mcpsync.cli.machine:help_cmd",
    "mcp": "mcpsync.cli.mcp_cmd:mcp",
}


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
    type=click.FloatRange(min=0.1),
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
@click.version_option(package_name="mcpsync", prog_name="mcpsync")
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


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code; never raises (used by main and the MCP server)."""
    from mcpsync.cli.errors import invoke

    return invoke(cli, list(argv) if argv is not None else sys.argv[1:])


def main() -> None:
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    sys.exit(run())
