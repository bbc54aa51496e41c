"""The entry point and the command table. The root click group and its global options are in
root.py, imported when a command runs (errors become exit codes in errors.py): `mcpsync
--help` is answered by help_cache, without importing click, while its cached text is current."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

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
    "run": "mcpsync.cli.run_cmd:run",
    "install": "mcpsync.cli.run_cmd:install",
    "merge-driver": "mcpsync.cli.merge_cmd:merge_driver",
    "help": "mcpsync.cli.machine:help_cmd",
    "mcp": "mcpsync.cli.mcp_cmd:mcp",
}


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code; never raises (used by main and the MCP server)."""
    from mcpsync.cli.errors import invoke
    from mcpsync.cli.root import cli

    return invoke(cli, list(argv) if argv is not None else sys.argv[1:])


def main() -> None:
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    from mcpsync.cli import help_cache

    if help_cache.answer(sys.argv[1:]):
        sys.exit(0)
    sys.exit(run())


def __getattr__(name: str) -> Any:
    """`cli`, the root click group, for code and tests that drive click directly."""
    if name == "cli":
        from mcpsync.cli.root import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
