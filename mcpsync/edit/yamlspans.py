"""Where things are in a YAML text: lines and columns, and the items of a block list.

Positions are indexes into the text, as the compose marks count them. A block list's item
spans whole lines: from the line of its dash through the end of its last line, with the
comment lines right after it that are indented past the dash (`# option: x` under its keys).
Blank lines and the other comment lines between items belong to no item: removing an item
keeps them. yamledit.py removes items at these spans and inserts new ones after them, in the
BlockLayout (dash column and offset) the list's own items show.
"""

from __future__ import annotations

import re

import yaml
from msgspec import Struct

from mcpsync.edit.yamlload import YamlEditError

_BLOCK_SCALAR_HEADER = re.compile(r"[ \t]*[|>][-+1-9]{0,2}")  # `|`, `>-`, `|2+`, `>+1`

Edit = tuple[int, int, str]  # replace body[start:end] with text


def line_start(body: str, pos: int) -> int:
    return body.rfind("\n", 0, pos) + 1


def line_end_from(body: str, pos: int) -> int:
    """pos if it starts a line, else the index after the next line break (or end of text)."""
    if pos == 0 or body[pos - 1] == "\n":
        return pos
    return body.find("\n", pos) + 1 or len(body)


def column_of(body: str, pos: int) -> int:
    return pos - line_start(body, pos)


def after_properties(body: str, node: yaml.Node) -> int:
    """The index after the node's anchor and tag (`&a !!seq`), or -1 if it has none."""
    pos, end = node.start_mark.index, -1
    while pos < len(body) and body[pos] in "!&":
        while pos < len(body) and body[pos] not in " \t\r\n[{":
            pos += 1
        end = pos
        while pos < len(body) and body[pos] in " \t\r\n#":  # separation, comments included
            pos = body.find("\n", pos) if body[pos] == "#" else pos + 1
            if pos < 0:
                return end
    return end


class BlockLayout(Struct, frozen=True):
    """Where block entries go: the column of their dash and the offset to their keys."""

    dash_col: int  # column of `-`
    offset: int  # from `-` to the item's keys


class BlockList(Struct, frozen=True):
    """Line geometry of a block list, computed only for the items an edit touches."""

    body: str
    seq: yaml.SequenceNode
    path: str

    def dash(self, i: int) -> tuple[int, int]:
        """(line start, index of `-`) for item i; its content may sit lines below the dash."""
        body, item_start = self.body, self.seq.value[i].start_mark.index
        line = line_start(body, item_start)
        head = body[line:item_start]
        while not head.lstrip(" \t").startswith("-"):
            if line == 0 or (head.strip() and not head.lstrip().startswith("#")):
                raise YamlEditError(f"{self.path}: unsupported list layout. File not modified.")
            end, line = line, line_start(body, line - 1)
            head = body[line:end]
        return line, line + len(head) - len(head.lstrip(" \t"))

    def span(self, i: int) -> tuple[int, int]:
        """Item i as whole lines: its dash line through its last line's ending."""
        nodes = self.seq.value
        if i + 1 < len(nodes):
            limit = self.dash(i + 1)[0]
        else:
            limit = line_start(self.body, self.seq.end_mark.index)
        start, dash = self.dash(i)
        return start, _item_end(self.body, nodes[i], limit, dash - start)

    def comment_above(self, i: int, floor: int) -> int:
        """Where the comment lines directly above item i begin (no blank line between them
        and its dash, none before `floor`); its dash line's start when there are none."""
        start = self.dash(i)[0]
        while start > floor:
            prev = line_start(self.body, start - 1)
            if not self.body[prev:start].strip().startswith("#"):
                break
            start = prev
        return start

    def layout(self) -> BlockLayout:
        """The siblings' dash column and dash-to-key offset (the first block mapping's)."""
        for i, node in enumerate(self.seq.value):
            # The mapping's own mark, not its first key's: merge keys (`<<`) reorder pairs.
            if isinstance(node, yaml.MappingNode) and not node.flow_style:
                line, dash = self.dash(i)
                offset = column_of(self.body, node.start_mark.index) - (dash - line)
                if offset > 1:
                    return BlockLayout(dash - line, offset)
        line, dash = self.dash(0)
        return BlockLayout(dash - line, 2)


def _item_end(body: str, node: yaml.Node, limit: int, dash_col: int) -> int:
    """End of the item's last line, including its trailing comment and line ending.

    A block collection's end mark points at the next token, past any comment lines that
    belong to the next item, so we start from the end of its last scalar or flow collection.
    Lines up to ``limit`` that hold more than comments still belong to the item (an alias or
    merge key, whose node carries the marks of its anchor), and so do comment lines right
    after it that are indented past the dash (`# option: x` under the item's keys).
    """
    end = line_end_from(body, _last_leaf_end(body, node))
    pos = end
    while pos < limit:
        nxt = line_end_from(body, pos + 1)
        if _belongs_to_item(body[pos:nxt], pos == end, dash_col):
            end = nxt
        pos = nxt
    return end


def _belongs_to_item(line: str, follows: bool, dash_col: int) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if not stripped.startswith("#"):
        return True
    return follows and len(line) - len(line.lstrip(" \t")) > dash_col


def _last_leaf_end(body: str, node: yaml.Node) -> int:
    # Block collections list their children in text order, so the last leaf is down the
    # last branch; scalars and flow collections have exact end marks.
    while isinstance(node, (yaml.SequenceNode, yaml.MappingNode)) and not node.flow_style:
        if not node.value:
            break
        last = node.value[-1]
        node = last[1] if isinstance(node, yaml.MappingNode) else last
    end = node.end_mark.index
    if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
        # A block scalar's end mark is past the blank lines after it: they are the file's,
        # unless the scalar keeps them as its text (`|+`).
        start = node.start_mark.index
        header = _BLOCK_SCALAR_HEADER.match(body, max(start, after_properties(body, node)))
        if header is None or "+" not in header.group():
            end = start + len(body[start:end].rstrip(" \t\r\n"))
    return end
