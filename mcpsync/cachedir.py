"""Where mcpsync keeps what it can find again: `$MCPSYNC_CACHE_DIR`, else the platform's cache
directory (`$XDG_CACHE_HOME/mcpsync` or `~/.cache/mcpsync`, `~/Library/Caches/mcpsync`,
`%LOCALAPPDATA%\\mcpsync\\Cache`). Materialised trees, the launcher's warm-start records and the
OCI registries' token challenges live under it; deleting it loses nothing but time."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path


def cache_dir(env: Mapping[str, str]) -> Path:
    explicit = env.get("MCPSYNC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "mcpsync"
    if os.name == "nt":
        return Path(env.get("LOCALAPPDATA") or home) / "mcpsync" / "Cache"
    return Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "mcpsync"
