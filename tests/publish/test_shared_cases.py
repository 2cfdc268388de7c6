"""One table of cases, two implementations: Spack's version order, facet matching and
the escapes of what would reorder text, in Python (``versions.version_key``,
``publish/facets.py``, ``values.page_visible``) and in JavaScript
(``static/cachedex-core.js``, run in Chromium). Both read the same JSON files under
``tests/publish/cases/``."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cachedex.publish.facets import PACKAGE_KEYS, select_specs, select_tag
from cachedex.publish.pages import TagData, TagRow, tag_page_from
from cachedex.publish.render import asset_text, columns_json
from cachedex.publish.tag_columns import machines, tag_specs
from cachedex.values import page_visible
from cachedex.versions import version_key
from tests.helpers import spack_target_satisfies

CASES = Path(__file__).parent / "cases"
VERSIONS = json.loads((CASES / "version_order.json").read_text())
FACETS = json.loads((CASES / "facet_cases.json").read_text())
VISIBLE = json.loads((CASES / "page_visible.json").read_text())["cases"]


def _specs(name: str) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(
            name=name,
            hash=f"{name}-{n:02d}",
            **{**spec, "stacks": tuple(spec["stacks"]), "other_compilers": tuple(spec.get("other_compilers", ()))},
        )
        for n, spec in enumerate(FACETS["specs"][name])
    ]


def _tag_data() -> TagData:
    packages = [(name, _specs(name)) for name in sorted(FACETS["specs"])]
    row = TagRow("t", sum(len(s) for _, s in packages), len(packages), 0, None, None, None, None)
    others = {s.hash: s.other_compilers for _, specs in packages for s in specs if s.other_compilers}
    return TagData(row, tag_specs(packages, lambda name: True, others), "")


def _rows(rows: list[Any]) -> list[dict[str, Any]]:
    return [{key: list(v) if isinstance(v, tuple) else v for key, v in row._asdict().items()} for row in rows]


# -- Python ----------------------------------------------------------------------------------


@pytest.mark.parametrize("ascending", VERSIONS["ascending"], ids=lambda a: f"{a[0]}..{a[-1]}")
def test_versions_sort_as_spack_sorts_them(ascending: list[str]) -> None:
    shuffled = ascending[:]
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled, key=version_key) == ascending
    for older, newer in itertools.combinations(ascending, 2):
        assert version_key(older) < version_key(newer), (older, newer)


@pytest.mark.parametrize("equal", VERSIONS["equal"], ids=lambda e: "=".join(e))
def test_versions_that_spack_holds_equal(equal: list[str]) -> None:
    assert len({version_key(v) for v in equal}) == 1


@pytest.mark.parametrize("case", FACETS["tag"], ids=lambda c: c["name"])
def test_tag_facets_in_python(case: dict[str, Any]) -> None:
    chosen = select_tag(_tag_data().specs, case["filters"], case["text"])
    assert _rows(chosen.rows) == case["rows"]
    assert chosen.facets == case["facets"] and chosen.relax == case["relax"]


@pytest.mark.parametrize("case", FACETS["package"], ids=lambda c: c["name"])
def test_package_facets_in_python(case: dict[str, Any]) -> None:
    chosen = select_specs(_specs(case["package"]), case["filters"], PACKAGE_KEYS, case.get("text", ""))
    assert chosen.matches == case["matches"]
    assert chosen.facets == case["facets"] and chosen.relax == case["relax"]


def test_runs_on_selects_what_spack_says_a_machine_runs() -> None:
    """The cases with a ``runs_on`` filter, against Spack's rule written apart (helpers):
    a spec matches when its target satisfies ``target=:machine`` and the other filters."""
    for case in FACETS["package"]:
        if "runs_on" in case["filters"]:
            rest = {k: v for k, v in case["filters"].items() if k != "runs_on"}
            expected = [
                spack_target_satisfies(spec.target, ":" + case["filters"]["runs_on"])
                and all(v in (spec.variants if k == "variant" else (getattr(spec, k),)) for k, v in rest.items())
                for spec in _specs(case["package"])
            ]
            assert case["matches"] == expected, case["name"]
    runs_on = [case for case in FACETS["tag"] if "runs_on" in case["filters"]]
    assert len(runs_on) == 3
    for case in runs_on:
        machine, rest = case["filters"]["runs_on"], {k: v for k, v in case["filters"].items() if k != "runs_on"}
        listed = sorted(
            name
            for name in FACETS["specs"]
            if any(
                spack_target_satisfies(spec.target, f":{machine}")
                and all(v in (spec.stacks if k == "stack" else (getattr(spec, k),)) for k, v in rest.items())
                for spec in _specs(name)
            )
        )
        assert [row["name"] for row in case["rows"]] == listed, case["name"]


def _holds(spec: SimpleNamespace, facet: str, value: str) -> bool:
    """Whether ``spec`` has ``value`` for ``facet``, written apart from facets.py: a
    compiler is its own or one of the others that built it."""
    if facet == "compiler":
        return value in (spec.compiler, *spec.other_compilers)
    if facet == "runs_on":
        return spack_target_satisfies(spec.target, f":{value}")
    return value in (
        spec.stacks if facet == "stack" else spec.variants if facet == "variant" else (getattr(spec, facet),)
    )


def test_a_compiler_selects_every_spec_it_built() -> None:
    """The cases with a ``compiler`` filter, against a plain reading: a spec that
    apple-clang built for its C and gcc for its Fortran is gcc's too (``%gcc`` finds it)."""
    checked = 0
    for case in FACETS["package"]:
        if "compiler" in case["filters"]:
            text = case.get("text", "")
            expected = [
                all(_holds(s, k, v) for k, v in case["filters"].items()) and text in s.version.lower()
                for s in _specs(case["package"])
            ]
            assert case["matches"] == expected, case["name"]
            checked += 1
    for case in FACETS["tag"]:
        if "compiler" in case["filters"]:
            listed = sorted(
                name
                for name in FACETS["specs"]
                if case["text"] in name
                and any(all(_holds(s, k, v) for k, v in case["filters"].items()) for s in _specs(name))
            )
            assert [row["name"] for row in case["rows"]] == listed, case["name"]
            checked += 1
    assert checked == 5  # (two with another compiler among them: one a tag's, one a package's)
    others = [s for name in FACETS["specs"] for s in _specs(name) if s.other_compilers]
    assert len(others) == 2


def test_the_tag_page_struct_carries_the_selection() -> None:
    case = FACETS["tag"][2]
    page = tag_page_from(_tag_data(), case["filters"])
    assert [p.name for p in page.packages] == [r["name"] for r in case["rows"]]
    assert page.filters == case["filters"] and page.relax == case["relax"]
    assert list(page.specs.names) == ["cmake", "hwloc", "zlib"] and sum(page.specs.counts) == 8


def test_what_would_reorder_text_is_shown_as_escapes_in_python() -> None:
    assert [page_visible(text) for text, _ in VISIBLE] == [shown for _, shown in VISIBLE]


# -- the same tables in Chromium ----------------------------------------------------------------


@pytest.fixture(scope="module")
def core(browser: Any) -> Iterator[Any]:
    """A blank page running cachedex-core.js, as every page of the site does."""
    context = browser.new_context()
    opened = context.new_page()
    script = asset_text("core").decode()
    opened.set_content(f"<!doctype html><html lang=en><body><script>{script}</script></body></html>")
    yield opened
    context.close()


@pytest.mark.browser
def test_versions_in_chromium(core: Any) -> None:
    for ascending in VERSIONS["ascending"]:
        shuffled = ascending[:]
        random.Random(7).shuffle(shuffled)
        got = core.evaluate("(v) => v.slice().sort(window.cachedex.compareVersions)", shuffled)
        assert got == ascending
        pairs = core.evaluate(
            "(v) => v.flatMap((a, i) => v.slice(i + 1).map((b) => window.cachedex.compareVersions(a, b)))", ascending
        )
        assert set(pairs) == {-1}, ascending
    for equal in VERSIONS["equal"]:
        assert core.evaluate("(v) => v.map((x) => window.cachedex.compareVersions(v[0], x))", equal) == [0] * len(equal)


@pytest.mark.browser
def test_facets_in_chromium(core: Any) -> None:
    page = json.loads(columns_json(tag_page_from(_tag_data())))  # (what a tag page's script loads)
    for case in FACETS["tag"]:
        got = core.evaluate(
            "([page, filters, text]) => window.cachedex.selectTag(page, filters, text)",
            [page, case["filters"], case["text"]],
        )
        assert got == {"rows": case["rows"], "facets": case["facets"], "relax": case["relax"]}, case["name"]
        # The page itself selects lazily and makes whole rows only for those it draws.
        lazy = core.evaluate(
            "([page, filters, text]) => { const c = window.cachedex, got = c.selectTag(page, filters, text, true);"
            " return {...got, rows: got.rows.map((row) => c.rowOf(page, row))}; }",
            [page, case["filters"], case["text"]],
        )
        assert lazy == got, case["name"]
    for case in FACETS["package"]:
        # (a package page gives its script each target's machines: see package.html)
        specs = [{**vars(spec), "runs_on": list(machines(spec.target))} for spec in _specs(case["package"])]
        got = core.evaluate(
            "([specs, filters, facets, text]) => window.cachedex.selectSpecs(specs, filters, facets, text)",
            [specs, case["filters"], list(PACKAGE_KEYS), case.get("text", "")],
        )
        assert got == {k: case[k] for k in ("matches", "facets", "relax")}, case["name"]


@pytest.mark.browser
def test_sizes_read_the_same_in_chromium(core: Any) -> None:
    from cachedex.values import human_size

    sizes = [
        None,
        0,
        7,
        999,
        1000,
        1250,
        1350,
        1750,
        3350,
        999_949,
        999_950,
        999_960,
        999_950_000,
        999_999_999_999,
        1_000_000,
        2_250_000,
        12_345_678_901_234,
    ]
    got = core.evaluate("(s) => s.map(window.cachedex.humanSize)", sizes)
    assert got == ["unknown" if s is None else human_size(s) for s in sizes]


@pytest.mark.browser
def test_what_would_reorder_text_is_shown_as_escapes_in_chromium(core: Any) -> None:
    got = core.evaluate("(cases) => cases.map(([text]) => window.cachedex.visible(text))", VISIBLE)
    assert got == [shown for _, shown in VISIBLE]


#: Compilers as Spack orders them: by name, then version (as text, gcc@11 came before gcc@7).
COMPILERS = ["apple-clang@16.0.0", "gcc@7.3.1", "gcc@11.4.0", "gcc@13.2.0", "oneapi@2025.1.0"]


def test_compilers_are_in_spack_s_version_order_in_python() -> None:
    from cachedex.publish.facets import in_order

    shuffled = random.Random(3).sample(COMPILERS, len(COMPILERS))
    assert list(in_order("compiler", dict.fromkeys(shuffled, 1))) == COMPILERS
    assert list(in_order("os", dict.fromkeys(["b", "a10", "a9"], 1))) == ["a10", "a9", "b"]  # others by text
    chosen = select_tag(_tag_data().specs, {}, "")
    assert list(chosen.facets["compiler"]) == sorted(chosen.facets["compiler"], key=_by_version)


@pytest.mark.browser
def test_compilers_are_in_spack_s_version_order_in_chromium(core: Any) -> None:
    shuffled = random.Random(3).sample(COMPILERS, len(COMPILERS))
    assert core.evaluate("(list) => list.sort(window.cachedex.compareCompilers)", shuffled) == COMPILERS
    page = json.loads(columns_json(tag_page_from(_tag_data())))
    facets = core.evaluate("(page) => window.cachedex.selectTag(page, {}, '').facets", page)
    assert list(facets["compiler"]) == sorted(facets["compiler"], key=_by_version)


def _by_version(compiler: str) -> tuple[str, object]:
    name, _, version = compiler.partition("@")
    return name, version_key(version)
