"""Version order and constraint language (mcpsync.versions), table-driven."""

from __future__ import annotations

import random

import pytest

from mcpsync.errors import InputError, InvalidConstraint
from mcpsync.versions import (
    Constraint,
    is_prerelease,
    is_semver,
    registry_latest,
    select,
    version_key,
)

# --- is_semver ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.2.3", True),
        ("v1.2.3", True),
        ("0.0.0", True),
        ("1.2.3-0", True),
        ("0.1.18-beta", True),
        ("2.0.0-alpha.104", True),
        ("1.0.0-alpha-1.x-y", True),
        ("1.0.0+build", True),
        ("1.2.3-rc.1+build.5", True),
        ("1.2", False),
        ("2.1", False),
        ("1.2.3.4", False),
        ("2025.10.23.1321", False),
        ("01.2.3", False),
        ("1.2.3-01", False),
        ("1.2.3-", False),
        ("1.2.3+", False),
        ("V1.2.3", False),
        ("vv1.2.3", False),
        ("0.5.2rc4", False),
        ("1.0.0.post1", False),
        ("0.7.10.dev1", False),
        ("auto", False),
        ("{{VERSION}}", False),
        ("", False),
    ],
)
def test_is_semver(version: str, expected: bool) -> None:
    assert is_semver(version) is expected


# --- version_key: the registry order ------------------------------------------------------

ASCENDING_PAIRS = [
    # semver traps packaging gets wrong
    ("1.2.3-0", "1.2.3"),
    ("2.0.0-alpha.99", "2.0.0-alpha.104"),
    ("1.0.0-alpha", "1.0.0-alpha.1"),
    ("1.0.0-alpha.1", "1.0.0-alpha.beta"),
    ("1.0.0-alpha.beta", "1.0.0-beta"),
    ("1.0.0-beta", "1.0.0-beta.2"),
    ("1.0.0-beta.2", "1.0.0-beta.11"),
    ("1.0.0-beta.11", "1.0.0-rc.1"),
    ("1.0.0-rc.1", "1.0.0"),
    ("1.0.0-rc.1+build", "1.0.0"),
    ("0.1.17", "0.1.18-beta"),
    ("0.1.18-beta", "0.1.18"),
    ("1.9.0", "1.10.0"),
    ("1.2.3", "v1.2.4"),
    ("v1.2.3", "1.2.4"),
    # any semver beats any non-semver
    ("2025.10.23.1321", "0.0.1"),
    ("2.1", "1.0.0"),
    ("1.0.0.post1", "0.0.1-alpha"),
    ("0.7.10.dev1", "0.0.1"),
    # non-semver PEP 440 versions order by PEP 440
    ("0.5.2rc4", "0.5.2"),
    ("0.5.2rc4", "0.7.10.dev1"),
    ("0.7.10.dev1", "0.7.10rc1"),
    ("0.7.10.dev1", "0.7.10"),
    ("1.0.0.post1", "1.0.0.post2"),
    ("1.0.0.post1", "2.1"),
    ("2.1", "2.1.post1"),
    ("2.1", "2025.10.23.1321"),
]


@pytest.mark.parametrize(("lower", "higher"), ASCENDING_PAIRS)
def test_version_key_orders(lower: str, higher: str) -> None:
    low, high = version_key(lower), version_key(higher)
    assert low is not None and high is not None
    assert low < high
    assert not high < low


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("v1.2.3", "1.2.3"),
        ("1.0.0+build", "1.0.0"),
        ("1.0.0+a", "1.0.0+b"),
        ("v1.0.0-rc.1+x", "1.0.0-rc.1"),
        ("2.1", "2.1.0.0"),
    ],
)
def test_version_key_equal_precedence(a: str, b: str) -> None:
    assert version_key(a) is not None
    assert version_key(a) == version_key(b)


@pytest.mark.parametrize("version", ["auto", "{{VERSION}}", "", "latest", "1..2", "main"])
def test_version_key_none_for_pin_only_versions(version: str) -> None:
    assert version_key(version) is None


def test_sorting_a_shuffled_mix_gives_the_registry_order() -> None:
    expected = [
        "0.5.2rc4",
        "0.7.10.dev1",
        "1.0.0.post1",
        "2.1",
        "2025.10.23.1321",
        "0.1.18-beta",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-beta",
        "1.0.0-rc.1",
        "1.0.0",
        "1.2.3-0",
        "1.2.3",
        "2.0.0-alpha.99",
        "2.0.0-alpha.104",
    ]
    shuffled = expected[:]
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled, key=version_key) == expected  # type: ignore[arg-type]


# --- is_prerelease ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.0.0-rc.1", True),
        ("1.2.3-0", True),
        ("0.1.18-beta", True),
        ("v2.0.0-alpha.104", True),
        ("1.0.0-rc.1+build", True),
        ("0.5.2rc4", True),
        ("0.7.10.dev1", True),
        ("1.0.0", False),
        ("v1.2.3", False),
        ("1.0.0+build", False),
        ("1.0.0.post1", False),
        ("2.1", False),
        ("2025.10.23.1321", False),
        ("auto", False),
        ("{{VERSION}}", False),
    ],
)
def test_is_prerelease(version: str, expected: bool) -> None:
    assert is_prerelease(version) is expected


# --- registry_latest ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("oldest_first", "expected"),
    [
        (["1.0.0", "2.0.0", "1.5.0"], "2.0.0"),
        (["1.0.0", "1.10.0", "1.9.0"], "1.10.0"),
        (["2.0.0-alpha.104", "2.0.0-alpha.99"], "2.0.0-alpha.104"),
        (["1.0.0", "2.0.0-rc.1"], "2.0.0-rc.1"),  # the registry does not skip prereleases
        (["1.2.3", "1.2.3-0"], "1.2.3"),
        (["1.0.0", "auto"], "1.0.0"),  # semver beats a later non-semver
        (["2025.10.23.1321", "0.0.1"], "0.0.1"),
        (["2025.10.23.1321", "2.1"], "2.1"),  # no semver: the last published
        (["2.1", "auto"], "auto"),
        (["{{VERSION}}"], "{{VERSION}}"),
        (["1.0.0", "1.0.0+build"], "1.0.0"),  # a tie keeps the earlier one
        (["v1.2.3", "1.2.3"], "v1.2.3"),
        ([], None),
    ],
)
def test_registry_latest(oldest_first: list[str], expected: str | None) -> None:
    assert registry_latest(oldest_first) == expected


# --- Constraint.allows --------------------------------------------------------------------

# (constraint, allowed versions, denied versions); allows() ignores the prerelease policy.
ALLOWS_TABLE: list[tuple[str, list[str], list[str]]] = [
    # PEP 440 comparisons; a bound "1.2" is 1.2.0 for semver versions
    (
        ">=1.2,<2",
        ["1.2.0", "1.2", "v1.5.0", "1.9.9", "1.5.0-rc.1", "1.99"],
        ["1.1.9", "1.2.0-rc.1", "2.0.0", "2.0.0-rc.1", "2.0.0-0", "2.0.0.dev1", "auto"],
    ),
    (">=1.2 <2", ["1.2.0", "1.9.9"], ["1.1.0", "2.0.0-rc.1"]),
    (">= 1.2, < 2", ["1.5.0"], ["2.0.0", "1.0.0"]),
    ("~=1.4", ["1.4.0", "1.9.0", "1.4"], ["1.3.9", "2.0.0", "2.0.0-rc.1"]),
    ("~=1.4.2", ["1.4.2", "1.4.9"], ["1.5.0", "1.4.1"]),
    ("==1.2.*", ["1.2.0", "1.2.9", "v1.2.3", "1.2"], ["1.3.0", "1.20.0", "1.1.9"]),
    ("!=1.3.0", ["1.2.0", "1.3.1", "1.3.0-rc.1"], ["1.3.0", "v1.3.0", "1.3.0+build", "1.3"]),
    ("==1.0.*", ["1", "1.0", "1.0.5", "v1.0.0"], ["1.1", "0.9.9", "2.0.0"]),
    ("!=1.3.*", ["1.4.0", "1.2.9"], ["1.3.5", "1.3.0"]),
    (">1", ["1.0.1", "2.1", "1.0.1-rc.1"], ["1.0.0", "1", "1.0.0.post1", "0.9.0"]),
    ("<=2", ["2.0.0", "2", "1.0.0", "2.0.0-rc.1"], ["2.0.1", "2.0.0.post1", "2.1"]),
    ("<1.0.0-rc.2", ["1.0.0-rc.1", "0.9.0"], ["1.0.0-rc.2", "1.0.0"]),
    ("==1.2", ["1.2.0", "1.2"], ["1.2.1"]),
    ("=1.2.3", ["1.2.3"], ["1.2.4"]),
    ("===1.2.3", ["1.2.3"], ["v1.2.3", "1.2.3+build"]),
    ("===auto", ["auto"], ["Auto", "1.0.0"]),
    # semver traps in bounds
    (">=1.2.3-0", ["1.2.3-0", "1.2.3", "1.2.3-alpha"], ["1.2.2", "1.2.2-9"]),
    ("1.2.3-0", ["1.2.3-0"], ["1.2.3", "1.2.3.post0"]),
    (">2.0.0-alpha.99", ["2.0.0-alpha.104", "2.0.0-alpha.100", "2.0.0"], ["2.0.0-alpha.98"]),
    (
        ">=1.0.0-alpha.1,<1.0.0-beta",
        ["1.0.0-alpha.1", "1.0.0-alpha.beta"],
        ["1.0.0-alpha", "1.0.0-beta"],
    ),
    # same release, prerelease of either kind: the PEP 440 one is lower
    ("==1.2.3rc1", ["1.2.3rc1"], ["1.2.3-rc.1", "1.2.3"]),
    ("<1.2.3-alpha", ["1.2.3rc1", "1.2.2"], ["1.2.3-beta", "1.2.3"]),
    # PEP 440 versions the registry holds
    (">=0.7.10.dev1,<=0.7.10", ["0.7.10.dev1", "0.7.10rc1", "0.7.10"], ["0.7.9", "0.7.10.post1"]),
    ("<0.7.10", ["0.7.9", "0.7.9.post1"], ["0.7.10.dev1", "0.7.10rc1", "0.7.10"]),
    (">=0.5.2rc4", ["0.5.2", "0.5.2rc5"], ["0.5.2rc3"]),
    # npm / Cargo caret and tilde
    ("^1.2.3", ["1.2.3", "1.9.0", "v1.2.4", "1.2.3.post1"], ["1.2.2"]),
    ("^1.2.3", ["1.99.99"], ["2.0.0", "2.0.0-rc.1", "1.2.3-rc.1", "2.0.0.dev1"]),
    ("^0.2.3", ["0.2.3", "0.2.9"], ["0.3.0", "0.2.2"]),
    ("^0.0.3", ["0.0.3"], ["0.0.4", "0.0.2"]),
    ("^1.2", ["1.2.0", "1.9.9"], ["2.0.0", "1.1.0"]),
    ("^1", ["1.0.0", "1.9.0"], ["2.0.0", "0.9.9"]),
    ("^0.0", ["0.0.5"], ["0.1.0"]),
    ("^1.x", ["1.5.0"], ["2.0.0"]),
    ("^ 1.2", ["1.2.0"], ["2.0.0"]),
    ("^v1.2.3", ["1.2.3"], ["2.0.0"]),
    ("^2025.10", ["2025.10.23.1321", "2025.11.1", "2025.10"], ["2026.1.1", "2025.9.30"]),
    ("^1.2.3-beta.2", ["1.2.3-beta.2", "1.2.3-beta.11", "1.2.3", "1.9.0"], ["1.2.3-beta.1"]),
    ("~1.2", ["1.2.0", "1.2.9"], ["1.3.0", "1.1.9", "1.3.0-rc.1"]),
    ("~1.2.3", ["1.2.3", "1.2.9"], ["1.3.0", "1.2.2"]),
    ("~1", ["1.9.0"], ["2.0.0"]),
    # x-ranges and "any"
    ("1.x", ["1.0.0", "1.9.9", "v1.2.3"], ["2.0.0", "0.9.0", "2.0.0-rc.1", "1.0.0-rc.1"]),
    ("1.2.x", ["1.2.0", "1.2.7"], ["1.3.0", "1.1.0"]),
    ("1.*", ["1.5.0"], ["2.0.0"]),
    ("1.X.x", ["1.5.0"], ["2.0.0"]),
    ("*", ["1.0.0", "2.1", "0.7.10.dev1", "1.0.0-rc.1"], ["auto", "{{VERSION}}"]),
    ("", ["1.0.0"], ["auto"]),
    ("x", ["3.0.0"], ["auto"]),
    # bare versions mean exactly that version
    ("1.2.3", ["1.2.3", "v1.2.3", "1.2.3+build"], ["1.2.4", "1.2.3-0", "1.2.3-rc.1", "auto"]),
    ("v1.2.3", ["1.2.3"], ["1.2.4"]),
    ("2.1", ["2.1", "2.1.0"], ["2.1.1", "2.1.post1"]),
    # versions that can only be pinned exactly
    ("auto", ["auto"], ["Auto", "1.0.0", "{{VERSION}}"]),
    ("{{VERSION}}", ["{{VERSION}}"], ["auto", "1.0.0"]),
    # "latest" places no bound: select() narrows it to the flagged version
    ("latest", ["1.0.0", "auto", "2.0.0-rc.1"], []),
]

ALLOWS_CASES = [(c, v, True) for c, yes, _ in ALLOWS_TABLE for v in yes] + [
    (c, v, False) for c, _, no in ALLOWS_TABLE for v in no
]


@pytest.mark.parametrize(("constraint", "version", "expected"), ALLOWS_CASES)
def test_allows(constraint: str, version: str, expected: bool) -> None:
    assert Constraint.parse(constraint).allows(version) is expected


# --- Constraint properties ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("^1.2.3-beta.1", True),
        ("1.0.0-rc.1", True),
        (">=0.7.10.dev1", True),
        ("==2.0.0-alpha.99", True),
        ("<1.0.0-rc.2", True),
        ("~=0.5.2rc4", True),
        ("===1.0.0-rc.1", True),
        (">=1.0, <2.0.0-rc.1", True),
        ("^1.2.3", False),
        ("*", False),
        ("1.x", False),
        ("!=1.0.0-rc.1", False),  # excluding a prerelease does not ask for them
        ("latest", False),
        ("auto", False),
    ],
)
def test_names_prerelease(constraint: str, expected: bool) -> None:
    assert Constraint.parse(constraint).names_prerelease is expected


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [("latest", True), ("LATEST", True), (" latest ", True), ("*", False), ("1.2.3", False)],
)
def test_is_latest(constraint: str, expected: bool) -> None:
    assert Constraint.parse(constraint).is_latest is expected


def test_constraint_is_a_frozen_value_keyed_by_text() -> None:
    c = Constraint.parse("^1.2")
    assert c == Constraint("^1.2") and hash(c) == hash(Constraint("^1.2"))
    assert c != Constraint.parse("^1.3")
    assert c.text == "^1.2"
    with pytest.raises(AttributeError):  # frozen
        c.text = "^2"  # type: ignore[misc]


# --- InvalidConstraint --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("constraint", "reason"),
    [
        ("^", "'^' needs a version after it"),
        (">=", "'>=' needs a version after it"),
        ("~", "'~' needs a version after it"),
        ("===", "'===' needs a version after it"),
        ("1..2", "'1..2' is not a version"),
        (">=1..2", "'1..2' is not a version"),
        ("1.x.3", "'1.x.3' is not a version"),
        (">=1.2.*", "'1.2.*' is not a version"),
        ("==1.x.*", "needs release numbers before '.*'"),
        ("^v", "'v' is not a version"),
        ("==auto", "'auto' is not a version"),
        ("^1.2 || ^2", "alternatives ('||') are not supported"),
        ("1.2 - 2", "hyphen ranges"),
        ("~=1", "'~=' needs at least two release parts"),
        ("latest, >=1", "'latest' cannot be combined"),
        ("auto >=1", "'auto' is not a version or a condition"),
        # a doubled operator is a typo, not an odd version string to pin with '===' (issue 15)
        ("^^1", "'^^1' has two operators in a row; write one, e.g. '^1'"),
        (">=>1.2", "'>=>1.2' has two operators in a row; write one, e.g. '>=1.2'"),
        ("==^1", "'==^1' has two operators in a row; write one, e.g. '==1'"),
    ],
)
def test_invalid_constraint_says_why_and_what_is_accepted(constraint: str, reason: str) -> None:
    with pytest.raises(InvalidConstraint) as info:
        Constraint.parse(constraint)
    message = info.value.message
    assert message.startswith(f"invalid version constraint {constraint!r}: ")
    assert reason in message
    for form in ("'^1.2.3'", "'~1.2'", "'1.x'", "'latest'", "'>=1.2,<2'", "'==="):
        assert form in message
    assert "pin odd strings with '===^" not in message


def test_invalid_constraint_is_an_input_error_exit_2() -> None:
    with pytest.raises(InputError) as info:
        Constraint.parse("^")
    assert info.value.exit_code == 2


def test_non_string_constraint_is_rejected() -> None:
    with pytest.raises(InvalidConstraint, match="must be a string"):
        Constraint.parse(2)  # type: ignore[arg-type]


# --- select -------------------------------------------------------------------------------

MIXED = ["0.9.0", "1.0.0", "1.1.0", "1.2.0-rc.1", "2.0.0-beta.1", "auto"]


@pytest.mark.parametrize(
    ("versions", "constraint", "prereleases", "expected"),
    [
        # stable preferred; prereleases when asked or named
        (MIXED, "*", False, "1.1.0"),
        (MIXED, "*", True, "2.0.0-beta.1"),
        (MIXED, "^1", False, "1.1.0"),
        (MIXED, "^1", True, "1.2.0-rc.1"),
        (MIXED, "<2", True, "1.2.0-rc.1"),  # <2 keeps out 2.0.0-beta.1 even when asked
        (MIXED, "^2.0.0-beta.1", False, "2.0.0-beta.1"),
        (MIXED, ">=1.2.0-rc.1", False, "2.0.0-beta.1"),
        (MIXED, "1.2.0-rc.1", False, "1.2.0-rc.1"),
        # pip's fallback: only prereleases match
        (MIXED, ">=1.5", False, "2.0.0-beta.1"),
        (["2.0.0-alpha.99", "2.0.0-alpha.104"], "*", False, "2.0.0-alpha.104"),
        (["0.1.18-beta", "0.1.17"], "*", False, "0.1.17"),
        (["1.2.3-0", "1.2.2"], "*", False, "1.2.2"),
        (["1.2.3-0", "1.2.2"], "*", True, "1.2.3-0"),
        (["0.7.10.dev1", "0.7.9.post1"], "*", False, "0.7.9.post1"),
        (["0.7.10.dev1", "0.7.9.post1"], "*", True, "0.7.10.dev1"),
        # exact pins, including versions outside the order
        (MIXED, "auto", False, "auto"),
        (MIXED, "===auto", False, "auto"),
        (["auto", "{{VERSION}}"], "*", True, None),
        (["auto", "{{VERSION}}"], "{{VERSION}}", False, "{{VERSION}}"),
        (MIXED, "1.0.0", False, "1.0.0"),
        (MIXED, "3.0.0", False, None),
        # equal precedence: an exact pin keeps its spelling, else the canonical one wins
        (["v1.2.3", "1.2.3"], "v1.2.3", False, "v1.2.3"),
        (["v1.2.3", "1.2.3"], "1.2.3", False, "1.2.3"),
        (["v1.2.3", "1.2.3"], "==v1.2.3", False, "v1.2.3"),
        (["v1.2.3", "1.2.3"], "=v1.2.3", False, "v1.2.3"),
        (["1.2.3", "v1.2.3"], "===v1.2.3", False, "v1.2.3"),
        (["2.1.0", "2.1"], "2.1", False, "2.1"),
        (["2.1.0", "2.1"], "==2.1.0", False, "2.1.0"),
        (["v1.2.3"], "1.2.3", False, "v1.2.3"),
        (["v1.2.3", "1.2.3"], "*", False, "1.2.3"),
        (["1.0.0+build", "1.0.0"], "*", False, "1.0.0"),
        (["1.0.0", "1.0.0+build"], "^1", False, "1.0.0"),
        # registry order across worlds: semver beats non-semver, constraints compare numbers
        (["2025.10.23.1321", "1.0.0"], "*", False, "1.0.0"),
        (["0.7.10.dev1", "0.7.9"], "*", True, "0.7.9"),
        (["2025.10.23.1321", "1.0.0"], "^2025.10", False, "2025.10.23.1321"),
        (["2.1", "2.0", "1.0.0.post1"], ">=1", False, "2.1"),
        (MIXED, ">=3", False, None),
        ([], "*", False, None),
    ],
)
def test_select(
    versions: list[str], constraint: str, prereleases: bool, expected: str | None
) -> None:
    assert select(versions, Constraint.parse(constraint), prereleases=prereleases) == expected


@pytest.mark.parametrize(
    ("latest", "prereleases", "expected"),
    [
        ("1.1.0", False, "1.1.0"),
        ("0.9.0", False, "0.9.0"),  # the flag decides, not the order
        ("2.0.0-beta.1", False, "2.0.0-beta.1"),  # the flag decides, not the policy
        ("auto", False, "auto"),
        ("9.9.9", False, None),  # flagged version not among the candidates
        (None, True, None),
    ],
)
def test_select_latest_returns_the_flagged_version(
    latest: str | None, prereleases: bool, expected: str | None
) -> None:
    got = select(MIXED, Constraint.parse("latest"), prereleases=prereleases, latest=latest)
    assert got == expected


def test_latest_keyword_is_ignored_for_other_constraints() -> None:
    assert select(MIXED, Constraint.parse("^1"), latest="0.9.0") == "1.1.0"
