"""Edit one object of a JSON or JSONC config file in place, keeping every byte we do not own.

How it works: jsonscan.py validates the file and finds the spans of its members and items
(comments and trailing commas blanked, offsets kept). Edits are (start, end, replacement)
spans on the original text; nothing outside them is rewritten. The result is read back and
compared with the intended data before it is returned.

No PyPI library did this: jsonc-edit drives Node.js and npm at run time, json-five and
json5kit parse JSON5 (a different, looser syntax) and offer no layout-aware insertion.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import msgspec
from msgspec import Struct

from mcpsync.edit.jsonscan import (
    BOM,
    Container,
    Doc,
    JsonEditError,
    Member,
    load,
    parse,
    scan_array,
    scan_object,
    skip_ws,
)
from mcpsync.jsontypes import json_type

__all__ = ["JsonEditError", "load", "update_array", "update_object"]


class _Layout(Struct):
    inline: bool  # new members go on the object's single line
    obj_indent: str
    member_indent: str
    colon: str
    item_sep: str  # whitespace after a comma, inline objects only
    unit: str
    newline: str


# ---------------------------------------------------------------------------- editing


def update_object(
    text: str,
    path: Sequence[str],
    updates: Mapping[str, Any],
    *,
    file: str,
    comments: bool,
    remove: Collection[str] = (),
    detach: dict[str, str] | None = None,
) -> str:
    """Set `updates` and delete `remove` in the object at `path`; return the new text.

    Missing objects along `path` are created only when there is something to set. A key in
    both `updates` and `remove` is set. Keys that are touched (or on `path`) and appear twice
    in their object are refused: editing one copy would leave the other to confuse readers.
    `detach`: keys whose comment lines directly above them (alone on their lines, no blank
    line between) go away with what they described; each key found with such lines is set
    to their text in it, for the caller to report.
    """
    if not updates and not remove:
        return text
    _check_serialisable(updates, file)
    bom, source, doc = _open(text, file, comments)
    ops = _plan(doc, list(path), updates, set(remove) - set(updates), file, detach)
    if not ops:
        return text
    new = _splice(source, ops, file)
    _verify(new, doc.data, list(path), updates, set(remove), file, comments)
    return bom + new


_Op = tuple[int, int, str]


def _open(text: str, file: str, comments: bool) -> tuple[str, str, Doc]:
    """(BOM, the text to edit, its parse); an empty file is edited as "{}"."""
    bom = BOM if text.startswith(BOM) else ""
    body = text[len(bom) :]
    source = body if body.strip() else "{}" + ("\r\n" if "\r\n" in body else "\n")
    doc = parse(source, file, comments)
    if not isinstance(doc.data, dict):
        raise JsonEditError(
            f"Cannot edit {file}: the top-level value is not a JSON object. File not modified."
        )
    return bom, source, doc


def _plan(
    doc: Doc,
    path: list[str],
    updates: Mapping[str, Any],
    remove: set[str],
    file: str,
    detach: dict[str, str] | None = None,
) -> list[_Op]:
    root = skip_ws(doc.masked, 0)
    obj = scan_object(doc, root)
    layout = _layout(doc, obj, parent=None)
    for depth, key in enumerate(path):
        member = _unique(obj, key, file, path[:depth])
        if member is None:
            if not updates:
                return []
            return _object_ops(doc, obj, layout, {key: _nest(path[depth + 1 :], updates)}, set())
        if not isinstance(member.value, dict):
            where = ".".join(path[: depth + 1])
            kind = json_type(member.value)
            raise JsonEditError(
                f'Cannot edit {file}: "{where}" is {kind}, not a JSON object. File not modified.'
            )
        obj = scan_object(doc, member.vstart)
        layout = _layout(doc, obj, parent=layout)
    _all_unique(obj, [*updates, *remove], file, path)
    ops = _object_ops(doc, obj, layout, updates, remove)
    return ops + (_detach_ops(doc.text, obj, detach) if detach is not None else [])


def _detach_ops(text: str, obj: Container, detach: dict[str, str]) -> list[_Op]:
    """Delete the comment lines directly above each member named in `detach` (a mutable
    mapping: the text found is recorded under the key)."""
    ops: list[_Op] = []
    for m in obj.members:
        if m.key not in detach:
            continue
        line = text.rfind("\n", 0, m.start) + 1
        if text[line : m.start].strip(" \t"):
            continue  # the member does not start its line: nothing above is its own
        first = line
        while first > 0:
            prev = text.rfind("\n", 0, first - 1) + 1
            said = text[prev:first].strip()
            if not (said.startswith("//") or (said.startswith("/*") and said.endswith("*/"))):
                break
            first = prev
        if first < line:
            ops.append((first, line, ""))
            detach[m.key] = text[first:line]
    return ops


def _all_unique(obj: Container, keys: Sequence[str], file: str, where: list[str]) -> None:
    """_unique for many keys in one pass over the members (10,000 servers: not 10,000 passes)."""
    counts = collections.Counter(m.key for m in obj.members)
    for key in keys:
        if counts[key] > 1:
            _unique(obj, key, file, where)  # raises, worded in one place


def _unique(obj: Container, key: str, file: str, where: list[str]) -> Member | None:
    found = [m for m in obj.members if m.key == key]
    if len(found) > 1:
        place = ".".join(where) or "the top-level object"
        raise JsonEditError(
            f'Cannot edit {file}: key "{key}" appears {len(found)} times in {place}; '
            "remove the duplicate by hand. File not modified."
        )
    return found[0] if found else None


def _nest(path: Sequence[str], leaf: Mapping[str, Any]) -> Any:
    value: Any = dict(leaf)
    for key in reversed(path):
        value = {key: value}
    return value


def _object_ops(
    doc: Doc, obj: Container, layout: _Layout, updates: Mapping[str, Any], remove: set[str]
) -> list[_Op]:
    existing = {m.key: m for m in obj.members}
    changed = [(existing[k], v) for k, v in updates.items() if k in existing]
    removed = [m for m in obj.members if m.key in remove]
    new = [_member_text(k, v, layout) for k, v in updates.items() if k not in existing]
    return _container_ops(doc, obj, layout, changed, removed, new)


def _container_ops(
    doc: Doc,
    box: Container,
    layout: _Layout,
    changed: list[tuple[Member, Any]],
    removed: list[Member],
    new: list[str],
) -> list[_Op]:
    """Replace the values of `changed`, delete `removed`, add the member texts `new`."""
    ops: list[_Op] = []
    for m, value in changed:
        if _canon(m.value) != _canon(value):
            indent = _line_indent(doc.text, m.start) or layout.member_indent
            ops.append((m.vstart, m.vend, _dump(value, layout, indent)))
    gone = {id(m) for m in removed}
    survivors = [m for m in box.members if id(m) not in gone]
    if removed and not survivors and not new and not doc.has_comment(box.start, box.end):
        return [(box.start + 1, box.end, "")]  # nothing left to keep: write "{}" or "[]"
    ops += [_removal(doc.text, m) for m in removed]
    trailing_style = bool(box.members) and box.members[-1].comma is not None
    last = survivors[-1] if survivors else None
    if removed and last is not None and not new and not trailing_style and last.comma is not None:
        ops.append((last.comma, last.comma + 1, ""))  # it is now the last member
    if new:
        if last is None:
            ops += _insert_first(doc, box, layout, new, trailing_style)
        else:
            ops += _insert_after(doc, box, layout, last, new, trailing_style)
    return ops


def _removal(text: str, m: Member) -> _Op:
    """Delete a member with its own comma, and its line if it sat alone on it."""
    end = m.comma + 1 if m.comma is not None else m.vend
    line_start = text.rfind("\n", 0, m.start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if not text[line_start : m.start].strip(" \t") and not text[end:line_end].strip(" \t\r"):
        return (line_start, min(line_end + 1, len(text)), "")
    after = _skip_blanks(text, end)
    if m.comma is not None and text[after : after + 1] not in ("\r", "\n"):
        return (m.start, after, "")
    # Nothing of ours follows on the line: take the blanks before it, so neither "1, }"
    # nor a "/* note */ " with a dangling blank is left behind.
    start = m.start
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return (start, after if m.comma is not None else end, "")


def _insert_after(
    doc: Doc, obj: Container, layout: _Layout, last: Member, texts: list[str], trailing: bool
) -> list[_Op]:
    ops: list[_Op] = []
    if last.comma is None:
        ops.append((last.vend, last.vend, ","))
    anchor = last.comma + 1 if last.comma is not None else last.vend
    tail = "," if trailing else ""
    if layout.inline:
        sep = "," + layout.item_sep
        ops.append((anchor, anchor, layout.item_sep + sep.join(texts) + tail))
        return ops
    nl, ind = layout.newline, layout.member_indent
    line_end = doc.text.find("\n", anchor)
    if 0 <= line_end < obj.end and not doc.masked[anchor:line_end].strip():
        # Below the last member's line, so a comment at the end of that line stays with it.
        lines = [ind + t for t in texts]
        ops.append((line_end + 1, line_end + 1, ("," + nl).join(lines) + tail + nl))
    else:
        body = "".join(f",{nl}{ind}{t}" for t in texts)[1:]
        ops.append((anchor, anchor, body + tail))
    return ops


def _insert_first(
    doc: Doc, obj: Container, layout: _Layout, texts: list[str], trailing: bool
) -> list[_Op]:
    if layout.inline:
        return [(obj.start + 1, obj.start + 1, ("," + layout.item_sep).join(texts))]
    nl, ind = layout.newline, layout.member_indent
    members = ("," + nl).join(ind + t for t in texts) + ("," if trailing else "")
    close_line = doc.text.rfind("\n", 0, obj.end) + 1
    if close_line > obj.start and not doc.text[close_line : obj.end].strip(" \t"):
        return [(close_line, close_line, members + nl)]  # before a "}" on its own line
    if not doc.masked[obj.start + 1 : obj.end].strip() and not doc.has_comment(obj.start, obj.end):
        return [(obj.start + 1, obj.end, nl + members + nl + layout.obj_indent)]
    return [(obj.end, obj.end, nl + members + nl + layout.obj_indent)]


# ---------------------------------------------------------------------------- arrays


def update_array(
    text: str,
    path: Sequence[str],
    *,
    file: str,
    comments: bool,
    replace: Mapping[int, Any] | None = None,
    remove: Collection[int] = (),
    append: Sequence[Any] = (),
) -> str:
    """Replace, delete and append items of the array at `path`; return the new text.

    Items are addressed by their index in the array as it is now; every other item keeps its
    bytes (a whole-value replace would re-serialise the user's items and drop their comments).
    A missing array is created through update_object only when there is something to append.
    An index in both `replace` and `remove` is replaced.
    """
    replace = dict(replace or {})
    if not path:
        raise ValueError("update_array needs the path of an array member")
    if not replace and not remove and not append:
        return text
    _check_serialisable({path[-1]: [*replace.values(), *append]}, file)
    bom, source, doc = _open(text, file, comments)
    found = _find_array(doc, list(path), file)
    if found is None:
        if not append:
            return text
        return update_object(
            text, path[:-1], {path[-1]: list(append)}, file=file, comments=comments
        )
    arr, layout = found
    if any(not 0 <= i < len(arr.members) for i in [*replace, *remove]):
        raise ValueError("update_array: index out of range")
    ops = _array_ops(doc, arr, layout, replace, set(remove) - set(replace), append)
    if not ops:
        return text
    new = _splice(source, ops, file)
    _verify_array(new, doc.data, list(path), replace, set(remove), append, file, comments)
    return bom + new


def _find_array(doc: Doc, path: list[str], file: str) -> tuple[Container, _Layout] | None:
    """The array at `path` (scanned like an object whose members have no keys) and its layout."""
    obj = scan_object(doc, skip_ws(doc.masked, 0))
    layout = _layout(doc, obj, parent=None)
    for depth, key in enumerate(path):
        member = _unique(obj, key, file, path[:depth])
        if member is None:
            return None
        last = depth == len(path) - 1
        wanted = list if last else dict
        if not isinstance(member.value, wanted):
            where = ".".join(path[: depth + 1])
            kind = json_type(member.value)
            what = "a JSON array" if last else "a JSON object"
            raise JsonEditError(
                f'Cannot edit {file}: "{where}" is {kind}, not {what}. File not modified.'
            )
        if last:
            arr = scan_array(doc, member.vstart)
            return arr, _array_layout(doc, arr, layout)
        obj = scan_object(doc, member.vstart)
        layout = _layout(doc, obj, parent=layout)
    return None


def _array_layout(doc: Doc, arr: Container, parent: _Layout) -> _Layout:
    layout = _layout(doc, arr, parent=parent)
    colon = parent.colon  # items have no keys: objects inside follow the file's own spacing
    first = arr.members[0] if arr.members else None
    if first is not None and isinstance(first.value, dict) and first.value:
        colon = _layout(doc, scan_object(doc, first.vstart), parent=parent).colon
    item_sep = " " if colon.endswith(" ") else ""
    if len(arr.members) > 1 and first is not None and first.comma is not None:
        gap = doc.text[first.comma + 1 : arr.members[1].start]
        item_sep = gap if not gap.strip(" \t") else item_sep
    return msgspec.structs.replace(layout, colon=colon, item_sep=item_sep)


def _array_ops(
    doc: Doc,
    arr: Container,
    layout: _Layout,
    replace: Mapping[int, Any],
    remove: set[int],
    append: Sequence[Any],
) -> list[_Op]:
    changed = [(arr.members[i], value) for i, value in replace.items()]
    removed = [m for i, m in enumerate(arr.members) if i in remove]
    new = [_dump(v, layout, layout.member_indent) for v in append]
    return _container_ops(doc, arr, layout, changed, removed, new)


def _verify_array(
    new: str,
    data: dict[str, Any],
    path: list[str],
    replace: Mapping[int, Any],
    remove: set[int],
    append: Sequence[Any],
    file: str,
    comments: bool,
) -> None:
    intended = json.loads(json.dumps(data))  # a deep copy
    parent = intended
    for key in path[:-1]:
        parent = parent[key]
    items = parent[path[-1]]
    kept = [replace.get(i, v) for i, v in enumerate(items) if i in replace or i not in remove]
    parent[path[-1]] = kept + list(append)
    _check_reads_back(new, intended, file, comments)


# ---------------------------------------------------------------------------- layout


def _layout(doc: Doc, obj: Container, *, parent: _Layout | None) -> _Layout:
    text = doc.text
    one_line = "\n" not in text[obj.start : obj.end]
    # An empty "{}" has no style of its own: it follows its parent (root "{}" expands).
    inline = one_line and (bool(obj.members) or (parent is not None and parent.inline))
    obj_indent = _leading_blanks(text, obj.start)
    first = obj.members[0] if obj.members else None
    member_indent = obj_indent + doc.unit
    colon, item_sep = ": ", " "
    if first is not None:
        member_indent = _line_indent(text, first.start) or member_indent
        between = text[first.key_end : first.vstart]
        if "\n" not in between and not doc.has_comment(first.key_end, first.vstart):
            colon = between  # ":" with the file's own spacing
        item_sep = " " if colon.endswith(" ") else ""
        if len(obj.members) > 1 and first.comma is not None:
            gap = text[first.comma + 1 : obj.members[1].start]
            item_sep = gap if not gap.strip(" \t") else item_sep
    elif parent is not None:
        colon, item_sep = parent.colon, parent.item_sep
    return _Layout(inline, obj_indent, member_indent, colon, item_sep, doc.unit, doc.newline)


def _leading_blanks(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _line_indent(text: str, pos: int) -> str | None:
    """The blanks before `pos` if nothing else precedes it on its line."""
    start = text.rfind("\n", 0, pos) + 1
    lead = text[start:pos]
    return lead if lead and not lead.strip(" \t") else None


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _member_text(key: str, value: Any, layout: _Layout) -> str:
    return (
        json.dumps(key, ensure_ascii=False)
        + layout.colon
        + _dump(value, layout, layout.member_indent)
    )


def _dump(value: Any, layout: _Layout, indent: str) -> str:
    if layout.inline:
        return json.dumps(
            value, ensure_ascii=False, separators=("," + layout.item_sep, layout.colon)
        )
    out = json.dumps(value, ensure_ascii=False, indent=layout.unit, separators=(",", layout.colon))
    return out.replace("\n", layout.newline + indent)


# ---------------------------------------------------------------------------- safety


def _canon(value: Any) -> str:
    # Distinguishes 1, 1.0 and true, which == does not; sort_keys makes dicts order-free.
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _check_serialisable(updates: Mapping[str, Any], file: str) -> None:
    for key, value in updates.items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise JsonEditError(
                f'Cannot write "{key}" to {file}: not a JSON value ({err}). File not modified.'
            ) from None


def _splice(text: str, ops: list[_Op], file: str) -> str:
    out: list[str] = []
    cur = 0
    for start, end, rep in sorted(ops, key=lambda op: (op[0], op[1])):
        if start < cur:
            if rep:
                raise _unsafe(file, "overlapping edits")
            if end <= cur:
                continue
            start = cur  # two deletions that overlap: delete their union
        out += (text[cur:start], rep)
        cur = end
    out.append(text[cur:])
    return "".join(out)


def _verify(
    new: str,
    data: dict[str, Any],
    path: list[str],
    updates: Mapping[str, Any],
    remove: set[str],
    file: str,
    comments: bool,
) -> None:
    intended = dict(data)
    cur = intended
    for key in path:
        child = cur.get(key)
        cur[key] = dict(child) if isinstance(child, dict) else {}
        cur = cur[key]
    for key in remove:
        cur.pop(key, None)
    cur.update(updates)
    _check_reads_back(new, intended, file, comments)


def _check_reads_back(new: str, intended: Any, file: str, comments: bool) -> None:
    try:
        result = load(new, path=file, comments=comments)
    except JsonEditError:
        raise _unsafe(file, "the edited text does not parse") from None
    if _canon(result) != _canon(intended):
        raise _unsafe(file, "the edited text does not read back as intended")


def _unsafe(file: str, why: str) -> JsonEditError:
    return JsonEditError(f"Could not edit {file} safely: {why}. File not modified.")
