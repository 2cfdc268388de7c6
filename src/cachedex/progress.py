"""What long work reports while it runs: a small protocol, so the library needs no terminal.

``ingest`` (and anything else that takes long) asks a :class:`Progress` for lines and
moves them along; the command line passes a rich progress display
(:class:`cachedex.cli.progress.Reporter`), library users may pass their own, and
:data:`SILENT` shows nothing.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["SILENT", "Progress", "ProgressLine"]


class ProgressLine(Protocol):
    """One line of progress; every method may be called from worker threads."""

    def advance(self, amount: int = 1) -> None:
        """Count ``amount`` more units done."""

    def update(self, completed: int, total: int | None = None) -> None:
        """Set how much is done (and the total, once known)."""

    def describe(self, description: str) -> None:
        """Say what is being done now."""

    def done(self) -> None:
        """The work of this line finished."""


class Progress(Protocol):
    """Hands out lines of progress."""

    def task(self, description: str, total: int | None = None) -> ProgressLine:
        """A line counting ``total`` units (None: not known yet)."""

    def download(self, description: str) -> ProgressLine:
        """A line for a download; ``update(received, total)`` as bytes arrive."""


class _SilentLine:
    def advance(self, amount: int = 1) -> None:
        pass

    def update(self, completed: int, total: int | None = None) -> None:
        pass

    def describe(self, description: str) -> None:
        pass

    def done(self) -> None:
        pass


class _Silent:
    _line = _SilentLine()

    def task(self, description: str, total: int | None = None) -> ProgressLine:
        return self._line

    def download(self, description: str) -> ProgressLine:
        return self._line


#: A :class:`Progress` that shows nothing.
SILENT: Progress = _Silent()
