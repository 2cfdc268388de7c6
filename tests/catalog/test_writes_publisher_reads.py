"""What the catalog's whole-tag reads give publishers (``catalog/bulk.py``) of what a
sync wrote: only what a mirror lists, in the order pages show it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.catalog import Catalog, TagWriter
from tests.helpers import record, replace_mirror

A, B, C, D = "a" * 32, "b" * 32, "c" * 32, "d" * 32


def _catalog(tmp_path: Path) -> Catalog:
    """Tag dev: the root lists zlib (a) and hdf5 (b) and holds cmake (c) unlisted; stack
    'a-stack' lists a and c; a root of views only, 'views', lists d."""
    catalog = Catalog(tmp_path / "c.sqlite")
    with catalog.writing_tag("dev") as writer:
        writer.add_specs([record(A), record(B, "hdf5"), record(C, "cmake"), record(D, "tmux")], {})
        replace_mirror(writer, "root", {A: True, B: True, C: False})
        replace_mirror(writer, "a-stack", {A: True, C: True})
    with catalog.writing_tag("views") as writer:
        _views_root(writer)
    return catalog


def _views_root(writer: TagWriter) -> None:
    replace_mirror(writer, "root", {D: True}, url="/v", checksum="v", own_index=False)


def test_listed_rows_are_the_root_s_listed_specs_by_name(tmp_path: Path) -> None:
    with _catalog(tmp_path) as catalog:
        assert [r.name for r in catalog.listed_rows("dev")] == ["hdf5", "zlib"]
        assert [r.name for r in catalog.listed_rows("dev", names=["cmake", "zlib"])] == ["zlib"]


def test_a_share_of_the_packages_past_the_last_is_refused(tmp_path: Path) -> None:
    """``--part 2 --parts 2`` would build an empty share of the site without a word."""
    with _catalog(tmp_path) as catalog, pytest.raises(ValueError):
        list(catalog.listed_rows("dev", part=2, parts=2))


def test_a_spec_s_holders_start_with_each_tag_s_root(tmp_path: Path) -> None:
    with _catalog(tmp_path) as catalog:
        ids = catalog.spec_ids([A])
        assert [(h.tag, h.stack) for h in catalog.all_holder_rows([ids[A]])] == [("dev", "root"), ("dev", "a-stack")]


def test_root_listing_tags_leave_out_specs_the_root_holds_unlisted(tmp_path: Path) -> None:
    with _catalog(tmp_path) as catalog:
        ids = catalog.spec_ids([A, B, C, D])
        by_id = {v: k for k, v in ids.items()}
        assert sorted((by_id[i], tag) for i, tag in catalog.root_listing_tags()) == [
            (A, "dev"),
            (B, "dev"),
            (D, "views"),
        ]


def test_stack_listings_are_the_stacks_own_indexes_and_the_root_only_when_asked(tmp_path: Path) -> None:
    """A root of views only has no index of its own: never counted as listing anything."""
    with _catalog(tmp_path) as catalog:
        ids = {v: k for k, v in catalog.spec_ids([A, B, C, D]).items()}
        mirrors, rows = catalog.stack_listings()
        assert sorted(mirrors.values()) == [("dev", "a-stack")]
        assert sorted(ids[spec] for spec, _ in rows) == [A, C]
        mirrors, rows = catalog.stack_listings(include_root=True)
        assert sorted(mirrors.values()) == [("dev", "a-stack"), ("dev", "root")]
        listed = sorted((ids[spec], mirrors[mirror][1]) for spec, mirror in rows)
        assert listed == [(A, "a-stack"), (A, "root"), (B, "root"), (C, "a-stack")]


def test_the_nodes_of_a_catalog_too_small_for_a_dictionary_are_read_back_as_written(tmp_path: Path) -> None:
    """Under 500 nodes they are stored as text: a site build reads them as bytes all the same."""
    with _catalog(tmp_path) as catalog:
        ids = catalog.spec_ids([A, B])
        assert [(row[1], row[-1]) for row in catalog.spec_nodes([ids[A], ids[B]])] == [
            (A, record(A).node),
            (B, record(B, "hdf5").node),
        ]
        assert [node for _, node in catalog.nodes_of([ids[B]])] == [record(B, "hdf5").node.decode()]
