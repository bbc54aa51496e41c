"""Fuzzing: every input kind (mcp.toml, mcp.lock, agent.yaml, JSONC, Codex TOML, the
ownership ledger) mutated (truncation, byte flips and inserts, NUL, BOM, CRLF, deep nesting,
huge values, duplicate lines, escapes) and fed to the real commands; tests/fuzz_helpers.py
holds the oracle.

Three layers: hypothesis examples (a bounded, derandomized count here; bench/fuzz_long.py runs
many more at 10 MB), the seed corpus in tests/fuzz_seeds/<kind>/ (every failure fuzzing
found, replayed exactly: the regression suite), and a few of the nastiest documents through
a real `python -m mcpsync` process with a timeout (a hang or a crash of the interpreter).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_process
from fuzz_helpers import (
    KINDS,
    SEEDS,
    Workspace,
    apply,
    build_workspace,
    examples_wanted,
    exercise,
    mutation_lists,
    register_profiles,
)
from hypothesis import given, settings
from hypothesis import strategies as st

register_profiles()

EXAMPLES = {
    "mcp.toml": 30,
    "mcp.lock": 30,
    "agent.yaml": 40,
    "jsonc": 30,
    "codex": 30,
    "owners.json": 30,
}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return build_workspace(tmp_path_factory.mktemp("fuzz"))


def test_every_seed_document_passes_unmutated(work: Workspace) -> None:
    for kind in KINDS.values():
        codes = exercise(work, kind, work.seed(kind))
        assert codes[0] == 0, (kind.name, codes)  # the unmutated project is in sync


def _fuzz(kind_name: str) -> object:
    @settings(max_examples=examples_wanted(EXAMPLES[kind_name]))
    @given(data=st.data())
    def test(work: Workspace, data: st.DataObject) -> None:
        kind = KINDS[kind_name]
        mutations = data.draw(mutation_lists(kind.name), label="mutations")
        exercise(work, kind, apply(work.seed(kind), kind.name, mutations))

    return test


test_fuzz_mcp_toml = _fuzz("mcp.toml")
test_fuzz_mcp_lock = _fuzz("mcp.lock")
test_fuzz_agent_yaml = _fuzz("agent.yaml")
test_fuzz_jsonc = _fuzz("jsonc")
test_fuzz_codex_toml = _fuzz("codex")
test_fuzz_owners_json = _fuzz("owners.json")


def _corpus() -> list[Path]:
    return sorted(p for p in SEEDS.glob("*/*") if p.is_file())


@pytest.mark.parametrize("seed", _corpus(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_seed_corpus(work: Workspace, seed: Path) -> None:
    exercise(work, KINDS[seed.parent.name], seed.read_bytes())


def test_the_seed_corpus_covers_every_kind() -> None:
    assert {p.parent.name for p in _corpus()} <= set(KINDS)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_nastiest_documents_in_a_real_process(work: Workspace, kind: str) -> None:
    """100,000 unclosed openers, then a 100,000-deep well-formed value: a real interpreter,
    a real timeout (a C-level stack overflow or a hang cannot be caught in-process)."""
    spec = KINDS[kind]
    for balanced in (False, True):
        work.reset()
        document = apply(work.seed(spec), kind, [("deep", (7, 100_000, balanced))])
        (work.root / spec.rel).write_bytes(document)
        for argv, _ in dict.fromkeys((spec.commands[0], spec.commands[-1])):  # read, write
            result = run_process("-C", work.project, *argv, env=work.env, timeout=60)
            assert result.code in (0, 1, 2, 3), (argv, str(result))
            assert "Traceback" not in result.err, (argv, str(result))
