"""What a spec page's data says: its download (closure, sizes, largest binaries), its
dependents, its stacks and its install commands, on small real catalogs."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.publish.spec_pages import largest_dependencies, spec_page
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import record, replace_mirror

LINK, BUILD = DEPTYPE_BITS["link"], DEPTYPE_BITS["build"]
APP, BIG, SMALL, HELD, TOOL = "a" * 32, "b" * 32, "c" * 32, "d" * 32, "e" * 32


def _catalog(path: Path) -> Catalog:
    """app links big (990 B), small (10 B) and held (a binary no mirror has, 5,000 B
    told), builds with tool; app links itself (an index's cycle). app's own size is unknown."""
    catalog = Catalog(path)
    specs = [
        record(
            APP,
            "app",
            dependencies=(
                Dependency(BIG, "big", LINK, ""),
                Dependency(SMALL, "small", LINK, ""),
                Dependency(HELD, "held", LINK, ""),
                Dependency(TOOL, "tool", BUILD, ""),
                Dependency(APP, "app", LINK, ""),
            ),
        ),
        record(BIG, "big"),
        record(SMALL, "small"),
        record(HELD, "held", in_buildcache=False),
        record(TOOL, "tool"),
    ]
    with catalog.writing_tag("t") as writer:
        writer.add_specs(specs, {BIG: 990, SMALL: 10, HELD: 5000})
        replace_mirror(writer, "root", {APP: True, BIG: True, SMALL: True, HELD: False, TOOL: True}, checksum="r")
        replace_mirror(writer, "gpu", {APP: True}, url="/m/gpu", checksum="g")
        replace_mirror(writer, "old", {APP: False, BIG: True}, url="/m/old", checksum="o")
    return catalog


def test_the_download_counts_the_binaries_of_the_link_closure_without_the_spec_twice(tmp_path: Path) -> None:
    """A dependency without a binary costs nothing; the build tool is not downloaded; the
    spec's own binary (size unknown) is one of the binaries, counted unknown."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = spec_page(catalog, APP)
    assert sorted(edge.name for edge in page.closure) == ["big", "held", "small"]
    assert page.closure_count == 3
    assert (page.closure_size, page.closure_binaries, page.closure_unknown) == (1000, 3, 1)


def test_the_largest_binaries_are_listed_ones_largest_first_with_their_share(tmp_path: Path) -> None:
    """10 B of 1,000 is 1%, not "<1%"; held's 5,000 B are never downloaded: not named."""
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = spec_page(catalog, APP)
    shown = [(edge.name, share) for edge, share in largest_dependencies(page.closure, page.closure_size)]
    assert shown == [("big", "99%"), ("small", "1%")]


def test_a_dependency_without_its_own_binary_adds_nothing_to_its_dependents_download(tmp_path: Path) -> None:
    """A spec no tag lists (held only as a dependency) downloads only its dependencies' binaries."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs(
                [record(HELD, "held", dependencies=(Dependency(BIG, "big", LINK, ""),)), record(BIG, "big")],
                {HELD: 5000, BIG: 7},
            )
            replace_mirror(writer, "root", {HELD: False, BIG: True})
        page = spec_page(catalog, HELD)
    assert (page.closure_size, page.closure_binaries, page.closure_unknown) == (7, 1, 0)


def test_a_spec_page_lists_as_dependents_only_those_with_a_binary(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs(
                [
                    record(APP, "app", dependencies=(Dependency(BIG, "big", LINK, ""),)),
                    record(HELD, "held", dependencies=(Dependency(BIG, "big", LINK, ""),)),
                    record(BIG, "big"),
                ],
                {},
            )
            replace_mirror(writer, "root", {APP: True, HELD: False, BIG: True})
        page = spec_page(catalog, BIG)
    assert [edge.name for edge in page.dependents] == ["app"]


def test_stacks_and_install_commands_name_only_mirrors_with_the_binary_and_a_stack_by_its_mirror_name(
    tmp_path: Path,
) -> None:
    with _catalog(tmp_path / "c.sqlite") as catalog:
        page = spec_page(catalog, APP)
    assert page.spec.stacks == ("root", "gpu")
    assert [(i.tag, i.stack) for i in page.install] == [("t", "root"), ("t", "gpu")]
    gpu = page.install[1].commands.splitlines()
    assert gpu[0] == "spack mirror add t-gpu /m/gpu"
    assert gpu[-1] == f"spack install --cache-only /{APP}"
    assert page.install[0].commands.splitlines()[0] == "spack mirror add t /m"


def test_an_oci_registry_without_tls_is_added_unsigned_and_without_keys(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs([record(APP)], {})
            replace_mirror(writer, "root", {APP: True}, url="oci+http://registry:5000/cache")
        (install,) = spec_page(catalog, APP).install
    assert install.commands.splitlines() == [
        "spack mirror add --unsigned t oci+http://registry:5000/cache",
        f"spack install --cache-only /{APP}",
    ]


def test_a_dependency_nearly_all_of_a_download_is_not_said_to_be_all_of_it(tmp_path: Path) -> None:
    """996 B of 1,000 rounds to 100 %: said ">99%" (the rest is there)."""
    from cachedex.catalog.rows import Edge

    def shares(*sizes: int) -> list[str]:
        edges = [Edge(f"{n:032x}", f"d{n}", "1.0", True, size) for n, size in enumerate(sizes)]
        return [share for _, share in largest_dependencies(edges, sum(sizes))]

    assert shares(996, 4) == [">99%", "<1%"]
    assert shares(985, 15) == ["99%", "2%"]
