"""Results rendered in one place: human text on stdout/stderr, or one JSON document."""

from __future__ import annotations

import json
import sys
from typing import Any

import click


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))


def say(line: str = "") -> None:
    """A result line for people (stdout)."""
    click.echo(line)


def note(line: str) -> None:
    """Progress and change reports (stderr), so stdout stays parseable."""
    click.echo(line, err=True)


def stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document on stdout."
)
