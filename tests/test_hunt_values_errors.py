"""Mutation hunt of ``cachedex.errors``: the wording of each SQLite failure, of each
resource that ran out, of long lists and long queries, and the statuses left untested."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from cachedex import errors
from cachedex.errors import (
    CORRUPT_ADVICE,
    BadQuery,
    CatalogError,
    ConfigError,
    IndexFormatError,
    SourceNotFound,
    UnknownPackage,
    UnknownSpec,
    UnknownTag,
    resource_problem,
)


class _SqliteError(Exception):
    """Stands for a ``sqlite3`` exception: a message and, on Python 3.11+, a code name."""

    def __init__(self, text: str, name: str = "") -> None:
        super().__init__(text)
        self.sqlite_errorname = name


_LOCKED = "another process kept the catalog locked{} (another sync?); try again when it has finished"


@pytest.mark.parametrize(
    ("text", "name", "why"),
    [
        ("x", "SQLITE_BUSY", _LOCKED.format("")),
        ("x", "SQLITE_LOCKED_SHAREDCACHE", _LOCKED.format("")),
        ("database table is locked", "", _LOCKED.format("")),  # no code name: the text tells
        (
            "database or disk is full",
            "",
            "the disk is full; what was being written is rolled back, the catalog keeps its previous content",
        ),
        ("attempt to write a readonly database", "", "cannot write the catalog: the file or its folder is read-only"),
        (
            "file is not a database",
            "",
            "not an SQLite file, so not a catalog; check the 'catalog' path (cachedex leaves the file alone)",
        ),
        (
            "database disk image is malformed",
            "",
            f"the catalog is corrupt (database disk image is malformed); {CORRUPT_ADVICE}",
        ),
        ("disk I/O error", "SQLITE_IOERR_READ", "cannot read or write the catalog's file (disk I/O error)"),
        ("boom", "SQLITE_ERROR", "catalog error (boom)"),
    ],
)
def test_each_sqlite_failure_has_its_own_words(text: str, name: str, why: str) -> None:
    assert str(CatalogError.from_sqlite("c.sqlite", _SqliteError(text, name))) == f"c.sqlite: {why}"


@pytest.mark.parametrize(("waited", "shown"), [(0, " for 0 s"), (0.0, " for 0 s"), (2.5, " for 2.5 s")])
def test_a_lock_says_how_long_it_was_waited_for_even_zero(waited: float, shown: str) -> None:
    error = CatalogError.from_sqlite("c", _SqliteError("database is locked", "SQLITE_BUSY"), waited=waited)
    assert str(error) == "c: " + _LOCKED.format(shown)


def _cannot_open(path: object) -> str:
    return str(CatalogError.from_sqlite(path, _SqliteError("unable to open database file", "")))


def test_a_catalog_in_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "c.sqlite"
    assert _cannot_open(path) == f"{path}: cannot open the catalog's file: its folder {path.parent} does not exist"


def test_a_catalog_that_cannot_be_opened_for_no_visible_reason_keeps_sqlites_words(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    assert _cannot_open(path) == f"{path}: cannot open the catalog's file: unable to open database file"


def test_an_unreadable_catalog_file_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.sqlite"
    path.touch()
    # (os.access, not chmod: under root every file is readable)
    monkeypatch.setattr(errors.os, "access", lambda file, mode: Path(file) != path)
    assert _cannot_open(path).endswith("cannot open the catalog's file: permission denied (this user may not read it)")


def test_a_folder_that_can_be_read_but_not_entered_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.sqlite"
    # Readable, not searchable (mode r--): the file in it cannot be opened
    monkeypatch.setattr(errors.os, "access", lambda file, mode: not (Path(file) == tmp_path and mode & os.X_OK))
    assert _cannot_open(path).endswith(f"permission denied (this user may not enter its folder {tmp_path})")


@pytest.mark.parametrize(
    ("exc", "problem"),
    [
        (MemoryError(), "out of memory (a memory limit, ulimit -v?)"),
        (
            RuntimeError("can't start new thread"),
            "cannot start a thread (a limit on processes or memory, ulimit -u or -v?)",
        ),
        (RuntimeError("something else"), None),
        (
            OSError(errno.EMFILE, "Too many open files", "/x/index.json"),
            "/x/index.json: too many open files (raise the limit, ulimit -n, or lower http.concurrency)",
        ),
        (
            OSError(errno.ENFILE, "Too many open files in system"),
            "too many open files (raise the limit, ulimit -n, or lower http.concurrency)",
        ),
        (
            OSError(errno.EAGAIN, "Resource temporarily unavailable"),
            "cannot start a process or thread (a limit on processes, ulimit -u?; --workers 1 starts none)",
        ),
        # a file that would block names itself: not a limit on processes
        (OSError(errno.EAGAIN, "Resource temporarily unavailable", "/x/pipe"), None),
        (OSError(errno.ENOENT, "No such file or directory", "/x"), None),
        (ValueError("x"), None),
    ],
)
def test_resource_problem(exc: BaseException, problem: str | None) -> None:
    assert resource_problem(exc) == problem


def test_a_config_error_of_one_problem_names_the_file_only_when_known() -> None:
    assert str(ConfigError(["bad"])) == "bad"
    assert str(ConfigError(["bad"], path="c.yaml")) == "c.yaml: bad"
    assert str(ConfigError(["a", "b"], path="c.yaml")) == "c.yaml: 2 problems: a; b"


def test_a_config_error_lists_twenty_problems_then_counts_the_rest() -> None:
    twenty = [f"p{n}" for n in range(20)]
    assert str(ConfigError(twenty)) == "20 problems: " + "; ".join(twenty)
    many = [f"p{n}" for n in range(1_500)]
    assert str(ConfigError(many)) == "1,500 problems: " + "; ".join(many[:20]) + "; and 1,480 more"
    assert ConfigError(many).problems == many


def test_unknown_tag_lists_twenty_tags_then_counts_the_rest() -> None:
    twenty = [f"t{n}" for n in range(20)]
    assert str(UnknownTag("x", twenty)) == f"no tag 'x' in the catalog (tags: {', '.join(twenty)})"
    assert str(UnknownTag("x", [*twenty, "t20"])) == f"no tag 'x' in the catalog (tags: {', '.join(twenty)} and 1 more)"


def test_unknown_tags_asked_together_are_named_together() -> None:
    assert str(UnknownTag("a", others=["b"])) == "no tags 'a', 'b' in the catalog; run 'cachedex sync' first"


def test_a_package_in_another_tag_with_no_spec_is_plural() -> None:
    assert str(UnknownPackage("p", "t", [("u", 0)])) == "tag 't' lists no package 'p'; it is in u (0 specs)"


def test_unknown_spec_says_its_own_problem_when_given() -> None:
    assert str(UnknownSpec("ab")) == "no spec with a hash starting with 'ab' in the catalog"
    assert str(UnknownSpec("ab", "2 specs have a hash starting with 'ab'")) == "2 specs have a hash starting with 'ab'"


def test_a_bad_parameter_is_its_own_message() -> None:
    error = BadQuery("limit must be a whole number")
    assert str(error) == error.problem == "limit must be a whole number" and error.position is None


def test_index_format_errors_are_the_mirrors_fault() -> None:
    # a mirror's broken file: 502, as a SourceError (its subclasses inherit it)
    assert IndexFormatError("u", "p").status == 502 and SourceNotFound("u", "p").status == 502
    assert str(IndexFormatError("http://x/i", "not JSON")) == "http://x/i: not JSON"


def _caret_line(error: BadQuery) -> tuple[str, int]:
    _, shown, caret = str(error).split("\n")
    return shown[2:], caret.index("^") - 2


def test_a_query_of_100_characters_is_quoted_whole() -> None:
    text = "a" * 99 + "@"
    assert _caret_line(BadQuery(text, 99, "p")) == (text, 99)


def test_a_query_of_101_characters_is_cut_on_one_side_only() -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(101))
    # the problem at the end: the first character goes, and no "..." after the last
    assert _caret_line(BadQuery(text, 100, "p")) == ("..." + text[1:], 102)
    assert _caret_line(BadQuery(text, 0, "p")) == (text[:100] + "...", 0)


def test_a_problem_near_the_end_of_a_long_query_shows_the_last_100_characters() -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(300))
    shown, caret = _caret_line(BadQuery(text, 290, "p"))
    assert shown == "..." + text[200:]
    assert shown[caret] == text[290] and caret == 93


def test_a_problem_in_the_middle_of_a_long_query_is_cut_on_both_sides() -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(300))
    shown, caret = _caret_line(BadQuery(text, 150, "p"))
    assert shown == "..." + text[100:200] + "..." and caret == 53
