"""Option types shared by the commands."""

from __future__ import annotations

from typing import Any

import click


class Choice(click.Choice):  # type: ignore[type-arg]
    """click.Choice that offers the close choice: `--target claud-code` -> `claude-code`."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            from mcpsync.suggest import did_you_mean

            hint = did_you_mean([str(value)], [str(c) for c in self.choices]).rstrip()
            if not hint:
                raise
            message = f"{exc.message} ({hint[0].upper()}{hint[1:]})"
            raise click.BadParameter(message, ctx=ctx, param=param) from None
