"""SnapshotRegistry (file: URLs) and open_registry's URL handling."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from registry_stub import RegistryStub, make_item, sample_items

from mcpsync.errors import InputError, NotFound
from mcpsync.registry import open_registry, snapshot_path
from mcpsync.registry.http import HttpRegistry
from mcpsync.registry.snapshot import SnapshotRegistry

WEATHER = "io.github.example/weather"


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def bare(name: str, version: str) -> dict[str, Any]:
    """A server.json as published, with publisher meta but no registry meta."""
    return {
        "name": name,
        "version": version,
        "description": "d",
        "_meta": {"io.modelcontextprotocol.registry/publisher-provided": {"tool": "x"}},
    }


def snapshot(directory: Path) -> SnapshotRegistry:
    return SnapshotRegistry(directory, f"file:{directory}")


@pytest.fixture
def samples(tmp_path: Path) -> SnapshotRegistry:
    write(tmp_path / "all.json", {"servers": sample_items(), "metadata": {"count": 9}})
    return snapshot(tmp_path)


# --- the same answers as the live registry --------------------------------------------------


def test_answers_like_the_http_backend(samples: SnapshotRegistry) -> None:
    with RegistryStub(sample_items()) as stub, HttpRegistry(stub.url) as http:
        names = ["io.github.example/notes", WEATHER, "com.example/search"]
        assert samples.versions_many(names) == http.versions_many(names)
        pairs = [(WEATHER, "latest"), (WEATHER, "1.2.0"), ("io.github.example/postgres", "3.1.0")]
        assert [samples.get(*pair) for pair in pairs] == [http.get(*pair) for pair in pairs]
        for text, latest_only in [("EXAMPLE", True), ("weather", False), ("", False)]:
            assert samples.search(text, latest_only=latest_only) == http.search(
                text, latest_only=latest_only
            )
        assert samples.search("", limit=3) == http.search("", limit=3)
    assert samples.request_count == 0


def test_versions_newest_published_first_without_deleted(samples: SnapshotRegistry) -> None:
    versions = [e.version for e in samples.versions(WEATHER)]
    assert versions == ["1.10.1", "2.0.0-beta.1", "1.10.0", "1.2.0", "1.0.0"]


def test_published_at_is_compared_as_time_not_text(tmp_path: Path) -> None:
    # As text, "…:00Z" sorts after "…:00.5Z" and "+02:00" ignores the offset.
    items = [
        make_item("a/b", "1", published_at="2025-01-01T10:00:00.5Z"),
        make_item("a/b", "2", published_at="2025-01-01T10:00:00.123456789Z"),
        make_item("a/b", "3", published_at="2025-01-01T11:30:00+02:00"),
        make_item("a/b", "4", published_at="2025-01-01T10:00:00Z"),
    ]
    write(tmp_path / "x.json", items)
    assert [e.version for e in snapshot(tmp_path).versions("a/b")] == ["1", "2", "4", "3"]


def test_not_found_messages(samples: SnapshotRegistry) -> None:
    with pytest.raises(NotFound) as caught:
        samples.versions("io.github.example/nope")
    assert caught.value.message == (
        f"Server 'io.github.example/nope' not found in registry {samples.url}"
    )
    with pytest.raises(NotFound) as caught:
        samples.get(WEATHER, "1.1.0")  # deleted
    assert caught.value.message == (
        f"Version '1.1.0' of server '{WEATHER}' not found in registry {samples.url}"
    )
    assert caught.value.hint is not None and "1.10.1, 2.0.0-beta.1" in caught.value.hint


def test_search_limit_and_order(samples: SnapshotRegistry) -> None:
    found = samples.search("", latest_only=False, limit=4)
    assert [(e.name, e.version) for e in found] == [
        ("com.example/search", "2.0.0"),
        ("io.github.example/notes", "0.9.0"),
        ("io.github.example/notes", "1.0.0"),
        ("io.github.example/postgres", "3.1.0"),
    ]
    assert samples.search("Test server") == []  # names only


# --- file formats ---------------------------------------------------------------------------


def test_every_file_format_in_one_directory(tmp_path: Path) -> None:
    write(tmp_path / "1-list.json", [make_item("a/list", "1.0.0", is_latest=True)])
    write(tmp_path / "2-item.json", make_item("a/item", "1.0.0", is_latest=True))
    write(tmp_path / "3-serverlist.json", {"servers": [make_item("a/sl", "1.0.0")]})
    write(tmp_path / "4-bare.json", bare("a/bare", "1.0.0"))
    (tmp_path / "notes.txt").write_text("not a snapshot")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "ignored.json", make_item("a/sub", "1.0.0"))
    registry = snapshot(tmp_path)
    names = sorted({e.name for e in registry.search("a/", latest_only=False)})
    assert names == ["a/bare", "a/item", "a/list", "a/sl"]
    entry = registry.get("a/bare", "1.0.0")
    assert (entry.status, entry.published_at, entry.meta) == ("active", None, {})


def test_a_single_file_is_a_snapshot_too(tmp_path: Path) -> None:
    file = write(tmp_path / "one.json", [make_item("a/b", "1.0.0")])
    assert [e.version for e in SnapshotRegistry(file, "file:one.json").versions("a/b")] == ["1.0.0"]


def test_bare_server_json_gets_is_latest_from_the_registry_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def registry_latest(versions: Sequence[str]) -> str | None:
        calls.append(list(versions))
        return "1.10.0"

    fake = types.ModuleType("mcpsync.versions")
    fake.registry_latest = registry_latest  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mcpsync.versions", fake)
    write(tmp_path / "a.json", [bare("a/b", "1.2.0"), bare("a/b", "1.10.0")])
    write(tmp_path / "b.json", bare("a/b", "1.9.0"))
    registry = snapshot(tmp_path)
    assert registry.get("a/b", "latest").version == "1.10.0"
    assert calls == [["1.2.0", "1.10.0", "1.9.0"]]  # files sorted, then file order
    # Without publishedAt, the later in the files is the newer.
    assert [e.version for e in registry.versions("a/b")] == ["1.9.0", "1.10.0", "1.2.0"]
    assert [e.is_latest for e in registry.versions("a/b")] == [False, True, False]


@pytest.mark.parametrize(
    ("versions", "latest"),
    [
        (["1.2.0", "2.0.0-rc.1", "1.10.0"], "2.0.0-rc.1"),  # semver precedence
        (["2025.1", "auto", "2024.9"], "2024.9"),  # no semver: the last published
    ],
)
def test_bare_server_json_latest_with_the_real_version_order(
    tmp_path: Path, versions: list[str], latest: str
) -> None:
    write(tmp_path / "a.json", [bare("a/b", v) for v in versions])
    assert snapshot(tmp_path).get("a/b", "latest").version == latest


def test_registry_meta_wins_over_computing_latest(tmp_path: Path) -> None:
    write(
        tmp_path / "a.json", [make_item("a/b", "2.0.0"), make_item("a/b", "1.0.0", is_latest=True)]
    )
    assert snapshot(tmp_path).get("a/b", "latest").version == "1.0.0"


def test_identical_duplicates_are_merged_and_conflicts_refused(tmp_path: Path) -> None:
    write(tmp_path / "a.json", [make_item("a/b", "1.0.0")])
    write(tmp_path / "b.json", make_item("a/b", "1.0.0"))
    assert len(snapshot(tmp_path).versions("a/b")) == 1
    write(tmp_path / "c.json", make_item("a/b", "1.0.0", status="deprecated"))
    with pytest.raises(InputError, match=r"a\.json and .*c\.json disagree about a/b 1\.0\.0"):
        snapshot(tmp_path).versions("a/b")


# --- bad snapshots --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"servers": [', "Expecting value"),
        ('{"servers": {}}', "'servers' is not a list"),
        ('[{"server": {"name": "a/b"}}]', "no 'version' string"),
        ('[{"server": 1}]', "no 'server' object"),
        ('[{"nope": 1}]', "no 'name' string"),
        ("[3]", "an item is a number, not an object"),
        ('[{"server": {"name": "a/b", "version": "1"}, "_meta": 5}]', "'_meta' is not"),
        (
            '[{"server": {"name": "a/b", "version": "1"},'
            ' "_meta": {"io.modelcontextprotocol.registry/official": {"status": 1}}}]',
            "'status' is a number",
        ),
    ],
)
def test_a_malformed_file_names_the_file(tmp_path: Path, text: str, problem: str) -> None:
    write(tmp_path / "good.json", [make_item("a/good", "1.0.0")])
    (tmp_path / "bad.json").write_text(text)
    registry = snapshot(tmp_path)  # lazily loaded: nothing is read yet
    with pytest.raises(InputError) as caught:
        registry.versions("a/good")
    assert caught.value.message.startswith(f"Registry snapshot file {tmp_path / 'bad.json'} ")
    assert problem in caught.value.message
    assert caught.value.exit_code == 2


def test_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        snapshot(tmp_path / "nope").versions("a/b")


def test_an_empty_directory_knows_no_server(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        snapshot(tmp_path).versions("a/b")
    assert snapshot(tmp_path).search("") == []


# --- open_registry --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:snap", "/base/snap"),
        ("file:./snap/dir", "/base/snap/dir"),
        ("file:../up", "/base/../up"),
        ("file:/abs/dir", "/abs/dir"),
        ("file:///abs/my%20dir", "/abs/my dir"),
        ("file://localhost/abs", "/abs"),
    ],
)
def test_file_urls(url: str, expected: str) -> None:
    assert snapshot_path(url, Path("/base")) == Path(expected)


@pytest.mark.parametrize("url", ["file:", "file://", "file://server/share/dir"])
def test_bad_file_urls(url: str) -> None:
    with pytest.raises(InputError):
        snapshot_path(url, Path("/base"))


def test_open_registry_picks_the_snapshot(tmp_path: Path) -> None:
    write(tmp_path / "snap.json", [make_item("a/b", "1.0.0")])
    registry = open_registry("file:snap.json", base_dir=tmp_path)
    assert isinstance(registry, SnapshotRegistry)
    assert registry.url == "file:snap.json"
    assert registry.get("a/b", "1.0.0").version == "1.0.0"


@pytest.mark.parametrize("url", ["ftp://x.example", "registry.example", "", "mailto:a@b"])
def test_open_registry_refuses_other_urls(url: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="Unsupported registry URL"):
        open_registry(url, base_dir=tmp_path)
