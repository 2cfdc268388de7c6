"""Forgetting a tag (``cachedex forget``) and what nothing needs (``cachedex gc``)."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.values import Dependency
from tests.helpers import record, replace_mirror, write_tag

A, B, C, P, Z = "a" * 32, "b" * 32, "c" * 32, "p" * 32, "z" * 32


def test_a_forgotten_tag_s_history_goes_with_it_and_gc_then_forgets_its_specs(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "keep", [record(A)])
        write_tag(catalog, "gone", [record(B, "cmake")], checksum="1")
        with catalog.writing_tag("gone") as writer:  # b removed: a change that names it
            writer.add_specs([record(C, "tmux")], {})
            replace_mirror(writer, "root", {C: True}, checksum="2")
        assert catalog.collect_garbage(vacuum=False) == (0, 0)  # the history names b, the mirror c
        catalog.forget_tags({"gone": None})
        assert catalog.collect_garbage(vacuum=False) == (2, 0)
        assert set(catalog.spec_ids([A, B, C])) == {A}


def test_gc_keeps_the_dependencies_of_what_it_keeps(tmp_path: Path) -> None:
    """p (listed) and its dependency z (held, not listed) leave the mirror: the history
    keeps p, and p's page still needs z though no change names it."""
    parent = msgspec.structs.replace(
        record(P, "app"), dependencies=(Dependency(name="zlib", hash=Z, deptypes=2, virtuals=""),)
    )
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [parent, record(Z, in_buildcache=False)], members={P: True, Z: False})
        with catalog.writing_tag("t") as writer:
            writer.add_specs([record(A, "tmux")], {})
            replace_mirror(writer, "root", {A: True}, checksum="2")
        assert catalog.collect_garbage(vacuum=False) == (0, 0)
        assert set(catalog.spec_ids([P, Z])) == {P, Z}


def test_gc_forgets_the_history_of_syncs_that_ended_before_the_time_given_not_at_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "time", lambda: 2_000_000_000.0)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(A)], checksum="1")
        write_tag(catalog, "t", [record(B, "cmake")], checksum="2")
        (finished,) = {s.finished_at for s in catalog.tag_syncs("t")}
        assert catalog.collect_garbage(history_before=finished, vacuum=False) == (0, 0)
        assert catalog.collect_garbage(history_before=finished + 1, vacuum=False)[1] > 0


def test_a_tag_given_a_forgotten_tag_s_name_has_none_of_its_verifications(tmp_path: Path) -> None:
    from cachedex.catalog.verifications import MirrorVerification, SignatureCounts

    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(A)])
        result = MirrorVerification(
            "t", "root", "/m", None, 3, 1.0, 2.0, False, ("index",), (), 1, 1, 0, "unsigned",
            (), SignatureCounts(), (), 0,
        )  # fmt: skip
        assert catalog.store_verification(result, [], "")
        assert catalog.tag_verification("t") is not None
        catalog.forget_tags({"t": None})
        write_tag(catalog, "t", [record(B, "cmake")], checksum="2")
        assert catalog.tag_verification("t") is None
