"""The edges a sync writes (``catalog/edge_writer.py``): a dependency named twice by one
node, an index of more kinds of edge than the packing numbers, and ids past the packing."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.catalog.edge_writer import ID_BITS, KIND_BITS
from cachedex.values import Dependency, SpecRecord
from tests.helpers import _db, dependencies, record, write_tag

P, Z = "p" * 32, "z" * 32
BUILD, LINK_RUN = 1, 6


def _needing(*deps: tuple[int, str]) -> list[SpecRecord]:
    edges = tuple(Dependency(name="zlib", hash=Z, deptypes=deptypes, virtuals=virtuals) for deptypes, virtuals in deps)
    return [record(P, "app", dependencies=edges), record(Z)]


@pytest.mark.parametrize(
    ("named", "virtuals"),
    [
        # build-only alone, the link dependency would not match ``^zlib``
        (((BUILD, ""), (LINK_RUN, "")), ""),
        (((BUILD, "mpi"), (LINK_RUN, "mpi")), "mpi"),  # each virtual once
        (((BUILD, "blas"), (LINK_RUN, "lapack")), "blas,lapack"),  # other virtuals: both
        (((BUILD, ""), (LINK_RUN, "mpi")), "mpi"),  # the virtual second: kept
    ],
)
def test_a_dependency_named_twice_is_one_edge_of_both_deptypes_and_their_virtuals(
    tmp_path: Path, named: tuple[tuple[int, str], ...], virtuals: str
) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "dev", _needing(*named))
        assert dependencies(catalog, P) == [(Z, "zlib", BUILD | LINK_RUN, virtuals)]


def test_an_index_of_more_kinds_of_edge_than_the_packing_numbers_keeps_each_edge_s_own(tmp_path: Path) -> None:
    """One kind past what the packing numbers: the last edge must not take the first kind's virtuals."""
    lib = record("l" * 32, "lib")
    users = [
        record(
            f"{n:032d}", f"u{n}", dependencies=(Dependency(name="lib", hash=lib.hash, deptypes=2, virtuals=f"v{n}"),)
        )
        for n in range((1 << KIND_BITS) + 1)
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "dev", [lib, *users])
        for user in (users[0], users[-1]):
            assert dependencies(catalog, user.hash) == [(lib.hash, "lib", 2, user.dependencies[0].virtuals)]


def test_a_spec_whose_id_is_past_the_packing_keeps_its_edges(tmp_path: Path) -> None:
    """A catalog whose ids reach 2**25 (33 million specs given ids over its life)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _db(catalog).execute(
            "INSERT INTO specs VALUES (?, ?, 'old', '1', 'linux', 'x', 'x', 'gcc', '[]', 0, NULL)",
            ((1 << ID_BITS) - 2, "o" * 32),
        )
        write_tag(catalog, "dev", _needing((LINK_RUN, "")))
        assert catalog.spec_ids([Z])[Z] == 1 << ID_BITS
        assert dependencies(catalog, P) == [(Z, "zlib", LINK_RUN, "")]
