"""What holds each spec of a search scope (``catalog/holders.py``): the stacks named on
a tag's search results, the tags on a catalog-wide one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cachedex.catalog import Catalog
from cachedex.catalog.holders import HolderIndex
from cachedex.query import parse
from tests.helpers import record, replace_mirror

NAMES = ["root", "e4s", "ml", "hpc", "viz", "tools"]


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, len(NAMES) - 1)), max_size=200))
def test_each_spec_has_the_sorted_names_of_its_holders(pairs: list[tuple[int, int]]) -> None:
    index = HolderIndex(iter(pairs), NAMES)
    held: dict[int, set[str]] = {}
    for spec, bit in pairs:
        held.setdefault(spec, set()).add(NAMES[bit])
    assert len(index) == len(held)
    for spec in range(-2, 64):  # specs held and not, below, between and above the ids
        assert index.of(spec) == tuple(sorted(held.get(spec, ())))


def _write(catalog: Catalog, tag: str, stacks: dict[str, dict[str, bool]], records: list) -> None:  # type: ignore[type-arg]
    """One tag with its root and stacks (each {hash: listed}) in one transaction."""
    with catalog.writing_tag(tag) as writer:
        writer.add_specs([r for r in records if catalog.spec_ids([r.hash]) == {}], {})
        for stack, members in stacks.items():
            replace_mirror(writer, stack, members)


def test_search_rows_name_their_stacks_and_tags_and_follow_a_new_state(tmp_path) -> None:  # type: ignore[no-untyped-def]
    a, b, c = (record(h * 32, name) for h, name in (("a", "alpha"), ("b", "beta"), ("c", "gamma")))
    catalog = Catalog(tmp_path / "c.sqlite")
    _write(catalog, "t1", {"root": {a.hash: True, b.hash: True}, "e4s": {a.hash: True}}, [a, b])
    # t2's root holds beta without listing it: a catalog-wide row of beta does not name t2.
    _write(catalog, "t2", {"root": {a.hash: True, b.hash: False, c.hash: True}, "ml": {c.hash: True}}, [a, b, c])

    def rows(tag: str | None) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        return {s.name: (s.tags, s.stacks) for s in catalog.search(parse(""), tag=tag, limit=10).specs}

    # Read for the page alone (a one-off search), then from the index a server warms;
    # the stacks root first, as every page lists them.
    for warmed in (False, True):
        if warmed:
            catalog.warm_search()
        assert rows("t1") == {"alpha": (("t1",), ("root", "e4s")), "beta": (("t1",), ("root",))}
        assert rows("t2") == {"alpha": (("t2",), ("root",)), "gamma": (("t2",), ("root", "ml"))}
        assert rows(None) == {"alpha": (("t1", "t2"), ()), "beta": (("t1",), ()), "gamma": (("t2",), ())}
    # A later write is a new catalog state: the holders are read again, not kept.
    _write(catalog, "t1", {"root": {a.hash: True, b.hash: True}, "e4s": {b.hash: True}}, [])
    assert rows("t1") == {"alpha": (("t1",), ("root",)), "beta": (("t1",), ("root", "e4s"))}
    catalog.warm_search()
    assert rows("t1") == {"alpha": (("t1",), ("root",)), "beta": (("t1",), ("root", "e4s"))}
    catalog.close()


def test_a_stack_that_holds_a_spec_without_its_binary_is_named_read_once_or_warmed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Within a tag a stack names what it holds, listed or not (as the server's index
    does); a one-off search of the CLI left the unlisted holder out."""
    a = record("a" * 32, "alpha")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _write(catalog, "t", {"root": {a.hash: True}, "e4s": {a.hash: False}}, [a])
        for warmed in (False, True):
            if warmed:
                catalog.warm_search()
            ((stacks),) = [s.stacks for s in catalog.search(parse("alpha"), tag="t").specs]
            assert stacks == ("root", "e4s")


def test_a_root_without_an_index_of_its_own_is_not_named_a_holder(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A views-only root lists what its stacks list: the stacks hold the specs."""
    a = record("a" * 32, "alpha")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([a], {})
            replace_mirror(writer, "root", {a.hash: True}, checksum=None, own_index=False)
            replace_mirror(writer, "e4s", {a.hash: True})
        for warmed in (False, True):
            if warmed:
                catalog.warm_search()
            assert [s.stacks for s in catalog.search(parse("alpha"), tag="t").specs] == [("e4s",)]


def test_a_dropped_stack_is_no_scope_nor_holder_any_more(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from cachedex.errors import UnknownStack

    a = record("a" * 32, "alpha")
    with Catalog(tmp_path / "c.sqlite") as catalog:
        _write(catalog, "t", {"root": {a.hash: True}, "gone": {a.hash: True}}, [a])
        assert catalog.stack_names("t") == ["root", "gone"]
        with catalog.writing_tag("t") as writer:
            replace_mirror(writer, "root", {a.hash: True}, checksum="2")
            writer.drop_other_stacks()
        assert catalog.stack_names("t") == ["root"]
        with pytest.raises(UnknownStack):
            catalog.search(parse("alpha"), tag="t", stack="gone")
        assert [s.stacks for s in catalog.search(parse("alpha"), tag="t").specs] == [("root",)]
