"""The writing of one tag's package pages, ``_cache/<tag>/<package>/specs.md``, by this
process alone or shared among worker processes that each write whole packages (see
:mod:`.jekyll`, which removes the pages of packages that left the tag and records its
state). Apart from the run, its reports and the choice of tags: this is what a worker
process runs, its job and its result picklable at module level.

cache.spack.io's layout prints a page's title and its specs' values with Liquid, which
escapes nothing: a package whose name Spack's grammar cannot write (a mirror's
``<img src=x onerror=...>``) has no page, and a spec holding such a value (hash,
version, compiler, arch, variant, stack) is left out of its page and named
(:func:`.export_rules.shown_problem`, the export's rules). Each distinct value is
checked once; a package's hashes at once.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

from ..catalog import Catalog, ListedRow
from ..values import DAG_HASH
from .export_rules import RULES, Refusal, Shown, ShownGood, shown_problem
from .files import name_problem, quoted, update_file, write_atomically
from .jekyll_pages import PageWriter, SpecCounts

__all__ = ["NAMED_REFUSALS", "PAGE_NAME", "Share", "ShareJob", "write_pages", "write_share"]

PAGE_NAME = "specs.md"
#: Specs left out of a tag's pages that its report names; the others it counts.
NAMED_REFUSALS = 20
#: What a DAG hash is made of, and the space that joins a package's hashes.
_HASH_BYTES = b"abcdefghijklmnopqrstuvwxyz0123456789 "
#: Values seen good (see :func:`_good_values`).
_GOOD: ShownGood = (set(), set(), set(), set(), set(), set(), set())
_GOOD_LIMIT = 500_000
_row_hash = attrgetter("hash")
_row_shown = attrgetter("version", "compiler", "platform", "os", "target", "variants", "stacks")


def _packages(rows: Iterable[ListedRow]) -> Iterator[tuple[str, list[ListedRow]]]:
    """Group rows ordered by package name into (name, rows of that package)."""
    name: str | None = None
    group: list[ListedRow] = []
    for row in rows:
        if row.name != name:
            if group:
                yield name, group  # type: ignore[misc]
            name, group = row.name, []
        group.append(row)
    if group:
        yield name, group  # type: ignore[misc]


@dataclass
class Share:
    """What writing one share of a tag's packages did (picklable, for worker processes)."""

    kept: list[str] = field(default_factory=list)  # packages that have a page now
    skipped: list[str] = field(default_factory=list)
    #: specs left out (a value Spack cannot write): how many, and the first named
    #: (package, hash, what the report says): a tag's first are those of its shares'
    #: firsts in that order, however many shares there are
    refused: int = 0
    refusals: list[tuple[str, str, str]] = field(default_factory=list)
    #: listed specs no page shows: those refused, and those of the packages skipped
    left_out: int = 0
    specs: int = 0
    written: int = 0
    unchanged: int = 0
    compilers: Counter[str] = field(default_factory=Counter)
    parameters: Counter[str] = field(default_factory=Counter)


def write_pages(
    rows: Iterable[ListedRow],
    tag: str,
    folder: str,
    existing: Mapping[str, bool],
    unpaged: Mapping[str, str] | None = None,
) -> Share:
    """Write the page of each package in ``rows`` into ``folder/<package>/``.

    ``existing`` maps the names already in ``folder`` to True for a real folder (compare,
    then replace if changed) or False for a symlink or a file (skipped, never followed).
    ``unpaged``: the names that get no folder, and why (:func:`.folder_names.package_clashes`).
    """
    writer = PageWriter()
    counts = SpecCounts()
    share = Share()
    good = _good_values()
    spack_name = RULES["package name"].fullmatch
    for package, listed in _packages(rows):
        why = name_problem(package)
        if why is None and not spack_name(package):
            why = "a name Spack's grammar cannot write"
        if why is None and unpaged:
            why = unpaged.get(package)
        usable = existing.get(package)
        if why is None and usable is False:
            why = f"{os.path.join(folder, package)} is a symlink or a file; not followed"
        if why is not None:
            share.skipped.append(f"package {quoted(package)}: {why}")
            share.left_out += len(listed)
            continue
        package_rows = _writable(package, listed, good, share)
        share.left_out += len(listed) - len(package_rows)
        if not package_rows:  # (each refused: no page, an earlier one goes)
            continue
        share.kept.append(package)
        share.specs += len(package_rows)
        data = writer.page(tag, package, package_rows, counts)
        page_folder = os.path.join(folder, package)
        page = os.path.join(page_folder, PAGE_NAME)
        if usable is None:
            os.mkdir(page_folder)
            write_atomically(page, data)
            share.written += 1
        elif update_file(page, data):
            share.written += 1
        else:
            share.unchanged += 1
    share.compilers = counts.compilers()
    share.parameters = counts.parameters()
    return share


def _good_values() -> ShownGood:
    """The values seen good, kept across the tags this process writes (most repeat
    from tag to tag), emptied once they grow past :data:`_GOOD_LIMIT`."""
    if sum(map(len, _GOOD)) > _GOOD_LIMIT:
        for values in _GOOD:
            values.clear()
    return _GOOD


def _dag_hashes(joined: str, count: int) -> bool:
    """Whether ``joined`` is ``count`` DAG hashes joined by spaces: ``count`` runs of 32
    characters of ``[a-z0-9]`` (the only spaces are where they end). Twice as fast as a
    regular expression, which costs ~2 ns a character."""
    return (
        len(joined) == 33 * count - 1
        and joined.isascii()
        and joined.count(" ") == count - 1
        and joined[32::33] == " " * (count - 1)
        and not joined.encode().translate(None, _HASH_BYTES)
    )


def _writable(package: str, rows: list[ListedRow], good: ShownGood, share: Share) -> list[ListedRow]:
    """The rows of ``package`` whose values Spack can write; the others are counted in
    ``share``, the first :data:`NAMED_REFUSALS` named. Each spec of a tag passes
    through here: what its page shows is gathered by C code (``map``, ``set``), only
    the package's distinct combinations are looked up, its hashes all at once."""
    _, versions, compilers, arch, _, variant_lists, stack_sets = good
    refused: dict[Shown, tuple[str, str]] = {}
    for shown in set(map(_row_shown, rows)):
        version, compiler, platform, os_name, target, variants, stacks = shown
        if not (
            version in versions
            and compiler in compilers
            and platform in arch
            and os_name in arch
            and target in arch
            and variants in variant_lists
            and stacks in stack_sets
        ):
            problem = shown_problem(good, package, shown)
            if problem is not None:
                refused[shown] = problem
    hashes_good = _dag_hashes(" ".join(map(_row_hash, rows)), len(rows))
    if hashes_good and not refused:
        return rows
    writable: list[ListedRow] = []
    for row in rows:
        problem = None if hashes_good or DAG_HASH.fullmatch(row.hash) else ("hash", row.hash)
        problem = problem or refused.get(_row_shown(row))
        if problem is None:
            writable.append(row)
            continue
        share.refused += 1
        if len(share.refusals) < NAMED_REFUSALS:
            refusal = Refusal(row.hash, *problem)
            # (after "skipped ": "skipped package 'x': spec ..." read as the whole package skipped)
            line = f"spec {refusal} of package {quoted(package)}: a value Spack's grammar cannot write"
            share.refusals.append((package, row.hash, line))
    return writable


@dataclass(frozen=True)
class ShareJob:
    """One worker's part of a tag."""

    catalog: Path
    tag: str
    folder: str
    existing: dict[str, bool]
    part: int
    parts: int
    unpaged: dict[str, str]


def write_share(job: ShareJob) -> Share:
    """Worker process: write the pages of share ``job.part`` of ``job.parts``."""
    with Catalog(job.catalog, readonly=True) as catalog:
        rows = catalog.listed_rows(job.tag, part=job.part, parts=job.parts)
        return write_pages(rows, job.tag, job.folder, job.existing, job.unpaged)
