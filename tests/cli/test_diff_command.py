"""``cachedex diff`` for people: a table cell that lists only some names says so."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from tests.helpers import record, write_tag


def _config(tmp_path: Path, added: int) -> Path:
    """Tag ``old`` lists zlib; tag ``new`` lists zlib and ``added`` packages more."""
    zlib = record("z" * 32, "zlib")
    new = [record(f"{i:032d}", f"p{i}") for i in range(added)]
    catalog = Catalog(tmp_path / "catalog.sqlite")
    try:
        write_tag(catalog, "old", [zlib])
        write_tag(catalog, "new", new, members={zlib.hash: True, **{r.hash: True for r in new}})
    finally:
        catalog.close()
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"catalog: {tmp_path / 'catalog.sqlite'}\ntags:\n  - name: new\n    url: ./m\n")
    return config


def test_diff_says_how_many_packages_it_does_not_name(tmp_path: Path) -> None:
    """Eight packages added: five named, then "and 3 more", not five that read as all."""
    result = CliRunner().invoke(main, ["--config", str(_config(tmp_path, 8)), "diff", "old", "new"])
    assert result.exit_code == 0, result.output
    assert "p0, p1, p2, p3, p4 and 3 more" in result.output
    assert "('cachedex diff --json' lists every package and spec)" in result.output


def test_diff_names_a_sixth_package_rather_than_one_more(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--config", str(_config(tmp_path, 6)), "diff", "old", "new"])
    assert result.exit_code == 0, result.output
    assert "p0, p1, p2, p3, p4, p5 " in result.output
    assert "more" not in result.output and "--json" not in result.output


def test_diff_at_seven_packages_names_five_and_says_json_lists_them(tmp_path: Path) -> None:
    # (the first count that cuts: the hint and the cut agree on it)
    result = CliRunner().invoke(main, ["--config", str(_config(tmp_path, 7)), "diff", "old", "new"])
    assert result.exit_code == 0, result.output
    assert "p0, p1, p2, p3, p4 and 2 more" in result.output
    assert "('cachedex diff --json' lists every package and spec)" in result.output
