"""ServerEntry.from_response: the one parser of a ServerResponse item, strict about what
mcpsync relies on (both backends read items through it)."""

from __future__ import annotations

from typing import Any

import pytest
from registry_stub import make_item

from mcpsync.registry.base import OFFICIAL_META, ServerEntry

SERVER = {"name": "io.github.acme/files", "version": "1.2.0"}


def test_reads_the_official_meta() -> None:
    item = make_item("io.github.acme/files", "1.2.0", is_latest=True, status="deprecated")
    entry = ServerEntry.from_response(item)
    assert (entry.name, entry.version) == ("io.github.acme/files", "1.2.0")
    assert (entry.status, entry.is_latest) == ("deprecated", True)
    assert entry.published_at == item["_meta"][OFFICIAL_META]["publishedAt"]
    assert entry.meta == item["_meta"]


def test_no_meta_reads_as_an_active_version() -> None:
    entry = ServerEntry.from_response({"server": SERVER})
    assert (entry.status, entry.is_latest, entry.published_at, entry.meta) == (
        "active",
        False,
        None,
        {},
    )


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ([SERVER], "an item is an array, not an object"),
        ({"server": "x"}, "an item has no 'server' object"),
        ({"server": {"version": "1"}}, "a server has no 'name' string"),
        ({"server": SERVER, "_meta": "x"}, "'_meta' is not an object of objects"),
        ({"server": SERVER, "_meta": {OFFICIAL_META: "x"}}, "'_meta' is not an object"),
        ({"server": SERVER, "_meta": {OFFICIAL_META: {"isLatest": "false"}}}, "'isLatest' is a"),
        ({"server": SERVER, "_meta": {OFFICIAL_META: {"status": 1}}}, "'status' is a number"),
    ],
)
def test_a_wrongly_shaped_item_is_a_value_error(item: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ServerEntry.from_response(item)
