"""Read a YAML document for yamledit: the loader, the node marks it keeps, the error wording.

We compose with libyaml's safe loader when PyYAML was built with it (else the pure-Python
one) and keep the top-level mapping's pairs as written, with their marks
(``start_mark.index`` / ``end_mark.index``) for yamledit.py to splice between. The data is
built by a small constructor for the plain documents config files are; anything else (merge
keys, cycles, uncommon tags) falls back to PyYAML's SafeConstructor, so the data is what the
safe loader would build. Every error is a YamlEditError naming the file.
"""

from __future__ import annotations

import functools
from typing import Any

import yaml
from msgspec import Struct

from mcpsync.errors import InputError

try:  # libyaml's composer is ~10x faster; its marks count characters like the pure one.
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

_BOM = "\ufeff"
STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "timestamp")
)
_RESOLVER = yaml.resolver.Resolver()


class YamlEditError(InputError):
    """A YAML file that cannot be read or edited safely; the file is left as it was."""


def load(text: str, *, path: str) -> Any:
    """Parse one YAML document safely; an invalid file raises YamlEditError naming ``path``."""
    return parse(split_bom(text)[1], path).data


class Doc(Struct, frozen=True):
    body: str
    eol: str
    root: yaml.MappingNode | None  # None: empty or comments-only document
    pairs: list[tuple[yaml.Node, yaml.Node]]  # root pairs as written (before merge keys)
    data: Any


def split_bom(text: str) -> tuple[str, str]:
    # Whether libyaml's marks count a BOM depends on what follows it; parse without it.
    return (_BOM, text[1:]) if text.startswith(_BOM) else ("", text)


@functools.lru_cache(maxsize=8192)
def plain_tag(value: str) -> str:
    """The tag a plain (unquoted) scalar with this text resolves to."""
    return str(_RESOLVER.resolve(yaml.ScalarNode, value, (True, False)))


class _Loader(_BaseLoader):
    """The safe loader with a memo on tag resolution, which runs in Python for every scalar."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            return plain_tag(value)  # no path resolvers: the tag depends on the text only
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
            if node.tag == STR_TAG:
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


def parse(body: str, path: str) -> Doc:
    try:
        root, pairs, data = _read(body, path)
    except yaml.YAMLError as exc:
        message = f"Invalid YAML in {path}: {describe(exc, body)}. File not modified."
        raise YamlEditError(message) from exc
    except UnicodeEncodeError as exc:  # libyaml takes UTF-8; lone surrogates cannot be encoded
        raise YamlEditError(f"Invalid YAML in {path}: {exc.reason}. File not modified.") from exc
    return Doc(body, _detect_eol(body), _mapping_root(root, data, path), pairs, data)


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


def describe(exc: yaml.YAMLError, text: str | None = None) -> str:
    """The problem and where, on one line (PyYAML's own str() spans several)."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        problem = exc.problem or exc.context or "parse error"
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    if isinstance(exc, yaml.reader.ReaderError):
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return f"{exc.reason}: U+{char:04X} ({_where(text, exc.position)})"
    return " ".join(str(exc).split())


def _where(text: str | None, position: int) -> str:
    if text is None:
        return f"character {position + 1}"
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"line {line}, column {column}"


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
