"""json_type: the one place a JSON value's type is put into words."""

from __future__ import annotations

from typing import Any

import pytest

from mcpsync.jsontypes import json_type


@pytest.mark.parametrize(
    ("value", "word"),
    [
        (True, "a boolean"),
        (0, "a number"),
        (1.5, "a number"),
        ("x", "a string"),
        ([], "an array"),
        ({}, "an object"),
        (None, "null"),
    ],
)
def test_json_type(value: Any, word: str) -> None:
    assert json_type(value) == word
