"""Close names for "did you mean" hints: aliases, env and variables keys, registry names.

Only ever on an error or warning path, so difflib is imported when a hint is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpsync.registry.base import Registry

# difflib ratios: "wether" ~ "weather" 0.92, "API_KYE" ~ "API_KEY" 0.86, but "nope" ~ "notes"
# 0.67 and "server-filesytem" ~ "server-git" 0.62 (difflib's default cutoff, 0.6, offers those)
CUTOFF = 0.7
LIMIT = 3
SEARCH_LIMIT = 100  # one page of the live registry's search


def close(word: str, candidates: Iterable[str], *, limit: int = LIMIT) -> list[str]:
    """Up to `limit` candidates like `word`, closest first; case is ignored when comparing
    (`API_key` finds `API_KEY`), the candidates keep their own spelling."""
    import difflib

    spelled: dict[str, str] = {}
    for candidate in candidates:
        if candidate != word:
            spelled.setdefault(candidate.lower(), candidate)
    found = difflib.get_close_matches(word.lower(), list(spelled), n=limit, cutoff=CUTOFF)
    return [spelled[lower] for lower in found]


def did_you_mean(words: Iterable[str], candidates: Iterable[str], *, short: bool = False) -> str:
    """ "did you mean: a, b? " for the words' close candidates, or "" when none is close.
    `short`: the candidates are abbreviations (mcp.toml's keys), so `enviroment` finds `env`."""
    pool = list(candidates)
    found = list(
        dict.fromkeys(
            c
            for word in words
            for c in close(word, pool) or (shortened(word, pool) if short else [])
        )
    )
    return f"did you mean: {', '.join(found)}? " if found else ""


def shortened(word: str, candidates: Iterable[str]) -> list[str]:
    """The candidates that abbreviate `word`: the same first three letters, then the rest of
    the candidate's letters in order (`env` in `enviroment`, `args` in `arguments`); difflib
    rates these far apart, as the lengths differ."""
    lower = word.lower()
    found = []
    for candidate in candidates:
        short = candidate.lower()
        if len(short) >= 3 and lower != short and lower.startswith(short[:3]):
            rest = iter(lower[3:])
            if all(letter in rest for letter in short[3:]):  # a subsequence, in order
                found.append(candidate)
    return found[:LIMIT]


def registry_names(registry: Registry, name: str) -> list[str]:
    """Registry names close to `name`, which the registry does not have.

    The registry's search is a substring match on names, so a typo defeats searching for the
    name itself. Two searches find the likely neighbours: the namespace (`io.github.acme/`,
    for a typo in the server part) and the server part (`weather`, for a typo in the
    namespace). Both parts are then compared separately, so servers of the same owner with
    other names are not offered. A failing search only costs the hint."""
    from mcpsync.errors import McpsyncError

    namespace, _, tail = name.rpartition("/")
    found: set[str] = set()
    for text in (f"{namespace}/" if namespace else "", tail):
        if not text:
            continue
        try:
            found.update(entry.name for entry in registry.search(text, limit=SEARCH_LIMIT))
        except McpsyncError:
            return []
    return _rank(name, found)


def _rank(name: str, names: Iterable[str]) -> list[str]:
    import difflib

    def ratio(a: str, b: str) -> float:
        return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()

    namespace, _, tail = name.rpartition("/")
    scored = []
    for candidate in names:
        if candidate == name:
            continue
        their_namespace, _, their_tail = candidate.rpartition("/")
        parts = (ratio(namespace, their_namespace), ratio(tail, their_tail))
        if min(parts) >= CUTOFF:
            scored.append((-parts[0] * parts[1], candidate))
    return [candidate for _, candidate in sorted(scored)[:LIMIT]]
