"""The command line's wrong usages (exit code 2), its one-line errors of the catalog, and
the choices search and show make from their options."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.cli.state import State, friendly
from tests.helpers import record, write_tag


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Tags ``develop-2025-01-01`` and ``develop-2026-01-01``, each listing zlib."""
    catalog = Catalog(tmp_path / "catalog.sqlite")
    try:
        write_tag(catalog, "develop-2025-01-01", [record("a" * 32, "zlib")])
        write_tag(catalog, "develop-2026-01-01", [], members={"a" * 32: True})
    finally:
        catalog.close()
    path = tmp_path / "cachedex.yaml"
    tags = "".join(f"  - name: {t}\n    url: ./m\n" for t in ("develop-2025-01-01", "develop-2026-01-01"))
    path.write_text(f"catalog: {tmp_path / 'catalog.sqlite'}\ntags:\n{tags}")
    return path


def _invoke(config: Path, *args: str) -> click.testing.Result:
    return CliRunner().invoke(main, ["--config", str(config), *args])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["search", "zlib", "--stack", "root"], "--stack needs --tag"),
        (["search", "zlib", "--tag", "a", "--tag", "b"], "given 2 times (a, b); this command takes one"),
        (["search", "zlib", "--limit", "0"], "--limit"),
        (["show", "/"], "give a spec's hash (or its first characters) or a package name"),
        (["show", " "], "give a spec's hash (or its first characters) or a package name"),
        (["diff", "develop-2025-01-01"], "give two tags, or one tag and --since DATE"),
        (["diff", "develop-2025-01-01", "develop-2026-01-01", "--since", "2026-01-01"], "--since takes one tag"),
        (["diff", "develop-2025-01-01", "--since", "yesterday"], "'--since'"),
    ],
)
def test_wrong_usage_exits_2_saying_what_is_wrong(config: Path, args: list[str], said: str) -> None:
    result = _invoke(config, *args)
    assert result.exit_code == 2, result.output
    assert said in result.stderr


def test_an_option_given_twice_is_refused_with_its_values_escaped(config: Path) -> None:
    result = _invoke(config, "show", "zlib", "--tag", "a\x1b[2J", "--tag", "b")
    assert result.exit_code == 2
    assert "given 2 times (a\\x1b[2J, b)" in result.stderr and "\x1b" not in result.stderr


def test_search_of_one_tag_lists_stacks_and_of_every_tag_lists_tags(config: Path) -> None:
    head = next(line for line in _invoke(config, "search", "zlib").stdout.splitlines() if "hash" in line)
    assert "tags" in head and "stacks" not in head
    result = _invoke(config, "search", "zlib", "--tag", "develop-2026-01-01")
    head = next(line for line in result.stdout.splitlines() if "hash" in line)
    assert "stacks" in head and "tags" not in head


def test_show_of_a_package_gives_the_newest_snapshot_first(config: Path) -> None:
    result = _invoke(config, "show", "zlib")
    assert result.exit_code == 0, result.output
    assert result.stdout.index("develop-2026-01-01") < result.stdout.index("develop-2025-01-01")


def test_a_query_error_keeps_its_caret_on_a_line_of_its_own_with_escapes_shown(config: Path) -> None:
    result = _invoke(config, "search", "zlib os=\x1b[31mnone")
    assert result.exit_code == 1
    error, query, caret = result.stderr.splitlines()
    assert error == "error: bad query: unexpected character \\x1b"
    assert query.strip() == "zlib os=\\x1b[31mnone" and caret.strip() == "^"
    # the caret stands under the character it names, as the query is shown
    assert caret.index("^") == query.index("\\x1b")


def _failing(code: int) -> click.Command:
    """A command of the group's State that meets an SQLite error of ``code``."""

    @click.command()
    @click.pass_context
    @friendly
    def reads(ctx: click.Context) -> None:
        state = ctx.ensure_object(State)
        state.catalog_path = Path("/data/catalog.sqlite")
        error = sqlite3.DatabaseError("database disk image is malformed")
        error.sqlite_errorcode = code  # type: ignore[attr-defined]
        raise error

    return reads


@pytest.mark.parametrize(
    ("code", "corrupt"),
    [(sqlite3.SQLITE_CORRUPT, True), (sqlite3.SQLITE_NOTADB, True), (779, True), (sqlite3.SQLITE_IOERR, False)],
)
def test_an_sqlite_error_names_the_catalog_and_says_whether_it_is_corrupt(code: int, corrupt: bool) -> None:
    """779 is SQLITE_CORRUPT_INDEX, an extended code of SQLITE_CORRUPT."""
    result = CliRunner().invoke(_failing(code), [], obj=State(None, debug=False))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: /data/catalog.sqlite: ")
    assert ("the catalog is corrupt" in result.stderr) is corrupt
    assert ("cannot read the catalog" in result.stderr) is not corrupt
