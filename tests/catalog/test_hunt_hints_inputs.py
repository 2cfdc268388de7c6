"""What an incremental site build reads of the catalog (``catalog/inputs.py``): which
history counts, whose closure a page needs, which dependents a page lists."""

from __future__ import annotations

from pathlib import Path

import msgspec

from cachedex.catalog import Catalog
from cachedex.catalog.verifications import MirrorVerification, SignatureCounts
from cachedex.values import Dependency, SpecRecord
from tests.helpers import record, replace_mirror, write_tag

BUILD, LINK, RUN = 1, 2, 4


def _on(spec: SpecRecord, *edges: tuple[str, int]) -> SpecRecord:
    deps = tuple(Dependency(name="dep", hash=h * 32, deptypes=kind, virtuals="") for h, kind in edges)
    return msgspec.structs.replace(spec, dependencies=deps)


def test_a_package_only_a_stack_gained_changes_no_feed(tmp_path: Path) -> None:
    """Feeds are of a tag's listing (its root); a spec a stack gained is still a change
    of that spec's pages ("first seen")."""
    a, b = record("a" * 32), record("b" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a])
        (first,) = (s.id for s in catalog.tag_syncs("t"))
        with catalog.writing_tag("t") as writer:
            writer.add_specs([b], {})
            replace_mirror(writer, "e4s", {b.hash: True})
        inputs = catalog.page_inputs()
        assert inputs.names_changed_after(first) == set()
        assert inputs.hashes_changed_after(first) == {b.hash}


def test_the_history_counted_up_to_a_sync_includes_that_sync(tmp_path: Path) -> None:
    """A tag's first sync is its baseline; the second records a spec gone and one come."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)], checksum="1")
        write_tag(catalog, "t", [record("b" * 32, "cmake")], checksum="2")
        second = max(s.id for s in catalog.tag_syncs("t"))
        inputs = catalog.page_inputs()
        assert (inputs.history_count(second - 1), inputs.history_count(second)) == (0, 2)


def test_a_closure_reaches_only_through_link_and_run_edges(tmp_path: Path) -> None:
    """r -link-> d -run-> e, r -build-> g: a page of r needs the edges of r, d and e."""
    specs = [
        _on(record("r" * 32, "r"), ("d", LINK), ("g", BUILD)),
        _on(record("d" * 32, "d"), ("e", RUN)),
        record("e" * 32, "e"),
        record("g" * 32, "g"),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        ids = catalog.spec_ids([s.hash for s in specs])
        names = {ids[s.hash]: s.name for s in specs}
        assert {names[i] for i in catalog.page_inputs().closure_scope([ids["r" * 32]])} == {"r", "d", "e"}


def test_only_dependents_with_a_binary_are_listed(tmp_path: Path) -> None:
    listed, unlisted = record("a" * 32, "app"), record("b" * 32, "tool")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [listed, unlisted], members={listed.hash: True, unlisted.hash: False})
        ids = catalog.spec_ids([listed.hash, unlisted.hash])
        rows = catalog.page_inputs().listed_dependents(list(ids.values()))
        assert [row.hash for row in rows] == [listed.hash]


def test_the_edges_into_specs_are_those_of_their_direct_dependents(tmp_path: Path) -> None:
    """p -link-> r -link-> d: into r, p's edge only (not r's own edge to d)."""
    specs = [_on(record("p" * 32, "p"), ("r", LINK)), _on(record("r" * 32, "r"), ("d", LINK)), record("d" * 32, "d")]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        ids = catalog.spec_ids([s.hash for s in specs])
        edges = catalog.page_inputs().dependent_edges([ids["r" * 32]])
        assert [(parent, child, deptypes) for parent, child, deptypes, _ in edges] == [
            (ids["p" * 32], ids["r" * 32], LINK)
        ]


def test_only_the_tags_whose_history_names_a_spec_mention_it(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        for tag, before, after in (("t", "x", "a"), ("u", "y", "b")):
            write_tag(catalog, tag, [record(before * 32, "old" + tag)], checksum="1")
            write_tag(catalog, tag, [record(after * 32, "new" + tag)], checksum="2")
        inputs = catalog.page_inputs()
        assert inputs.tags_mentioning(["a" * 32]) == {"t"}
        assert inputs.tags_mentioning(["y" * 32, "b" * 32]) == {"u"}


def test_the_last_sync_and_its_mark(tmp_path: Path) -> None:
    """A mark of a sync the catalog has no record of ends empty (not "None")."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        assert catalog.page_inputs().last_sync() == 0
        write_tag(catalog, "t", [record("a" * 32)], checksum="1")
        write_tag(catalog, "t", [record("b" * 32, "cmake")], checksum="2")
        inputs = catalog.page_inputs()
        last = inputs.last_sync()
        assert last == max(s.id for s in catalog.tag_syncs("t"))
        assert inputs.history_mark(last + 1).endswith(":")
        assert inputs.history_mark(last) != inputs.history_mark(last - 1)


def test_ids_and_hashes_are_read_of_the_specs_asked_only(tmp_path: Path) -> None:
    a, b = record("a" * 32), record("b" * 32, "cmake")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [a, b])
        inputs = catalog.page_inputs()
        ids = inputs.ids_of([a.hash, "f" * 32])
        assert list(ids) == [a.hash]
        assert inputs.hashes_of([ids[a.hash]]) == [a.hash]


def test_each_mirror_says_whether_it_has_its_own_index_and_whether_it_signs(tmp_path: Path) -> None:
    """A root without an index lists what its stacks list; an unsigned mirror's pages
    tell how to add it (--unsigned)."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([record("a" * 32)], {})
            replace_mirror(writer, "root", {"a" * 32: True}, own_index=False, signed=True)
            replace_mirror(writer, "e4s", {"a" * 32: True}, url="/e", signed=False)
        mirrors = {
            (tag, stack): (own, unsigned)
            for tag, stack, _, _, own, unsigned in catalog.page_inputs().mirror_ids().values()
        }
        assert mirrors == {("t", "root"): (False, False), ("t", "e4s"): (True, True)}


def _verification(tag: str, stack: str) -> MirrorVerification:
    return MirrorVerification(
        tag, stack, "/m", None, 3, 1.0, 2.0, False, ("index",), (), 1, 1, 0, "unsigned",
        (), SignatureCounts(), (), 0,
    )  # fmt: skip


def test_the_mirrors_verified_since_a_verification_are_those_after_it(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        inputs = catalog.page_inputs()
        assert inputs.last_verification() == 0
        first = catalog.store_verification(_verification("t", "root"), [], "")
        second = catalog.store_verification(_verification("t", "e4s"), [], "")
        assert inputs.last_verification() == second
        assert inputs.verified_since(first) == {("t", "e4s")}
        assert inputs.verified_since(0) == {("t", "root"), ("t", "e4s")}
