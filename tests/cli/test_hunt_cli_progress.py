"""The plain progress lines a log gets (stderr no terminal): what they count, how they
show a name from a mirror, and that ``enabled=False`` silences them."""

from __future__ import annotations

import io
import time

import pytest

from cachedex.cli import progress

#: Seconds between plain lines in these tests; each waits a little longer than this.
EVERY = 0.02


@pytest.fixture
def log_lines(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(progress, "LOG_EVERY", EVERY)
    return lambda: capsys.readouterr().err.splitlines()


def test_a_total_known_before_any_work_is_counted_from_zero(log_lines) -> None:  # type: ignore[no-untyped-def]
    with progress.Reporter() as reporter:
        task = reporter.task("fetching")
        time.sleep(2 * EVERY)
        task.update(0, 10)
    assert log_lines() == ["fetching: 0 of 10 (0 %) (0 s)"]


def test_an_update_without_a_total_keeps_the_one_known(log_lines) -> None:  # type: ignore[no-untyped-def]
    with progress.Reporter() as reporter:
        task = reporter.task("sizes", total=200)
        time.sleep(2 * EVERY)
        task.update(50)
    assert log_lines() == ["sizes: 50 of 200 (25 %) (0 s)"]


def test_a_log_line_shows_a_name_beyond_ascii_as_escapes(log_lines) -> None:  # type: ignore[no-untyped-def]
    """A CI log is often not UTF-8: a stack named beyond ASCII must not break the line."""
    with progress.Reporter() as reporter:
        task = reporter.task("caf\xe9")
        time.sleep(2 * EVERY)
        task.describe("caf\xe9/root")
    (line,) = log_lines()
    assert line.startswith("caf\\xe9/root (") and line.isascii()


def test_a_reporter_disabled_says_nothing_even_of_work_that_lasts(log_lines) -> None:  # type: ignore[no-untyped-def]
    with progress.Reporter(enabled=False) as reporter:
        task = reporter.task("quiet", total=4)
        for _ in range(2):
            time.sleep(2 * EVERY)
            task.advance(2)
        task.describe("still quiet")
    assert log_lines() == []


def test_a_description_shows_control_characters_as_escapes_in_a_log(log_lines) -> None:  # type: ignore[no-untyped-def]
    """A view's name comes from a mirror: an escape sequence in it must not reach a
    terminal that shows the log, whether it starts the line or replaces its text."""
    with progress.Reporter() as reporter:
        task = reporter.task("t/\x1b]0;title\x07: sizes", total=2)
        time.sleep(2 * EVERY)
        task.advance()
        time.sleep(2 * EVERY)
        task.describe("t/\x1b[2J: verify")
    assert log_lines() == [
        "t/\\x1b]0;title\\x07: sizes: 1 of 2 (50 %) (0 s)",
        "t/\\x1b[2J: verify: 1 of 2 (50 %) (0 s)",
    ]


def test_a_description_shows_control_characters_as_escapes_on_the_bars() -> None:
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    with progress.Reporter(enabled=True, console=console) as reporter:
        task = reporter.task("t/\x1b[2J: sizes", total=2)
        assert reporter._progress is not None
        (shown,) = [line.description for line in reporter._progress.tasks]
        task.describe("t/\x1b]0;x\x07: verify")
        (described,) = [line.description for line in reporter._progress.tasks]
    assert (shown, described) == ("t/\\x1b[2J: sizes", "t/\\x1b]0;x\\x07: verify")
