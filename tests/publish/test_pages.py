"""Page data built in bulk (for the whole site) against the one-page-at-a-time builders."""

from __future__ import annotations

import pytest

from cachedex.catalog import Catalog
from cachedex.errors import UnknownPackage, UnknownSpec
from cachedex.publish.graph import SpecGraph
from cachedex.publish.pages import package_page, package_pages, resolve, spec_page
from cachedex.publish.render import to_json
from tests.helpers import Demo


def test_spec_graph_builds_exactly_the_pages_of_spec_page(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        graph = SpecGraph(catalog)
        nodes = dict(catalog.nodes_of(list(graph.ids.values())))
        assert len(graph.ids) > 500
        compared = {"dependents": 0, "closure": 0, "unlisted": 0}
        for dag_hash, spec_id in sorted(graph.ids.items()):
            expected = spec_page(catalog, dag_hash)
            assert to_json(graph.page(spec_id, nodes[spec_id])) == to_json(expected), dag_hash
            compared["dependents"] += bool(expected.dependents)
            compared["closure"] += len(expected.closure) > 3
            compared["unlisted"] += not expected.spec.tags
        # the demo has specs of every kind, so the comparison covered each part
        assert all(compared.values()), compared


def test_package_pages_streamed_equal_package_page(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for tag in catalog.tag_names():
            shares = [list(package_pages(catalog, tag, part=n, parts=3)) for n in range(3)]
            pages = sorted((p for share in shares for p in share), key=lambda p: p.name)
            names = {name for name, tags in catalog.package_names().items() if tag in tags}
            assert [p.name for p in pages] == sorted(names) and all(shares), tag
            for page in pages:
                assert to_json(page) == to_json(package_page(catalog, tag, page.name)), (tag, page.name)


# -- on a small catalog (fast) ------------------------------------------------------------


def test_a_spec_page_follows_link_edges_and_counts_unknown_sizes(small_catalog: Catalog) -> None:
    page = spec_page(small_catalog, "c" * 32)
    assert [e.name for e in page.dependencies] == ["gcc", "zlib"]
    assert [e.name for e in page.closure] == ["zlib"]  # gcc is a build dependency only
    assert (page.closure_size, page.closure_unknown) == (100_000, 1)  # cmake's own size is unknown
    assert [(h.tag, h.stack) for h in page.holders] == [("t", "root")]
    assert page.install[0].commands.endswith(f"spack install --cache-only /{'c' * 32}")
    zlib = spec_page(small_catalog, "z" * 32)
    assert [e.name for e in zlib.dependents] == ["cmake"] and [h.stack for h in zlib.holders] == ["root", "s"]
    graph = SpecGraph(small_catalog)
    assert graph.page(graph.ids["c" * 32], page.node) == page


def test_a_package_page_counts_its_facets(small_catalog: Catalog) -> None:
    page = package_page(small_catalog, "t", "zlib")
    assert page.facets["stack"] == {"root": 1, "s": 1} and page.size == 100_000
    assert list(package_pages(small_catalog, "t")) == [package_page(small_catalog, "t", "cmake"), page]
    with pytest.raises(UnknownPackage, match="tag 't' lists no package 'gcc'"):
        package_page(small_catalog, "t", "gcc")


def test_resolve_tells_hashes_from_package_names(small_catalog: Catalog) -> None:
    assert resolve(small_catalog, "zlib") == "zlib"
    found = resolve(small_catalog, "/zzzz")
    assert not isinstance(found, str) and found.hash == "z" * 32
    assert not isinstance(resolve(small_catalog, "cccc"), str)  # no package of that name: a hash prefix
    with pytest.raises(UnknownSpec):
        resolve(small_catalog, "/qqq")
    with pytest.raises(UnknownPackage):
        resolve(small_catalog, "nothing-here")
