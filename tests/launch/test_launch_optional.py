"""Optional variables: which references may stay unset (Launch.optional), and an optional
variable whose name no client can hold is left out instead of refusing the server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mcpsync.errors import McpsyncError, UnsafeData
from mcpsync.launch import LaunchOptions, render

CORPUS = os.environ.get("MCPSYNC_CORPUS")


def package(*env: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "io.github.example/demo",
        "version": "1.0.0",
        "packages": [
            {
                "registryType": "npm",
                "identifier": "@example/demo-mcp",
                "version": "1.0.0",
                "transport": {"type": "stdio"},
                "environmentVariables": list(env),
            }
        ],
    }


def remote(*headers: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "io.github.example/demo",
        "version": "1.0.0",
        "remotes": [
            {"type": "streamable-http", "url": "https://mcp.example.com/mcp", "headers": [*headers]}
        ],
    }


OPTS = LaunchOptions(alias="demo")


def test_optional_secret_env_is_a_reference_marked_optional() -> None:
    launch = render(
        package(
            {"name": "API_KEY", "isRequired": True, "isSecret": True},
            {"name": "DEBUG_TOKEN", "isSecret": True},
            {"name": "LOG_LEVEL", "default": "info"},
        ),
        OPTS,
    )
    assert launch.env == {"API_KEY": "${API_KEY}", "DEBUG_TOKEN": "${DEBUG_TOKEN}"}
    assert launch.secrets == ("API_KEY", "DEBUG_TOKEN")
    assert launch.optional == ("DEBUG_TOKEN",)


def test_an_optional_secret_set_in_mcp_toml_is_the_users() -> None:
    opts = LaunchOptions(alias="demo", env={"DEBUG_TOKEN": "${MY_TOKEN}"})
    launch = render(package({"name": "DEBUG_TOKEN", "isSecret": True}), opts)
    assert launch.env == {"DEBUG_TOKEN": "${MY_TOKEN}"}
    assert launch.optional == ()


def test_optional_secret_header_references_are_optional() -> None:
    launch = render(
        remote(
            {"name": "Authorization", "value": "Bearer {token}", "isSecret": True},
            {"name": "X-Org", "isRequired": True, "isSecret": True},
        ),
        OPTS,
    )
    assert launch.headers == {"Authorization": "Bearer ${TOKEN}", "X-Org": "${X_ORG}"}
    assert launch.optional == ("TOKEN",)


def test_a_header_variable_given_in_mcp_toml_is_not_optional() -> None:
    opts = LaunchOptions(alias="demo", variables={"token": "${MY_TOKEN}"})
    header = {"name": "Authorization", "value": "Bearer {token}", "isSecret": True}
    launch = render(remote(header), opts)
    assert launch.headers == {"Authorization": "Bearer ${MY_TOKEN}"}
    assert launch.optional == ()


@pytest.mark.parametrize(
    "spec",
    [
        {"name": "bad-name"},
        {"name": "bad-name", "default": "x"},
        {"name": "bad name", "isSecret": True},
        {"name": "A=B", "value": "fixed"},
        {"description": "no name at all"},
    ],
    ids=["plain", "with a default", "secret", "with a value", "nameless"],
)
def test_optional_variable_with_a_bad_name_is_left_out_not_refused(spec: dict[str, Any]) -> None:
    launch = render(package({"name": "API_KEY", "isRequired": True}, spec), OPTS)
    assert launch.env == {"API_KEY": "${API_KEY}"}
    assert launch.optional == () and launch.secrets == ()


@pytest.mark.parametrize(
    "spec",
    [
        {"name": "bad-name", "isRequired": True},
        {"name": "bad-name", "isRequired": True, "isSecret": True},
    ],
)
def test_required_variable_with_a_bad_name_is_still_refused(spec: dict[str, Any]) -> None:
    with pytest.raises(UnsafeData, match="environment variable name 'bad-name' is not a valid"):
        render(package(spec), OPTS)


def test_a_name_with_a_trailing_newline_is_refused() -> None:
    with pytest.raises(UnsafeData, match="is not a valid name"):
        render(package({"name": "TOKEN\n", "isRequired": True}), OPTS)


@pytest.mark.skipif(not CORPUS, reason="set MCPSYNC_CORPUS to a ServerResponse list")
def test_corpus_optional_variables_with_bad_names_refuse_nothing() -> None:
    """Every real package with optional env vars, those renamed to names no client can hold:
    it renders exactly as before, minus those variables (the real sample has none such)."""
    items = json.loads(Path(str(CORPUS)).read_text(encoding="utf-8"))
    checked = 0
    for item in items:
        for pkg in item["server"].get("packages") or []:
            env = pkg.get("environmentVariables") or []
            if not any(isinstance(e, dict) and e.get("isRequired") is not True for e in env):
                continue
            doc = {**item["server"], "packages": [pkg], "remotes": []}
            try:
                launch = render(doc, OPTS)
            except McpsyncError:
                continue
            renamed = [
                e if e.get("isRequired") is True else {**e, "name": f"bad-{e.get('name')}"}
                for e in env
            ]
            bad = render({**doc, "packages": [{**pkg, "environmentVariables": renamed}]}, OPTS)
            kept = {e["name"] for e in env if e.get("isRequired") is True}
            assert dict(bad.env) == {k: v for k, v in launch.env.items() if k in kept}
            checked += 1
    print(f"\ncorpus: {checked} packages with optional env vars render with them renamed")
    assert checked
