"""What search and show print for people, checked against the catalog they read: sizes
("unknown", never a bare "-"; totals saying how many sizes they know) and paging."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.values import Dependency
from tests.helpers import record, write_tag


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Tag ``t``: zlib 1.0 (sized), zlib 1.1 (size unknown), cmake (sized) depending on
    both, and gcc (an external: no binary, no dependency with one)."""
    zlib = record("a" * 32, "zlib", version="1.0")
    unsized = record("b" * 32, "zlib", version="1.1")
    gcc = record("g" * 32, "gcc", version="13.2.0", external=True, in_buildcache=False, compiler="none")
    cmake = record(
        "c" * 32,
        "cmake",
        version="3.31.2",
        dependencies=(Dependency("a" * 32, "zlib", 2, ""), Dependency("b" * 32, "zlib", 2, "")),
    )
    catalog = Catalog(tmp_path / "catalog.sqlite")
    try:
        write_tag(
            catalog,
            "t",
            [zlib, unsized, gcc, cmake],
            members={zlib.hash: True, unsized.hash: True, cmake.hash: True, gcc.hash: False},
            sizes={zlib.hash: 2_000_000, cmake.hash: 1_000_000},
        )
    finally:
        catalog.close()
    path = tmp_path / "cachedex.yaml"
    path.write_text(f"catalog: {tmp_path / 'catalog.sqlite'}\ntags:\n  - name: t\n    url: ./m\n")
    return path


def run(config: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--config", str(config), *args])
    assert result.exit_code == 0, result.output
    return result.output


def _row(output: str, hash_prefix: str) -> list[str]:
    (line,) = (line for line in output.splitlines() if line.startswith(f"│ {hash_prefix}"))
    return [cell.strip() for cell in line.strip("│").split("│")]


def test_search_table_says_a_size_is_unknown_not_a_dash(config: Path) -> None:
    """A size no mirror gave printed "-" in the search table, where show, stats and the
    pages say "unknown" (README: sizes a mirror does not give are "unknown")."""
    output = run(config, "search", "zlib")
    assert _row(output, "bbbbbbb")[-1] == "unknown"
    assert _row(output, "aaaaaaa")[-1] == "2.0 MB"


def test_show_closure_total_says_how_many_sizes_it_knows(config: Path) -> None:
    """The closure's total said "(1 sizes unknown)"; totals say "(k of n known)", as
    the spec page and stats do: cmake, zlib 1.0 sized, zlib 1.1 not."""
    output = run(config, "show", "/ccccccc")
    assert "  size 1.0 MB; with its link/run closure 3.0 MB (2 of 3 known)\n" in output
    assert "sizes unknown" not in output


def test_show_counts_its_link_run_dependencies_in_the_singular_too(config: Path) -> None:
    """ "1 link/run dependencies in all"."""
    assert "  2 link/run dependencies in all ('cachedex show --json' lists them)\n" in run(config, "show", "/ccccccc")
    catalog = Catalog(config.parent / "catalog.sqlite")
    try:
        one = record("d" * 32, "curl", dependencies=(Dependency("a" * 32, "zlib", 2, ""),))
        write_tag(catalog, "t", [one], members={"a" * 32: True, "d" * 32: True}, checksum="2")
    finally:
        catalog.close()
    assert "  1 link/run dependency in all ('cachedex show --json' lists it)\n" in run(config, "show", "/ddddddd")


def test_show_closure_of_nothing_to_download_is_not_unknown(config: Path) -> None:
    """A spec without a binary, whose dependencies have none: its closure is nothing to
    download (the spec page says so), not a size nobody knows."""
    output = run(config, "show", "/ggggggg")
    assert "with its link/run closure nothing to download" in output
    assert "closure unknown" not in output


def test_search_with_an_offset_says_which_matches_it_shows(config: Path) -> None:
    """With --offset 1, "3 specs match (showing 1)" did not say which one of the three."""
    output = run(config, "search", "platform=linux", "--limit", "1", "--offset", "1")
    assert "3 specs match (showing 1 from --offset 1)" in output
    output = run(config, "search", "platform=linux", "--limit", "1")
    assert "3 specs match (showing 1)\n" in output


def test_one_spec_of_a_package_shows_its_variants_in_its_row(config: Path) -> None:
    """Variants every spec of a package holds are said once below the table; a package
    with one spec in the results has no "others" to share them with."""
    output = run(config, "search", "cmake")
    assert _row(output, "ccccccc")[4] == "+shared"
    assert "the same in each" not in output
    output = run(config, "search", "zlib")  # (two specs, both +shared: said once)
    assert "  zlib: the same in each of its specs above: +shared\n" in output


def test_a_spec_lists_ten_dependents_and_counts_eleven(config: Path) -> None:
    catalog = Catalog(config.parent / "catalog.sqlite")
    try:
        users = [
            record(f"{i:032d}", f"user{i:02d}", dependencies=(Dependency("a" * 32, "zlib", 2, ""),)) for i in range(11)
        ]
        members = {"a" * 32: True, "c" * 32: True} | {r.hash: True for r in users[:9]}  # cmake and nine: ten
        write_tag(catalog, "t", users, members=members, checksum="2")
    finally:
        catalog.close()
    (line,) = (line for line in run(config, "show", "/aaaaaaa").splitlines() if line.startswith("cached dependents"))
    assert line.count(" /") == 10 and "user08@1.3.1 /" in line
    catalog = Catalog(config.parent / "catalog.sqlite")
    try:
        write_tag(catalog, "t", [], members=members | {users[9].hash: True}, checksum="3")
    finally:
        catalog.close()
    (line,) = (line for line in run(config, "show", "/aaaaaaa").splitlines() if line.startswith("cached dependents"))
    assert line.startswith("cached dependents: 11 specs of 11 packages: ") and " /" not in line


@pytest.mark.parametrize(("width", "as_table"), [(24, True), (23, False)])
def test_a_table_needs_eight_characters_a_column(
    width: int, as_table: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cachedex.cli import present

    monkeypatch.setattr(present.OUT, "width", width)
    present.print_table("", [("a", "left"), ("b", "left"), ("c", "left")], [("1", "2", "3")])
    output = capsys.readouterr().out
    assert ("│" in output) is as_table, output
    assert ("a: 1; b: 2; c: 3" in output) is not as_table, output
