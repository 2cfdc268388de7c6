"""The reads the publishers make through the :class:`~cachedex.catalog.Catalog` facade:
whole-catalog streams a batch at a time (``bulk.py``) and searches (``search.py``), each in
one read state. The search modules (search, scopes, hints and what they import) are loaded
by a catalog's first search, not with the catalog: a command that never searches (a sync,
a site or Jekyll build) starts without them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

import msgspec

from ..query import Query
from . import bulk, reads
from .facade_core import CatalogCore
from .inputs import PageInputs
from .rows import (
    HolderRow,
    HoldingMirror,
    ListedRow,
    SearchPage,
    SpecRow,
    SpecSummary,
)

__all__ = ["PublishingReads"]


class PublishingReads(CatalogCore):
    """Streams for the site and Jekyll writers, and searches for every surface."""

    # -- bulk reads for publishers (see bulk.py) ------------------------------------------

    def listed_rows(
        self, tag: str, *, part: int = 0, parts: int = 1, names: Collection[str] | None = None
    ) -> Iterator[ListedRow]:
        """The specs ``tag``'s root mirror lists, by package name then hash (share ``part``
        of ``parts`` of its packages; only the packages ``names``, if given)."""
        return bulk.listed_rows(self._db, tag, part=part, parts=parts, names=names)

    def all_spec_rows(self, ids: Collection[int] | None = None) -> Iterator[SpecRow]:
        """Every spec of the catalog (or those of ``ids``)."""
        return bulk.all_spec_rows(self._db, ids)

    def all_edge_rows(self, parents: Collection[int] | None = None) -> Iterator[tuple[int, int, int, str]]:
        """``(parent id, child id, deptypes, virtuals)`` of every edge (from ``parents``)."""
        return bulk.all_edge_rows(self._db, parents)

    def all_holder_rows(self, ids: Collection[int] | None = None) -> Iterator[HolderRow]:
        """Every mirror's records (of ``ids``), in the order of :meth:`holders` for each spec."""
        return bulk.all_holder_rows(self._db, ids)

    def members_by_mirror(self) -> Iterator[tuple[HoldingMirror, list[tuple[int, int]]]]:
        """Every mirror, in the order of :meth:`holders`, with ``(spec id, listed)`` of its records."""
        return bulk.members_by_mirror(self._db)

    def root_listing_tags(self, ids: Collection[int] | None = None) -> Iterator[tuple[int, str]]:
        """``(spec id, tag)`` for every tag whose root mirror lists a spec (of ``ids``), tags in order."""
        return bulk.root_listing_tags(self._db, ids)

    def page_inputs(self) -> PageInputs:
        """What pages are made from, to compare between site builds (see :mod:`.inputs`)."""
        return PageInputs(self._db)

    def nodes_of(self, ids: Sequence[int]) -> Iterator[tuple[int, str]]:
        """``(spec id, raw node JSON)`` for the given ids, in ascending id order."""
        return bulk.nodes_of(self._db, ids)

    def stack_listings(
        self,
        *,
        tags: Sequence[str] | None = None,
        stacks: Sequence[str] | None = None,
        packages: Sequence[str] | None = None,
        include_root: bool = False,
    ) -> tuple[dict[int, tuple[str, str]], Iterator[tuple[int, int]]]:
        """``({mirror id: (tag, stack)}, (spec id, mirror id) of each listing)`` of what
        each stack's own index lists (the root's too with ``include_root``), narrowed to
        ``tags``, ``stacks``, ``packages``."""
        return bulk.stack_listings(self._db, tags=tags, stacks=stacks, packages=packages, include_root=include_root)

    def spec_nodes(
        self, ids: Sequence[int]
    ) -> Iterator[tuple[int, str, str, str, str, str, str, str, int | None, bytes]]:
        """``(id, hash, name, version, compiler, platform, os, target, size, raw node
        bytes)`` of the specs of ``ids``, in ascending id order."""
        return bulk.spec_nodes(self._db, ids)

    # -- search (see search.py) ----------------------------------------------------------

    def search(
        self,
        query: Query,
        *,
        tag: str | None = None,
        stack: str | None = None,
        limit: int = 50,
        offset: int = 0,
        hints: bool = False,
    ) -> SearchPage:
        """Listed specs satisfying ``query``, by name, newest version first (Spack's order), then hash.

        ``tag`` limits the search to that tag's listed specs (``stack`` further to those
        its stack holds) and fills each row's ``stacks``; without a tag, every spec some
        mirror lists, with the tags listing it. With ``hints``, a search that finds
        nothing says which condition nothing satisfies. Each result that more than one
        compiler built names the others (``other_compilers``: why ``%gcc`` found a spec
        whose compiler is apple-clang). UnknownTag or UnknownStack
        when the scope does not exist."""
        from . import search as searching  # (loaded on a first search: see the module docstring)
        from .hints import zero_hints

        with self.snapshot():
            token = self.state_token()[0]
            page = searching.search(
                self._db,
                str(self.path),
                token,
                query,
                tag=tag,
                stack=stack,
                limit=limit,
                offset=offset,
            )
            if hints and page.total == 0 and not query.is_empty:
                found = zero_hints(self._db, str(self.path), token, query, tag=tag, stack=stack)
                page = msgspec.structs.replace(page, hints=found.lines, suggestion=found.suggestion)
            return page

    def explain_search(
        self, query: Query, *, tag: str | None = None, stack: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[str]:
        """How :meth:`search` would answer: SQLite's query plan, or the facet index used."""
        from . import search as searching

        with self.snapshot():
            token = self.state_token()[0]
            return searching.explain_search(
                self._db, str(self.path), token, query, tag=tag, stack=stack, limit=limit, offset=offset
            )

    def stack_names(self, tag: str) -> list[str]:
        """A tag's stacks, ``root`` first, then by name ([] for an unknown tag); read once
        per catalog state, as every search page asks."""
        from . import scopes

        with self.snapshot():
            return scopes.stack_names(self._db, str(self.path), self.state_token()[0], tag)

    def warm_search(self) -> int:
        """Build now what the first facet query of each scope (the whole catalog, each
        tag, each of its stacks) would otherwise build: a server calls this at start and
        after a sync. Returns the number of scopes."""
        from . import search as searching

        with self.snapshot():
            return searching.warm_search(self._db, str(self.path), self.state_token()[0])

    def warm_walks(self) -> list[str]:
        """Read the edges into the graph that ``^dep`` searches then walk (~2.5 times
        faster than in SQL), and walk up from the most depended-on packages now: a
        server calls this after :meth:`warm_search`. Returns the names walked."""
        from . import search as searching

        with self.snapshot():
            return searching.warm_walks(self._db, str(self.path), self.state_token()[0])

    def walks_made(self, query: Query, *, walk_up_to: int = 0) -> bool:
        """Whether every ``^dependency`` of ``query`` is walked in the catalog's present
        state (by the warm-up or a search before), so that its search walks nothing;
        with ``walk_up_to``, one not walked yet is walked now if it names a package or a
        hash and reaches at most that many specs (given up as soon as it reaches more)."""
        from . import search as searching

        with self.snapshot():
            return searching.walks_made(self._db, str(self.path), self.state_token()[0], query, walk_up_to)

    def other_compilers(self) -> dict[str, tuple[str, ...]]:
        """Each spec that more than one compiler built (apple-clang for its C, gcc for its
        Fortran), by hash, with its compilers besides its own (``name@version``): few,
        read once per catalog state. Pages list and filter a spec under each."""
        from .other_compilers import other_compilers_by_hash

        with self.snapshot():
            return other_compilers_by_hash(self._db, str(self.path), self.state_token()[0])

    def spec_summary(self, dag_hash: str) -> SpecSummary | None:
        """One spec by its full hash with every tag listing it (``stacks`` empty), or None."""
        found = self.search(Query(hash_prefix=dag_hash), limit=2).specs
        exact = [s for s in found if s.hash == dag_hash]
        if exact:
            return exact[0]
        # A record no mirror lists (a compiler, an external, a spec a mirror holds unlisted),
        # with its other compilers, as a site's spec page has them
        from .other_compilers import others_of_hashes

        with self.snapshot():
            alone = reads.spec_summary(self._db, dag_hash)
            if alone is None:
                return None
            others = others_of_hashes(self._db, str(self.path), self.state_token()[0], [dag_hash])
        return msgspec.structs.replace(alone, other_compilers=others[dag_hash]) if others else alone
