"""Who wrote which entry of a shared (user-scope) config file: the ownership ledger.

Files such as ~/.holodeck/config.yaml or ~/.claude.json are shared by every project on the
machine and by the user's own hand edits. HoloDeck and most clients reject unknown keys, so an
entry cannot carry a marker; instead mcpsync keeps a ledger beside its other state:

    $MCPSYNC_STATE_DIR/owners.json   (default ~/.local/state/mcpsync/owners.json)
    {"version": 1, "files": {"<real path of the config>": {"<project mcp.toml>": ["name", ...]}}}

sync replaces and removes only the entries the ledger says this project wrote. An entry with
the same name that the ledger gives to nobody (the user's own) or to another project is not
overwritten: sync stops with a clear error. An entry that already holds exactly what this
project would write is adopted (a lost ledger is harmless) or shared (two projects that want
the same server); a shared entry stays until the last project that wants it drops it. A
project whose mcp.toml no longer exists owns nothing any more, so its entries can be taken
over.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcpsync.errors import InputError

LEDGER_VERSION = 1


def state_dir(home: Path) -> Path:
    override = os.environ.get("MCPSYNC_STATE_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_STATE_HOME")
    return (Path(xdg) if xdg else home / ".local" / "state") / "mcpsync"


@dataclass
class Ledger:
    path: Path
    files: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    text: str | None = None  # as read, to tell whether it changed

    @classmethod
    def load(cls, home: Path) -> Ledger:
        from mcpsync.fsutil import read_text

        path = state_dir(home) / "owners.json"
        text = read_text(path)
        if text is None:
            return cls(path)
        try:
            data = json.loads(text)
            files = data["files"]
            assert isinstance(files, dict)
        except (ValueError, KeyError, TypeError, AssertionError):
            raise InputError(
                f"Invalid ownership ledger {path}. File not modified.",
                hint="fix or delete it; mcpsync then treats shared entries as the user's own",
            ) from None
        return cls(path, files, text)

    def owned(self, config: Path, project: str) -> set[str]:
        return set(self.files.get(str(config), {}).get(project, []))

    def owner(self, config: Path, name: str, project: str) -> str | None:
        """The live project other than `project` that owns `name` in `config`, if any."""
        for other, names in self.files.get(str(config), {}).items():
            if other != project and name in names and Path(other).exists():
                return other
        return None

    def recorded(self, config: Path, name: str) -> bool:
        """Whether any project, live or gone, is recorded as writing `name` in `config`."""
        return any(name in names for names in self.files.get(str(config), {}).values())

    def record(self, config: Path, project: str, names: Iterable[str]) -> None:
        owners = self.files.setdefault(str(config), {})
        wanted = sorted(set(names))
        if wanted:
            owners[project] = wanted
        else:
            owners.pop(project, None)
        if not owners:
            self.files.pop(str(config), None)

    def dumps(self) -> str:
        files: Mapping[str, object] = {
            f: dict(sorted(owners.items())) for f, owners in sorted(self.files.items())
        }
        return json.dumps({"version": LEDGER_VERSION, "files": files}, indent=2) + "\n"


def claim(
    ledger: Ledger,
    config: Path,
    project: str,
    existing: Mapping[str, object],
    new: Mapping[str, object],
    target: str,
) -> set[str]:
    """Names of entries this project may replace or remove in `config`.

    `existing` and `new` map entry names to their values. An entry already present with
    exactly the value we would write is ours to keep (adopted after a lost ledger, or shared
    with another project that writes the same). Otherwise a present entry may be replaced
    only if this project or an abandoned project (mcp.toml gone) wrote it and no other live
    project did; anything else is refused. An entry we wrote and no longer want is removed
    unless another live project still wants it.
    """
    owned = ledger.owned(config, project)
    managed: set[str] = set()
    for name, value in new.items():
        if name not in existing or existing[name] == value:
            managed.add(name)
            continue
        other = ledger.owner(config, name, project)
        if other is None and (name in owned or ledger.recorded(config, name)):
            managed.add(name)
            continue
        if other is not None:
            whose = f"project {Path(other).parent}, which writes a different value"
        else:
            whose = "you (not written by mcpsync)"
        raise InputError(
            f"{config}: entry '{name}' belongs to {whose}; {target} will not overwrite it. "
            "File not modified.",
            hint=f"rename the server's alias in mcp.toml, or remove '{name}' from {config}",
        )
    for name in owned & set(existing) - set(new):
        if ledger.owner(config, name, project) is None:
            managed.add(name)
    return managed & set(existing)
