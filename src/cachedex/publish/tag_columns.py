"""A tag's specs as columns (:class:`SpecColumns`), what its page publishes for the
browser to filter: 250,000 specs fit in about a megabyte gzipped. Each column is read
in one pass of C; each package's specs come newest version first, in Spack's order.
Which of them filters select is :mod:`.facets`'."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any, NamedTuple

import msgspec

from ..query import target_names
from ..versions import version_key
from .folder_names import folder_clashes

__all__ = ["RUNS_ON", "SpecColumns", "TagSpecs", "machines", "newest_first", "tag_specs"]

#: The filter of the machines a spec's binary runs on (counted per machine: :mod:`.facets`).
RUNS_ON = "runs_on"


def machines(target: str) -> tuple[str, ...]:
    """The targets of the machines that run a binary built for ``target``: it, and every
    one archspec knows to descend from it, sorted (``x86_64_v3``: zen2 ... zen5, haswell ...)."""
    return target_names(f"{target}:")


def newest_first(versions: Iterable[str]) -> list[str]:
    """``versions``, distinct, newest first in Spack's order (equal ones by their text)."""
    return sorted(set(versions), key=lambda v: (version_key(v), v), reverse=True)


# -- a tag's specs as columns ------------------------------------------------------------------


class SpecColumns(msgspec.Struct, frozen=True):
    """Every spec a tag lists, as columns, for filtering in the browser.

    The specs of package ``names[n]`` are the next ``counts[n]`` entries of each
    column, newest version first. The ``version``, ``platform``, ``os`` and ``target``
    columns hold the index of each spec's value in ``values[<column>]``
    (``values["version"]`` is newest first); ``stacks`` holds the index of its stacks in
    ``stack_sets``, each a list of indexes into ``values["stack"]``, and ``compiler``
    the index of its compilers in ``compiler_sets`` (into ``values["compiler"]``: one,
    or more when several built it, as apple-clang its C and gcc its Fortran, and a
    ``%gcc`` search finds it); ``size`` its size
    in bytes, null when unknown (exact: a filtered row adds them up, and rounded ones
    made a sum the server, the API and the package page said otherwise). ``unlinked``: the indexes of
    packages whose name cannot be a folder name, which have no page. ``runs_on``: for
    each of ``values["target"]``, the indexes in ``values["runs_on"]`` of the machines
    that run its binaries (:func:`machines`)."""

    names: tuple[str, ...]
    counts: tuple[int, ...]
    values: dict[str, tuple[str, ...]]
    version: tuple[int, ...]
    compiler: tuple[int, ...]
    platform: tuple[int, ...]
    os: tuple[int, ...]
    target: tuple[int, ...]
    stacks: tuple[int, ...]
    stack_sets: tuple[tuple[int, ...], ...]
    compiler_sets: tuple[tuple[int, ...], ...]
    size: tuple[int | None, ...]
    unlinked: tuple[int, ...] = ()
    runs_on: tuple[tuple[int, ...], ...] = ()


class TagSpecs(NamedTuple):
    """A tag's specs: the columns its page publishes, and the exact sizes, which rows add."""

    columns: SpecColumns
    sizes: list[int | None]
    starts: list[int]  #: where each package's specs start; one more entry: the end


_COLUMNS = ("version", "platform", "os", "target")  #: (the compilers: sets, as the stacks)


class _Interned:
    """Values numbered in the order they come."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}

    def __call__(self, value: Any) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.index)
        return found


def tag_specs(
    packages: Iterable[tuple[str, Sequence[Any]]],
    has_page: Callable[[str], bool],
    others: Mapping[str, tuple[str, ...]] | None = None,
    *,
    folded: bool = True,
) -> TagSpecs:
    """The columns of a tag's specs, from ``(name, specs)`` by name; each spec has the
    fields of a ``SpecSummary``, ``stacks`` a tuple of names or, as the catalog's
    listing gives them, their text joined by ``\x1f``. ``others``: the compilers
    besides its own of each spec that several built, by hash (``Catalog.other_compilers``).
    ``folded``: whether names that are one folder where case is ignored lose their link
    (a static site's, as :attr:`.urls.PageLinks.folded`; the server answers each)."""
    names: list[str] = []
    counts: list[int] = []
    grouped: list[Sequence[Any]] = []
    for name, specs in packages:
        names.append(name)
        counts.append(len(specs))
        grouped.append(specs)
    # A big tag has 250,000 specs: each column is read in one pass of C (attrgetter,
    # map), and each package's specs are sorted by their version's rank among the tag's
    # (newest first), not by a version key compared again for every pair.
    versions = newest_first(map(_VERSION, itertools.chain.from_iterable(grouped)))
    rank = {version: n for n, version in enumerate(versions)}
    ordered: list[Any] = []
    for specs in grouped:
        ordered.extend(sorted(specs, key=lambda s: (rank[s.version], s.hash)))  # (as package pages)
    cells = {column: list(map(attrgetter(column), ordered)) for column in _COLUMNS}
    values = {column: sorted(set(cells[column])) for column in _COLUMNS}
    values["version"] = versions
    # A spec's compilers: its own, or (few) a tuple of it and the others that built it.
    own = map(_COMPILER, ordered)
    compiled: list[Any] = (
        [
            name if more is None else (name, *more)
            for name, more in zip(own, map(others.get, map(_HASH, ordered)), strict=True)
        ]
        if others
        else list(own)
    )
    compilers = {key: (key,) if isinstance(key, str) else key for key in dict.fromkeys(compiled)}
    values["compiler"] = sorted(set(itertools.chain.from_iterable(compilers.values())))
    # Most specs share their stacks with many: each distinct value is read once, in the
    # order they first come (which numbers the sets).
    holdings = list(map(_STACKS, ordered))
    held = {key: key.split("\x1f") if isinstance(key, str) and key else key for key in dict.fromkeys(holdings)}
    values["stack"] = sorted(set(itertools.chain.from_iterable(held.values())))
    run_by = [machines(target) for target in values["target"]]
    values[RUNS_ON] = sorted(set(itertools.chain.from_iterable(run_by)))
    position = {column: {v: n for n, v in enumerate(found)} for column, found in values.items()}
    stack_set = _Interned()
    stack_at = position["stack"]
    stack_ids = {key: stack_set(tuple(sorted({stack_at[stack] for stack in names}))) for key, names in held.items()}
    compiler_set = _Interned()
    compiler_at = position["compiler"]
    compiler_ids = {
        key: compiler_set(tuple(sorted({compiler_at[c] for c in names}))) for key, names in compilers.items()
    }
    sizes = list(map(_SIZE, ordered))
    paged = [name for name in names if has_page(name)]
    clashing = folder_clashes(paged) if folded else {}  # (no page either: as folder_names.package_clashes)
    linked = set(paged).difference(clashing)
    columns = SpecColumns(
        names=tuple(names),
        counts=tuple(counts),
        values={column: tuple(found) for column, found in values.items()},
        **{column: tuple(map(position[column].__getitem__, cells[column])) for column in _COLUMNS},
        stacks=tuple(map(stack_ids.__getitem__, holdings)),
        stack_sets=tuple(stack_set.index),
        compiler=tuple(map(compiler_ids.__getitem__, compiled)),
        compiler_sets=tuple(compiler_set.index),
        size=tuple(sizes),
        unlinked=tuple(n for n, name in enumerate(names) if name not in linked),
        runs_on=tuple(tuple(map(position[RUNS_ON].__getitem__, run)) for run in run_by),
    )
    return TagSpecs(columns, sizes, [0, *itertools.accumulate(counts)])


_VERSION, _STACKS, _SIZE = attrgetter("version"), attrgetter("stacks"), attrgetter("size")
_COMPILER, _HASH = attrgetter("compiler"), attrgetter("hash")
