"""Hunted mutations of ``catalog/virtuals.py``: a virtual matched by its whole name in
an edge's comma-separated list, a package's name, link and run edges only, a provider's
other conditions, and each virtual's providers kept apart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.catalog.virtuals import is_virtual, providers, virtual_providers
from cachedex.query import parse
from cachedex.values import Dependency
from tests.helpers import record, write_tag

LINK, RUN, BUILD = 2, 4, 1


def _uses(letter: str, name: str, virtuals: str, mask: int = LINK) -> tuple[Dependency, ...]:
    return (Dependency(letter * 32, name, mask, virtuals),)


@pytest.fixture
def blas(tmp_path: Path) -> Iterator[Catalog]:
    """openblas (ubuntu) is used as blas and lapack by app1; cprov as cblas by app2;
    mkl (rhel8) as blas by app3; mpich as mpi by tool, to build it only."""
    specs = [
        record("o" * 32, "openblas"),
        record("c" * 32, "cprov"),
        record("k" * 32, "mkl", os="rhel8"),
        record("m" * 32, "mpich"),
        record("1" * 32, "app1", dependencies=_uses("o", "openblas", "blas,lapack")),
        record("2" * 32, "app2", dependencies=_uses("c", "cprov", "cblas")),
        record("3" * 32, "app3", dependencies=_uses("k", "mkl", "blas", RUN)),
        record("4" * 32, "tool", dependencies=_uses("m", "mpich", "mpi", BUILD)),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        yield catalog


def _names(catalog: Catalog, text: str) -> list[str]:
    return sorted(s.name for s in catalog.search(parse(text), tag="t", limit=100).specs)


def test_a_virtual_is_its_whole_name_in_an_edges_list(blas: Catalog) -> None:
    """``blas`` is not ``cblas``'s tail, and ``lapack``, second in ``blas,lapack``, is a
    virtual as the first is."""
    path, token = str(blas.path), blas.state_token()[0]
    assert providers(blas._db, "blas") == [("mkl", 1), ("openblas", 1)]
    assert providers(blas._db, "cblas") == [("cprov", 1)]
    assert is_virtual(blas._db, path, token, "lapack") and not is_virtual(blas._db, path, token, "las")
    assert _names(blas, "^blas") == ["app1", "app3"]
    assert _names(blas, "^lapack") == ["app1"]
    assert _names(blas, "blas") == ["mkl", "openblas"]


def test_each_virtuals_providers_are_its_own_in_id_order(blas: Catalog) -> None:
    """Read once per state and virtual: lapack's are not blas's kept before them."""
    path, token = str(blas.path), blas.state_token()[0]
    ids = dict(blas._db.execute("SELECT name, id FROM specs"))
    blas_ids = json.loads(virtual_providers(blas._db, path, token, "blas") or "null")
    assert blas_ids == sorted([ids["openblas"], ids["mkl"]])
    assert json.loads(virtual_providers(blas._db, path, token, "lapack") or "null") == [ids["openblas"]]
    assert virtual_providers(blas._db, path, token, "openblas") is None  # a package
    assert virtual_providers(blas._db, path, token, None) is None


def test_a_virtuals_dependents_are_through_link_and_run_edges_only(blas: Catalog) -> None:
    """tool needs mpich as mpi only to build: ``^mpi`` finds nothing, and says why."""
    page = blas.search(parse("^mpi"), tag="t", hints=True)
    assert not page.specs
    assert page.hints == (
        "nothing in t matches ^mpi: mpi is a virtual package, which mpich provides in the catalog, and "
        "specs need it only to build, while ^ follows link and run dependencies (what installing a spec needs)",
    )


def test_a_virtual_dependencys_other_conditions_select_its_providers(blas: Catalog) -> None:
    """``^blas os=rhel8``: the users of a blas provider built for rhel8 (mkl's app3)."""
    assert _names(blas, "^blas os=rhel8") == ["app3"]
    assert _names(blas, "^blas os=ubuntu24.04") == ["app1"]


def test_a_package_named_as_a_virtual_is_that_package(tmp_path: Path) -> None:
    """An edge names ``mpi`` as a virtual, and a package is named mpi: ``mpi`` is the
    package (its spec alone), not mpich's virtual."""
    specs = [
        record("m" * 32, "mpich"),
        record("p" * 32, "mpi"),
        record("a" * 32, "app", dependencies=_uses("m", "mpich", "mpi")),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        path, token = str(catalog.path), catalog.state_token()[0]
        assert not is_virtual(catalog._db, path, token, "mpi")
        assert virtual_providers(catalog._db, path, token, "mpi") is None
        assert _names(catalog, "mpi") == ["mpi"] and _names(catalog, "^mpi") == []


def test_a_sixth_provider_is_counted_not_dropped(tmp_path: Path) -> None:
    """Five providers are named; the sixth is "1 more", not left out of the hint."""
    from cachedex.catalog.virtuals import virtual_hint

    specs = []
    for n in range(6):
        provider = f"{n}".ljust(32, "p")
        edge = Dependency(provider, f"mpi{n}", LINK, "mpi")
        specs += [record(provider, f"mpi{n}"), record(f"{n}".ljust(32, "a"), f"app{n}", dependencies=(edge,))]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        hint = virtual_hint(catalog._db, "mpi", "nothing", "in t", versions=False, dependency=False)
        assert hint == (
            "nothing: mpi is a virtual package, which mpi0, mpi1, mpi2, mpi3, mpi4 and 1 more provide in the "
            "catalog, and no binary of them is in t"
        )
