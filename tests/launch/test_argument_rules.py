"""Named and positional arguments whose command line the server.json schema leaves open
(issue 15, block 5): `name` "includes any leading dashes", yet a named argument is described
as "`--flag={value}`". mcpsync renders `NAME VALUE` as two words with NAME as given, and lock
warns where that reading is a guess."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_helpers import load_toml, lock_bytes, registry_toml, run_cli, write_project
from registry_stub import RegistryStub, make_item, npm_package

from mcpsync.launch import LaunchOptions, argument_notes

NAME = "io.github.acme/files"


def package(*arguments: dict[str, Any], runtime: list[dict[str, Any]] | None = None) -> Any:
    extra = {"runtimeArguments": runtime} if runtime else {}
    return npm_package("@acme/files", "1.0.0", packageArguments=list(arguments), **extra)


def test_a_named_argument_without_dashes_is_rendered_as_given_and_warned_about(
    tmp_path: Path,
) -> None:
    pkg = package(
        {"type": "named", "name": "allowed-directories", "value": "./data"},
        {"type": "named", "name": "--port", "value": "8080"},  # the usual form: no warning
    )
    with RegistryStub([make_item(NAME, "1.0.0", is_latest=True, packages=[pkg])]) as stub:
        root = write_project(tmp_path / "p", registry_toml({"files": {"name": NAME}}))
        result = run_cli("--registry", stub.url, "-C", root, "lock")
        assert result.code == 0, str(result)
        entry = load_toml(lock_bytes(root).decode())["server"][0]
        assert entry["launch"]["args"] == [
            "-y",
            "@acme/files@1.0.0",
            "allowed-directories",
            "./data",
            "--port",
            "8080",
        ]
        assert result.err_lines[2:] == [
            f"warning: mcp.toml: server 'files': {NAME} 1.0.0: named argument "
            "'allowed-directories' (packageArguments) has no leading dash; as the schema says "
            "`name` includes its dashes, it is passed as `allowed-directories VALUE`, not "
            "`--allowed-directories VALUE`",
            "  hint: check the server's documentation; if it wants another form, declare it "
            "with command and args under [servers.files]",
        ]
        again = run_cli("--registry", stub.url, "-C", root, "lock")  # a kept pin: said once
        assert len(again.err_lines) == 1, str(again)


def test_the_notes_cover_an_equals_sign_and_a_missing_type_and_nothing_else() -> None:
    server = {
        "name": NAME,
        "version": "1.0.0",
        "packages": [
            package(
                {"type": "named", "name": "--root=", "value": "/srv"},
                {"name": "--verbose", "format": "boolean", "value": "true"},
                {"type": "positional", "valueHint": "path", "value": "/tmp"},
                {"type": "named", "name": "-p", "value": "1"},
                runtime=[{"type": "named", "name": "--no-warnings"}],
            )
        ],
    }
    assert argument_notes(server, LaunchOptions(alias="files")) == [
        "named argument '--root=' (packageArguments) ends in '='; it is passed as `--root= "
        "VALUE` (two words), which a server expecting one word will not read",
        "an argument in packageArguments has no `type`; it is read as named from its shape",
    ]
