"""Facet filters: one definition of which specs match, for tag pages, package pages and the API.

A **spec matches** filters (``{facet: value}``) when it satisfies every one of them: a
multi-valued facet (``stack``, ``variant``) when the value is among the spec's, a
``compiler`` when it is the spec's own or one of its others (a binary apple-clang built
for C and gcc for Fortran is gcc's too, as ``%gcc`` finds it), any other when the spec's
value equals it. A **package matches** when ONE of its specs
matches them all; its row then counts and summarizes only those specs. The **count**
of an option ``facet=value`` is what would match with that option in place of the
facet's current filter, the other filters applied (faceted search): in packages on a
tag page, in specs on a package page. **Relaxing** a filter says what would match
without it, which is how an empty result offers a way on. **Runs on** (``runs_on``): a
spec matches ``runs_on=zen3`` when a zen3 machine runs it, its target zen3 or one zen3
descends from (``query.target_names(":zen3")``). Its counts (asked for by naming it among
the facets) are made per distinct target, then added up per machine: a tag's
250,000 specs have a few dozen targets, each run by up to ~60 machines.

The browser's twin is ``static/cachedex-core.js`` (``selectTag``, ``selectSpecs``);
both pass ``tests/publish/cases/facet_cases.json``. A tag page's data carries every spec
of the tag as columns (:mod:`.tag_columns`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

from ..values import ROOT_STACK
from ..versions import version_key
from .tag_columns import RUNS_ON, SpecColumns, TagSpecs, machines

__all__ = [
    "FACETS",
    "FACET_KEYS",
    "FILTER_KEYS",
    "MULTI",
    "PACKAGE_FACETS",
    "PACKAGE_FILTER_KEYS",
    "PACKAGE_KEYS",
    "FacetSpec",
    "Row",
    "Selection",
    "SpecSelection",
    "active_filters",
    "in_order",
    "select_specs",
    "select_tag",
    "shown_stacks",
    "spec_matches",
    "spec_values",
    "value_order",
    "with_every_value",
]

#: Facets of tag and package pages: (key in the URL, label).
FACETS = (("stack", "Stack"), ("os", "OS"), ("target", "Target"), ("compiler", "Compiler"), ("platform", "Platform"))
FACET_KEYS = tuple(key for key, _ in FACETS)
#: A package page's facets: those, and the variants that tell its specs apart.
PACKAGE_FACETS = (*FACETS, ("variant", "Variant"))
PACKAGE_KEYS = tuple(key for key, _ in PACKAGE_FACETS)
#: What a tag page filters by, and a package page.
FILTER_KEYS = (*FACET_KEYS, RUNS_ON)
PACKAGE_FILTER_KEYS = (*PACKAGE_KEYS, RUNS_ON)
#: Facets whose value is a list: a spec matches when the wanted value is among them.
MULTI = frozenset({"stack", "variant"})
#: The spec field each facet reads.
_FIELDS = {"stack": "stacks", "variant": "variants"}
#: The facets a tag's columns hold as sets: (the sets, the column of each spec's set).
_SETS = {"stack": ("stack_sets", "stacks"), "compiler": ("compiler_sets", "compiler")}


class FacetSpec(Protocol):
    """What matching reads of a spec (a ``SpecSummary``, or a row of a case table)."""

    @property
    def stacks(self) -> Sequence[str]: ...
    @property
    def os(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def compiler(self) -> str: ...
    @property
    def other_compilers(self) -> Sequence[str]: ...
    @property
    def platform(self) -> str: ...


def active_filters(params: Mapping[str, str], keys: Iterable[str] = FACET_KEYS) -> dict[str, str]:
    """The filters of a request or URL: the non-empty ones of ``keys``, in that order. A
    variant typed by hand, ``?variant=+cuda``, comes as " cuda" (a query's "+" is a
    space): read as "+cuda", no variant starting with a space."""
    found = {key: params[key] for key in keys if params.get(key)}
    if found.get("variant", "+").startswith(" "):
        found["variant"] = "+" + found["variant"][1:]
    return found


def _values(spec: Any, facet: str) -> Sequence[str]:
    if facet == RUNS_ON:
        return machines(spec.target)
    if facet == "compiler":
        return (spec.compiler, *spec.other_compilers) if spec.other_compilers else (spec.compiler,)
    return getattr(spec, _FIELDS[facet]) if facet in MULTI else (getattr(spec, facet),)


def with_every_value(
    counts: dict[str, dict[str, int]], every: Mapping[str, Iterable[str]]
) -> dict[str, dict[str, int]]:
    """``counts`` (a facet's values matching the filters) with each other value the page
    has, counted 0: a filtered page's choices are the unfiltered page's, so that any
    filter can be changed from it (its 0 shown, and disabled)."""
    return {
        facet: in_order(facet, {**dict.fromkeys(every.get(facet, ()), 0), **found}) for facet, found in counts.items()
    }


def _compiler_order(compiler: str) -> tuple[str, Any]:
    name, _, version = compiler.partition("@")
    return name, version_key(version)


def value_order(facet: str) -> Callable[[str], Any] | None:
    """How a facet's values are ordered (a sort key, or None for their text): a compiler
    by its name, then its version in Spack's order (as text, gcc@13 came before gcc@7).
    The pages' script (``cachedex-core.js``, ``valueOrder``) orders them alike."""
    return _compiler_order if facet == "compiler" else None


def in_order(facet: str, counts: Mapping[str, int]) -> dict[str, int]:
    """``counts`` (value: count) with its values in :func:`value_order`."""
    key = value_order(facet)
    return dict(sorted(counts.items(), key=None if key is None else lambda item: key(item[0])))


def spec_values(specs: Iterable[Any], facets: Iterable[str]) -> dict[str, set[str]]:
    """Each facet's values among ``specs`` (``runs_on``'s from their distinct targets)."""
    specs = list(specs)
    return {
        facet: set().union(*map(machines, {spec.target for spec in specs}))
        if facet == RUNS_ON
        else {value for spec in specs for value in _values(spec, facet)}
        for facet in facets
    }


def _machine_counts(by_target: Mapping[str, int]) -> dict[str, int]:
    """Per machine, the sum of ``by_target``'s counts of the targets it runs, by name."""
    counts: Counter[str] = Counter()
    for target, found in by_target.items():
        for machine in machines(target):
            counts[machine] += found
    return dict(sorted(counts.items()))


def spec_matches(spec: Any, filters: Mapping[str, str]) -> bool:
    """Whether ``spec`` satisfies every filter (see the module's doc)."""
    return all(value in _values(spec, facet) for facet, value in filters.items())


def _misses(spec: Any, filters: Mapping[str, str]) -> list[str]:
    """The filters ``spec`` fails (at most two: more tell nothing more)."""
    missed = []
    for facet, value in filters.items():
        if value not in _values(spec, facet):
            missed.append(facet)
            if len(missed) == 2:
                break
    return missed


class SpecSelection(NamedTuple):
    """Which specs of a package page match, and its facet counts (in specs)."""

    matches: list[bool]
    facets: dict[str, dict[str, int]]  #: facet -> value -> specs matching it and the other filters
    relax: dict[str, int]  #: active facet -> specs matching the other filters


def select_specs(
    specs: Sequence[Any], filters: Mapping[str, str], facets: Iterable[str] = FACET_KEYS, needle: str = ""
) -> SpecSelection:
    """A package page's selection: the specs matching ``filters`` and the Version filter
    (``needle``, lower case: a spec whose version holds it), and contextual counts of
    ``facets`` (``runs_on`` among them: its counts too). The Version filter applies to
    every count, as a tag page's name filter does, and stays when one of ``filters`` is
    relaxed (its link keeps it): a spec it drops counts for no option and no relax."""
    keys = tuple(facets)
    counts: dict[str, dict[str, int]] = {facet: {} for facet in keys if facet != RUNS_ON}
    by_target: dict[str, int] | None = {} if RUNS_ON in keys else None  # specs per target, for runs_on
    relax = dict.fromkeys(filters, 0)
    matches = []
    for spec in specs:
        missed = _misses(spec, filters)
        texted = not needle or needle in spec.version.lower()
        matches.append(not missed and texted)
        if not texted or len(missed) > 1:
            continue
        for facet, found in counts.items():
            if missed and missed[0] != facet:
                continue
            for value in set(_values(spec, facet)):
                found[value] = found.get(value, 0) + 1
        if by_target is not None and (not missed or missed[0] == RUNS_ON):
            by_target[spec.target] = by_target.get(spec.target, 0) + 1
        for facet in relax:
            relax[facet] += not missed or missed[0] == facet
    if by_target is not None:
        counts[RUNS_ON] = _machine_counts(by_target)
    return SpecSelection(matches, {facet: in_order(facet, counts[facet]) for facet in keys}, relax)


class Row(NamedTuple):
    """A package's row from the specs of it that match: see ``pages.PackageRow``."""

    name: str
    specs: int
    versions: tuple[str, ...]
    compilers: tuple[str, ...]
    platforms: tuple[str, ...]
    oses: tuple[str, ...]
    targets: tuple[str, ...]
    stacks: tuple[str, ...]
    size: int | None
    sized: int
    has_page: bool


class Selection(NamedTuple):
    """A tag page's selection: its rows, and its facet counts (in packages)."""

    rows: list[Row]
    facets: dict[str, dict[str, int]]  #: facet -> value -> packages matching it and the other filters
    relax: dict[str, int]  #: active facet -> packages matching the other filters


def _tests(columns: SpecColumns, filters: Mapping[str, str]) -> list[tuple[str, Callable[[int], bool]]]:
    """Per active filter, a test of a spec by its position (a value the tag lacks: none pass)."""
    tests: list[tuple[str, Callable[[int], bool]]] = []
    for facet, value in filters.items():
        wanted = columns.values[facet].index(value) if value in columns.values[facet] else -1
        if facet in _SETS:  # (a spec's stacks, its compilers: one of the sets)
            sets, column = _SETS[facet]
            holding = [wanted in found for found in getattr(columns, sets)]
            tests.append((facet, _holds(holding, getattr(columns, column))))
        elif facet == RUNS_ON:  # by the spec's target: the machines that run it
            tests.append((facet, _holds([wanted in found for found in columns.runs_on], columns.target)))
        else:
            tests.append((facet, _equals(getattr(columns, facet), wanted)))
    return tests


def _holds(holding: list[bool], sets: tuple[int, ...]) -> Callable[[int], bool]:
    return lambda i: holding[sets[i]]


def _equals(column: tuple[int, ...], wanted: int) -> Callable[[int], bool]:
    return lambda i: column[i] == wanted


def select_tag(
    data: TagSpecs, filters: Mapping[str, str], needle: str = "", facets: Iterable[str] = FACET_KEYS
) -> Selection:
    """The rows and counts of ``facets`` (``runs_on`` among them: its counts too) of a
    tag page under ``filters`` and a package name filter (``needle``, lower case: a
    package whose name holds it)."""
    columns, starts = data.columns, data.starts
    tests = _tests(columns, filters)
    values = columns.values
    keys = tuple(facets)
    counts: dict[str, dict[str, int]] = {facet: {} for facet in keys if facet != RUNS_ON}
    # runs_on: packages per distinct set of the targets a package's counted specs have
    # (a package counts once for a machine that runs several of them)
    target_sets: Counter[frozenset[int]] = Counter()
    relax = dict.fromkeys(filters, 0)
    rows: list[Row] = []
    unlinked = set(columns.unlinked)
    for n, name in enumerate(columns.names):
        if needle and needle not in name.lower():
            continue
        relaxed: set[str] = set()
        if not tests:  # every spec matches: a facet's values are its column's slice (in C)
            matched: Sequence[int] = range(starts[n], starts[n + 1])
            seen = {facet: _positions(columns, facet, matched) for facet in keys}
        else:
            matched, seen = _matching(columns, tests, range(starts[n], starts[n + 1]), relaxed, keys)
        for facet, found in seen.items():
            if facet == RUNS_ON:
                if found:
                    target_sets[frozenset(found)] += 1
                continue
            names = values[facet]
            for at in found:
                counts[facet][names[at]] = counts[facet].get(names[at], 0) + 1
        for facet in relaxed:
            relax[facet] += 1
        if matched:
            rows.append(_row(data, n, matched, n not in unlinked))
    if RUNS_ON in keys:
        counts[RUNS_ON] = _package_machines(columns, target_sets)
    return Selection(rows, {facet: in_order(facet, counts[facet]) for facet in keys}, relax)


def _package_machines(columns: SpecColumns, target_sets: Counter[frozenset[int]]) -> dict[str, int]:
    """Per machine, the packages of ``target_sets`` (per set of target positions) one of
    whose targets it runs: each distinct set's machines found once (``columns.runs_on``)."""
    counts: Counter[int] = Counter()
    for targets, packages in target_sets.items():
        for machine in set().union(*map(columns.runs_on.__getitem__, targets)):
            counts[machine] += packages
    names = columns.values[RUNS_ON]
    return {names[at]: found for at, found in counts.items()}


def _matching(
    columns: SpecColumns,
    tests: list[tuple[str, Callable[[int], bool]]],
    specs: range,
    relaxed: set[str],
    facets: tuple[str, ...],
) -> tuple[list[int], dict[str, set[int]]]:
    """Of a package's ``specs``, those that pass every test, and per facet of ``facets``
    the values of those that pass every test but (at most) that facet's; adds to
    ``relaxed`` the facets whose dropping would let one of them match."""
    matched: list[int] = []
    counted: dict[str, list[int]] = {facet: [] for facet in facets}  # whose values each facet shows
    filters = [facet for facet, _ in tests]
    for i in specs:
        missed = [facet for facet, test in tests if not test(i)][:2]
        if len(missed) > 1:
            continue
        if not missed:
            matched.append(i)
            relaxed.update(filters)
            for found in counted.values():
                found.append(i)
        else:
            relaxed.add(missed[0])
            if missed[0] in counted:  # (a facet not counted: a miss of it counts for none)
                counted[missed[0]].append(i)
    return matched, {facet: _positions(columns, facet, found) for facet, found in counted.items()}


_T = TypeVar("_T")


def _cells(column: Sequence[_T], specs: Sequence[int]) -> Sequence[_T]:
    """``column``'s cells of ``specs``: a slice when they are a range (a package whose
    specs all match, as on every unfiltered tag page)."""
    if isinstance(specs, range):
        return column[specs.start : specs.stop]
    return [column[i] for i in specs]


def _positions(columns: SpecColumns, facet: str, specs: Sequence[int]) -> set[int]:
    """The positions (in ``columns.values[facet]``) of ``facet``'s values among ``specs``;
    for ``runs_on``, those of their targets (in ``values["target"]``): see :func:`_package_machines`."""
    if facet in _SETS:
        sets, column = _SETS[facet]
        return set().union(*map(getattr(columns, sets).__getitem__, set(_cells(getattr(columns, column), specs))))
    return set(_cells(columns.target if facet == RUNS_ON else getattr(columns, facet), specs))


def _row(data: TagSpecs, n: int, matched: Sequence[int], linked: bool) -> Row:
    columns = data.columns
    values = columns.values

    def distinct(column: str) -> tuple[str, ...]:
        return tuple(
            sorted(map(values[column].__getitem__, _positions(columns, column, matched)), key=value_order(column))
        )

    stacks = map(values["stack"].__getitem__, _positions(columns, "stack", matched))
    sizes = [size for size in _cells(data.sizes, matched) if size is not None]
    return Row(
        name=columns.names[n],
        specs=len(matched),
        versions=tuple(map(values["version"].__getitem__, sorted(_positions(columns, "version", matched)))),
        compilers=distinct("compiler"),
        platforms=distinct("platform"),
        oses=distinct("os"),
        targets=distinct("target"),
        stacks=tuple(sorted(stacks)),
        size=sum(sizes) if sizes else None,
        sized=len(sizes),
        has_page=linked,
    )


def shown_stacks(stacks: Iterable[str]) -> list[str]:
    """A row's stacks without ``root``, which every listed spec is in."""
    return [stack for stack in stacks if stack != ROOT_STACK]
