"""mcpsync.waiting: which host has kept a command waiting (issue 15: a registry that accepts
connections and never answers gave 27.7 s of silence)."""

from __future__ import annotations

import time

import pytest

from mcpsync import waiting


@pytest.fixture(autouse=True)
def clean() -> None:
    waiting._quiet.clear()
    waiting._busy.clear()


def test_silence_lasts_across_retries_and_ends_with_an_answer() -> None:
    with waiting.request("h:1", budget=10):
        assert waiting.silent(after=0) == [waiting.Silence("h:1", pytest.approx(0, abs=0.5), 10)]
    with waiting.request("h:1", budget=10):  # the retry after a timeout waits on
        assert [s.host for s in waiting.silent(after=0)] == ["h:1"]
        waiting.answered("h:1")
        assert waiting.silent(after=0) == []
    assert waiting.silent(after=0) == []  # nothing in flight: nothing to say


def test_an_earlier_request_silence_does_not_carry_over() -> None:
    with waiting.request("h:2", budget=0.01):
        pass  # timed out, never answered
    time.sleep(0.05)
    with waiting.request("h:2", budget=0.01):  # a new request, long after: a new silence
        assert waiting.silent(after=0.04) == []


def test_the_watch_tells_once_per_host_and_stops() -> None:
    told: list[str] = []
    watch = waiting.Watch(lambda s: told.append(s.host), every=0.01)
    with watch, waiting.request("h:3", budget=10), waiting.request("h:3", budget=10):
        waiting._quiet["h:3"] -= waiting.AFTER  # as if asked 2 s ago
        time.sleep(0.1)
    assert told == ["h:3"]


def test_the_watch_starts_its_thread_only_with_a_request() -> None:
    """A command that makes no request (a no-op `lock`, `lock --check`) starts no thread:
    starting and joining one costs milliseconds of a ~100 ms command (issue 17)."""
    import threading

    def watching() -> bool:
        return any(t.name == "mcpsync-watch" for t in threading.enumerate())

    with waiting.Watch(lambda s: None, every=0.01):
        assert not watching()
        with waiting.request("h:4", budget=10):
            assert watching()
    assert not watching()  # joined on exit
