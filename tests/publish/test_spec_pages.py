"""A spec page's parts: where to install it from, which stacks list it, its closure and
its largest dependencies."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog, Edge
from cachedex.publish.pages import spec_page
from cachedex.publish.spec_pages import largest_dependencies
from cachedex.values import Dependency
from tests.helpers import record, replace_mirror, write_tag


def test_a_spec_is_installed_from_and_listed_in_only_the_mirrors_with_its_binary(tmp_path: Path) -> None:
    """Stack ``s`` names it without its binary (a dependency there): no install command
    for it, and not among its stacks."""
    zlib = record("a" * 32, "zlib")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([zlib], {})
            replace_mirror(writer, "root", {zlib.hash: True})
            replace_mirror(writer, "s", {zlib.hash: False})
        page = spec_page(catalog, zlib.hash)
    assert {(h.stack, h.listed) for h in page.holders} == {("root", True), ("s", False)}
    assert [(i.tag, i.stack) for i in page.install] == [("t", "root")]
    assert page.spec.stacks == ("root",)


def test_a_spec_is_not_in_its_own_closure_when_an_index_leads_back_to_it(tmp_path: Path) -> None:
    link = 2
    looped = record("a" * 32, "app", dependencies=(Dependency("b" * 32, "zlib", link, ""),))
    back = record("b" * 32, "zlib", dependencies=(Dependency("a" * 32, "app", link, ""),))  # (a cycle)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [back, looped], sizes={back.hash: 1_000, looped.hash: 10_000})
        page = spec_page(catalog, looped.hash)
    assert [e.hash for e in page.closure] == [back.hash] and page.closure_count == 1
    assert page.closure_size == 11_000  # (itself once)


def _edge(letter: str, size: int) -> Edge:
    return Edge(letter * 32, f"dep-{letter}", "1", True, size)


def test_largest_dependencies_need_two_sizes_and_say_a_share_under_one_percent() -> None:
    assert largest_dependencies([_edge("a", 500)], 1_000) == []  # (one is the whole answer)
    shares = largest_dependencies([_edge("a", 10), _edge("b", 5), _edge("c", 985)], 1_000)
    assert [(e.name, share) for e, share in shares] == [("dep-c", "99%"), ("dep-a", "1%"), ("dep-b", "<1%")]
