"""A JSON value's type in JSON's own words, for messages about data from files and tools."""

from __future__ import annotations

from typing import Any

_WORDS: list[tuple[type | tuple[type, ...], str]] = [
    (bool, "a boolean"),  # before int: a bool is an int to isinstance
    ((int, float), "a number"),
    (str, "a string"),
    (list, "an array"),
]


def json_type(value: Any) -> str:
    """'a boolean', 'a number', 'a string', 'an array', 'null' or 'an object'."""
    for types, word in _WORDS:
        if isinstance(value, types):
            return word
    return "null" if value is None else "an object"
