"""What an incremental site build compares between builds (``catalog/inputs.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from cachedex.catalog import Catalog
from cachedex.values import Dependency, SpecRecord
from tests.helpers import record, replace_mirror, write_tag

BUILD, LINK, RUN = 1, 2, 4


def _on(spec: SpecRecord, *edges: tuple[str, int]) -> SpecRecord:
    deps = tuple(Dependency(name="dep", hash=h * 32, deptypes=kind, virtuals="") for h, kind in edges)
    return msgspec.structs.replace(spec, dependencies=deps)


def test_a_spec_reaches_its_direct_neighbours_and_whatever_links_or_runs_it_deeper(tmp_path: Path) -> None:
    """g -build-> b -build-> r <-link- q <-run- p <-link- top, and r -link-> d -link-> e."""
    specs = [
        _on(record("g" * 32, "g"), ("b", BUILD)),
        _on(record("b" * 32, "b"), ("r", BUILD)),
        _on(record("top" + "t" * 29, "top"), ("p", LINK)),
        _on(record("p" * 32, "p"), ("q", RUN)),
        _on(record("q" * 32, "q"), ("r", LINK)),
        _on(record("r" * 32, "r"), ("d", LINK)),
        _on(record("d" * 32, "d"), ("e", LINK)),
        record("e" * 32, "e"),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        ids = catalog.spec_ids([s.hash for s in specs])
        names = {ids[s.hash]: s.name for s in specs}
        reached = catalog.page_inputs().reached_by([ids["r" * 32]])
        # b: a direct dependent (its dependency list); d: a direct dependency (its
        # dependents list); q, p, top: closures through link and run; not g nor e.
        assert {names[i] for i in reached} == {"r", "b", "q", "p", "top", "d"}


def test_each_spec_s_inputs_say_which_mirror_lists_it_and_which_only_holds_it(tmp_path: Path) -> None:
    a, b = record("a" * 32), record("b" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([a, b], {})
            replace_mirror(writer, "root", {a.hash: True, b.hash: False})
            replace_mirror(writer, "e4s", {a.hash: False})
        inputs = {i.hash: (i.held, i.listed) for i in catalog.page_inputs().spec_inputs()}
        root, e4s = (int(m) for m in re.findall(r"\d+", inputs[a.hash][0]))
        assert root < e4s  # (written first)
        assert inputs == {a.hash: (f"{root}+ {e4s}-", 1), b.hash: (f"{root}-", 0)}


def test_what_changed_after_a_sync_counts_the_very_next_one(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)], checksum="1")
        (first,) = (s.id for s in catalog.tag_syncs("t"))
        write_tag(catalog, "t", [record("b" * 32, "cmake")], checksum="2")
        inputs = catalog.page_inputs()
        assert inputs.names_changed_after(first) == {"zlib", "cmake"}
        assert inputs.hashes_changed_after(first) == {"a" * 32, "b" * 32}
        (second, _) = (s.id for s in catalog.tag_syncs("t"))
        assert inputs.names_changed_after(second) == set() == inputs.hashes_changed_after(second)
