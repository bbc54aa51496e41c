"""Whether a locked server can be written to a target, decided without reading any file.

`add` asks this right after locking, so a server that `sync` would refuse for a target (an
mcpb bundle for HoloDeck, an SSE remote for Codex, ...) is reported at once. The answer is
the error `sync` itself would raise: each kind's own entry renderer is run on the one server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpsync.errors import InputError
from mcpsync.lock.lockfile import LockedServer
from mcpsync.manifest.parse import TargetSpec


def problems(
    specs: Sequence[TargetSpec], server: LockedServer
) -> list[tuple[TargetSpec, InputError]]:
    """(target, the error sync would raise) for every target that takes `server` (its
    `servers` subset names it, or it has none) and cannot write it."""
    found = []
    for spec in specs:
        try:
            _entries(spec, [server])
        except InputError as exc:
            found.append((spec, exc))
    return found


def _entries(spec: TargetSpec, servers: Sequence[LockedServer]) -> dict[str, Any]:
    """The entries the target of `spec` would write for `servers` (its subset applies)."""
    from mcpsync.sync import targets

    if spec.kind in ("holodeck-agent", "holodeck-global"):
        from mcpsync.sync.targets.holodeck import _entries as holodeck_entries

        return holodeck_entries(spec, servers)
    from mcpsync.sync.targets.clients import ClientTarget, render_all

    if spec.kind == "codex":
        from mcpsync.sync.targets import codex
        from mcpsync.sync.targets.render import no_syntax

        return render_all(spec, servers, no_syntax, codex.render, {}).entries
    target = targets.make(spec)
    if not isinstance(target, ClientTarget):  # a kind this module does not know yet
        return {}
    return render_all(spec, servers, target.fmt.style, target.fmt.render, {}).entries
