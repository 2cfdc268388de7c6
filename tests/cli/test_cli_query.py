"""search, show and diff through the real entry point, over the demo's catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.query import parse, variants_satisfy
from cachedex.versions import version_key, version_satisfies
from tests.helpers import Demo, compilers_of, history, in_result_order, listed_specs, spack_target_satisfies


@pytest.fixture(scope="module")
def demo(demo_run: Demo) -> Path:
    return demo_run.folder


def run(demo: Path, *args: str) -> tuple[int, str]:
    """Exit status and output (with --json, standard output alone: hints go to stderr)."""
    result = CliRunner().invoke(main, ["--config", str(demo / "cachedex.yaml"), *args])
    return result.exit_code, result.stdout if "--json" in args else result.output


def brute_force(catalog: Catalog, tag: str, text: str) -> set[str]:
    """The same question answered by walking every listed spec in Python."""
    q = parse(text)
    found = set()
    compilers = compilers_of(catalog)

    def compiler_ok(compiler: str) -> bool:  # (any of its C, C++ and Fortran compilers)
        name, _, version = compiler.partition("@")
        return (q.compiler is None or name == q.compiler) and (
            not q.compiler_versions or version_satisfies(version, q.compiler_versions)
        )

    for s in listed_specs(catalog, tag):
        if (
            (q.name is None or s.name == q.name)
            and (not q.versions or version_satisfies(s.version, q.versions))
            and (q.target is None or spack_target_satisfies(s.target, q.target))
            and (q.os is None or s.os == q.os)
            and (q.platform is None or s.platform == q.platform)
            and any(map(compiler_ok, compilers[s.hash]))
            and (q.hash_prefix is None or s.hash.startswith(q.hash_prefix))
            and variants_satisfy(s.variants, q)
        ):
            found.add(s.hash)
    return found


QUERIES = [
    "zlib",
    "hdf5+mpi",
    "target=aarch64:",
    "target=x86_64:",
    "%gcc@11",
    "%gcc@12:",
    "py-numpy@2:",
    "build_system=cmake os=ubuntu22.04",
    "cuda_arch=80",
    "+shared ~ipo",
    "arch=darwin-sequoia-m1",
    "openmpi fabrics=none",
    "/a",
    "%gcc",
    "os=ubuntu24.04 target=x86_64_v3",
    "platform=darwin",
    "target=aarch64: %llvm",
    "target=:zen4",
    "zlib target=:x86_64_v3",
    "target=x86_64_v3:zen4,m1",
    "arch=linux-ubuntu24.04-:neoverse_v1",
]


@pytest.mark.parametrize(
    "query", ["target=x86_64:", "target=:zen4", "os=ubuntu22.04 %gcc", "platform=linux", "os=rhel8"]
)
def test_facet_queries_page_and_count_like_the_sql_path(demo: Path, query: str) -> None:
    # Facet-only queries are answered by the in-memory facet index, not SQL: in every
    # scope (each stack too), the count, the matches, their order and every page of
    # them must be what a brute-force walk and the result order say.
    with Catalog(demo / "cachedex.sqlite", readonly=True) as catalog:
        stacks = [m.stack for m in catalog.mirrors("develop")]
        for stack in [None, *stacks]:
            expected = brute_force(catalog, "develop", query)
            if stack not in (None, "root"):
                expected = {
                    h for h in expected if stack in catalog.search(parse("/" + h), tag="develop").specs[0].stacks
                }
            whole = catalog.search(parse(query), tag="develop", stack=stack, limit=100_000)
            assert whole.total == len(whole.specs) == len(expected) and {s.hash for s in whole.specs} == expected
            assert list(whole.specs) == in_result_order(whole.specs)
            pages = [
                catalog.search(parse(query), tag="develop", stack=stack, limit=7, offset=n).specs
                for n in range(0, whole.total + 7, 7)
            ]
            assert [s.hash for page in pages for s in page] == [s.hash for s in whole.specs], stack


@pytest.mark.parametrize("query", QUERIES)
def test_search_agrees_with_a_brute_force_walk(demo: Path, query: str) -> None:
    code, output = run(demo, "search", query, "--tag", "develop", "--json", "--limit", "100000")
    assert code == 0, output
    rows = json.loads(output)
    with Catalog(demo / "cachedex.sqlite", readonly=True) as catalog:
        expected = brute_force(catalog, "develop", query)
    assert {r["hash"] for r in rows} == expected and len(rows) == len(expected)
    assert all(r["arch"] == f"{r['platform']}-{r['os']}-{r['target']}" and "root" in r["stacks"] for r in rows)


def test_queries_that_name_an_indexed_field_use_an_index(demo: Path) -> None:
    with Catalog(demo / "cachedex.sqlite", readonly=True) as catalog:
        for query, index in [
            ("zlib", "specs_name"),
            ("/ab", "specs_hash"),
            ("target=zen4 +mpi", "variant and version index"),
            ("os=rhel8 +mpi", "variant and version index"),
            ("@1: %gcc@13", "variant and version index"),
            ("zlib target=zen4", "specs_name"),
            ("target=zen4", "facet index"),
            ("os=rhel8 %gcc@13", "facet index"),
        ]:
            plan = catalog.explain_search(parse(query), tag="develop")
            assert any(index in str(line) for line in plan), (query, plan)


def test_search_table_limit_stack_and_errors(demo: Path) -> None:
    code, output = run(demo, "search", "zlib", "--limit", "1")
    assert code == 0 and "specs match (showing 1)" in output and "zlib@" in output
    code, output = run(demo, "search", "/" + json.loads(run(demo, "search", "zlib", "--json")[1])[0]["hash"])
    assert code == 0 and "1 spec matches" in output  # (not "1 specs match")
    code, output = run(demo, "search", "zlib", "--tag", "develop", "--stack", "e4s", "--json")
    assert code == 0 and all("e4s" in r["stacks"] for r in json.loads(output))
    code, output = run(demo, "search", "zlib +mpi@")
    assert code == 1 and "bad query" in output and "^" in output
    code, output = run(demo, "search", "zlib", "--tag", "nope")
    assert code == 1 and "no tag 'nope' in the catalog (tags: develop, " in output


def test_search_table_shows_the_variants_that_differ(demo: Path) -> None:
    """Each row repeated a package's every variant (20 for hdf5): the table shows those
    that tell its specs apart, and a line says the ones they share, as the pages do."""
    code, found = run(demo, "search", "hwloc", "--tag", "develop", "--json")
    specs = json.loads(found)
    every = set(specs[0]["variants"]).intersection(*(spec["variants"] for spec in specs[1:]))
    assert every and len(specs) > 1
    code, output = run(demo, "search", "hwloc", "--tag", "develop")
    assert code == 0
    table = [line for line in output.splitlines() if line.startswith("│")]
    assert len(table) == len(specs)
    for spec in specs:
        (row,) = [line for line in table if spec["hash"][:7] in line]
        cells = [cell.strip() for cell in row.split("│")]
        assert cells[5] == " ".join(v for v in spec["variants"] if v not in every)  # e.g. +cuda
    shared = " ".join(v for v in specs[0]["variants"] if v in every)
    assert f"hwloc: the same in each of its specs above: {shared}" in " ".join(output.split())
    # None differs: no variants column at all, the line alone
    code, output = run(demo, "search", "hdf5", "--tag", "develop")
    assert "variants" not in output.splitlines()[2] and "hdf5: the same in each of its specs above: " in output


def test_show_a_spec_and_a_package(demo: Path) -> None:
    code, output = run(demo, "search", "hdf5", "--tag", "develop", "--json", "--limit", "1")
    spec = json.loads(output)[0]
    code, output = run(demo, "show", "/" + spec["hash"][:8])
    assert code == 0, output
    assert f"spack install --cache-only /{spec['hash']}" in output and "cmake@" in output
    assert "\n  binary in develop: root" in output  # (a listed spec: its mirrors hold its binary)
    code, output = run(demo, "show", spec["hash"], "--json")
    page = json.loads(output)
    assert page["spec"]["hash"] == spec["hash"] and page["closure_size"] >= (spec["size"] or 0)
    assert {d["name"] for d in page["dependencies"]} >= {"cmake"}
    code, output = run(demo, "show", "hdf5", "--tag", "develop", "--json")
    (package,) = json.loads(output)
    assert package["name"] == "hdf5" and len(package["specs"]) == package["facets"]["stack"]["root"]
    code, output = run(demo, "show", "no-such-package")
    assert code == 1 and "no tag lists a package 'no-such-package'" in output
    # every tag, as people look for them: develop, its snapshots newest first, releases
    code, output = run(demo, "show", "zlib-ng", "--json")
    assert [p["tag"] for p in json.loads(output)] == ["develop", "develop-2026-11-08", "develop-2026-11-01", "v1.0.2"]


def test_show_names_a_specs_other_compilers(demo: Path) -> None:
    """The demo's darwin netlib-lapack (apple-clang for C, gcc for Fortran): ``show``
    said apple-clang alone, where its search's table and its pages say both."""
    code, output = run(demo, "search", "netlib-lapack platform=darwin", "--tag", "develop", "--json")
    (spec,) = json.loads(output)
    (other,) = spec["other_compilers"]
    code, output = run(demo, "show", spec["hash"])
    assert code == 0 and f"  compiler {spec['compiler']} +{other}  arch darwin-" in output, output


def test_search_results_come_newest_version_first(demo: Path) -> None:
    """By name, then Spack's version order, newest first, as package pages list them
    (a text sort puts 11.4.0 before 7.3.1, and 2.11.1 before 2.9.1 only by luck)."""
    code, output = run(demo, "search", "gcc-runtime", "--tag", "develop", "--json", "--limit", "1000")
    whole = json.loads(output)
    assert list(dict.fromkeys(r["version"] for r in whole)) == [
        "14.2.0",
        "13.3.0",
        "12.3.0",
        "11.4.0",
        "8.5.0",
        "7.3.1",
    ]
    code, output = run(demo, "search", "gcc-runtime", "--tag", "develop", "--json", "--limit", "2", "--offset", "2")
    assert [r["hash"] for r in json.loads(output)] == [r["hash"] for r in whole[2:4]]
    # Answered by the facet index, not SQL: the same order.
    code, output = run(demo, "search", "platform=linux", "--tag", "develop", "--json", "--limit", "1000")
    hwloc = [r["version"] for r in json.loads(output) if r["name"] == "hwloc"]
    assert hwloc[0] == "2.11.1" and hwloc == sorted(hwloc, key=version_key, reverse=True)


def test_show_a_package_in_words(demo: Path) -> None:
    """Versions newest first in Spack's order (2.11.1 before 2.9.1, which a text sort
    reverses), counts in the right number, and no empty facet line."""
    code, output = run(demo, "show", "hwloc", "--tag", "develop")
    assert code == 0, output
    assert "hwloc in develop: 8 specs, " in output and "; versions 2.11.1, 2.9.1\n" in output
    # The facets that tell its specs apart, each a line; not the page's filter of some
    # 60 machines the specs run on, which is no summary.
    facets = [line.split(":")[0].strip() for line in output.splitlines()[1:]]
    assert facets == ["stack", "os", "target", "compiler", "platform", "variant"], output
    code, output = run(demo, "show", "hdf5", "--tag", "develop")
    assert not any(line.endswith(": ") for line in output.splitlines())
    # Variants that no spec tells apart: which they are, as every spec has them.
    code, found = run(demo, "search", "hdf5", "--tag", "develop", "--json")
    (variants,) = {" ".join(spec["variants"]) for spec in json.loads(found)}
    assert f"variant: the same in every spec: {variants} " in " ".join(output.split()) + " "
    code, output = run(demo, "show", "zlib", "--tag", "develop-2026-11-01")
    assert "zlib in develop-2026-11-01: 1 spec, sizes unknown; version 1.2.13" in output
    assert "  variant: build_system=makefile +optimize +pic +shared\n" in output


def test_show_any_record_the_site_has_a_page_for(demo: Path) -> None:
    """A dependency held without a binary, and a spec that left every tag, are shown
    by their hash as the site and the API show them, not refused as unknown."""
    code, output = run(demo, "search", "hdf5", "--tag", "develop", "--json", "--limit", "1")
    spec = json.loads(output)[0]
    page = json.loads(run(demo, "show", spec["hash"], "--json")[1])
    (unlisted, *_) = [d for d in page["dependencies"] if not d.get("listed", True)]
    for what in ("/" + unlisted["hash"][:7], unlisted["hash"][:7], unlisted["hash"]):
        code, output = run(demo, "show", what)
        assert code == 0, output
        assert output.startswith(f"{unlisted['name']}@{unlisted['version']} /{unlisted['hash']}")
        assert "\n  no binary in develop: root" in output and "size unknown" in output
        assert "binary in develop" not in output.replace("no binary in develop", "")  # no mirror holds it
    with Catalog(demo / "cachedex.sqlite") as catalog:
        gone = next(h for h in catalog.hashes_starting("", limit=100_000) if not catalog.holders(h))
    code, output = run(demo, "show", "/" + gone[:8])
    assert code == 0, output
    assert "held by no mirror now" in output
    code, output = run(demo, "show", "/" + gone[:8] + "9")
    assert code == 1 and "no spec with a hash starting with" in output


def test_show_counts_many_dependents_by_package(demo: Path) -> None:
    """A core library's dependents are counted per package, not printed one by one."""
    code, output = run(demo, "search", "zlib-ng", "--tag", "develop", "--json")
    hub = max(json.loads(output), key=lambda s: len(s["stacks"]))
    page = json.loads(run(demo, "show", hub["hash"], "--json")[1])
    assert len(page["dependents"]) > 10
    code, output = run(demo, "show", hub["hash"])
    (line,) = [line for line in output.splitlines() if line.startswith("cached dependents: ")]
    packages = {d["name"] for d in page["dependents"]}
    assert line.startswith(f"cached dependents: {len(page['dependents']):,} specs of {len(packages):,} packages: ")
    assert "/" + page["dependents"][-1]["hash"][:7] not in line


def test_diff_two_tags_and_since_a_date(demo: Path) -> None:
    code, output = run(demo, "diff", "develop-2026-11-08", "develop", "--json")
    assert code == 0, output
    diff = json.loads(output)
    with Catalog(demo / "cachedex.sqlite", readonly=True) as catalog:
        old, new = catalog.listed_hashes("develop-2026-11-08"), catalog.listed_hashes("develop")
        synced = history(catalog, "develop")
    root = diff["stacks"][0]
    assert root["stack"] == "root"
    assert {s["hash"] for s in root["added"]} == new - old
    assert {s["hash"] for s in root["removed"]} == old - new
    # develop was synced twice by the demo: the second sync's changes are the diff since then
    code, output = run(demo, "diff", "develop", "--since", "2000-01-01", "--json")
    since = json.loads(output)
    root = since["stacks"][0]
    assert (len(root["added"]), len(root["removed"])) == (synced[1][1], synced[1][2])
    assert "py-polars" in root["added_packages"]
    code, output = run(demo, "diff", "develop", "--since", "2999-01-01")
    assert code == 0 and "no change" in output
    code, output = run(demo, "diff", "develop")
    assert code == 2


def test_values_print_as_text_not_markup(tmp_path: Path) -> None:
    from cachedex.values import SpecRecord

    catalog = Catalog(tmp_path / "c.sqlite")
    record = SpecRecord(
        hash="a" * 32,
        name="zlib",
        version="1.0",
        platform="linux",
        os="rhel8",
        target="x86_64",
        compiler="gcc@13",
        variants=("note=[red]x[/red]",),
        dependencies=(),
        in_buildcache=True,
        external=False,
        node=b"{}",
    )
    with catalog.writing_tag("t") as writer:
        writer.add_specs([record], {})
        writer.replace_mirror(
            "root",
            "/m",
            layout=3,
            db_version=8,
            checksum="x",
            etag=None,
            last_modified=None,
            fetched_at=0.0,
            members={"a" * 32: True},
        )
    catalog.close()
    config = tmp_path / "cachedex.yaml"
    config.write_text("catalog: c.sqlite\ntags:\n  - name: t\n    url: ./m\n")
    result = CliRunner().invoke(main, ["--config", str(config), "search", "zlib"])
    assert result.exit_code == 0 and "note=[red]x[/red]" in result.output
    result = CliRunner().invoke(main, ["--config", str(config), "show", "/aaaa"])
    assert result.exit_code == 0 and "note=[red]x[/red]" in result.output


def test_search_as_json_that_finds_nothing_says_why_on_stderr(demo: Path) -> None:
    """Its output stays JSON for the script; the hints go to the person running it."""
    result = CliRunner().invoke(main, ["--config", str(demo / "cachedex.yaml"), "search", "zlib@9:", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    assert result.stderr.startswith("hint: nothing matches @9:; without it, ") and "zlib@1.3.1 (" in result.stderr
    assert "note:" not in result.stderr  # (no --offset past a last match: there is none)
    found = CliRunner().invoke(main, ["--config", str(demo / "cachedex.yaml"), "search", "zlib", "--json"])
    assert json.loads(found.stdout) and not found.stderr
    # Cut at --limit: said on stderr (50 of many were printed as if they were all).
    many = ["--config", str(demo / "cachedex.yaml"), "search", "zlib", "--json", "--limit", "1", "--offset", "1"]
    cut = CliRunner().invoke(main, many)
    total = len(json.loads(found.stdout))
    assert len(json.loads(cut.stdout)) == 1 and total > 1
    assert cut.stderr == f"note: 1 of {total} matches from --offset 1; --limit and --offset give the others\n"
    past = CliRunner().invoke(main, [*many[:4], "--json", "--offset", "500"])
    assert json.loads(past.stdout) == [] and past.stderr == f"note: none from --offset 500: the last is {total - 1}\n"


def test_a_hint_counts_a_spec_by_each_of_its_compilers(demo: Path) -> None:
    """netlib-lapack of the darwin stack: C by apple-clang, Fortran by gcc. A search that
    finds nothing said gcc's versions, and what the specs have without the compiler's
    version, from the listed compiler alone."""
    with Catalog(demo / "cachedex.sqlite", readonly=True) as catalog:
        compilers = compilers_of(catalog)
        darwin = [s for s in listed_specs(catalog, "develop") if s.name == "netlib-lapack" and s.platform == "darwin"]
    (spec,) = darwin
    fortran = next(c for c in compilers[spec.hash] if c.startswith("gcc@"))
    code, output = run(demo, "search", "netlib-lapack %gcc@99")  # (the catalog: two of them, one with gcc)
    words = " ".join(output.split())
    assert f"without it, 2 specs in the catalog match: %{spec.compiler} (2 specs), %{fortran} (1 spec)" in words, output
    code, output = run(demo, "search", "%gcc@99", "--tag", "develop", "--stack", "developer-tools-darwin")
    words = " ".join(output.split())
    assert f"the versions of gcc in develop/developer-tools-darwin: %{fortran} (1 spec)" in words, output
    assert "direct dependency named gcc" not in words


def test_an_option_of_one_value_given_twice_is_refused(demo: Path) -> None:
    """``--tag develop --tag v1.0.2`` searched v1.0.2 alone, without a word, where
    ``reuse`` and ``site`` take several tags."""
    for args in (
        ("search", "zlib", "--tag", "develop", "--tag", "v1.0.2"),
        ("search", "zlib", "--tag", "develop", "--stack", "e4s", "-s", "tutorial"),
        ("show", "zlib", "-t", "develop", "-t", "v1.0.2"),
    ):
        code, output = run(demo, *args)
        assert code == 2 and "given 2 times" in output and "this command takes one" in output, (args, output)
    code, output = run(demo, "search", "zlib", "--tag", "develop", "--json")
    assert code == 0 and json.loads(output)
