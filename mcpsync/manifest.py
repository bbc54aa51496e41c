"""mcp.toml: parse and validate strictly; plain values out, InputError on anything odd."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpsync.errors import InputError, InvalidConstraint

ALIAS_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
PACKAGES = ("npm", "pypi", "oci", "nuget", "mcpb", "remote")
TRANSPORTS = ("stdio", "streamable-http", "sse")
TARGET_KINDS = (
    "holodeck-agent",
    "holodeck-global",
    "claude-code",
    "cursor",
    "vscode",
    "codex",
    "gemini",
    "claude-desktop",
    "windsurf",
    "zed",
)

TOP_KEYS = ("registry", "servers", "targets")
REGISTRY_KEYS = ("url",)
REGISTRY_SERVER_KEYS = (
    "name",
    "version",
    "args",
    "env",
    "headers",
    "variables",
    "package",
    "transport",
    "prereleases",
    "description",
)
CUSTOM_SERVER_KEYS = ("command", "url", "args", "env", "headers", "transport", "description")
TARGET_KEYS = ("kind", "path", "servers", "scope")


@dataclass(frozen=True)
class ServerSpec:
    """One [servers.ALIAS] table. Either a registry server (`name`) or a custom one."""

    alias: str
    name: str | None = None
    version: str = "*"
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    variables: Mapping[str, str] = field(default_factory=dict)
    package: str | None = None
    transport: str | None = None
    prereleases: bool = False
    description: str | None = None
    command: str | None = None
    url: str | None = None

    @property
    def is_custom(self) -> bool:
        return self.name is None

    def inputs(self) -> dict[str, Any]:
        """What mcp.toml asked, as recorded in the lock: only keys the user set, fixed order."""
        keys = CUSTOM_SERVER_KEYS if self.is_custom else REGISTRY_SERVER_KEYS[1:]
        out: dict[str, Any] = {}
        for key in keys:
            value = getattr(self, key)
            if value in (None, (), {}, False) or (key == "version" and value == "*"):
                continue
            out[key] = list(value) if isinstance(value, tuple) else _plain(value)
        return out


@dataclass(frozen=True)
class TargetSpec:
    """One [[targets]] entry, validated for shape; kind-specific checks live in targets/."""

    kind: str
    path: str | None = None
    servers: tuple[str, ...] | None = None
    scope: str | None = None
    index: int = 0  # position in mcp.toml, for messages


@dataclass(frozen=True)
class Manifest:
    path: Path
    registry_url: str | None
    servers: Mapping[str, ServerSpec]
    targets: tuple[TargetSpec, ...] = ()

    @property
    def root(self) -> Path:
        return self.path.parent


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def load(path: Path) -> Manifest:
    """Read and validate mcp.toml at `path`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(
            f"{path.name} not found in {path.parent}", hint="run `mcpsync init` to create one"
        ) from None
    except OSError as exc:
        from mcpsync.errors import EnvFailure

        raise EnvFailure(f"Cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    return parse(text, path)


def parse(text: str, path: Path) -> Manifest:
    data = _parse_toml(text, path)
    _check_keys(data, TOP_KEYS, f"{path.name}")
    registry = _table(data, "registry", path.name)
    _check_keys(registry, REGISTRY_KEYS, f"{path.name}: [registry]")
    url = registry.get("url")
    if url is not None and (not isinstance(url, str) or not url.strip()):
        raise InputError(f"{path.name}: [registry] url must be a non-empty string")
    servers_table = _table(data, "servers", path.name)
    servers = {alias: _server(path, alias, raw) for alias, raw in servers_table.items()}
    targets = _targets(path, data.get("targets", []), servers)
    return Manifest(path=path, registry_url=url, servers=servers, targets=targets)


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomlkit

        try:
            return tomlkit.parse(text).unwrap()
        except Exception as exc:  # tomlkit raises its own ParseError family
            raise InputError(f"Invalid TOML in {path}: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"Invalid TOML in {path}: {exc}") from None


def _table(data: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise InputError(f"{where}: `{key}` must be a table")
    return value


def _check_keys(table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise InputError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(k) for k in unknown)}",
            hint=f"allowed keys: {', '.join(allowed)}",
        )


def _server(path: Path, alias: str, raw: Any) -> ServerSpec:
    where = f"{path.name}: server '{alias}'"
    if not ALIAS_RE.match(alias):
        raise InputError(
            f"{path.name}: invalid server alias '{alias}'",
            hint="aliases start with a letter or digit and hold only letters, digits, '-' and '_'",
        )
    if not isinstance(raw, dict):
        raise InputError(f"{where}: [servers.{alias}] must be a table")
    has_name = "name" in raw
    has_custom = "command" in raw or "url" in raw
    if has_name and has_custom:
        raise InputError(
            f"{where}: has both `name` and `{'command' if 'command' in raw else 'url'}`",
            hint="a registry server has `name`; a custom server has `command` or `url`, not both",
        )
    if not has_name and not has_custom:
        raise InputError(
            f"{where}: needs `name` (a registry server) or `command`/`url` (a custom server)"
        )
    if has_name:
        return _registry_server(where, alias, raw)
    return _custom_server(where, alias, raw)


def _registry_server(where: str, alias: str, raw: dict[str, Any]) -> ServerSpec:
    _check_keys(raw, REGISTRY_SERVER_KEYS, where)
    name = _str(raw, "name", where)
    if name is None or not NAME_RE.match(name):
        raise InputError(
            f"{where}: `name` {name!r} is not a registry name",
            hint="registry names look like 'io.github.owner/server-name' (exactly one '/')",
        )
    version = _str(raw, "version", where) or "*"
    _check_constraint(version, where)
    prereleases = raw.get("prereleases", False)
    if not isinstance(prereleases, bool):
        raise InputError(f"{where}: `prereleases` must be true or false")
    return ServerSpec(
        alias=alias,
        name=name,
        version=version,
        prereleases=prereleases,
        package=_choice(raw, "package", PACKAGES, where),
        **_common(raw, where),
        variables=_str_map(raw, "variables", where, names=False),
    )


def _custom_server(where: str, alias: str, raw: dict[str, Any]) -> ServerSpec:
    _check_keys(raw, CUSTOM_SERVER_KEYS, where)
    command, url = _str(raw, "command", where), _str(raw, "url", where)
    if command is not None and url is not None:
        raise InputError(f"{where}: has both `command` and `url`; a server is one or the other")
    if url is not None and not re.match(r"^https?://[^\s]+$", url):
        raise InputError(f"{where}: `url` must be an http:// or https:// URL, got {url!r}")
    if command is not None and not command.strip():
        raise InputError(f"{where}: `command` is empty")
    return ServerSpec(alias=alias, command=command, url=url, **_common(raw, where))


def _common(raw: dict[str, Any], where: str) -> dict[str, Any]:
    return {
        "args": _str_list(raw, "args", where),
        "env": _str_map(raw, "env", where, names=True),
        "headers": _str_map(raw, "headers", where, names=False),
        "transport": _choice(raw, "transport", TRANSPORTS, where),
        "description": _str(raw, "description", where),
    }


def _check_constraint(text: str, where: str) -> None:
    from mcpsync.versions import Constraint

    try:
        Constraint.parse(text)
    except InvalidConstraint as exc:
        # versions.py says "invalid version constraint 'X': REASON; accepted: FORMS": keep the
        # reason on the error line and move the (long) list of forms to the hint.
        detail = exc.message
        prefix = f"invalid version constraint {text!r}: "
        detail = detail[len(prefix) :] if detail.startswith(prefix) else detail
        reason, found, accepted = detail.partition("; accepted: ")
        raise InputError(
            f"{where}: `version` {text!r} is not a valid constraint: {reason}",
            hint=f"accepted: {accepted}" if found else exc.hint,
        ) from None


def _str(raw: Mapping[str, Any], key: str, where: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(f"{where}: `{key}` must be a string")
    return value


def _choice(raw: Mapping[str, Any], key: str, choices: tuple[str, ...], where: str) -> str | None:
    value = _str(raw, key, where)
    if value is not None and value not in choices:
        raise InputError(f"{where}: `{key}` is {value!r}", hint=f"use one of: {', '.join(choices)}")
    return value


def _str_list(raw: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


def _str_map(raw: Mapping[str, Any], key: str, where: str, *, names: bool) -> dict[str, str]:
    value = raw.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise InputError(f'{where}: `{key}` must be a table of strings, like {{ KEY = "value" }}')
    for name in value:
        if names and not ENV_NAME_RE.match(name):
            raise InputError(f"{where}: invalid environment variable name {name!r} in `{key}`")
    return dict(value)


def _targets(path: Path, raw: Any, servers: Mapping[str, ServerSpec]) -> tuple[TargetSpec, ...]:
    if not isinstance(raw, list):
        raise InputError(f"{path.name}: `targets` must be an array of tables ([[targets]])")
    return tuple(_target(path, i, t, servers) for i, t in enumerate(raw))


def _target(path: Path, index: int, raw: Any, servers: Mapping[str, ServerSpec]) -> TargetSpec:
    where = f"{path.name}: [[targets]] #{index + 1}"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: must be a table")
    _check_keys(raw, TARGET_KEYS, where)
    kind = _choice(raw, "kind", TARGET_KINDS, where)
    if kind is None:
        raise InputError(f"{where}: needs `kind`", hint=f"one of: {', '.join(TARGET_KINDS)}")
    subset = raw.get("servers")
    if subset is not None:
        subset = _str_list(raw, "servers", where)
        missing = [a for a in subset if a not in servers]
        if missing:
            raise InputError(
                f"{where}: `servers` names unknown server alias {', '.join(map(repr, missing))}",
                hint=f"servers in {path.name}: {', '.join(sorted(servers)) or '(none)'}",
            )
    scope = _choice(raw, "scope", ("project", "user"), where)
    return TargetSpec(kind, _str(raw, "path", where), subset, scope, index)


# ---------------------------------------------------------------- editing (tomlkit keeps comments)

INIT_TEMPLATE = """\
# mcp.toml: the MCP servers this project uses. `mcpsync lock` pins them in mcp.lock;
# `mcpsync sync` writes them into the configs listed under [[targets]].

# [registry]
# url = "https://registry.modelcontextprotocol.io"   # the default; file:DIR for a snapshot

# A server from the registry. The key is the alias: the server's name in every config.
# [servers.filesystem]
# name = "io.github.modelcontextprotocol/server-filesystem"
# version = "^2026.8"            # ^ ~ 1.x * >= <, PEP 440, an exact version, or "latest"
# args = ["/workspace"]          # extra arguments after the package's own
# env = { LOG_LEVEL = "info" }   # "${VAR}" stays a reference, never a value
# package = "npm"                # npm | pypi | oci | nuget | mcpb | remote
# transport = "stdio"            # stdio | streamable-http | sse

# A server that is not in any registry.
# [servers.internal]
# command = "uvx"
# args = ["internal-mcp==1.4.2"]

[servers]

# Where `mcpsync sync` writes the servers.
# [[targets]]
# kind = "holodeck-agent"
# path = "agents/*/agent.yaml"
"""


def default_alias(name: str) -> str:
    """`io.github.acme/server-files` -> `server-files`: the part people say."""
    tail = name.rsplit("/", 1)[-1]
    alias = re.sub(r"[^A-Za-z0-9_-]", "-", tail).strip("-_") or "server"
    return alias if ALIAS_RE.match(alias) else f"s-{alias}"


def add_server(text: str, path: Path, alias: str, name: str, version: str | None) -> str:
    """mcp.toml text with [servers.ALIAS] added or its name/version updated.

    A new server goes after the last [servers.*] table as its own paragraph (one blank line
    before and after), every other byte untouched. An existing one is edited in place."""
    import tomlkit

    if not ALIAS_RE.match(alias):
        raise InputError(
            f"invalid server alias '{alias}'",
            hint="aliases start with a letter or digit and hold only letters, digits, '-' and '_'"
            "; pick one with --as ALIAS",
        )
    if not NAME_RE.match(name):
        raise InputError(
            f"'{name}' is not a registry server name",
            hint="registry names look like 'io.github.owner/server-name' (exactly one '/')",
        )
    doc = _edit_doc(text, path)
    servers = doc.get("servers")
    if isinstance(servers, tomlkit.items.InlineTable):
        raise InputError(
            f"{path.name}: `servers` is an inline table; `mcpsync add` edits [servers.ALIAS] "
            "tables. File not modified.",
            hint=f"rewrite it as [servers.ALIAS] tables, or add [servers.{alias}] by hand",
        )
    existing = servers.get(alias) if servers is not None else None
    if existing is None:
        fields = {"name": name, **({"version": version} if version is not None else {})}
        block = f"[servers.{alias}]\n" + "".join(
            f"{key} = {tomlkit.item(value).as_string()}\n" for key, value in fields.items()
        )
        wanted = _toml_data(text)
        wanted.setdefault("servers", {})[alias] = fields
        new = _insert_paragraph(text, block)
        if new is not None and _toml_data(new) == wanted:
            return new
        return _tomlkit_add(doc, alias, fields, text)
    if "name" not in existing:
        raise InputError(
            f"{path.name}: server '{alias}' is a custom server (command/url), not '{name}'",
            hint="choose another alias with --as ALIAS",
        )
    if existing.get("name") != name:
        raise InputError(
            f"{path.name}: server '{alias}' already names {existing.get('name')!r}",
            hint="choose another alias with --as ALIAS",
        )
    if version is not None:
        existing["version"] = version
    return tomlkit.dumps(doc)


def remove_server(text: str, path: Path, alias: str) -> str:
    """mcp.toml text without [servers.ALIAS] (and without it in target subsets).

    The table goes with the comment lines directly above its header; comments that belong to
    the next table, and the blank line between paragraphs, stay."""
    doc = _edit_doc(text, path)
    servers = doc.get("servers")
    if servers is None or alias not in servers:
        raise InputError(
            f"{path.name}: no server '{alias}' to remove",
            hint=f"servers: {', '.join(servers or ()) or '(none)'}",
        )
    wanted = _toml_data(text)
    del wanted["servers"][alias]
    for target in wanted.get("targets", []):
        if isinstance(target, dict) and alias in (target.get("servers") or []):
            target["servers"] = [a for a in target["servers"] if a != alias]
    if not wanted["servers"]:
        del wanted["servers"]  # removing the last [servers.X] may remove `servers` itself
    cut = _cut_table(text, alias)
    if cut is not None:
        new = _drop_from_subsets(cut, alias)
        got = _toml_data(new)
        if got.get("servers") == {}:
            del got["servers"]
        if got == wanted:
            return new
    del servers[alias]  # a layout the text edit does not know: let tomlkit do it
    _drop_from_subsets_doc(doc, alias)
    import tomlkit

    return tomlkit.dumps(doc)


def _edit_doc(text: str, path: Path) -> Any:
    import tomlkit

    try:
        return tomlkit.parse(text)
    except Exception as exc:  # tomlkit's ParseError family
        raise InputError(f"Invalid TOML in {path}: {exc}. File not modified.") from None


def _toml_data(text: str) -> dict[str, Any]:
    """Plain data, for checking that an edit did exactly what it meant to."""
    import tomlkit

    try:
        return dict(tomlkit.parse(text).unwrap())
    except Exception:  # an edit that broke the file: the caller falls back
        return {"": object()}


def _tomlkit_add(doc: Any, alias: str, fields: dict[str, str], text: str) -> str:
    import tomlkit

    servers = doc.get("servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.add("servers", servers)
    table = tomlkit.table()
    for key, value in fields.items():
        table[key] = value
    table.add(tomlkit.nl())  # a blank line before whatever follows
    servers.add(alias, table)
    out = tomlkit.dumps(doc)
    return out[:-1] if out.endswith("\n\n") and not text.endswith("\n\n") else out


def _drop_from_subsets(text: str, alias: str) -> str:
    doc = _edit_doc(text, Path("mcp.toml"))
    return str(doc.as_string()) if _drop_from_subsets_doc(doc, alias) else text


def _drop_from_subsets_doc(doc: Any, alias: str) -> bool:
    changed = False
    for target in doc.get("targets", []):
        subset = target.get("servers")
        if subset is not None and alias in subset:
            subset.remove(alias)  # a target subset naming a removed alias would not parse
            changed = True
    return changed


# ---------------------------------------------------------------- line-level layout

_HEADER = re.compile(r"^[ \t]*(\[\[?)([^\[\]]*)\]\]?[ \t]*(#.*)?$")
_KEY_PART = re.compile(r"""[ \t]*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)[ \t]*""")


def _header(line: str) -> tuple[bool, tuple[str, ...]] | None:
    """(is an array-of-tables header, key path) for a table header line, else None."""
    match = _HEADER.match(line.rstrip("\r\n"))
    if match is None:
        return None
    path: list[str] = []
    rest = match.group(2)
    while True:
        part = _KEY_PART.match(rest)
        if part is None:
            return None
        token = part.group(1)
        path.append(token[1:-1] if token[:1] in "\"'" else token)
        rest = rest[part.end() :]
        if not rest:
            return match.group(1) == "[[", tuple(path)
        if rest[0] != ".":
            return None
        rest = rest[1:]


def _blank(line: str) -> bool:
    return not line.strip()


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _headers(lines: list[str]) -> list[tuple[int, bool, tuple[str, ...]]]:
    found = []
    for index, line in enumerate(lines):
        parsed = _header(line)
        if parsed is not None:
            found.append((index, *parsed))
    return found


def _content_end(lines: list[str], start: int, end: int) -> int:
    """One past a table's own lines: its last key line plus comments glued under it, but not
    a trailing comment paragraph, nor comments glued to the next header."""
    last = max(i for i in range(start, end) if not _blank(lines[i]) and not _comment(lines[i]))
    stop = last + 1
    while stop < end and _comment(lines[stop]):
        stop += 1
    if stop == end and end < len(lines):  # the comments run into the next header: its own
        return last + 1
    return stop if stop == end or _blank(lines[stop]) else last + 1


def _insert_paragraph(text: str, block: str) -> str | None:
    """`block` as a paragraph after the last [servers.*] table, or at the end of the file."""
    nl = "\r\n" if "\r\n" in text else "\n"
    block = block.replace("\n", nl)
    lines = text.splitlines(keepends=True)
    headers = _headers(lines)
    ours = [i for i, aot, key in headers if not aot and key[:1] == ("servers",)]
    if ours:
        start = ours[-1]
        end = next((i for i, _, _ in headers if i > start), len(lines))
        at = _content_end(lines, start, end)
    elif "servers" in _toml_data(text):
        return None  # servers written as dotted keys or inline: not a layout to guess at
    else:
        at = len(lines)
    before, after = "".join(lines[:at]), "".join(lines[at:])
    if before and not before.endswith(("\n", "\r")):
        before += nl
    gap = "" if not before or before.endswith(nl + nl) else nl
    tail = "" if not after or after.startswith(nl) else nl
    return before + gap + block + tail + after


def _cut_table(text: str, alias: str) -> str | None:
    """`text` without the lines of [servers.ALIAS] (and its sub-tables), or None if they are
    not one contiguous run of tables."""
    lines = text.splitlines(keepends=True)
    headers = _headers(lines)
    ours = [
        n for n, (_, aot, key) in enumerate(headers) if not aot and key[:2] == ("servers", alias)
    ]
    if not ours or ours != list(range(ours[0], ours[-1] + 1)):
        return None
    start = headers[ours[0]][0]
    following = ours[-1] + 1
    end = headers[following][0] if following < len(headers) else len(lines)
    stop = _content_end(lines, start, end)
    first = start
    while first > 0 and _comment(lines[first - 1]):
        first -= 1
    if first == 0 and start > 0:  # comments from the top of the file head the file, not us
        first = start
    before, after = lines[:first], lines[stop:]
    if not before or _blank(before[-1]):
        while after and _blank(after[0]):
            after.pop(0)
    if not after:
        while before and _blank(before[-1]):
            before.pop()
    return "".join(before + after)
