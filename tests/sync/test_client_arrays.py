"""Exact bytes for jsonedit.update_array, which keeps VS Code's `inputs` items the user wrote."""

from __future__ import annotations

from typing import Any

import pytest

from mcpsync.edit.jsonedit import JsonEditError, update_array

OURS = {"type": "promptString", "id": "mcpsync-TOKEN", "password": True}

INPUTS = """{
  // prompted once, then kept by VS Code
  "inputs": [
    {"type": "promptString", "id": "github-pat", "password": true}, // mine
    {
      "type": "promptString",
      "id": "mcpsync-OLD",
      "password": true
    },
    /* keep this note */
    {"id": "last"},
  ],
  "servers": {}
}
"""


def edit(text: str, *, comments: bool = True, **ops: Any) -> str:
    out = update_array(text, ("inputs",), file="mcp.json", comments=comments, **ops)
    again = update_array(out, ("inputs",), file="mcp.json", comments=comments)
    assert again == out
    return out


def test_remove_keeps_every_other_byte() -> None:
    assert edit(INPUTS, remove=[1]) == INPUTS.replace(
        '    {\n      "type": "promptString",\n      "id": "mcpsync-OLD",\n'
        '      "password": true\n    },\n',
        "",
    )


def test_remove_last_in_trailing_comma_style() -> None:
    assert edit(INPUTS, remove=[2]) == INPUTS.replace('    {"id": "last"},\n', "")


def test_append_follows_the_items_layout_and_trailing_commas() -> None:
    assert edit(INPUTS, append=[OURS]) == INPUTS.replace(
        '    {"id": "last"},\n',
        '    {"id": "last"},\n'
        "    {\n"
        '      "type": "promptString",\n'
        '      "id": "mcpsync-TOKEN",\n'
        '      "password": true\n'
        "    },\n",
    )


def test_replace_in_place() -> None:
    assert edit(INPUTS, replace={1: OURS}) == INPUTS.replace("mcpsync-OLD", "mcpsync-TOKEN")


def test_equal_replacement_changes_nothing() -> None:
    same = {"type": "promptString", "id": "mcpsync-OLD", "password": True}
    assert edit(INPUTS, replace={1: same}) == INPUTS


def test_remove_and_append_together() -> None:
    out = edit(INPUTS, remove=[1, 2], append=[OURS])
    assert out == (
        "{\n"
        "  // prompted once, then kept by VS Code\n"
        '  "inputs": [\n'
        '    {"type": "promptString", "id": "github-pat", "password": true}, // mine\n'
        "    {\n"  # below the last item kept, so its line comment stays with it
        '      "type": "promptString",\n'
        '      "id": "mcpsync-TOKEN",\n'
        '      "password": true\n'
        "    },\n"
        "    /* keep this note */\n"
        "  ],\n"
        '  "servers": {}\n'
        "}\n"
    )


def test_strict_json_without_trailing_commas() -> None:
    text = '{\n\t"inputs": [\n\t\t{"id": "a"},\n\t\t{"id": "b"}\n\t]\n}'
    assert edit(text, comments=False, remove=[1]) == '{\n\t"inputs": [\n\t\t{"id": "a"}\n\t]\n}'
    assert edit(text, comments=False, remove=[0, 1]) == '{\n\t"inputs": []\n}'
    assert edit(text, comments=False, append=[{"id": "c"}]) == (
        '{\n\t"inputs": [\n\t\t{"id": "a"},\n\t\t{"id": "b"},\n'
        '\t\t{\n\t\t\t"id": "c"\n\t\t}\n\t]\n}'
    )


def test_inline_array_stays_inline() -> None:
    text = '{"inputs": [{"id": "a"}], "servers": {}}\n'
    assert (
        edit(text, append=[{"id": "b"}])
        == '{"inputs": [{"id": "a"}, {"id": "b"}], "servers": {}}\n'
    )


def test_missing_array_is_created_only_to_append() -> None:
    text = '{\n    "servers": {}\n}\n'
    assert edit(text, remove=[]) == text
    assert edit(text, append=[{"id": "a"}]) == (
        '{\n    "servers": {},\n    "inputs": [\n'
        '        {\n            "id": "a"\n        }\n    ]\n}\n'
    )


def test_not_an_array_is_an_error() -> None:
    with pytest.raises(JsonEditError, match='"inputs" is an object, not a JSON array'):
        update_array('{"inputs": {}}', ("inputs",), file="f", comments=True, append=[1])
