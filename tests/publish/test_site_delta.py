"""A site build after a change writes only the pages the change reaches
(``publish/site_delta``), and ends equal, file for file, to a full build of the same
state into an empty folder: for each kind of change a sync or ``cachedex gc`` makes,
and when the record cannot be trusted (a build that did not complete)."""

from __future__ import annotations

import functools
import shutil
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest

from cachedex.catalog import Catalog, MirrorState
from cachedex.publish import site as site_module
from cachedex.publish import site_build, site_delta
from cachedex.publish.site import write_site
from cachedex.publish.site_delta import BUILDING, load_inputs
from cachedex.values import DEPTYPE_BITS, ROOT_STACK, Dependency
from tests.helpers import Demo, file_bytes, record

NEW = "n" * 32  # the hash of a spec a change adds
#: :func:`first_sites`: the demo's first site of some tags (None: every tag), its pages.
FirstSites = Callable[[list[str] | None], tuple[Path, int]]


def _resync(
    catalog: Catalog, tag: str, stack: str, *, drop: Collection[str] = (), add: dict[str, bool] | None = None
) -> None:
    """A sync of one mirror that finds ``drop`` gone and ``add`` new; the rest as it was."""
    state = catalog.mirror_state(tag, stack)
    assert state is not None and state.layout is not None
    members = {h: listed for h, listed in catalog.members_of(tag, stack).items() if h not in drop}
    members.update(add or {})
    with catalog.writing_tag(tag) as writer:
        writer.replace_mirror(
            stack,
            state.url,
            layout=state.layout,
            db_version=state.db_version or 8,
            checksum=f"{state.checksum}+",
            etag=state.etag,
            last_modified=state.last_modified,
            fetched_at=(state.fetched_at or 0.0) + 1,
            members=members,
            view=state.view,
            own_index=state.own_index,
        )


def _a_dependency(catalog: Catalog) -> str:
    """A listed spec of develop's root that another listed spec links with."""
    (found,) = catalog._db.execute(
        "SELECT s.hash FROM edges e JOIN specs s ON s.id = e.child JOIN members mb ON mb.spec_id = s.id "
        "JOIN mirrors m ON m.id = mb.mirror_id JOIN tags t ON t.id = m.tag_id "
        "WHERE t.name = 'develop' AND m.stack = 'root' AND mb.listed AND e.deptypes & 2 ORDER BY s.hash LIMIT 1"
    ).fetchone()
    return str(found)


def _drop_everywhere(catalog: Catalog) -> None:
    """A dependency leaves every mirror: its dependents' closures lose its binary."""
    gone = _a_dependency(catalog)
    for mirror in catalog.mirrors():
        if gone in catalog.members_of(mirror.tag, mirror.stack):
            _resync(catalog, mirror.tag, mirror.stack, drop={gone})


def _drop_an_unlisted_dependency_everywhere(catalog: Catalog) -> None:
    """A dependency that mirrors hold without listing it (no binary: gcc under a darwin
    spec's gfortran) leaves every mirror: its dependents' pages no longer link it, which
    their JSON twins do not say (the link was kept, pointing to a page removed)."""
    (gone,) = catalog._db.execute(
        "SELECT s.hash FROM specs s JOIN edges e ON e.child = s.id "
        "WHERE s.id IN (SELECT spec_id FROM members GROUP BY spec_id HAVING max(listed) = 0) ORDER BY s.hash LIMIT 1"
    ).fetchone()
    for mirror in catalog.mirrors():
        if gone in catalog.members_of(mirror.tag, mirror.stack):
            _resync(catalog, mirror.tag, mirror.stack, drop={gone})


def _add_a_dependent(catalog: Catalog) -> None:
    """A new spec, with no size yet, linking with a listed one, in a stack of develop."""
    child = _a_dependency(catalog)
    name = catalog.spec_summary(child).name  # type: ignore[union-attr]
    new = record(NEW, "newpkg", dependencies=(Dependency(child, name, DEPTYPE_BITS["link"], ""),))
    with catalog.writing_tag("develop") as writer:
        writer.add_specs([new], {})
    _resync(catalog, "develop", "e4s", add={NEW: True})
    _resync(catalog, "develop", ROOT_STACK, add={NEW: True})


def _a_spec_comes_and_leaves(catalog: Catalog) -> None:
    """Between two builds, a new spec of a listed package comes (a sync) and leaves (the
    next): the package's specs are as they were, but its feed has two entries more."""
    name = catalog.spec_summary(_a_dependency(catalog)).name  # type: ignore[union-attr]
    with catalog.writing_tag("develop") as writer:
        writer.add_specs([record(NEW, name, version="0.0.1")], {})
    _resync(catalog, "develop", ROOT_STACK, add={NEW: True})
    _resync(catalog, "develop", ROOT_STACK, drop={NEW})


#: What :func:`_drop_a_stack` dropped, for :func:`_put_the_stack_back`.
_DROPPED: list[tuple[MirrorState, dict[str, bool]]] = []


def _drop_a_stack(catalog: Catalog, stack: str | None = None) -> None:
    """develop's ``stack`` (default: its smallest) is no longer configured: a sync keeps the others."""
    stacks = [m for m in catalog.mirrors("develop") if m.stack != ROOT_STACK and stack in (None, m.stack)]
    gone = min(stacks, key=lambda m: (m.records or 0, m.stack))
    _DROPPED.append((gone, catalog.members_of("develop", gone.stack)))
    with catalog.writing_tag("develop") as writer:
        for mirror in catalog.mirrors("develop"):
            if mirror.stack != gone.stack:
                writer.keep_mirror(mirror.stack, mirror.url, fetched_at=1.0, etag=None, last_modified=None)
        assert writer.drop_other_stacks() == [gone.stack]


def _put_the_stack_back(catalog: Catalog) -> None:
    """The stack :func:`_drop_a_stack` dropped is configured again, as it was."""
    state, members = _DROPPED.pop()
    assert state.layout is not None and catalog.mirror_state("develop", state.stack) is None
    with catalog.writing_tag("develop") as writer:
        writer.replace_mirror(
            state.stack,
            state.url,
            layout=state.layout,
            db_version=state.db_version or 8,
            checksum=state.checksum,
            etag=None,
            last_modified=None,
            fetched_at=2.0,
            members=members,
            view=state.view,
            own_index=state.own_index,
        )


def _another_sync_drops_the_new_spec(path: Path) -> None:
    """A sync through another connection commits (while a build runs): the spec
    :func:`_add_a_dependent` added leaves again."""
    with Catalog(path) as other:
        for stack in ("e4s", ROOT_STACK):
            _resync(other, "develop", stack, drop={NEW})


def _record_its_size(catalog: Catalog) -> None:
    """The new spec's size arrives (sizes are recorded after a sync commits)."""
    (spec_id,) = catalog._db.execute("SELECT id FROM specs WHERE hash = ?", (NEW,)).fetchone()
    assert catalog.record_sizes({spec_id: 123_456}) == 1


def _move_the_new_spec_to_a_snapshot(catalog: Catalog) -> None:
    """The spec :func:`_add_a_dependent` added (no size yet) leaves develop for a
    snapshot: develop's change page names it, and sums its size once it arrives."""
    _resync(catalog, "develop-2026-11-08", ROOT_STACK, add={NEW: True})
    for stack in ("e4s", ROOT_STACK):
        _resync(catalog, "develop", stack, drop={NEW})


def _verify_a_stack(catalog: Catalog) -> None:
    """``cachedex verify`` of one stack: every spec page it holds shows the verification."""
    from cachedex.catalog.verifications import MirrorVerification, Problem, SignatureCounts, SpecSignature

    state = catalog.mirror_state("develop", "e4s")
    assert state is not None
    held = sorted(catalog.members_of("develop", "e4s"))
    problem = Problem("binary-missing", f"{state.url}/x", "no binary", held[0])
    result = MirrorVerification(
        "develop", "e4s", state.url, None, state.layout, 1.0, 2.0, False, ("index", "signatures"), (),
        len(held), len(held), len(held) - 1, "signed", ("ABCD",), SignatureCounts(signed=len(held)), (problem,), 1,
    )  # fmt: skip
    catalog.store_verification(result, [SpecSignature(h, "signed", "ABCD") for h in held], "ABCD")


#: Each change, as steps with a build after each.
CHANGES: dict[str, list[Callable[[Catalog], None]]] = {
    "a dependency leaves every mirror": [_drop_everywhere],
    "a dependency held unlisted leaves every mirror": [_drop_an_unlisted_dependency_everywhere],
    "a new dependent comes": [_add_a_dependent],
    "a size arrives": [_add_a_dependent, _record_its_size],
    "a size arrives for a spec that left the tag": [
        _add_a_dependent,
        _move_the_new_spec_to_a_snapshot,
        _record_its_size,
    ],
    "a stack is verified, then verified again": [_verify_a_stack, _verify_a_stack],
    "a spec comes and leaves between builds": [_a_spec_comes_and_leaves],
    "a stack is dropped, then put back": [_drop_a_stack, _put_the_stack_back],
    "a verified stack is dropped, then put back": [
        _verify_a_stack,
        functools.partial(_drop_a_stack, stack="e4s"),
        _put_the_stack_back,
    ],
}


@pytest.fixture(scope="module")
def first_sites(demo_run: Demo, tmp_path_factory: pytest.TempPathFactory) -> FirstSites:
    """The demo catalog's site (of ``tags``: None, every tag), built once in this module
    from a copy of the catalog: each test starts from a copy of it, with a copy of the
    catalog it records (the same catalog id and state, so trusted as a build of it). It
    gives the site and how many pages the build made."""
    built: dict[tuple[str, ...] | None, tuple[Path, int]] = {}

    def site_of(tags: list[str] | None) -> tuple[Path, int]:
        key = None if tags is None else tuple(tags)
        if key not in built:
            folder = tmp_path_factory.mktemp("first-site")
            shutil.copy(demo_run.catalog, folder / "c.sqlite")
            with Catalog(folder / "c.sqlite") as catalog:
                first = write_site(catalog, folder / "site", tags=tags)
            assert first.complete and not first.changed_only
            built[key] = folder / "site", first.pages
        return built[key]

    return site_of


def _built(
    folder: Path, demo_run: Demo, first_sites: FirstSites, tags: list[str] | None = None
) -> tuple[Path, Path, int]:
    """A copy of the demo catalog at ``folder``/c.sqlite and of its first site at
    ``folder``/site, as a first build there would write it: (catalog, site, its pages)."""
    path, site = folder / "c.sqlite", folder / "site"
    shutil.copy(demo_run.catalog, path)
    first, pages = first_sites(tags)
    shutil.copytree(first, site)
    return path, site, pages


def _full_build(catalog: Catalog, folder: Path, tags: list[str] | None = None) -> None:
    """A full build into the empty ``folder``, for a build after a change to equal: in one
    process, whichever the build it is compared with ran in (workers would read the graph
    each, for twice the CPU; ``test_site`` compares the pages of one and of two)."""
    full = write_site(catalog, folder, tags=tags, workers=1)
    assert full.complete and not full.changed_only


def test_a_dropped_stack_s_verification_is_not_shown(tmp_path: Path, demo_run: Demo) -> None:
    """A stack no longer the tag's still showed its latest verification: on the tag's
    and its specs' pages, though they had left it. Put back, it shows again."""
    path = tmp_path / "c.sqlite"
    shutil.copy(demo_run.catalog, path)
    with Catalog(path) as catalog:
        _verify_a_stack(catalog)
        held = sorted(catalog.members_of("develop", "e4s"))

        def shown(stack: str = "e4s") -> tuple[bool, bool]:
            tag = catalog.tag_verification("develop")
            return (
                tag is not None and stack in [m.stack for m in tag.mirrors],
                stack in [v.stack for v in catalog.spec_verifications(held[0])],
            )

        assert shown() == (True, True)
        _drop_a_stack(catalog, "e4s")
        assert shown() == (False, False)
        _put_the_stack_back(catalog)
        assert shown() == (True, True)
        # A stack verified but never synced (then taken out of the config), or removed
        # with its row by an older cachedex, has no row at all: not the tag's either.
        catalog._db.execute("UPDATE verifications SET stack = 'extra' WHERE stack = 'e4s'")
        assert shown("extra") == (False, False)


@pytest.mark.parametrize(
    ("change", "processes"),
    [(change, "workers") for change in CHANGES]
    + [("a dependency leaves every mirror", "one"), ("a stack is verified, then verified again", "one")]
    + [("a spec comes and leaves between builds", "one"), ("a dependency held unlisted leaves every mirror", "one")]
    # A site of one tag: the change reaches specs other tags hold, which have no page there.
    + [("a dependency leaves every mirror", "workers, develop only"), ("a new dependent comes", "one, develop only")],
)
def test_a_build_after_a_change_writes_what_it_reaches_and_equals_a_full_build(
    tmp_path: Path,
    demo_run: Demo,
    first_sites: FirstSites,
    change: str,
    processes: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if processes.startswith("workers"):  # every build in worker processes, as a big site's
        monkeypatch.setattr(site_module, "PARALLEL_MIN_PAGES", 0)
    tags = ["develop"] if processes.endswith("develop only") else None
    path, site, first_pages = _built(tmp_path, demo_run, first_sites, tags)
    fresh = tmp_path / "fresh"
    with Catalog(path) as catalog:
        for step in CHANGES[change]:
            step(catalog)
            after = write_site(catalog, site, tags=tags)
            assert after.complete and after.changed_only, after
            assert after.written > 0 and after.pages < first_pages / 4  # a few pages, not the site
        _full_build(catalog, fresh, tags)
    assert file_bytes(site) == file_bytes(fresh)


def test_a_mirror_found_unsigned_changes_every_page_that_adds_it(
    tmp_path: Path, demo_run: Demo, first_sites: FirstSites, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verification that finds the root mirror unsigned changes the commands on its tag
    page, every package page of the tag (which show no verification) and every spec page
    it holds: the build after it writes them all, as a full build would."""
    from cachedex.catalog.verifications import MirrorVerification, SignatureCounts, SpecSignature

    # (a tag's root holds most of the demo's specs: a build after it would compare every
    # page anyway; in a site of many tags it holds a few)
    monkeypatch.setattr(site_delta, "MOST", 1.0)

    path, site, _ = _built(tmp_path, demo_run, first_sites, ["develop"])
    fresh = tmp_path / "fresh"
    with Catalog(path) as catalog:
        state = catalog.mirror_state("develop", ROOT_STACK)
        assert state is not None
        held = sorted(catalog.members_of("develop", ROOT_STACK))
        now = time.time()  # (newer than the sync's finding: the verification's counts)
        result = MirrorVerification(
            "develop", ROOT_STACK, state.url, None, state.layout, now - 1, now, False, ("index", "signatures"), (),
            len(held), len(held), len(held), "unsigned", (), SignatureCounts(unsigned=len(held)), (), 0,
        )  # fmt: skip
        catalog.store_verification(result, [SpecSignature(h, "unsigned", None) for h in held], "")
        after = write_site(catalog, site, tags=["develop"])
        assert after.complete and after.written > 0
        _full_build(catalog, fresh, ["develop"])
    assert file_bytes(site) == file_bytes(fresh)
    # (the mirror is "develop": a stack's is "develop-e4s", another tag's "develop-2026-...")
    signed, unsigned = "spack mirror add develop ", "spack mirror add --unsigned develop "
    pages = {p: p.read_text() for p in site.rglob("*.html")}
    assert not any(signed in text for text in pages.values())
    assert sum(unsigned in text for text in pages.values()) > 10


def test_a_build_that_did_not_complete_makes_the_next_compare_every_page(
    tmp_path: Path, demo_run: Demo, first_sites: FirstSites
) -> None:
    path, site, _ = _built(tmp_path, demo_run, first_sites)
    with Catalog(path) as catalog:
        _add_a_dependent(catalog)
        (site / BUILDING).write_bytes(b"")  # as a build killed while writing leaves it
        after = write_site(catalog, site)
        assert after.complete and not after.changed_only
        assert not (site / BUILDING).exists()
        _drop_everywhere(catalog)
        assert write_site(catalog, site).changed_only  # the record is trusted again


def test_a_build_a_sync_overtook_leaves_its_pages_to_the_next(
    tmp_path: Path, demo_run: Demo, first_sites: FirstSites, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers that find the catalog changed write nothing more and the build does not
    complete; the pages written by then (of the sync it began with) are named in
    ``BUILDING``, and the next build writes them again, though its own changes (here
    none: the sync that overtook it undid the first) do not reach them."""
    monkeypatch.setattr(site_module, "PARALLEL_MIN_PAGES", 0)  # workers, which check the catalog's state
    path, site, _ = _built(tmp_path, demo_run, first_sites)
    fresh = tmp_path / "fresh"
    write_spec_pages = site_build._write_spec_pages

    def overtaken(*args: Any, **kwargs: Any) -> Any:
        stale = write_spec_pages(*args, **kwargs)
        _another_sync_drops_the_new_spec(path)
        return stale

    with Catalog(path) as catalog:
        _add_a_dependent(catalog)
        monkeypatch.setattr(site_build, "_write_spec_pages", overtaken)
        stopped = write_site(catalog, site)
        assert not stopped.complete and stopped.changed_only
        recorded = load_inputs(site)
        assert recorded is not None and recorded.left is not None and NEW in recorded.left.hashes
        assert (site / "specs" / NEW[:2] / f"{NEW}.html").exists()  # written, of the state it began with
        # As a build killed while writing them would leave beside them (the next build
        # trusts the record then too, and must look for these).
        killed = site / "specs" / NEW[:2] / f".{NEW}.html.4194304999.tmp"  # no process has that id
        killed.write_bytes(b"<p>half a page")
        monkeypatch.setattr(site_build, "_write_spec_pages", write_spec_pages)
        after = write_site(catalog, site)
        assert after.complete and after.changed_only
        assert not (site / BUILDING).exists() and not killed.exists()
        _full_build(catalog, fresh)
    assert file_bytes(site) == file_bytes(fresh)


def test_a_sync_after_the_plan_stops_the_build_before_it_writes_anything(
    tmp_path: Path, demo_run: Demo, first_sites: FirstSites, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build plans, guesses the tags a sync changed and starts workers on their pages,
    then reads the rest in a second snapshot: a sync committed in between stops it
    there, the site and its record as they were (the workers' pages were only kept),
    and the next build catches up."""
    monkeypatch.setattr(site_module, "PARALLEL_MIN_PAGES", 0)  # workers, and the guess
    monkeypatch.setattr(site_module, "BUILD_ATTEMPTS", 1)  # (one build, not made again)
    path, site, _ = _built(tmp_path, demo_run, first_sites)
    fresh = tmp_path / "fresh"
    guess = site_module.tags_changed
    guessed: list[list[str]] = []

    def overtaken(*args: Any, **kwargs: Any) -> list[str]:
        tags = guess(*args, **kwargs)
        guessed.append(tags)
        _another_sync_drops_the_new_spec(path)
        return tags

    with Catalog(path) as catalog:
        _add_a_dependent(catalog)
        before = file_bytes(site)
        monkeypatch.setattr(site_module, "tags_changed", overtaken)
        stopped = write_site(catalog, site)
        assert guessed == [["develop"]]
        assert not stopped.complete and stopped.written == 0
        assert file_bytes(site) == before
        monkeypatch.setattr(site_module, "tags_changed", guess)
        after = write_site(catalog, site)
        assert after.complete and after.changed_only
        _full_build(catalog, fresh)
    assert file_bytes(site) == file_bytes(fresh)


@pytest.mark.parametrize("processes", ["one", "workers"])
def test_forgotten_history_makes_the_next_build_compare_every_page(
    tmp_path: Path, demo_run: Demo, first_sites: FirstSites, processes: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With workers, the build has started on the tag pages of the tag that changed
    before it finds it cannot tell which other pages changed: those are still written."""
    if processes == "workers":
        monkeypatch.setattr(site_module, "PARALLEL_MIN_PAGES", 0)
    path, site, _ = _built(tmp_path, demo_run, first_sites)
    fresh = tmp_path / "fresh"
    with Catalog(path) as catalog:
        _add_a_dependent(catalog)
        catalog.collect_garbage(history_before=float("inf"), vacuum=False)  # "first seen" moves
        after = write_site(catalog, site)
        assert after.complete and not after.changed_only
        _full_build(catalog, fresh)
    assert file_bytes(site) == file_bytes(fresh)


def test_a_catalog_restored_from_a_copy_makes_the_next_build_compare_every_page(
    tmp_path: Path, demo_run: Demo, first_sites: FirstSites
) -> None:
    """A copy put back, then synced as often as the syncs it lost and with as many
    changes: the record's last sync id and history count were those of the catalog, and
    the build trusted it (its pages kept the lost syncs' times: "first seen", feeds).
    Another catalog made at the same path (``rm``, then a first sync) likewise."""
    (path, site, _), backup = _built(tmp_path, demo_run, first_sites), tmp_path / "backup.sqlite"
    shutil.copy(demo_run.catalog, backup)
    fresh = tmp_path / "fresh"
    with Catalog(path) as catalog:
        _add_a_dependent(catalog)
        assert write_site(catalog, site).changed_only
    for file in tmp_path.glob("c.sqlite*"):
        file.unlink()
    shutil.copy(backup, path)
    with Catalog(path) as catalog:
        _add_a_dependent(catalog)  # the same syncs and changes, later
        after = write_site(catalog, site)
        assert after.complete and not after.changed_only
        _full_build(catalog, fresh)
        assert file_bytes(site) == file_bytes(fresh)
        catalog._db.execute("UPDATE identity SET id = 'another'")  # (as another catalog's)
        mark = catalog.page_inputs().history_mark(catalog.page_inputs().last_sync())
        assert mark.startswith("another:") and not write_site(catalog, site).changed_only
