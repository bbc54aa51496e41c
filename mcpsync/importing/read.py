"""Read the MCP servers out of a client or HoloDeck config, for `mcpsync import`.

Each supported file is parsed with the reader sync itself uses for that format (jsonscan for
JSON/JSONC, tomlkit for Codex, yamlload for HoloDeck), and every server entry becomes a plain
`Entry` in mcp.toml's own terms: a command with args and env, or a url with headers, where
every value is either a literal that is safe to write down or a `${NAME}` reference.

Every value goes through the secret rule (launch.secrets): a value that may be a secret is
never copied into mcp.toml; a reference is written and its name listed for the user to export.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from mcpsync.errors import InputError
from mcpsync.launch.secrets import Values

# the JSON kinds (where their servers are, and whether comments are allowed, is the client
# format sync writes: targets/clients.py); TOML and YAML kinds are read below
JSON_KINDS = ("claude-code", "cursor", "vscode", "gemini", "claude-desktop", "windsurf", "zed")
KINDS = (*JSON_KINDS, "codex", "holodeck-agent", "holodeck-global")

_TRANSPORT = {
    "stdio": "stdio",
    "http": "streamable-http",
    "streamable-http": "streamable-http",
    "streamableHttp": "streamable-http",
    "sse": "sse",
}


class Entry(Struct):
    """One server of an imported file, in mcp.toml's terms (values safe to write down)."""

    source: str  # the file, as the user named it
    kind: str
    key: str  # the entry's name in the file
    transport: str = "stdio"
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    description: str | None = None
    registry_name: str | None = None  # HoloDeck entries written by mcpsync name their server
    exports: list[str] = field(default_factory=list)  # variables to export (secrets moved out)
    notes: list[str] = field(default_factory=list)
    holodeck: dict[str, Any] = field(default_factory=dict)  # a HoloDeck tool's settings

    @property
    def where(self) -> str:
        return f"{self.source}: server '{self.key}'"


# ------------------------------------------------------------------------ which file is this


def detect_kind(path: Path, text: str) -> str:
    """The file's kind from its name and place, else from what it holds."""
    from mcpsync.sync.targets.detect import file_kind

    kind = file_kind(path, text)
    if kind is not None:
        return kind
    raise InputError(
        f"{path}: cannot tell which client's config this is. File not read.",
        hint=f"pass --kind, one of: {', '.join(KINDS)}",
    )


# ------------------------------------------------------------------------ reading a file


def read_entries(path: Path, source: str, text: str, kind: str) -> list[Entry]:
    """Every MCP server entry of the file, in file order."""
    raw = _raw_servers(path, text, kind)
    return [read_entry(source, kind, key, value) for key, value in raw.items()]


def _raw_servers(path: Path, text: str, kind: str) -> dict[str, Any]:
    if kind in JSON_KINDS:
        from mcpsync.edit import jsonscan
        from mcpsync.sync.targets import client_format

        fmt = client_format(kind)  # read as sync reads it: comments where the client allows
        data: Any = jsonscan.load(text, path=str(path), comments=fmt.comments)
        for key in fmt.map_key:
            data = data.get(key) if isinstance(data, dict) else None
        return _mapping(data, path, ".".join(fmt.map_key))
    if kind == "codex":
        from mcpsync.sync.targets.codex import MAP_KEY, _parse

        return _mapping(_parse(text, path).unwrap().get(MAP_KEY), path, MAP_KEY)
    from mcpsync.edit import yamlload

    data = yamlload.load(text, path=str(path))
    key = "tools" if kind == "holodeck-agent" else "mcp_servers"
    items = data.get(key) if isinstance(data, dict) else None
    if items is None:
        return {}
    if not isinstance(items, list):
        raise InputError(f"{path}: `{key}` is not a list. File not read.")
    mcp = [i for i in items if isinstance(i, dict) and i.get("type", "mcp") == "mcp"]
    if kind == "holodeck-agent":
        mcp = [i for i in mcp if i.get("type") == "mcp"]  # other tools are not MCP servers
    return {str(item.get("name")): item for item in mcp}


def _mapping(value: Any, path: Path, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{path}: `{where}` is not a map of servers. File not read.")
    return value


_KNOWN = {
    "type",
    "command",
    "args",
    "env",
    "url",
    "httpUrl",
    "serverUrl",
    "headers",
    "http_headers",
    "env_vars",
    "env_http_headers",
    "bearer_token_env_var",
    "name",
    "description",
    "transport",
    "registry_name",
    "source",
    "enabled",
}


def read_entry(source: str, kind: str, key: str, raw: Any) -> Entry:
    """One server entry of a `kind` file (`raw` as parsed) in mcp.toml's terms."""
    entry = Entry(source, kind, key)
    if not isinstance(raw, dict):
        raise InputError(f"{entry.where} is not an object. File not read.")
    if isinstance(raw.get("command"), dict):  # Zed's older form: command {path, args, env}
        raw = {**raw, **raw["command"], "command": raw["command"].get("path")}
    values = Values(entry, "$" if kind == "gemini" else "")
    entry.command = _text(entry, raw, "command")
    entry.args = values.args(_strings(entry, raw, "args"))
    entry.env = values.env(_text_map(entry, raw, "env"))
    for name in _strings(entry, raw, "env_vars"):  # Codex forwards these by name
        entry.env.setdefault(name, "${" + name + "}")
    url = _text(entry, raw, "url") or _text(entry, raw, "httpUrl") or _text(entry, raw, "serverUrl")
    entry.url = values.url(url) if url else None
    entry.headers = values.headers(_text_map(entry, raw, "headers"))
    entry.headers.update(values.headers(_text_map(entry, raw, "http_headers")))
    for header, var in _text_map(entry, raw, "env_http_headers").items():
        entry.headers[header] = "${" + var + "}"
    bearer = _text(entry, raw, "bearer_token_env_var")
    if bearer:
        entry.headers["Authorization"] = "Bearer ${" + bearer + "}"
    entry.transport = _transport(entry, raw)
    if kind.startswith("holodeck"):
        from mcpsync.manifest.holodeck import of_entry, parse

        entry.description = _text(entry, raw, "description")
        entry.registry_name = _text(entry, raw, "registry_name")
        entry.holodeck = parse({"holodeck": of_entry(raw)}, entry.where)  # as mcp.toml's
    dropped = sorted(set(raw) - _KNOWN - set(entry.holodeck))
    if dropped:
        entry.notes.append(f"not carried over: {', '.join(dropped)}")
    if not entry.command and not entry.url:
        raise InputError(f"{entry.where} has neither a command nor a url. File not read.")
    return entry


def _transport(entry: Entry, raw: Mapping[str, Any]) -> str:
    declared = raw.get("transport") or raw.get("type")
    if not entry.url:
        return "stdio"
    if isinstance(declared, str) and _TRANSPORT.get(declared, "stdio") != "stdio":
        return _TRANSPORT[declared]
    if entry.kind == "gemini" and "httpUrl" not in raw:
        return "sse"  # Gemini CLI: `url` is SSE, `httpUrl` streamable HTTP
    return "streamable-http"


def _text(entry: Entry, raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None or isinstance(value, str):
        return value or None
    raise InputError(f"{entry.where}: `{key}` is not a string. File not read.")


def _strings(entry: Entry, raw: Mapping[str, Any], key: str) -> list[str]:
    value = raw.get(key) or []
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return [str(v) for v in value]
    raise InputError(f"{entry.where}: `{key}` is not a list of strings. File not read.")


def _text_map(entry: Entry, raw: Mapping[str, Any], key: str) -> dict[str, str]:
    value = raw.get(key) or {}
    if isinstance(value, dict) and all(isinstance(v, str | int | float) for v in value.values()):
        return {str(k): str(v) for k, v in value.items()}
    raise InputError(f"{entry.where}: `{key}` is not a map of strings. File not read.")
