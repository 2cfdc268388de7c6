"""Mutation-hunt tests for cachedex.publish.edge_lists: which pages a build renders
again when a spec they show gains or loses its page."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Edge
from cachedex.publish.edge_lists import EDGE_ROWS, EdgeItems, dependents, edge_list
from cachedex.publish.graph import SpecGraph
from tests.publish.test_hunt_files_graph import APP_2, HUB, LIB, TOOL, _catalog


def test_a_page_showing_a_relinked_spec_anywhere_is_rendered_again(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        graph = SpecGraph(catalog)
        app = graph.page(graph.ids[APP_2], "{}")
        hub = graph.page(graph.ids[HUB], "{}")
    items = EdgeItems()
    assert not items.relinks(app)  # nothing relinked: no page is
    # zlib is only in app@2.0's closure (through openssl), its link there must change.
    for relinked, pages in (({HUB}, [app]), ({TOOL}, [app]), ({LIB}, [app, hub]), ({"x" * 32}, [])):
        items.relinked = frozenset(relinked)
        assert [page for page in (app, hub) if items.relinks(page)] == pages


def test_an_edge_list_and_a_dependents_list_show_at_most_edge_rows_entries(tmp_path: Path) -> None:
    # One package's dependents, all in one group: its count and its links are bounded.
    edges = [Edge(f"{n:032d}", "app", f"1.{n}", True, 1) for n in range(EDGE_ROWS + 1)]
    for cached in (None, EdgeItems()):
        listed = edge_list(edges, "../", "x.json", cached)
        assert listed.count("<li>") == EDGE_ROWS and "and 1 more" in listed
        grouped = dependents(edges, "../", "x.json", cached)
        assert f"({EDGE_ROWS}):" in grouped and grouped.count("<a href=") == EDGE_ROWS + 1  # (+ the JSON link)
        assert f"1.{EDGE_ROWS}<" not in grouped
