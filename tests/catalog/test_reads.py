"""Reads of one spec: its closure (what installing it downloads) and its summary."""

from __future__ import annotations

from pathlib import Path

import msgspec

from cachedex.catalog import Catalog
from cachedex.values import Dependency, SpecRecord
from tests.helpers import record, write_tag

LINK, BUILD = 2, 1


def _on(spec: SpecRecord, *edges: tuple[str, int]) -> SpecRecord:
    deps = tuple(Dependency(name="dep", hash=h, deptypes=kind, virtuals="") for h, kind in edges)
    return msgspec.structs.replace(spec, dependencies=deps)


def test_a_closure_lists_what_links_or_runs_by_name_then_hash_and_not_build_tools(tmp_path: Path) -> None:
    z2, z1, m, a, cmake = "z2" + "a" * 30, "z1" + "a" * 30, "m" * 32, "y" * 32, "c" * 32  # (not in name order)
    top = "t" * 32
    specs = [
        _on(record(top, "top"), (z2, LINK), (a, LINK), (cmake, BUILD)),
        _on(record(a, "abc"), (m, LINK), (z1, LINK)),
        record(m, "mpich"),
        record(z1, "zlib"),
        record(z2, "zlib", version="1.2"),
        record(cmake, "cmake"),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        assert [(e.name, e.hash) for e in catalog.closure(top)] == [
            ("abc", a),
            ("mpich", m),
            ("zlib", z1),
            ("zlib", z2),
        ]


def test_the_summary_of_a_spec_no_mirror_lists_has_its_size(tmp_path: Path) -> None:
    """A record held without a binary (read apart from the search's listed specs)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(
            catalog, "t", [record("a" * 32), record("b" * 32, "cmake")], sizes={"a" * 32: 4096},
            members={"a" * 32: False, "b" * 32: False},
        )  # fmt: skip
        sized, unsized = catalog.spec_summary("a" * 32), catalog.spec_summary("b" * 32)
        assert sized is not None and unsized is not None
        assert (sized.size, unsized.size) == (4096, None)
