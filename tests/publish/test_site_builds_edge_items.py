"""A site build makes each edge's list item once per kind of list: a spec page shows
the same edge objects in its closure and among its largest dependencies."""

from __future__ import annotations

from cachedex.catalog import Edge
from cachedex.publish.edge_lists import EdgeItems, dependents, edge_item, heaviest


def test_one_edge_in_two_kinds_of_list_gets_each_list_s_item() -> None:
    """Cached by edge alone, the largest dependencies showed closure items, and a
    dependents list showed a dependency list's."""
    edges = [Edge(f"{n:032d}", f"p{n}", "1.0", True, 1_000_000 * (n + 1)) for n in range(3)]
    items = EdgeItems()
    listed = items(edges, "../../")
    assert listed == [edge_item(edge, "../../") for edge in edges]
    assert str(heaviest(edges, 6_000_000, "../../", items)) == str(heaviest(edges, 6_000_000, "../../"))
    assert str(dependents(edges, "../../", "x.json", items)) == str(dependents(edges, "../../", "x.json"))
