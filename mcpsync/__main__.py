"""`python -m mcpsync`: the same entry point as the `mcpsync` console script."""

from __future__ import annotations

from mcpsync.cli.main import main

if __name__ == "__main__":
    main()
