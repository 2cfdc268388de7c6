"""Which pages a build after a change writes (``publish/site_delta``), decided on the
small catalog with hand-made records: each reason to compare every page, the pages one
change reaches, what a build that did not complete left, and the marker files."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.publish import site_delta
from cachedex.publish.site_delta import (
    BUILDING,
    INPUTS,
    SiteInputs,
    Unfinished,
    begin_build,
    changed_pages,
    load_inputs,
    read_inputs,
    relinked,
    save_inputs,
    tags_changed,
)
from tests.helpers import replace_mirror

Z, C, G = "z" * 32, "c" * 32, "g" * 32  # zlib, cmake (links zlib), gcc (held unlisted)


def _now(catalog: Catalog) -> SiteInputs:
    return read_inputs(catalog, b"scope")


def _with(inputs: SiteInputs, **changes: object) -> SiteInputs:
    return msgspec.structs.replace(inputs, **changes)


def _resized(inputs: SiteInputs, dag_hash: str, size: int | None) -> SiteInputs:
    specs = dict(inputs.specs)
    name, _, held, listed = specs[dag_hash]
    specs[dag_hash] = (name, size, held, listed)
    return _with(inputs, specs=specs)


def _ids(catalog: Catalog) -> dict[str, int]:
    return catalog.page_inputs().ids_of([Z, C, G])


@pytest.fixture
def everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change of one spec reaches a third of the small catalog: let it."""
    monkeypatch.setattr(site_delta, "MOST", 1.0)


def test_no_change_reaches_no_page(small_catalog: Catalog) -> None:
    """A record equal to the catalog names no page at all."""
    now = _now(small_catalog)
    pages = changed_pages(small_catalog, now, now, {})
    assert pages == site_delta.PageSet([], set(), set(), set(), set())


@pytest.mark.parametrize(
    "change",
    [
        {"scope": b"other"},
        {"mark": "another catalog:1.0"},
        {"history": 1_000},
        {"verified": 7},
    ],
)
def test_what_cannot_be_told_apart_compares_every_page(small_catalog: Catalog, change: dict[str, object]) -> None:
    """Another scope, another catalog's history, history or a verification forgotten:
    None (compare every page), though no spec changed."""
    now = _now(small_catalog)
    assert changed_pages(small_catalog, _with(now, **change), now, {}) is None


def test_a_verification_as_new_as_the_record_is_no_change(small_catalog: Catalog) -> None:
    """``now.verified`` equal to the recorded one is not a forgotten verification."""
    now = _with(_now(small_catalog), verified=3)
    with small_catalog.snapshot():
        pages = changed_pages(small_catalog, now, now, {})
    assert pages is not None and pages.spec_ids == []


def test_a_moved_mirror_compares_every_page_but_a_new_one_does_not(small_catalog: Catalog) -> None:
    """A recorded mirror shown otherwise now gives None; a mirror the record lacks
    (its pages are reached through its specs) does not."""
    now = _now(small_catalog)
    mirror_id, shown = next(iter(now.mirrors.items()))
    moved = _with(now, mirrors={**now.mirrors, mirror_id: (shown[0], shown[1], "/elsewhere", *shown[3:])})
    assert changed_pages(small_catalog, moved, now, {}) is None
    fewer = _with(now, mirrors={m: s for m, s in now.mirrors.items() if m != mirror_id})
    assert changed_pages(small_catalog, fewer, now, {}) is not None


def test_a_size_change_reaches_the_spec_its_dependents_its_name_and_tag(
    small_catalog: Catalog, everything: None
) -> None:
    """zlib's size changed: its page, cmake's (its closure's size), zlib's package pages
    and tag t's tag and change pages; nothing gone."""
    now = _now(small_catalog)
    before = _resized(now, Z, 1)
    pages = changed_pages(small_catalog, before, now, {})
    ids = _ids(small_catalog)
    assert pages is not None
    assert pages.spec_ids == sorted({ids[Z], ids[C], *small_catalog.page_inputs().reached_by([ids[Z]])})
    assert ids[C] in pages.spec_ids
    assert pages.names == {"zlib"}
    assert pages.tags == {"t"} and pages.change_tags == {"t"}
    assert pages.gone == set()


def test_a_membership_change_alone_does_not_reach_dependents(small_catalog: Catalog, everything: None) -> None:
    """cmake's memberships changed but not its size or listing: its page only (no
    dependent shows memberships)."""
    now = _now(small_catalog)
    specs = dict(now.specs)
    name, size, held, listed = specs[C]
    specs[C] = (name, size, f"{held} 999+".strip(), listed)
    pages = changed_pages(small_catalog, _with(now, specs=specs), now, {})
    assert pages is not None
    ids = _ids(small_catalog)
    assert pages.spec_ids == [ids[C]]
    assert pages.names == {"cmake"}
    # mirror 999 is in neither record: it names no tag
    assert pages.tags == {"t"}


def test_a_spec_that_left_is_gone_and_its_name_reached(small_catalog: Catalog, everything: None) -> None:
    """gcc is in the record, not in the catalog's mirrors now: its page goes, its
    package pages and its dependents' are written again."""
    now = _now(small_catalog)
    before = now
    now = _with(now, specs={h: v for h, v in now.specs.items() if h != G})
    pages = changed_pages(small_catalog, before, now, {})
    assert pages is not None
    ids = _ids(small_catalog)
    assert pages.gone == {G}
    assert "gcc" in pages.names
    assert ids[C] in pages.spec_ids  # lists gcc as a dependency
    assert relinked(before, now) == frozenset({G})  # held unlisted: its links change


def test_a_forgotten_spec_compares_every_page(small_catalog: Catalog) -> None:
    """A spec in the record the catalog no longer has (``cachedex gc``): None."""
    now = _now(small_catalog)
    before = _with(now, specs={**now.specs, "x" * 32: ("ghost", 5, "", 1)})
    assert changed_pages(small_catalog, before, now, {}) is None


def test_the_share_reached_is_a_bound_not_a_limit(small_catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exactly ``MOST`` of the held specs reached still gives the pages; more gives None."""
    now = _now(small_catalog)
    specs = dict(now.specs)
    name, size, held, listed = specs[C]
    specs[C] = (name, size, f"{held} 999+", listed)  # reaches cmake alone: 1 of 3
    before = _with(now, specs=specs)
    monkeypatch.setattr(site_delta, "MOST", 1 / 3)
    assert changed_pages(small_catalog, before, now, {}) is not None
    monkeypatch.setattr(site_delta, "MOST", 0.3)
    assert changed_pages(small_catalog, before, now, {}) is None


def test_what_an_unfinished_build_named_is_written_again(small_catalog: Catalog, everything: None) -> None:
    """With no change since the record, the pages a build that did not complete named
    are all written: its specs (those gone removed), names, tags and change tags."""
    now = _now(small_catalog)
    left = Unfinished([Z, "y" * 32], ["zlib", "other"], ["t"], ["u"])
    pages = changed_pages(small_catalog, now, now, {}, left)
    assert pages is not None
    assert pages.spec_ids == [_ids(small_catalog)[Z]]
    assert pages.names == {"zlib", "other"}
    assert pages.tags == {"t"}
    assert pages.change_tags == {"t", "u"}
    assert pages.gone == {"y" * 32}


def test_a_comparison_is_written_again_with_its_older_tag(small_catalog: Catalog, everything: None) -> None:
    """A comparison page ({newer: [older]}) is written again when the older tag's pages
    are, not when only an unrelated one's are."""
    now = _now(small_catalog)
    before = _resized(now, Z, 1)
    pages = changed_pages(small_catalog, before, now, {"newer": ["t"], "unrelated": ["x"]})
    assert pages is not None
    assert "newer" in pages.change_tags and "unrelated" not in pages.change_tags
    assert "newer" not in pages.tags


def test_a_tag_whose_totals_changed_is_written(small_catalog: Catalog) -> None:
    """A tag whose recorded state differs (a sync's read time) gets its pages, with no
    spec page; so does a tag that came."""
    now = _now(small_catalog)
    before = _with(now, tags={"t": b"old", "gone-tag": b"x"})
    pages = changed_pages(small_catalog, before, now, {})
    assert pages is not None
    assert pages.spec_ids == []
    assert pages.tags == {"t", "gone-tag"}
    assert pages.change_tags == {"t", "gone-tag"}
    assert tags_changed(small_catalog, before, None, ["t", "u"]) == ["t"]
    assert tags_changed(small_catalog, now, Unfinished([], [], ["u"], []), ["t", "u"]) == ["u"]


def test_relinked_names_only_unlisted_specs_that_came_or_went(small_catalog: Catalog) -> None:
    """A listed spec coming or going is not relinked (its twins say so); an unlisted one
    is, whether it came or went."""
    now = _now(small_catalog)
    without = _with(now, specs={h: v for h, v in now.specs.items() if h not in (Z, G)})
    assert relinked(now, without) == frozenset({G})
    assert relinked(without, now) == frozenset({G})
    assert relinked(now, now) == frozenset()


def test_the_record_and_the_marker(tmp_path: Path, small_catalog: Catalog) -> None:
    """A saved record loads with no pages left; a build that began without naming pages
    (or named them unreadably) makes it untrusted; one that named them gives them; a
    complete build removes the marker."""
    now = _now(small_catalog)
    assert load_inputs(tmp_path) is None  # never built
    save_inputs(tmp_path, now)
    found = load_inputs(tmp_path)
    assert found is not None and found.inputs == now and found.left is None
    begin_build(tmp_path)
    assert (tmp_path / BUILDING).read_bytes() == b""
    assert load_inputs(tmp_path) is None
    named = Unfinished([Z], ["zlib"], ["t"], ["t"])
    begin_build(tmp_path, named)
    found = load_inputs(tmp_path)
    assert found is not None and found.left == named and found.inputs == now
    (tmp_path / BUILDING).write_bytes(b"\xc1 not msgpack")
    assert load_inputs(tmp_path) is None
    save_inputs(tmp_path, now)
    assert not (tmp_path / BUILDING).exists()
    (tmp_path / INPUTS).write_bytes(b"garbage")
    assert load_inputs(tmp_path) is None


def test_a_marker_of_the_largest_size_is_read(
    tmp_path: Path, small_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A marker of exactly ``_MOST_BUILDING`` bytes is read; one byte more is not."""
    save_inputs(tmp_path, _now(small_catalog))
    data = msgspec.msgpack.encode(Unfinished([Z], [], [], []))
    begin_build(tmp_path, Unfinished([Z], [], [], []))
    monkeypatch.setattr(site_delta, "_MOST_BUILDING", len(data))
    found = load_inputs(tmp_path)
    assert found is not None and found.left == Unfinished([Z], [], [], [])
    monkeypatch.setattr(site_delta, "_MOST_BUILDING", len(data) - 1)
    assert load_inputs(tmp_path) is None


def _held(inputs: SiteInputs, **held: str) -> SiteInputs:
    """``inputs`` with the memberships (``held``) of some specs, by their letter."""
    specs = dict(inputs.specs)
    for letter, text in held.items():
        name, size, _, listed = specs[letter * 32]
        specs[letter * 32] = (name, size, text, listed)
    return _with(inputs, specs=specs)


def _other_mirror(inputs: SiteInputs, tag: str) -> tuple[int, SiteInputs]:
    """``inputs`` with one mirror more, of ``tag`` (an id the catalog does not have)."""
    mirror = max(inputs.mirrors) + 100
    return mirror, _with(inputs, mirrors={**inputs.mirrors, mirror: (tag, "s", "/u", 3, False, False)})


def test_a_mirror_the_catalog_dropped_is_no_reason_to_compare_everything(
    small_catalog: Catalog, everything: None
) -> None:
    """A mirror only the record has (dropped since: its specs' memberships and its
    tag's state say what changed) does not make the build compare every page."""
    now = _now(small_catalog)
    _, before = _other_mirror(now, "u")
    pages = changed_pages(small_catalog, before, now, {})
    assert pages is not None and pages.spec_ids == []


def test_a_spec_that_came_reaches_its_dependents(small_catalog: Catalog, everything: None) -> None:
    """zlib is in the catalog, not in the record: its page and cmake's (its dependency
    list shows zlib's binary) are written, and zlib's package pages."""
    now = _now(small_catalog)
    before = _with(now, specs={h: v for h, v in now.specs.items() if h != Z})
    pages = changed_pages(small_catalog, before, now, {})
    assert pages is not None
    ids = _ids(small_catalog)
    assert {ids[Z], ids[C]} <= set(pages.spec_ids)
    assert "zlib" in pages.names and pages.gone == set()


def test_a_listing_change_reaches_dependents(small_catalog: Catalog, everything: None) -> None:
    """zlib listed in the record, not now (same size): cmake's page shows that, so it is
    written."""
    now = _now(small_catalog)
    specs = dict(now.specs)
    name, size, held, listed = specs[Z]
    specs[Z] = (name, size, held, 1 - listed)
    pages = changed_pages(small_catalog, _with(now, specs=specs), now, {})
    assert pages is not None
    assert _ids(small_catalog)[C] in pages.spec_ids


@pytest.mark.parametrize("side", ["before", "now"])
def test_the_tags_of_every_mirror_a_changed_spec_was_or_is_in(
    small_catalog: Catalog, everything: None, side: str
) -> None:
    """cmake's memberships name another tag's mirror besides t's, in the record or now:
    both tags' pages are written."""
    now = _now(small_catalog)
    mirror, now = _other_mirror(now, "u")
    own = now.specs[C][2]
    with_u = _held(now, c=f"{own} {mirror}+")
    before, after = (with_u, now) if side == "before" else (now, with_u)
    pages = changed_pages(small_catalog, before, after, {})
    assert pages is not None
    assert pages.tags == {"t", "u"}


def test_a_spec_named_by_history_changes_no_tag_but_its_change_pages(small_catalog: Catalog, everything: None) -> None:
    """zlib's size changed while no mirror of the records holds it: no tag page, but the
    change pages of the tag whose history names it (they sum its size)."""
    now = _held(_now(small_catalog), z="")
    pages = changed_pages(small_catalog, _resized(now, Z, 1), now, {})
    assert pages is not None
    assert pages.tags == set() and pages.change_tags == {"t"}


def test_a_membership_change_alone_names_no_change_page(small_catalog: Catalog, everything: None) -> None:
    """zlib's memberships changed (to a mirror no record knows), its size and listing
    not: no change page, though t's history names zlib (they show sizes and listings)."""
    now = _held(_now(small_catalog), z="")
    assert small_catalog.page_inputs().tags_mentioning([Z]) == {"t"}
    pages = changed_pages(small_catalog, _held(now, z="99999+"), now, {})
    assert pages is not None
    assert pages.change_tags == set()


def test_a_spec_that_left_and_came_back_reaches_its_page_and_feed(small_catalog: Catalog, everything: None) -> None:
    """Between two builds, syncs of t's root drop cmake and put it back: held as before,
    but its page's history and its feed changed, so both are written; zlib's not."""
    before = _now(small_catalog)
    listed = {Z: True, G: False}
    for members in (listed, {**listed, C: True}):
        with small_catalog.writing_tag("t") as writer:
            replace_mirror(writer, "root", members, url="/m", checksum=f"x{len(members)}")
    now = _now(small_catalog)
    assert now.specs == before.specs
    pages = changed_pages(small_catalog, before, now, {})
    assert pages is not None
    assert pages.spec_ids == [_ids(small_catalog)[C]]
    assert pages.names == {"cmake"}


def test_history_of_a_spec_no_mirror_holds_writes_no_page(small_catalog: Catalog, everything: None) -> None:
    """A spec the history since the record names, held in neither record (it came and
    left): no page of it is written."""
    reads = small_catalog.page_inputs()
    now = _now(small_catalog)
    now = _with(now, specs={h: v for h, v in now.specs.items() if h != Z})
    before = _with(now, last_sync=0, history=reads.history_count(0), mark=reads.history_mark(0))
    assert Z in reads.hashes_changed_after(0)
    pages = changed_pages(small_catalog, before, now, {})
    assert pages is not None
    assert _ids(small_catalog)[Z] not in pages.spec_ids


def test_a_tag_that_left_its_series_writes_the_newer_comparison(small_catalog: Catalog) -> None:
    """v1.0.1 left: v1.0.2's change page compared with it, so it is written again."""
    now = _now(small_catalog)
    now = _with(now, tags={**now.tags, "v1.0.2": b"2", "v1.0.0": b"0"})
    before = _with(now, tags={**now.tags, "v1.0.1": b"1"})
    pages = changed_pages(small_catalog, before, now, {})
    assert pages is not None
    assert pages.change_tags == {"v1.0.1", "v1.0.2"}


def test_a_verified_mirror_reaches_every_spec_it_holds(small_catalog: Catalog, everything: None) -> None:
    """A verification of t/s since the record: zlib's page (s holds it) and t's pages;
    not cmake's (s does not hold it)."""
    from cachedex.catalog.verifications import MirrorVerification, SignatureCounts, SpecSignature

    before = _now(small_catalog)
    state = small_catalog.mirror_state("t", "s")
    assert state is not None
    held = sorted(small_catalog.members_of("t", "s"))
    result = MirrorVerification(
        "t", "s", state.url, None, state.layout, 1.0, 2.0, False, ("index", "signatures"), (),
        len(held), len(held), len(held), "signed", ("ABCD",), SignatureCounts(signed=len(held)), (), 1,
    )  # fmt: skip
    small_catalog.store_verification(result, [SpecSignature(h, "signed", "ABCD") for h in held], "ABCD")
    now = _now(small_catalog)
    pages = changed_pages(small_catalog, before, _with(now, mirrors=before.mirrors), {})
    assert pages is not None
    assert pages.spec_ids == [_ids(small_catalog)[Z]]
    assert pages.tags == {"t"}


def test_unfinished_names_every_kind_of_page(small_catalog: Catalog) -> None:
    """What a build names before writing: its specs by hash, names, tags and change tags
    each as given, sorted."""
    ids = _ids(small_catalog)
    pages = site_delta.PageSet([ids[C], ids[Z]], {"zlib", "cmake"}, {"t"}, {"u", "t"}, set())
    assert site_delta.unfinished(small_catalog, pages) == Unfinished(
        sorted([C, Z]), ["cmake", "zlib"], ["t"], ["t", "u"]
    )


def test_a_marker_that_is_not_msgpack_is_untrusted(tmp_path: Path, small_catalog: Catalog) -> None:
    """A record that does not decode at all (not msgpack) loads as None, not an error."""
    save_inputs(tmp_path, _now(small_catalog))
    (tmp_path / INPUTS).write_bytes(b"\xc1")
    assert load_inputs(tmp_path) is None
