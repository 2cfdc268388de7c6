"""What publishers' whole-catalog reads (catalog/bulk.py) give of what syncs wrote:
shares of a tag's packages, listings narrowed as asked, tags in order, specs' columns."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from tests.helpers import record, replace_mirror

NAMES = ["zlib", "hdf5", "cmake", "openmpi", "py-numpy", "gcc", "xz", "bzip2", "curl"]
HASHES = {name: f"{n:032x}".replace("0", "h") for n, name in enumerate(NAMES)}


def _catalog(tmp_path: Path) -> Catalog:
    """Tag 'zz' written first (its mirrors' ids lowest), then 'aa': both roots list every
    package; zz's stack 's1' lists zlib and hdf5, aa's stack 's2' lists cmake and zlib."""
    catalog = Catalog(tmp_path / "c.sqlite")
    with catalog.writing_tag("zz") as writer:
        writer.add_specs([record(h, name, os="rhel8", target="zen4") for name, h in HASHES.items()], {})
        replace_mirror(writer, "root", dict.fromkeys(HASHES.values(), True))
        replace_mirror(writer, "s1", {HASHES["zlib"]: True, HASHES["hdf5"]: True})
    with catalog.writing_tag("aa") as writer:
        replace_mirror(writer, "root", dict.fromkeys(HASHES.values(), True), url="/aa")
        replace_mirror(writer, "s2", {HASHES["cmake"]: True, HASHES["zlib"]: True}, url="/aa/s2")
    return catalog


def test_two_shares_of_a_tag_hold_every_package_once(tmp_path: Path) -> None:
    """``--parts 2``: each package in exactly one share, together the whole tag."""
    with _catalog(tmp_path) as catalog:
        shares = [[r.name for r in catalog.listed_rows("zz", part=n, parts=2)] for n in range(2)]
        assert sorted(shares[0] + shares[1]) == sorted(NAMES)


def test_root_listing_tags_come_in_tag_order_for_the_ids_asked(tmp_path: Path) -> None:
    with _catalog(tmp_path) as catalog:
        zlib = catalog.spec_ids([HASHES["zlib"]])[HASHES["zlib"]]
        # 'aa' was written after 'zz': its order is the tags', not the writes'.
        assert list(catalog.root_listing_tags([zlib])) == [(zlib, "aa"), (zlib, "zz")]


def test_stack_listings_narrowed_by_tag_stack_and_package(tmp_path: Path) -> None:
    with _catalog(tmp_path) as catalog:
        by_id = {v: k for k, v in catalog.spec_ids(HASHES.values()).items()}
        names = {h: name for name, h in HASHES.items()}

        def listed(**scope: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
            mirrors, rows = catalog.stack_listings(**scope)  # type: ignore[arg-type]
            return sorted(mirrors.values()), sorted((names[by_id[s]], mirrors[m][1]) for s, m in rows)

        assert listed(tags=["aa"]) == ([("aa", "s2")], [("cmake", "s2"), ("zlib", "s2")])
        assert listed(stacks=["s1"]) == ([("zz", "s1")], [("hdf5", "s1"), ("zlib", "s1")])
        assert listed(packages=["zlib"]) == ([("aa", "s2"), ("zz", "s1")], [("zlib", "s1"), ("zlib", "s2")])


def test_spec_nodes_give_each_spec_s_os_and_target_in_their_places(tmp_path: Path) -> None:
    with _catalog(tmp_path) as catalog:
        zlib = catalog.spec_ids([HASHES["zlib"]])[HASHES["zlib"]]
        ((_, dag_hash, name, _, _, platform, os, target, _, _),) = catalog.spec_nodes([zlib])
        assert (dag_hash, name, platform, os, target) == (HASHES["zlib"], "zlib", "linux", "rhel8", "zen4")
