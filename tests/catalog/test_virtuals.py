"""A virtual's providers, as hints name them (``catalog/virtuals.py``)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from cachedex.catalog import Catalog
from cachedex.catalog.virtuals import providers, virtual_hint
from cachedex.values import Dependency, SpecRecord
from tests.helpers import record, write_tag


def _catalog(path: Path, provider_specs: dict[str, int]) -> Catalog:
    """One app per provider spec, depending on it as ``mpi``; ``provider_specs``:
    {package: how many specs of it}."""
    specs: list[SpecRecord] = []
    for n, (package, count) in enumerate(provider_specs.items()):
        for k in range(count):
            dag_hash = f"{n:02d}{k:02d}".ljust(32, "p")
            specs.append(record(dag_hash, package, version=f"{k + 1}.0"))
            edge = Dependency(name=package, hash=dag_hash, deptypes=2, virtuals="mpi")
            specs.append(msgspec.structs.replace(record(f"{n:02d}{k:02d}".ljust(32, "a"), "app"), dependencies=(edge,)))
    catalog = Catalog(path)
    write_tag(catalog, "t", specs)
    return catalog


def test_providers_come_most_used_first_and_the_example_is_the_most_used(tmp_path: Path) -> None:
    with _catalog(tmp_path / "c.sqlite", {"mpich": 1, "openmpi": 3, "mvapich": 2}) as catalog:
        assert providers(catalog._db, "mpi") == [("openmpi", 3), ("mvapich", 2), ("mpich", 1)]
        hint = virtual_hint(catalog._db, "mpi", "nothing matches ^mpi@3", "in t", versions=True)
        assert "which openmpi, mvapich, mpich provide" in hint and "(^openmpi@3.0)" in hint, hint


def test_a_virtual_s_hint_names_its_provider_s_newest_version_in_spack_s_order(tmp_path: Path) -> None:
    """As text, 9.0 came after 10.0: the example was not the newest."""
    with _catalog(tmp_path / "c.sqlite", {"openmpi": 10}) as catalog:  # versions 1.0 to 10.0
        hint = virtual_hint(catalog._db, "mpi", "nothing matches ^mpi@3", "in t", versions=True)
        assert "(^openmpi@10.0)" in hint, hint


def test_five_providers_are_named_all_and_more_are_counted(tmp_path: Path) -> None:
    five = {f"mpi{n}": 1 for n in range(5)}
    with _catalog(tmp_path / "five.sqlite", five) as catalog:
        hint = virtual_hint(catalog._db, "mpi", "nothing", "in t", versions=False, dependency=False)
        assert "which mpi0, mpi1, mpi2, mpi3, mpi4 provide in" in hint and "more" not in hint, hint
    with _catalog(tmp_path / "seven.sqlite", {**five, "mpi5": 1, "mpi6": 1}) as catalog:
        hint = virtual_hint(catalog._db, "mpi", "nothing", "in t", versions=False, dependency=False)
        assert "which mpi0, mpi1, mpi2, mpi3, mpi4 and 2 more provide in" in hint, hint
