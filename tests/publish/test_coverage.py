"""Coverage: the matrices against a brute-force count of the demo's listed specs, the
site's page and the server's API, the bottle table of package pages, escaping."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qs

import msgspec
import pytest

from cachedex.catalog import Catalog
from cachedex.publish.coverage import bottle_table, coverage_page, pivot, target_family
from cachedex.publish.pages import package_page
from cachedex.publish.render import render
from cachedex.publish.serve import create_app
from cachedex.values import human_size
from cachedex.versions import version_key
from tests.helpers import Demo, evil_catalog, listed_specs, record, replace_mirror, write_tag
from tests.publish.conftest import MAIN_OPENS
from tests.publish.serve import get


@pytest.mark.parametrize(
    ("platform", "target", "family"),
    [
        ("linux", "x86_64_v3", "x86_64"),
        ("linux", "zen4", "x86_64"),
        ("linux", "skylake_avx512", "x86_64"),
        ("linux", "neoverse_v1", "aarch64"),
        ("linux", "aarch64", "aarch64"),
        ("linux", "power9le", "ppc64le"),
        ("linux", "power11le", "ppc64le"),  # (unknown to archspec: little-endian POWER by its name)
        ("darwin", "m1", "darwin"),
        ("darwin", "x86_64", "darwin"),
        ("linux", "riscv64", "riscv64"),
        ("windows", "x86_64", "windows x86_64"),
        ("linux", "none", "none"),  # (no family: the target itself)
    ],
)
def test_target_families(platform: str, target: str, family: str) -> None:
    assert target_family(platform, target) == family


@pytest.mark.parametrize(
    ("target", "family"),
    [("power9", "ppc64"), ("i686", "x86"), ("arm", "arm"), ("ampere1", "aarch64"), ("u74mc", "riscv64")],
)
def test_a_target_s_family_is_archspec_s(target: str, family: str) -> None:
    """Names were matched by patterns: i686 and 32-bit arm ran on x86_64 and aarch64,
    and power9, ampere1 or u74mc were each a family of its own."""
    import archspec.cpu

    assert target_family("linux", target) == family
    wrong = {
        name: target_family("linux", name)
        for name, known in archspec.cpu.TARGETS.items()
        if target_family("linux", name) != known.family.name
    }
    assert not wrong


def test_the_matrices_count_every_listed_spec(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for tag in catalog.tag_names():
            page = coverage_page(catalog, tag)
            specs = listed_specs(catalog, tag)
            labels = [f"{a.platform}-{a.os}-{a.target}" for a in page.archs]
            assert labels == sorted(set(labels)) == sorted({f"{s.platform}-{s.os}-{s.target}" for s in specs})
            assert page.stacks[0].name == "root"
            for row in page.stacks:  # brute force: each spec once per stack listing it
                mine = Counter(f"{s.platform}-{s.os}-{s.target}" for s in specs if row.name in s.stacks)
                assert dict(zip(labels, row.counts, strict=True)) == {k: mine.get(k, 0) for k in labels}, row.name
                assert row.total == sum(mine.values())
                known = [s.size for s in specs if row.name in s.stacks and s.size is not None]
                assert (row.size, row.sized) == (sum(known) if known else None, len(known)), row.name
            assert page.stacks[0].total == len(specs)
            families = Counter((s.name, target_family(s.platform, s.target)) for s in specs)
            assert [p.name for p in page.packages] == sorted({s.name for s in specs})
            for row in page.packages:
                assert row.counts == tuple(families[row.name, f] for f in page.families), row.name
                known = [s.size for s in specs if s.name == row.name and s.size is not None]
                assert (row.size, row.sized) == (sum(known) if known else None, len(known)), row.name
            assert any(p.sized for p in page.packages) == any(s.size is not None for s in specs)
            assert sum(p.total for p in page.packages) == len(specs)
        names, rows = pivot(catalog, "develop", "package", "family")
        assert {name: dict(zip(names, counts, strict=True)) for name, counts in rows}["cmake"] == {
            f: n
            for f, n in zip(
                page.families,
                next(p for p in coverage_page(catalog, "develop").packages if p.name == "cmake").counts,
                strict=True,
            )
        } | {f: 0 for f in names if f not in page.families}


@pytest.mark.parametrize(
    ("rows", "columns"), [("os", "target"), ("stack", "arch"), ("version", "family"), ("platform", "stack")]
)
def test_a_pivot_counts_as_the_listed_specs_say(demo_run: Demo, rows: str, columns: str) -> None:
    """Brute force over the demo's develop (a tag with stacks): axes but ``stack`` count
    the whole tag's specs once each (not once more per stack listing them), versions
    newest first, stacks root first, other values by name."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        specs = listed_specs(catalog, "develop")
        names, counted = pivot(catalog, "develop", rows, columns)
        with pytest.raises(ValueError, match="stack cannot be counted with package or version"):
            pivot(catalog, "develop", "stack", "version")
    expected: Counter[tuple[str, str]] = Counter()
    for spec in specs:
        values = {
            "arch": f"{spec.platform}-{spec.os}-{spec.target}",
            "platform": spec.platform,
            "os": spec.os,
            "target": spec.target,
            "family": target_family(spec.platform, spec.target),
            "version": spec.version,
        }
        for stack in spec.stacks if "stack" in (rows, columns) else ("root",):
            values["stack"] = stack
            expected[values[rows], values[columns]] += 1

    def order(axis: str, values: set[str]) -> list[str]:
        if axis == "stack":
            return ["root", *sorted(values - {"root"})]
        if axis == "version":
            return sorted(values, key=version_key, reverse=True)
        return sorted(values)

    assert names == order(columns, {c for _, c in expected})
    assert [row for row, _ in counted] == order(rows, {r for r, _ in expected})
    assert {(row, name): n for row, counts in counted for name, n in zip(names, counts, strict=True) if n} == expected
    assert sum(map(sum, (counts for _, counts in counted))) == sum(expected.values())
    if "stack" not in (rows, columns):
        assert sum(expected.values()) == len(specs)


def test_the_site_and_the_server_show_coverage(demo_run: Demo) -> None:
    site = demo_run.site
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        page = coverage_page(catalog, "develop")
        twin = json.loads((site / "tags/develop/coverage/index.json").read_text())
        assert twin == json.loads(msgspec.json.encode(page))
        specs = listed_specs(catalog, "develop")
    html = (site / "tags/develop/coverage/index.html").read_text()
    assert len(gzip.compress(html.encode())) < 1_000_000
    # a cell leads to the tag page filtered to the specs behind it
    cells = re.findall(r'<a href="\.\./index\.html\?([^"]+)">([0-9,]+)</a>', html)
    assert len(cells) > 20
    for query, count in cells:
        wanted = {k: v[0] for k, v in parse_qs(query.replace("&amp;", "&")).items()}
        behind = [
            s
            for s in specs
            if all(getattr(s, k) == v for k, v in wanted.items() if k != "stack")
            and ("stack" not in wanted or wanted["stack"] in s.stacks)
        ]
        assert len(behind) == int(count.replace(",", "")), wanted
    app = create_app(demo_run.catalog)
    assert get(app, "/api/tags/develop/coverage").json() == twin
    assert get(app, "/tags/develop/coverage/").content == (site / "tags/develop/coverage/index.html").read_bytes()
    # each stack's size, as the pages say a total of sizes (develop's are all known)
    for row in page.stacks:
        assert row.size is not None and f'<td class="num">{human_size(row.size)}</td></tr>' in html, row.name
    assert get(app, "/api/tags/nope/coverage").status_code == 404
    document = get(app, "/api/openapi.json").json()
    assert "/api/tags/{tag}/coverage" in document["paths"] and "CoveragePage" in document["components"]["schemas"]
    assert 'href="coverage/index.html"' in (site / "tags/develop/index.html").read_text()


def test_package_pages_have_a_bottle_table(demo_run: Demo) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        page = package_page(catalog, "develop", "cmake")
        table = bottle_table(page.specs)
        # newest first, in Spack's order (3.31.2 before 3.9.6), as the page lists them
        newest = max({s.version for s in page.specs}, key=version_key)
        assert table.versions[0] == newest and len(table.versions) > 1
        brute = Counter((s.version, f"{s.platform}-{s.os}-{s.target}") for s in page.specs)
        for v, version in enumerate(table.versions):
            for a, arch in enumerate(table.archs):
                assert table.counts[v][a] == brute[version, arch]
    html = (demo_run.site / "tags/develop/packages/cmake/index.html").read_text()
    part = html.split('id="coverage"')[1].split("</details>")[0]
    assert part.count('<tr><th scope="row">') == len(table.versions)
    assert f'<th scope="row">{newest}</th>' in part and part.count("&#10003;") == sum(
        1 for row in table.counts for n in row if n
    )


def test_hostile_names_in_coverage(tmp_path: Path) -> None:
    with evil_catalog(tmp_path / "evil.sqlite") as catalog:
        page = coverage_page(catalog, "t<i>x")
        html = render(page)
        main = html.split(MAIN_OPENS)[1]
        assert "<b>" not in main and "<i>" not in main and "we&#34;ird&#39;&lt;b&gt;name" in main
        assert "../escape" in main and 'href="../packages/..' not in main  # no page, no link
        bottles = render(package_page(catalog, "t<i>x", "we\"ird'<b>name"))
        assert "<b>name" not in bottles and 'id="coverage"' in bottles
    for path in ("/tags/t%3Ci%3Ex/coverage/", "/api/tags/t%3Ci%3Ex/coverage"):
        answer = get(create_app(tmp_path / "evil.sqlite"), path)
        assert answer.status_code == 200 and "<i>" not in answer.text.replace('"t<i>x"', ""), path


def _stacks_catalog(path: Path) -> Catalog:
    """Tag t: root lists two specs, stack full one, stack empty none (it holds one without
    a binary); tag bare: a root that lists nothing."""
    catalog = Catalog(path)
    a, b = record("a" * 32, "zlib"), record("b" * 32, "cmake", target="neoverse_v1")
    with catalog.writing_tag("t") as writer:
        writer.add_specs([a, b], {"a" * 32: 1000})
        replace_mirror(writer, "root", {a.hash: True, b.hash: True})
        replace_mirror(writer, "full", {a.hash: True}, url="/full")
        replace_mirror(writer, "empty", {a.hash: False}, url="/empty")
    with catalog.writing_tag("bare") as writer:
        replace_mirror(writer, "root", {})
    return catalog


def test_a_stack_that_lists_nothing_is_a_row_of_zeros(tmp_path: Path) -> None:
    """A stack whose index lists nothing (and a tag whose root lists nothing) had no row:
    the tag's page counted it among its stacks, its coverage left it out."""
    with _stacks_catalog(tmp_path / "c.sqlite") as catalog:
        page = coverage_page(catalog, "t")
        assert [row.name for row in page.stacks] == ["root", "empty", "full"]
        empty = page.stacks[1]
        assert (empty.counts, empty.total, empty.size, empty.sized) == ((0,) * len(page.archs), 0, None, 0)
        html = render(page)
        row = html.split('<th scope="row">empty</th>')[1].split("</tr>")[0]
        assert '<td class="num">0</td>' in row and "unknown" not in row and "<a " not in row
        bare = coverage_page(catalog, "bare")
        assert [(row.name, row.total) for row in bare.stacks] == [("root", 0)] and not bare.packages
        assert '<th scope="row">whole tag</th><td class="num">0</td>' in render(bare)


def test_the_packages_table_writes_counts_as_the_stacks_table_does(tmp_path: Path) -> None:
    """A package's 1,200 specs of a family were "1200" where the stacks' table says "1,200";
    and the page said each count leads to its specs, where a package's counts lead nowhere."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(f"{n:032x}", "zlib", version=f"1.{n}") for n in range(1200)])
        html = render(coverage_page(catalog, "t"))
    families = html.split('id="packages"')[1]
    assert '<td class="num">1,200</td><td class="num">1,200</td></tr>' in families and "1200" not in families
    cells = families.split('<th scope="row">')[1].split("</th>", 1)[1].split("</tr>")[0]
    assert "Each count leads" not in html and "1,200" in cells and "<a " not in cells


def test_an_empty_cell_of_the_families_table_says_zero(tmp_path: Path) -> None:
    """A package without specs of a family had a blank cell: nothing for a screen reader
    to say, where the stacks' table says "none"."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(
            catalog,
            "t",
            [record("a" * 32, "zlib", target="x86_64_v3"), record("b" * 32, "cmake", target="aarch64")],
        )
        page = coverage_page(catalog, "t")
        html = render(page)
    families = html.split('id="packages"')[1]
    row = families.split('<th scope="row">')[1].split("</tr>")[0]  # cmake's: aarch64 only
    assert row.count('<td class="num muted">0</td>') == len(page.families) - 1, row
    assert '<td class="num"></td>' not in families


def test_the_families_table_puts_the_commonest_family_first(tmp_path: Path) -> None:
    """Its columns go by how many specs each family has, most first (ties by name): the
    families a tag is mostly built for come first, not in the alphabet's order."""
    targets = ["aarch64", "x86_64_v3", "x86_64_v3", "zen4", "power9le", "power9le"]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(f"{n:032x}", "zlib", target=t) for n, t in enumerate(targets)])
        page = coverage_page(catalog, "t")
        html = render(page)
    assert page.families == ("x86_64", "ppc64le", "aarch64")
    families = html.split('id="packages"')[1].split("</tr>")[0]
    assert [families.index(f">{name}<") for name in page.families] == sorted(
        families.index(f">{name}<") for name in page.families
    )
    row = html.split('id="packages"')[1].split(">zlib</a></th>")[1].split("</tr>")[0]
    assert re.findall(r'<td class="num">(\d+)</td>', row) == ["3", "2", "1", "6"]


def test_the_bottle_table_s_columns_are_sorted_whatever_order_the_specs_come_in(tmp_path: Path) -> None:
    """A package page's version x arch table had its archs in the order of its specs: two
    pages (or one page after a sync) would put the same columns in other orders."""
    archs = [("ubuntu24.04", "x86_64_v3"), ("rhel8", "x86_64_v3"), ("ubuntu24.04", "aarch64")]
    specs = [record(f"{n:032x}", "zlib", os=os, target=target) for n, (os, target) in enumerate(archs)]
    expected = ("linux-rhel8-x86_64_v3", "linux-ubuntu24.04-aarch64", "linux-ubuntu24.04-x86_64_v3")
    for order in (specs, specs[::-1], specs[1:] + specs[:1]):
        table = bottle_table(order)
        assert table.archs == expected and table.counts == ((1, 1, 1),)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", specs)
        html = render(package_page(catalog, "t", "zlib"))
    head = html.split('id="coverage"')[1].split("</tr>")[0]
    assert [head.index(arch) for arch in expected] == sorted(head.index(arch) for arch in expected)
