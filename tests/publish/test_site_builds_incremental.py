"""A site build after a change (``publish/site_delta``) ends equal, file for file, to a
full build of the same state into an empty folder, on small catalogs: packages and
specs that come and go, a spec that comes and leaves between two builds, a size that
arrives (also for a spec a tag no longer holds), a spec a mirror lists or stops listing,
a dependency held alone whose page then goes. Each build
after the first must be one of the changed pages only (``changed_only``), so that it is
the incremental build that is compared."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Collection
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.publish import site as site_module
from cachedex.publish import site_delta
from cachedex.publish.site import write_site
from cachedex.values import Dependency, SpecRecord
from tests.helpers import file_bytes, record, write_tag


def _hash(seed: str) -> str:
    return base64.b32encode(hashlib.sha256(seed.encode()).digest()).decode().lower()[:32]


def _specs(packages: range, seed: str = "s") -> list[SpecRecord]:
    """Two specs per package ``p<n>``, the second linking to the first; ``p0``'s are the
    dependency of every other package's second spec (a hub)."""
    hub = _hash(f"{seed}-p0-1")
    records = []
    for n in packages:
        first = _hash(f"{seed}-p{n}-1")
        records.append(record(first, f"p{n}", version="1.0"))
        links = [Dependency(first, f"p{n}", 2, "")]
        if n:
            links.append(Dependency(hub, "p0", 2, ""))
        records.append(record(_hash(f"{seed}-p{n}-2"), f"p{n}", version="2.0", dependencies=tuple(links)))
    return records


def _sync(catalog: Catalog, tag: str, records: list[SpecRecord], *, unlisted: Collection[str] = ()) -> None:
    """A sync of ``tag`` that finds ``records`` (listed, but ``unlisted``)."""
    known = catalog.spec_ids([r.hash for r in records])
    new = [r for r in records if r.hash not in known]
    members = {r.hash: r.hash not in unlisted for r in records}
    checksum = _hash(repr(sorted(members.items())))
    write_tag(catalog, tag, new, members=members, checksum=checksum)


def _first(tmp_path: Path) -> tuple[Catalog, Path]:
    """A catalog of two tags (``t`` holds the hub and packages 1-5, ``u`` the hub and
    packages 1-2, the same specs) and its first site."""
    catalog = Catalog(tmp_path / "c.sqlite")
    _sync(catalog, "t", _specs(range(6)))
    _sync(catalog, "u", _specs(range(3)))
    site = tmp_path / "site"
    first = write_site(catalog, site)
    assert first.complete and not first.changed_only
    return catalog, site


def _hub_size_arrives(catalog: Catalog) -> None:
    """The hub's size arrives: every page showing it (its dependents', in closures)."""
    (spec_id,) = catalog._db.execute("SELECT id FROM specs WHERE hash = ?", (_hash("s-p0-1"),)).fetchone()
    assert catalog.record_sizes({spec_id: 5_000_000}) == 1


def _packages_come_and_go(catalog: Catalog) -> None:
    """``t`` loses packages 1 and 2 (``u`` keeps them) and gains package 6."""
    _sync(catalog, "t", [r for r in _specs(range(7)) if r.name not in ("p1", "p2")])


def _a_package_leaves_every_tag(catalog: Catalog) -> None:
    """Package 2 leaves ``t`` and ``u``: its spec pages go, and its package pages."""
    _sync(catalog, "t", [r for r in _specs(range(6)) if r.name != "p2"])
    _sync(catalog, "u", [r for r in _specs(range(3)) if r.name != "p2"])


def _a_spec_comes_and_leaves(catalog: Catalog) -> None:
    """Between two builds, a spec of package 4 comes (a sync) and leaves (the next): the
    package holds the same specs, but its feed gained two entries."""
    extra = record(_hash("extra"), "p4", version="9.9")
    _sync(catalog, "t", [*_specs(range(6)), extra])
    _sync(catalog, "t", _specs(range(6)))


def _the_hub_is_no_longer_listed(catalog: Catalog) -> None:
    """``t`` holds the hub without listing it (no binary): its dependents' pages say so."""
    _sync(catalog, "t", _specs(range(6)), unlisted={_hash("s-p0-1")})


def _a_dependency_is_held_alone(catalog: Catalog) -> None:
    """``u`` drops package 1's first spec, which ``t`` holds unlisted, then ``t`` drops it
    too: pages that linked it name it (no page) once no mirror holds it."""
    gone = _hash("s-p1-1")
    _sync(catalog, "t", _specs(range(6)), unlisted={gone})
    _sync(catalog, "u", [r for r in _specs(range(3)) if r.hash != gone])


def _the_held_alone_dependency_leaves(catalog: Catalog) -> None:
    """``t`` drops package 1's first spec it held unlisted (alone): its page goes, which
    its dependent's page linked, though that page's twin says the same (it is unlisted)."""
    _sync(catalog, "t", [r for r in _specs(range(6)) if r.hash != _hash("s-p1-1")])


def _u_drops_package_2(catalog: Catalog) -> None:
    """``u`` drops package 2 (``t`` keeps it): ``u``'s history names its specs."""
    _sync(catalog, "u", [r for r in _specs(range(3)) if r.name != "p2"])


def _package_2_s_size_arrives(catalog: Catalog) -> None:
    """Package 2's first spec gets its size: ``u``'s totals stay (it holds it no more),
    but its change page sums the sizes of the specs its syncs removed."""
    (spec_id,) = catalog._db.execute("SELECT id FROM specs WHERE hash = ?", (_hash("s-p2-1"),)).fetchone()
    assert catalog.record_sizes({spec_id: 7_000_000}) == 1


#: Each change, as steps with a build after each.
CHANGES: dict[str, list[Callable[[Catalog], None]]] = {
    "the hub's size arrives": [_hub_size_arrives],
    "packages come and go": [_packages_come_and_go],
    "a package leaves every tag": [_a_package_leaves_every_tag],
    "a spec comes and leaves between builds": [_a_spec_comes_and_leaves],
    "the hub is no longer listed, then listed again": [_the_hub_is_no_longer_listed, _packages_come_and_go],
    "a dependency is held alone, then by none": [_a_dependency_is_held_alone],
    "a dependency is held alone, then leaves every mirror": [
        _a_dependency_is_held_alone,
        _the_held_alone_dependency_leaves,
    ],
    "a size arrives for a spec a tag no longer holds": [_u_drops_package_2, _package_2_s_size_arrives],
}


@pytest.mark.parametrize("processes", ["one", "workers"])
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_build_after_a_change_equals_a_full_build_on_a_small_catalog(
    tmp_path: Path, change: str, processes: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages a change reaches that the build after it leaves stale, or pages it leaves
    that should go, differ from a full build's."""
    monkeypatch.setattr(site_delta, "MOST", 1.0)  # (a small catalog's change reaches most of it)
    if processes == "workers":
        monkeypatch.setattr(site_module, "PARALLEL_MIN_PAGES", 0)
    catalog, site = _first(tmp_path)
    with catalog:
        for step in CHANGES[change]:
            step(catalog)
            after = write_site(catalog, site, workers=None if processes == "workers" else 1)
            assert after.complete and after.changed_only, after
        full = write_site(catalog, tmp_path / "fresh", workers=1)
        assert full.complete and not full.changed_only
    assert file_bytes(site) == file_bytes(tmp_path / "fresh")
