"""Editing mcp.toml for `add` and `remove`: the default alias, and exact bytes for
add_server/remove_server (every byte they do not own is kept)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpsync.manifest_edit import add_server, add_tables, default_alias, remove_server

PATH = Path("/project/mcp.toml")


@pytest.mark.parametrize(
    ("name", "alias"),
    [
        ("io.github.acme/server-files", "server-files"),
        ("com.example/weather", "weather"),
        ("io.github.x/my.server", "my-server"),
        ("io.github.x/_x_", "x"),
        ("io.github.x/...", "server"),
    ],
)
def test_default_alias(name: str, alias: str) -> None:
    assert default_alias(name) == alias


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
