"""Shared fixtures. The registry stand-in itself lives in tests/registry_stub.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from registry_stub import RegistryStub, sample_items


@pytest.fixture
def registry_stub() -> Iterator[RegistryStub]:
    """A started registry stand-in holding `sample_items()`, with fresh counters and no faults."""
    with RegistryStub(sample_items()) as stub:
        yield stub
