"""The one place where exceptions become an exit code and a message."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

import click

from mcpsync.errors import McpsyncError

BUG_EXIT = 70  # EX_SOFTWARE: an unexpected error is a bug, told apart from every expected code


def invoke(group: click.Group, argv: Sequence[str]) -> int:
    try:
        result = group.main(args=list(argv), prog_name="mcpsync", standalone_mode=False)
    except McpsyncError as exc:
        click.echo(f"error: {exc.render()}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return 2  # bad usage or input; click's own code 1 would read as "a check failed"
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        return 130
    except BrokenPipeError:
        return 0
    except Exception:  # noqa: BLE001 - the last line of defence: a bug report, not a traceback dump
        return _report_bug()
    return result if isinstance(result, int) else 0


def _report_bug() -> int:
    detail = traceback.format_exc()
    click.echo(
        "error: mcpsync hit an unexpected internal error (a bug). "
        "Please report it with the details below.",
        err=True,
    )
    last = detail.strip().splitlines()[-1] if detail.strip() else ""
    click.echo(f"  {last}", err=True)
    if "MCPSYNC_DEBUG" in os.environ:
        click.echo(detail, err=True, nl=False)
    sys.stderr.flush()
    return BUG_EXIT
