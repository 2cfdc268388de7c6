"""Mutation-hunt tests for ``catalog/summaries.py``: every field of a search result's
summary comes from its own column, for a tag's search and a catalog-wide one."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.catalog.rows import SpecSummary
from cachedex.query import parse
from tests.helpers import record, write_tag

A, B = "a" * 32, "b" * 32


def test_a_search_result_carries_each_column_in_its_own_field(tmp_path: Path) -> None:
    """os, target, variants and size are read from their columns (not swapped, dropped or left unknown)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        spec = record(
            A,
            "hdf5",
            version="1.14.3",
            os="rhel8",
            target="neoverse_v1",
            platform="cray",
            variants=("+mpi", "~fortran"),
        )
        write_tag(catalog, "dev", [spec, record(B)], sizes={A: 4321})
        for tag in ("dev", None):
            found = {s.hash: s for s in catalog.search(parse(""), tag=tag, limit=10).specs}
            assert found[A] == SpecSummary(
                hash=A,
                name="hdf5",
                version="1.14.3",
                compiler="gcc@13.2.0",
                platform="cray",
                os="rhel8",
                target="neoverse_v1",
                variants=("+mpi", "~fortran"),
                size=4321,
                tags=("dev",),
                stacks=("root",) if tag else (),
            )
            assert found[B].size is None
