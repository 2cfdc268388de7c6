"""A spec page's edge lists: each item made once per edge object, and the dependents list
the same text as with every value escaped."""

from __future__ import annotations

import html
import itertools
import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import escape

from cachedex.catalog import Catalog, Edge, SpecConfig
from cachedex.cli import main
from cachedex.publish import edge_lists, spec_pages
from cachedex.publish.graph import SpecGraph
from cachedex.publish.pages import spec_page
from cachedex.publish.render import render
from cachedex.publish.serve import create_app
from cachedex.publish.site import write_site
from cachedex.publish.urls import spec_url
from cachedex.values import Dependency
from tests.helpers import record, write_tag
from tests.publish.serve import get


def test_edge_items_stay_right_past_the_cache_limit() -> None:
    items = edge_lists.EdgeItems()
    items.LIMIT = 5
    root = "../../"
    shown = []
    for round_ in range(6):
        # New objects each round, freed after it: an id may come back for another edge.
        edges = [Edge(f"{round_:02d}{n:030d}", f"p{round_}-{n}", "1.0", n % 2 == 0, None) for n in range(3)]
        got = items(edges, root)
        assert got == [edge_lists.edge_item(edge, root) for edge in edges]
        assert items(edges, root) == got and items(edges, "../") == [edge_lists.edge_item(e, "../") for e in edges]
        shown.extend(got)
        assert len(items.edges) <= items.LIMIT
    assert len(set(shown)) == 18


def _dependents_escaping_all(edges: list[Edge], root: str, json_href: str) -> str:
    """The dependents list as it was written before its fast paths: every value escaped."""
    items = []
    for name, group in itertools.groupby(edges, key=lambda edge: edge.name):
        links = [
            f'<a href="{html.escape(root)}{html.escape(spec_url(e.hash))}">{html.escape(e.version)}</a>'
            f" <code>/{html.escape(e.hash[:7])}</code>"
            + (f' <span class="tag">{html.escape(e.virtuals)}</span>' if e.virtuals else "")
            for e in group
        ]
        items.append(f"<li><strong>{escape(name)}</strong> ({len(links)}): {', '.join(links)}</li>")
    return '<ul class="edges grouped">\n' + "\n".join(items) + "\n</ul>"


_TEXT = st.text(alphabet=st.sampled_from("ab1.-_+<>&\"' /é"), max_size=8)
_HASH = st.one_of(st.text(alphabet="abcdefghijklmnopqrstuvwxyz234567", min_size=32, max_size=32), _TEXT)


@given(
    st.lists(st.tuples(_HASH, st.sampled_from(["zlib", "a<b", "c&d"]), _TEXT, st.sampled_from(["", "mpi", "x<y"]))),
    st.sampled_from(["../../", "/", '/pre"fix&/']),
)
def test_dependents_list_escapes_as_every_value_escaped(found: list[tuple[str, str, str, str]], root: str) -> None:
    edges = sorted(
        (Edge(h, name, version, True, None, 2, virtuals) for h, name, version, virtuals in found), key=lambda e: e.name
    )
    for cache in (None, edge_lists.EdgeItems()):
        got = str(edge_lists.dependents(edges, root, "x.json", cache))
        assert got == (
            _dependents_escaping_all(edges, root, "x.json")
            if edges
            else '<ul class="edges">\n<li class="muted">none</li>\n</ul>'
        )


def _told_catalog(path: Path) -> Catalog:
    """zlib with cached dependents: three adios2@2.10.2 (two built by gcc, one of them
    +mpi, one by oneAPI, all for one target), one cmake, one py-numpy for each of two
    targets, and two hdf5 of two versions (by two compilers)."""
    zlib = record("z" * 32, "zlib")
    on_zlib = (Dependency("z" * 32, "zlib", 6, ""),)
    builds = [
        ("a", "adios2", "gcc@11.4.0", "x86_64_v3"),
        ("b", "adios2", "intel-oneapi-compilers@2025.1.0", "x86_64_v3"),
        ("c", "adios2", "gcc@11.4.0", "x86_64_v3"),
        ("d", "cmake", "gcc@11.4.0", "x86_64_v3"),
        ("e", "py-numpy", "gcc@11.4.0", "zen4"),
        ("f", "py-numpy", "gcc@11.4.0", "neoverse_v2"),
        ("g", "hdf5", "gcc@11.4.0", "x86_64_v3"),
        ("h", "hdf5", "intel-oneapi-compilers@2025.1.0", "x86_64_v3"),
    ]
    records = [
        record(
            letter * 32,
            name,
            version="1.14.6" if letter == "h" else "2.10.2",
            compiler=compiler,
            target=target,
            variants=("+shared", "+mpi") if letter == "c" else ("+shared",),
            dependencies=on_zlib,
        )
        for letter, name, compiler, target in builds
    ]
    catalog = Catalog(path)
    write_tag(catalog, "t", [zlib, *records])
    return catalog


def _told(text: str) -> dict[str, list[str]]:
    """Each dependent's short hash -> its label, from a list's HTML."""
    found: dict[str, list[str]] = {}
    for short, label in re.findall(r'<code>/(\w+)</code>(?: <span class="told">([^<]*)</span>)?', text):
        found.setdefault(short, []).append(html.unescape(label))
    return found


def test_dependents_of_one_package_are_told_apart_by_what_differs(tmp_path: Path) -> None:
    """Dependents of one package and version are labelled with the variants not all
    of them have and those of their compiler, OS and target that differ between them (the UX review: three
    adios2@2.10.2 told apart by their hashes alone); a package listed once, or whose
    versions differ, is labelled with nothing. The live page, a site's page and
    ``cachedex show`` say the same."""
    with _told_catalog(tmp_path / "c.sqlite") as catalog:
        page = spec_page(catalog, "z" * 32)
        assert [e.name for e in page.dependents] == ["adios2"] * 3 + ["cmake"] + ["hdf5"] * 2 + ["py-numpy"] * 2
        expected = {
            "aaaaaaa": ["%gcc@11.4.0"],
            "bbbbbbb": ["%intel-oneapi-compilers@2025.1.0"],
            "ccccccc": ["+mpi %gcc@11.4.0"],
            "ddddddd": [""],
            "ggggggg": [""],  # (their versions tell them apart)
            "hhhhhhh": [""],
            "eeeeeee": ["target=zen4"],
            "fffffff": ["target=neoverse_v2"],
        }
        live = get(create_app(tmp_path / "c.sqlite"), "/specs/zz/" + "z" * 32 + ".html").text
        assert _told(live[live.index("Cached dependents") :]) == expected
        bare = render(page)  # (no configs: nothing told)
        assert _told(bare[bare.index("Cached dependents") :]) == dict.fromkeys(expected, [""])
        spec_id = SpecGraph(catalog).ids["z" * 32]
        partial = SpecGraph(catalog, [spec_id])  # as a build after a sync reads it
        made = render(partial.page(spec_id, "{}"), configs=partial.configs(catalog))
        assert _told(made[made.index("Cached dependents") :]) == expected
        write_site(catalog, tmp_path / "site", workers=1)  # the whole graph's pages
        built = (tmp_path / "site" / "specs" / "zz" / ("z" * 32 + ".html")).read_text()
        assert _told(built[built.index("Cached dependents") :]) == expected
    result = CliRunner().invoke(main, ["--config", str(_config(tmp_path)), "show", "z" * 32])
    assert result.exit_code == 0, result.output
    assert (
        "cached dependents: adios2@2.10.2 %gcc@11.4.0 /aaaaaaa, adios2@2.10.2 %intel-oneapi-compilers@2025.1.0 "
        "/bbbbbbb, adios2@2.10.2 +mpi %gcc@11.4.0 /ccccccc, cmake@2.10.2 /ddddddd, hdf5@1.14.6 /hhhhhhh, "
        "hdf5@2.10.2 /ggggggg, py-numpy@2.10.2 target=zen4 /eeeeeee, "
        "py-numpy@2.10.2 target=neoverse_v2 /fffffff"
    ) in " ".join(result.output.split())


def test_builds_that_differ_in_their_fortran_compiler_alone_are_told_apart(tmp_path: Path) -> None:
    """Two netlib-lapack@3.12.0 that apple-clang built for C, one with gcc@13's
    gfortran and one with gcc@14's: a spec page listed them among its dependents with no
    label, though their search results and package page tell them apart (a hunt)."""
    darwin = {"platform": "darwin", "os": "sequoia", "target": "m1"}
    build = 1  # (deptypes: build)
    compilers = [
        record(letter * 32, "gcc", version=version, compiler="none", external=True, in_buildcache=False, **darwin)
        for letter, version in (("p", "13.3.0"), ("q", "14.2.0"))
    ]
    clang = record("r" * 32, "apple-clang", version="16.0.0", compiler="none", external=True, in_buildcache=False)
    zlib = record("z" * 32, "zlib", **darwin)
    lapacks = [
        record(
            letter * 32,
            "netlib-lapack",
            version="3.12.0",
            compiler="apple-clang@16.0.0",
            dependencies=(
                Dependency("z" * 32, "zlib", 6, ""),
                Dependency("r" * 32, "apple-clang", build, "c,cxx"),
                Dependency(gcc * 32, "gcc", build, "fortran"),
            ),
            **darwin,
        )
        for letter, gcc in (("a", "p"), ("b", "q"))
    ]
    expected = {"aaaaaaa": ["%apple-clang@16.0.0 +gcc@13.3.0"], "bbbbbbb": ["%apple-clang@16.0.0 +gcc@14.2.0"]}
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [*compilers, clang, zlib, *lapacks])
        live = get(create_app(tmp_path / "c.sqlite"), "/specs/zz/" + "z" * 32 + ".html").text
        assert _told(live[live.index("Cached dependents") :]) == expected
        spec_id = SpecGraph(catalog).ids["z" * 32]
        partial = SpecGraph(catalog, [spec_id])  # as a build after a sync reads it
        made = render(partial.page(spec_id, "{}"), configs=partial.configs(catalog))
        assert _told(made[made.index("Cached dependents") :]) == expected


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "cachedex.yaml"
    config.write_text("catalog: c.sqlite\ntags:\n  - name: t\n    url: /nowhere\n")
    return config


def test_a_spec_page_names_its_largest_dependencies(tmp_path: Path) -> None:
    """Under "N to download", the binaries that make it big, largest first, with their
    share of it; not those without a binary or a known size. The site's page and
    ``cachedex show`` name the same."""
    link = 6
    deps = {"a": 500_000_000, "b": 300_000_000, "c": 1_000, "d": 900_000_000, "e": None}
    records = [record(letter * 32, f"dep-{letter}", version="1.0") for letter in deps]
    top = record("t" * 32, "top", dependencies=tuple(Dependency(r.hash, r.name, link, "") for r in records))
    sizes = {r.hash: size for r, size in zip(records, deps.values(), strict=True) if size is not None}
    with Catalog(tmp_path / "c.sqlite") as catalog:
        members = {r.hash: r.name != "dep-d" for r in [*records, top]}  # d: no binary (its size known)
        write_tag(catalog, "t", [*records, top], members=members, sizes={**sizes, top.hash: 200_000_000})
        page = spec_page(catalog, top.hash)
        assert page.closure_size == 1_000_001_000
        largest = spec_pages.largest_dependencies(page.closure, page.closure_size)
        assert [(e.name, share) for e, share in largest] == [("dep-a", "50%"), ("dep-b", "30%"), ("dep-c", "<1%")]
        write_site(catalog, tmp_path / "site", workers=1)
        built = (tmp_path / "site" / "specs" / "tt" / ("t" * 32 + ".html")).read_text()
        listed = built[built.index("Largest dependencies") : built.index("</ol>")]
        assert re.findall(r'>(dep-\w)@1.0</a> ([^<]*) <span class="muted">\(([^<]*)\)</span>', listed) == [
            ("dep-a", "500.0 MB", "50%"),
            ("dep-b", "300.0 MB", "30%"),
            ("dep-c", "1.0 kB", "&lt;1%"),  # (escaped: the page's text reads "<1%")
        ]
        single = spec_page(catalog, records[0].hash)  # no dependency: nothing to name
        assert "Largest dependencies" not in render(single)
    result = CliRunner().invoke(main, ["--config", str(_config(tmp_path)), "show", top.hash])
    assert "largest dependencies: dep-a@1.0 500.0 MB (50%), dep-b@1.0 300.0 MB (30%), dep-c@1.0 1.0 kB (<1%)" in (
        " ".join(result.output.split())
    )


_BUILD = st.tuples(
    st.frozensets(st.sampled_from(["+mpi", "~mpi", "+cuda", "cuda_arch=80", "build_type=Release"]), max_size=3),
    st.sampled_from(["gcc@11.4.0", "gcc@13.2.0", "oneapi@2025.1.0", "none"]),
    st.sampled_from(["ubuntu22.04", "rhel8"]),
    st.sampled_from(["x86_64_v3", "zen4", "aarch64"]),
)


@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["1.0", "2.0"]), _BUILD), max_size=12))
def test_labels_tell_apart_exactly_the_builds_that_differ(found: list[tuple[str, str, tuple[Any, ...]]]) -> None:
    """Among dependents of one package and version, two builds get the same label
    exactly when they are the same build (one built by no compiler without "%none");
    a dependent whose package and version are listed once gets none; ``configs`` is
    asked only for those listed beside another."""
    ordered = sorted(found, key=lambda f: (f[0], f[1]))
    edges = [Edge(f"{n:032d}", name, version, True, None) for n, (name, version, _) in enumerate(ordered)]
    builds = {
        edge.hash: SpecConfig(edge.hash, json.dumps(sorted(variants)), compiler, os, target)
        for edge, (_, _, (variants, compiler, os, target)) in zip(edges, ordered, strict=True)
    }
    asked: list[list[str]] = []

    def configs(hashes: Collection[str]) -> dict[str, SpecConfig]:
        asked.append(list(hashes))
        return {h: builds[h] for h in hashes}

    told = edge_lists.told_apart(edges, configs)
    assert not any("%none" in label for label in told)  # (built by no compiler: said by the others')
    runs = [
        [n for n, e in enumerate(edges) if (e.name, e.version) == key] for key in {(e.name, e.version) for e in edges}
    ]
    for run in runs:
        if len(run) == 1:
            assert told[run[0]] == ""
        for n in run:
            for m in run:
                same = builds[edges[n].hash][1:] == builds[edges[m].hash][1:]
                assert (told[n] == told[m]) == same, (told[n], told[m])
    beside = {edges[n].hash for run in runs if len(run) > 1 for n in run}
    assert [sorted(call) for call in asked] == ([sorted(beside)] if beside else [])


def test_a_dependency_no_mirror_holds_is_named_not_linked_in_a_site(tmp_path: Path) -> None:
    """A mirror that dropped a dependency's record while its dependents stay: the site
    has no page for it (it writes those of the hashes some mirror holds), and each
    dependent's page linked to it (a full build too; a fresh catalog never had it)."""
    from cachedex.values import Dependency
    from tests.helpers import record, write_tag

    gone = record("b" * 32, "libgone")
    user = record("a" * 32, "app", dependencies=(Dependency(gone.hash, "libgone", 2, ""),))
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [user, gone], members={user.hash: True})
        write_site(catalog, tmp_path / "site")
    page = (tmp_path / "site" / "specs" / "aa" / f"{user.hash}.html").read_text()
    assert "libgone@1.3.1" in page and f"{gone.hash}.html" not in page
    assert not (tmp_path / "site" / "specs" / "bb" / f"{gone.hash}.html").exists()


def test_a_deep_chain_s_pages_list_a_bounded_closure_with_its_whole_counts(tmp_path: Path) -> None:
    """A chain of specs, each depending on the next: each twin listed its whole closure,
    and a 1.8 MB index of 10,000 made a 7.4 GB site. A twin lists the first CLOSURE_LISTED
    by name, and the largest binaries past them; counts and sizes are the whole closure's."""
    from cachedex.values import Dependency

    depth = spec_pages.CLOSURE_LISTED + 200
    chain = [
        record(
            f"{n:032d}",
            f"p{n:05d}",
            dependencies=(Dependency(f"{n + 1:032d}", f"p{n + 1:05d}", 2, ""),) if n + 1 < depth else (),
        )
        for n in range(depth)
    ]
    sizes = {r.hash: 1_000 + n for n, r in enumerate(chain)}  # the deepest the largest
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", chain, sizes=sizes)
        write_site(catalog, tmp_path / "site")
        full = [e for e in catalog.closure(chain[0].hash) if e.hash != chain[0].hash]
    top = chain[0].hash
    twin = json.loads((tmp_path / "site" / "specs" / top[:2] / f"{top}.json").read_bytes())
    assert twin["closure_count"] == len(full) == depth - 1
    assert twin["closure_size"] == sum(sizes.values())
    listed = [e["hash"] for e in twin["closure"]]
    largest = [e.hash for e, _ in spec_pages.largest_dependencies(full, sum(sizes.values()))]
    assert listed[: spec_pages.CLOSURE_LISTED] == [e.hash for e in full][: spec_pages.CLOSURE_LISTED]
    assert set(largest) <= set(listed) and len(listed) <= spec_pages.CLOSURE_LISTED + len(largest)
    page = (tmp_path / "site" / "specs" / top[:2] / f"{top}.html").read_text()
    assert f"transitively ({depth - 1:,})" in page and f"which lists the first {spec_pages.CLOSURE_LISTED:,}" in page
    assert all(f"{h}.html" in page for h in largest)  # the largest, named and linked


def test_an_edge_item_says_its_kind_and_size_or_that_no_binary_is_cached() -> None:
    listed = Edge("a" * 32, "zlib", "1.3", True, 2_000_000, deptypes=1)
    unlisted = Edge("b" * 32, "gcc", "13.2.0", False, None, deptypes=1 | 2, virtuals="c,cxx")
    item = edge_lists.edge_item(listed, "../../")
    assert '<span class="tag">build</span>' in item and '<span class="size">2.0 MB</span>' in item
    assert "no binary" not in item
    item = edge_lists.edge_item(unlisted, "../../")
    assert "no binary" in item and 'class="size"' not in item
    assert '<span class="tag">c,cxx</span>' in item and "build" not in item  # (link too: no kind said)
    kinds = {bits: edge_lists.edge_item(Edge("c" * 32, "x", "1", True, 1, deptypes=bits), "") for bits in (2, 4, 8, 9)}
    assert ['class="tag">' in kinds[bits] for bits in (2, 4)] == [False, False]
    assert '<span class="tag">test</span>' in kinds[8] and '<span class="tag">build</span>' in kinds[9]


def test_a_list_of_edge_rows_says_nothing_more_and_one_more_says_one() -> None:
    edges = [Edge(f"{n:032d}", f"p{n}", "1", True, 1) for n in range(edge_lists.EDGE_ROWS + 1)]
    assert edge_lists._more(edges[:-1], "x.json") == ""
    assert "&hellip; and 1 more: see" in edge_lists._more(edges, "x.json")
