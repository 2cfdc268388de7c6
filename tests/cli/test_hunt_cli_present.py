"""What sync, stats, search --json, show and diff print in the cases the other tests of
the command line leave out: a first sync, a failed tag, a tag with no size known, a
catalog with no tag, a spec no mirror holds, a package whose sizes are partly known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main, present
from cachedex.ingest.outcomes import TagOutcome
from cachedex.values import Dependency
from tests.helpers import record, write_tag


def _config(folder: Path) -> Path:
    path = folder / "cachedex.yaml"
    path.write_text(f"catalog: {folder / 'catalog.sqlite'}\ntags:\n  - name: t\n    url: ./m\n")
    return path


def _write(folder: Path, *records: object, **kwargs: object) -> None:
    catalog = Catalog(folder / "catalog.sqlite")
    try:
        write_tag(catalog, "t", records, **kwargs)  # type: ignore[arg-type]
    finally:
        catalog.close()


def _run(config: Path, *args: str) -> tuple[str, str]:
    result = CliRunner().invoke(main, ["--config", str(config), *args])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def _table_row(output: str, first_cell: str) -> list[str]:
    (line,) = (line for line in output.splitlines() if line.startswith(f"│ {first_cell}"))
    return [cell.strip() for cell in line.strip("│").split("│")]


def test_the_sync_table_marks_a_first_an_unchanged_and_a_failed_tag(capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = [
        TagOutcome("new", None, 1.0, records=3, specs=3, first=True, added=3),
        TagOutcome("same", None, 1.0, records=3, specs=3),
        TagOutcome("grew", None, 1.0, records=4, specs=4, added=1, removed=2, warnings=("odd\x1b[2Jname",)),
        TagOutcome("broken", "no index", 1.0),
    ]
    present.print_outcomes(outcomes)
    out = capsys.readouterr().out
    # A first sync compares with nothing: "+3" would read as "3 came since the last".
    assert _table_row(out, "new (first sync)")[5:7] == ["-", "-"]
    assert _table_row(out, "same (unchanged)")[0] == "same (unchanged)"
    assert _table_row(out, "grew")[5:7] == ["+1", "-2"]
    assert _table_row(out, "broken")[0] == "broken (failed)"
    # A warning may quote a mirror: its escape sequence is shown, never sent to the terminal.
    assert "warning: grew: odd\\x1b[2Jname" in out and "\x1b" not in out


def test_stats_of_a_catalog_without_tags_says_to_sync(tmp_path: Path) -> None:
    Catalog(tmp_path / "catalog.sqlite").close()
    out, _ = _run(_config(tmp_path), "stats")
    assert "The catalog has no tags yet; run 'cachedex sync'." in out


def test_stats_json_says_null_for_what_a_first_sync_and_unknown_sizes_cannot_say(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _write(tmp_path, record("a" * 32, "zlib"))
    (first,) = json.loads(_run(config, "stats", "--json")[0])
    assert first["last_sync_first"] is True
    assert first["last_sync_added"] is None and first["last_sync_removed"] is None
    assert first["size_bytes"] is None and first["specs_with_size"] == 0
    out, _ = _run(config, "stats")
    assert _table_row(out, "t")[-1] == "first sync"

    _write(tmp_path, record("b" * 32, "cmake"), members={"a" * 32: True, "b" * 32: True}, checksum="2")
    (second,) = json.loads(_run(config, "stats", "--json")[0])
    assert second["last_sync_first"] is False
    assert (second["last_sync_added"], second["last_sync_removed"]) == (1, 0)
    out, _ = _run(config, "stats")
    assert _table_row(out, "t")[-1] == "+1 -0"


def test_a_package_summary_says_how_many_of_its_sizes_are_known_and_its_versions(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _write(
        tmp_path,
        record("a" * 32, "zlib", version="1.0"),
        record("b" * 32, "zlib", version="1.1"),
        sizes={"a" * 32: 2_000_000},
    )
    out, _ = _run(config, "show", "zlib")
    assert "2.0 MB (1 of 2 sizes known); versions " in out
    # Every spec +shared: said once for the package, not left out.
    assert "  variant: the same in every spec: +shared\n" in out
    # The machines that run a target are the page's filter (some 60 of a family), not a
    # summary: the targets are said, the machines not.
    assert "  target: " in out and "runs_on" not in out


def test_a_package_of_one_spec_without_sizes_says_so_in_the_singular(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _write(tmp_path, record("a" * 32, "zlib", version="1.0"))
    out, _ = _run(config, "show", "zlib")
    assert "1 spec, sizes unknown; version 1.0\n" in out
    assert "  variant: +shared\n" in out


def test_show_says_which_tags_list_a_spec_without_its_binary(tmp_path: Path) -> None:
    """gcc is an external: the tag's index names it, but holds no binary of it; cmake
    depends on it, and its tree marks it so."""
    config = _config(tmp_path)
    gcc = record("g" * 32, "gcc", version="13.2.0", external=True, in_buildcache=False, compiler="none")
    cmake = record("c" * 32, "cmake", dependencies=(Dependency("g" * 32, "gcc", 2, ""),))
    _write(tmp_path, gcc, cmake, members={gcc.hash: False, cmake.hash: True})
    out, _ = _run(config, "show", "/ggggggg")
    assert "  no binary in t: root\n" in out and "  binary in" not in out
    out, _ = _run(config, "show", "/ccccccc")
    assert "  binary in t: root\n" in out
    assert "gcc@13.2.0 /ggggggg (no binary)" in out


def test_show_of_a_spec_every_tag_dropped_says_no_mirror_holds_it(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _write(tmp_path, record("a" * 32, "zlib"), record("b" * 32, "cmake"))
    _write(tmp_path, members={"b" * 32: True}, checksum="2")
    out, _ = _run(config, "show", "/aaaaaaa")
    assert "held by no mirror now" in out


def test_search_json_sends_hints_escaped_to_stderr_and_keeps_stdout_json(tmp_path: Path) -> None:
    config = _config(tmp_path)
    # The hint quotes a spec that does match without the condition: its variant is the mirror's.
    _write(tmp_path, record("a" * 32, "zlib", variants=("note=\x1b[31m",)))
    out, err = _run(config, "search", "zlib", "os=none", "--json")
    assert json.loads(out) == []
    assert err.startswith("hint: nothing matches os=none") and "note=\\x1b[31m" in err and "\x1b" not in err


def test_search_json_says_what_limit_and_offset_left_out(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _write(tmp_path, *(record(f"{c}" * 32, "zlib", version=f"1.{i}") for i, c in enumerate("abc")))
    out, err = _run(config, "search", "zlib", "--json", "--limit", "2")
    assert len(json.loads(out)) == 2
    assert "note: 2 of 3 matches; --limit and --offset give the others" in err
    out, err = _run(config, "search", "zlib", "--json", "--limit", "1", "--offset", "1")
    assert "note: 1 of 3 matches from --offset 1;" in err
    out, err = _run(config, "search", "zlib", "--json", "--offset", "3")
    assert json.loads(out) == [] and "note: none from --offset 3: the last is 2" in err
    out, err = _run(config, "search", "zlib", "--json")  # all of them: nothing to note
    assert len(json.loads(out)) == 3 and err == ""


def test_search_shows_only_the_variants_that_tell_a_package_s_specs_apart(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _write(
        tmp_path,
        record("a" * 32, "zlib", version="1.0", variants=("+shared", "~pic")),
        record("b" * 32, "zlib", version="1.1", variants=("+shared", "+pic")),
    )
    out, _ = _run(config, "search", "zlib")
    assert _table_row(out, "aaaaaaa")[4] == "~pic" and _table_row(out, "bbbbbbb")[4] == "+pic"
    assert "  zlib: the same in each of its specs above: +shared\n" in out


def test_a_spec_with_dependents_of_twenty_one_packages_says_one_more_package(tmp_path: Path) -> None:
    """Beyond DEPENDENT_PACKAGES the summary says how many packages it left unnamed, even
    one: without it, the twenty named read as all of them."""
    config = _config(tmp_path)
    count = present.DEPENDENT_PACKAGES + 1
    users = [
        record(f"{i:032d}", f"user{i:02d}", dependencies=(Dependency("a" * 32, "zlib", 2, ""),)) for i in range(count)
    ]
    _write(tmp_path, record("a" * 32, "zlib"), *users)
    out, _ = _run(config, "show", "/aaaaaaa")
    (line,) = (line for line in out.splitlines() if line.startswith("cached dependents"))
    assert line.startswith(f"cached dependents: {count} specs of {count} packages: ")
    assert line.endswith(" and 1 more package ('cachedex show --json' lists each)")


def test_show_gives_one_stack_s_install_commands_with_control_characters_escaped(tmp_path: Path) -> None:
    """The commands are pasted into a shell: a mirror URL's escape sequence is shown as
    text, and a spec in two stacks gets one set of commands, not two to choose from."""
    from tests.helpers import replace_mirror

    config = _config(tmp_path)
    catalog = Catalog(tmp_path / "catalog.sqlite")
    try:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([record("a" * 32, "zlib")], {})
            replace_mirror(writer, "root", {"a" * 32: True}, url="/m\x1b[2J")
            replace_mirror(writer, "other", {"a" * 32: True}, url="/other")
    finally:
        catalog.close()
    out, _ = _run(config, "show", "/aaaaaaa")
    assert out.count("install (") == 1 and out.count("spack install --cache-only") == 1
    assert "\x1b" not in out and "\\x1b[2J" in out


def test_diff_of_a_tag_with_itself_says_no_change(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _write(tmp_path, record("a" * 32, "zlib"))
    out, _ = _run(config, "diff", "t", "t")
    assert out == "t -> t: no change\n"


def test_diff_shows_a_dash_where_no_package_came_or_went(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _write(tmp_path, record("a" * 32, "zlib"), record("b" * 32, "cmake"), members={"a" * 32: True})
    catalog = Catalog(tmp_path / "catalog.sqlite")
    try:  # tag u: zlib and cmake, both already in the catalog
        write_tag(catalog, "u", [], members={"a" * 32: True, "b" * 32: True})
    finally:
        catalog.close()
    out, _ = _run(config, "diff", "t", "u")
    assert _table_row(out, "root") == ["root", "1", "0", "cmake", "-", "-"]
