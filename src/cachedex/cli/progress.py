"""Progress display for long work: rich bars on a terminal; elsewhere (a CI job's log) a
plain line now and then for work that lasts, and silence for work that does not."""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING

from ..values import visible

if TYPE_CHECKING:  # (rich's bars load only when there is a terminal to draw them on)
    from rich.console import Console
    from rich.progress import Progress, TaskID

__all__ = ["LOG_EVERY", "Reporter", "Task"]


class Task:
    """One line of progress; every method is safe to call from worker threads."""

    def __init__(self, reporter: Reporter, task_id: TaskID | None, description: str = "") -> None:
        self._reporter = reporter
        self._id = task_id
        # (the plain log's own count, when there are no bars)
        self._description, self._completed = description, 0
        self._total: int | None = None
        self._started = self._said = time.monotonic()

    def advance(self, amount: int = 1) -> None:
        """Count ``amount`` more units done."""
        if self._id is not None and self._reporter._progress is not None:
            self._reporter._progress.advance(self._id, amount)
        elif self._reporter.log_every:
            with self._reporter._lock:  # (threads count together)
                self._completed += amount
            self._log()

    def update(self, completed: int, total: int | None = None) -> None:
        """Set how much is done (and the total, once known)."""
        if self._id is not None and self._reporter._progress is not None:
            self._reporter._progress.update(self._id, completed=completed, total=total)
        elif self._reporter.log_every:
            self._completed, self._total = completed, total if total is not None else self._total
            self._log()

    def describe(self, description: str) -> None:
        """Say what is being done now."""
        description = visible(description)
        if self._id is not None and self._reporter._progress is not None:
            self._reporter._progress.update(self._id, description=description)
        else:
            self._description = description
            if self._reporter.log_every:
                self._log()

    def _log(self) -> None:
        """A line on stderr once the work has lasted ``log_every`` seconds since the last."""
        now = time.monotonic()
        with self._reporter._lock:
            if now - self._said < self._reporter.log_every:
                return
            self._said = now
            total, done = self._total, self._completed
            share = f" of {total:,} ({100 * done // total} %)" if total else ""
            counted = f": {done:,}{share}" if done or total else ""
            line = f"{self._description}{counted} ({now - self._started:.0f} s)"
            print(line.encode("ascii", "backslashreplace").decode(), file=sys.stderr, flush=True)

    def done(self) -> None:
        """Remove the line: the work finished."""
        if self._id is not None and self._reporter._progress is not None:
            self._reporter._progress.remove_task(self._id)


def _bars(console: Console | None) -> Progress:
    """Rich's bars on ``console`` (default: stderr). Imported here: a command whose
    stderr is a log, a sync run by cron, never loads them (~9 ms of a slow start)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Task as RichTask
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Units done per second (requests, specs), once there is a rate to show."""

        def render(self, task: RichTask) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:,.0f}/s" if speed and task.total is not None else "")

    return Progress(
        # Descriptions name tags and stacks, which may come from a remote file: text,
        # never rich markup (a stack named "[/red]" would stop the sync).
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
        transient=True,
    )


#: Seconds between the plain lines of work that lasts, when stderr is no terminal.
LOG_EVERY = 30.0


class Reporter:
    """Progress bars on stderr when it is a terminal (or ``enabled=True``); else (a log,
    ``enabled=None``) a line every :data:`LOG_EVERY` seconds of work that lasts that long;
    nothing with ``enabled=False``."""

    def __init__(self, enabled: bool | None = None, *, console: Console | None = None) -> None:
        #: seconds between plain lines (0: none)
        self.log_every = LOG_EVERY if enabled is None and not (sys.stderr and sys.stderr.isatty()) else 0.0
        if enabled is None:
            enabled = bool(sys.stderr and sys.stderr.isatty())
        self._lock = threading.Lock()
        self._progress: Progress | None = None
        if enabled:
            self._progress = _bars(console)

    def __enter__(self) -> Reporter:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()

    def task(self, description: str, total: int | None = None) -> Task:
        """Start a new line of progress."""
        # A description names tags, stacks and views, which may come from a mirror: its
        # control characters are shown as escapes on a terminal and in a log alike.
        description = visible(description)
        if self._progress is None:
            task = Task(self, None, description)
            task._total = total
            return task
        with self._lock:
            return Task(self, self._progress.add_task(description, total=total))

    def download(self, description: str) -> Task:
        """A line for a download; ``update(received, total)`` as bytes arrive."""
        return self.task(description, total=None)
