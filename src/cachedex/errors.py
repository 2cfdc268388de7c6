"""The one exception family of cachedex.

Everything a user can cause (a bad config, a broken mirror, an index in a format we do
not read, a tag that is not in the catalog, a malformed query) raises a subclass of
:class:`CachedexError`. The CLI prints its message on one line and exits 1 (``--debug``
shows the traceback, with the underlying ``sqlite3``, ``OSError`` or HTTP error chained
as its cause); the server answers with the error's :attr:`~CachedexError.status`.
Anything else is a bug and keeps its traceback.

    CachedexError                  status 500 unless a subclass says otherwise
     ├── ConfigError               config: the configuration file or a command-line value is wrong
     ├── SourceError               ingest: a mirror file cannot be read (HTTP error, timeout, too big)
     │    ├── SourceNotFound       ingest: the file is not there (HTTP 404, no such path)
     │    ├── ChecksumError        ingest: what was read does not match its recorded checksum
     │    └── TooBig               ingest: a file larger than its kind's limit
     ├── IndexFormatError          ingest: an index, manifest, spec file or lockfile is not in a format we read
     ├── CatalogError              catalog: the SQLite file is missing, locked, corrupt or too new
     ├── LookupFailed              catalog, publish: something asked for is not in the catalog (404)
     │    ├── UnknownTag           no such tag
     │    ├── UnknownStack         the tag has no such stack
     │    ├── UnknownPackage       the tag lists no such package
     │    └── UnknownSpec          no spec with that hash (or hash prefix)
     ├── BadQuery                  query, publish: a malformed query or parameter (400)
     └── OutputError               publish: an output folder cannot be written
          └── JekyllError          publish.jekyll: the Jekyll site cannot be written
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = [
    "CORRUPT_ADVICE",
    "SHOWN_PROBLEMS",
    "BadQuery",
    "CachedexError",
    "CatalogError",
    "ChecksumError",
    "ConfigError",
    "IndexFormatError",
    "JekyllError",
    "LookupFailed",
    "OutputError",
    "SourceError",
    "SourceNotFound",
    "TooBig",
    "UnknownPackage",
    "UnknownSpec",
    "UnknownStack",
    "UnknownTag",
    "resource_problem",
]


class CachedexError(Exception):
    """Base of every error a user can act on; ``str(err)`` is the one-line message."""

    #: The HTTP status the server answers this error with.
    status = 500


#: What to do with a corrupt catalog: its log must go too (a new file would read it).
CORRUPT_ADVICE = "delete it (with its -wal and -shm files, if any) and run 'cachedex sync'"

#: The problems of a config its error names; ``problems`` holds them all.
SHOWN_PROBLEMS = 20


class ConfigError(CachedexError):
    """Raised by ``config`` when the configuration has problems; lists all of them."""

    status = 400

    def __init__(self, problems: list[str], *, path: str | None = None) -> None:
        self.problems = problems
        self.path = path
        where = f"{path}: " if path else ""
        if len(problems) == 1:
            super().__init__(f"{where}{problems[0]}")
        else:  # (the first few: a generated config of 20,000 bad tags made a line of 2.3 MB)
            listed = "; ".join(problems[:SHOWN_PROBLEMS])
            more = f"; and {len(problems) - SHOWN_PROBLEMS:,} more" if len(problems) > SHOWN_PROBLEMS else ""
            super().__init__(f"{where}{len(problems):,} problems: {listed}{more}")


class _AtUrl(CachedexError):
    """An error about one file of a mirror: its URL, then the problem."""

    def __init__(self, url: str, problem: str) -> None:
        self.url = url
        self.problem = problem
        super().__init__(f"{url}: {problem}")


class SourceError(_AtUrl):
    """Raised by ``ingest`` when a mirror file cannot be fetched or is refused as too big."""

    status = 502


class SourceNotFound(SourceError):
    """Raised by ``ingest`` when a mirror file does not exist (HTTP 404 or a missing path)."""


class ChecksumError(SourceError):
    """Raised by ``ingest`` when an index or blob does not match the checksum that describes it."""


class TooBig(SourceError):
    """Raised by ``ingest`` when a file is larger than its kind's limit (counted after
    decompression)."""


class IndexFormatError(_AtUrl):
    """Raised by ``ingest`` when a file is not in a format we can read."""

    status = 502


class CatalogError(CachedexError):
    """Raised by ``catalog`` when the SQLite file cannot be used."""

    @classmethod
    def from_sqlite(cls, path: object, exc: BaseException, *, waited: float | None = None) -> CatalogError:
        """The error to show for a ``sqlite3`` exception raised on the catalog at ``path``:
        what it means for the user and what to do, in one line."""
        code = getattr(exc, "sqlite_errorname", "")
        text = str(exc)
        if code.startswith("SQLITE_BUSY") or code.startswith("SQLITE_LOCKED") or "locked" in text:
            wait = f" for {waited:g} s" if waited is not None else ""
            why = f"another process kept the catalog locked{wait} (another sync?); try again when it has finished"
        elif code.startswith("SQLITE_FULL") or "disk is full" in text:
            why = "the disk is full; what was being written is rolled back, the catalog keeps its previous content"
        elif code.startswith("SQLITE_READONLY") or "readonly" in text:
            why = "cannot write the catalog: the file or its folder is read-only"
        elif code.startswith("SQLITE_NOTADB") or "not a database" in text:
            why = "not an SQLite file, so not a catalog; check the 'catalog' path (cachedex leaves the file alone)"
        elif code.startswith("SQLITE_CORRUPT") or "malformed" in text:
            why = f"the catalog is corrupt ({text}); {CORRUPT_ADVICE}"
        elif code.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
            why = f"cannot open the catalog's file: {_why_not_opened(path, text)}"
        elif code.startswith("SQLITE_IOERR"):
            why = f"cannot read or write the catalog's file ({text})"
        else:
            why = f"catalog error ({text})"
        return cls(f"{path}: {why}")


def _why_not_opened(path: object, text: str) -> str:
    """Why SQLite could not open the catalog at ``path`` ("unable to open database
    file" names no cause): its permissions or its folder's, when those tell."""
    file = Path(str(path))
    if file.exists() and not os.access(file, os.R_OK):
        return "permission denied (this user may not read it)"
    if not file.parent.is_dir():
        return f"its folder {file.parent} does not exist"
    if not os.access(file.parent, os.R_OK | os.X_OK):
        return f"permission denied (this user may not enter its folder {file.parent})"
    return text


class LookupFailed(CachedexError):
    """Raised by ``catalog`` and ``publish`` when something asked for is not in the catalog."""

    status = 404


class UnknownTag(LookupFailed):
    """No tag of that name in the catalog (nor of those of ``others``, also asked for);
    the message lists the tags there are."""

    def __init__(self, tag: str, known: Iterable[str] = (), *, others: Sequence[str] = ()) -> None:
        self.tag = tag
        names = list(known)
        listed = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
        hint = f" (tags: {listed})" if names else "; run 'cachedex sync' first"
        missing = f"tags {', '.join(map(repr, (tag, *others)))}" if others else f"tag {tag!r}"
        super().__init__(f"no {missing} in the catalog{hint}")


class UnknownStack(LookupFailed):
    """The tag has no stack of that name."""

    def __init__(self, tag: str, stack: str) -> None:
        self.tag = tag
        self.stack = stack
        super().__init__(f"tag {tag!r} has no stack {stack!r}")


class UnknownPackage(LookupFailed):
    """The tag (or no tag at all) lists no package of that name; ``elsewhere``: (tag,
    specs) of the other tags that list it, which the message names (a package page's
    404 then says where the package went)."""

    def __init__(self, package: str, tag: str | None = None, elsewhere: Sequence[tuple[str, int]] = ()) -> None:
        self.package = package
        self.tag = tag
        if tag is None:
            super().__init__(f"no tag lists a package {package!r}; try 'cachedex search {package}'")
            return
        found = [f"{other} ({n:,} spec{'s' * (n != 1)})" for other, n in elsewhere if other != tag]
        super().__init__(
            f"tag {tag!r} lists no package {package!r}" + (f"; it is in {', '.join(found)}" if found else "")
        )


class UnknownSpec(LookupFailed):
    """No spec with that DAG hash (or no single one with that hash prefix)."""

    def __init__(self, prefix: str, problem: str = "") -> None:
        self.prefix = prefix
        super().__init__(problem or f"no spec with a hash starting with {prefix!r} in the catalog")


class BadQuery(CachedexError):
    """A query (or a request parameter) that cannot be understood.

    Raised by ``query`` with the text and the position of the problem, shown with a
    caret under it, and by ``publish`` for bad parameters (``position`` is then None)."""

    status = 400

    def __init__(self, text: str, position: int | None = None, problem: str = "") -> None:
        self.text = text
        self.position = position
        self.problem = problem or text
        if position is None:
            super().__init__(self.problem)
        else:
            shown, caret = _around(text, position)
            super().__init__(f"bad query: {problem}\n  {shown}\n  {' ' * caret}^")


def _around(text: str, position: int, width: int = 100) -> tuple[str, int]:
    """The part of a long query around ``position`` (cut ends written ``...``), and
    where ``position`` is in it: a message quotes a query of any length (up to a
    request's head), and the problem is one place in it."""
    if len(text) <= width:
        return text, position
    start = max(0, min(position - width // 2, len(text) - width))
    before = "..." if start else ""
    after = "..." if start + width < len(text) else ""
    return before + text[start : start + width] + after, position - start + len(before)


class OutputError(CachedexError):
    """Raised by ``publish`` when an output folder cannot be written; names the path."""


class JekyllError(OutputError):
    """Raised by ``publish.jekyll`` when the site cannot be written: an unknown tag, an
    OUTDIR folder that is a symlink leading elsewhere, an unreadable ``_data`` file, or
    an OS error; names the path."""


def resource_problem(exc: BaseException) -> str | None:
    """What ran out, in one line, when ``exc`` says the system refused a resource (memory,
    a thread, a process, a file descriptor); None for anything else. Not a bug of
    cachedex, and not "Resource temporarily unavailable" alone."""
    if isinstance(exc, MemoryError):
        return "out of memory (a memory limit, ulimit -v?)"
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return "cannot start a thread (a limit on processes or memory, ulimit -u or -v?)"
    if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}too many open files (raise the limit, ulimit -n, or lower http.concurrency)"
    if isinstance(exc, OSError) and exc.errno == errno.EAGAIN and exc.filename is None:
        return "cannot start a process or thread (a limit on processes, ulimit -u?; --workers 1 starts none)"
    return None
