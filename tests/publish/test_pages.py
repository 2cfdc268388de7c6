"""Page data built in bulk (for the whole site) against the one-page-at-a-time builders."""

from __future__ import annotations

from cachedex.catalog import Catalog
from cachedex.publish.graph import SpecGraph
from cachedex.publish.pages import package_page, package_pages, spec_page
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
