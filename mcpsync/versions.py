"""The registry's version order and the constraint language of mcp.toml.

Two orders live here, on purpose:

* ``version_key`` is the registry's own order (what decides ``isLatest``): every semver
  version (semver 2.0 after an optional leading ``v``) beats every non-semver one; semver
  versions compare by semver precedence; the other PEP 440 versions (``2.1``,
  ``0.7.10.dev1``) by PEP 440. Anything else (``auto``, ``{{VERSION}}``) has no place in
  the order and can only be pinned exactly.
* Constraints compare versions by *number*, across both worlds (see ``_cmp``), so that
  ``>=1.2`` admits ``1.3.0`` and ``^2025.10`` admits ``2025.10.23.1321``.

Semver is never fed to ``packaging``'s ``SpecifierSet``: PEP 440 reads ``1.2.3-0`` as a
post-release and compares ``alpha.104`` against ``alpha.99`` wrongly for semver.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from msgspec import Struct
from packaging.version import InvalidVersion, Version

from mcpsync.errors import InvalidConstraint

__all__ = [
    "Constraint",
    "is_prerelease",
    "is_semver",
    "registry_latest",
    "saved_constraint",
    "select",
    "version_key",
]

# semver.org's reference grammar, plus the optional leading "v" the registry strips.
_SEMVER = re.compile(
    r"v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?",
    re.ASCII,
)

# Phases of a point on the constraint line. FLOOR/CEILING exist only as bounds: "<2" means
# "below every 2.x prerelease" and ">1" means "above every 1.0 post-release", as in PEP 440.
_FLOOR, _PRE, _FINAL, _POST, _CEILING = -2, -1, 0, 1, 2

# One semver prerelease identifier as a sort key: numeric ones compare numerically and
# sort before alphanumeric ones, which compare in ASCII order (semver 2.0, rule 11).
_PreKey = tuple[tuple[int, int, str], ...]


class _Point(Struct, frozen=True):
    """A version placed on the constraint line (see _cmp)."""

    epoch: int
    release: tuple[int, ...]  # as written: "0.0" stays (0, 0), which ^ and ~ need
    phase: int
    tail: _PreKey | Version | None = None  # orders equal (release, phase); None when final


class _Parsed(Struct, frozen=True):
    point: _Point
    key: tuple[object, ...]  # the registry order, see version_key
    semver: bool
    prerelease: bool


def _prerelease_key(pre: str) -> _PreKey:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))


def _parse_semver(v: str) -> _Parsed | None:
    m = _SEMVER.fullmatch(v)
    if m is None:
        return None
    release = (int(m[1]), int(m[2]), int(m[3]))
    pre = _prerelease_key(m[4]) if m[4] else ()
    # Build metadata (m[5]) is ignored: it takes no part in precedence.
    point = _Point(0, release, _PRE if pre else _FINAL, pre or None)
    key: tuple[object, ...] = (1, *release, 0 if pre else 1, pre)
    return _Parsed(point, key, semver=True, prerelease=bool(pre))


def _pep440_phase(ver: Version) -> int:
    if ver.pre is not None or (ver.dev is not None and ver.post is None):
        return _PRE
    return _POST if ver.post is not None else _FINAL


def _parse_pep440(v: str) -> _Parsed | None:
    try:
        ver = Version(v)
    except InvalidVersion:
        return None
    phase = _pep440_phase(ver)
    point = _Point(ver.epoch, ver.release, phase, None if phase == _FINAL else ver)
    return _Parsed(point, (0, ver), semver=False, prerelease=ver.is_prerelease)


@lru_cache(maxsize=8192)
def _parse(v: str) -> _Parsed | None:
    # Cached: select() and sorting parse the same registry strings over and over.
    return _parse_semver(v) or _parse_pep440(v)


def is_semver(v: str) -> bool:
    """True for semver 2.0 after an optional leading "v": exactly three numeric parts,
    prerelease and build metadata allowed ("1.2.3", "v1.2.3-rc.1", "1.0.0+build")."""
    return _SEMVER.fullmatch(v) is not None


def version_key(v: str) -> tuple[object, ...] | None:
    """Sort key for the registry's order; None for versions that can only be pinned exactly.

    Any semver > any non-semver; semver by semver 2.0 precedence ("v1.2.3" and
    "1.0.0+build" tie with "1.2.3" and "1.0.0"); other PEP 440 versions by PEP 440.
    """
    parsed = _parse(v)
    return None if parsed is None else parsed.key


def is_prerelease(v: str) -> bool:
    """A semver version with a prerelease part, or a PEP 440 pre- or dev-release."""
    parsed = _parse(v)
    return parsed is not None and parsed.prerelease


def registry_latest(versions_oldest_first: Sequence[str]) -> str | None:
    """The version the official registry flags isLatest.

    The highest semver by precedence if any version is semver (on a tie the earlier one
    keeps the flag, as the registry only moves it to a strictly greater version);
    otherwise the last one published.
    """
    best: str | None = None
    best_key: tuple[object, ...] = ()
    for v in versions_oldest_first:
        parsed = _parse(v)
        if parsed is not None and parsed.semver and (best is None or _gt(parsed.key, best_key)):
            best, best_key = v, parsed.key
    if best is not None:
        return best
    return versions_oldest_first[-1] if versions_oldest_first else None


def _gt(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    # Keys of one kind hold ints, tuples and Versions in matching slots, so they compare.
    return a > b


# --- the constraint line ------------------------------------------------------------------


def _strip_zeros(release: tuple[int, ...]) -> tuple[int, ...]:
    end = len(release)
    while end > 1 and release[end - 1] == 0:
        end -= 1
    return release[:end]


def _sign(less: bool, greater: bool) -> int:
    return -1 if less else (1 if greater else 0)


def _cmp(a: _Point, b: _Point) -> int:
    """Compare two versions for constraint evaluation, across semver and PEP 440.

    Rule: compare (epoch, release with trailing zeros dropped, phase) first, where the
    phase orders prerelease < final < post-release. So a bound "1.2" equals "1.2.0" and
    "v1.2.0", "^2025.10" reaches "2025.10.23.1321", and "1.2.3-rc.1" < "1.2.3" <
    "1.2.3.post1". Finals of equal release are equal (build metadata and PEP 440 local
    labels are ignored). Two pre- or post-releases of the same release compare by their
    own rules when of the same kind (semver identifiers, or PEP 440 pre/post/dev); across
    kinds the PEP 440 one is lower, mirroring the registry's "semver beats non-semver".
    """
    ka = (a.epoch, _strip_zeros(a.release), a.phase)
    kb = (b.epoch, _strip_zeros(b.release), b.phase)
    if ka != kb:
        return -1 if ka < kb else 1
    ta, tb = a.tail, b.tail
    if isinstance(ta, Version) and isinstance(tb, Version):
        return _sign(ta < tb, ta > tb)
    if isinstance(ta, tuple) and isinstance(tb, tuple):
        return _sign(ta < tb, ta > tb)
    if ta is None or tb is None:
        return 0
    return -1 if isinstance(ta, Version) else 1


def _release_point(release: tuple[int, ...], phase: int = _FINAL) -> _Point:
    return _Point(0, release, phase)


class _Clause(Struct, frozen=True):
    """One condition. op: < <= > >= == != (point), prefix / !prefix (release), === (text)."""

    op: str
    point: _Point | None = None
    prefix: tuple[int, ...] = ()
    epoch: int = 0
    text: str = ""

    def allows(self, v: str, p: _Point | None) -> bool:
        if self.op == "===":
            return v == self.text
        if p is None:  # not orderable: only an exact string can select it
            return False
        if self.op in ("prefix", "!prefix"):
            return self._has_prefix(p) == (self.op == "prefix")
        assert self.point is not None
        return _OPS[self.op](_cmp(p, self.point))

    def _has_prefix(self, p: _Point) -> bool:
        n = len(self.prefix)
        padded = (p.release + (0,) * n)[:n]
        return p.epoch == self.epoch and padded == self.prefix


_OPS: dict[str, Callable[[int], bool]] = {
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
    "==": lambda c: c == 0,
    "!=": lambda c: c != 0,
}


# --- parsing constraints ------------------------------------------------------------------

_ACCEPTED = (
    "accepted: '1.2.3' (exactly that version), '^1.2.3', '~1.2', '1.x', '*', 'latest', "
    "PEP 440 comparisons such as '>=1.2,<2', '>=1.2 <2', '~=1.4', '==1.2.*', '!=1.3.0', "
    "or '===STRING' to pin any version string exactly"
)
_OPERATORS = ("===", "==", "!=", "~=", "<=", ">=", "<", ">", "=", "^", "~")
# pip and npm both read ">= 1.2" and "^ 1.2" as one term, so join them before splitting.
_OP_SPACE = re.compile(r"(===|==|!=|~=|<=|>=|<|>|=|\^|~)\s+")
_NUMERIC = re.compile(r"v?\d+(?:\.\d+)*", re.ASCII)
_WILDCARD_TAIL = re.compile(r"(?:\.[xX*])+\Z")  # "1.x", "1.2.*", "1.x.x"
_ANY = ("*", "x", "X")
_RESERVED = set("<>=!~^*|,")
_OPERATOR_CHARS = "<>=!~^"


def _fail(text: object, reason: str) -> InvalidConstraint:
    return InvalidConstraint(text, reason, _ACCEPTED)


class _Parts(Struct, frozen=True):
    """What a constraint text parses to."""

    clauses: tuple[_Clause, ...] = ()
    latest: bool = False
    exact: str | None = None  # the string an exact pin names, preferred by select()
    names_prerelease: bool = False


def _terms(text: str) -> list[str]:
    if "||" in text:
        raise _fail(text, "alternatives ('||') are not supported, use one range")
    joined = _OP_SPACE.sub(r"\1", text.strip())
    return [t for t in re.split(r"[,\s]+", joined) if t]


def _bound(text: str, raw: str) -> _Parsed:
    parsed = _parse(raw)
    if parsed is None:
        raise _fail(text, f"{raw!r} is not a version (pin odd strings with '==={raw}')")
    return parsed


def _upper(release: tuple[int, ...], index: int) -> _Point:
    """The floor of the next release at `index`: "<2" that also keeps out 2.0.0-rc.1."""
    bumped = (*release[:index], release[index] + 1)
    return _release_point(bumped, _FLOOR)


def _caret(text: str, raw: str) -> list[_Clause]:
    bound = _bound(text, raw).point
    rel = bound.release
    # Cargo/npm: bump the first non-zero part given; if all are zero, the last one given.
    index = next((i for i, n in enumerate(rel) if n != 0), len(rel) - 1)
    return [_Clause(">=", bound), _Clause("<", _upper(rel, index))]


def _tilde(text: str, raw: str) -> list[_Clause]:
    bound = _bound(text, raw).point
    index = 1 if len(bound.release) >= 2 else 0
    return [_Clause(">=", bound), _Clause("<", _upper(bound.release, index))]


def _compatible(text: str, raw: str) -> list[_Clause]:
    bound = _bound(text, raw).point
    if len(bound.release) < 2:
        raise _fail(text, "'~=' needs at least two release parts, like '~=1.4'")
    prefix = bound.release[:-1]
    return [_Clause(">=", bound), _Clause("prefix", prefix=prefix, epoch=bound.epoch)]


def _comparison(text: str, op: str, raw: str) -> list[_Clause]:
    if op in ("==", "!=") and raw.endswith(".*"):
        return [_prefix_clause(text, op, raw[:-2])]
    bound = _bound(text, raw).point
    if op == "<" and bound.phase == _FINAL:
        bound = _Point(bound.epoch, bound.release, _FLOOR)
    elif op == ">" and bound.phase == _FINAL:
        bound = _Point(bound.epoch, bound.release, _CEILING)
    return [_Clause("==" if op == "=" else op, bound)]


def _prefix_clause(text: str, op: str, raw: str) -> _Clause:
    if not _NUMERIC.fullmatch(raw):
        raise _fail(text, f"'{op}X.*' needs release numbers before '.*', got {raw!r}")
    release = _bound(text, raw).point.release
    return _Clause("prefix" if op == "==" else "!prefix", prefix=release)


def _x_range(text: str, term: str) -> list[_Clause]:
    head = _WILDCARD_TAIL.sub("", term)
    if not _NUMERIC.fullmatch(head):
        raise _fail(text, f"{term!r} is not a version range")
    release = _bound(text, head).point.release
    return [_Clause(">=", _release_point(release)), _Clause("<", _upper(release, len(release) - 1))]


def _split_op(term: str) -> tuple[str, str]:
    for op in _OPERATORS:
        if term.startswith(op):
            return op, term[len(op) :]
    return "", term


def _term_clauses(text: str, term: str) -> list[_Clause]:
    op, raw = _split_op(term)
    if op and not raw:
        raise _fail(text, f"{op!r} needs a version after it")
    if op and op != "===" and raw[0] in _OPERATOR_CHARS:
        # "^^1": a doubled operator, not an odd version string to pin with '==='
        bare = raw.lstrip(_OPERATOR_CHARS)
        raise _fail(text, f"{term!r} has two operators in a row; write one, e.g. '{op}{bare}'")
    if op == "===":
        return [_Clause("===", text=raw)]
    if op in ("^", "~"):
        raw = _WILDCARD_TAIL.sub("", raw)  # "^1.x" is "^1"
        return _caret(text, raw) if op == "^" else _tilde(text, raw)
    if op == "~=":
        return _compatible(text, raw)
    if op:
        return _comparison(text, op, raw)
    if term in _ANY:
        return []
    if _WILDCARD_TAIL.search(term):
        return _x_range(text, term)
    return [_Clause("==", _bound(text, term).point)]  # a bare version means exactly it


def _names_prerelease(term: str) -> bool:
    """pip's rule: a bound that is a prerelease lets prereleases in, except under '!='."""
    op, raw = _split_op(term)
    if op == "!=":
        return False
    raw = raw[:-2] if raw.endswith(".*") else raw
    return is_prerelease(_WILDCARD_TAIL.sub("", raw))


def _is_bare_string(term: str) -> bool:
    """A pin of a version string that is no version ("auto", "{{VERSION}}")."""
    looks_numeric = term[:1].isdigit() or (term[:1] == "v" and term[1:2].isdigit())
    if looks_numeric or term in _ANY or term == "-":
        return False
    return not _RESERVED & set(term)


def _parse_text(text: str) -> _Parts:
    terms = _terms(text)
    if not terms:  # empty means "*"
        return _Parts()
    if any(t.lower() == "latest" for t in terms):
        if len(terms) > 1:
            raise _fail(text, "'latest' cannot be combined with other conditions")
        return _Parts(latest=True)
    if "-" in terms:
        raise _fail(text, "hyphen ranges ('1.2 - 2') are not supported, use '>=1.2 <=2'")
    if len(terms) == 1 and _is_bare_string(terms[0]):
        return _Parts((_Clause("===", text=terms[0]),), exact=terms[0])
    bare = [t for t in terms if _is_bare_string(t)]
    if bare:
        raise _fail(text, f"{bare[0]!r} is not a version or a condition")
    clauses = tuple(c for t in terms for c in _term_clauses(text, t))
    return _Parts(clauses, exact=_exact_text(terms), names_prerelease=_any_pre(terms))


def _any_pre(terms: list[str]) -> bool:
    return any(_names_prerelease(t) for t in terms)


def _exact_text(terms: list[str]) -> str | None:
    if len(terms) != 1:
        return None
    op, raw = _split_op(terms[0])
    if op == "===" or (op in ("", "==", "=") and _parse(raw) is not None):
        return raw
    return None


class Constraint(Struct, frozen=True, dict=True):
    """A parsed version constraint from mcp.toml. Equal when the texts are equal."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise _fail(self.text, "it must be a string")
        _ = self._parts  # parsed here, once, so Constraint(text) is always valid

    @functools.cached_property
    def _parts(self) -> _Parts:
        return _parse_text(self.text)

    @classmethod
    def parse(cls, text: str) -> Constraint:
        """Parse `text`; raises InvalidConstraint naming the accepted forms.

        Cached: mcp.toml validation, the resolver and `outdated` each ask for the same texts,
        and a Constraint is immutable."""
        return _parse_constraint(text) if isinstance(text, str) else cls(text)

    def allows(self, v: str) -> bool:
        """Whether `v` satisfies the constraint, ignoring the prerelease policy.

        "latest" allows every version: which one the registry flags is not known here,
        select() narrows it. A version that is not orderable ("auto") is allowed only by
        an exact pin of that very string.
        """
        parts = self._parts
        if parts.latest:
            return True
        p = _point(v)
        if p is None and not parts.clauses:
            return False
        return all(c.allows(v, p) for c in parts.clauses)

    @property
    def is_latest(self) -> bool:
        return self._parts.latest

    @property
    def names_prerelease(self) -> bool:
        """A bound names a prerelease, so prereleases are allowed (pip's rule)."""
        return self._parts.names_prerelease


@lru_cache(maxsize=1024)
def _parse_constraint(text: str) -> Constraint:
    return Constraint(text)


def _point(v: str) -> _Point | None:
    parsed = _parse(v)
    return None if parsed is None else parsed.point


# --- selection ----------------------------------------------------------------------------


def select(
    versions: Sequence[str],
    constraint: Constraint,
    *,
    prereleases: bool = False,
    latest: str | None = None,
) -> str | None:
    """The highest version (registry order) that `constraint` allows, or None.

    "latest" returns `latest`, the registry-flagged version, if it is among `versions`,
    whatever the prerelease policy. Prereleases are candidates only if `prereleases` is
    set or the constraint names one, or when no stable version matches (pip's fallback).
    An exact pin returns its own spelling when present ("v1.2.3" over "1.2.3"); among other
    versions of equal precedence the shortest, then alphabetically first, spelling wins, so
    the answer does not depend on the order of `versions`.
    """
    if constraint.is_latest:
        return latest if latest is not None and latest in versions else None
    exact = constraint._parts.exact  # "==v1.2.3" names a spelling: honour it
    if exact is not None and exact in versions and constraint.allows(exact):
        return exact
    allowed = [v for v in versions if version_key(v) is not None and constraint.allows(v)]
    if not (prereleases or constraint.names_prerelease):
        allowed = [v for v in allowed if not is_prerelease(v)] or allowed
    return _highest(allowed)


def _highest(versions: list[str]) -> str | None:
    best: str | None = None
    best_key: tuple[object, ...] = ()
    # Visit in (length, text) order and replace only on a strictly greater key: among
    # equal precedence the most canonical spelling ("1.0.0" over "1.0.0+build") wins.
    for v in sorted(set(versions), key=lambda s: (len(s), s)):
        key = version_key(v)
        if key is not None and (best is None or _gt(key, best_key)):
            best, best_key = v, key
    return best


# --- what `add` writes ----------------------------------------------------------------------


def saved_constraint(version: str) -> str | None:
    """The constraint `mcpsync add NAME` writes for the version it locked, as `npm install`
    saves `^X.Y.Z`: a caret on the pin, without a leading `v` or build metadata (`^1.2.3`;
    `^0.3.1` keeps to 0.3.x and `^0.0.3` to 0.0.3, as in npm and Cargo; a prerelease pin
    names itself, so prereleases stay allowed). A version a caret cannot hold (a PEP 440
    epoch, a string with no place in the order) is pinned exactly; None when not even that
    parses (then nothing is written: `*`). Every answer allows `version`, so the new lock
    entry stays fresh."""
    parsed = _parse(version)
    if parsed is not None and parsed.point.epoch == 0:
        base = version[1:] if version[:1] in "vV" and _parse(version[1:]) else version
        caret = "^" + base.split("+", 1)[0]
        if _keeps(caret, version):
            return caret
    return next((text for text in (version, f"==={version}") if _keeps(text, version)), None)


def _keeps(text: str, version: str) -> bool:
    """`text` parses, allows `version`, and lets it in under the prerelease policy."""
    try:
        constraint = Constraint.parse(text)
    except InvalidConstraint:
        return False
    return constraint.allows(version) and (
        constraint.names_prerelease or not is_prerelease(version)
    )
