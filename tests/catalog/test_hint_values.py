"""The facet values and variant strings a hint counts among a search's matches, from the
search's indexes (catalog/hint_values.py), against a count of their rows in result order."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from cachedex.catalog import Catalog
from cachedex.catalog.facets import FACET_COLUMNS
from cachedex.catalog.hint_values import counted_by_indexes
from cachedex.catalog.scopes import scope_mirrors
from cachedex.catalog.search import search_ids, term_index
from cachedex.query import parse
from cachedex.values import decode_variants, variant_name
from tests.helpers import Demo, compilers_of

#: Scopes of the demo: the catalog, a tag, stacks of it (one with few specs).
_SCOPES = [(None, None), ("develop", None), ("develop", "e4s"), ("develop", "tutorial"), ("v1.0.2", None)]
#: Searches without a name: none at all, a variant, versions, a facet, two of them.
_QUERIES = ["", "+mpi", "~shared", "@1:", "@:2 +shared", "target=x86_64_v3", "os=ubuntu24.04 build_type=Release"]


class _Rows:
    """What the hint counted before: each match's row, in result order. A search's rows
    are read once, then counted for each facet and variant asked."""

    def __init__(self, catalog: Catalog, tag: str | None, stack: str | None) -> None:
        self.catalog, self.tag, self.stack = catalog, tag, stack
        self.counts: dict[str, dict[tuple[str, str], Counter[str]]] = {}

    def counted(self, query: str, column: str, variant: str) -> Counter[str]:
        if query not in self.counts:
            self.counts[query] = self._count(query)
        return self.counts[query].get((column, variant), Counter())

    def _count(self, query: str) -> dict[tuple[str, str], Counter[str]]:
        """Each facet's values and each variant's strings in the matches' rows, keyed
        (column, variant name), each counted in result order."""
        catalog = self.catalog
        db, path, token = catalog._db, str(catalog.path), catalog.state_token()[0]  # noqa: SLF001
        found = search_ids(db, path, token, parse(query), tag=self.tag, stack=self.stack, limit=10**6, offset=0)
        columns = ", ".join((*FACET_COLUMNS, "variants", "hash"))
        read = f"SELECT id, {columns} FROM specs WHERE id IN (SELECT value FROM json_each(?))"
        rows = {row[0]: row[1:] for row in db.execute(read, (json.dumps(found.ids),))}
        counts: defaultdict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        for spec_id in found.ids:
            *facets, variants, _ = rows[spec_id]
            for column, value in zip(FACET_COLUMNS, facets, strict=True):
                counts[column, ""][value] += 1
            for text in decode_variants(variants):
                counts["variants", variant_name(text)][text] += 1
        # A spec that more than one compiler built counts for each (after the column's)
        compilers = compilers_of(catalog)
        for spec_id in found.ids:
            own, dag_hash = rows[spec_id][FACET_COLUMNS.index("compiler")], rows[spec_id][-1]
            counts["compiler", ""].update(sorted(compilers[dag_hash] - {own}))
        return counts


@pytest.mark.parametrize(("tag", "stack"), _SCOPES)
def test_values_counted_from_the_indexes_are_those_of_the_rows_in_order(
    demo_run: Demo, tag: str | None, stack: str | None
) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog, catalog.snapshot():
        db, path, token = catalog._db, str(catalog.path), catalog.state_token()[0]  # noqa: SLF001
        root = scope_mirrors(db, path, token, tag, stack)[0]
        variants = term_index(db, path, token, root).variant_names()
        assert len(variants) > 5
        asked = [(facet, "") for facet in FACET_COLUMNS] + [("", variant) for variant in sorted(variants)]
        by_rows, compared = _Rows(catalog, tag, stack), 0
        for query in _QUERIES:
            for facet, variant in asked:
                counted = counted_by_indexes(
                    db, path, token, parse(query), facet=facet, variant=variant, tag=tag, stack=stack
                )
                assert counted is not None
                expected = by_rows.counted(query, facet or "variants", variant)
                # Insertion order too: it orders ties in most_common() as the rows did.
                assert list(counted.items()) == list(expected.items()), (query, facet, variant)
                compared += len(counted) > 1
        assert compared >= 3  # (values were found: not only empty or single counts compared)


def test_a_search_by_name_is_not_counted_from_the_indexes(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog, catalog.snapshot():
        db, path, token = catalog._db, str(catalog.path), catalog.state_token()[0]  # noqa: SLF001
        query = parse("zlib")
        assert counted_by_indexes(db, path, token, query, facet="os", variant="", tag=None, stack=None) is None


def test_values_listed_name_six_and_count_the_rest() -> None:
    from cachedex.catalog.hint_values import listed

    six = [(f"v{n}", 1) for n in range(6)]
    assert listed(six) == ", ".join(f"v{n} (1 spec)" for n in range(6))
    assert listed([*six, ("v6", 2)]).endswith("v5 (1 spec), and 1 more")
