"""`mcpsync help --machine`: discovered from the click tree, never listed by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path
from typing import Any

import click
import pytest

from mcpsync.cli.machine_help import SCHEMA_VERSION, UnknownCommand, build_machine_help
from mcpsync.cli.main import COMMANDS, cli, run
from mcpsync.cli.meta import category, examples


def _toy() -> click.Group:
    """A small CLI with every kind of parameter the generator must describe."""

    @click.group(context_settings={"help_option_names": ["-h", "--help"]})
    @click.option("--registry", metavar="URL", help="Registry URL.")
    @click.option("-C", "directory", type=click.Path(file_okay=False), help="Project dir.")
    def toy() -> None:
        """A toy CLI.

        \b
        Lines kept
          as they are.
        \f
        Not for help text.
        """

    @toy.command()
    @click.argument("names", nargs=-1, required=True)
    @click.option("--mode", type=click.Choice(["fast", "safe"]), default="safe", help="How.")
    @click.option("-n", "--count", type=click.IntRange(1, 9), default=3, help="How many.")
    @click.option("--tag", "tags", multiple=True, help="Repeatable.")
    @click.option("--check", is_flag=True, help="Only check.")
    @click.option("--color/--no-color", default=True, help="Colour.")
    @click.option("-v", "verbose", count=True, help="Louder.")
    @click.option("--secret", hidden=True)
    @category("write", read_when=("check",))
    @examples("toy make a b --check")
    def make(**_: Any) -> None:
        """Make things. Longer text follows.

        Second paragraph.
        """

    @toy.command()
    @click.argument("name", required=False)
    def peek(name: str | None) -> None:
        """Peek without a category (so: write)."""

    @toy.command(hidden=True)
    def ghost() -> None:
        """Hidden."""

    @toy.group()
    def sub() -> None:
        """A group."""

    @category("read")
    @sub.command()
    def leaf() -> None:
        """A nested read command."""

    category("admin")(sub)
    return toy


def _by_path(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["path"]: c for c in doc["commands"]}


def test_toy_group_document_shape() -> None:
    doc = build_machine_help(_toy(), prog="toy", version="9.9")
    assert doc["schema_version"] == SCHEMA_VERSION
    assert (doc["name"], doc["version"]) == ("toy", "9.9")
    assert doc["description"] == "A toy CLI.\n\nLines kept\n  as they are."
    assert [f["name"] for f in doc["global_flags"]] == ["registry", "C"]
    assert list(_by_path(doc)) == ["make", "peek", "sub", "sub leaf"]  # ghost is hidden


def test_toy_command_flags_arguments_and_metadata() -> None:
    make = _by_path(build_machine_help(_toy(), prog="toy"))["make"]
    assert make["summary"] == "Make things."
    assert make["usage"] == "toy make [OPTIONS] NAMES..."
    assert (make["category"], make["read_when"], make["runnable"]) == ("write", ["check"], True)
    assert make["examples"] == ["toy make a b --check"]
    flags = {f["name"]: f for f in make["flags"]}
    assert set(flags) == {"mode", "count", "tag", "check", "color", "v"}  # no --secret, --help
    assert flags["mode"]["choices"] == ["fast", "safe"]
    assert flags["mode"]["default"] == "safe"
    count = flags["count"]
    assert (count["type"], count["aliases"], count["default"]) == ("integer", ["-n", "--count"], 3)
    assert (count["minimum"], count["maximum"]) == (1, 9)
    assert (flags["tag"]["multiple"], flags["tag"]["param"]) == (True, "tags")
    assert (flags["check"]["type"], flags["check"]["is_flag"]) == ("boolean", True)
    assert flags["color"]["negation"] == "--no-color"
    assert (flags["v"]["type"], flags["v"]["count"]) == ("integer", True)
    assert make["arguments"] == [
        {
            "name": "NAMES",
            "param": "names",
            "type": "string",
            "required": True,
            "variadic": True,
            "nargs": -1,
        }
    ]


def test_toy_categories_default_to_write_and_groups_are_not_runnable() -> None:
    commands = _by_path(build_machine_help(_toy(), prog="toy"))
    assert commands["peek"]["category"] == "write"  # no @category: the safe guess
    assert commands["peek"]["arguments"][0]["required"] is False
    assert (commands["sub"]["category"], commands["sub"]["runnable"]) == ("admin", False)
    assert commands["sub leaf"]["category"] == "read"
    assert commands["sub leaf"]["usage"] == "toy sub leaf [OPTIONS]"


def test_only_selects_commands_and_their_subcommands() -> None:
    doc = build_machine_help(_toy(), prog="toy", only=["sub"])
    assert [c["path"] for c in doc["commands"]] == ["sub", "sub leaf"]
    with pytest.raises(UnknownCommand, match="'nope'"):
        build_machine_help(_toy(), prog="toy", only=["nope"])


# --- the real CLI -------------------------------------------------------------------------


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = run(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_every_registered_command_is_described() -> None:
    code, out, _ = _run("help", "--machine")
    assert code == 0
    doc = json.loads(out)
    paths = {c["path"] for c in doc["commands"]}
    assert set(COMMANDS) <= paths
    assert "mcp serve" in paths
    assert {f["name"] for f in doc["global_flags"]} >= {"registry", "C", "timeout"}


def test_real_commands_declare_their_category() -> None:
    commands = _by_path(build_machine_help(cli))
    for path in ("list", "outdated", "search", "show"):
        assert commands[path]["category"] == "read", path
    for path in ("init", "add", "remove", "lock", "sync"):
        assert commands[path]["category"] == "write", path
    assert commands["lock"]["read_when"] == ["check"]
    assert set(commands["sync"]["read_when"]) == {"check", "dry-run", "diff"}
    for path in ("help", "mcp", "mcp serve"):
        assert commands[path]["category"] == "admin", path
    for path, command in commands.items():
        assert command["summary"], path
        if command["runnable"] and command["category"] != "admin":
            assert command["json_output"], f"{path} has no --json"
            assert command["examples"], f"{path} has no examples"


def test_machine_help_for_one_command() -> None:
    code, out, _ = _run("help", "--machine", "lock")
    assert code == 0
    assert [c["path"] for c in json.loads(out)["commands"]] == ["lock"]
    code, out, _ = _run("help", "--json", "mcp")
    assert [c["path"] for c in json.loads(out)["commands"]] == ["mcp", "mcp serve"]


def test_unknown_command_is_bad_input() -> None:
    code, out, err = _run("help", "--machine", "frobnicate")
    assert (code, out) == (2, "")
    assert "unknown command 'frobnicate'" in err


def test_a_command_module_that_fails_to_import_is_a_bug_not_a_missing_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(COMMANDS, "broken", "mcpsync.cli.no_such_module:broken")
    code, _, err = _run("broken")
    assert code == 70
    assert "No such command" not in err and "no_such_module" in err


def test_plain_help_matches_dash_dash_help() -> None:
    assert _run("help", "lock")[1] == _run("lock", "--help")[1]
    assert _run("help", "mcp", "serve")[1] == _run("mcp", "serve", "--help")[1]
    assert _run("help")[1] == _run("--help")[1]
    assert _run("help", "nope")[0] == 2


HEAVY = ("mcp", "mcp_types", "httpx", "urllib3", "yaml", "tomlkit", "anyio", "uvicorn", "pydantic")
# mcpsync's own parsers: each defines dataclasses and regexes, milliseconds at start-up
CORE = ("mcpsync.manifest.parse", "mcpsync.sync.ownership", "mcpsync.lock.lockfile")


@pytest.mark.parametrize(
    "argv", [["--help"], ["mcp", "--help"], ["mcp", "serve", "--help"], ["help", "--machine"]]
)
def test_help_imports_no_heavy_dependency(argv: list[str]) -> None:
    """`mcpsync --help` stays fast: the MCP SDK (and the other heavy imports), and mcpsync's
    own mcp.toml and mcp.lock parsers, load only when a command needs them."""
    code = (
        "import sys\n"
        "from contextlib import redirect_stdout\n"
        "from io import StringIO\n"
        "from mcpsync.cli.main import run\n"
        f"with redirect_stdout(StringIO()):\n    assert run({argv!r}) == 0\n"
        f"print(sorted(m for m in {HEAVY + CORE!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _help_process(cache: Path, *args: str, columns: str = "80") -> subprocess.CompletedProcess[str]:
    """`mcpsync ARGS` through main(), as the console script runs it; stderr says whether click
    was imported."""
    code = (
        "import sys\n"
        "from mcpsync.cli.main import main\n"
        f"sys.argv = ['mcpsync', *{list(args)!r}]\n"
        "try:\n    main()\n"
        "finally:\n    print('click' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": columns}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )


def test_top_level_help_is_clicks_text_and_then_needs_no_click(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first `mcpsync --help` renders through click and keeps the text; the next ones
    print the same bytes without importing click (it alone costs about a bare Python start)."""
    monkeypatch.setenv("COLUMNS", "80")
    clicks = _run("--help")[1]
    first = _help_process(tmp_path, "--help")
    assert (first.returncode, first.stdout, first.stderr) == (0, clicks, "True\n")
    again = _help_process(tmp_path, "-h")
    assert (again.returncode, again.stdout, again.stderr) == (0, clicks, "False\n")
    assert [p.name for p in (tmp_path / "mcpsync").iterdir()] == ["help-80.txt"]
    # another width is another text, as click would format it
    narrow = _help_process(tmp_path, "--help", columns="60")
    assert narrow.stdout != clicks and narrow.stderr == "True\n"
    assert _help_process(tmp_path, "--help", columns="60").stderr == "False\n"
    # anything else is not answered from the cache
    assert _help_process(tmp_path, "lock", "--help").stderr == "True\n"


def test_a_stale_or_unwritable_help_cache_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    clicks = _run("--help")[1]
    cached = tmp_path / "mcpsync" / "help-80.txt"
    assert _help_process(tmp_path, "--help").returncode == 0
    key = cached.read_text().split("\n", 1)[0]
    # a CLI source changed (its mtime and size are in the key): rendered again, not the old text
    cached.write_text(key.replace("main.py=", "main.py=1") + "\nUsage: stale\n")
    stale = _help_process(tmp_path, "--help")
    assert (stale.stdout, stale.stderr) == (clicks, "True\n")
    assert cached.read_text() == f"{key}\n{clicks[:-1]}"
    # a cache that cannot be written: the help still prints
    blocked = tmp_path / "file"
    blocked.write_text("")
    done = _help_process(blocked, "--help")
    assert (done.returncode, done.stdout) == (0, clicks)


def test_version_is_the_installed_one_without_reading_package_metadata() -> None:
    """`--version` prints mcpsync.__version__, which must equal the installed distribution's
    version; finding that in the metadata imported importlib.metadata, ~15 ms (issue 17)."""
    from importlib.metadata import version

    code = (
        "import sys\n"
        "from mcpsync.cli.main import run\n"
        "code = run(['--version'])\n"
        "print(code, 'importlib.metadata' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.splitlines() == [f"mcpsync, version {version('mcpsync')}", "0 False"]
