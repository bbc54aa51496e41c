"""Byte-preserving edits of one top-level list in a YAML document.

sync owns some entries of a list (``tools:`` in agent.yaml, ``mcp_servers:`` in HoloDeck's
config.yaml) and nothing else in the file. Like pre-commit's ``migrate_config``, we never
re-serialise the document: we compose it once, read the node marks (``start_mark.index`` /
``end_mark.index``) and splice new text between untouched slices of the original. Every edit
is checked by loading the result; a result that does not load to exactly the intended data is
an error, so a caller never writes a half-edited file. (New block items are checked on their
own, once per rendering, and then the file with a one-line stand-in in their place: see
``_verify_block`` for why that check is no weaker than loading the whole result.)

The parts: yamlload.py reads the document, yamlspans.py finds the items of a block list,
yamlflow.py rewrites the inside of a flow list, yamlrender.py writes the new items; this
module finds the list, plans the edits and verifies the result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import yaml
from msgspec import Struct

from mcpsync.edit.yamlflow import plan_flow
from mcpsync.edit.yamlload import STR_TAG, Doc, YamlEditError, describe, load, parse, split_bom
from mcpsync.edit.yamlrender import CACHE_SIZE, STAND_IN_VALUE, New, NewBlock, scalar
from mcpsync.edit.yamlspans import (
    BlockLayout,
    BlockList,
    Edit,
    after_properties,
    column_of,
    line_end_from,
)

__all__ = ["STAY", "Comments", "YamlEditError", "load", "replace_list_items"]


# Every anchor (`&name` where a node may start), and some text that only looks like one.
_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[{,])&[^\s\[\]{},]")
_DOCUMENT_END = re.compile(r"^\.\.\.(?=[ \t\r\n]|$)", re.MULTILINE)


# --------------------------------------------------------------------------- public API


STAY = -1  # Comments.to: the comment lines stay where they are


class Comments(Struct, frozen=True):
    """What happens to the comment lines directly above a removed item (no blank line
    between): `to(item)` gives the index of the new item they go above (the same entry,
    written again), STAY (they stay in place), or None: they go with the item, and are
    appended to `dropped` as (item, text) for the caller to report. Without a Comments,
    every comment stays in place."""

    to: Callable[[Any], int | None]
    dropped: list[tuple[Any, str]]


def replace_list_items(
    text: str,
    key: str,
    is_managed: Callable[[Any], bool],
    new_items: Sequence[Mapping[str, Any]],
    *,
    path: str,
    comments: Comments | None = None,
) -> str:
    """Replace the managed items of the top-level list ``key`` with ``new_items``.

    New items go where the first managed item was, else at the end of the list; an absent,
    null or empty (`[]`) value becomes a block list. All bytes outside the removed items stay
    as they were, and when nothing would change ``text`` itself is returned. For a second
    run to change nothing, ``is_managed`` must hold for every new item.

    Raises YamlEditError (an InputError) naming ``path`` for a file that does not parse, is
    not one mapping, holds ``key`` as something other than a list, uses aliases for it, or
    whose edit would not read back as intended.
    """
    bom, body = split_bom(text)
    doc = parse(body, path)
    target = _Target.find(doc, key, path)
    current = target.items(doc)
    removed = [i for i, item in enumerate(current) if is_managed(item)]
    if not removed and not new_items:
        return text
    new = New.of(new_items)
    plan = _plan(doc, target, removed, new, path, _Carry(current, comments))
    out = _finish(body, _apply(body, plan.edits), doc.eol)
    if out == body:
        return text
    block = plan.block
    if block is None or _MAYBE_ANCHOR.search(body):  # no anchor: no alias sees the stand-in
        _verify(bom + out, doc, key, _expected(current, removed, new.plain), path)
    else:
        _verify_block(block, new, key, path)
        out_with_stand_in = _finish(body, _apply(body, block.with_stand_in(plan.edits)), doc.eol)
        expected = _expected(current, removed, [STAND_IN_VALUE])
        _verify(bom + out_with_stand_in, doc, key, expected, path)
    return bom + out


# --------------------------------------------------------------------------- the target key


class _Target(Struct, frozen=True):
    key: str
    key_node: yaml.Node | None  # None: the key is absent
    value: yaml.Node | None

    @classmethod
    def find(cls, doc: Doc, key: str, path: str) -> _Target:
        found = [(k, v) for k, v in doc.pairs if _is_key(k, key)]
        if len(found) > 1:
            raise YamlEditError(f"{path}: `{key}` appears more than once. File not modified.")
        if not found:
            return cls(key, None, None)
        key_node, value = found[0]
        if value.start_mark.index < key_node.end_mark.index:
            raise YamlEditError(
                f"{path}: `{key}` is a YAML alias; mcpsync cannot edit it in place. "
                "File not modified."
            )
        target = cls(key, key_node, value)
        target.check_type(doc, path)
        return target

    def check_type(self, doc: Doc, path: str) -> None:
        loaded = doc.data[self.key]
        if loaded is not None and not isinstance(loaded, list):
            raise YamlEditError(
                f"{path}: `{self.key}` must be a list, found {type(loaded).__name__}. "
                "File not modified."
            )

    def items(self, doc: Doc) -> list[Any]:
        return list(doc.data[self.key] or []) if self.key_node is not None else []

    def is_empty(self, doc: Doc) -> bool:
        """Absent, null, or `[]` with nothing but spaces inside: new items become a block list."""
        if self.value is None or isinstance(self.value, yaml.ScalarNode):
            return True
        node = self.value
        if not isinstance(node, yaml.SequenceNode) or node.value:
            return False
        start = max(node.start_mark.index, after_properties(doc.body, node))
        inside = doc.body[start : node.end_mark.index]
        return inside.strip(" \t\r\n[]") == "" and inside.count("[") == 1


def _is_key(node: yaml.Node, key: str) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == STR_TAG and node.value == key


# --------------------------------------------------------------------------- planning


class _Plan(Struct, frozen=True):
    edits: list[Edit]
    block: NewBlock | None = None  # new block items, inside one of the edits


class _Carry(Struct, frozen=True):
    current: list[Any]  # the list's items as loaded
    comments: Comments | None


def _plan(
    doc: Doc,
    target: _Target,
    removed: list[int],
    new: New,
    path: str,
    carry: _Carry | None = None,
) -> _Plan:
    carry = carry or _Carry([], None)
    if target.is_empty(doc):
        return _plan_fill(doc, target, new, path)
    seq = target.value
    assert isinstance(seq, yaml.SequenceNode)
    _check_items_in_order(seq, target.key, path)
    if seq.flow_style:
        return _Plan(plan_flow(doc, seq, removed, new, path))
    return _plan_block(doc, target, seq, removed, new, path, carry)


def _check_items_in_order(seq: yaml.SequenceNode, key: str, path: str) -> None:
    # An alias item (`- *x`) carries the marks of its anchor elsewhere: splicing there would
    # edit the wrong bytes.
    last = seq.start_mark.index
    for node in seq.value:
        if node.start_mark.index <= last or node.end_mark.index > seq.end_mark.index:
            raise YamlEditError(
                f"{path}: `{key}` holds YAML aliases; mcpsync cannot edit it in place. "
                "File not modified."
            )
        last = node.end_mark.index if seq.flow_style else node.start_mark.index


def _apply(body: str, edits: list[Edit]) -> str:
    parts: list[str] = []
    pos = 0
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1])):
        parts += [body[pos:start], replacement]
        pos = end
    parts.append(body[pos:])
    return "".join(parts)


def _finish(body: str, out: str, eol: str) -> str:
    # A file that had no final newline keeps having none, whatever we appended or removed.
    if body and not body.endswith("\n") and out.endswith(eol):
        return out[: -len(eol)]
    return out


# --- absent, null or `[]`: write a fresh block list


def _plan_fill(doc: Doc, target: _Target, new: New, path: str) -> _Plan:
    if doc.root is not None and doc.root.flow_style:
        raise YamlEditError(
            f"{path}: the top level is a flow mapping ({{...}}); mcpsync cannot add a block "
            f"list `{target.key}` to it. File not modified."
        )
    if not new.plain:  # `tools: []` or null and nothing to add: already right
        return _Plan([])
    body, eol = doc.body, doc.eol
    key_col = column_of(body, doc.root.start_mark.index) if doc.root is not None else 0
    block = NewBlock.render(new, BlockLayout(key_col + 2, 2), eol, key_col)
    if target.key_node is None or target.value is None:
        at = _document_end(doc)
        lead = eol if at and body[at - 1] != "\n" else ""
        head = f"{lead}{' ' * key_col}{scalar(target.key)}:{eol}"  # beside the other keys
        return _Plan([(at, at, head + block.text)], block)
    value = target.value
    cut = _colon_end(body, target.key_node, target.key, path)
    if isinstance(value, yaml.SequenceNode):  # `[]`, maybe after an anchor or `!!seq`: keep them
        cut = max(cut, after_properties(body, value))
    value_end = value.end_mark.index
    after = line_end_from(body, value_end)
    lead = eol if after == len(body) and not body.endswith("\n") else ""
    # Drop ` ~` / ` []` but keep a comment that follows on the key's line.
    return _Plan([(cut, value_end, ""), (after, after, lead + block.text)], block)


def _document_end(doc: Doc) -> int:
    """Where a new top-level key goes: the end of the text, or before an explicit `...`."""
    start = doc.root.end_mark.index if doc.root is not None else 0
    marker = _DOCUMENT_END.search(doc.body, start)
    return marker.start() if marker else len(doc.body)


def _colon_end(body: str, key_node: yaml.Node, key: str, path: str) -> int:
    pos = key_node.end_mark.index
    while pos < len(body) and body[pos] in " \t":
        pos += 1
    if pos >= len(body) or body[pos] != ":":
        raise YamlEditError(f"{path}: unsupported layout around `{key}:`. File not modified.")
    return pos + 1


# --- block lists


def _plan_block(
    doc: Doc,
    target: _Target,
    seq: yaml.SequenceNode,
    removed: list[int],
    new: New,
    path: str,
    carry: _Carry,
) -> _Plan:
    items = BlockList(doc.body, seq, path)
    assert target.key_node is not None
    key_col = column_of(doc.body, target.key_node.start_mark.index)
    spans, above = _removed_spans(doc, target.key_node, items, removed, carry)
    layout = items.layout()
    block = NewBlock.render(new, layout, doc.eol, key_col, above) if new.plain else None
    text = block.text if block else ""
    if not removed:
        end = items.span(len(seq.value) - 1)[1]
        lead = doc.eol if end == len(doc.body) and not doc.body.endswith("\n") else ""
        return _Plan([(end, end, lead + text)], block)
    edits = [(*spans[i], text if i == removed[0] else "") for i in removed]
    if len(removed) == len(seq.value) and not new.plain:
        # An emptied list stays a list, not null: `[]` after the key, or after its anchor or
        # tag (`tools: !!seq []`).
        at = _colon_end(doc.body, target.key_node, target.key, path)
        at = max(at, after_properties(doc.body, seq))
        edits.append((at, at, " []"))
    return _Plan(edits, block)


def _removed_spans(
    doc: Doc, key_node: yaml.Node, items: BlockList, removed: list[int], carry: _Carry
) -> tuple[dict[int, tuple[int, int]], dict[int, str]]:
    """Each removed item's span, with the comment lines directly above it when the caller
    says where they go (Comments); and new item index -> the comment lines to put above it."""
    spans = {i: items.span(i) for i in removed}
    above: dict[int, str] = {}
    if carry.comments is None:
        return spans, above
    for i in removed:
        start, end = spans[i]
        floor = items.span(i - 1)[1] if i else line_end_from(doc.body, key_node.end_mark.index)
        first = items.comment_above(i, floor)
        if first == start:
            continue
        lines = doc.body[first:start]
        to = carry.comments.to(carry.current[i])
        if to == STAY:
            continue
        if to is None:
            carry.comments.dropped.append((carry.current[i], lines))
        else:
            above[to] = above.get(to, "") + lines
        spans[i] = (first, end)
    return spans, above


# --------------------------------------------------------------------------- verification


def _expected(current: list[Any], removed: list[int], new: list[Any]) -> list[Any]:
    gone = set(removed)
    at = removed[0] if removed else len(current)
    kept_after = [item for i, item in enumerate(current) if i > at and i not in gone]
    return current[:at] + new + kept_after


def _verify_block(block: NewBlock, new: New, key: str, path: str) -> None:
    """Check new block entries on their own: with the stand-in in their place, the edited
    file then needs only a small load (a sync writes the same entries into many files).

    Why that is no weaker than loading the edited file: the entries are whole lines at the
    list's dash column (continuation lines deeper), end with a line break and hold no
    anchor, alias, tag, directive, document marker or block scalar (they are written by
    yamlrender's `_render_block`: plain scalars from `_PLAIN`, quoted scalars, one-line flow
    collections). A block sequence's entry is one grammar production that depends only on
    its indentation (YAML 1.2 `c-l-block-seq-entry(n)`): swapping complete entries at the
    same column for others leaves the reading of everything before and after them as it
    was, and the scanner leaves them at a line start in the same state (its indentation
    stack is unwound by the next token, which is no deeper than the dash). With no anchors
    in the file (checked by the caller) no alias can see which entries are there. So the
    file reads as intended if these entries read as the new items between stand-in siblings
    at the same column under the same key column, checked here (once per rendering), and the
    file with one stand-in entry reads as intended with it, checked by the caller. (Entries
    away from the list's own column, which `_render_block` never writes, fail here even
    where a full load might take them.)
    """
    head = " " * block.key_col + scalar(key) + ":" + block.eol
    probe = head + block.stand_in + block.text + block.stand_in
    if (probe, new.key) in _VERIFIED_BLOCKS:
        return
    expected = {key: [STAND_IN_VALUE, *new.plain, STAND_IN_VALUE]}
    _check_reads_back(probe, expected, path, f"the new `{key}` entries")
    if len(_VERIFIED_BLOCKS) >= CACHE_SIZE:
        _VERIFIED_BLOCKS.clear()
    _VERIFIED_BLOCKS.add((probe, new.key))


_VERIFIED_BLOCKS: set[tuple[str, str]] = set()


def _unsafe(path: str, exc: YamlEditError) -> YamlEditError:
    cause = exc.__cause__
    why = describe(cause) if isinstance(cause, yaml.YAMLError) else exc.message
    return YamlEditError(
        f"Could not edit {path} safely: the result would not parse ({why}). File not modified."
    )


def _verify(out: str, doc: Doc, key: str, new_list: list[Any], path: str) -> None:
    expected = dict(doc.data or {})
    expected[key] = new_list
    _check_reads_back(out, expected, path, f"the edited `{key}`")


def same(a: Any, b: Any) -> bool:
    """What repr(a) == repr(b) says (1 is not True, key order counts, nan is nan) without
    building two copies of a large document as text."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            same(ka, kb) and same(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return bool(a == b)


def _check_reads_back(text: str, expected: Any, path: str, what: str) -> None:
    try:
        actual = load(text, path=path)
    except YamlEditError as exc:
        raise _unsafe(path, exc) from exc
    if not same(actual, expected):
        raise YamlEditError(
            f"Could not edit {path} safely: {what} would not read back as intended. "
            "File not modified."
        )
