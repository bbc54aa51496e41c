"""Edits inside a flow list (`tools: [a, b]`): the new text between its `[` and `]`.

The text between two items (a gap) is split at its first line break: the head, on the
previous item's line, holds that item's comma and its own comment; the rest is whole lines
(comment or blank lines) and the indentation of what follows. As in block lists, a removed
item takes its head with it, and every comment line stays where it was.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

import yaml
from msgspec import Struct

from mcpsync.edit.yamlload import Doc, YamlEditError
from mcpsync.edit.yamlrender import New
from mcpsync.edit.yamlspans import Edit, column_of, line_start

# A separator new flow items can copy: its comma on the item's line, at most one line break.
_SEP_CLEAN = re.compile(r"[ \t]*,(?:[ \t]*|\r?\n[ \t]*)")


class _FlowList(Struct, frozen=True):
    open: int  # index just after `[`
    close: int  # index of `]`
    starts: list[int]
    ends: list[int]

    def item(self, body: str, i: int) -> str:
        return body[self.starts[i] : self.ends[i]]

    def gap(self, body: str, i: int) -> str:
        """The text after item i up to the next item, or to `]`; i = -1: the text after `[`."""
        start = self.open if i < 0 else self.ends[i]
        end = self.starts[i + 1] if i + 1 < len(self.starts) else self.close
        return body[start:end]


def plan_flow(
    doc: Doc,
    seq: yaml.SequenceNode,
    removed: list[int],
    new_items: New,
    path: str,
) -> list[Edit]:
    """The edits of a flow list: the removed items out, the new ones in."""
    flow = _flow_list(doc.body, seq, path)
    new = new_items.flow()  # one flow mapping each
    join = _FlowJoin(doc, flow)
    if not flow.starts:  # `[ # comment\n]`: keep what is inside, the items go on new lines
        at = line_start(doc.body, flow.close)
        layout = join.layout([], None)
        text = layout.indent[len(doc.eol) :] + layout.sep.join(new) + doc.eol
        return [(at, at, text)]
    return [(flow.open, flow.close, join.join(removed, new))]


class _NewLayout(NamedTuple):
    sep: str  # between new items
    indent: str  # a line break and the indentation of a new item on a line of its own


_Part = str | Callable[[_NewLayout], str]  # text, or text that depends on the new layout


class _FlowJoin(Struct, frozen=True):
    """The new text between `[` and `]`: kept items, new items and the gaps between them.

    A second run, which removes the new items and writes them again, gives the same text:
    new items copy what the kept items show (their separator, their column), not what the
    removed ones did.
    """

    doc: Doc
    flow: _FlowList

    def join(self, removed: list[int], new: list[str]) -> str:
        body, flow, n = self.doc.body, self.flow, len(self.flow.starts)
        gone = set(removed)
        at = removed[0] if removed else n
        parts: list[_Part] = []
        kept_gaps: list[str] = []  # between two kept items: the file's own separators
        column: int | None = None  # of the first kept item written on a line of its own
        last: int | None = None  # the last original item written; None: none yet, or a new one
        gap = flow.gap(body, -1)  # the gap that followed it
        skipped = False  # an item was removed since then
        rests: list[str] = []  # the rests of the gaps of the items removed since then
        for i in range(n):
            if i == at and new:
                # After the item before the first removed one, or `[`: its gap as it is.
                parts += [gap, lambda layout: layout.sep.join(new)]
                last, skipped = None, True
            if i in gone:
                skipped = True
                rests.append(_split_gap(flow.gap(body, i))[1])
                continue
            if last is None and parts:  # after new items
                parts.append(functools.partial(_after_new, rests=rests))
            else:
                between = gap
                if skipped:  # `[` or a kept item, then removed items
                    head, rest = _split_gap(gap)
                    head = _with_comma(head) if parts else head
                    between = _merge(head, [rest, *rests], to_item=True)
                parts.append(between)
                if last is not None:
                    kept_gaps.append(between)
                if column is None and "\n" in between:
                    indent = between[between.rindex("\n") + 1 :]
                    column = None if indent.strip() else len(indent)
            parts.append(flow.item(body, i))
            last, gap, skipped, rests = i, flow.gap(body, i), False, []
        if not parts:  # every item removed, none added: keep the comment lines
            head, rest = _split_gap(gap)
            emptied = _merge(head, [rest, *rests], to_item=False)
            return emptied if emptied.strip() else ""
        if at == n and new:
            parts += self._append(gap, new)
        elif skipped:
            parts.append(self._new_tail(last, gap, rests))
        else:
            parts.append(gap)  # the last item is kept: its gap to `]` as it is
        layout = self.layout(kept_gaps, column)
        return "".join(part if isinstance(part, str) else part(layout) for part in parts)

    def layout(self, kept_gaps: list[str], column: int | None) -> _NewLayout:
        """The column of the kept items on lines of their own, else of the first item on a
        line of its own, else of the first item, else two more than the line of `[`; and
        the file's own separator between kept items, comments aside."""
        body, flow = self.doc.body, self.flow
        if column is None:
            own_line = [s for s in flow.starts if not body[line_start(body, s) : s].strip()]
            if own_line or flow.starts:
                column = column_of(body, (own_line or flow.starts)[0])
            else:
                line = body[line_start(body, flow.open) : flow.open]
                column = len(line) - len(line.lstrip(" ")) + 2
        indent = self.doc.eol + " " * column
        for gap in kept_gaps:
            if _SEP_CLEAN.fullmatch(gap):
                return _NewLayout(gap, indent)
        if "\n" not in body[flow.open : flow.close]:
            return _NewLayout(", ", indent)
        return _NewLayout("," + indent, indent)

    def _append(self, tail: str, new: list[str]) -> list[_Part]:
        """New items after the last one, which keeps its comment; the list keeps its end."""
        head, rest = _split_gap(tail)
        end = _merge(_without_comment(head), [rest], to_item=False)
        if "#" not in head:
            return [lambda layout: layout.sep + layout.sep.join(new), end]
        brk = "\r\n" if rest.startswith("\r") else "\n"
        eol = len(self.doc.eol)
        return [
            lambda layout: _with_comma(head) + brk + layout.indent[eol:] + layout.sep.join(new),
            end,
        ]

    def _new_tail(self, last: int | None, gap: str, rests: list[str]) -> str:
        """From the new last element to `]` when the last item was removed."""
        tail = self.flow.gap(self.doc.body, len(self.flow.starts) - 1)
        trailing_comma = _flow_comma(tail) >= 0  # the list's style, kept
        if last is None:  # new items are last: the removed item's comma stays, its comment goes
            head = _without_comment(_split_gap(tail)[0])
            return _merge(_with_comma(head) if trailing_comma else head, rests, to_item=False)
        head, rest = _split_gap(gap)
        head = _with_comma(head) if trailing_comma else _without_comma(head)
        return _merge(head, [rest, *rests], to_item=False)


def _after_new(layout: _NewLayout, rests: list[str]) -> str:
    """The gap after the new items: their separator, with what stays of the removed items'
    gaps (comment lines, and the line break and indentation of what follows)."""
    if not any(rests) or (not rests[-1] and not _has_lines(rests)):
        return layout.sep
    return _merge(_split_gap(layout.sep)[0], rests, to_item=True)


def _split_gap(gap: str) -> tuple[str, str]:
    """(head, rest): the gap's text on the previous item's line, and its line break onwards."""
    brk = gap.find("\n")
    if brk < 0:
        return gap, ""
    if brk and gap[brk - 1] == "\r":
        brk -= 1
    return gap[:brk], gap[brk:]


def _merge(head: str, rests: list[str], to_item: bool) -> str:
    """``head``, then the comment and blank lines of ``rests`` (the rests of gaps whose
    items were removed) and the last one's indentation: the text before what follows."""
    kept = [_rest_without_comma(r) for r in rests if r]
    if not kept:
        return head
    lines = "".join(r[r.index("\n") + 1 : r.rindex("\n") + 1] for r in kept)
    if "#" not in head:
        if not lines and not rests[-1]:  # what follows sat on a removed item's line
            return head + " " if to_item and head.endswith(",") else head
        head = head.rstrip(" \t")
    brk = "\r\n" if kept[0].startswith("\r") else "\n"
    return head + brk + lines + kept[-1][kept[-1].rindex("\n") + 1 :]


def _has_lines(rests: list[str]) -> bool:
    """Whether the rests hold whole lines (comments, blank lines), not only line breaks."""
    return any(_rest_without_comma(r).count("\n") > 1 for r in rests)


def _with_comma(head: str) -> str:
    return head if _flow_comma(head) >= 0 else "," + head


def _without_comma(head: str) -> str:
    """A head without its comma: only its comment, if it has one."""
    comma = _flow_comma(head)
    if comma >= 0:
        head = head[:comma] + head[comma + 1 :]
    if "#" not in head:
        return ""
    return head if head[0] in " \t" else " " + head


def _without_comment(head: str) -> str:
    return head[: head.index("#")].rstrip(" \t") if "#" in head else head


def _rest_without_comma(rest: str) -> str:
    """A rest whose comma (a list written `a\n, b`) goes with its item, and so does the line
    it leaves blank."""
    comma = _flow_comma(rest)
    if comma < 0:
        return rest
    end = comma + 1
    while end < len(rest) and rest[end] in " \t":
        end += 1
    line = rest.rfind("\n", 0, comma) + 1
    if not rest[line:comma].strip(" \t") and rest[end : end + 1] in ("\r", "\n"):
        return rest[:line] + rest[rest.index("\n", end) + 1 :]
    return rest[:comma] + rest[end:]


def _flow_list(body: str, seq: yaml.SequenceNode, path: str) -> _FlowList:
    close = seq.end_mark.index - 1
    first = seq.value[0].start_mark.index if seq.value else close
    open_ = body.rfind("[", seq.start_mark.index, first) + 1
    if open_ == 0 or body[close] != "]":
        raise YamlEditError(f"{path}: unsupported flow list layout. File not modified.")
    return _FlowList(
        open_,
        close,
        [node.start_mark.index for node in seq.value],
        [node.end_mark.index for node in seq.value],
    )


def _flow_comma(tail: str) -> int:
    """Index of the comma in the text between two items (or an item and `]`), or -1."""
    pos = 0
    while pos < len(tail):
        if tail[pos] == ",":
            return pos
        if tail[pos] == "#":
            pos = tail.find("\n", pos)
            if pos < 0:
                return -1
        pos += 1
    return -1
