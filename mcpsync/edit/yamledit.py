"""Byte-preserving edits of one top-level list in a YAML document.

sync owns some entries of a list (``tools:`` in agent.yaml, ``mcp_servers:`` in HoloDeck's
config.yaml) and nothing else in the file. Like pre-commit's ``migrate_config``, we never
re-serialise the document: we compose it once, read the node marks (``start_mark.index`` /
``end_mark.index``) and splice new text between untouched slices of the original. Every edit
is checked by loading the result; a result that does not load to exactly the intended data is
an error, so a caller never writes a half-edited file. (New block items are checked on their
own, once per rendering, and then the file with a one-line stand-in in their place: see
``_verify_block`` for why that check is no weaker than loading the whole result.)
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import yaml

from mcpsync.errors import InputError

__all__ = ["YamlEditError", "load", "replace_list_items"]

try:  # libyaml's composer is ~10x faster; its marks count characters like the pure one.
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

_BOM = "\ufeff"
_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "timestamp")
)
_RESOLVER = yaml.resolver.Resolver()
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
# A separator new flow items can copy: its comma on the item's line, at most one line break.
_SEP_CLEAN = re.compile(r"[ \t]*,(?:[ \t]*|\r?\n[ \t]*)")
# Every anchor (`&name` where a node may start), and some text that only looks like one.
_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[{,])&[^\s\[\]{},]")
_BLOCK_SCALAR_HEADER = re.compile(r"[ \t]*[|>][-+1-9]{0,2}")  # `|`, `>-`, `|2+`, `>+1`
_DOCUMENT_END = re.compile(r"^\.\.\.(?=[ \t\r\n]|$)", re.MULTILINE)

_Edit = tuple[int, int, str]  # replace body[start:end] with text


class YamlEditError(InputError):
    """A YAML file that cannot be read or edited safely; the file is left as it was."""


# --------------------------------------------------------------------------- public API


def load(text: str, *, path: str) -> Any:
    """Parse one YAML document safely; an invalid file raises YamlEditError naming ``path``."""
    return _parse(_split_bom(text)[1], path).data


def replace_list_items(
    text: str,
    key: str,
    is_managed: Callable[[Any], bool],
    new_items: Sequence[Mapping[str, Any]],
    *,
    path: str,
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
    bom, body = _split_bom(text)
    doc = _parse(body, path)
    target = _Target.find(doc, key, path)
    current = target.items(doc)
    removed = [i for i, item in enumerate(current) if is_managed(item)]
    if not removed and not new_items:
        return text
    new = _New.of(new_items)
    plan = _plan(doc, target, removed, new, path)
    out = _finish(body, _apply(body, plan.edits), doc.eol)
    if out == body:
        return text
    block = plan.block
    if block is None or _MAYBE_ANCHOR.search(body):  # no anchor: no alias sees the stand-in
        _verify(bom + out, doc, key, _expected(current, removed, new.plain), path)
    else:
        _verify_block(block, new, key, path)
        out_with_stand_in = _finish(body, _apply(body, block.with_stand_in(plan.edits)), doc.eol)
        expected = _expected(current, removed, [_STAND_IN_VALUE])
        _verify(bom + out_with_stand_in, doc, key, expected, path)
    return bom + out


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class _Doc:
    body: str
    eol: str
    root: yaml.MappingNode | None  # None: empty or comments-only document
    pairs: list[tuple[yaml.Node, yaml.Node]]  # root pairs as written (before merge keys)
    data: Any


def _split_bom(text: str) -> tuple[str, str]:
    # Whether libyaml's marks count a BOM depends on what follows it; parse without it.
    return (_BOM, text[1:]) if text.startswith(_BOM) else ("", text)


@functools.lru_cache(maxsize=8192)
def _plain_tag(value: str) -> str:
    return str(_RESOLVER.resolve(yaml.ScalarNode, value, (True, False)))


class _Loader(_BaseLoader):
    """The safe loader with a memo on tag resolution, which runs in Python for every scalar."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            return _plain_tag(value)  # no path resolvers: the tag depends on the text only
        return super().resolve(kind, value, implicit)


class _Unusual(Exception):
    """A node the fast builder leaves to PyYAML: merge keys, cycles, uncommon tags."""


class _Builder:
    """Builds what SafeConstructor would, for the plain documents config files are.

    SafeConstructor's generic machinery is most of a load's cost; anything beyond plain
    mappings, lists and the core scalar tags falls back to it, so results never differ.
    """

    def __init__(self, loader: _Loader) -> None:
        self.loader = loader
        self.built: dict[int, Any] = {}  # aliases share a node and must share the object
        self.open: set[int] = set()

    def build(self, node: yaml.Node) -> Any:
        if isinstance(node, yaml.ScalarNode):  # most nodes: no memo, no cycle check needed
            if node.tag == _STR_TAG:
                return node.value
            if node.tag in _SCALAR_TAGS:
                return self.loader.yaml_constructors[node.tag](self.loader, node)
            raise _Unusual
        key = id(node)
        if key in self.built:
            return self.built[key]
        if key in self.open:
            raise _Unusual  # a recursive structure
        self.open.add(key)
        value = self._collection(node)
        self.open.discard(key)
        self.built[key] = value
        return value

    def _collection(self, node: yaml.Node) -> Any:
        if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ_TAG:
            return [self.build(child) for child in node.value]
        if isinstance(node, yaml.MappingNode) and node.tag == _MAP_TAG:
            return self._mapping(node)
        raise _Unusual

    def _mapping(self, node: yaml.MappingNode) -> dict[Any, Any]:
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag in _ODD_KEY_TAGS:
                raise _Unusual  # `<<` merge and `=` value keys
            key = self.build(key_node)
            try:
                mapping[key] = self.build(value_node)
            except TypeError as exc:  # unhashable key: let PyYAML word the error
                raise _Unusual from exc
        return mapping


_ODD_KEY_TAGS = frozenset({"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"})


def _construct(loader: _Loader, root: yaml.Node) -> Any:
    try:
        return _Builder(loader).build(root)
    except _Unusual:
        return loader.construct_document(root)


def _parse(body: str, path: str) -> _Doc:
    try:
        root, pairs, data = _read(body, path)
    except yaml.YAMLError as exc:
        message = f"Invalid YAML in {path}: {_describe(exc)}. File not modified."
        raise YamlEditError(message) from exc
    except UnicodeEncodeError as exc:  # libyaml takes UTF-8; lone surrogates cannot be encoded
        raise YamlEditError(f"Invalid YAML in {path}: {exc.reason}. File not modified.") from exc
    return _Doc(body, _detect_eol(body), _mapping_root(root, data, path), pairs, data)


def _read(body: str, path: str) -> tuple[yaml.Node | None, list[tuple[Any, Any]], Any]:
    loader = _Loader(body)  # the pure-Python reader already rejects bad characters here
    try:
        root = loader.get_node() if loader.check_node() else None
        if root is not None and loader.check_node():
            raise YamlEditError(
                f"{path} holds more than one YAML document; expected one. File not modified."
            )
        # Copy before constructing: merge keys (`<<`) rewrite mapping nodes in place.
        pairs = list(root.value) if isinstance(root, yaml.MappingNode) else []
        return root, pairs, _construct(loader, root) if root is not None else None
    finally:
        loader.dispose()


def _describe(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        problem = exc.problem or exc.context or "parse error"
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(exc)


def _detect_eol(body: str) -> str:
    first = body.find("\n")
    return "\r\n" if first > 0 and body[first - 1] == "\r" else "\n"


def _mapping_root(root: yaml.Node | None, data: Any, path: str) -> yaml.MappingNode | None:
    if isinstance(root, yaml.MappingNode):
        return root
    # `---` alone composes to a zero-width null scalar: as empty as an empty file.
    if root is None or (data is None and root.start_mark.index == root.end_mark.index):
        return None
    raise YamlEditError(
        f"{path}: expected a mapping at the top level, found {type(data).__name__}. "
        "File not modified."
    )


# --------------------------------------------------------------------------- the target key


@dataclass(frozen=True)
class _Target:
    key: str
    key_node: yaml.Node | None  # None: the key is absent
    value: yaml.Node | None

    @classmethod
    def find(cls, doc: _Doc, key: str, path: str) -> _Target:
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

    def check_type(self, doc: _Doc, path: str) -> None:
        loaded = doc.data[self.key]
        if loaded is not None and not isinstance(loaded, list):
            raise YamlEditError(
                f"{path}: `{self.key}` must be a list, found {type(loaded).__name__}. "
                "File not modified."
            )

    def items(self, doc: _Doc) -> list[Any]:
        return list(doc.data[self.key] or []) if self.key_node is not None else []

    def is_empty(self, doc: _Doc) -> bool:
        """Absent, null, or `[]` with nothing but spaces inside: new items become a block list."""
        if self.value is None or isinstance(self.value, yaml.ScalarNode):
            return True
        node = self.value
        if not isinstance(node, yaml.SequenceNode) or node.value:
            return False
        start = max(node.start_mark.index, _after_properties(doc.body, node))
        inside = doc.body[start : node.end_mark.index]
        return inside.strip(" \t\r\n[]") == "" and inside.count("[") == 1


def _after_properties(body: str, node: yaml.Node) -> int:
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


def _is_key(node: yaml.Node, key: str) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == _STR_TAG and node.value == key


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class _Plan:
    edits: list[_Edit]
    block: _NewBlock | None = None  # new block items, inside one of the edits


def _plan(
    doc: _Doc,
    target: _Target,
    removed: list[int],
    new: _New,
    path: str,
) -> _Plan:
    if target.is_empty(doc):
        return _plan_fill(doc, target, new, path)
    seq = target.value
    assert isinstance(seq, yaml.SequenceNode)
    _check_items_in_order(seq, target.key, path)
    if seq.flow_style:
        return _Plan(_plan_flow(doc, seq, removed, new, path))
    return _plan_block(doc, target, seq, removed, new, path)


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


def _apply(body: str, edits: list[_Edit]) -> str:
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


def _plan_fill(doc: _Doc, target: _Target, new: _New, path: str) -> _Plan:
    if doc.root is not None and doc.root.flow_style:
        raise YamlEditError(
            f"{path}: the top level is a flow mapping ({{...}}); mcpsync cannot add a block "
            f"list `{target.key}` to it. File not modified."
        )
    if not new.plain:  # `tools: []` or null and nothing to add: already right
        return _Plan([])
    body, eol = doc.body, doc.eol
    key_col = _column(body, doc.root.start_mark.index) if doc.root is not None else 0
    block = _NewBlock.render(new, _BlockLayout(key_col + 2, 2), eol, key_col)
    if target.key_node is None or target.value is None:
        at = _document_end(doc)
        lead = eol if at and body[at - 1] != "\n" else ""
        head = f"{lead}{' ' * key_col}{_scalar(target.key)}:{eol}"  # beside the other keys
        return _Plan([(at, at, head + block.text)], block)
    value = target.value
    cut = _colon_end(body, target.key_node, target.key, path)
    if isinstance(value, yaml.SequenceNode):  # `[]`, maybe after an anchor or `!!seq`: keep them
        cut = max(cut, _after_properties(body, value))
    value_end = value.end_mark.index
    after = _line_end_from(body, value_end)
    lead = eol if after == len(body) and not body.endswith("\n") else ""
    # Drop ` ~` / ` []` but keep a comment that follows on the key's line.
    return _Plan([(cut, value_end, ""), (after, after, lead + block.text)], block)


def _document_end(doc: _Doc) -> int:
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


@dataclass(frozen=True)
class _BlockLayout:
    dash_col: int  # column of `-`
    offset: int  # from `-` to the item's keys


@dataclass(frozen=True)
class _BlockList:
    """Line geometry of a block list, computed only for the items an edit touches."""

    body: str
    seq: yaml.SequenceNode
    path: str

    def dash(self, i: int) -> tuple[int, int]:
        """(line start, index of `-`) for item i; its content may sit lines below the dash."""
        body, item_start = self.body, self.seq.value[i].start_mark.index
        line = _line_start(body, item_start)
        head = body[line:item_start]
        while not head.lstrip(" \t").startswith("-"):
            if line == 0 or (head.strip() and not head.lstrip().startswith("#")):
                raise YamlEditError(f"{self.path}: unsupported list layout. File not modified.")
            end, line = line, _line_start(body, line - 1)
            head = body[line:end]
        return line, line + len(head) - len(head.lstrip(" \t"))

    def span(self, i: int) -> tuple[int, int]:
        """Item i as whole lines: its dash line through its last line's ending."""
        nodes = self.seq.value
        if i + 1 < len(nodes):
            limit = self.dash(i + 1)[0]
        else:
            limit = _line_start(self.body, self.seq.end_mark.index)
        start, dash = self.dash(i)
        return start, _item_end(self.body, nodes[i], limit, dash - start)

    def layout(self) -> _BlockLayout:
        """The siblings' dash column and dash-to-key offset (the first block mapping's)."""
        for i, node in enumerate(self.seq.value):
            # The mapping's own mark, not its first key's: merge keys (`<<`) reorder pairs.
            if isinstance(node, yaml.MappingNode) and not node.flow_style:
                line, dash = self.dash(i)
                offset = _column(self.body, node.start_mark.index) - (dash - line)
                if offset > 1:
                    return _BlockLayout(dash - line, offset)
        line, dash = self.dash(0)
        return _BlockLayout(dash - line, 2)


def _plan_block(
    doc: _Doc,
    target: _Target,
    seq: yaml.SequenceNode,
    removed: list[int],
    new: _New,
    path: str,
) -> _Plan:
    items = _BlockList(doc.body, seq, path)
    assert target.key_node is not None
    key_col = _column(doc.body, target.key_node.start_mark.index)
    block = _NewBlock.render(new, items.layout(), doc.eol, key_col) if new.plain else None
    text = block.text if block else ""
    if not removed:
        end = items.span(len(seq.value) - 1)[1]
        lead = doc.eol if end == len(doc.body) and not doc.body.endswith("\n") else ""
        return _Plan([(end, end, lead + text)], block)
    edits = [(*items.span(i), text if i == removed[0] else "") for i in removed]
    if len(removed) == len(seq.value) and not new.plain:
        # An emptied list stays a list, not null: `[]` after the key, or after its anchor or
        # tag (`tools: !!seq []`).
        at = _colon_end(doc.body, target.key_node, target.key, path)
        at = max(at, _after_properties(doc.body, seq))
        edits.append((at, at, " []"))
    return _Plan(edits, block)


def _item_end(body: str, node: yaml.Node, limit: int, dash_col: int) -> int:
    """End of the item's last line, including its trailing comment and line ending.

    A block collection's end mark points at the next token, past any comment lines that
    belong to the next item, so we start from the end of its last scalar or flow collection.
    Lines up to ``limit`` that hold more than comments still belong to the item (an alias or
    merge key, whose node carries the marks of its anchor), and so do comment lines right
    after it that are indented past the dash (`# option: x` under the item's keys).
    """
    end = _line_end_from(body, _last_leaf_end(body, node))
    pos = end
    while pos < limit:
        nxt = _line_end_from(body, pos + 1)
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
        header = _BLOCK_SCALAR_HEADER.match(body, max(start, _after_properties(body, node)))
        if header is None or "+" not in header.group():
            end = start + len(body[start:end].rstrip(" \t\r\n"))
    return end


# --- flow lists
#
# The text between two items (a gap) is split at its first line break: the head, on the
# previous item's line, holds that item's comma and its own comment; the rest is whole lines
# (comment or blank lines) and the indentation of what follows. As in block lists, a removed
# item takes its head with it, and every comment line stays where it was.


@dataclass(frozen=True)
class _FlowList:
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


def _plan_flow(
    doc: _Doc,
    seq: yaml.SequenceNode,
    removed: list[int],
    new_items: _New,
    path: str,
) -> list[_Edit]:
    flow = _flow_list(doc.body, seq, path)
    new = new_items.flow()  # one flow mapping each
    join = _FlowJoin(doc, flow)
    if not flow.starts:  # `[ # comment\n]`: keep what is inside, the items go on new lines
        at = _line_start(doc.body, flow.close)
        layout = join.layout([], None)
        text = layout.indent[len(doc.eol) :] + layout.sep.join(new) + doc.eol
        return [(at, at, text)]
    return [(flow.open, flow.close, join.join(removed, new))]


class _NewLayout(NamedTuple):
    sep: str  # between new items
    indent: str  # a line break and the indentation of a new item on a line of its own


_Part = str | Callable[[_NewLayout], str]  # text, or text that depends on the new layout


@dataclass(frozen=True)
class _FlowJoin:
    """The new text between `[` and `]`: kept items, new items and the gaps between them.

    A second run, which removes the new items and writes them again, gives the same text:
    new items copy what the kept items show (their separator, their column), not what the
    removed ones did.
    """

    doc: _Doc
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
            own_line = [s for s in flow.starts if not body[_line_start(body, s) : s].strip()]
            if own_line or flow.starts:
                column = _column(body, (own_line or flow.starts)[0])
            else:
                line = body[_line_start(body, flow.open) : flow.open]
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


# --------------------------------------------------------------------------- rendering


@dataclass(frozen=True)
class _New:
    """The new items, as given and as they must read back; ``key`` (their repr, the identity
    the verification compares by) keys the caches of their renderings: a sync writes the
    same items into every file of a target."""

    items: Sequence[Mapping[str, Any]]
    plain: list[Any]
    key: str

    @classmethod
    def of(cls, items: Sequence[Mapping[str, Any]]) -> _New:
        plain = [_plain(item) for item in items]
        return cls(items, plain, repr(plain))

    def flow(self) -> list[str]:
        """Each item as one flow mapping."""
        key = ("flow", self.key)
        rendered = _RENDERED.get(key)
        if rendered is None:
            rendered = _remember(key, [_flow_mapping(i) for i in self.items])
        return list(rendered)


@dataclass(frozen=True)
class _NewBlock:
    """New items rendered as block entries, and where the key of their list sits."""

    text: str
    layout: _BlockLayout
    eol: str
    key_col: int

    @classmethod
    def render(cls, new: _New, layout: _BlockLayout, eol: str, key_col: int) -> _NewBlock:
        key = ("block", new.key, layout, eol)
        text = _RENDERED.get(key)
        if text is None:
            text = _remember(key, _render_block(new.items, layout, eol))
        return cls(text, layout, eol, key_col)

    @property
    def stand_in(self) -> str:
        """One entry at the same dash column, reading as ``_STAND_IN_VALUE``."""
        return " " * self.layout.dash_col + "- 0" + self.eol

    def with_stand_in(self, edits: list[_Edit]) -> list[_Edit]:
        """``edits`` with the stand-in where the block is (at the end of one replacement)."""
        out = []
        for start, end, text in edits:
            if text.endswith(self.text):
                text = text[: len(text) - len(self.text)] + self.stand_in
            out.append((start, end, text))
        return out


_STAND_IN_VALUE = 0
_RENDERED: dict[tuple[Any, ...], Any] = {}  # renderings of new items, by _New.key and layout
_CACHE_SIZE = 64


def _remember(key: tuple[Any, ...], value: Any) -> Any:
    if len(_RENDERED) >= _CACHE_SIZE:
        _RENDERED.clear()
    _RENDERED[key] = value
    return value


def _render_block(items: Sequence[Mapping[str, Any]], layout: _BlockLayout, eol: str) -> str:
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
        return _scalar(value)
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
    return _scalar(key)


@functools.lru_cache(maxsize=4096)  # keys and common values repeat in every entry
def _scalar(value: str) -> str:
    """A plain scalar when every reader takes it as this string, else a quoted one.

    Single quotes unless the string needs escapes: HoloDeck substitutes `${VAR}` in the raw
    text before it parses YAML, and a value with `\\` or `"` would break a double-quoted
    scalar (only a `'` breaks a single-quoted one). Escapes need double quotes.
    """
    if (
        _PLAIN.fullmatch(value)
        and value.lower() not in _YAML11_BOOLS
        and _plain_tag(value) == _STR_TAG
    ):
        return value
    if not _NEEDS_ESCAPES.search(value):
        return "'" + value.replace("'", "''") + "'"
    quoted = json.dumps(value, ensure_ascii=False)
    return _UNSAFE_IN_QUOTES.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


# --------------------------------------------------------------------------- verification


def _expected(current: list[Any], removed: list[int], new: list[Any]) -> list[Any]:
    gone = set(removed)
    at = removed[0] if removed else len(current)
    kept_after = [item for i, item in enumerate(current) if i > at and i not in gone]
    return current[:at] + new + kept_after


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:  # most values: fast
        return value
    if kind is dict or isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if _is_list(value):
        return [_plain(v) for v in value]
    return value


def _verify_block(block: _NewBlock, new: _New, key: str, path: str) -> None:
    """Check new block entries on their own: with the stand-in in their place, the edited
    file then needs only a small load (a sync writes the same entries into many files).

    Why that is no weaker than loading the edited file: the entries are whole lines at the
    list's dash column (continuation lines deeper), end with a line break and hold no
    anchor, alias, tag, directive, document marker or block scalar (they are written by
    `_render_block`: plain scalars from `_PLAIN`, quoted scalars, one-line flow
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
    head = " " * block.key_col + _scalar(key) + ":" + block.eol
    probe = head + block.stand_in + block.text + block.stand_in
    if (probe, new.key) in _VERIFIED_BLOCKS:
        return
    expected = {key: [_STAND_IN_VALUE, *new.plain, _STAND_IN_VALUE]}
    try:
        actual = load(probe, path=path)
    except YamlEditError as exc:
        raise _unsafe(path, exc) from exc
    if repr(actual) != repr(expected):
        raise YamlEditError(
            f"Could not edit {path} safely: the new `{key}` entries would not read back as "
            "intended. File not modified."
        )
    if len(_VERIFIED_BLOCKS) >= _CACHE_SIZE:
        _VERIFIED_BLOCKS.clear()
    _VERIFIED_BLOCKS.add((probe, new.key))


_VERIFIED_BLOCKS: set[tuple[str, str]] = set()


def _unsafe(path: str, exc: YamlEditError) -> YamlEditError:
    cause = exc.__cause__
    why = _describe(cause) if isinstance(cause, yaml.YAMLError) else exc.message
    return YamlEditError(
        f"Could not edit {path} safely: the result would not parse ({why}). File not modified."
    )


def _verify(out: str, doc: _Doc, key: str, new_list: list[Any], path: str) -> None:
    expected = dict(doc.data or {})
    expected[key] = new_list
    try:
        actual = load(out, path=path)
    except YamlEditError as exc:
        raise _unsafe(path, exc) from exc
    # repr, not ==: it also tells 1 from True and keeps key order.
    if repr(actual) != repr(expected):
        raise YamlEditError(
            f"Could not edit {path} safely: the edited `{key}` would not read back as "
            "intended. File not modified."
        )


# --------------------------------------------------------------------------- text positions


def _line_start(body: str, pos: int) -> int:
    return body.rfind("\n", 0, pos) + 1


def _line_end_from(body: str, pos: int) -> int:
    """pos if it starts a line, else the index after the next line break (or end of text)."""
    if pos == 0 or body[pos - 1] == "\n":
        return pos
    return body.find("\n", pos) + 1 or len(body)


def _column(body: str, pos: int) -> int:
    return pos - _line_start(body, pos)
