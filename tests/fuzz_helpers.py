"""The fuzzing harness: realistic seed documents, byte mutations, and the oracle every command
run must pass. Used by tests/test_fuzz.py (hypothesis, bounded) and bench/fuzz_long.py.

Not a test module. The workspace is one project built once from examples/quickstart, locked
and synced, with a VS Code file (JSONC, comments) and a Codex config beside it, whose
hand-written `mine` entry mcp.toml declares and sync adopted; every example
restores it, puts one mutated document in place of one of its files, runs the real commands
in-process and checks:

- the exit code is 0, 2 or 3 (1 only for a --check), never 70 (an internal error: a bug);
- no traceback; a failure is one `error:` line and its indented lines (a hint, lock's line
  per failed server), stdout empty (with --json: one `{"error": ...}` document), no line
  over MAX_LINE characters;
- a failure (or a check's 1) changed no file under the project, HOME or the state dir
  (bytes, mtime and inode: a rewrite with the same bytes still shows);
- a success, run again, changes nothing and succeeds again;
- no command runs longer than HANG_SECONDS (SIGALRM raises a BaseException, which the
  CLI's last-resort handler does not catch).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from cli_helpers import REPO, Result, run_cli

HANG_SECONDS = 20.0
MAX_LINE = 1000  # an error that quotes a 10 MB value is not a clear error
MAX_SERVERS = 8  # the seed project has 6 servers; a mutated mcp.toml may add a couple
BOM = b"\xef\xbb\xbf"

# --- the seed documents ----------------------------------------------------------------------

VSCODE = textwrap.dedent(
    """\
    // Workspace MCP servers. mcpsync owns the entries it writes; this one is ours.
    {
      "servers": {
        /* a hand-written server */
        "mine": { "type": "stdio", "command": "node", "args": ["mine.js"] },
      },
      "inputs": [],
    }
    """
)
CODEX = textwrap.dedent(
    """\
    # Codex settings for this repo
    model = "o4-mini"

    [mcp_servers.mine]
    command = "node"
    args = ["mine.js"]
    env = { MINE_MODE = "fast" }
    """
)
EXTRA_TARGETS = textwrap.dedent(
    """
    [[targets]]
    kind = "vscode"

    [[targets]]
    kind = "codex"

    [servers.mine]                     # the hand-written entry of both files, declared
    command = "node"
    args = ["mine.js"]
    """
)

# The input kinds: where the document lives in the project, and the commands that read it.
# Each command is (argv, may_exit_1): 1 is a check's "differs", and sync's "the lock is stale".
# `lock` reads a file: snapshot, so all of this is offline.
LOCK = (("lock",), False)
LOCK_CHECK = (("lock", "--check"), True)
SYNC = (("sync",), True)
SYNC_CHECK = (("sync", "--check"), True)
LIST = (("list",), False)
LIST_JSON = (("list", "--json"), False)
IMPORT_VSCODE = (("import", ".vscode/mcp.json"), False)
IMPORT_CODEX = (("import", ".codex/config.toml"), False)

Command = tuple[tuple[str, ...], bool]


@dataclass(frozen=True)
class Kind:
    name: str  # also the seed corpus directory: tests/fuzz_seeds/<name>/
    rel: str  # the file, relative to the workspace root (proj/, home/, state/)
    commands: tuple[Command, ...]


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "mcp.toml", "proj/mcp.toml", (LOCK_CHECK, SYNC_CHECK, LIST, LOCK, SYNC, IMPORT_VSCODE)
        ),
        Kind("mcp.lock", "proj/mcp.lock", (LOCK_CHECK, SYNC_CHECK, LIST_JSON, SYNC, LOCK)),
        Kind("agent.yaml", "proj/agents/research/agent.yaml", (SYNC_CHECK, SYNC)),
        Kind("jsonc", "proj/.vscode/mcp.json", (SYNC_CHECK, IMPORT_VSCODE, SYNC)),
        Kind("codex", "proj/.codex/config.toml", (SYNC_CHECK, IMPORT_CODEX, SYNC)),
        # the ownership ledger: the holodeck-global target is a shared (ledgered) file
        Kind("owners.json", "state/owners.json", (SYNC_CHECK, SYNC)),
    )
}
SEEDS = REPO / "tests" / "fuzz_seeds"


# --- the workspace ---------------------------------------------------------------------------

FileState = dict[Path, tuple[bytes, int, int]]


class Hang(BaseException):
    """A command ran past HANG_SECONDS. A BaseException so `except Exception` in the CLI's
    last line of defence does not turn it into exit 70."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no answer within {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Workspace:
    """proj/, home/ and state/ under `root`, restored from `pristine` before each example
    (same absolute paths, so the ownership ledger stays valid)."""

    root: Path
    pristine: Path

    @property
    def project(self) -> Path:
        return self.root / "proj"

    @property
    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.root / "home"),
            "MCPSYNC_STATE_DIR": str(self.root / "state"),
            "XDG_STATE_HOME": str(self.root / "xdg-state"),
            "XDG_CONFIG_HOME": str(self.root / "home" / ".config"),
            # the snapshot even when a mutation breaks mcp.toml's [registry]: never the network
            "MCPSYNC_REGISTRY": "file:registry",
        }

    def run(self, *args: str) -> Result:
        with time_limit(HANG_SECONDS):
            return run_cli("-C", self.project, *args, env=self.env)

    def reset(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(self.pristine, self.root, symlinks=True)

    def files(self) -> FileState:
        """Bytes, mtime and inode of every file under root."""
        state: FileState = {}
        for path in sorted(self.root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                st = path.stat()
                state[path] = (path.read_bytes(), st.st_mtime_ns, st.st_ino)
        return state

    def seed(self, kind: Kind) -> bytes:
        return (self.pristine / kind.rel).read_bytes()


def build_workspace(base: Path) -> Workspace:
    """The quickstart example plus a VS Code and a Codex target, locked and synced."""
    work = Workspace(base / "work", base / "pristine")
    project = work.project
    shutil.copytree(REPO / "examples" / "quickstart", project)
    manifest = project / "mcp.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + EXTRA_TARGETS, encoding="utf-8")
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text(VSCODE, encoding="utf-8")
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text(CODEX, encoding="utf-8")
    (work.root / "home").mkdir()
    # --adopt: the hand-written `mine` entries become sync's (from mcp.toml's `mine`)
    for args in (("lock",), ("sync", "--adopt")):
        result = work.run(*args)
        assert result.code == 0, str(result)
    shutil.copytree(work.root, work.pristine, symlinks=True)
    return work


# --- the oracle ------------------------------------------------------------------------------


def diff(before: FileState, after: FileState) -> list[str]:
    """Names of the files created, removed or touched (relative, sorted)."""
    keys = sorted(set(before) | set(after))
    return [str(k) for k in keys if before.get(k) != after.get(k)]


def check_run(work: Workspace, argv: Sequence[str], may_exit_1: bool) -> Result:
    """Run one command on the current workspace and hold it to the oracle."""
    before = work.files()
    result = work.run(*argv)
    allowed = {0, 2, 3} | ({1} if may_exit_1 else set())
    assert result.code in allowed, f"mcpsync {' '.join(argv)}: {result}"
    assert "Traceback" not in result.err, str(result)
    longest = max((len(line) for line in result.err_lines), default=0)
    assert longest <= MAX_LINE, f"a {longest}-character line on stderr: {result.err[:300]}"
    if result.code in (2, 3):
        assert_one_error(result, json_out="--json" in argv)
    if result.code != 0:
        changed = diff(before, work.files())
        assert not changed, f"mcpsync {' '.join(argv)} failed but changed {changed}: {result}"
        return result
    after = work.files()
    again = work.run(*argv)
    assert again.code == 0, f"mcpsync {' '.join(argv)} succeeded, then: {again}"
    changed = diff(after, work.files())
    assert not changed, f"mcpsync {' '.join(argv)} again changed {changed}: {again}"
    return result


def assert_one_error(result: Result, *, json_out: bool = False) -> None:
    """stderr: `warning:` lines, then one `error:` line and its indented lines (a hint; lock's
    one line per failed server). stdout: empty, or with --json one `{"error": ...}` document."""
    if json_out:
        assert set(json.loads(result.out)) == {"error"}, str(result)
    else:
        assert result.out == "", str(result)
    lines = [line for line in result.err_lines if not line.startswith("warning: ")]
    assert lines and lines[0].startswith("error: "), str(result)
    assert all(line.startswith("  ") for line in lines[1:]), str(result)
    assert len(lines) <= 2 + 2 * MAX_SERVERS, str(result)


def exercise(work: Workspace, kind: Kind, document: bytes) -> list[int]:
    """Restore the workspace, put `document` in place of the kind's file, run every command
    of the kind in order (each judged on its own). Returns the exit codes."""
    work.reset()
    (work.root / kind.rel).write_bytes(document)
    return [check_run(work, argv, may_1).code for argv, may_1 in kind.commands]


# --- mutations -------------------------------------------------------------------------------
# Each is (name, parameters); positions are taken modulo the document's length at the time,
# so a list of mutations always applies and shrinks toward the start of the file.


def truncate(doc: bytes, at: int) -> bytes:
    return doc[: at % (len(doc) + 1)]


def flip(doc: bytes, at: int, bit: int) -> bytes:
    if not doc:
        return doc
    out = bytearray(doc)
    out[at % len(doc)] ^= 1 << (bit % 8)
    return bytes(out)


def insert(doc: bytes, at: int, data: bytes) -> bytes:
    i = at % (len(doc) + 1)
    return doc[:i] + data + doc[i:]


def crlf(doc: bytes) -> bytes:
    return doc.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _line_starts(doc: bytes) -> list[int]:
    return [0] + [m.end() for m in re.finditer(b"\n", doc) if m.end() < len(doc)]


def duplicate_line(doc: bytes, at: int) -> bytes:
    """Repeat one line right after itself: duplicate keys, tables, list items."""
    starts = _line_starts(doc)
    start = starts[at % len(starts)]
    end = doc.find(b"\n", start)
    end = len(doc) if end < 0 else end + 1
    line = doc[start:end] if doc[start:end].endswith(b"\n") else doc[start:end] + b"\n"
    return doc[:end] + line + doc[end:]


NESTING = {  # kind -> how a value nests, as (line prefix, opener, closer)
    "mcp.toml": (b"deep = ", b"[", b"]"),
    "mcp.lock": (b"deep = ", b"[", b"]"),
    "codex": (b"deep = ", b"[", b"]"),
    "agent.yaml": (b"deep: ", b"[", b"]"),
    "jsonc": (b'"deep": ', b"[", b"]"),
    "owners.json": (b'"deep": ', b"[", b"]"),
}


def deep(doc: bytes, kind: str, at: int, depth: int, balanced: bool) -> bytes:
    """`depth` nested lists: a well-formed `deep = [[[...]]]` line at a line start, or bare
    openers at any offset."""
    prefix, opener, closer = NESTING[kind]
    if not balanced:
        return insert(doc, at, opener * depth)
    starts = _line_starts(doc)
    start = starts[at % len(starts)]
    suffix = b",\n" if kind == "jsonc" else b"\n"
    return doc[:start] + prefix + opener * depth + closer * depth + suffix + doc[start:]


# Escapes that decode to what a raw byte could not carry: NUL, a lone surrogate, U+2028, NEL.
ESCAPES = (b"\\u0000", b"\\ud800", b"\\u2028", b"\\u0085")
_QUOTED = re.compile(rb'"[^"\\\n]*"')


def huge(doc: bytes, at: int, size: int) -> bytes:
    """One quoted string's content replaced by `size` bytes (the start of the file when it
    has none)."""
    spans = list(_QUOTED.finditer(doc))
    if not spans:
        return insert(doc, 0, b"x" * size)
    span = spans[at % len(spans)]
    return doc[: span.start() + 1] + b"x" * size + doc[span.end() - 1 :]


def escape(doc: bytes, at: int, which: int) -> bytes:
    """An escape sequence (ESCAPES) put inside one quoted string, where the parser decodes it."""
    spans = list(_QUOTED.finditer(doc))
    if not spans:
        return doc
    return insert(doc, spans[at % len(spans)].start() + 1, ESCAPES[which % len(ESCAPES)])


def apply(doc: bytes, kind: str, mutations: Sequence[tuple[str, tuple[Any, ...]]]) -> bytes:
    for name, params in mutations:
        doc = _APPLY[name](doc, kind, *params)
    return doc


_APPLY: dict[str, Any] = {
    "truncate": lambda doc, kind, at: truncate(doc, at),
    "flip": lambda doc, kind, at, bit: flip(doc, at, bit),
    "insert": lambda doc, kind, at, data: insert(doc, at, data),
    "nul": lambda doc, kind, at: insert(doc, at, b"\0"),
    "bom": lambda doc, kind: BOM + doc,
    "crlf": lambda doc, kind: crlf(doc),
    "duplicate": lambda doc, kind, at: duplicate_line(doc, at),
    "deep": deep,
    "huge": lambda doc, kind, at, size: huge(doc, at, size),
    "escape": lambda doc, kind, at, which: escape(doc, at, which),
}


def examples_wanted(default: int) -> int:
    """MCPSYNC_FUZZ_EXAMPLES overrides the per-kind example count (bench/fuzz_long.py)."""
    return int(os.environ.get("MCPSYNC_FUZZ_EXAMPLES", default))


def huge_size() -> int:
    """The size of a huge value: 256 kB in the suite, MCPSYNC_FUZZ_HUGE (10 MB in the bench)."""
    return int(os.environ.get("MCPSYNC_FUZZ_HUGE", 256_000))


def mutation_lists(kind: str) -> Any:
    """A hypothesis strategy: one to three mutations for a document of `kind`."""
    from hypothesis import strategies as st

    at = st.integers(min_value=0, max_value=1 << 16)
    junk = st.binary(min_size=1, max_size=8) | st.sampled_from(
        [b"\r", b"\t", b"\\", b'"', b"'", b"\xff", b"\xc3", b"\xe2\x80\xa8", b"${", b"{", b"["]
        + list(ESCAPES)
    )
    one = st.one_of(
        st.tuples(st.just("truncate"), st.tuples(at)),
        st.tuples(st.just("flip"), st.tuples(at, st.integers(0, 7))),
        st.tuples(st.just("insert"), st.tuples(at, junk)),
        st.tuples(st.just("nul"), st.tuples(at)),
        st.tuples(st.just("bom"), st.just(())),
        st.tuples(st.just("crlf"), st.just(())),
        st.tuples(st.just("duplicate"), st.tuples(at)),
        st.tuples(
            st.just("deep"),
            st.tuples(at, st.sampled_from([100, 1_000, 10_000]), st.booleans()),
        ),
        st.tuples(st.just("huge"), st.tuples(at, st.just(huge_size()))),
        st.tuples(st.just("escape"), st.tuples(at, st.integers(0, len(ESCAPES) - 1))),
    )
    return st.lists(one, min_size=1, max_size=3)


def register_profiles() -> None:
    """`ci` (the default): repeatable (derandomized, no example database), bounded by the
    example count; hangs are caught by HANG_SECONDS, not by a flaky per-example deadline on a
    busy CI machine. `long` (HYPOTHESIS_PROFILE=long, bench/fuzz_long.py): random, more."""
    from hypothesis import HealthCheck, settings

    common: dict[str, Any] = {
        "database": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
        "print_blob": True,
    }
    settings.register_profile("ci", derandomize=True, deadline=None, **common)
    settings.register_profile("long", deadline=None, **common)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
