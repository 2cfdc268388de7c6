"""The writing of one tag's package pages, ``_cache/<tag>/<package>/specs.md``, by this
process alone or shared among worker processes that each write whole packages (see
:mod:`.jekyll`, which removes the pages of packages that left the tag and records its
state). Apart from the run, its reports and the choice of tags: this is what a worker
process runs, its job and its result picklable at module level.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog import Catalog, ListedRow
from .files import name_problem, quoted, update_file, write_atomically
from .jekyll_pages import PageWriter, SpecCounts

__all__ = ["PAGE_NAME", "Share", "ShareJob", "write_pages", "write_share"]

PAGE_NAME = "specs.md"


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
    specs: int = 0
    written: int = 0
    unchanged: int = 0
    compilers: Counter[str] = field(default_factory=Counter)
    parameters: Counter[str] = field(default_factory=Counter)


def write_pages(rows: Iterable[ListedRow], tag: str, folder: str, existing: Mapping[str, bool]) -> Share:
    """Write the page of each package in ``rows`` into ``folder/<package>/``.

    ``existing`` maps the names already in ``folder`` to True for a real folder (compare,
    then replace if changed) or False for a symlink or a file (skipped, never followed).
    """
    writer = PageWriter()
    counts = SpecCounts()
    share = Share()
    for package, package_rows in _packages(rows):
        why = name_problem(package)
        usable = existing.get(package)
        if why is None and usable is False:
            why = f"{os.path.join(folder, package)} is a symlink or a file; not followed"
        if why is not None:
            share.skipped.append(f"package {quoted(package)}: {why}")
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


@dataclass(frozen=True)
class ShareJob:
    """One worker's part of a tag."""

    catalog: Path
    tag: str
    folder: str
    existing: dict[str, bool]
    part: int
    parts: int


def write_share(job: ShareJob) -> Share:
    """Worker process: write the pages of share ``job.part`` of ``job.parts``."""
    with Catalog(job.catalog, readonly=True) as catalog:
        rows = catalog.listed_rows(job.tag, part=job.part, parts=job.parts)
        return write_pages(rows, job.tag, job.folder, job.existing)
