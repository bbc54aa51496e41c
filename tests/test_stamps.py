"""Stamps must go stale when any part of a split editor changes, not only its entry module."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpsync.targets import base


def test_a_glob_of_modules_covers_every_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "stamp_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "ed_main.py").write_text("X = 1\n")
    (package / "ed_render.py").write_text("Y = 1\n")
    (package / "other.py").write_text("Z = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("stamp_pkg")
    try:
        base._source_digest.cache_clear()
        first = base._source_digest("stamp_pkg.ed*")
        base._source_digest.cache_clear()
        (package / "other.py").write_text("Z = 2\n")
        assert base._source_digest("stamp_pkg.ed*") == first  # not one of the parts
        base._source_digest.cache_clear()
        (package / "ed_render.py").write_text("Y = 2\n")
        assert base._source_digest("stamp_pkg.ed*") != first  # a part changed: stale
    finally:
        base._source_digest.cache_clear()
        sys.modules.pop("stamp_pkg", None)


def test_the_holodeck_stamp_covers_the_whole_yaml_editor() -> None:
    import mcpsync.edit.yamledit  # noqa: F401  (loads the package, as sync does)

    edit_dir = Path(sys.modules["mcpsync.edit"].__file__ or "").parent
    parts = sorted(p.name for p in edit_dir.glob("yaml*.py"))
    assert len(parts) > 1 and "yamlrender.py" in parts
    assert not base._source_digest("mcpsync.edit.yaml*").startswith("?")
