"""What the home page's data says: which tags, in which order, with which totals, on small real catalogs."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.publish.pages import home_page
from tests.helpers import record, write_tag


def test_the_home_page_lists_branches_by_name_then_releases_then_snapshots_newest_first(tmp_path: Path) -> None:
    """Releases in Spack's version order (v0.23.1 after v1.0.0, before v0.9.0), snapshots by
    date; a name that starts like a version and is none (``2fa-fix``) is a branch, as
    every other list of tags reads it (the home page called it a release)."""
    names = [
        "v0.9.0",
        "develop-2026-01-05",
        "main",
        "v1.0.0",
        "develop",
        "develop-2026-11-08",
        "v0.23.1",
        "develop-2025-12-31",
        "2fa-fix",
        "v2-experimental",
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        for n, name in enumerate(names):
            write_tag(catalog, name, [record(f"{n:032x}")])
        page = home_page(catalog)
    # (names that start like a version and are none are branches, as every other list reads them)
    assert [(row.name, row.kind) for row in page.tags] == [
        ("2fa-fix", "branch"),
        ("develop", "branch"),
        ("main", "branch"),
        ("v2-experimental", "branch"),
        ("v1.0.0", "release"),
        ("v0.23.1", "release"),
        ("v0.9.0", "release"),
        ("develop-2026-11-08", "snapshot"),
        ("develop-2026-01-05", "snapshot"),
        ("develop-2025-12-31", "snapshot"),
    ]


def test_a_tag_whose_sizes_are_all_unknown_shows_an_unknown_size_not_zero(tmp_path: Path) -> None:
    """A size no mirror told is null (shown "unknown"); a tag with one known size adds only it."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "unsized", [record("a" * 32)])
        write_tag(catalog, "sized", [record("b" * 32), record("c" * 32, name="bzip2")], sizes={"b" * 32: 1234})
        rows = {row.name: row for row in home_page(catalog).tags}
    assert (rows["unsized"].size, rows["unsized"].sized, rows["unsized"].specs) == (None, 0, 1)
    assert (rows["sized"].size, rows["sized"].sized, rows["sized"].specs) == (1234, 1, 2)
