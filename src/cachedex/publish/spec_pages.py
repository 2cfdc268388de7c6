"""A spec's page: everything known about one DAG hash (see :mod:`.pages` for the others).

Built one at a time from the catalog (:func:`spec_page`), or for a whole site from the
spec graph read once (``graph.SpecGraph`` calls :func:`spec_page_from`); both give
the same page (a test compares them on every spec of the demo).
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Sequence
from operator import attrgetter

import msgspec

from ..catalog import Catalog, Edge, SpecSummary
from ..catalog.history import FirstSeen
from ..catalog.verifications import SpecVerification
from ..errors import UnknownSpec
from ..values import ROOT_STACK, stack_order

__all__ = [
    "CLOSURE_LISTED",
    "HEAVIEST",
    "Holder",
    "Install",
    "SpecPage",
    "install_commands",
    "is_oci",
    "largest_dependencies",
    "mirror_commands",
    "spec_page",
    "spec_page_from",
]


class Holder(msgspec.Struct, frozen=True, gc=False):  # only strings: not tracked by the GC
    """A mirror whose index holds a spec."""

    tag: str
    stack: str
    listed: bool  #: the mirror has the binary (``in_buildcache``)
    url: str
    layout: int | None = None  #: the mirror's layout: 2 and 3 tell where the spec's files are


class Install(msgspec.Struct, frozen=True, gc=False):
    """How to install a spec from one mirror that has its binary, as shell commands."""

    tag: str
    stack: str
    commands: str


class SpecPage(msgspec.Struct, frozen=True, tag_field="page", tag="spec"):
    """Everything known about one DAG hash.

    Sizes: ``closure_size`` adds the known sizes of the binaries one downloads to
    install the spec (its own, if a mirror lists it, and those of its link/run
    closure that have a binary); ``closure_binaries`` counts those binaries and
    ``closure_unknown`` those of them whose size is unknown. It is null when no size is known."""

    spec: SpecSummary
    holders: tuple[Holder, ...]
    dependencies: tuple[Edge, ...]  #: direct, of every type (``deptypes``: build 1, link 2, run 4, test 8)
    #: link and run dependencies, transitively: the first :data:`CLOSURE_LISTED` by name
    #: (and the largest binaries past them); ``closure_count`` says how many there are
    closure: tuple[Edge, ...]
    dependents: tuple[Edge, ...]  #: that have a binary in the cache
    closure_size: int | None  #: bytes to download with its dependencies (known sizes only); null: none known
    closure_unknown: int  #: of ``closure_binaries``, those whose size is unknown
    install: tuple[Install, ...]
    node: str  #: the raw node JSON as the index holds it
    closure_binaries: int = 0  #: binaries to download: the spec's (if listed) and its closure's
    #: what the latest ``cachedex verify`` of each mirror holding it found: signature, problems
    verifications: tuple[SpecVerification, ...] = ()
    #: when and where it first appeared: each mirror listing it, root first
    first_seen: tuple[FirstSeen, ...] = ()
    closure_count: int = 0  #: link and run dependencies, transitively, however many ``closure`` lists


#: Entries of a closure a spec page's JSON lists, by name (real closures have hundreds at
#: most), and the largest binaries past them (the page names them): a mirror's chain of
#: 10,000 specs, each listing all below it, made a site of 7.4 GB from an index of
#: 1.8 MB. Its counts and sizes are of the whole closure.
CLOSURE_LISTED = 1_000


#: Dependencies a spec page names as the largest of its download.
HEAVIEST = 5


def largest_dependencies(closure: Sequence[Edge], closure_size: int | None) -> list[tuple[Edge, str]]:
    """The largest of the binaries a spec's download adds (its link/run dependencies
    with a known size; the first :data:`HEAVIEST`), each with its share of the whole
    download ("57%", "<1%"): what makes "2.1 GB to download" so big. None when fewer
    than two are known (one is the whole answer already)."""
    sized = [edge for edge in closure if edge.size and edge.listed]
    if len(sized) < 2 or not closure_size:
        return []
    sized.sort(key=_SIZE, reverse=True)  # (a site has a page per spec: sorted in C)
    return [(edge, _share(edge.size or 0, closure_size)) for edge in sized[:HEAVIEST]]


_SIZE = attrgetter("size")


def _share(size: int, whole: int) -> str:
    """``size``'s share of ``whole``, in whole per cent ("57%"), or "<1%", or ">99%" for
    a part that would round to all of it."""
    if 100 * size < whole:
        return "<1%"
    rounded = (200 * size + whole) // (2 * whole)
    return ">99%" if rounded == 100 and size < whole else f"{rounded}%"


def install_commands(tag: str, stack: str, url: str, dag_hash: str, *, signed: bool = True) -> str:
    """The shell commands that install ``dag_hash`` from the mirror ``url``.

    Users paste them into a shell, and names and URLs come from mirrors and config
    files (a remote ``tags_from`` file among them): every value is shell-quoted, so a
    name like ``dev;curl evil|sh`` stays one argument. Plain names are left as they are.
    An unsigned mirror (an OCI registry, one known not to sign, or one whose specs
    ``cachedex verify`` found unsigned) is added with ``--unsigned`` (see
    :func:`mirror_commands`)."""
    mirror = f"{tag}-{stack}" if stack != ROOT_STACK else tag
    return f"{mirror_commands(mirror, url, signed=signed)}\nspack install --cache-only {shlex.quote('/' + dag_hash)}"


def mirror_commands(name: str, url: str, *, signed: bool = True) -> str:
    """The commands that add the mirror ``url`` as ``name`` and trust its keys.

    Spack requires a signature of every binary from a mirror unless it was added with
    ``--unsigned``: ``spack install`` of an unsigned one stops with "To install unsigned
    packages, use the --no-check-signature option, or configure the mirror with signed:
    false". OCI registries are always unsigned (``spack buildcache push`` does not sign
    for them) and publish no keys, so theirs is ``--unsigned`` and no ``keys`` step."""
    if not signed or is_oci(url):
        return f"spack mirror add --unsigned {shlex.quote(name)} {shlex.quote(url)}"
    return f"spack mirror add {shlex.quote(name)} {shlex.quote(url)}\nspack buildcache keys --install --trust"


def is_oci(url: str) -> bool:
    """Whether ``url`` is an OCI registry's (``oci://``, or ``oci+http://`` without TLS)."""
    return url.startswith(("oci://", "oci+http://"))


def spec_page(catalog: Catalog, dag_hash: str) -> SpecPage:
    """Everything known about one full hash."""
    spec = catalog.spec_summary(dag_hash)
    if spec is None:
        raise UnknownSpec(dag_hash, f"no spec with hash {dag_hash!r} in the catalog")
    return spec_page_from(
        spec,
        holders=[Holder(*row) for row in catalog.holders(dag_hash)],
        dependencies=catalog.edges_of(dag_hash),
        # A spec is not its own dependency, even when an index says so (an edge to
        # itself, or a cycle back to it): in its closure it would count twice.
        closure=[edge for edge in catalog.closure(dag_hash) if edge.hash != dag_hash],
        dependents=[e for e in catalog.edges_of(dag_hash, reverse=True) if e.listed],
        node=catalog.node(dag_hash) or "{}",
        verifications=catalog.spec_verifications(dag_hash),
        first_seen=catalog.first_seen(dag_hash),
        unsigned_mirrors=catalog.unsigned_mirrors(),
    )


def spec_page_from(
    spec: SpecSummary,
    *,
    holders: Sequence[Holder],
    dependencies: Sequence[Edge],
    closure: list[Edge],
    dependents: Sequence[Edge],
    node: str,
    verifications: Sequence[SpecVerification] = (),
    first_seen: Sequence[FirstSeen] = (),
    unsigned_mirrors: Collection[tuple[str, str]] = frozenset(),
) -> SpecPage:
    """A spec's page from its parts (read one by one, or from a ``graph.SpecGraph``);
    ``unsigned_mirrors``: :meth:`Catalog.unsigned_mirrors`."""
    # Only binaries are downloaded: a dependency without one (an external) costs nothing.
    binaries = [e.size for e in closure if e.listed] + ([spec.size] if spec.tags else [])
    known = [size for size in binaries if size is not None]
    closure_size = sum(known) if known else None
    listed = closure[:CLOSURE_LISTED]
    if len(closure) > CLOSURE_LISTED:  # (the page names the largest: they stay, last)
        first = {id(edge) for edge in listed}
        listed += [e for e, _ in largest_dependencies(closure, closure_size) if id(e) not in first]
    # The catalog's summary of one hash leaves its stacks out (they are a tag's): its
    # answer says which stacks list it, as its tags, not "none".
    stacks = tuple(sorted({h.stack for h in holders if h.listed}, key=stack_order))
    # A mirror known not to sign, or whose latest verification found this spec
    # unsigned: Spack refuses to install it from a mirror added without --unsigned.
    unsigned = {(v.tag, v.stack) for v in verifications if v.signature == "unsigned"}
    unsigned.update(unsigned_mirrors)
    return SpecPage(
        spec=msgspec.structs.replace(spec, stacks=stacks) if stacks != tuple(spec.stacks) else spec,
        holders=tuple(holders),
        dependencies=tuple(dependencies),
        closure=tuple(listed),
        dependents=tuple(dependents),
        closure_size=closure_size,
        closure_unknown=len(binaries) - len(known),
        install=tuple(
            Install(
                h.tag,
                h.stack,
                install_commands(h.tag, h.stack, h.url, spec.hash, signed=(h.tag, h.stack) not in unsigned),
            )
            for h in holders
            if h.listed
        ),
        node=node,
        closure_binaries=len(binaries),
        verifications=tuple(verifications),
        first_seen=tuple(first_seen),
        closure_count=len(closure),
    )
