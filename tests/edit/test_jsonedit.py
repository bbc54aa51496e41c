"""Exact-bytes tests for the JSON/JSONC span editor."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest

from mcpsync.edit import jsonedit
from mcpsync.edit.jsonedit import JsonEditError, load, update_object
from mcpsync.errors import InputError

SERVER = {"command": "npx", "args": ["-y", "pkg@1.2.3"]}
SERVER_2 = SERVER | {"env": {"TOKEN": "${TOKEN}"}}


def edit(
    text: str,
    path: tuple[str, ...],
    updates: dict[str, Any],
    *,
    remove: tuple[str, ...] = (),
    comments: bool = False,
) -> str:
    out = update_object(text, path, updates, file="cfg.json", comments=comments, remove=remove)
    # Every edit must be stable: applying it again changes nothing.
    again = update_object(out, path, updates, file="cfg.json", comments=comments, remove=remove)
    assert again == out
    return out


# ---------------------------------------------------------------- indentation units


def test_two_space_file_gets_new_map_at_the_end() -> None:
    text = '{\n  "theme": "dark",\n  "n": [1, 2]\n}\n'
    assert edit(text, ("mcpServers",), {"fs": SERVER}) == (
        "{\n"
        '  "theme": "dark",\n'
        '  "n": [1, 2],\n'
        '  "mcpServers": {\n'
        '    "fs": {\n'
        '      "command": "npx",\n'
        '      "args": [\n'
        '        "-y",\n'
        '        "pkg@1.2.3"\n'
        "      ]\n"
        "    }\n"
        "  }\n"
        "}\n"
    )


def test_four_space_file() -> None:
    text = '{\n    "mcpServers": {\n        "mine": {"command": "x"}\n    }\n}\n'
    assert edit(text, ("mcpServers",), {"fs": SERVER}) == (
        "{\n"
        '    "mcpServers": {\n'
        '        "mine": {"command": "x"},\n'
        '        "fs": {\n'
        '            "command": "npx",\n'
        '            "args": [\n'
        '                "-y",\n'
        '                "pkg@1.2.3"\n'
        "            ]\n"
        "        }\n"
        "    }\n"
        "}\n"
    )


def test_tab_file() -> None:
    text = '{\n\t"a": 1\n}\n'
    assert edit(text, ("mcpServers",), {"fs": {"command": "npx"}}) == (
        '{\n\t"a": 1,\n\t"mcpServers": {\n\t\t"fs": {\n\t\t\t"command": "npx"\n\t\t}\n\t}\n}\n'
    )


def test_indent_unit_defaults_to_two_spaces() -> None:
    assert edit("{}\n", ("mcpServers",), {"fs": {"command": "npx"}}) == (
        '{\n  "mcpServers": {\n    "fs": {\n      "command": "npx"\n    }\n  }\n}\n'
    )


# ---------------------------------------------------------------- add, replace, remove

USER_FILE = """{
  "mcpServers": {
    "mine": {
      "command": "node",
      "args": ["my-server.js"]
    },
    "other": {
      "url": "https://example.com/mcp"
    }
  },
  "numStartups": 3
}
"""


def test_add_keeps_the_users_entries_in_place() -> None:
    out = edit(USER_FILE, ("mcpServers",), {"fs": {"command": "npx"}, "gh": {"url": "u"}})
    assert out == USER_FILE.replace(
        '      "url": "https://example.com/mcp"\n    }\n',
        '      "url": "https://example.com/mcp"\n    },\n'
        '    "fs": {\n      "command": "npx"\n    },\n'
        '    "gh": {\n      "url": "u"\n    }\n',
    )


THREE = '{\n  "mcpServers": {\n    "a": 1,\n    "b": {"x": 1},\n    "c": 3\n  },\n  "z": 0\n}\n'


def test_replace_middle_entry_in_place() -> None:
    assert edit(THREE, ("mcpServers",), {"b": {"x": 2}}) == THREE.replace(
        '"b": {"x": 1}', '"b": {\n      "x": 2\n    }'
    )


def test_equal_value_is_left_byte_for_byte() -> None:
    # Same data written differently (spacing, key order, escapes) counts as unchanged.
    text = '{"mcpServers": {"b": { "y" : [1,2], "x": "\\u00fc" }}}'
    out = update_object(
        text, ("mcpServers",), {"b": {"x": "ü", "y": [1, 2]}}, file="f", comments=False
    )
    assert out is text


def test_type_change_is_a_change() -> None:
    # 1 == True in Python, but not in JSON.
    assert edit('{"a": 1}', (), {"a": True}) == '{"a": true}'
    assert edit('{"a": 1}', (), {"a": 1.0}) == '{"a": 1.0}'


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("a", '{\n  "mcpServers": {\n    "b": {"x": 1},\n    "c": 3\n  },\n  "z": 0\n}\n'),
        ("b", '{\n  "mcpServers": {\n    "a": 1,\n    "c": 3\n  },\n  "z": 0\n}\n'),
        ("c", '{\n  "mcpServers": {\n    "a": 1,\n    "b": {"x": 1}\n  },\n  "z": 0\n}\n'),
    ],
)
def test_remove_first_middle_last(key: str, expected: str) -> None:
    assert edit(THREE, ("mcpServers",), {}, remove=(key,)) == expected


def test_remove_only_member_leaves_empty_map() -> None:
    text = '{\n  "mcpServers": {\n    "a": {\n      "command": "x"\n    }\n  }\n}\n'
    assert edit(text, ("mcpServers",), {}, remove=("a",)) == '{\n  "mcpServers": {}\n}\n'


def test_remove_several_and_add() -> None:
    out = edit(THREE, ("mcpServers",), {"n": 5}, remove=("b", "c"))
    assert out == '{\n  "mcpServers": {\n    "a": 1,\n    "n": 5\n  },\n  "z": 0\n}\n'


def test_remove_all_and_add() -> None:
    out = edit(THREE, ("mcpServers",), {"n": 5}, remove=("a", "b", "c"))
    assert out == '{\n  "mcpServers": {\n    "n": 5\n  },\n  "z": 0\n}\n'


def test_remove_missing_key_or_missing_map_changes_nothing() -> None:
    assert (
        update_object(THREE, ("mcpServers",), {}, file="f", comments=False, remove=["q"]) == THREE
    )
    text = '{"a": 1}\n'
    assert update_object(text, ("mcpServers",), {}, file="f", comments=False, remove=["q"]) == text


def test_key_in_updates_and_remove_is_set() -> None:
    assert edit('{"a": 1}', (), {"a": 2}, remove=("a",)) == '{"a": 2}'


# ---------------------------------------------------------------- creating the map


def test_create_map_in_object_with_other_keys() -> None:
    text = '{\n  "a": 1,\n  "b": {\n    "c": 2\n  }\n}\n'
    assert edit(text, ("mcpServers",), {"x": 1}) == (
        '{\n  "a": 1,\n  "b": {\n    "c": 2\n  },\n  "mcpServers": {\n    "x": 1\n  }\n}\n'
    )


def test_create_map_in_empty_object() -> None:
    assert edit("{}", ("mcpServers",), {"x": 1}) == '{\n  "mcpServers": {\n    "x": 1\n  }\n}'


@pytest.mark.parametrize("text", ["", "\n", "  \n\n"])
def test_create_map_in_empty_file(text: str) -> None:
    assert edit(text, ("mcpServers",), {"x": 1}) == '{\n  "mcpServers": {\n    "x": 1\n  }\n}\n'


def test_create_nested_path() -> None:
    assert edit('{\n  "a": 1\n}', ("x", "y"), {"k": "v"}) == (
        '{\n  "a": 1,\n  "x": {\n    "y": {\n      "k": "v"\n    }\n  }\n}'
    )


def test_edit_root_object() -> None:
    assert edit('{\n  "a": 1\n}\n', (), {"b": 2}, remove=("a",)) == '{\n  "b": 2\n}\n'


# ---------------------------------------------------------------- one-line files


def test_one_line_file_stays_on_one_line() -> None:
    assert edit('{"mcpServers":{}}', ("mcpServers",), {"fs": SERVER}) == (
        '{"mcpServers":{"fs":{"command":"npx","args":["-y","pkg@1.2.3"]}}}'
    )


def test_one_line_object_keeps_its_spacing() -> None:
    text = '{"mcpServers": {"a": 1, "b": 2}}\n'
    assert edit(text, ("mcpServers",), {"c": {"x": [1]}}) == (
        '{"mcpServers": {"a": 1, "b": 2, "c": {"x": [1]}}}\n'
    )
    assert edit(text, ("mcpServers",), {}, remove=("a",)) == '{"mcpServers": {"b": 2}}\n'
    assert edit(text, ("mcpServers",), {}, remove=("b",)) == '{"mcpServers": {"a": 1}}\n'
    assert edit(text, ("mcpServers",), {}, remove=("a", "b")) == '{"mcpServers": {}}\n'


def test_empty_map_in_multi_line_file_expands() -> None:
    text = '{\n  "a": 1,\n  "mcpServers": {}\n}\n'
    assert edit(text, ("mcpServers",), {"x": 1}) == (
        '{\n  "a": 1,\n  "mcpServers": {\n    "x": 1\n  }\n}\n'
    )


# ---------------------------------------------------------------- JSONC

VSCODE_EMPTY = """{
  // Servers for this workspace; see https://code.visualstudio.com/docs
  "inputs": [],
  "servers": {}
}
"""


def test_vscode_empty_servers() -> None:
    out = edit(
        VSCODE_EMPTY, ("servers",), {"fs": {"type": "stdio", "command": "npx"}}, comments=True
    )
    assert out == VSCODE_EMPTY.replace(
        '"servers": {}',
        '"servers": {\n    "fs": {\n      "type": "stdio",\n      "command": "npx"\n    }\n  }',
    )


VSCODE = """{
  /* Inputs are prompted once,
     then stored by VS Code. */
  "inputs": [
    {"type": "promptString", "id": "tok", "password": true},
  ],
  "servers": {
    // my own server, keep it
    "mine": {
      "command": "node", // local build
      "args": ["server.js"],
    },
    /* before old */ "old": {"command": "x"},
    "mid": 1, // about mid
    // after mid
  },
}
"""


def test_jsonc_add_with_comments_and_trailing_commas() -> None:
    out = edit(VSCODE, ("servers",), {"fs": {"command": "npx"}}, comments=True)
    assert out == VSCODE.replace(
        "    // after mid\n",
        '    "fs": {\n      "command": "npx"\n    },\n    // after mid\n',
    )


def test_jsonc_replace_keeps_surrounding_comments() -> None:
    out = edit(VSCODE, ("servers",), {"old": {"command": "y"}}, comments=True)
    assert out == VSCODE.replace('"old": {"command": "x"}', '"old": {\n      "command": "y"\n    }')


def test_jsonc_remove_keeps_comments_outside_the_member() -> None:
    out = edit(VSCODE, ("servers",), {}, remove=("old", "mid"), comments=True)
    assert out == VSCODE.replace(
        '    /* before old */ "old": {"command": "x"},\n    "mid": 1, // about mid\n',
        "    /* before old */\n    // about mid\n",
    )


def test_jsonc_remove_member_with_comment_inside_its_value() -> None:
    out = edit(VSCODE, ("servers",), {}, remove=("mine",), comments=True)
    assert "local build" not in out
    assert "// my own server, keep it\n    /* before old */" in out


def test_jsonc_remove_all_keeps_comments() -> None:
    out = edit(VSCODE, ("servers",), {}, remove=("mine", "old", "mid"), comments=True)
    assert out == VSCODE.split('  "servers"')[0] + (
        '  "servers": {\n'
        "    // my own server, keep it\n"
        "    /* before old */\n"
        "    // about mid\n"
        "    // after mid\n"
        "  },\n"
        "}\n"
    )


def test_jsonc_replace_inputs_array_at_root() -> None:
    new_inputs = [{"type": "promptString", "id": "tok", "password": True}, {"id": "b"}]
    out = edit(VSCODE, (), {"inputs": new_inputs}, comments=True)
    assert out == VSCODE.replace(
        '[\n    {"type": "promptString", "id": "tok", "password": true},\n  ]',
        "[\n"
        "    {\n"
        '      "type": "promptString",\n'
        '      "id": "tok",\n'
        '      "password": true\n'
        "    },\n"
        "    {\n"
        '      "id": "b"\n'
        "    }\n"
        "  ]",
    )


def test_jsonc_no_trailing_comma_style_is_kept() -> None:
    text = '{\n  "servers": {\n    "a": 1 // one\n  }\n}\n'
    out = edit(text, ("servers",), {"b": 2}, comments=True)
    assert out == '{\n  "servers": {\n    "a": 1, // one\n    "b": 2\n  }\n}\n'
    assert edit(out, ("servers",), {}, remove=("b",), comments=True) == text


def test_jsonc_comment_text_inside_strings_is_data() -> None:
    text = '{"url": "http://x/*y*/", "s": {}}'
    assert edit(text, ("s",), {"k": "//"}, comments=True) == (
        '{"url": "http://x/*y*/", "s": {"k": "//"}}'
    )


ZED = """// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16,
  "theme": {
    "mode": "system",
    "dark": "One Dark" // the default
  }
  // "vim_mode": true
}
"""


def test_zed_settings_without_context_servers() -> None:
    out = edit(ZED, ("context_servers",), {"fs": {"command": {"path": "npx"}}}, comments=True)
    assert out == ZED.replace(
        '  }\n  // "vim_mode"',
        "  },\n"
        '  "context_servers": {\n'
        '    "fs": {\n'
        '      "command": {\n'
        '        "path": "npx"\n'
        "      }\n"
        "    }\n"
        "  }\n"
        '  // "vim_mode"',
    )


# ---------------------------------------------------------------- bytes around the edit


def test_crlf_is_kept() -> None:
    text = '{\r\n  "mcpServers": {\r\n    "a": 1,\r\n    "b": 2\r\n  }\r\n}\r\n'
    out = edit(text, ("mcpServers",), {"c": {"x": 1}}, remove=("a",))
    expected = '{\n  "mcpServers": {\n    "b": 2,\n    "c": {\n      "x": 1\n    }\n  }\n}\n'
    assert out == expected.replace("\n", "\r\n")


def test_crlf_when_creating_from_empty_object() -> None:
    out = edit("{\r\n}\r\n", ("mcpServers",), {"x": 1})
    assert out == '{\r\n  "mcpServers": {\r\n    "x": 1\r\n  }\r\n}\r\n'


def test_no_final_newline_stays_absent() -> None:
    text = '{\n  "a": 1\n}'
    assert edit(text, (), {"b": 2}) == '{\n  "a": 1,\n  "b": 2\n}'


def test_bom_is_kept() -> None:
    text = '\ufeff{\n  "a": 1\n}\n'
    assert edit(text, (), {"b": 2}) == '\ufeff{\n  "a": 1,\n  "b": 2\n}\n'
    assert load(text, path="f", comments=False) == {"a": 1}


def test_unicode_written_as_is() -> None:
    text = '{\n  "name": "M\\u00fcller"\n}\n'
    out = edit(text, (), {"servers": {"日本": {"description": "Grüße ✓"}}})
    assert out == (
        '{\n  "name": "M\\u00fcller",\n'
        '  "servers": {\n    "日本": {\n      "description": "Grüße ✓"\n    }\n  }\n}\n'
    )


def test_unrelated_duplicate_keys_are_kept() -> None:
    text = '{"a": 1, "a": 2, "s": {}}'
    assert edit(text, ("s",), {"k": 1}) == '{"a": 1, "a": 2, "s": {"k": 1}}'


@pytest.mark.parametrize(
    ("text", "path", "where"),
    [
        ('{"s": {"a": 1, "a": 2}}', ("s",), '"a" appears 2 times in s'),
        ('{"s": {}, "s": {}}', ("s",), '"s" appears 2 times in the top-level object'),
    ],
)
def test_duplicate_touched_keys_are_refused(text: str, path: tuple[str, ...], where: str) -> None:
    with pytest.raises(JsonEditError, match=where):
        update_object(text, path, {"a": 3}, file="cfg.json", comments=False)


# ---------------------------------------------------------------- errors


def _error(text: str, *, comments: bool = False, path: tuple[str, ...] = ("s",)) -> str:
    with pytest.raises(JsonEditError) as info:
        update_object(text, path, {"a": 1}, file="/p/cfg.json", comments=comments)
    assert isinstance(info.value, InputError)
    return info.value.message


def test_strict_json_with_comment_is_an_error() -> None:
    msg = _error('{\n  // hi\n  "a": 1\n}\n')
    assert msg == (
        "Invalid JSON in /p/cfg.json: line 2 column 3: comments are not allowed in strict JSON."
        " File not modified."
    )


def test_strict_json_trailing_comma_is_an_error() -> None:
    assert "line 1 column 8: trailing commas are not allowed" in _error('{"a": 1,}')


def test_trailing_garbage_is_an_error() -> None:
    assert _error('{"a": 1}\n}\n') == (
        "Invalid JSON in /p/cfg.json: line 2 column 1: unexpected text after the top-level"
        " value. File not modified."
    )
    assert _error('{"a": 1} // x\n]', comments=True).startswith(
        "Invalid JSONC in /p/cfg.json: line 2 column 1:"
    )
    # A comment after the value is not garbage.
    assert edit('{"a": 1} // x', ("s",), {"k": 1}, comments=True) == (
        '{"a": 1, "s": {"k": 1}} // x'
    )
    assert "line 1 column 10" in _error('{"a": 1} x', comments=True)


@pytest.mark.parametrize(
    "text",
    ["{,}", '{"a": 1,,}', '{"a":,}', "[,]", '{"a": 1 /* open', '{"a": NaN}', '{"a": "x', "{"],
)
def test_invalid_jsonc_is_an_error(text: str) -> None:
    msg = _error(text, comments=True)
    assert msg.startswith("Invalid JSONC in /p/cfg.json: line 1 column ")
    assert msg.endswith(". File not modified.")


def test_non_object_at_path_is_an_error() -> None:
    assert _error('{"s": []}') == (
        'Cannot edit /p/cfg.json: "s" is an array, not a JSON object. File not modified.'
    )
    assert '"s.t" is null' in _error('{"s": {"t": null}}', path=("s", "t"))
    assert "top-level value is not a JSON object" in _error("[1]", path=())


def test_unserialisable_value_is_an_error() -> None:
    with pytest.raises(JsonEditError, match='Cannot write "a" to f: not a JSON value'):
        update_object("{}", (), {"a": float("nan")}, file="f", comments=False)


def test_safety_net_refuses_a_wrong_result(monkeypatch: pytest.MonkeyPatch) -> None:
    def bad_plan(*_: Any) -> list[tuple[int, int, str]]:
        return [(1, 1, '"sneaky": 1, ')]

    monkeypatch.setattr(jsonedit, "_plan", bad_plan)
    with pytest.raises(JsonEditError, match=r"Could not edit f safely.*File not modified\."):
        update_object('{"a": 1}', (), {"b": 2}, file="f", comments=False)


# ---------------------------------------------------------------- load


def test_load() -> None:
    assert load("", path="f", comments=False) == {}
    assert load('{"a": [1, 2,], // c\n}', path="f", comments=True) == {"a": [1, 2]}
    assert load('/* x */ {"a": "//"}', path="f", comments=True) == {"a": "//"}
    with pytest.raises(JsonEditError, match="line 1 column 12: trailing"):
        load('{"a": [1, 2,]}', path="f", comments=False)


# ---------------------------------------------------------------- robustness


def _random_value(rnd: random.Random, depth: int = 0) -> Any:
    roll = rnd.random()
    if depth < 2 and roll < 0.3:
        return {k: _random_value(rnd, depth + 1) for k in rnd.sample("abcd", rnd.randint(0, 3))}
    if depth < 2 and roll < 0.4:
        return [_random_value(rnd, depth + 1) for _ in range(rnd.randint(0, 2))]
    return rnd.choice([1, 1.5, True, None, "s", "ü/*x*/"])


def test_random_edits_read_back_as_intended() -> None:
    # update_object checks its own result; this drives many layouts through that check.
    rnd = random.Random(7)
    for _ in range(300):
        data = {"m": _random_value(rnd) or {}, "z": _random_value(rnd)}
        if not isinstance(data["m"], dict):
            data["m"] = {}
        indent = rnd.choice([None, 2, 4, "\t"])
        text = json.dumps(data, indent=indent)
        updates = {k: _random_value(rnd) for k in rnd.sample("abcd", rnd.randint(0, 2))}
        remove = tuple(rnd.sample("abcd", rnd.randint(0, 2)))
        out = edit(text, ("m",), updates, remove=remove)
        expected = dict(data["m"])
        for k in remove:
            expected.pop(k, None)
        expected.update(updates)
        assert json.loads(out)["m"] == expected


def test_large_claude_json_is_fast(capsys: pytest.CaptureFixture[str]) -> None:
    projects = {
        f"/home/u/src/project-{i}": {
            "allowedTools": [],
            "history": [
                {"display": f"fix the bug in module {j} ü", "pastedContents": {}} for j in range(5)
            ],
            "lastCost": i * 0.01,
            "hasTrustDialogAccepted": i % 2 == 0,
        }
        for i in range(1500)
    }
    state: dict[str, Any] = {f"flag{i}": i for i in range(200)}
    state |= {"projects": projects, "mcpServers": {"mine": {"command": "x"}}, "tail": "end"}
    text = json.dumps(state, indent=2, ensure_ascii=False) + "\n"
    assert len(text.encode()) > 1_000_000
    start = time.perf_counter()
    out = update_object(
        text, ("mcpServers",), {"fs": SERVER_2}, file="~/.claude.json", comments=False
    )
    elapsed = time.perf_counter() - start
    with capsys.disabled():
        print(f"\n1 MB ~/.claude.json edit: {elapsed * 1000:.0f} ms ({len(text):,} chars)")
    head, tail = text.split('    "mine": {\n      "command": "x"\n    }\n')
    assert out.startswith(head + '    "mine": {\n      "command": "x"\n    },\n    "fs": {\n')
    assert out.endswith(tail)
    assert elapsed < 2.0
