"""Bounds of what a search that finds nothing says (catalog/hints.py, hint_values.py):
how many reduced queries it tries, how many close values it offers, how much of an
example spec it writes, and the wording for a single spec."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.query import parse
from cachedex.values import Dependency
from tests.helpers import record, write_tag


def test_the_last_condition_a_hint_may_drop_is_still_tried(tmp_path: Path) -> None:
    """Of eight conditions (as many as a hint tries dropping, ``hints._MAX_HINTS``; written
    out, as the module's own value would follow a change), only dropping the last finds a
    spec: it is named."""
    conditions = 8
    variants = tuple(f"~v{i}" for i in range(1, conditions + 1))
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "lib", variants=variants)])
    last = f"+v{conditions}"
    query = " ".join((*variants[:-1], last))
    (hint,) = catalog.search(parse(query), tag="t", hints=True).hints
    assert hint.startswith(f"nothing matches {last}; without it, 1 spec in t matches, e.g. lib@1.3.1 ")


def test_an_example_spec_writes_its_first_four_variants_then_an_ellipsis(tmp_path: Path) -> None:
    variants = ("~v1", "~v2", "~v3", "~v4", "~v5")
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "lib", variants=variants)])
    assert catalog.search(parse("~v1 +v5"), tag="t", hints=True).hints[-1] == (
        "nothing matches +v5; without it, 1 spec in t matches, e.g. lib@1.3.1 ~v1 ~v2 ~v3 ~v4 ... "
        "arch=linux-ubuntu24.04-x86_64_v3 %gcc@13.2.0"
    )


def test_at_most_three_close_values_are_offered(tmp_path: Path) -> None:
    """Four OSes are close to ubuntu22.10; the three closest are offered, the fourth not."""
    oses = ("ubuntu22.04", "ubuntu20.04", "ubuntu24.04", "ubuntu18.04")
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record(f"{n:032x}", "lib", os=os) for n, os in enumerate(oses)])
    (hint,) = catalog.search(parse("os=ubuntu22.10"), tag="t", hints=True).hints
    assert hint.startswith("nothing in t matches os=ubuntu22.10; did you mean ")
    assert sum(f"os={os} (1 spec)" in hint for os in oses) == 3
    assert "ubuntu18.04" not in hint  # (the least alike)


def test_one_spec_needing_a_dependency_only_to_build_it_is_told_in_the_singular(tmp_path: Path) -> None:
    cmake = record("c" * 32, "cmake")
    app = record("a" * 32, "app", dependencies=(Dependency(cmake.hash, "cmake", 1, ""),))  # (build only)
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [cmake, app])
    assert catalog.search(parse("^cmake"), tag="t", hints=True).hints == (
        "nothing in t matches ^cmake: 1 spec in the catalog needs cmake only to build it, "
        "and ^ follows link and run dependencies (what installing a spec needs)",
    )


def test_a_ninth_condition_not_tried_is_not_said_to_have_been(tmp_path: Path) -> None:
    """Only dropping the ninth condition finds a spec, and a hint tries the first eight: it
    said "even with one condition dropped", which dropping the ninth disproves."""
    variants = tuple(f"~v{i}" for i in range(1, 10))
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "lib", variants=variants)])
    query = " ".join((*variants[:-1], "+v9"))
    assert catalog.search(parse(query), tag="t", hints=True).hints == (
        "no spec in t matches even with one of its first 8 conditions dropped",
    )
    # Eight conditions, all tried: said as before.
    assert (
        catalog.search(parse(" ".join((*variants[:7], "+v8"))), tag="t", hints=True)
        .hints[0]
        .startswith("nothing matches +v8; without it,")
    )
    assert catalog.search(parse("+v1 +v2"), tag="t", hints=True).hints == (
        "no spec in t matches even with one condition dropped",
    )
