"""Progress display for long work: rich bars on a terminal, silence elsewhere."""

from __future__ import annotations

import sys
import threading
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Task as RichTask
from rich.text import Text

__all__ = ["Reporter", "Task"]


class Task:
    """One line of progress; every method is safe to call from worker threads."""

    def __init__(self, reporter: Reporter, task_id: TaskID | None) -> None:
        self._reporter = reporter
        self._id = task_id

    def advance(self, amount: int = 1) -> None:
        """Count ``amount`` more units done."""
        if self._id is not None and self._reporter._progress is not None:
            self._reporter._progress.advance(self._id, amount)

    def update(self, completed: int, total: int | None = None) -> None:
        """Set how much is done (and the total, once known)."""
        if self._id is not None and self._reporter._progress is not None:
            self._reporter._progress.update(self._id, completed=completed, total=total)

    def describe(self, description: str) -> None:
        """Say what is being done now."""
        if self._id is not None and self._reporter._progress is not None:
            self._reporter._progress.update(self._id, description=description)

    def done(self) -> None:
        """Remove the line: the work finished."""
        if self._id is not None and self._reporter._progress is not None:
            self._reporter._progress.remove_task(self._id)


class _RateColumn(ProgressColumn):
    """Units done per second (requests, specs), once there is a rate to show."""

    def render(self, task: RichTask) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed and task.total is not None else "")


class Reporter:
    """Progress bars on stderr when it is a terminal (or ``enabled=True``); else no output."""

    def __init__(self, enabled: bool | None = None, *, console: Console | None = None) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self._lock = threading.Lock()
        self._progress: Progress | None = None
        if enabled:
            self._progress = Progress(
                # Descriptions name tags and stacks, which may come from a remote file: text,
                # never rich markup (a stack named "[/red]" would stop the sync).
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                _RateColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=console or Console(stderr=True),
                transient=True,
            )

    def __enter__(self) -> Reporter:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()

    def task(self, description: str, total: int | None = None) -> Task:
        """Start a new line of progress."""
        if self._progress is None:
            return Task(self, None)
        with self._lock:
            return Task(self, self._progress.add_task(description, total=total))

    def download(self, description: str) -> Task:
        """A line for a download; ``update(received, total)`` as bytes arrive."""
        return self.task(description, total=None)
