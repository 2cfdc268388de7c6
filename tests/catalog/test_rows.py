"""Row shapes: each SELECT is built from its shape's fields, so SQLite's column names are
the fields, in order; rows come back as the shape, read by name."""

from __future__ import annotations

import pytest

from cachedex.catalog import Catalog, rows
from cachedex.catalog.rows import HolderRow, ListedRow, SizeKey, SpecRow, select_list
from tests.helpers import Demo


@pytest.mark.parametrize(
    ("shape", "source", "params"),
    [
        (ListedRow, "FROM specs s", (1,)),
        (SpecRow, "FROM specs s", ()),
        (SizeKey, "FROM specs s", ()),
        (HolderRow, "FROM members mb JOIN mirrors m ON m.id = mb.mirror_id JOIN tags t ON t.id = m.tag_id", ()),
    ],
)
def test_the_cursor_columns_are_the_shape_fields(
    small_catalog: Catalog, shape: type, source: str, params: tuple[object, ...]
) -> None:
    cursor = small_catalog._db.execute(f"SELECT {select_list(shape)} {source}", params)
    assert tuple(d[0] for d in cursor.description) == shape._fields  # type: ignore[attr-defined]
    assert cursor.fetchall(), "the small catalog has rows of every shape"


def test_bulk_reads_give_named_rows(small_catalog: Catalog) -> None:
    listed = list(small_catalog.listed_rows("t"))
    assert [type(row) for row in listed] == [ListedRow, ListedRow]
    assert [(row.name, row.version) for row in listed] == [("cmake", "3.31.2"), ("zlib", "1.3.1")]
    zlib = listed[1]
    assert sorted(zlib.stacks.split("\x1f")) == ["root", "s"] and zlib.size == 100_000
    specs = {row.hash: row for row in small_catalog.all_spec_rows()}
    assert specs["g" * 32].listed == 0 and specs["z" * 32].listed == 1 and specs["c" * 32].name == "cmake"
    holders = list(small_catalog.all_holder_rows())
    assert {(h.tag, h.stack) for h in holders if h.spec_id == specs["z" * 32].id} == {("t", "root"), ("t", "s")}
    (key,) = small_catalog.size_keys(["z" * 32])
    assert key == SizeKey("z" * 32, "zlib", "1.3.1", "gcc@13.2.0", "linux", "ubuntu24.04", "x86_64_v3")


@pytest.mark.parametrize("plan", ["by names", "by members"])
def test_listed_rows_of_some_packages_are_those_of_the_whole_listing(
    demo_run: Demo, plan: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A few names are read by the name index first, many by the mirror's members: the same rows.
    monkeypatch.setattr(rows, "FEW_NAMES", 10**9 if plan == "by names" else -1)
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for tag in catalog.tag_names():
            every = list(catalog.listed_rows(tag))
            names = sorted({row.name for row in catalog.all_spec_rows()})  # externals without a binary too
            for chosen in (names[:1], names[::3], [*names[::7], "no-such-package"], []):
                wanted = [row for row in every if row.name in chosen]
                for parts in (1, 3):
                    shares = [list(catalog.listed_rows(tag, part=n, parts=parts, names=chosen)) for n in range(parts)]
                    assert sorted(row for share in shares for row in share) == sorted(wanted), (tag, chosen, parts)
                    assert shares[0] == sorted(shares[0], key=lambda row: (row.name, row.hash))
