"""A server's tool surface: the tools/list records pinned in mcp.lock, their hash, and a diff.

The hash is the mcp-lock/1 draft's (ToolPin, docs/spec/mcp-lockfile-v1.md §5, §8): the tools
sorted by name (UTF-16 code units), each reduced to exactly the covered fields in coverage
order, canonicalized with RFC 8785 (JCS), SHA-256, written `sha256-<base64>`. One format, so
an exported mcp-lock/1 entry carries the same value mcp.lock does.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

COVERAGE = ("name", "description", "inputSchema")


class Tool(Struct, frozen=True):
    """One tools/list entry, reduced to what is pinned. None: the server sent no such field."""

    name: str
    description: str | None = None
    input_schema: Any = None

    def record(self) -> dict[str, Any]:
        """The §5 record: exactly the coverage fields the server sent, in coverage order."""
        out: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.input_schema is not None:
            out["inputSchema"] = self.input_schema
        return out


class Surface(Struct, frozen=True):
    """What mcp.lock records: the hash, the tool count, and the tools themselves (so a drift
    can be shown as a diff and a reviewer sees a changed description in the lock's diff)."""

    hash: str
    tools: tuple[Tool, ...]

    @property
    def count(self) -> int:
        return len(self.tools)


def canonical(value: Any) -> bytes:
    """RFC 8785 canonical JSON, UTF-8. Raises ValueError for values JSON cannot carry."""
    import rfc8785

    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError) as exc:
        raise ValueError(f"not canonicalizable as JSON: {exc}") from None


def sri(data: bytes) -> str:
    """The §8.1 digest format: `sha256-` + standard base64 with padding."""
    return "sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode("ascii")


def digest(value: Any) -> str:
    return sri(canonical(value))


def _utf16(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")  # byte order == code-unit order


def sort_tools(tools: Iterable[Tool]) -> tuple[Tool, ...]:
    return tuple(sorted(tools, key=lambda t: _utf16(t.name)))


def surface_hash(tools: Iterable[Tool]) -> str:
    return digest([t.record() for t in sort_tools(tools)])


def make(tools: Iterable[Tool]) -> Surface:
    ordered = sort_tools(tools)
    return Surface(surface_hash(ordered), ordered)


def from_listing(raw_tools: Sequence[Mapping[str, Any]]) -> Surface:
    """A Surface from tools/list items (JSON objects). Raises ValueError on a malformed item
    or two tools with one name (the name is the pin's key)."""
    tools: list[Tool] = []
    seen: set[str] = set()
    for item in raw_tools:
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("a tool has no name")
        if name in seen:
            raise ValueError(f"two tools are named {name!r}")
        seen.add(name)
        description = item.get("description")
        if description is not None and not isinstance(description, str):
            raise ValueError(f"tool {name!r}: description is not a string")
        tools.append(Tool(name, description, item.get("inputSchema")))
    return make(tools)


# ---------------------------------------------------------------- drift


class ToolDrift(Struct, frozen=True):
    """One tool that differs: `added`, `removed`, `description` or `schema` changed."""

    tool: str
    change: str
    diff: str = ""  # unified diff of the changed field (canonical JSON for a schema)

    def line(self) -> str:
        what = {
            "added": "tool added",
            "removed": "tool removed",
            "description": "description changed",
            "schema": "input schema changed",
        }[self.change]
        return f"{what}: {self.tool}"


def compare(old: Surface, new: Surface) -> list[ToolDrift]:
    """Every difference between a pinned surface and a fresh one, sorted by tool then kind."""
    before = {t.name: t for t in old.tools}
    after = {t.name: t for t in new.tools}
    out: list[ToolDrift] = []
    for name in sorted(set(before) | set(after), key=_utf16):
        a, b = before.get(name), after.get(name)
        if a is None and b is not None:
            out.append(ToolDrift(name, "added", _diff(name, None, _show(b.record()))))
        elif b is None and a is not None:
            out.append(ToolDrift(name, "removed", _diff(name, _show(a.record()), None)))
        elif a is not None and b is not None:
            if a.description != b.description:
                diff = _diff(f"{name} description", a.description, b.description)
                out.append(ToolDrift(name, "description", diff))
            if canonical_text(a.input_schema) != canonical_text(b.input_schema):
                old_schema, new_schema = _show(a.input_schema), _show(b.input_schema)
                out.append(
                    ToolDrift(name, "schema", _diff(f"{name} inputSchema", old_schema, new_schema))
                )
    return out


def canonical_text(value: Any) -> str:
    return canonical(value).decode("utf-8") if value is not None else ""


def _show(value: Any) -> str:
    """Canonical content, pretty-printed so a diff points at the changed member."""
    if value is None:
        return "(none)"
    return json.dumps(json.loads(canonical(value)), indent=2, ensure_ascii=False)


def _diff(what: str, old: str | None, new: str | None) -> str:
    import difflib

    lines = difflib.unified_diff(
        (old or "").splitlines(),
        (new or "").splitlines(),
        fromfile=f"mcp.lock: {what}",
        tofile=f"server: {what}",
        lineterm="",
    )
    return "\n".join(lines)
