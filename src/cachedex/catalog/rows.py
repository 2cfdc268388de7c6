"""What the catalog's reads return: typed results, and the row shapes of its bulk reads.

Two kinds of result:

- small frozen structs (:class:`MirrorState`, :class:`TagStats`, :class:`SpecSummary`,
  :class:`Edge`, :class:`SearchPage`) for point reads and the JSON API;
- :class:`~typing.NamedTuple` row shapes (:class:`ListedRow`, :class:`SpecRow`,
  :class:`DependentRow`, :class:`SizeKey`, :class:`HolderRow`, :class:`HoldingMirror`)
  for the bulk reads that publishers stream by the hundred thousand. Each shape is
  declared once, here, with the SQL expression of each field: :func:`select_list`
  builds the SELECT from the shape's fields, so the column order cannot drift from the
  names readers use (``row.hash``, never ``row[1]``).

Every spec-describing shape keeps one field order: hash, name, version, compiler,
platform, os, target.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Iterable, Iterator
from typing import Any, NamedTuple, TypeVar

import msgspec

from ..values import decode_variants

__all__ = [
    "FEW_NAMES",
    "HAS_BINARY",
    "DependentRow",
    "Edge",
    "HolderRow",
    "HoldingMirror",
    "KnownSpecs",
    "ListedRow",
    "MirrorState",
    "SearchPage",
    "SizeKey",
    "SpecConfig",
    "SpecRow",
    "SpecSummary",
    "TagStats",
    "among",
    "as_rows",
    "few_names",
    "select_list",
    "summary_of",
]


class MirrorState(msgspec.Struct, frozen=True):
    """A mirror's row: where it is and what its last successful sync found."""

    tag: str
    stack: str  #: ``root`` for the tag's own mirror
    url: str
    layout: int | None  #: build-cache layout version: 1, 2 or 3
    db_version: int | None  #: Database version of its index
    checksum: str | None  #: sha256 of its index
    etag: str | None
    last_modified: str | None
    fetched_at: float | None  #: epoch seconds of the last successful read
    records: int | None  #: records of its index
    listed: int | None  #: records with a binary (``in_buildcache``)
    view: str | None = None  #: the buildcache view of the mirror at ``url`` read as this stack
    own_index: bool = True  #: False for the root of a mirror of views only: it lists what its stacks list
    #: whether the mirror signs its binaries, as the last sync of a changed index read
    #: a few of its manifests and its key index (``ingest.mirror_signing``); None when
    #: not known (another layout, nothing readable; a v3 mirror's row with a ``signed_at``
    #: was looked at for this index and is not sampled again: ``catalog.mirror_rows``)
    signed: bool | None = None


class KnownSpecs(msgspec.Struct, frozen=True):
    """What the catalog knew of some hashes, as of one state of its file."""

    ids: dict[str, int]  #: hash -> id of each hash the catalog has
    sized: frozenset[str]  #: those of them whose binary size it knows
    as_of: int  #: ``PRAGMA data_version`` when read: unchanged while no other process commits


class TagStats(msgspec.Struct, frozen=True):
    """Totals of one tag, as ``cachedex stats`` prints them."""

    tag: str
    records: int  #: distinct records over all its mirrors
    specs: int  #: specs its root mirror lists
    packages: int  #: distinct names of those
    stacks: int  #: mirrors besides the root
    size: int  #: bytes of the listed specs whose size is known
    sized: int  #: listed specs whose size is known
    synced_at: float | None  #: epoch seconds of the last sync
    added: int  #: listed specs the last sync added
    removed: int  #: listed specs the last sync removed
    #: the last sync was the tag's first: nothing was listed before it, so ``added`` and
    #: ``removed`` (0) say nothing
    last_was_first: bool = False


# gc=False: instances hold only strings and numbers, so the garbage collector need not
# track them; a whole-site build keeps millions of them.
class SpecSummary(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A concrete spec (one DAG hash) as search results and pages show it."""

    hash: str  #: the DAG hash, 32 characters
    name: str
    version: str
    compiler: str  #: ``name@version``, or ``none``
    platform: str
    os: str
    target: str  #: the target's name (``x86_64_v3``, ``neoverse_v1``)
    variants: tuple[str, ...]  #: as Spack 1.x prints them (``+mpi``, ``cuda_arch:=80``)
    size: int | None  #: bytes of the binary; null when unknown
    tags: tuple[str, ...]  #: the tags listing it (the searched tag only, when one was given)
    #: the stacks listing it, ``root`` first: of the searched tag (a spec's page: of every
    #: tag); empty in a search of every tag
    stacks: tuple[str, ...]
    #: The compilers of its other languages when more than one compiler built it
    #: (``compiler`` is its C's: apple-clang, and gcc for its Fortran, which ``%gcc`` and
    #: a page's Compiler filter find it by); left out when one did
    other_compilers: tuple[str, ...] = ()


class Edge(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A spec at the other end of a dependency edge.

    In JSON, ``deptypes`` and ``virtuals`` are left out when they are 0 and ``""``
    (always, in a closure): the JSON twin of a spec page with a big closure is an
    eighth smaller."""

    hash: str
    name: str
    version: str
    listed: bool  #: some mirror has its binary
    size: int | None  #: bytes of that binary, when known
    deptypes: int = 0  #: of a direct edge (bits: build 1, link 2, run 4, test 8); 0 in a closure
    virtuals: str = ""  #: comma-separated virtuals the edge provides


class SearchPage(msgspec.Struct, frozen=True):
    """One page of search results and the number of all matches."""

    total: int  #: specs matching, over all pages
    offset: int
    limit: int
    specs: tuple[SpecSummary, ...]  #: by package name, newest version first (Spack's order), then hash
    hints: tuple[str, ...] = ()  #: when nothing matches: which condition nothing satisfies
    #: when nothing matches: the search likely meant, which finds specs ("hdf5 target=:zen3",
    #: what runs on zen3, for "hdf5 target=zen3"; "hdf5 ^mpi" for "hdf5 ^mpi@3", a virtual's
    #: version not compared); "" when there is none
    suggestion: str = ""


# -- row shapes of the bulk reads ---------------------------------------------------------


class ListedRow(NamedTuple):
    """A spec a tag's root mirror lists, undecoded, as publishers stream it."""

    hash: str
    name: str
    version: str
    compiler: str
    platform: str
    os: str
    target: str
    variants: str  #: the stored JSON list of display strings (compact, as msgspec wrote it)
    size: int | None
    stacks: str  #: the tag's mirrors whose index holds it, ``root`` included, joined by ``\x1f``, unsorted


class SpecRow(NamedTuple):
    """A spec of the catalog, for building every spec page at once."""

    id: int
    hash: str
    name: str
    version: str
    compiler: str
    platform: str
    os: str
    target: str
    variants: str  #: JSON text, as in :class:`ListedRow`
    size: int | None
    listed: int  #: 1 when some mirror has its binary


def summary_of(
    row: ListedRow | SpecRow,
    *,
    tags: tuple[str, ...],
    stacks: tuple[str, ...] = (),
    other_compilers: tuple[str, ...] = (),
) -> SpecSummary:
    """The summary pages show of a bulk-read row, with the tags, stacks and other
    compilers the caller knows."""
    return SpecSummary(
        hash=row.hash,
        name=row.name,
        version=row.version,
        compiler=row.compiler,
        platform=row.platform,
        os=row.os,
        target=row.target,
        variants=decode_variants(row.variants),
        size=row.size,
        tags=tags,
        stacks=stacks,
        other_compilers=other_compilers,
    )


class DependentRow(NamedTuple):
    """A spec with a binary, as a spec page lists it among the dependents of another."""

    id: int
    hash: str
    name: str
    version: str
    size: int | None


class SpecConfig(NamedTuple):
    """How and for what a spec was built: what most often tells apart the specs of one
    package and version (a spec page labels its dependents with what differs)."""

    hash: str
    variants: str  #: JSON text, as in :class:`ListedRow`
    #: the ``compiler`` column; as :meth:`Catalog.spec_configs` gives it, with the others
    #: that built it (:func:`~cachedex.values.compilers_text`: two builds may differ in their gfortran alone)
    compiler: str
    os: str
    target: str


class SizeKey(NamedTuple):
    """What locating a spec's manifest or tarball needs."""

    hash: str
    name: str
    version: str
    compiler: str
    platform: str
    os: str
    target: str


class HolderRow(NamedTuple):
    """A mirror whose index holds a spec."""

    spec_id: int
    tag: str
    stack: str
    listed: int  #: 1 when that mirror has the binary
    url: str
    layout: int | None  #: the mirror's layout (2, 3; 100 for OCI), None before its first read


class HoldingMirror(NamedTuple):
    """A mirror, as the holders of the specs whose records it holds show it."""

    id: int
    tag: str
    stack: str
    url: str
    layout: int | None  #: as :attr:`HolderRow.layout`


_Row = TypeVar("_Row", bound=tuple[Any, ...])

_SPEC_COLUMNS = {name: f"s.{name}" for name in SizeKey._fields}

#: SQL: whether the spec ``s`` has a binary in some mirror (a member row marked listed).
HAS_BINARY = "EXISTS (SELECT 1 FROM members mb WHERE mb.spec_id = s.id AND mb.listed)"

#: The SQL expression of each field of each shape (``s``: specs; ``m``/``t``/``mb``:
#: mirrors, tags, members). ``?`` in ListedRow's stacks is the tag's id.
_EXPRESSIONS: dict[type, dict[str, str]] = {
    ListedRow: {
        **_SPEC_COLUMNS,
        "variants": "s.variants",
        "size": "s.size",
        "stacks": "(SELECT group_concat(m2.stack, char(31)) FROM members mb2 JOIN mirrors m2 "
        "ON m2.id = mb2.mirror_id WHERE mb2.spec_id = s.id AND m2.tag_id = ? AND m2.own_index)",
    },
    SpecRow: {
        "id": "s.id",
        **_SPEC_COLUMNS,
        "variants": "s.variants",
        "size": "s.size",
        "listed": HAS_BINARY,
    },
    DependentRow: {"id": "s.id", "hash": "s.hash", "name": "s.name", "version": "s.version", "size": "s.size"},
    SizeKey: _SPEC_COLUMNS,
    SpecConfig: {
        "hash": "s.hash",
        "variants": "s.variants",
        "compiler": "s.compiler",
        "os": "s.os",
        "target": "s.target",
    },
    HoldingMirror: {"id": "m.id", "tag": "t.name", "stack": "m.stack", "url": "m.url", "layout": "m.layout"},
    HolderRow: {
        "spec_id": "mb.spec_id",
        "tag": "t.name",
        "stack": "m.stack",
        "listed": "mb.listed",
        "url": "m.url",
        "layout": "m.layout",
    },
}


def select_list(shape: type) -> str:
    """The SELECT list that yields rows of ``shape``: each field's expression, named as
    the field (SQLite's column names are then the shape's fields, in order)."""
    expressions = _EXPRESSIONS[shape]
    fields: tuple[str, ...] = shape._fields  # type: ignore[attr-defined]
    return ", ".join(f"{expressions[field]} AS {field}" for field in fields)


#: Up to this many package names, a read of a tag's listing (its rows, its counts) finds
#: their specs by the name index, each checked against the mirrors, rather than every
#: member of the tag's mirrors checked by name (25 packages of the bench tag: 5 ms against
#: 70-400 ms; from ~1,000-2,500 on, about the same).
FEW_NAMES = 1000


def few_names(names: Collection[str] | None) -> bool:
    """Whether a read of ``names`` (None: every package) goes by the name index first."""
    return names is not None and len(names) <= FEW_NAMES


def among(
    column: str, values: Collection[int] | Collection[str] | None, joiner: str = "WHERE"
) -> tuple[str, tuple[str, ...]]:
    """A condition keeping the rows whose ``column`` is one of ``values`` (None: every
    row), and its parameter."""
    if values is None:
        return "", ()
    return f" {joiner} {column} IN (SELECT value FROM json_each(?))", (json.dumps(list(values)),)


def as_rows(shape: type[_Row], rows: Iterable[tuple[Any, ...]]) -> Iterator[_Row]:
    """Plain tuples from SQLite as ``shape`` rows: 0.2 us a row, a C loop, no Python call."""
    return map(functools.partial(tuple.__new__, shape), rows)
