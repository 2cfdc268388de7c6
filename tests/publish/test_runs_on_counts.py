""" "Runs on" counts its options as the other filters count theirs: an option's count is
what would match with it in place of the current machine, the other filters applied (in
packages on a tag page, in specs on a package page). Checked against Spack's rule written
apart (``helpers.spack_target_satisfies``) over random tags and over the demo's catalog,
in Python, in the HTML the site and the server write, and in the page's script in
Chromium."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import archspec.cpu
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cachedex.catalog import Catalog
from cachedex.publish.facets import FACET_KEYS, FILTER_KEYS, select_specs, select_tag
from cachedex.publish.package_pages import package_page
from cachedex.publish.pages import tag_page
from cachedex.publish.render import asset_text
from cachedex.publish.tag_columns import RUNS_ON, machines, tag_specs
from tests.helpers import Demo, Listed, listed_specs, spack_target_satisfies
from tests.publish.conftest import opened

TAG = "tags/develop/index.html"


class Spec(msgspec.Struct, frozen=True):
    """What a tag page's columns and a package page's filters read of a spec."""

    name: str
    hash: str
    version: str
    compiler: str
    platform: str
    os: str
    target: str
    size: int | None
    stacks: tuple[str, ...]
    other_compilers: tuple[str, ...] = ()


def _runs(targets: Iterable[str]) -> dict[str, set[str]]:
    """Per target, the machines that run its binaries, by Spack's rule: any target archspec
    knows, or one of ``targets``, that satisfies ``target=:machine``."""
    targets = set(targets)
    known = {*archspec.cpu.TARGETS, *targets}
    return {t: {m for m in known if spack_target_satisfies(t, f":{m}")} for t in targets}


def _held(spec: Any, facet: str, runs: Mapping[str, set[str]]) -> Iterable[str]:
    if facet == "stack":
        stacks: tuple[str, ...] = spec.stacks
        return stacks
    if facet == "compiler":
        return (spec.compiler, *spec.other_compilers)
    return runs[spec.target] if facet == RUNS_ON else (getattr(spec, facet),)


def _passes(spec: Any, filters: Mapping[str, str], runs: Mapping[str, set[str]]) -> bool:
    return all(value in _held(spec, facet, runs) for facet, value in filters.items())


def _brute_counts(specs: Sequence[Any], filters: Mapping[str, str], needle: str, *, by: str) -> dict[str, int]:
    """Per machine, the packages (``by="name"``) or specs (``by="hash"``) whose name holds
    ``needle`` and that have a spec meeting the filters but runs_on, which it runs."""
    runs = _runs(s.target for s in specs)
    others = {k: v for k, v in filters.items() if k != RUNS_ON}
    found: dict[str, set[str]] = {}
    for spec in specs:
        if needle in spec.name.lower() and _passes(spec, others, runs):
            for machine in runs[spec.target]:
                found.setdefault(machine, set()).add(getattr(spec, by))
    return {machine: len(held) for machine, held in sorted(found.items())}


def _nonzero(counts: Mapping[str, int]) -> dict[str, int]:
    return {value: n for value, n in counts.items() if n}


# -- Python, over random tags ------------------------------------------------------------------

_spec = st.builds(
    Spec,
    name=st.sampled_from(["zlib", "hdf5", "py-numpy", "cmake"]),
    hash=st.text("abcdefghijklmnopqrstuvwxyz234567", min_size=4, max_size=4),
    version=st.sampled_from(["1.0", "2.1", "develop"]),
    compiler=st.sampled_from(["gcc@13", "none"]),
    platform=st.just("linux"),
    os=st.sampled_from(["ubuntu22.04", "rhel8"]),
    target=st.sampled_from(
        ["x86_64", "x86_64_v3", "zen2", "zen4", "haswell", "aarch64", "neoverse_v1", "not-a-target"]
    ),
    size=st.none(),
    stacks=st.lists(st.sampled_from(["root", "e4s", "ml"]), min_size=1, max_size=3).map(
        lambda s: tuple(sorted(set(s)))
    ),
    other_compilers=st.sampled_from([(), (), ("gcc@14",), ("gcc@13",)]),
)
_filters = st.fixed_dictionaries(
    {},
    optional={
        "stack": st.sampled_from(["e4s", "ml"]),
        "os": st.sampled_from(["ubuntu22.04", "rhel8"]),
        "target": st.sampled_from(["x86_64_v3", "aarch64", "zen9"]),
        "compiler": st.sampled_from(["gcc@13", "gcc@14", "none"]),
        RUNS_ON: st.sampled_from(["zen3", "neoverse_v2", "x86_64", "not-a-target", "nope"]),
    },
)


@given(
    specs=st.lists(_spec, max_size=24, unique_by=lambda s: s.hash), filters=_filters, needle=st.sampled_from(["", "py"])
)
def test_a_tag_counts_the_packages_each_machine_runs(specs: list[Spec], filters: dict[str, str], needle: str) -> None:
    packages = [(name, [s for s in specs if s.name == name]) for name in sorted({s.name for s in specs})]
    data = tag_specs(packages, lambda name: True, {s.hash: s.other_compilers for s in specs if s.other_compilers})
    chosen = select_tag(data, filters, needle, FILTER_KEYS)
    assert chosen.facets[RUNS_ON] == _brute_counts(specs, filters, needle, by="name")
    # the other facets count as they do without it
    without = select_tag(data, filters, needle)
    assert {k: v for k, v in chosen.facets.items() if k != RUNS_ON} == without.facets
    assert chosen.rows == without.rows and chosen.relax == without.relax


@given(specs=st.lists(_spec, max_size=24, unique_by=lambda s: s.hash), filters=_filters)
def test_a_package_page_counts_the_specs_each_machine_runs(specs: list[Spec], filters: dict[str, str]) -> None:
    chosen = select_specs(specs, filters, (*FACET_KEYS, RUNS_ON))
    assert chosen.facets[RUNS_ON] == _brute_counts(specs, filters, "", by="hash")
    without = select_specs(specs, filters, FACET_KEYS)
    assert {k: v for k, v in chosen.facets.items() if k != RUNS_ON} == without.facets
    assert chosen.matches == without.matches and chosen.relax == without.relax


# -- the demo's tag page: Python, its HTML and its script --------------------------------------

#: Filters of the demo's develop (with os and runs_on, specs that miss runs_on alone
#: count for the other machines)
FILTERS = [
    {},
    {"stack": "e4s"},
    {"target": "x86_64_v3", "os": "ubuntu22.04"},
    {"stack": "e4s", RUNS_ON: "zen3"},
    {"os": "ubuntu22.04", RUNS_ON: "zen3"},
]


@pytest.fixture(scope="module")
def listed(demo_run: Demo) -> list[Listed]:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        return listed_specs(catalog, "develop")


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: "&".join(f"{k}={v}" for k, v in f.items()) or "none")
def test_the_demo_tag_page_counts_as_spack_says(demo_run: Demo, listed: list[Listed], filters: dict[str, str]) -> None:
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        page = tag_page(catalog, "develop", filters)
    counts = page.facets[RUNS_ON]
    assert _nonzero(counts) == _brute_counts(listed, filters, "", by="name")
    # every machine the tag's specs run stays a choice (at 0 under filters)
    assert list(counts) == list(page.specs.values[RUNS_ON])
    assert any(counts.values())


def _shown(page: Any) -> dict[str, tuple[int, bool]]:
    """Per "Runs on" option of a page: the count its label says, and whether it is disabled."""
    options = page.eval_on_selector_all(
        "select[name=runs_on] option", "os => os.filter(o => o.value).map(o => [o.value, o.textContent, o.disabled])"
    )
    shown = {}
    for value, label, disabled in options:
        found = re.fullmatch(re.escape(value) + r" \(([\d,]+)\)", label.strip())
        assert found, label
        shown[value] = (int(found.group(1).replace(",", "")), disabled)
    return shown


def _expected(counts: Mapping[str, int], chosen: str = "") -> dict[str, tuple[int, bool]]:
    return {value: (n, not n and value != chosen) for value, n in counts.items()}


@pytest.mark.browser
def test_the_site_and_its_script_show_the_same_counts(
    browser: Any, served: str, demo_run: Demo, listed: list[Listed]
) -> None:
    """The static tag page's counts, as written and as its script recounts them, then as
    the script counts them under filters chosen in the page, are Spack's rule's."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        whole = tag_page(catalog, "develop")
        filtered = tag_page(catalog, "develop", {"os": "ubuntu22.04", RUNS_ON: "zen3"})
    written, page = opened(browser, served + TAG, script=False)
    assert _shown(page) == _expected(whole.facets[RUNS_ON])
    written.close()
    context, page = opened(browser, served + TAG, script=True)
    try:
        assert _shown(page) == _expected(whole.facets[RUNS_ON])
        assert {k: n for k, (n, _) in _shown(page).items()} == _brute_counts(listed, {}, "", by="name")
        page.select_option("select[name=os]", "ubuntu22.04")
        page.select_option("select[name=runs_on]", "zen3")
        assert _shown(page) == _expected(filtered.facets[RUNS_ON], "zen3")
        assert _nonzero({k: n for k, (n, _) in _shown(page).items()}) == _brute_counts(
            listed, {"os": "ubuntu22.04"}, "", by="name"
        )
        page.fill("input[data-text]", "py")  # the name filter applies to its counts too
        assert _nonzero({k: n for k, (n, _) in _shown(page).items()}) == _brute_counts(
            listed, {"os": "ubuntu22.04"}, "py", by="name"
        )
    finally:
        context.close()


@pytest.mark.browser
def test_the_server_writes_the_counts_its_filters_leave(
    browser: Any, uvicorn_server: str, demo_run: Demo, listed: list[Listed]
) -> None:
    """``cachedex serve``'s filtered tag page, without the script (its HTML as written),
    then with it: the same counts, Spack's rule's."""
    filters = {"os": "ubuntu22.04", RUNS_ON: "neoverse_v1"}
    url = f"{uvicorn_server}/{TAG}?{urllib.parse.urlencode(filters)}"
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        expected = _expected(tag_page(catalog, "develop", filters).facets[RUNS_ON], "neoverse_v1")
    others = {k: v for k, v in filters.items() if k != RUNS_ON}
    assert _nonzero({k: n for k, (n, _) in expected.items()}) == _brute_counts(listed, others, "", by="name")
    for script in (False, True):
        context, page = opened(browser, url, script=script)
        try:
            assert _shown(page) == expected, script
        finally:
            context.close()


@pytest.mark.browser
def test_an_unknown_machine_stays_without_a_count(
    browser: Any, uvicorn_server: str, served: str, demo_run: Demo
) -> None:
    """A machine the page does not list (no target archspec knows) is chosen without a
    count; the others count what they would find in its place, as the server writes it
    and as the script shows it."""
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        expected = _expected(tag_page(catalog, "develop").facets[RUNS_ON])
    for url in (f"{uvicorn_server}/{TAG}?runs_on=nope", f"{served}{TAG}?runs_on=nope"):
        context, page = opened(browser, url, script=True)
        try:
            assert page.eval_on_selector("select[name=runs_on]", "s => s.selectedOptions[0].text") == "nope"
            page.evaluate("() => document.querySelector('select[name=runs_on] option[value=nope]').remove()")
            assert _shown(page) == expected, url
        finally:
            context.close()


# -- a package page's specs: Python and the script -----------------------------------------


@pytest.fixture(scope="module")
def core(browser: Any) -> Iterator[Any]:
    """A blank page running cachedex-core.js, as every page of the site does."""
    context = browser.new_context()
    opened_page = context.new_page()
    opened_page.set_content(
        f"<!doctype html><html lang=en><body><script>{asset_text('core').decode()}</script></body></html>"
    )
    yield opened_page
    context.close()


@pytest.mark.browser
@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: "&".join(f"{k}={v}" for k, v in f.items()) or "none")
def test_the_script_counts_a_package_pages_specs_as_python(
    core: Any, listed: list[Listed], filters: dict[str, str]
) -> None:
    specs = [s for s in listed if s.name == "hdf5"]
    facets = [*FACET_KEYS, RUNS_ON]
    expected = select_specs(specs, filters, facets)
    assert expected.facets[RUNS_ON] == _brute_counts(specs, filters, "", by="hash")
    given_specs = [{**dataclasses.asdict(s), "runs_on": list(machines(s.target))} for s in specs]
    got = core.evaluate(
        "([specs, filters, facets]) => window.cachedex.selectSpecs(specs, filters, facets)",
        [given_specs, filters, facets],
    )
    assert got["facets"] == expected.facets and got["matches"] == expected.matches


@pytest.mark.browser
def test_a_package_page_counts_its_specs_as_written_and_as_its_script_recounts(
    browser: Any, served: str, demo_run: Demo, listed: list[Listed]
) -> None:
    """hdf5's page in develop: each machine's count of specs, in the HTML as written, then
    as its script recounts them and under an OS chosen in the page, is Spack's rule's."""
    specs = [s for s in listed if s.name == "hdf5"]
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        whole = package_page(catalog, "develop", "hdf5")
    assert _nonzero(whole.facets[RUNS_ON]) == _brute_counts(specs, {}, "", by="hash")
    url = served + "tags/develop/packages/hdf5/index.html"
    written, page = opened(browser, url, script=False)
    assert _shown(page) == _expected(whole.facets[RUNS_ON])
    written.close()
    context, page = opened(browser, url, script=True)
    try:
        assert _shown(page) == _expected(whole.facets[RUNS_ON])
        os_name = next(s.os for s in specs)
        page.select_option("select[name=os]", os_name)
        shown = _nonzero({k: n for k, (n, _) in _shown(page).items()})
        assert shown == _brute_counts(specs, {"os": os_name}, "", by="hash") and shown != _nonzero(
            whole.facets[RUNS_ON]
        )
    finally:
        context.close()
