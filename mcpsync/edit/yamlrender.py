"""Write new list items as YAML text: block entries, flow mappings, and scalar quoting.

New block entries copy the dash column and offset of the list's own items; new items of a
flow list are one flow mapping each. A string is written plain only where every YAML 1.1/1.2
reader takes it as the same string, else quoted. A sync writes the same items into every file
of a target, so renderings are cached, by the items' repr and the layout.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct

from mcpsync.edit.yamlload import STR_TAG, plain_tag
from mcpsync.edit.yamlspans import BlockLayout, Edit

# Plain scalars we are sure every YAML 1.1/1.2 reader takes as the same string: a safe first
# character, no indicators (`:`, `#`, `,`, brackets, quotes), single spaces between words.
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./@=+()-]*(?: [A-Za-z0-9_./@=+()-]+)*")
_YAML11_BOOLS = frozenset({"y", "n"})  # YAML 1.1 booleans that PyYAML's resolver ignores
# Characters a double-quoted scalar must escape beyond JSON's own escapes: C1 controls, DEL,
# the non-ASCII line breaks, BOM/non-characters and lone surrogates.
_UNSAFE_IN_QUOTES = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
# Characters only a double-quoted scalar can hold (as escapes): those, and C0 controls, tab
# and line breaks included (a single-quoted scalar folds line breaks).
_NEEDS_ESCAPES = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


class New(Struct, frozen=True):
    """The new items, as given and as they must read back; ``key`` (their repr, the identity
    the verification compares by) keys the caches of their renderings: a sync writes the
    same items into every file of a target."""

    items: Sequence[Mapping[str, Any]]
    plain: list[Any]
    key: str

    @classmethod
    def of(cls, items: Sequence[Mapping[str, Any]]) -> New:
        plain = [_plain(item) for item in items]
        return cls(items, plain, repr(plain))

    def flow(self) -> list[str]:
        """Each item as one flow mapping."""
        key = ("flow", self.key)
        rendered = _RENDERED.get(key)
        if rendered is None:
            rendered = _remember(key, [_flow_mapping(i) for i in self.items])
        return list(rendered)


class NewBlock(Struct, frozen=True):
    """New items rendered as block entries, and where the key of their list sits."""

    text: str
    layout: BlockLayout
    eol: str
    key_col: int

    @classmethod
    def render(
        cls,
        new: New,
        layout: BlockLayout,
        eol: str,
        key_col: int,
        comments: Mapping[int, str] | None = None,
    ) -> NewBlock:
        """`comments`: item index -> comment lines (as found in the file) to put above it."""
        if comments:
            with_comments = "".join(
                comments.get(i, "") + _render_block([item], layout, eol)
                for i, item in enumerate(new.items)
            )
            return cls(with_comments, layout, eol, key_col)
        key = ("block", new.key, layout, eol)
        text = _RENDERED.get(key)
        if text is None:
            text = _remember(key, _render_block(new.items, layout, eol))
        return cls(text, layout, eol, key_col)

    @property
    def stand_in(self) -> str:
        """One entry at the same dash column, reading as ``STAND_IN_VALUE``."""
        return " " * self.layout.dash_col + "- 0" + self.eol

    def with_stand_in(self, edits: list[Edit]) -> list[Edit]:
        """``edits`` with the stand-in where the block is (at the end of one replacement)."""
        out = []
        for start, end, text in edits:
            if text.endswith(self.text):
                text = text[: len(text) - len(self.text)] + self.stand_in
            out.append((start, end, text))
        return out


STAND_IN_VALUE = 0
_RENDERED: dict[tuple[Any, ...], Any] = {}  # renderings of new items, by New.key and layout
CACHE_SIZE = 64


def _remember(key: tuple[Any, ...], value: Any) -> Any:
    if len(_RENDERED) >= CACHE_SIZE:
        _RENDERED.clear()
    _RENDERED[key] = value
    return value


def _render_block(items: Sequence[Mapping[str, Any]], layout: BlockLayout, eol: str) -> str:
    lines: list[str] = []
    for item in items:
        lines += _block_entry(item, layout.dash_col, layout.offset)
    return "".join(line + eol for line in lines)


def _block_entry(value: Any, dash_col: int, offset: int) -> list[str]:
    """`- ` plus a block mapping, or `- ` plus a flow value."""
    dash = " " * dash_col + "-" + " " * (offset - 1)
    if isinstance(value, Mapping) and value:
        lines = _block_mapping(value, dash_col + offset, max(offset, 2))
        return [dash + lines[0].lstrip(" ")] + lines[1:]
    return [dash + _flow(value)]


def _block_mapping(mapping: Mapping[str, Any], indent: int, step: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for key, value in mapping.items():
        head = f"{pad}{_key(key)}:"
        if isinstance(value, Mapping) and value:
            lines += [head, *_block_mapping(value, indent + step, step)]
        elif _is_list(value) and any(isinstance(v, (Mapping, list, tuple)) for v in value):
            lines.append(head)
            for element in value:
                lines += _block_entry(element, indent + step, 2)
        else:
            lines.append(f"{head} {_flow(value)}")
    return lines


def _flow_mapping(mapping: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{_key(k)}: {_flow(v)}" for k, v in mapping.items()) + "}"


def _flow(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return scalar(value)
    if isinstance(value, Mapping):
        return _flow_mapping(value)
    if _is_list(value):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    raise TypeError(f"cannot write a {type(value).__name__} into YAML: {value!r}")


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"YAML keys written by mcpsync must be strings, got {key!r}")
    return scalar(key)


@functools.lru_cache(maxsize=4096)  # keys and common values repeat in every entry
def scalar(value: str) -> str:
    """A plain scalar when every reader takes it as this string, else a quoted one.

    Single quotes unless the string needs escapes: HoloDeck substitutes `${VAR}` in the raw
    text before it parses YAML, and a value with `\\` or `"` would break a double-quoted
    scalar (only a `'` breaks a single-quoted one). Escapes need double quotes.
    """
    if (
        _PLAIN.fullmatch(value)
        and value.lower() not in _YAML11_BOOLS
        and plain_tag(value) == STR_TAG
    ):
        return value
    if not _NEEDS_ESCAPES.search(value):
        return "'" + value.replace("'", "''") + "'"
    quoted = json.dumps(value, ensure_ascii=False)
    return _UNSAFE_IN_QUOTES.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def _plain(value: Any) -> Any:
    """``value`` as it reads back: mappings as dicts, tuples as lists."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:  # most values: fast
        return value
    if kind is dict or isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if _is_list(value):
        return [_plain(v) for v in value]
    return value
