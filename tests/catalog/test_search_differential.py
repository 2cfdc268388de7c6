"""A differential test of search: small random catalogs (real SQLite), random queries in
Spack's syntax, each answered by ``Catalog.search`` (what ``cachedex search`` calls) at
several scopes and pages, and by a straightforward walk of the records in Python.

The reference is written from Spack's rules apart from the catalog's paths (SQL, facet
and term bit sets, kept walks): a variant constraint as ``Spec.satisfies`` reads one on a
concrete spec (``x=a`` is held by ``x:=a,b``; ``x:=a`` is not), a target by
:func:`~tests.helpers.spack_target_satisfies`, ``^dep`` as a link/run path down to a
matching spec, a virtual (``^mpi``) by the edges that use a spec as it. Versions use
cachedex's one predicate (:func:`~cachedex.versions.version_satisfies`), and order is
:func:`~tests.helpers.in_result_order` (three stable sorts).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cachedex.catalog import Catalog
from cachedex.errors import BadQuery
from cachedex.query import ANY, Query, parse
from cachedex.values import LINK_RUN, Dependency, SpecRecord
from cachedex.versions import version_satisfies
from tests.helpers import in_result_order, record, replace_mirror, spack_target_satisfies

# -- the vocabulary ------------------------------------------------------------------------

PACKAGES = ("zlib", "hdf5", "openmpi", "mpich", "cmake", "py-numpy", "gcc", "llvm")
VERSIONS = (
    "1.0",
    "1.2",
    "1.2.3",
    "1.2.3-rc1",
    "1.2.3rc2",
    "1.2.10",
    "1.10",
    "2.0",
    "2.0.0",
    "1_2_3",
    "develop",
    "main",
    "git.abc123=1.2.3",
    "git.release-1.0=1.0",
)
COMPILERS = ("gcc@12.3.0", "gcc@13.2.0", "gcc@9.4.0", "gcc", "clang@17.0.6", "llvm@18.1.0", "oneapi@2025.1.0", "none")
TARGETS = ("x86_64", "x86_64_v2", "x86_64_v3", "x86_64_v4", "zen2", "zen3", "zen4", "haswell", "aarch64")
TARGETS += ("neoverse_v1", "neoverse_n1", "m1", "ppc64le", "weird_cpu")
OSES = ("ubuntu22.04", "ubuntu24.04", "rhel8", "sequoia")
PLATFORMS = ("linux", "darwin")
#: Each variant's strings, as specs hold them (one per name a spec has).
VARIANT_CHOICES = (
    ("+shared", "~shared"),
    ("+mpi", "~mpi"),
    ("build_type=Release", "build_type=Debug"),
    ("cuda_arch:=80", "cuda_arch:=80,90", "cuda_arch:=70,80,90", "cuda_arch:=90"),
    ("fabrics:=none", "api=v18"),
)
DEPTYPES = (2, 2, 6, 4, 3, 1, 8, 9)  # link, run and mixes; build; test

Q_NAMES = (*PACKAGES, "mpi", "zlib-api", "c", "nosuch")
Q_VERSIONS = ("1.2", "1.2:", ":1.2", "1.2.3", "=1.2.3", "=1.2", "1.0:1.2", "2:", ":2", "develop", "1.2.3:1.2.10")
Q_VERSIONS += ("=1_2_3", "1.2.3-rc1", "1.2.3rc1:", "=git.abc123=1.2.3", "1.10,develop", "main:", ":1.2.3rc2")
Q_VARIANTS = ("+shared", "~shared", "+mpi", "~mpi", "-mpi", "mpi=true", "shared=false", "build_type=Release")
Q_VARIANTS += ("build_type=Debug", "cuda_arch=80", "cuda_arch=80,90", "cuda_arch:=80,90", "cuda_arch:=80")
Q_VARIANTS += ("cuda_arch=90", "fabrics=none", "api=*", "mpi=*", "api=v18", "build_type=Release,Debug")
Q_TARGETS = ("x86_64", "x86_64:", ":zen3", "x86_64_v2:zen3", "aarch64:", ":neoverse_v1", "zen4", "x86_64_v3:,aarch64")
Q_TARGETS += ("weird_cpu", ":x86_64_v3", "zen2:zen4", "*")
Q_COMPILERS = ("gcc", "gcc@12:", "gcc@13", "gcc@:12", "gcc@=13.2.0", "clang", "llvm@17:", "oneapi", "llvm", "none")


# -- catalogs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mirrors:
    """Each tag's root and stack members (hash -> listed)."""

    members: dict[tuple[str, str], dict[str, bool]]


@st.composite
def catalogs(draw: st.DrawFn) -> tuple[list[SpecRecord], Mirrors]:
    count = draw(st.integers(1, 18))
    records: list[SpecRecord] = []
    for n in range(count):
        name = draw(st.sampled_from(PACKAGES))
        variants = tuple(draw(st.sampled_from(c)) for c in VARIANT_CHOICES if draw(st.integers(0, 3)))
        dependencies = []
        for child in sorted(set(draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=4 if n else 0)))):
            child_name = records[child].name
            virtuals = ""
            if child_name in ("openmpi", "mpich"):
                virtuals = draw(st.sampled_from(("mpi", "", "mpi")))
            elif child_name == "zlib":
                virtuals = draw(st.sampled_from(("zlib-api", "")))
            elif child_name in ("gcc", "llvm"):  # a compiler of some languages (two: a binary two compilers built)
                virtuals = draw(st.sampled_from(("c,cxx", "fortran", "c", "")))
            dependencies.append(Dependency(records[child].hash, child_name, draw(st.sampled_from(DEPTYPES)), virtuals))
        records.append(
            record(
                f"{'abcdefghijklmnopqrst'[n]}{n:02d}" + "x" * 29,
                name,
                version=draw(st.sampled_from(VERSIONS)),
                compiler=draw(st.sampled_from(COMPILERS)),
                platform=draw(st.sampled_from(PLATFORMS)),
                os=draw(st.sampled_from(OSES)),
                target=draw(st.sampled_from(TARGETS)),
                variants=variants,
                dependencies=tuple(dependencies),
            )
        )
    members: dict[tuple[str, str], dict[str, bool]] = {}
    hashes = [r.hash for r in records]
    for tag, stack in (("t1", "s"), ("t2", "e")):
        root = {h: draw(st.booleans()) for h in hashes if draw(st.integers(0, 3))}
        members[tag, "root"] = root
        members[tag, stack] = {h: draw(st.booleans()) for h in root if draw(st.booleans())}
    return records, Mirrors(members)


def write_catalog(path: Path, records: list[SpecRecord], mirrors: Mirrors) -> Catalog:
    catalog = Catalog(path)
    added = False
    for tag in sorted({tag for tag, _ in mirrors.members}):
        with catalog.writing_tag(tag) as writer:
            if not added:
                writer.add_specs(records, {})
                added = True
            for (of, stack), members in mirrors.members.items():
                if of == tag:
                    replace_mirror(writer, stack, members, checksum=f"{tag}{stack}")
    return catalog


# -- queries ---------------------------------------------------------------------------------


#: The kinds of constraint a query part draws from, in the order Spack's syntax takes them.
KINDS = ("version", "variant", "variant2", "target", "os", "platform", "hash", "compiler")


@st.composite
def query_parts(draw: st.DrawFn, *, dependency: bool) -> str:
    """One spec's constraints, the compiler last (as Spack 1.0 reads it): a name or not,
    and two other constraints at most (one in a dependency), so that many queries find
    something."""
    words = [draw(st.sampled_from(Q_NAMES))] if draw(st.integers(0, 3 if dependency else 1)) else []
    kinds = st.sampled_from(KINDS[:-2] if dependency else KINDS)
    chosen = set(
        draw(st.lists(kinds, max_size=2)) if not dependency else [draw(kinds)] * (draw(st.integers(0, 2)) == 0)
    )
    if draw(st.integers(0, 6 if dependency else 4)) == 0:
        chosen.add("compiler")
    variants = draw(st.lists(st.sampled_from(Q_VARIANTS), min_size=2, max_size=2))
    named = {v.lstrip("+~-").split("=")[0].rstrip(":") for v in variants}
    for kind in KINDS:
        if kind not in chosen:
            continue
        words.append(
            {
                "version": lambda: "@" + draw(st.sampled_from(Q_VERSIONS)),
                "variant": lambda: variants[0],
                "variant2": lambda: variants[1] if len(named) == 2 else "",
                "target": lambda: "target=" + draw(st.sampled_from(Q_TARGETS)),
                "os": lambda: "os=" + draw(st.sampled_from(OSES)),
                "platform": lambda: "platform=" + draw(st.sampled_from(PLATFORMS)),
                "hash": lambda: "/" + draw(st.sampled_from("abcdefg")),
                "compiler": lambda: "%" + draw(st.sampled_from(Q_COMPILERS)),
            }[kind]()
        )
    return " ".join(word for word in words if word)


@st.composite
def query_texts(draw: st.DrawFn) -> str:
    text = draw(query_parts(dependency=False))
    for _ in range(draw(st.sampled_from((0, 0, 1, 1, 1, 2)))):
        text += " ^" + (draw(query_parts(dependency=True)) or draw(st.sampled_from(Q_NAMES)))
    return text


# -- the reference ---------------------------------------------------------------------------


def _stored(variants: Iterable[str]) -> dict[str, bool | str | frozenset[str]]:
    """name -> True/False (``+x``/``~x``), a value (``x=v``) or a set of values (``x:=a,b``)."""
    held: dict[str, bool | str | frozenset[str]] = {}
    for text in variants:
        if text[:1] in "+~":
            held[text[1:]] = text[0] == "+"
        elif ":=" in text:
            name, _, value = text.partition(":=")
            held[name] = frozenset(value.split(","))
        else:
            name, _, value = text.partition("=")
            held[name] = value
    return held


def variant_ok(held: bool | str | frozenset[str] | None, wanted: object, exact: bool) -> bool:
    """Spack's ``satisfies`` of one variant constraint by a concrete spec's value: a
    constraint on a variant the spec lacks is not met; ``*`` is any value; a boolean
    needs that boolean; ``x=a,b`` needs a multi-valued variant holding a and b (and more,
    unless written ``x:=``)."""
    if held is None:
        return False
    if wanted == ANY:
        return True
    if isinstance(wanted, bool) or isinstance(held, bool):
        return held is wanted
    values = set(wanted) if isinstance(wanted, tuple) else {wanted}
    have = set(held) if isinstance(held, frozenset) else {held}
    return values == have if exact else values <= have


def _compiler_ok(compiler: str, query: Query) -> bool:
    aliases = {"clang": "llvm", "llvm": "clang", "oneapi": "intel-oneapi-compilers"}
    name, at, version = compiler.partition("@")
    if query.compiler is None:
        return True
    if name not in (query.compiler, aliases.get(query.compiler)):
        return False
    return not query.compiler_versions or (bool(at) and version_satisfies(version, query.compiler_versions))


def node_ok(spec: SpecRecord, query: Query, *, name: bool = True, others: tuple[str, ...] = ()) -> bool:
    """Whether ``spec`` satisfies ``query``'s own constraints (not its dependencies);
    ``others``: its compilers besides its own (:meth:`Reference.other_compilers`)."""
    held = _stored(spec.variants)
    return (
        (not name or query.name is None or spec.name == query.name)
        and (not query.versions or version_satisfies(spec.version, query.versions))
        and (query.hash_prefix is None or spec.hash.startswith(query.hash_prefix))
        and (query.target is None or spack_target_satisfies(spec.target, query.target))
        and (query.os is None or spec.os == query.os)
        and (query.platform is None or spec.platform == query.platform)
        and any(_compiler_ok(compiler, query) for compiler in (spec.compiler, *others))
        and all(variant_ok(held.get(n), v, n in query.exact_variants) for n, v in query.variants)
    )


class Reference:
    """The answers a plain walk of the records gives."""

    def __init__(self, records: list[SpecRecord], mirrors: Mirrors) -> None:
        self.records = {r.hash: r for r in records}
        self.mirrors = mirrors
        self.packages = {r.name for r in records}
        self.virtuals = {v for r in records for d in r.dependencies for v in d.virtuals.split(",") if v}

    def other_compilers(self, spec: SpecRecord) -> tuple[str, ...]:
        """A spec's compilers besides its own: with two compiling edges or more (each
        providing c, cxx or fortran), each one's child, as ``name@version``."""
        compiling = [e for e in spec.dependencies if {"c", "cxx", "fortran"} & set(e.virtuals.split(","))]
        if len(compiling) < 2:
            return ()
        children = [self.records[e.hash] for e in compiling]
        return tuple(f"{c.name}@{c.version}" for c in children if f"{c.name}@{c.version}" != spec.compiler)

    def _ok(self, spec: SpecRecord, query: Query, *, name: bool = True) -> bool:
        return node_ok(spec, query, name=name, others=self.other_compilers(spec))

    def _is_virtual(self, name: str | None) -> bool:
        return name is not None and name not in self.packages and name in self.virtuals

    def _reaches(self, spec: SpecRecord, targets: set[str]) -> bool:
        """Whether a link/run path of one edge or more leads from ``spec`` to one of ``targets``."""
        stack, seen = [spec.hash], set()
        while stack:
            for edge in self.records[stack.pop()].dependencies:
                if edge.deptypes & LINK_RUN and edge.hash not in seen:
                    if edge.hash in targets:
                        return True
                    seen.add(edge.hash)
                    stack.append(edge.hash)
        return False

    def _depends(self, spec: SpecRecord, dependency: Query) -> bool:
        if self._is_virtual(dependency.name):
            if dependency.versions:  # the interface's version: not compared (see .virtuals)
                return False
            # Spack: the DAG (the spec or what it needs through link/run) has an edge that
            # uses a spec matching the rest as this virtual, itself a link/run edge.
            users = {
                r.hash
                for r in self.records.values()
                for e in r.dependencies
                if e.deptypes & LINK_RUN
                and dependency.name in e.virtuals.split(",")
                and self._ok(self.records[e.hash], dependency, name=False)
            }
            return spec.hash in users or self._reaches(spec, users)
        if dependency.name is not None and dependency.name not in self.packages:
            return False
        matching = {h for h, r in self.records.items() if self._ok(r, dependency)}
        return self._reaches(spec, matching)

    def _main_ok(self, spec: SpecRecord, query: Query) -> bool:
        if self._is_virtual(query.name):  # ``mpi``: the specs some edge uses as it
            provided = any(
                e.hash == spec.hash and query.name in e.virtuals.split(",")
                for r in self.records.values()
                for e in r.dependencies
            )
            if not provided or query.versions:
                return False
            return self._ok(spec, query, name=False)
        return self._ok(spec, query)

    def scope(self, tag: str | None, stack: str | None) -> list[SpecRecord]:
        members = self.mirrors.members
        if tag is None:
            return [r for h, r in self.records.items() if any(m.get(h) for m in members.values())]
        in_stack = members[tag, stack] if stack not in (None, "root") else None
        return [
            r for h, r in self.records.items() if members[tag, "root"].get(h) and (in_stack is None or h in in_stack)
        ]

    def search(self, query: Query, tag: str | None, stack: str | None) -> list[str]:
        found = [
            r
            for r in self.scope(tag, stack)
            if self._main_ok(r, query) and all(self._depends(r, d) for d in query.dependencies)
        ]
        return [r.hash for r in in_result_order(found)]


SCOPES = ((None, None), ("t1", None), ("t1", "s"), ("t2", None), ("t2", "e"), ("t2", "root"))


def check(catalog: Catalog, reference: Reference, text: str, page: int) -> None:
    try:
        query = parse(text)
    except BadQuery:
        return
    for tag, stack in SCOPES:
        expected = reference.search(query, tag, stack)
        whole = catalog.search(query, tag=tag, stack=stack, limit=1000)
        got = [s.hash for s in whole.specs]
        assert (whole.total, got) == (len(expected), expected), (text, tag, stack)
        paged: list[str] = []
        for offset in range(0, len(expected) + page, page):
            part = catalog.search(query, tag=tag, stack=stack, limit=page, offset=offset)
            assert part.total == len(expected), (text, tag, stack, offset)
            paged += [s.hash for s in part.specs]
        assert paged == expected, (text, tag, stack, page)


@settings(max_examples=150, deadline=None)
@given(
    catalogs(),
    st.lists(query_texts(), min_size=1, max_size=6),
    st.integers(1, 4),
    st.sampled_from(("cold", "warm", "walks")),
)
def test_search_agrees_with_a_walk_of_the_records(
    made: tuple[list[SpecRecord], Mirrors], texts: list[str], page: int, warmth: str
) -> None:
    _agrees(made, texts, page, warmth)


def _agrees(made: tuple[list[SpecRecord], Mirrors], texts: Sequence[str], page: int, warmth: str) -> None:
    """Each of ``texts`` answered by a catalog of ``made`` (``warmth``: as a server's,
    warmed, its walks too, or cold) as the records' walk answers it."""
    records, mirrors = made
    reference = Reference(records, mirrors)
    with tempfile.TemporaryDirectory() as folder:
        catalog = write_catalog(Path(folder) / "c.sqlite", records, mirrors)
        try:
            if warmth != "cold":  # as a server does before its first search
                catalog.warm_search()
            if warmth == "walks":
                catalog.warm_walks()
            for text in texts:
                check(catalog, reference, text, page)
        finally:
            catalog.close()


#: Searches by compiler, for the binaries two compilers built (an edge to gcc for C, to
#: llvm for Fortran), which the queries drawn above seldom meet.
COMPILER_QUERIES = ("%gcc", "%llvm", "%gcc@1.2:", "%clang", "zlib %gcc", "hdf5 %llvm", "+shared %gcc")
COMPILER_QUERIES += ("^zlib %gcc", "^gcc%llvm", "target=x86_64: %gcc", "@1.2: %llvm")


@settings(max_examples=300, deadline=None)
@given(catalogs(), st.sampled_from(("cold", "warm")))
def test_a_search_by_compiler_agrees_with_a_walk_of_the_records(
    made: tuple[list[SpecRecord], Mirrors], warmth: str
) -> None:
    _agrees(made, COMPILER_QUERIES, 3, warmth)


def test_a_dependency_search_of_a_tag_listing_nothing_finds_nothing(tmp_path: Path) -> None:
    # A tag whose mirror lists no spec (every record unlisted) has an empty search
    # index; a ^dep search there, whose walk found dependents elsewhere, raised
    # TypeError (operator.itemgetter of no position) instead of answering 0.
    zlib = record("z" * 32, "zlib")
    hdf5 = record("h" * 32, "hdf5", dependencies=(Dependency("z" * 32, "zlib", LINK_RUN, ""),))
    mirrors = Mirrors({("t1", "root"): {zlib.hash: True, hdf5.hash: True}, ("t2", "root"): {hdf5.hash: False}})
    with write_catalog(tmp_path / "c.sqlite", [zlib, hdf5], mirrors) as catalog:
        assert [s.hash for s in catalog.search(parse("^zlib"), tag="t1").specs] == [hdf5.hash]
        for text in ("^zlib", "+shared ^zlib", "target=x86_64: ^zlib"):
            page = catalog.search(parse(text), tag="t2")
            assert (page.total, page.specs) == (0, ()), text
