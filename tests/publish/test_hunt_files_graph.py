"""Mutation-hunt tests for cachedex.publish.graph: which dependents, dependencies and
closure a spec page built from the graph shows, in which order, whole or partial."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.publish.graph import SpecGraph
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import record, replace_mirror

BUILD, LINK = DEPTYPE_BITS["build"], DEPTYPE_BITS["link"]
HUB, TOOL, LIB = "h" * 32, "t" * 32, "l" * 32
# Hash order is the reverse of version order: a page must list app@1.0 before app@1.1.
APP_2, APP_11, APP_1, APP_UNLISTED = "a" * 32, "ab" * 16, "b" * 32, "c" * 32


def _catalog(path: Path) -> Catalog:
    hub = Dependency(HUB, "zlib", LINK, "")
    specs = [
        record(HUB, "zlib", version="1.3.1"),
        record(TOOL, "cmake", version="3.30.0"),
        record(LIB, "openssl", version="3.4.0", dependencies=(hub,)),
        record(
            APP_2,
            "app",
            version="2.0",
            dependencies=(Dependency(LIB, "openssl", LINK, ""), Dependency(TOOL, "cmake", BUILD, "")),
        ),
        record(APP_1, "app", version="1.0", dependencies=(hub,)),
        record(APP_11, "app", version="1.1", dependencies=(hub,)),
        record(APP_UNLISTED, "app", version="0.9", dependencies=(hub,)),
    ]
    catalog = Catalog(path)
    with catalog.writing_tag("t") as writer:
        writer.add_specs(specs, {})
        replace_mirror(writer, "root", {s.hash: s.hash != APP_UNLISTED for s in specs})
    return catalog


def _shown(edges: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(edge.name, edge.version) for edge in edges]


def test_a_page_lists_cached_dependents_by_version_whole_graph_or_partial(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        whole = SpecGraph(catalog)
        hub_id = whole.ids[HUB]
        partial = SpecGraph(catalog, [hub_id])
        for graph in (whole, partial):
            page = graph.page(hub_id, "{}")
            # The unlisted app@0.9 has no binary: not a cached dependent.
            assert _shown(page.dependents) == [("app", "1.0"), ("app", "1.1"), ("openssl", "3.4.0")]


def test_a_closure_follows_link_and_run_edges_only(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        graph = SpecGraph(catalog)
        page = graph.page(graph.ids[APP_2], "{}")
    assert _shown(page.dependencies) == [("cmake", "3.30.0"), ("openssl", "3.4.0")]
    # cmake is a build dependency: not in what the binary needs at run time.
    assert sorted(_shown(page.closure)) == [("openssl", "3.4.0"), ("zlib", "1.3.1")]


def test_held_by_names_the_specs_of_the_tags_asked_for(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("u") as writer:
            replace_mirror(writer, "root", {HUB: True})
        graph = SpecGraph(catalog)
    assert [dag_hash for _, dag_hash in graph.held_by(["u"])] == [HUB]
    assert len(graph.held_by(["t"])) == 7
    assert graph.held_by(["nope"]) == []


def test_a_spec_is_not_in_its_own_closure_even_through_a_cycle(tmp_path: Path) -> None:
    # An index can say so (an edge back to a spec): counted in its closure, it would
    # show as its own dependency and add its size twice.
    first, second = "d" * 32, "e" * 32
    specs = [
        record(first, "left", dependencies=(Dependency(second, "right", LINK, ""),)),
        record(second, "right", dependencies=(Dependency(first, "left", LINK, ""),)),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs(specs, {})
            replace_mirror(writer, "root", {s.hash: True for s in specs})
        graph = SpecGraph(catalog)
        for mine, other in ((first, "right"), (second, "left")):
            assert [edge.name for edge in graph.page(graph.ids[mine], "{}").closure] == [other]
