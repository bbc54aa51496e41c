"""`mcpsync search`: ranked name matches, title/description matches and the scan bound,
against the HTTP registry stand-in (name-only `search`, cursors) and a file: snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run_cli, run_process, write_snapshot
from registry_stub import Item, RegistryStub, make_item

from mcpsync.registry import ranking

GITHUB = "io.github.github/github-mcp-server"


def catalog() -> list[Item]:
    """Like the live registry: hundreds of io.github.* names that sort before the one meant."""
    items = [
        make_item(f"io.github.{user:03d}user/tool", "1.0.0", is_latest=True, description="A tool")
        for user in range(150)
    ]
    items += [
        make_item(GITHUB, "0.2.0", is_latest=True, description="GitHub's official server"),
        make_item("io.github.acme/github-issues", "1.0.0", is_latest=True, description="Issues"),
        make_item("com.example/tickets", "2.0.0", is_latest=True, description="Talks to GitHub"),
        make_item(
            "com.example/repos", "1.0.0", is_latest=True, title="GitHub repos", description="Repos"
        ),
    ]
    return items


@pytest.fixture
def stub() -> Iterator[RegistryStub]:
    with RegistryStub(catalog()) as running:
        yield running


def test_exact_segment_matches_rank_first_within_the_limit(stub: RegistryStub) -> None:
    result = run_cli("--registry", stub.url, "search", "github", "--limit", "3")
    assert result.code == 0, str(result)
    assert result.out == (
        f"{GITHUB}  0.2.0         GitHub's official server\n"
        "io.github.acme/github-issues        1.0.0         Issues\n"
        "io.github.000user/tool              1.0.0         A tool\n"
    )
    assert result.err_lines == [
        "Showing the first 3 matches; there are more. Refine TEXT or raise --limit (up to 100)."
    ]


def test_json_rows_say_which_field_matched(stub: RegistryStub) -> None:
    result = run_cli("--registry", stub.url, "search", "github", "--limit", "5", "--json")
    rows = result.json()["servers"]
    assert [r["name"] for r in rows][:2] == [GITHUB, "io.github.acme/github-issues"]
    assert rows[0] == {
        "name": GITHUB,
        "version": "0.2.0",
        "status": "active",
        "description": "GitHub's official server",
        "matched": "name",
    }
    assert result.json()["truncated"] is True


def test_titles_and_descriptions_are_searched_in_the_listing(stub: RegistryStub) -> None:
    result = run_process("--registry", stub.url, "search", "talks to")
    assert result.code == 0, str(result)
    assert result.out == "com.example/tickets  2.0.0         Talks to GitHub\n"
    assert result.err_lines == [
        "1 more matched in the title or description of the first 154 servers the registry"
        " listed; the registry's search covers names only."
    ]
    titled = run_cli("--registry", stub.url, "search", "github repos", "--json").json()
    assert [(r["name"], r["matched"]) for r in titled["servers"]] == [
        ("com.example/repos", "title")
    ]


def test_the_scan_bound_is_said(stub: RegistryStub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "SCAN_MAX", 100)
    result = run_cli("--registry", stub.url, "search", "io.github", "--limit", "1")
    assert result.out == "io.github.000user/tool  1.0.0         A tool\n"
    assert result.err_lines == [
        "Ranked the first 100 name matches of more; refine TEXT.",
        "Showing the first 1 matches; there are more. Refine TEXT or raise --limit (up to 100).",
    ]


def test_a_snapshot_is_searched_whole(tmp_path: Path) -> None:
    url = write_snapshot(tmp_path, catalog())
    result = run_cli("--registry", url, "search", "github", "--limit", "5", cwd=tmp_path)
    assert result.code == 0, str(result)
    assert result.out.splitlines()[:2] == [
        f"{GITHUB}  0.2.0         GitHub's official server",
        "io.github.acme/github-issues        1.0.0         Issues",
    ]
    found = run_cli("--registry", url, "search", "talks to", "--json", cwd=tmp_path).json()
    assert [(r["name"], r["matched"]) for r in found["servers"]] == [
        ("com.example/tickets", "description")
    ]


def test_the_order_rules() -> None:
    from mcpsync.registry.base import ServerEntry

    names = ["a/gitx", "github", "a/github", "a/x-github", "a/githubber", "io.github.a/x", "a/b"]
    entries = [ServerEntry({"name": n, "version": "1"}) for n in names]
    entries.append(ServerEntry({"name": "z/t", "version": "1", "title": "GitHub"}))
    entries.append(ServerEntry({"name": "z/d", "version": "1", "description": "about github"}))
    ranked = [(e.name, how) for e, how in ranking.rank(entries, "GitHub")]
    assert ranked == [
        ("github", "name"),
        ("a/github", "name"),
        ("a/x-github", "name"),
        ("a/githubber", "name"),
        ("io.github.a/x", "name"),
        ("z/t", "title"),
        ("z/d", "description"),
    ]
