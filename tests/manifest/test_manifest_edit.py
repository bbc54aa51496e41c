"""Editing mcp.toml for `add` and `remove`: the default alias, and exact bytes for
add_server/remove_server (every byte they do not own is kept)."""

from __future__ import annotations

import collections
import json
import os
from pathlib import Path

import pytest

from mcpsync.manifest.edit import add_server, add_tables, default_alias, remove_server

PATH = Path("/project/mcp.toml")


@pytest.mark.parametrize(
    ("name", "alias"),
    [
        ("io.github.acme/server-files", "server-files"),
        ("com.example/weather", "weather"),
        ("io.github.x/my.server", "my-server"),
        ("io.github.x/_x_", "x"),
        ("io.github.x/...", "server"),
        # "mcp" and "mcp-server" say what every server is: the rest of the name says which
        ("com.notion/mcp", "notion"),
        ("com.stripe/mcp", "stripe"),
        ("io.github.acme/mcp-server", "acme"),
        ("com.cloudflare.mcp/mcp", "cloudflare"),
        ("io.github.github/github-mcp-server", "github"),
        ("io.github.x/foo-mcp-server", "foo"),
        ("io.github.x/Foo_MCP", "Foo"),
        ("io.github.x/mcp-server-brave", "brave"),
        ("io.github.x/mcp-docs", "docs"),
        ("io.github.x/mcpx", "mcpx"),
        ("io.github.x/server-mcp", "x"),
        ("mcp/mcp", "mcp"),
        ("github-mcp", "github-mcp"),  # an imported entry's key keeps its name
    ],
)
def test_default_alias(name: str, alias: str) -> None:
    assert default_alias(name) == alias


@pytest.mark.skipif(not os.environ.get("MCPSYNC_CORPUS"), reason="set MCPSYNC_CORPUS")
def test_default_aliases_of_the_corpus_rarely_collide() -> None:
    """The real-registry sample: 42 of its 362 names shared 4 aliases (`mcp` 26 times,
    `mcp-server` 12) when an alias was the server part; now 13 share 6, each a real clash
    (`docs`, `gmail`, two deployments of one template)."""
    items = json.loads(Path(os.environ["MCPSYNC_CORPUS"]).read_text(encoding="utf-8"))
    names = {item["server"]["name"] for item in items}
    counts = collections.Counter(default_alias(name) for name in names)
    shared = {alias: n for alias, n in counts.items() if n > 1}
    assert "mcp" not in shared and "mcp-server" not in shared
    assert sum(shared.values()) <= len(names) * 0.05, shared


# --- add_server / remove_server keep every other byte ----------------------------------------

B_BLOCK = '[servers.b]\nname = "io.github.x/b"\nversion = "^1"\n'
EDITS: list[tuple[str, str, str, str]] = [
    # (id, before, after add_server(b), after remove_server(a))
    (
        "no-final-newline",
        '[servers.a]\nname = "io.github.x/a"',
        '[servers.a]\nname = "io.github.x/a"\n\n' + B_BLOCK,
        "",
    ),
    (
        "sub-table",
        '[servers.a]\nname = "io.github.x/a"\n\n[servers.a.env]\nK = "v"\n\n'
        '[[targets]]\nkind = "zed"\n',
        '[servers.a]\nname = "io.github.x/a"\n\n[servers.a.env]\nK = "v"\n\n'
        + B_BLOCK
        + '\n[[targets]]\nkind = "zed"\n',
        '[[targets]]\nkind = "zed"\n',
    ),
    (
        "comment-glued-to-next-header",
        '[servers.a]\nname = "io.github.x/a"\n# about targets\n[[targets]]\nkind = "zed"\n',
        '[servers.a]\nname = "io.github.x/a"\n\n'
        + B_BLOCK
        + '\n# about targets\n[[targets]]\nkind = "zed"\n',
        '# about targets\n[[targets]]\nkind = "zed"\n',
    ),
    (
        "note-under-a-table",
        '[servers.a]\nname = "io.github.x/a"\n# note on a\n\n[[targets]]\nkind = "zed"\n',
        '[servers.a]\nname = "io.github.x/a"\n# note on a\n\n'
        + B_BLOCK
        + '\n[[targets]]\nkind = "zed"\n',
        '[[targets]]\nkind = "zed"\n',
    ),
    (
        "dotted-keys",
        '[servers]\na.name = "io.github.x/a"\n',
        '[servers]\na.name = "io.github.x/a"\n\n' + B_BLOCK,
        "[servers]\n",
    ),
    (
        "between-servers-and-targets-subset",
        '[servers.a]\nname = "io.github.x/a"\n\n[servers.c]  # c\nname = "io.github.x/c"\n\n'
        '[[targets]]\nkind = "zed"\nservers = ["a", "c"]  # both\n',
        '[servers.a]\nname = "io.github.x/a"\n\n[servers.c]  # c\nname = "io.github.x/c"\n\n'
        + B_BLOCK
        + '\n[[targets]]\nkind = "zed"\nservers = ["a", "c"]  # both\n',
        '[servers.c]  # c\nname = "io.github.x/c"\n\n'
        '[[targets]]\nkind = "zed"\nservers = ["c"]  # both\n',
    ),
]


@pytest.mark.parametrize(
    ("before", "added", "removed"), [e[1:] for e in EDITS], ids=[e[0] for e in EDITS]
)
def test_add_and_remove_exact_bytes(before: str, added: str, removed: str) -> None:
    assert add_server(before, PATH, "b", "io.github.x/b", "^1") == added
    assert remove_server(before, PATH, "a") == removed
    # Removing what was added gives the file back (with a final newline), except that a
    # comment glued to the next header keeps the blank line `add` put above it.
    back = remove_server(added, PATH, "b")
    assert back == (before if before.endswith("\n") else before + "\n") or (
        back == before.replace("\n# about targets", "\n\n# about targets")
    )


@pytest.mark.parametrize(
    "before",
    ["", '[registry]\nurl = "file:r"  # snapshot\n'],
    ids=["empty-file", "registry-only"],
)
def test_add_to_a_file_without_servers(before: str) -> None:
    expected = (before + "\n" if before else "") + B_BLOCK
    assert add_server(before, PATH, "b", "io.github.x/b", "^1") == expected


# --- add_tables (`import`) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (  # the text edit
            '[servers.a]\ncommand = "x"\n',
            '[servers.a]\ncommand = "x"\n\n[servers.b]\ncommand = "y"\nenv = { A = "1" }\n\n'
            '[[targets]]\nkind = "cursor"\n',
        ),
        (  # dotted keys: a layout the text edit does not know, tomlkit writes it
            'servers.a.command = "x"\n',
            'servers.a.command = "x"\n\n[servers.b]\ncommand = "y"\nenv = { A = "1" }\n'
            '[[targets]]\nkind = "cursor"\n',
        ),
    ],
    ids=["text", "tomlkit"],
)
def test_add_tables_writes_inline_tables_alike_either_way(before: str, expected: str) -> None:
    tables = {"b": {"command": "y", "env": {"A": "1"}}}
    assert add_tables(before, PATH, tables, [{"kind": "cursor"}]) == expected
