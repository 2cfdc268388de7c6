"""The one exception family of cachedex.

Everything a user can cause (a bad config, a broken mirror, an index in a format we do
not read) raises a subclass of :class:`CachedexError`. The CLI prints its message on one
line and exits 1; anything else is a bug and keeps its traceback.

    CachedexError
     ├── ConfigError          the configuration file or a command-line value is wrong
     ├── SourceError          a mirror could not be read (missing file, HTTP error, timeout)
     │    ├── NotFound        the file is not there (HTTP 404, no such path)
     │    └── ChecksumError   what was read does not match its recorded checksum
     ├── IndexFormatError     an index, manifest or spec file is not in a format we read
     └── CatalogError         the SQLite catalog is missing, locked or from a newer cachedex
"""

from __future__ import annotations

__all__ = [
    "CachedexError",
    "CatalogError",
    "ChecksumError",
    "ConfigError",
    "IndexFormatError",
    "NotFound",
    "SourceError",
]


class CachedexError(Exception):
    """Base of every error a user can act on; ``str(err)`` is the one-line message."""


class ConfigError(CachedexError):
    """Raised by ``config`` when the configuration has problems; lists all of them."""

    def __init__(self, problems: list[str], *, path: str | None = None) -> None:
        self.problems = problems
        self.path = path
        where = f"{path}: " if path else ""
        if len(problems) == 1:
            super().__init__(f"{where}{problems[0]}")
        else:
            listed = "; ".join(problems)
            super().__init__(f"{where}{len(problems)} problems: {listed}")


class SourceError(CachedexError):
    """Raised by ``sources`` when a mirror file cannot be fetched."""

    def __init__(self, url: str, problem: str) -> None:
        self.url = url
        self.problem = problem
        super().__init__(f"{url}: {problem}")


class NotFound(SourceError):
    """Raised when a mirror file does not exist (HTTP 404 or a missing path)."""


class ChecksumError(SourceError):
    """Raised when an index or blob does not match the checksum that describes it."""


class IndexFormatError(CachedexError):
    """Raised by ``index`` and ``mirror`` when a file is not in a format we can read."""

    def __init__(self, url: str, problem: str) -> None:
        self.url = url
        self.problem = problem
        super().__init__(f"{url}: {problem}")


class CatalogError(CachedexError):
    """Raised by ``catalog`` when the SQLite file cannot be used."""
