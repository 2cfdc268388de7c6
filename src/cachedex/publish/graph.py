"""Every spec page's data from a few bulk reads: what a whole-site build needs.

:func:`~.pages.spec_page` costs a few queries per page, which a site of 250,000 spec
pages cannot afford. :class:`SpecGraph` reads specs, edges (kept as plain tuples),
holders and listing tags once, about 1 GB for 250,000 specs and 1.6 million edges, and
builds any spec's page from memory, given its raw node. Both give the same page (a test
compares them on every spec of the demo).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from operator import attrgetter

from ..catalog import Catalog, Edge, SpecConfig, SpecRow, summary_of
from ..values import LINK_RUN, compilers_text
from .edge_lists import Configs
from .first_seen import FirstSeenIndex
from .pages import Holder, SpecPage, spec_page_from

__all__ = ["SpecGraph"]


class SpecGraph:
    """What spec pages show, for every spec of the catalog, read in one snapshot.

    Edges are made once each: the same :class:`~cachedex.catalog.Edge` object stands
    for an edge on every page that shows it, which lets ``edge_lists.EdgeItems`` cache
    each edge's HTML by identity (a partial graph makes its dependents' edges apart:
    the same on every page listing them as dependents)."""

    def __init__(self, catalog: Catalog, only: Collection[int] | None = None) -> None:
        """The graph of the whole catalog, or (``only``) just what the pages of those
        spec ids need: their dependencies and dependents, and the edges of their closures."""
        with catalog.snapshot():  # one state of the catalog, even if a sync commits meanwhile
            self._read(catalog, only)

    def _read(self, catalog: Catalog, only: Collection[int] | None) -> None:
        edge_rows: Iterable[tuple[int, int, int, str]]
        if only is None:
            spec_rows = catalog.all_spec_rows()
            edge_rows = catalog.all_edge_rows()
        else:  # the edges of the closures (the dependents of ``only`` come below)
            scope = catalog.page_inputs().closure_scope(only)
            edge_rows = list(catalog.all_edge_rows(scope))
            spec_rows = catalog.all_spec_rows({child for _, child, _, _ in edge_rows} | scope)
        # Specs are kept in closure order (name, hash) and known inside by their
        # position in it: a closure, a set of positions, then sorts as plain integers,
        # and its entries are made once, here, for every spec.
        rows: list[SpecRow] = sorted(spec_rows, key=attrgetter("name", "hash"))
        self._rows = rows
        self._verified = catalog.all_spec_verifications()  # empty until a `cachedex verify`
        self._unsigned = catalog.unsigned_mirrors()
        self._first_seen = FirstSeenIndex(catalog, only)  # the history, read once for every page
        self.ids = {row.hash: row.id for row in rows}  # hash -> catalog id
        self._position = position = {row.id: n for n, row in enumerate(rows)}
        self._plain = [Edge(row.hash, row.name, row.version, bool(row.listed), row.size) for row in rows]
        # The order dependencies and dependents are listed in: name, version, hash.
        rank = [0] * len(rows)
        by_rank = sorted(range(len(rows)), key=lambda at: (rows[at].name, rows[at].version, rows[at].hash))
        for n, at in enumerate(by_rank):
            rank[at] = n
        # Each spec's dependencies and cached dependents, as edges in the order pages
        # list them; an edge (spec, deptypes, virtuals) recurs on many pages: made once.
        made: dict[tuple[int, int, str], Edge] = {}
        known_edge = made.get

        def new_edge(key: tuple[int, int, str]) -> Edge:
            row = rows[key[0]]
            edge = made[key] = Edge(row.hash, row.name, row.version, bool(row.listed), row.size, key[1], key[2])
            return edge

        # (A whole graph's loop runs 1.6 million times: lists made only when missing, an
        # edge's key built once, and a call only for an edge not made yet: 0.83 x.)
        children: defaultdict[int, list[tuple[int, Edge]]] = defaultdict(list)
        parents: defaultdict[int, list[tuple[int, Edge]]] = defaultdict(list)
        link_run: defaultdict[int, list[int]] = defaultdict(list)  # children through link or run edges
        # A dependent is listed only if it has a binary (a partial graph reads them apart).
        cached = [bool(row.listed) for row in rows] if only is None else [False] * len(rows)
        for parent_id, child_id, deptypes, virtuals in edge_rows:
            parent, child = position[parent_id], position[child_id]
            down = (child, deptypes, virtuals)
            children[parent].append((rank[child], known_edge(down) or new_edge(down)))
            if cached[parent]:
                up = (parent, deptypes, virtuals)
                parents[child].append((rank[parent], known_edge(up) or new_edge(up)))
            if deptypes & LINK_RUN:
                link_run[parent].append(child)
        if only is not None:
            self._read_dependents(catalog, only, parents)
        self._link_run = link_run
        # (rank, edge) pairs sort by rank alone: a spec is at most once among another's ends.
        self._children = {at: [edge for _, edge in sorted(ends)] for at, ends in children.items()}
        self._dependents = {at: [edge for _, edge in sorted(ends)] for at, ends in parents.items()}
        # A million memberships come in a few hundred kinds (tag, stack, listed, URL),
        # and most specs share their whole list with many others: each made once.
        holders: defaultdict[int, list[Holder]] = defaultdict(list)
        if only is None:  # every member, a mirror at a time: nothing to sort
            for mirror, members in catalog.members_by_mirror():
                kinds = [
                    Holder(mirror.tag, mirror.stack, listed, mirror.url, mirror.layout) for listed in (False, True)
                ]
                for spec_id, listed in members:
                    holders[spec_id].append(kinds[listed])
        else:
            holder_of: dict[tuple[str, str, int, str, int | None], Holder] = {}
            for spec_id, tag, stack, listed, url, layout in catalog.all_holder_rows(only):
                key = (tag, stack, listed, url, layout)
                holder = holder_of.get(key)
                if holder is None:
                    holder = holder_of[key] = Holder(tag, stack, bool(listed), url, layout)
                holders[spec_id].append(holder)
        lists: dict[tuple[Holder, ...], tuple[Holder, ...]] = {}
        self._holders = {spec_id: lists.setdefault(tuple(found), tuple(found)) for spec_id, found in holders.items()}
        self._tags: dict[int, list[str]] = {}
        for spec_id, tag in catalog.root_listing_tags(only):
            self._tags.setdefault(spec_id, []).append(tag)
        self._other_compilers = catalog.other_compilers()  # (few: by hash)

    def _read_dependents(
        self, catalog: Catalog, only: Collection[int], parents: defaultdict[int, list[tuple[int, Edge]]]
    ) -> None:
        """The dependents with a binary of the specs ``only``, into ``parents`` as
        (rank, edge) by position: a hub library's by the ten thousand, which are most of
        the catalog's specs, so they are read bare and apart (not as whole rows)."""
        reads = catalog.page_inputs()
        dependent_rows = reads.dependent_edges(only)
        listed = reads.listed_dependents({parent for parent, _, _, _ in dependent_rows})
        listed.sort(key=attrgetter("name", "version", "hash"))  # the order pages list them in
        rank = {row.id: n for n, row in enumerate(listed)}
        position = self._position
        made: dict[tuple[int, int, str], Edge] = {}
        for parent_id, child_id, deptypes, virtuals in dependent_rows:
            at = rank.get(parent_id)
            if at is None:
                continue  # no binary: not a cached dependent
            edge = made.get((at, deptypes, virtuals))
            if edge is None:
                row = listed[at]
                edge = made[at, deptypes, virtuals] = Edge(
                    row.hash, row.name, row.version, True, row.size, deptypes, virtuals
                )
            parents[position[child_id]].append((at, edge))

    def held_hashes(self) -> set[str]:
        """Every hash some mirror holds, listed or not: :meth:`Catalog.held_hashes` as of
        this graph's snapshot (of a partial graph: those of its ``only``)."""
        rows, position = self._rows, self._position
        return {rows[position[spec_id]].hash for spec_id in self._holders}

    def held_by(self, tags: Iterable[str]) -> list[tuple[int, str]]:
        """(catalog id, hash) of every spec some mirror of ``tags`` holds, by id."""
        wanted = set(tags)
        return sorted(
            (spec_id, self._rows[self._position[spec_id]].hash)
            for spec_id, holders in self._holders.items()
            if any(holder.tag in wanted for holder in holders)
        )

    def configs(self, catalog: Catalog) -> Configs:
        """How this graph's pages find the builds of the dependents they label
        (``edge_lists.told_apart``): from its rows, else from ``catalog`` (a partial
        graph reads its pages' dependents apart, without their builds), each once."""
        rows, position, ids = self._rows, self._position, self.ids
        known: dict[str, SpecConfig] = {}

        def builds(hashes: Collection[str]) -> dict[str, SpecConfig]:
            missing = []
            for dag_hash in hashes:
                if dag_hash in known:
                    continue
                if (spec_id := ids.get(dag_hash)) is None:
                    missing.append(dag_hash)
                else:
                    row = rows[position[spec_id]]
                    compiler = compilers_text(row.compiler, self._other_compilers.get(dag_hash, ()))
                    known[dag_hash] = SpecConfig(dag_hash, row.variants, compiler, row.os, row.target)
            if missing:
                known.update(catalog.spec_configs(missing))
            return known

        return builds

    def page(self, spec_id: int, node: str) -> SpecPage:
        """The page of one spec (by catalog id), given its raw node JSON."""
        at = self._position[spec_id]
        row = self._rows[at]
        spec = summary_of(
            row, tags=tuple(self._tags.get(spec_id, ())), other_compilers=self._other_compilers.get(row.hash, ())
        )
        holders = self._holders.get(spec_id, ())
        return spec_page_from(
            spec,
            holders=holders,
            dependencies=self._children.get(at, []),
            closure=self._closure(at),
            dependents=self._dependents.get(at, []),
            node=node,
            verifications=self._verified.get(row.hash, ()),
            first_seen=self._first_seen.of(row.hash, holders),
            unsigned_mirrors=self._unsigned,
        )

    def _closure(self, at: int) -> list[Edge]:
        link_run = self._link_run
        seen = set(link_run.get(at, ()))
        frontier = list(seen)
        while frontier:  # breadth first, a level at a time in C (set operations)
            reached: set[int] = set()
            for found in frontier:
                reached.update(link_run.get(found, ()))
            reached -= seen
            seen |= reached
            frontier = list(reached)
        # A spec is not its own dependency, even when an index says so (an edge to
        # itself, or a cycle back to it): in its closure it would count twice.
        seen.discard(at)
        plain = self._plain
        return [plain[n] for n in sorted(seen)]
