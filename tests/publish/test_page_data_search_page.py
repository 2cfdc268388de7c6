"""What the live search page's data says: which matches a page shows, how many pages,
the scope it searched and the notes and hints beside them, on small real catalogs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.errors import BadQuery
from cachedex.publish.search_page import MAX_PAGE, PER_PAGE, SearchView, search_view, static_search_view
from tests.helpers import record, replace_mirror

MANY = PER_PAGE + 3


def _catalog(path: Path) -> Catalog:
    """Tag t: MANY zlib builds (one a version apart) and one xz in root; xz alone in stack gpu."""
    catalog = Catalog(path)
    zlibs = [record(f"{n:032x}", version=f"1.{n}") for n in range(MANY)]
    xz = record("f" * 32, "xz")
    with catalog.writing_tag("t") as writer:
        writer.add_specs([*zlibs, xz], {})
        replace_mirror(writer, "root", {r.hash: True for r in [*zlibs, xz]}, checksum="r")
        replace_mirror(writer, "gpu", {xz.hash: True}, url="/m/gpu", checksum="g")
    return catalog


def test_the_second_page_shows_the_matches_after_the_first(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        first = search_view(catalog, {"q": "zlib"})
        second = search_view(catalog, {"q": "zlib", "page": "2"})
    assert (first.total, first.pages, len(first.specs)) == (MANY, 2, PER_PAGE)
    assert (second.number, len(second.specs)) == (2, 3)
    assert not {s.hash for s in first.specs} & {s.hash for s in second.specs}
    assert first.name == "zlib" and first.normal == "zlib"


def test_a_search_that_finds_nothing_has_one_page_and_says_what_would_find_something(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        view = search_view(catalog, {"q": "zlib@9.9 os=rocky9"})
    assert view.total == 0 and view.pages == 1
    assert view.hints


def test_a_page_number_below_one_is_refused(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog, pytest.raises(BadQuery, match="between 1 and"):
        search_view(catalog, {"q": "zlib", "page": "0"})


def test_the_pager_stops_at_the_last_page_a_request_may_ask_for() -> None:
    view = static_search_view(["t"])
    assert SearchView(**{**{f: getattr(view, f) for f in view.__struct_fields__}, "total": 10**7}).pages == MAX_PAGE


def test_a_stack_without_a_tag_is_left_out_and_said(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        view = search_view(catalog, {"q": "zlib", "stack": "gpu"})
    assert view.stack == "" and "left out" in view.note
    assert view.total == MANY


def test_a_stack_the_tag_lacks_searches_the_whole_tag(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        view = search_view(catalog, {"q": "zlib", "tag": "t", "stack": "cpu"})
        gpu = search_view(catalog, {"q": "zlib", "tag": "t", "stack": "gpu"})
    assert view.stack == "" and "has no stack cpu" in view.note and view.total == MANY
    assert gpu.total == 0 and gpu.note == ""


def test_the_stack_choices_of_each_tag_leave_root_out(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        view = search_view(catalog, {"q": ""})
    assert view.tag_stacks == {"t": ("gpu",)} and view.tags == ("t",)


def test_a_package_found_once_has_no_differing_variants_listed(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        view = search_view(catalog, {"q": "os=ubuntu24.04"})
    assert "xz" not in view.differing


def test_a_static_sites_search_page_is_not_live() -> None:
    """A static site has no catalog to ask: its page says so and its script searches names."""
    assert static_search_view(["t"]).live is False
