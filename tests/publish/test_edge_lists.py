"""A spec page's edge lists: each item made once per edge object, and the dependents list
the same text as with every value escaped."""

from __future__ import annotations

import html
import itertools

from hypothesis import given
from hypothesis import strategies as st
from markupsafe import escape

from cachedex.catalog import Edge
from cachedex.publish import edge_lists
from cachedex.publish.urls import spec_url


def test_edge_items_stay_right_past_the_cache_limit() -> None:
    items = edge_lists.EdgeItems()
    items.LIMIT = 5
    root = "../../"
    shown = []
    for round_ in range(6):
        # New objects each round, freed after it: an id may come back for another edge.
        edges = [Edge(f"{round_:02d}{n:030d}", f"p{round_}-{n}", "1.0", n % 2 == 0, None) for n in range(3)]
        got = items(edges, root)
        assert got == [edge_lists.edge_item(edge, root) for edge in edges]
        assert items(edges, root) == got and items(edges, "../") == [edge_lists.edge_item(e, "../") for e in edges]
        shown.extend(got)
        assert len(items.edges) <= items.LIMIT
    assert len(set(shown)) == 18


def _dependents_escaping_all(edges: list[Edge], root: str, json_href: str) -> str:
    """The dependents list as it was written before its fast paths: every value escaped."""
    items = []
    for name, group in itertools.groupby(edges, key=lambda edge: edge.name):
        links = [
            f'<a href="{html.escape(root)}{html.escape(spec_url(e.hash))}">{html.escape(e.version)}</a>'
            f" <code>/{html.escape(e.hash[:7])}</code>"
            + (f' <span class="tag">{html.escape(e.virtuals)}</span>' if e.virtuals else "")
            for e in group
        ]
        items.append(f"<li><strong>{escape(name)}</strong> ({len(links)}): {', '.join(links)}</li>")
    return '<ul class="edges grouped">\n' + "\n".join(items) + "\n</ul>"


_TEXT = st.text(alphabet=st.sampled_from("ab1.-_+<>&\"' /é"), max_size=8)
_HASH = st.one_of(st.text(alphabet="abcdefghijklmnopqrstuvwxyz234567", min_size=32, max_size=32), _TEXT)


@given(
    st.lists(st.tuples(_HASH, st.sampled_from(["zlib", "a<b", "c&d"]), _TEXT, st.sampled_from(["", "mpi", "x<y"]))),
    st.sampled_from(["../../", "/", '/pre"fix&/']),
)
def test_dependents_list_escapes_as_every_value_escaped(found: list[tuple[str, str, str, str]], root: str) -> None:
    edges = sorted(
        (Edge(h, name, version, True, None, 2, virtuals) for h, name, version, virtuals in found), key=lambda e: e.name
    )
    for cache in (None, edge_lists.EdgeItems()):
        got = str(edge_lists.dependents(edges, root, "x.json", cache))
        assert got == (
            _dependents_escaping_all(edges, root, "x.json")
            if edges
            else '<ul class="edges">\n<li class="muted">none</li>\n</ul>'
        )
