"""The command line with hostile or damaged input: markup in mirror data, query words that
look like options, a corrupt catalog."""

from __future__ import annotations

import copy
import io
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.cli.progress import Reporter
from tests.helpers import LIBELF_CORE2, fixture_index, write_v2_mirror
from tests.publish.serve import corrupt_catalog

#: Would be a hidden hyperlink, and make the rest bold red, if printed as rich markup.
LINK = "[link=mailto:x@evil.example]click[bold red]zlib"


def run(config: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--config", str(config), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_sec5_progress_lines_show_names_as_written() -> None:
    """Progress lines name tags and stacks, which a remote tags_from file may name."""
    out = io.StringIO()
    with Reporter(enabled=True, console=Console(file=out, force_terminal=True, width=150)) as reporter:
        line = reporter.task("dev/[/red]: index", total=2)
        line.advance()
        line.describe("dev/[link=https://evil.example]click[/link]: sizes")
        reporter._progress.refresh()  # type: ignore[union-attr]
    shown = out.getvalue()
    assert "dev/[link=https://evil.example]click[/link]: sizes" in shown
    assert "\x1b]8;" not in shown  # no terminal hyperlink


def test_sec5_mirror_values_print_as_written(mirrors: Path, tmp_path: Path) -> None:
    """A package name, version, compiler and variant value holding rich markup, through
    sync, diff, search and show: printed as written, never as markup, no traceback."""
    index = fixture_index(mirrors)
    write_v2_mirror(tmp_path / "m1", index)
    installs = index["database"]["installs"]  # type: ignore[index]
    evil = copy.deepcopy(installs.pop(LIBELF_CORE2))
    evil["spec"].update(name=LINK, hash="a" * 32, version="[bold]1.0")
    evil["spec"]["annotations"]["compiler"] = "gcc@=13[/bold]"
    evil["spec"]["parameters"]["note"] = "[/red]"
    installs["a" * 32] = evil
    write_v2_mirror(tmp_path / "m2", index)
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"tags:\n  - name: a\n    url: {tmp_path / 'm1'}\n  - name: b\n    url: {tmp_path / 'm2'}\n")
    status, synced = run(config, "sync")
    assert status == 0, synced
    status, diff = run(config, "diff", "a", "b")
    assert status == 0 and LINK in diff
    status, found = run(config, "search", "note=[/red]")
    assert status == 0 and "gcc@13[/bold]" in found and "note=[/red]" in found
    status, shown = run(config, "show", "a" * 32)
    assert status == 0 and f"{LINK}@[bold]1.0" in shown and "note=[/red]" in shown
    status, package = run(config, "show", LINK)
    assert status == 0 and f"{LINK} in b" in package


#: Would clear the screen, retitle the window and reverse the rest of the line if a
#: terminal received it as written.
CONTROLS = "\x1b[2J\x1b]0;evil\x07\u202e"


def test_sec5_control_characters_from_a_mirror_reach_no_terminal(mirrors: Path, tmp_path: Path) -> None:
    """A variant value and a target holding escape sequences and a right-to-left override,
    through search (with a hint), show and coverage: printed as visible escapes."""
    index = fixture_index(mirrors)
    spec = index["database"]["installs"][LIBELF_CORE2]["spec"]  # type: ignore[index]
    spec["parameters"]["note"] = f"a{CONTROLS}b"
    spec["arch"]["target"]["name"] = f"core2{CONTROLS}"
    write_v2_mirror(tmp_path / "m", index)
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"tags:\n  - name: a\n    url: {tmp_path / 'm'}\n")
    assert run(config, "sync")[0] == 0
    outputs = {
        "search": run(config, "search", "libelf"),
        "hint": run(config, "search", "libelf note=c"),
        "show spec": run(config, "show", LIBELF_CORE2),
        "show package": run(config, "show", "libelf"),
        "coverage": run(config, "coverage", "a", "--by", "package,target"),
    }
    for command, (status, output) in outputs.items():
        assert status == 0, (command, output)
        assert "\x1b" not in output and "\u202e" not in output and "\x07" not in output, command
        assert "\\x1b[2J\\x1b]0;evil\\x07\\u202e" in output, command


def test_sec5_an_error_shows_control_characters_as_escapes(small_config: Path) -> None:
    """Line by line: the caret stays under the character it names, on a line of its own."""
    result = CliRunner().invoke(main, ["--config", str(small_config), "search", "zlib \x1b[2J"])
    assert result.exit_code == 1
    assert result.stderr == "error: bad query: unexpected character \\x1b\n  zlib \\x1b[2J\n       ^\n"


def test_sec5_an_output_folder_with_control_characters_is_shown_as_escapes(small_config: Path) -> None:
    """The publishing commands' reports name their folder (and jekyll each tag's): a
    folder named with escape sequences retitled the terminal when they were done."""
    for command in ("site", "jekyll", "export spack-cache"):
        outdir = small_config.parent / f"out-{command.split()[0]}{CONTROLS}"
        status, output = run(small_config, *command.split(), str(outdir))
        assert status == 0 and outdir.is_dir(), (command, output)
        assert "\x1b" not in output and "\u202e" not in output and "\x07" not in output, (command, output)
        assert "\\x1b[2J\\x1b]0;evil\\x07\\u202e" in output, (command, output)


@pytest.fixture
def small_config(small_catalog: Catalog, tmp_path: Path) -> Path:
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"catalog: {small_catalog.path}\ntags:\n  - name: t\n    url: ./m\n")
    return config


def _hashes(output: str) -> list[str]:
    return re.findall(r"^│ (\w{7}) ", output, re.MULTILINE)


def test_msg9_words_starting_with_a_dash_are_part_of_the_query(small_config: Path) -> None:
    status, with_tilde = run(small_config, "search", "cmake", "~doc")
    assert status == 0 and _hashes(with_tilde) == ["ccccccc"]
    for args in (
        ["cmake", "-doc"],
        ["cmake", "-doc", "-t", "t"],  # options still work around such words
        ["--tag", "t", "cmake", "-doc", "--limit", "5"],
        ["--", "cmake", "-doc"],
    ):
        status, output = run(small_config, "search", *args)
        assert status == 0 and "No such option" not in output, (args, output)
        assert _hashes(output) == ["ccccccc"], (args, output)
    # -shared starts like -s (--stack), -hdf like -h (--help): still query words.
    status, output = run(small_config, "search", "zlib", "-shared")
    assert status == 0 and _hashes(output) == [] and "0 specs match" in output
    assert run(small_config, "search", "zlib", "+shared", "-s", "s", "-t", "t")[1].count("zzzzzzz") == 1
    status, output = run(small_config, "search", "-hdf5")
    assert status == 0 and "Usage:" not in output
    # -n1 is read as Spack reads it (~n1), but -n takes a number: said, with how to write it
    result = CliRunner().invoke(main, ["--config", str(small_config), "search", "zlib", "-n1"])
    assert result.exit_code == 0 and "warning: -n1 is read as a query word (~n1); for the option -n, write -n 1" in (
        result.stderr
    )
    for word in ("-shared", "-nompi"):  # (-n with no number after it: a variant meant)
        assert "warning" not in CliRunner().invoke(main, ["--config", str(small_config), "search", "zlib", word]).stderr
    # An option's value that starts with '-' is its value, not a query word: no such tag.
    status, output = run(small_config, "search", "zlib", "--tag", "-x")
    assert status == 1 and "error: no tag '-x' in the catalog" in output, output
    # Unknown long options are still refused: most likely a mistyped option.
    assert run(small_config, "search", "zlib", "--tags", "t")[0] == 2


def test_msg9_search_help_says_how() -> None:
    result = CliRunner().invoke(main, ["search", "--help"])
    assert "A word starting with '-' (hdf5 -cuda) is part of the query" in result.output
    assert "after '--' every word is" in result.output


def test_crash12_a_corrupt_catalog_is_one_line(tmp_path: Path) -> None:
    catalog = corrupt_catalog(tmp_path / "c.sqlite")
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"catalog: {catalog}\ntags:\n  - name: t\n    url: ./m\n")
    line = (
        f"error: {catalog}: the catalog is corrupt (database disk image is malformed); "
        "delete it (with its -wal and -shm files, if any) and run 'cachedex sync'"
    )
    for args in (["search", "target=x86_64_v3"], ["search", "pkg-00001"], ["show", "pkg-00001"], ["coverage", "t"]):
        status, output = run(config, *args)
        assert (status, output.splitlines()) == (1, [line]), args
    debug = CliRunner().invoke(main, ["--debug", "--config", str(config), "search", "target=x86_64_v3"])
    assert isinstance(debug.exception, sqlite3.DatabaseError)


@pytest.mark.parametrize(
    "args",
    [["search", "zlib os=\udcff"], ["search", "zlib foo=\udcff"], ["show", "zl\udcffib"], ["show", "zlib/\udcff"]],
)
def test_an_argument_that_was_not_utf8_is_one_error_line(small_config: Path, args: list[str]) -> None:
    """Python holds an argument's bytes that are not UTF-8 as lone surrogates, which
    SQLite cannot encode: such a query or name is refused before any is asked."""
    result = CliRunner().invoke(main, ["--config", str(small_config), *args])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and "\\udcff" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["site", ""],
        ["jekyll", ""],
        ["export", "spack-cache", ""],
        ["demo", ""],
        ["reuse", ""],
        ["--config", "", "stats"],
    ],
)
def test_an_empty_path_is_wrong_usage(
    small_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """An empty path (``cachedex site "$OUT"`` with $OUT unset) is refused: as an output
    folder it wrote into the current folder, as --config it fell back on
    $CACHEDEX_CONFIG or ./cachedex.yaml, as a lockfile it said "error: : not found"."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    (here / "cachedex.yaml").write_text(small_config.read_text())  # what --config "" fell back on
    config = [] if "--config" in args else ["--config", str(small_config)]
    result = CliRunner().invoke(main, [*config, *args])
    assert result.exit_code == 2, result.output
    assert "Invalid value for " in result.stderr and ": an empty path; give a " in result.stderr
    assert [path.name for path in here.iterdir()] == ["cachedex.yaml"]


def test_show_with_an_empty_tag_is_no_tag_not_every_tag(small_config: Path) -> None:
    """``show zlib --tag ""`` (an unset variable) names a tag the catalog has not, as
    search, diff and coverage say; it showed the package in every tag, as without --tag."""
    for json_flag in ([], ["--json"]):
        result = CliRunner().invoke(main, ["--config", str(small_config), "show", "zlib", "--tag", "", *json_flag])
        assert (result.exit_code, result.stdout) == (1, ""), result.output
        assert result.stderr.startswith("error: no tag '' in the catalog (tags: t)"), result.stderr


def test_a_failed_tag_s_error_reaches_the_terminal_with_its_escapes_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last guard of a sync's errors, which may quote a mirror: whatever ingest let
    through (an escape sequence clearing the screen) is printed as an escape."""
    from cachedex.ingest import sync as sync_module
    from cachedex.ingest.outcomes import TagOutcome

    monkeypatch.setattr(sync_module, "sync", lambda *args, **kwargs: [TagOutcome("t", "bad \x1b[2J\nnext", 0.1)])
    config = tmp_path / "cachedex.yaml"
    config.write_text("tags:\n  - name: t\n    url: /nowhere\n")
    status, output = run(config, "sync")
    assert status == 1 and "\x1b" not in output
    assert "error: t: bad \\x1b[2J\n" in output and "error: t: next\n" in output


def test_an_os_error_names_its_path_and_a_corrupt_catalog_is_said_so(tmp_path: Path) -> None:
    """A folder that cannot be made is named; an SQLite error of an extended code (a
    corrupt index, 779) gives the corrupt catalog's advice, not "cannot read"."""
    from cachedex.cli.state import _catalog_problem
    from tests.helpers import record, write_tag

    config = tmp_path / "cachedex.yaml"
    config.write_text("tags:\n  - name: t\n    url: /nowhere\n")
    with Catalog(tmp_path / "cachedex.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32, "zlib")])
    (tmp_path / "afile").write_text("x")
    status, output = run(config, "jekyll", str(tmp_path / "afile/out"))
    assert status == 1 and output == f"error: {tmp_path / 'afile/out'}: Not a directory\n", output
    for code in (11, 26, 779):
        damaged = sqlite3.DatabaseError("database disk image is malformed")
        damaged.sqlite_errorcode = code  # type: ignore[attr-defined]
        assert "the catalog is corrupt" in _catalog_problem(None, damaged)
    other = sqlite3.DatabaseError("disk I/O error")
    other.sqlite_errorcode = 10  # type: ignore[attr-defined]
    assert _catalog_problem(None, other) == "the catalog: cannot read the catalog (disk I/O error)"
