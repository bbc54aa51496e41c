"""Shared fixtures. The registry stand-in itself lives in tests/registry_stub.py."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from registry_stub import RegistryStub, sample_items


@pytest.fixture(autouse=True)
def _no_artifact_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Locks record no artifact digests unless a test asks (tests/test_artifacts*.py do, against
    the stand-ins in tests/artifact_stubs.py): never the real npm registry or PyPI."""
    monkeypatch.setenv("MCPSYNC_ARTIFACTS", "0")


_caches = itertools.count()


@pytest.fixture(autouse=True)
def _own_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Each test its own mcpsync cache (created only if written): what one test's lock learns
    (an OCI registry's challenge, a tree) never shortens another's, nor lands in ~/.cache."""
    path = tmp_path_factory.getbasetemp() / "caches" / str(next(_caches))
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(path))


@pytest.fixture
def registry_stub() -> Iterator[RegistryStub]:
    """A started registry stand-in holding `sample_items()`, with fresh counters and no faults."""
    with RegistryStub(sample_items()) as stub:
        yield stub
