"""The JSON API's endpoints (``serve/api.py``) at their edges: the bounds of a search's
``limit`` and ``offset``, an empty ``stack``, a stack asked of a tag that is not there,
and the badges' and comparison pages' lookups of what is not there."""

from __future__ import annotations

from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.serve import create_app
from cachedex.publish.serve.api import MAX_LIMIT, MAX_OFFSET
from tests.helpers import record, write_tag
from tests.publish.serve import get


@pytest.fixture
def app(small_catalog: Catalog) -> Any:
    return create_app(small_catalog.path)


@pytest.mark.parametrize(
    ("query", "status"),
    [
        (f"limit={MAX_LIMIT}", 200),
        (f"limit={MAX_LIMIT + 1}", 400),
        ("limit=1", 200),
        ("limit=0", 400),
        ("offset=0", 200),
        (f"offset={MAX_OFFSET}", 200),
        (f"offset={MAX_OFFSET + 1}", 400),
        ("offset=-1", 400),
    ],
)
def test_a_search_s_limit_and_offset_are_taken_up_to_their_bounds(app: Any, query: str, status: int) -> None:
    """limit 1..1000 and offset 0..10**9, both bounds included; one past is a 400."""
    answer = get(app, f"/api/search?q=zlib&{query}")
    assert answer.status_code == status, answer.text
    if status == 400:
        assert answer.json()["error"]["status"] == 400


def test_the_bounds_are_a_thousand_results_and_a_billion_skipped() -> None:
    """The numbers the document and the refusals are built from."""
    assert (MAX_LIMIT, MAX_OFFSET) == (1000, 10**9)


def test_an_offset_past_the_matches_finds_none_but_counts_them(app: Any) -> None:
    found = get(app, "/api/search?q=zlib&offset=1").json()
    assert found["specs"] == [] and found["total"] == 1


def test_an_empty_stack_field_is_no_stack(app: Any) -> None:
    """A form's empty stack field (``stack=``) is no stack named '': every stack's specs."""
    every = get(app, "/api/search?q=zlib&tag=t").json()
    empty = get(app, "/api/search?q=zlib&tag=t&stack=")
    assert empty.status_code == 200 and empty.json()["total"] == every["total"] == 1


def test_a_stack_of_a_tag_that_is_not_there_says_the_tag_is_not_there(app: Any) -> None:
    """/api/tags/nope/packages?stack=s: 404 naming the missing tag, not a missing stack."""
    answer = get(app, "/api/tags/nope/packages?stack=s")
    assert answer.status_code == 404
    message = answer.json()["error"]["message"]
    assert message.startswith("no tag 'nope' in the catalog") and "stack" not in message


def test_a_stack_the_tag_lacks_is_a_404_and_one_it_has_filters(app: Any) -> None:
    """Only a stack given is checked: none lists every package, one the tag has filters."""
    every = get(app, "/api/tags/t/packages").json()
    assert [p["name"] for p in every["packages"]] == ["cmake", "zlib"] and every["total"] == 2
    missing = get(app, "/api/tags/t/packages?stack=nope")
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == "tag 't' has no stack 'nope'"
    listed = get(app, "/api/tags/t/packages?stack=s").json()
    assert [p["name"] for p in listed["packages"]] == ["zlib"] and listed["total"] == 1


def test_a_badge_of_a_package_the_tag_does_not_list_is_a_404(app: Any) -> None:
    """A badge, like the package's page, exists only where the tag lists the package."""
    assert get(app, "/tags/t/packages/zlib/badge.svg").status_code == 200
    missing = get(app, "/tags/t/packages/no-such-package/badge.svg")
    assert missing.status_code == 404


def test_a_comparison_page_of_a_tag_that_is_not_there_says_so(app: Any) -> None:
    """The new tag is looked up first: a missing one is said as such."""
    answer = get(app, "/tags/nope/compare/t/index.json")
    assert answer.status_code == 404
    assert answer.json()["error"]["message"].startswith("no tag 'nope' in the catalog")


def test_a_tag_s_packages_are_read_again_after_a_sync_in_place(small_catalog: Catalog) -> None:
    """The tag data a filtered tag page is made from is kept per catalog state: after a
    sync into the same file, the packages are those of the new state (kept by path and
    tag alone, the page went on listing those from before the sync)."""
    app = create_app(small_catalog.path)
    before = get(app, "/api/tags/t/packages").json()
    assert "xz" not in {package["name"] for package in before["packages"]}
    xz = record("x" * 32, "xz", version="5.6.3")
    listed = {"z" * 32: True, "c" * 32: True, "g" * 32: False, xz.hash: True}
    write_tag(small_catalog, "t", [xz], members=listed, checksum="again")
    after = get(app, "/api/tags/t/packages").json()
    assert "xz" in {package["name"] for package in after["packages"]}
