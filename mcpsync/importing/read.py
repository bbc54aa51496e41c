"""Read the MCP servers out of a client or HoloDeck config, for `mcpsync import`.

Each supported file is parsed with the reader sync itself uses for that format (jsonscan for
JSON/JSONC, tomlkit for Codex, yamlload for HoloDeck), and every server entry becomes a plain
`Entry` in mcp.toml's own terms: a command with args and env, or a url with headers, where
every value is either a literal that is safe to write down or a `${NAME}` reference.

The secret rule: a value is never copied into mcp.toml if it may be a secret. A reference in
the client's syntax (`${env:X}`, `${input:x}`, `$X` in Gemini, `${X:-default}`) becomes `${X}`;
a literal under a name that looks secret (TOKEN, KEY, SECRET, PASSWORD, AUTH, ...) or a value
shaped like a known token (`ghp_…`, `sk-…`, a JWT, ...) becomes `${NAME}` and NAME is listed
for the user to export.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mcpsync.errors import InputError
from mcpsync.launch.checks import REFERENCE, env_name

# the JSON kinds (where their servers are, and whether comments are allowed, is the client
# format sync writes: targets/clients.py); TOML and YAML kinds are read below
JSON_KINDS = ("claude-code", "cursor", "vscode", "gemini", "claude-desktop", "windsurf", "zed")
KINDS = (*JSON_KINDS, "codex", "holodeck-agent", "holodeck-global")

# Names that may hold a secret: the value is never copied, a reference is written instead.
# A false positive costs the user one `export`; a false negative would leak a secret.
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PWD|CREDENTIAL|AUTH|COOKIE|SESSION|API_?KEY|ACCESS_?KEY|PRIVATE|"
    r"(^|_)KEY($|_)|(^|_)PAT($|_)"
)
# Values shaped like well-known credentials, whatever their name.
_SECRET_VALUE = re.compile(
    r"^(gh[pousr]_|github_pat_|glpat-|sk-|sk_live_|rk_live_|xox[abprs]-|AKIA|ASIA|AIza|"
    r"hf_|npm_|pypi-|eyJ[A-Za-z0-9_-]{8,}\.)"
)
# VS Code's own variables (code.visualstudio.com/docs/reference/variables-reference): not
# environment variables, and no other client knows them.
_VSCODE_VARIABLES = frozenset(
    (
        *("workspaceFolder", "workspaceFolderBasename", "userHome", "cwd", "pathSeparator"),
        *("file", "fileBasename", "fileDirname", "fileExtname", "fileBasenameNoExtension"),
        *("relativeFile", "relativeFileDirname", "fileWorkspaceFolder", "execPath"),
        *("lineNumber", "selectedText", "defaultBuildTask"),
    )
)
_SWITCHES = ("", "true", "false", "yes", "no", "on", "off", "none", "0", "1")
_SCHEME_VALUE = re.compile(r"^(Bearer|Basic|Token|Bot)\s+(\S+)$", re.IGNORECASE)
_ENV_COLON = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_INPUT = re.compile(r"\$\{input:([^}]+)\}")
_DEFAULTED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):-[^}]*\}")
_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_{])")
_OTHER_BRACE = re.compile(r"\$\{([^}]*)\}")
_TRANSPORT = {
    "stdio": "stdio",
    "http": "streamable-http",
    "streamable-http": "streamable-http",
    "streamableHttp": "streamable-http",
    "sse": "sse",
}


@dataclass
class Entry:
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
    values = _Values(entry, "$" if kind == "gemini" else "")
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


# ------------------------------------------------------------------------ the secret rule


def secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(re.sub(r"[^A-Za-z0-9]", "_", name).upper()))


def secret_value(value: str) -> bool:
    return bool(_SECRET_VALUE.match(value))


@dataclass(frozen=True)
class LiteralSecret:
    """A value in mcp.toml that the import rule would not have written down (names only)."""

    key: str  # env | headers | variables | args | url
    name: str  # the env, header or variables key; `args[N]`; `url`
    written: str  # the value with the secret replaced by `${NAME}`
    exports: tuple[str, ...]  # the variables that replacement names

    @property
    def field(self) -> str:
        return self.name if self.key in ("args", "url") else f"{self.key}.{self.name}"


def literal_secrets(
    alias: str,
    *,
    env: Mapping[str, str],
    headers: Mapping[str, str],
    variables: Mapping[str, str],
    args: tuple[str, ...] | list[str],
    url: str | None,
) -> list[LiteralSecret]:
    """The values of one server (mcp.toml's `env`, `headers`, `variables`, `args`, `url`)
    that `import` would have replaced by a reference: the same rule, so what import never
    writes into mcp.toml is what `add` refuses and `lock`/`sync` warn about."""
    found: list[LiteralSecret] = []

    values = _Values(Entry("mcp.toml", "mcp.toml", alias), dollar="")

    def check(key: str, name: str, value: str, written: str) -> None:
        if written != value:
            had = set(REFERENCE.findall(value))
            exports = tuple(dict.fromkeys(n for n in REFERENCE.findall(written) if n not in had))
            found.append(LiteralSecret(key, name, written, exports))

    for name, value in env.items():
        check("env", name, value, values.env({name: value})[name])
    for name, value in headers.items():
        check("headers", name, value, values.headers({name: value})[name])
    for name, value in variables.items():
        check("variables", name, value, values.variable(name, value))
    for index, (value, written) in enumerate(zip(args, values.args(list(args)), strict=True)):
        check("args", f"args[{index}]", value, written)
    if url is not None:
        check("url", "url", url, values.url(url))
    return found


@dataclass
class _Values:
    """Turns one entry's values into mcp.toml values, recording what the user must export."""

    entry: Entry
    dollar: str  # "$": bare $NAME is a reference in this client (Gemini CLI)

    def ref(self, name: str) -> str:
        if name not in self.entry.exports:
            self.entry.exports.append(name)
        return "${" + name + "}"

    def references(self, value: str) -> str:
        """The client's reference syntax as `${NAME}`."""
        value = _ENV_COLON.sub(lambda m: self.ref(m.group(1)), value)
        value = _INPUT.sub(lambda m: self.ref(_input_name(m.group(1))), value)
        value = _DEFAULTED.sub(lambda m: self._defaulted(m.group(1)), value)
        if self.dollar:
            value = _DOLLAR.sub(lambda m: self.ref(m.group(1)), value)
        for match in REFERENCE.finditer(value):
            if not self._client_variable(match.group(1)):
                self.ref(match.group(1))
        odd = [
            m.group()
            for m in _OTHER_BRACE.finditer(value)
            if not REFERENCE.fullmatch(m.group()) or self._client_variable(m.group(1))
        ]
        if odd:
            self.entry.notes.append(
                f"{odd[0]} is a client variable mcpsync cannot write; replace it in mcp.toml"
            )
        return value

    def _client_variable(self, name: str) -> bool:
        return self.entry.kind == "vscode" and name in _VSCODE_VARIABLES

    def _defaulted(self, name: str) -> str:
        self.entry.notes.append(f"${{{name}:-…}} lost its default: export {name}")
        return self.ref(name)

    def literal(self, name: str, value: str) -> str:
        """A value with no reference: kept, unless it may be a secret."""
        if REFERENCE.search(value) or not (secret_name(name) or secret_value(value)):
            return value
        if value.lower() in _SWITCHES:  # AUTH_ENABLED = "true" is a setting, not a secret
            return value
        scheme = _SCHEME_VALUE.match(value)
        if scheme and not secret_value(value):
            return f"{scheme.group(1)} {self.ref(env_name(name))}"
        return self.ref(env_name(name))

    def named(self, what: str) -> str:
        """A variable name for a secret in an argument, url or header: ALIAS_WHAT, so two
        servers' secrets do not share one name."""
        return env_name(f"{self.entry.key}_{what.lstrip('-')}")

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        return {k: self.literal(k, self.references(v)) for k, v in env.items()}

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        out = {}
        for name, value in headers.items():
            value = self.references(value)
            wanted = self.named("TOKEN" if name.lower() == "authorization" else name)
            out[name] = self.literal(wanted, value) if self._hides(name, value) else value
        return out

    def variable(self, name: str, value: str) -> str:
        """A `variables` value (a registry {placeholder}): hidden like a header's."""
        return self.literal(self.named(name), value) if self._hides(name, value) else value

    def _hides(self, name: str, value: str) -> bool:
        return not REFERENCE.search(value) and (secret_name(name) or secret_value(value))

    def args(self, args: list[str]) -> list[str]:
        """`--token X`, `--api-key=X` and token-shaped values become references."""
        out: list[str] = []
        for arg in (self.references(a) for a in args):
            flag, eq, value = arg.partition("=")
            if eq and flag.startswith("-") and self._hides(flag, value):
                out.append(f"{flag}={self.ref(self.named(flag))}")
            elif out and _is_secret_flag(out[-1]) and not REFERENCE.search(arg):
                out.append(self.ref(self.named(out[-1])))
            elif secret_value(arg):
                out.append(self.ref(self.named("secret")))
            else:
                out.append(arg)
        return out

    def url(self, url: str) -> str:
        """Query parameters that look secret become references."""
        url = self.references(url)
        try:
            query = urlsplit(url).query
        except ValueError:  # an unclosed IPv6 bracket, say: nothing to match or carry over
            raise InputError(
                f"{self.entry.where}: url {url!r} is malformed. File not read."
            ) from None
        for name, value in parse_qsl(query, keep_blank_values=True):
            if value and self._hides(name, value):
                url = url.replace(f"{name}={value}", f"{name}={self.ref(self.named(name))}", 1)
        return url


def _is_secret_flag(arg: str) -> bool:
    return arg.startswith("-") and "=" not in arg and secret_name(arg.lstrip("-"))


def _input_name(input_id: str) -> str:
    """VS Code input ids: mcpsync's own `mcpsync-NAME` gives NAME back; others their env form."""
    return env_name(input_id.removeprefix("mcpsync-"))
