"""What lock reports without stopping: one type, made by the resolver and by pinning (a
module of its own so that neither imports the other for it)."""

from __future__ import annotations

from msgspec import Struct


class LockWarning(Struct, frozen=True):
    """Something that does not stop the lock but is likely a mistake (a typo in an env or
    variables key, a server a target cannot write). Reported on stderr and in --json."""

    alias: str
    kind: str  # env | variables | target | secret | artifact | latest | argument
    message: str
    key: str | None = None  # the mcp.toml key (env, variables) or the target's label
    suggestions: tuple[str, ...] = ()
    hint: str | None = None

    def render(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"

    def as_json(self) -> dict[str, object]:
        return {
            "server": self.alias,
            "kind": self.kind,
            "key": self.key,
            "suggestions": list(self.suggestions),
            "message": self.message,
            "hint": self.hint,
        }
