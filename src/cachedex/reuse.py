"""Which specs of a Spack environment a build cache can give as binaries, and why not.

Spack installs a spec from a binary only when the cache lists its very DAG hash. For an
environment's concrete specs (its lockfile), :func:`reuse_report` counts, per tag, the
specs whose hash the tag lists and what their binaries weigh; for each spec a tag lacks,
it names the nearest build of the same package the tag does list and what differs:
version, compiler, OS, target, variants, compiler flags, the recipe (``package_hash``),
the namespace, a dependency's types, or, when none of those, the dependencies (a
build of the same configuration against another ``openssl`` has another hash). That is
the question "why is my binary not reused?" (spack/spack#38590) answered from the cache
side. Externals are never in a build cache and are counted apart. A spliced spec is
installed from its build spec's binary, rewired (Spack's ``install_from_buildcache``
downloads ``spec.build_spec``): a tag that lists that binary gives it. A spec developed in
place (``spack develop``: its ``dev_path`` variant) is built from that source, never taken
from a build cache (Spack's concretizer never reuses one, ``solver/reuse.py``
``_is_reusable``): it is listed apart, with no nearest build. What depends on it has
another hash than any cached build, and follows from it as from any spec to build.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from .catalog import Catalog, SpecSummary
from .errors import LookupFailed, UnknownStack
from .query import Query, target_names
from .reuse_nodes import node_differences
from .values import ROOT_STACK, SpecRecord
from .versions import VersionRange, tag_order

__all__ = ["Developed", "Difference", "Missing", "Nearest", "ReuseReport", "TagReuse", "reuse_report"]

#: How many listed builds of a package are compared with a spec the tag lacks, and of
#: those as near as the nearest, how many have their dependencies compared.
CANDIDATES = 500
TIES = 20
#: The variant Spack gives a spec developed in place (as ``dev_path=/src`` or, quoted,
#: ``dev_path='/my src'``), which it builds from that source.
_DEV_PATH = "dev_path="


class Difference(msgspec.Struct, frozen=True):
    """One way the nearest cached build differs from the spec wanted."""

    #: version, compiler, platform, os, target, variants, a compiler flag (``cflags``...),
    #: package_hash (the recipe), namespace, ``^`` and a dependency's name, or that and
    #: " type" (the same dependency, of other types)
    what: str
    cached: str  #: the cached build's value ("" when it has none)
    wanted: str  #: the environment's value ("" when it has none)
    #: a target: the cached build's runs on a machine of the wanted one (an older
    #: microarchitecture it descends from), so concretizing for it would reuse it
    runs: bool = False


class Nearest(msgspec.Struct, frozen=True):
    """The listed build of the same package that differs least from a spec wanted."""

    hash: str
    version: str
    size: int | None
    differences: tuple[Difference, ...]  #: empty: same build (then another hash means another build)


class Missing(msgspec.Struct, frozen=True):
    """A spec of the environment whose hash the tag does not list."""

    hash: str
    name: str
    version: str
    root: bool  #: one of the environment's roots
    nearest: Nearest | None  #: None: the tag lists no build of this package
    #: every way the nearest build differs is a dependency the tag lacks too: this spec
    #: is built because those are (its cause is theirs)
    follows: bool = False


class Developed(msgspec.Struct, frozen=True):
    """A spec of the environment developed in place (``spack develop``): Spack builds it
    from its source, never from a binary, so no tag gives it and none is near."""

    hash: str
    name: str
    version: str
    root: bool  #: one of the environment's roots


class TagReuse(msgspec.Struct, frozen=True):
    """What one tag (one of its stacks) gives of the environment."""

    tag: str
    stack: str
    cached: int  #: specs whose binary it lists
    needed: int  #: specs a build cache could give (the environment's, externals and developed ones aside)
    size: int | None  #: bytes of the cached binaries whose size is known; None: none is
    sized: int  #: how many of ``cached`` have a known size
    #: of ``cached``, the spliced specs given by their build spec's binary (rewired)
    rewired: int = 0
    missing: tuple[Missing, ...] = ()  #: filled for the best tag (and any asked for alone)


class ReuseReport(msgspec.Struct, frozen=True):
    """An environment against the catalog's tags, the best first."""

    lockfile: str
    specs: int  #: concrete specs in the lockfile
    roots: int
    external: int  #: externals: never in a build cache
    tags: tuple[TagReuse, ...]  #: most cached first (then in the catalog's tag order)
    #: with a stack and no tags asked for: the tags not compared, which have no such stack
    without_stack: tuple[str, ...] = ()
    #: the specs developed in place (``spack develop``): built from their source, never cached
    developed: tuple[Developed, ...] = ()


def reuse_report(
    catalog: Catalog,
    lockfile: str,
    specs: Sequence[SpecRecord],
    roots: Sequence[str],
    *,
    tags: Sequence[str] | None = None,
    stack: str = ROOT_STACK,
    splices: Mapping[str, str] | None = None,
) -> ReuseReport:
    """How much of an environment (``specs``, its ``roots`` by hash) each tag lists.

    ``tags`` (default: every tag of the catalog) are compared in ``stack`` (default the
    tag's whole mirror; with no ``tags``, the tags that have that stack). The best tag's
    missing specs, with their nearest builds, are listed; with one tag asked for, that
    tag's. ``splices`` ({spliced spec's hash: its build spec's}, a lockfile's
    :attr:`~cachedex.ingest.lockfile.Lockfile.splices`): a spliced spec is given by
    either binary, its own or its build spec's. The specs developed in place are listed
    apart (:class:`Developed`), in no tag's count. UnknownTag or UnknownStack when a tag
    asked for, or its stack, does not exist; LookupFailed when no tag has the stack."""
    lock = {spec.hash: spec for spec in specs}
    rooted = set(roots)
    developed = tuple(
        Developed(spec.hash, spec.name, spec.version, spec.hash in rooted)
        for spec in specs
        if not spec.external and _is_developed(spec)
    )
    in_place = {spec.hash for spec in developed}
    wanted = [spec for spec in specs if not spec.external and spec.hash not in in_place]
    hashes = [spec.hash for spec in wanted]
    builds = {h: build for h in hashes if (build := (splices or {}).get(h)) is not None}
    binaries = [*hashes, *builds.values()]
    names = list(dict.fromkeys(tags)) if tags else tag_order(catalog.tag_names())
    without_stack: list[str] = []
    with catalog.snapshot():
        if not tags and stack != ROOT_STACK:  # every tag: those with the stack
            without_stack = [tag for tag in names if stack not in catalog.stack_names(tag)]
            if names and len(without_stack) == len(names):
                raise LookupFailed(f"no tag has a stack {stack!r}")
            names = [tag for tag in names if tag not in without_stack]
        for tag in names:
            catalog.require_tag(tag)
            if stack != ROOT_STACK and stack not in catalog.stack_names(tag):
                raise UnknownStack(tag, stack)
        sizes = catalog.spec_sizes(binaries)
        listed = {tag: _given(catalog.listed_hashes(tag, stack, among=binaries), hashes, builds) for tag in names}
        order = {tag: n for n, tag in enumerate(names)}
        ranked = sorted(names, key=lambda tag: (-len(listed[tag]), order[tag]))
        rows = []
        for n, tag in enumerate(ranked):
            have = listed[tag]
            known = [size for binary in have.values() if (size := sizes.get(binary)) is not None]
            rewired = sum(1 for h, binary in have.items() if binary != h)
            missing: tuple[Missing, ...] = ()
            if n == 0:
                lacking = {h for h in hashes if h not in have}
                # (a developed spec is built too: what differs from a cached build only
                # by it follows from it)
                find = _Nearest(catalog, tag, stack, lock, lacking | in_place)
                missing = tuple(find(spec, spec.hash in rooted) for spec in wanted if spec.hash in lacking)
            total = sum(known) if known else None  # (unknown, as everywhere: not 0)
            rows.append(TagReuse(tag, stack, len(have), len(wanted), total, len(known), rewired, missing))
    external = len(specs) - len(wanted) - len(developed)
    return ReuseReport(lockfile, len(specs), len(rooted), external, tuple(rows), tuple(without_stack), developed)


def _is_developed(spec: SpecRecord) -> bool:
    """Whether Spack builds ``spec`` from a source developed in place (``spack develop``
    gives it a ``dev_path`` variant), never from a build cache."""
    return any(variant.startswith(_DEV_PATH) for variant in spec.variants)


def _given(listed: set[str], hashes: list[str], builds: Mapping[str, str]) -> dict[str, str]:
    """{spec's hash: the hash of the binary that gives it} of the specs a tag gives: by
    their own hash, else (spliced) by their build spec's."""
    given = {}
    for h in hashes:
        if h in listed:
            given[h] = h
        elif (build := builds.get(h)) is not None and build in listed:
            given[h] = build
    return given


class _Nearest:
    """For each spec a tag lacks, its nearest build there (:class:`Missing`)."""

    def __init__(
        self, catalog: Catalog, tag: str, stack: str, lock: Mapping[str, SpecRecord], lacking: set[str]
    ) -> None:
        self.catalog, self.tag, self.stack, self.lock, self.lacking = catalog, tag, stack, lock, lacking

    def __call__(self, spec: SpecRecord, root: bool) -> Missing:
        # The version is the first thing compared: builds of the spec's own version are
        # looked at first, so that one is found among thousands of newer ones.
        exact = (VersionRange(spec.version, spec.version, exact=True),)
        builds = self._builds(Query(name=spec.name, versions=exact)) or self._builds(Query(name=spec.name))
        if not builds:
            return Missing(spec.hash, spec.name, spec.version, root, None)
        distances = [_distance(build, spec) for build in builds]
        closest = min(distances)
        alike = [build for build, distance in zip(builds, distances, strict=True) if distance == closest]
        # Of those as near, the one that differs least in what only the nodes say (flags,
        # recipe, namespace), then in its dependencies (of the first few; the newest of
        # equals): what is said of it holds for the most of its DAG.
        found = [(build, self._own(build.hash, spec), *self._dependencies(build.hash, spec)) for build in alike[:TIES]]
        best, own, dependencies, follows = min(found, key=lambda one: (len(one[1]), len(one[2])))
        differences = (*_differences(best, spec), *own)
        if not differences:  # the same configuration: the dependencies are why
            differences = dependencies
        else:
            follows = False
        nearest = Nearest(best.hash, best.version, best.size, differences)
        return Missing(spec.hash, spec.name, spec.version, root, nearest, follows)

    def _builds(self, query: Query) -> Sequence[SpecSummary]:
        return self.catalog.search(query, tag=self.tag, stack=self.stack, limit=CANDIDATES).specs

    def _own(self, cached: str, spec: SpecRecord) -> tuple[Difference, ...]:
        """What the cached build's node differs in from the spec's that the listing
        does not hold (:func:`.reuse_nodes.node_differences`)."""
        return tuple(Difference(*found) for found in node_differences(self.catalog.node(cached), spec.node))

    def _dependencies(self, cached: str, spec: SpecRecord) -> tuple[tuple[Difference, ...], bool]:
        """The dependencies (by name) whose hashes differ between a cached build and the
        spec wanted, each side as ``version /hash`` (the wanted one's version from the
        lockfile); and whether every one the spec has is missing from the tag too."""
        theirs = {edge.name: edge for edge in self.catalog.edges_of(cached)}
        yours = {dep.name: dep.hash for dep in spec.dependencies}
        found = []
        for name in sorted(theirs.keys() | yours.keys()):
            edge, mine = theirs.get(name), yours.get(name)
            if edge is not None and edge.hash == mine:
                continue
            wanted = self.lock.get(mine) if mine is not None else None
            found.append(
                Difference(
                    f"^{name}",
                    "" if edge is None else f"{edge.version} /{edge.hash[:7]}",
                    "" if mine is None else f"{wanted.version if wanted else '?'} /{mine[:7]}",
                )
            )
        differing = [yours.get(d.what[1:]) for d in found]
        return tuple(found), bool(found) and all(h is not None and h in self.lacking for h in differing)


#: The fields compared, the weightiest first: a build of another version is farther than
#: one for another target, which is farther than one with another variant.
_FIELDS = ("version", "compiler", "platform", "os", "target")


def _distance(build: SpecSummary, spec: SpecRecord) -> tuple[int, ...]:
    """How far a build is from the spec wanted: field by field, then by how many
    variants differ."""
    fields = (int(getattr(build, field) != getattr(spec, field)) for field in _FIELDS)
    return (*fields, len(set(build.variants) ^ set(spec.variants)))


def _runs_on(target: str, machine: str) -> bool:
    """Whether a binary for ``target`` runs on a ``machine`` (Spack's ``target=:machine``)."""
    return target in target_names(f":{machine}")


def _differences(build: SpecSummary, spec: SpecRecord) -> tuple[Difference, ...]:
    found = [
        Difference(field, cached, wanted, field == "target" and _runs_on(cached, wanted))
        for field in _FIELDS
        if (cached := getattr(build, field)) != (wanted := getattr(spec, field))
    ]
    theirs, yours = set(build.variants), set(spec.variants)
    if theirs != yours:
        found.append(
            Difference(
                "variants",
                " ".join(v for v in build.variants if v not in yours),
                " ".join(v for v in spec.variants if v not in theirs),
            )
        )
    return tuple(found)
