"""yamledit: exact-bytes edits of a top-level YAML list (HoloDeck `tools:` / `mcp_servers:`)."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from mcpsync.edit import yamledit, yamlrender
from mcpsync.edit.yamledit import YamlEditError, load, replace_list_items
from mcpsync.edit.yamlload import parse
from mcpsync.edit.yamlrender import New
from mcpsync.edit.yamlspans import BlockLayout
from mcpsync.errors import InputError

FS = {"name": "fs", "type": "mcp", "command": "npx", "args": ["-y", "@scope/fs@1.2.3"]}


def fs_block(dash: str = "  ", eol: str = "\n") -> str:
    """FS as a block item whose `-` sits after `dash`, keys two columns further."""
    keys = dash + "  "
    lines = [f"{dash}- name: fs", f"{keys}type: mcp", f"{keys}command: npx"]
    lines.append(f"{keys}args: ['-y', '@scope/fs@1.2.3']")
    return "".join(line + eol for line in lines)


FS_BLOCK = fs_block()
FS_FLOW = "{name: fs, type: mcp, command: npx, args: ['-y', '@scope/fs@1.2.3']}"
GIT = {"name": "git", "type": "mcp", "command": "uvx", "args": ["mcp-server-git==1.0.0"]}
GIT_BLOCK = "  - name: git\n    type: mcp\n    command: uvx\n    args: [mcp-server-git==1.0.0]\n"


def is_mcp(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "mcp"


def edit(text: str, new: list[dict[str, Any]] | None = None, key: str = "tools") -> str:
    items = [FS] if new is None else new
    return replace_list_items(text, key, is_mcp, items, path="agent.yaml")


# --------------------------------------------------------------------------- block lists


def test_block_list_keeps_comments_between_items_and_function_tools() -> None:
    text = (
        "name: helper  # the agent\n"
        "tools:\n"
        "  # search the docs\n"
        "  - name: search\n"
        "    type: function   # kept\n"
        "    file: tools/search.py\n"
        "\n"
        "  # old server, replaced by sync\n"
        "  - name: old\n"
        "    type: mcp\n"
        "    args: [a, b]   # its own trailing comment goes with it\n"
        "# after the list\n"
        "model:\n"
        "  provider: openai\n"
    )
    assert edit(text) == (
        "name: helper  # the agent\n"
        "tools:\n"
        "  # search the docs\n"
        "  - name: search\n"
        "    type: function   # kept\n"
        "    file: tools/search.py\n"
        "\n"
        "  # old server, replaced by sync\n" + FS_BLOCK + "# after the list\n"
        "model:\n"
        "  provider: openai\n"
    )


def test_managed_item_in_the_middle_keeps_its_position() -> None:
    text = (
        "tools:\n"
        "  - name: a\n"
        "    type: function\n"
        "  - name: old\n"
        "    type: mcp\n"
        "  - name: b\n"
        "    type: function\n"
    )
    assert edit(text, [FS, GIT]) == (
        "tools:\n"
        "  - name: a\n"
        "    type: function\n" + FS_BLOCK + GIT_BLOCK + "  - name: b\n"
        "    type: function\n"
    )


def test_scattered_managed_items_gather_at_the_first_and_comments_stay() -> None:
    text = (
        "tools:\n"
        "  - {name: m1, type: mcp}\n"
        "  # about f\n"
        "  - {name: f, type: function}\n"
        "  # about m2\n"
        "  - name: m2\n"
        "    type: mcp\n"
        "other: 1\n"
    )
    assert edit(text, [FS, GIT]) == (
        "tools:\n" + FS_BLOCK + GIT_BLOCK + "  # about f\n"
        "  - {name: f, type: function}\n"
        "  # about m2\n"
        "other: 1\n"
    )


def test_no_managed_item_appends_after_the_last_item_and_its_own_comments() -> None:
    text = (
        "tools:\n"
        "  - name: f\n"
        "    type: function\n"
        "    # option: under f's keys, so f's\n"
        "\n"
        "    # after a blank line: what follows f\n"
        "  # - name: disabled (at the dash: what follows f)\n"
        "model: x\n"
    )
    assert edit(text) == (
        "tools:\n"
        "  - name: f\n"
        "    type: function\n"
        "    # option: under f's keys, so f's\n" + FS_BLOCK + "\n"
        "    # after a blank line: what follows f\n"
        "  # - name: disabled (at the dash: what follows f)\n"
        "model: x\n"
    )


def test_a_removed_item_takes_its_indented_comments_but_not_the_next_ones() -> None:
    text = (
        "tools:\n"
        "- name: old\n"
        "  type: mcp\n"
        "  # env: {A: b}\n"
        "# about f\n"
        "- name: f\n"
        "  # option\n"
        "\n"
        "  # after a blank line: not f's\n"
        "x: 1\n"
    )
    rest = "# about f\n- name: f\n  # option\n\n  # after a blank line: not f's\nx: 1\n"
    assert edit(text, []) == "tools:\n" + rest
    assert edit(text, [{"name": "f2", "type": "mcp"}]) == "tools:\n- name: f2\n  type: mcp\n" + rest


def test_items_at_column_zero() -> None:
    text = "tools:\n- name: old\n  type: mcp\n- name: f\n  type: function\n"
    assert edit(text) == (
        "tools:\n"
        "- name: fs\n"
        "  type: mcp\n"
        "  command: npx\n"
        "  args: ['-y', '@scope/fs@1.2.3']\n"
        "- name: f\n"
        "  type: function\n"
    )


def test_four_space_mapping_inside_items() -> None:
    text = "tools:\n    -   name: f\n        type: function\n"
    new = {"name": "fs", "type": "mcp", "env": {"TOKEN": "${TOKEN}"}}
    assert edit(text, [new]) == (
        "tools:\n"
        "    -   name: f\n"
        "        type: function\n"
        "    -   name: fs\n"
        "        type: mcp\n"
        "        env:\n"
        "            TOKEN: '${TOKEN}'\n"
    )


def test_crlf_file_gets_crlf_lines() -> None:
    text = "a: 1\r\ntools:\r\n  - name: old\r\n    type: mcp\r\n  # end\r\nb: 2\r\n"
    assert edit(text) == (
        "a: 1\r\ntools:\r\n" + FS_BLOCK.replace("\n", "\r\n") + "  # end\r\nb: 2\r\n"
    )


def test_missing_final_newline_stays_missing() -> None:
    assert edit("tools:\n  - name: old\n    type: mcp") == "tools:\n" + FS_BLOCK[:-1]
    assert edit("tools:\n  - name: f\n    type: function  # c") == (
        "tools:\n  - name: f\n    type: function  # c\n" + FS_BLOCK[:-1]
    )
    # The last of two removed items ends the file: the kept newline before it must go too.
    assert edit("tools:\n  - {name: m, type: mcp}\n  - {name: f}\n  - {name: n, type: mcp}") == (
        "tools:\n" + FS_BLOCK + "  - {name: f}"
    )


def test_block_scalar_and_dash_comment_items_are_removed_whole() -> None:
    text = (
        "tools:\n"
        "  - # legacy\n"
        "    name: old\n"
        "    type: mcp\n"
        "    description: |\n"
        "      line\n"
        "      # not a comment: part of the text\n"
        "\n"
        "  # belongs to f\n"
        "  - name: f\n"
    )
    assert edit(text) == "tools:\n" + FS_BLOCK + "\n  # belongs to f\n  - name: f\n"


@pytest.mark.parametrize("indicator", [">", "|", ">-", "|2", "|-2"])
def test_blank_lines_after_a_removed_block_scalar_stay(indicator: str) -> None:
    text = (
        "tools:\n"
        "  - name: f\n"
        "\n"
        "  - name: old\n"
        "    type: mcp\n"
        f"    description: {indicator}\n"
        "      folded\n"
        "      text\n"
        "\n"
        "\n"
        "  - name: g\n"
        "model: x\n"
    )
    kept = "tools:\n  - name: f\n\n"
    rest = "\n\n  - name: g\nmodel: x\n"
    assert edit(text, []) == kept + rest
    assert edit(text) == kept + FS_BLOCK + rest
    last = text.replace("  - name: g\n", "")
    assert edit(last, []) == kept + "\n\nmodel: x\n"


@pytest.mark.parametrize("indicator", ["|+", ">+", "|2+", "|+2", "!!str |+", "&a !!str >+"])
def test_a_kept_block_scalar_keeps_its_kept_blank_lines(indicator: str) -> None:
    # With `+` the blank lines are the text's: new items go after them.
    text = f"tools:\n  - name: f\n    d: {indicator}\n      x\n\n  # c\nb: 1\n"
    head = f"tools:\n  - name: f\n    d: {indicator}\n      x\n\n"
    assert edit(text) == head + FS_BLOCK + "  # c\nb: 1\n"


def test_blank_line_after_an_empty_block_scalar_stays() -> None:
    text = "tools:\n  - name: old\n    type: mcp\n    d: |\n\n  - name: f\n"
    assert edit(text) == "tools:\n" + FS_BLOCK + "\n  - name: f\n"


def test_merge_key_on_the_last_line_goes_with_its_item() -> None:
    text = "base: &b {type: mcp}\ntools:\n  - name: old\n\n# c\n    <<: *b\n  - name: f\n"
    assert edit(text) == "base: &b {type: mcp}\ntools:\n" + FS_BLOCK + "  - name: f\n"


def test_removing_every_item_leaves_an_empty_list() -> None:
    text = "tools:  # mine\n  - name: old\n    type: mcp\n  # bye\nb: 2\n"
    assert edit(text, []) == "tools: []  # mine\n  # bye\nb: 2\n"
    assert load(edit(text, []), path="x")["tools"] == []


@pytest.mark.parametrize(
    ("text", "emptied"),
    [
        ("tools: !!seq\n  - name: old\n    type: mcp\nx: 1\n", "tools: !!seq []\nx: 1\n"),
        ("tools: &t !!seq  # mine\n  - {type: mcp}\n", "tools: &t !!seq []  # mine\n"),
        ("tools: !!seq &t\n  - {type: mcp}\n", "tools: !!seq &t []\n"),
        ("tools:\n  !!seq\n  - {type: mcp}\nb: 1\n", "tools:\n  !!seq []\nb: 1\n"),
        (
            "tools: !<tag:yaml.org,2002:seq>\n- {type: mcp}\n",
            "tools: !<tag:yaml.org,2002:seq> []\n",
        ),
    ],
)
def test_a_tagged_list_emptied_keeps_its_tag(text: str, emptied: str) -> None:
    assert edit(text, []) == emptied
    assert load(emptied, path="x")["tools"] == []
    # and filling it again writes a block list under the tag
    at = emptied.index("\n", emptied.index(" []")) + 1
    assert edit(emptied) == emptied[:at].replace(" []", "") + FS_BLOCK + emptied[at:]


def test_tabs_in_comments_and_a_bom_are_kept() -> None:
    text = "\ufeff#\tsettings\ntools:  # a\tlist\n  - name: old  # x\ty\n    type: mcp\n"
    assert edit(text) == "\ufeff#\tsettings\ntools:  # a\tlist\n" + FS_BLOCK
    text = "\ufefftools: [{name: a}, {name: old, type: mcp}]  # c\n"
    assert edit(text) == "\ufefftools: [{name: a}, " + FS_FLOW + "]  # c\n"


# --------------------------------------------------------------------------- flow lists


def test_flow_list_single_line() -> None:
    text = "tools: [ {name: a, type: function}, {name: old, type: mcp}, b ]  # c\nx: 1\n"
    assert edit(text) == ("tools: [ {name: a, type: function}, " + FS_FLOW + ", b ]  # c\nx: 1\n")


def test_flow_list_appends_and_empties() -> None:
    assert edit("tools: [{name: a}]\n") == "tools: [{name: a}, " + FS_FLOW + "]\n"
    assert edit("tools: [ {type: mcp} ]\n", []) == "tools: []\n"
    assert edit("tools: [{name: a}, {type: mcp}]\n", []) == "tools: [{name: a}]\n"
    # an emptied list loses its trailing comma: `[,]` is not YAML
    assert edit("tools: [\n  {type: mcp},\n]\n", []) == "tools: []\n"
    # the comment on the removed item's line goes with it, as in block lists
    assert edit("tools: [{type: mcp}, # c\n]\n", []) == "tools: []\n"
    assert edit("tools: [ # c\n  {type: mcp},\n]\n", []) == "tools: [ # c\n]\n"


def test_flow_list_multi_line_with_comments_and_trailing_comma() -> None:
    text = (
        "tools: [\n"
        "  {name: a, type: function},  # a stays\n"
        "  {name: old, type: mcp},  # old goes\n"
        "  {name: c,\n"
        "   type: function},\n"
        "]\n"
    )
    assert edit(text, [FS, GIT]) == (
        "tools: [\n"
        "  {name: a, type: function},  # a stays\n"
        "  " + FS_FLOW + ",\n"
        "  {name: git, type: mcp, command: uvx, args: [mcp-server-git==1.0.0]},\n"
        "  {name: c,\n"
        "   type: function},\n"
        "]\n"
    )


def test_flow_list_last_item_removed_keeps_trailing_comma_layout() -> None:
    text = "tools: [\n  {name: a},\n  {name: old, type: mcp},\n]\n"
    assert edit(text, []) == "tools: [\n  {name: a},\n]\n"


def test_flow_list_removed_last_item_keeps_the_comment_before_it() -> None:
    text = "tools: [\n  {name: f, type: function},\n  # c\n  {name: old, type: mcp}\n]\n"
    assert edit(text, []) == "tools: [\n  {name: f, type: function}\n  # c\n]\n"
    assert edit(text) == "tools: [\n  {name: f, type: function},\n  # c\n  " + FS_FLOW + "\n]\n"
    crlf = text.replace("\n", "\r\n")
    assert edit(crlf, []) == "tools: [\r\n  {name: f, type: function}\r\n  # c\r\n]\r\n"


def test_flow_list_removed_item_takes_its_own_comment_and_leaves_the_others() -> None:
    # As in block lists: comment lines stay, a removed item's comment on its line goes.
    text = (
        "tools: [  # list\n"
        "  # about old\n"
        "  {name: old, type: mcp},  # old's\n"
        "  # about a\n"
        "  {name: a},  # a's\n"
        "  {name: m, type: mcp},  # m's\n"
        "  # about b\n"
        "  {name: b},\n"
        "  {name: n, type: mcp},  # n's\n"
        "  # closing\n"
        "]\n"
    )
    assert edit(text, []) == (
        "tools: [  # list\n"
        "  # about old\n"
        "  # about a\n"
        "  {name: a},  # a's\n"
        "  # about b\n"
        "  {name: b},\n"
        "  # closing\n"
        "]\n"
    )
    assert edit(text) == (
        "tools: [  # list\n"
        "  # about old\n"
        "  " + FS_FLOW + ",\n"
        "  # about a\n"
        "  {name: a},  # a's\n"
        "  # about b\n"
        "  {name: b},\n"
        "  # closing\n"
        "]\n"
    )


def test_flow_list_last_kept_item_keeps_its_own_comment() -> None:
    text = "tools: [\n  {name: a},  # a\n  {name: old, type: mcp}  # old\n]\n"
    assert edit(text, []) == "tools: [\n  {name: a}  # a\n]\n"
    assert edit("tools: [{name: a}, {name: old, type: mcp}, ]\n", []) == "tools: [{name: a}, ]\n"
    assert edit("tools: [{name: a},\n  {name: old, type: mcp}]\n", []) == "tools: [{name: a}]\n"


def test_flow_list_items_appended_after_a_comment_leave_it_to_its_item() -> None:
    text = "tools: [\n  {name: a},  # a\n]\n"
    once = edit(text)
    assert once == "tools: [\n  {name: a},  # a\n  " + FS_FLOW + ",\n]\n"
    assert edit(once) is once  # the comment did not travel with the new item
    assert edit(once, []) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # the column of the items on lines of their own
            "tools: [{name: a}, # note\n  {name: b}]\n",
            "tools: [{name: a}, # note\n  {name: b},\n  " + FS_FLOW + "]\n",
        ),
        (  # the first item's column when none has a line of its own
            "tools: [{name: a}, # note\n]\n",
            "tools: [{name: a}, # note\n        " + FS_FLOW + ",\n]\n",
        ),
        (
            "tools:\n  [{name: a},  # note\n   {name: b}]\n",
            "tools:\n  [{name: a},  # note\n   {name: b},\n   " + FS_FLOW + "]\n",
        ),
        (  # a removed item's column, when only it had a line of its own
            "tools: [{name: a}, # note\n    {name: m, type: mcp}, {name: b}]\n",
            "tools: [{name: a}, # note\n    " + FS_FLOW + ",\n    {name: g, type: mcp},\n"
            "    {name: b}]\n",
        ),
        (  # no item at all: two more than the line of `[`
            "tools: [ # none yet\n]\n",
            "tools: [ # none yet\n  " + FS_FLOW + "\n]\n",
        ),
    ],
)
def test_new_flow_items_take_the_lists_own_column(text: str, expected: str) -> None:
    new = [FS] if "{name: m," not in text else [FS, {"name": "g", "type": "mcp"}]
    assert edit(text, new) == expected
    assert edit(expected, new) is expected


def test_flow_list_emptied_keeps_its_comment_lines() -> None:
    text = "tools: [  # list\n  # first\n  {type: mcp},  # m\n  # last\n]\n"
    assert edit(text, []) == "tools: [  # list\n  # first\n  # last\n]\n"


@pytest.mark.parametrize("comma", [",", ""])
@pytest.mark.parametrize("managed", list(itertools.product([False, True], repeat=4)))
def test_flow_list_comment_lines_survive_any_removal(comma: str, managed: tuple[bool, ...]) -> None:
    items = [{"name": f"i{k}", "type": "mcp" if m else "function"} for k, m in enumerate(managed)]
    lines = []
    for k, item in enumerate(items):
        sep = "," if k < len(items) - 1 else comma
        lines += [
            f"  # about i{k}",
            f"  {{name: {item['name']}, type: {item['type']}}}{sep}  # i{k}",
        ]
    text = "tools: [\n" + "".join(line + "\n" for line in lines) + "  # end\n]\nx: 1\n"
    for new in ([], [FS]):
        out = edit(text, new)
        kept = [item for item in items if item["type"] != "mcp"]
        expected = kept[:]
        if new:
            at = managed.index(True) if any(managed) else len(items)
            expected.insert(sum(1 for m in managed[:at] if not m), FS)
        assert load(out, path="x") == {"tools": expected, "x": 1}
        for k, m in enumerate(managed):
            assert f"  # about i{k}\n" in out
            assert (f"  # i{k}\n" in out) is not m
        assert out.endswith("  # end\n]\nx: 1\n")


# --------------------------------------------------------------------------- no list yet


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 1\ntools:\nb: 2\n", "a: 1\ntools:\n" + FS_BLOCK + "b: 2\n"),
        ("tools: ~  # none yet\nb: 2\n", "tools:  # none yet\n" + FS_BLOCK + "b: 2\n"),
        ("tools: null", "tools:\n" + FS_BLOCK[:-1]),
        ("tools: []\n", "tools:\n" + FS_BLOCK),
        ("tools: [ ]  # empty\r\n", "tools:  # empty\r\n" + FS_BLOCK.replace("\n", "\r\n")),
    ],
)
def test_null_or_empty_value_becomes_a_block_list(text: str, expected: str) -> None:
    assert edit(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: helper\n", "name: helper\ntools:\n" + FS_BLOCK),
        ("name: helper", "name: helper\ntools:\n" + FS_BLOCK[:-1]),
        ("name: helper\n# trailing\n", "name: helper\n# trailing\ntools:\n" + FS_BLOCK),
        ("", "tools:\n" + FS_BLOCK),
        ("# only comments\n\n", "# only comments\n\ntools:\n" + FS_BLOCK),
        ("# only comments", "# only comments\ntools:\n" + FS_BLOCK[:-1]),
        ("---\n", "---\ntools:\n" + FS_BLOCK),
        (
            "a: 1\n...\n# after the document\n",
            "a: 1\ntools:\n" + FS_BLOCK + "...\n# after the document\n",
        ),
    ],
)
def test_absent_key_is_appended_at_the_end(text: str, expected: str) -> None:
    assert edit(text) == expected


def test_absent_key_joins_an_indented_top_level_mapping() -> None:
    assert edit("  a: 1\n") == "  a: 1\n  tools:\n" + fs_block("    ")
    assert edit("  a: 1  # c") == "  a: 1  # c\n  tools:\n" + fs_block("    ")[:-1]


def test_global_config_key() -> None:
    text = "providers: {}\nmcp_servers:\n  - name: fs\n    type: mcp\n"
    assert edit(text, key="mcp_servers") == "providers: {}\nmcp_servers:\n" + FS_BLOCK


@pytest.mark.parametrize("text", ["", "a: 1\n", "tools:\n", "tools: []\n", "tools: [{name: f}]"])
def test_nothing_to_remove_or_add_returns_the_input(text: str) -> None:
    assert edit(text, []) is text


# --------------------------------------------------------------------------- scalars


def test_tricky_strings_are_quoted_exactly() -> None:
    new = {
        "name": "x",
        "type": "mcp",
        "description": "Files: read # write",
        "args": ["-y", "@scope/x@1.0.0", "1.10", "yes", "/workspace", "a b"],
        "env": {"TOKEN": "${TOKEN}", "ON": "on", "N": "n", "EMPTY": "", "NUM": "8080"},
        "headers": {"Authorization": "Bearer ${API_KEY}"},
        "flags": {"enabled": True, "count": 3, "none": None, "list": []},
    }
    assert edit("", [new]) == (
        "tools:\n"
        "  - name: x\n"
        "    type: mcp\n"
        "    description: 'Files: read # write'\n"
        "    args: ['-y', '@scope/x@1.0.0', '1.10', 'yes', /workspace, a b]\n"
        "    env:\n"
        "      TOKEN: '${TOKEN}'\n"
        "      'ON': 'on'\n"
        "      'N': 'n'\n"
        "      EMPTY: ''\n"
        "      NUM: '8080'\n"
        "    headers:\n"
        "      Authorization: 'Bearer ${API_KEY}'\n"
        "    flags:\n"
        "      enabled: true\n"
        "      count: 3\n"
        "      none: null\n"
        "      list: []\n"
    )


def test_strings_are_single_quoted_unless_they_need_escapes() -> None:
    new = {
        "name": "x",
        "type": "mcp",
        "env": {
            "Q": "it's ${A}'s",
            "DQ": 'say "hi" \\ C:\\path',
            "TAB": "a\tb",
            "NL": "${A}\nb",
            "NEL": "a\x85b",
        },
    }
    assert edit("", [new]) == (
        "tools:\n"
        "  - name: x\n"
        "    type: mcp\n"
        "    env:\n"
        "      Q: 'it''s ${A}''s'\n"
        "      DQ: 'say \"hi\" \\ C:\\path'\n"
        '      TAB: "a\\tb"\n'
        '      NL: "${A}\\nb"\n'
        '      NEL: "a\\u0085b"\n'
    )


# What HoloDeck 0.7.1 does before it parses a file (holodeck/config/env_loader.py).
def holodeck_substitute(text: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env[m.group(1)], text)


SECRETS = [
    "a\tb",
    'p"w',
    "C:\\x\\y",
    "\\u0041",
    "a: b # c",
    "[x], {y}",
    " lead",
    "&a *b !c",
    "%",
    "é😀",
]


@pytest.mark.parametrize("style", ["block", "flow"])
@pytest.mark.parametrize("secret", SECRETS)
def test_variable_values_survive_holodeck_substitution(style: str, secret: str) -> None:
    new = {
        "name": "x",
        "type": "mcp",
        "args": ["--token=${TOKEN}"],
        "env": {"TOKEN": "${TOKEN}"},
        "headers": {"Authorization": "Bearer ${TOKEN}"},
    }
    text = "tools:\n  - {name: a}\n" if style == "block" else "tools: [{name: a}]\n"
    loaded = yaml.safe_load(holodeck_substitute(edit(text, [new]), {"TOKEN": secret}))
    assert loaded["tools"][1] == {
        "name": "x",
        "type": "mcp",
        "args": [f"--token={secret}"],
        "env": {"TOKEN": secret},
        "headers": {"Authorization": f"Bearer {secret}"},
    }


TRICKY = [
    "${VAR}", "yes", "No", "on", "OFF", "y", "N", "true", "null", "Null", "~", "", " lead",
    "trail ", "a  b", "-y", "--rm", "-", "@scope/x@1.0.0", "1.10", "1.0", "0x1F", "0o17",
    "1e3", "1_000", ".inf", ".nan", "12:30", "2001-12-14", "<<", "=", "*", "&a", "!t", "%x",
    "|", ">", "'", '"', "\\", "a: b", "a #b", "a:b", "#x", "[a]", "{a}", "a, b", "? x",
    "- x", "line\nbreak", "tab\there", "\r", "nel\x85", "ls\u2028", "bell\x07", "del\x7f",
    "é", "😀", "bom\ufeff", "docker.io/org/img:1.2", "mcp-server-git==1.0.0", "https://x/y",
]  # fmt: skip


@pytest.mark.parametrize("style", ["block", "flow"])
def test_tricky_strings_round_trip(style: str) -> None:
    new = {"name": "x", "type": "mcp", "args": TRICKY, "env": {s: s for s in TRICKY}}
    text = "tools:\n  - {name: a}\n" if style == "block" else "tools: [{name: a}]\n"
    out = edit(text, [new])
    assert load(out, path="x")["tools"] == [{"name": "a"}, new]
    # and with PyYAML's pure-Python reader, not only the libyaml one we parse with
    assert yaml.load(out, Loader=yaml.SafeLoader)["tools"] == [{"name": "a"}, new]


def test_nested_lists_of_mappings_render_as_blocks() -> None:
    new = {"name": "x", "type": "mcp", "items": [{"k": "v", "num": 1}, "s", {}]}
    assert edit("", [new]) == (
        "tools:\n"
        "  - name: x\n"
        "    type: mcp\n"
        "    items:\n"
        "      - k: v\n"
        "        num: 1\n"
        "      - s\n"
        "      - {}\n"
    )


def test_unsupported_value_type_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="float"):
        edit("", [{"name": "x", "ratio": 0.5}])


# --------------------------------------------------------------------------- idempotence


IDEMPOTENCE_DOCS = [
    "",
    "# c\n",
    "tools:\n  - {name: m1, type: mcp}\n  # about f\n  - {name: f}\n  - {name: m2, type: mcp}\n",
    "tools: [ {name: f}, {name: m, type: mcp}, {name: g} ]\n",
    "tools: [\n  {name: m, type: mcp},  # c\n  {name: f},\n]\n",
    "tools: [  # list\n  # about m\n  {name: m, type: mcp},  # m\n\n  # end\n]\n",
    "tools: [{name: f},  # f\n  {name: m, type: mcp}, {name: g}  # g\n]\n",
    "a: 1\r\ntools:\r\n- name: m\r\n  type: mcp\r\n",
    "tools: ~",
    "\ufeffname: x\ntools:\n    -   name: f\n        type: function",
]


@pytest.mark.parametrize("text", IDEMPOTENCE_DOCS)
def test_second_run_changes_nothing(text: str) -> None:
    once = edit(text, [FS, GIT])
    assert once != text
    assert edit(once, [FS, GIT]) is once
    emptied = edit(once, [])
    assert edit(emptied, []) is emptied


def test_same_data_but_different_rendering_is_rewritten() -> None:
    text = "tools:\n  - {name: fs, type: mcp, command: npx, args: [-y, '@scope/fs@1.2.3']}\n"
    assert load(text, path="x")["tools"] == [FS]
    assert edit(text) == "tools:\n" + FS_BLOCK


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "text",
    ["tools: [a, b\n", "a: 1\n b: 2\n", "tools:\n  - a\n - b\n", "a: 'open\n", "a: \x00\n"],
)
def test_invalid_yaml_names_the_file(text: str) -> None:
    for call in (lambda: edit(text), lambda: load(text, path="agent.yaml")):
        with pytest.raises(InputError) as info:
            call()
        assert isinstance(info.value, YamlEditError)
        assert info.value.message.startswith("Invalid YAML in agent.yaml: ")
        assert info.value.message.endswith(". File not modified.")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("- a\n- b\n", "expected a mapping at the top level, found list"),
        ("just text\n", "expected a mapping at the top level, found str"),
        ("a: 1\n---\nb: 2\n", "more than one YAML document"),
        ("tools: yes\n", "`tools` must be a list, found bool"),
        ("tools: {a: 1}\n", "`tools` must be a list, found dict"),
        ("tools: []\ntools: []\n", "`tools` appears more than once"),
        ("x: &l [a]\ntools: *l\n", "`tools` is a YAML alias"),
        ("tools:\n  - &t {name: a}\n  - *t\n", "`tools` holds YAML aliases"),
        ("{a: 1}\n", "the top level is a flow mapping"),
    ],
)
def test_refused_documents(text: str, words: str) -> None:
    with pytest.raises(YamlEditError) as info:
        edit(text)
    assert info.value.message.startswith("agent.yaml")
    assert words in info.value.message
    assert info.value.message.endswith("File not modified.")


def test_an_edit_that_would_not_read_back_is_refused() -> None:
    # The removed item holds an anchor another key uses: the result would not parse.
    text = "tools:\n  - &x {name: a, type: mcp}\nother: *x\n"
    with pytest.raises(YamlEditError, match=r"^Could not edit agent\.yaml safely: .*not parse"):
        edit(text)


@pytest.fixture
def fresh_caches() -> Iterator[None]:
    """Renderings are cached across calls: a test that breaks the renderer must not leave
    its output behind."""
    yamlrender._RENDERED.clear()
    yamledit._VERIFIED_BLOCKS.clear()
    yield
    yamlrender._RENDERED.clear()
    yamledit._VERIFIED_BLOCKS.clear()


def _shifted(render: Callable[..., str], by: int) -> Callable[..., str]:
    def wrong_column(items: Any, layout: Any, eol: str) -> str:
        return render(items, BlockLayout(layout.dash_col + by, layout.offset), eol)

    return wrong_column


BROKEN_RENDERINGS: dict[str, Callable[[Callable[..., str]], Callable[..., str]]] = {
    "entries one column deeper": lambda render: _shifted(render, 1),
    "entries two columns deeper": lambda render: _shifted(render, 2),
    "entries one column less deep": lambda render: _shifted(render, -1),
    "no final line break": lambda render: lambda *a: render(*a)[:-1],
    "a value unquoted": lambda render: lambda *a: render(*a).replace("'-y'", "yes"),
    "an entry cut short": lambda render: lambda *a: render(*a).replace("    command: npx\n", ""),
    "a key glued to its value": lambda render: lambda *a: render(*a).replace("type: ", "type:"),
}


def _full_load_accepts(text: str, new_items: list[dict[str, Any]]) -> bool:
    """Whether the edit's whole result loads as intended (the check before stand-ins)."""
    new = New.of(new_items)
    doc = parse(text, "x")
    target = yamledit._Target.find(doc, "tools", "x")
    current = target.items(doc)
    removed = [i for i, item in enumerate(current) if is_mcp(item)]
    plan = yamledit._plan(doc, target, removed, new, "x")
    out = yamledit._finish(text, yamledit._apply(text, plan.edits), doc.eol)
    expected = yamledit._expected(current, removed, new.plain)
    try:
        yamledit._verify(out, doc, "tools", expected, "x")
    except YamlEditError:
        return False
    return True


@pytest.mark.usefixtures("fresh_caches")
@pytest.mark.parametrize("fault", [None, *BROKEN_RENDERINGS])
@pytest.mark.parametrize(
    "text",
    [
        "name: a\ntools:\n  - name: f\n  - {name: old, type: mcp}\nmodel: x\n",
        "tools:\n  - {name: old, type: mcp}\n  # about f\n  - name: f\n",
        "tools:\n  - name: f\n",
        "tools:\n- name: f\n- {name: old, type: mcp}\nx: 1",
        "x: 1\n",
        "tools: ~\nx: 1\n",
        "tools:\n  - name: f\n    d: |\n      text\n\n# end\n",
        "tools:\r\n    -   name: f\r\n    -   {name: old, type: mcp}\r\n",
    ],
)
def test_stand_in_check_never_accepts_what_a_full_load_refuses(
    monkeypatch: pytest.MonkeyPatch, text: str, fault: str | None
) -> None:
    # New entries are checked on their own, and the file with a stand-in in their place:
    # whatever a full load of the result would refuse, that refuses too. (It also refuses
    # entries away from the list's own column, which a full load may take.)
    if fault is not None:
        broken = BROKEN_RENDERINGS[fault](yamlrender._render_block)
        monkeypatch.setattr(yamlrender, "_render_block", broken)
    full = _full_load_accepts(text, [FS, GIT])
    yamlrender._RENDERED.clear()
    try:
        edit(text, [FS, GIT])
        fast = True
    except YamlEditError as exc:
        assert exc.message.startswith("Could not edit agent.yaml safely: ")
        fast = False
    assert full or not fast  # never accepts what a full load refuses
    if fault is None:
        assert fast and full


@pytest.mark.usefixtures("fresh_caches")
def test_a_cached_rendering_does_not_skip_checking_the_file() -> None:
    assert edit("tools:\n  - {name: x, type: mcp}\n") == "tools:\n" + FS_BLOCK  # now cached
    # Removing `old2` leaves its blank line to the kept `|+` text before it, which would
    # read one line longer: the file around the (cached) new entries is still loaded.
    text = (
        "tools:\n"
        "  - {name: old1, type: mcp}\n"
        "  - name: f\n"
        "    d: |+\n"
        "      text\n"
        "\n"
        "  - name: old2\n"
        "    type: mcp\n"
        "\n"
        "  - name: g\n"
    )
    with pytest.raises(YamlEditError, match="would not read back as intended"):
        edit(text)


def test_load_matches_pyyaml_safe_load() -> None:
    docs = [
        "a: 1\nb: [x, 2.5, true, null, 2001-12-14]\nc: {d: e}\n",
        "base: &b {k: 1}\nuse:\n  <<: *b\n  j: 2\nsame: *b\n",
        "s: !!set {a, b}\nbin: !!binary aGk=\nn: 0o17\n",
        "\ufeffa: 'q'\n",
        "",
    ]
    for doc in docs:
        assert load(doc, path="x") == yaml.load(doc, Loader=yaml.SafeLoader)
    shared = load("a: &l [1]\nb: *l\n", path="x")
    assert shared["a"] is shared["b"]


# --------------------------------------------------------------------------- bytes kept


def _managed(indent: str, eol: str, variant: int) -> str:
    lines = [
        [f"{indent}- name: old", f"{indent}  type: mcp"],
        [f"{indent}- name: old  # c", f"{indent}  type: mcp", f"{indent}  env: {{A: b}}  # t"],
        [f"{indent}- {{name: old, type: mcp}}"],
        [f"{indent}-", f"{indent}  name: old", f"{indent}  type: mcp", f"{indent}  d: |",
         f"{indent}    # text"],
    ][variant]  # fmt: skip
    return "".join(line + eol for line in lines)


def _kept(indent: str, eol: str, name: str) -> str:
    return f"{indent}# before {name}{eol}{indent}- name: {name}{eol}{indent}  type: function{eol}"


CASES = list(itertools.product(["", "  "], ["\n", "\r\n"], range(4), ["first", "middle", "last"]))


@pytest.mark.parametrize(("indent", "eol", "variant", "where"), CASES)
def test_every_byte_outside_the_removed_item_is_kept(
    indent: str, eol: str, variant: int, where: str
) -> None:
    head = f"name: x  # agent{eol}tools:   # list{eol}"
    before = _kept(indent, eol, "a") if where != "first" else ""
    after = _kept(indent, eol, "b") if where != "last" else ""
    tail = f"# end{eol}model: {{p: q}}{eol}"
    blank = eol if variant == 3 else ""  # after a block scalar: the file's, not the item's
    prefix, suffix = head + before, blank + after + tail
    text = prefix + _managed(indent, eol, variant) + suffix
    out = edit(text)
    assert out.startswith(prefix)
    assert out.endswith(suffix)
    assert out[len(prefix) : len(out) - len(suffix)] == fs_block(indent, eol)
    expected = [t for t in load(text, path="x")["tools"] if not is_mcp(t)]
    expected.insert(0 if where == "first" else 1, FS)
    assert load(out, path="x")["tools"] == expected


@pytest.mark.parametrize(
    ("head", "first", "middle", "second", "tail"),
    [
        ("tools:\n", "  - {name: m, type: mcp}\n", "  # f\n  - f\n", "  - {type: mcp}\n", ""),
        ("a: 1\ntools:\n", "- type: mcp\n  x: 1\n", "- f  # c\n", "- type: mcp\n", "b: 2\n"),
        ("tools:\n", "  - type: mcp\n", "\n  # gap\n\n", "  - type: mcp  # c\n", "# end\n"),
    ],
)
def test_two_removed_spans_keep_everything_between_and_around(
    head: str, first: str, middle: str, second: str, tail: str
) -> None:
    dash = "" if first.startswith("-") else "  "
    out = edit(head + first + middle + second + tail)
    assert out == head + fs_block(dash) + middle + tail


# --------------------------------------------------------------------------- random lists


def _random_flow_list(rnd: random.Random) -> tuple[str, list[str], list[str]]:
    """A multi-line flow list with comment lines and items' own comments: (text, comment
    lines, comments of managed items)."""
    lines, kept, gone = ["tools: [" + rnd.choice(["", "  # list"])], [], []
    n = rnd.randint(1, 5)
    for k in range(n):
        for _ in range(rnd.choice([0, 0, 1, 2])):
            kept.append(f"# line {len(kept)}")
            lines.append(rnd.choice(["  ", "", "    "]) + kept[-1])
        if rnd.random() < 0.2:
            lines.append("")
        managed = rnd.random() < 0.5
        item = f"  {{name: i{k}, type: {'mcp' if managed else 'function'}}}"
        item += "," if k < n - 1 or rnd.random() < 0.5 else ""
        if rnd.random() < 0.4:
            (gone if managed else kept).append(f"# own {k}")
            item += "  " + (gone if managed else kept)[-1]
        lines.append(item)
    if rnd.random() < 0.5:
        kept.append("# closing")
        lines.append("  " + kept[-1])
    eol = rnd.choice(["\n", "\r\n"])
    return eol.join([*lines, "]", "x: 1", ""]), kept, gone


@pytest.mark.parametrize("seed", range(40))
def test_random_flow_lists_keep_their_comments_and_settle(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(10):
        text, kept, gone = _random_flow_list(rnd)
        for new in ([], [FS], [FS, GIT]):
            out = edit(text, new)
            assert edit(out, new) is out
            for comment in kept:
                assert re.search(re.escape(comment) + r"(?!\d)", out), (text, out)
            for comment in gone:
                assert not re.search(re.escape(comment) + r"(?!\d)", out), (text, out)
            if "\r\n" in text:
                assert not re.search(r"(?<!\r)\n", out)
