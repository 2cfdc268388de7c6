"""Write the catalog as a cache.spack.io-compatible Jekyll site (format doc §4, §6.3).

For each tag, ``OUTDIR/_cache/<tag>/<package>/specs.md`` holds one package's listed specs
as Jekyll front matter, byte for byte as cache.spack.io writes it::

    ---
    title: "<package>"
    layout: cache
    categories: [package, <tag>]
    meta: {"compilers": [...], "num_specs": N, "num_specs_by_stack": {...}, ...}
    spec_details: [{"compiler": ..., "hash": ..., ..., "versions": [...]}, ...]
    ---

(no newline after the closing ``---``), plus ``OUTDIR/_data/tags.yaml`` (per tag its
sorted stacks, root included) and ``OUTDIR/_data/meta.yaml`` (per tag the Database
version, the records of the root index, and the listed specs per compiler and per
truthy variant name; ``all`` sums them). Unlike cache.spack.io, which counts every node
of each listed spec's DAG and includes compiler flags, meta.yaml counts each listed
spec once and variants only: flags live in the raw node, and parsing every node would
cost more than all the pages. The JSON is what ``json.dumps(value, sort_keys=True)`` gives
(``", "`` and ``": "`` separators, non-ASCII escaped, but a character beyond U+FFFF as
itself: see :mod:`.jekyll_pages`); it is assembled from memoised
pieces because a big tag has hundreds of thousands of specs, and a big tag is shared
among worker processes (each writes whole packages).

Rules that keep a site directory safe to regenerate:

- only ``OUTDIR/_cache/<tag>/`` of the tags written, and ``OUTDIR/_data/{tags,meta}.yaml``,
  are ever written; nothing else in OUTDIR is touched;
- a file whose bytes would not change is not rewritten (its mtime stays);
- ``_cache/<tag>/.cachedex-jekyll`` records the tag's state (its totals and mirror
  rows) and this code's, once its pages are written: a run that finds the same there
  reads and writes none of the tag's pages (``full`` compares them anyway); Jekyll
  skips files whose names start with a dot;
- every write goes to a temporary file in the same folder, then ``os.replace``;
- a package that left a tag loses its ``specs.md`` (and its folder, once empty);
- tag and package names become folder names: a name :func:`.files.name_problem` refuses
  (``check_name``'s rules, or longer than a file name may be), or a folder that is a
  symlink, is skipped and reported, never followed; the other packages are written;
- cache.spack.io's layout prints the pages' values with Liquid, which escapes nothing: a
  package whose name Spack's grammar cannot write has no page, a spec holding such a
  value is left out of its page (:mod:`.jekyll_shares`, the export's rules), a tag or
  stack that is no label (as the config has them) is left out; each is reported.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ..catalog import Catalog
from ..errors import JekyllError
from ..values import ROOT_STACK, counted
from .files import (
    held_alone,
    remove_stale_temporaries,
    safe_folder,
    update_file,
)
from .folder_names import package_clashes
from .jekyll_data import RECORD, Record, TagSummary, meta_yaml, read_record, read_yaml, tag_state, tags_yaml
from .jekyll_names import selected_tags, stack_labels
from .jekyll_shares import NAMED_REFUSALS, PAGE_NAME, ShareJob, write_pages, write_share
from .parallel import new_pool, worker_count

__all__ = ["PARALLEL_MIN_SPECS", "JekyllReport", "TagReport", "write_jekyll"]

#: The files a run writes (through ``.<name>.<pid>.tmp``) in a tag's folders, and in _data.
_TAG_FILES = re.compile(re.escape(PAGE_NAME) + "|" + re.escape(RECORD))
_DATA_FILES = re.compile(r"tags\.yaml|meta\.yaml")
#: A tag with fewer listed specs is written by this process alone: starting workers
#: (~0.1 s) would cost more than they save.
PARALLEL_MIN_SPECS = 20_000


@dataclass(frozen=True)
class TagReport:
    """What :func:`write_jekyll` did for one tag."""

    tag: str
    directory: Path  # OUTDIR/_cache/<tag>
    pages: int  # package pages the tag has now
    specs: int  # listed specs on those pages
    written: int  # pages created or changed
    unchanged: int  # pages whose bytes were already right (not rewritten)
    removed: int  # pages of packages that left the tag
    #: one message per package not written, and why; then the first specs left out of
    #: their pages (a value Spack cannot write), the others counted in one more
    skipped: tuple[str, ...] = ()
    workers: int = 1  # processes that wrote the pages
    current: bool = False  # its record said it was built from this state: nothing read or written


@dataclass(frozen=True)
class JekyllReport:
    """What :func:`write_jekyll` did: per tag, the ``_data`` files, and the time taken."""

    outdir: Path
    tags: tuple[TagReport, ...]
    data_written: tuple[str, ...]  # paths relative to outdir of the _data files rewritten
    data_unchanged: tuple[str, ...]
    seconds: float
    skipped: tuple[str, ...] = ()  # tags not written (and stacks not in tags.yaml), and why
    #: tags cachedex had written that left the catalog (``cachedex forget``): their pages removed
    gone: tuple[tuple[str, int], ...] = ()

    @property
    def written(self) -> int:
        """Pages created or changed, all tags."""
        return sum(t.written for t in self.tags)

    @property
    def unchanged(self) -> int:
        """Pages left as they were, all tags."""
        return sum(t.unchanged for t in self.tags)

    @property
    def removed(self) -> int:
        """Pages removed because their package left the tag, all tags."""
        return sum(t.removed for t in self.tags)

    @property
    def pages(self) -> int:
        """Pages the written tags have now."""
        return sum(t.pages for t in self.tags)


# -- files ---------------------------------------------------------------------------


def _safe_folder(outdir: Path, *parts: str) -> Path:
    return safe_folder(outdir, *parts, error=JekyllError)


# -- one tag -------------------------------------------------------------------------


def _existing_folders(folder: Path) -> dict[str, os.DirEntry[str]]:
    """The entries of a tag folder (package folders of an earlier run, and anything else)."""
    with os.scandir(folder) as entries:
        return {entry.name: entry for entry in entries}


def _write_tag(
    catalog: Catalog,
    outdir: Path,
    tag: str,
    workers: int | None,
    full: bool = False,
    package_tags: Callable[[], dict[str, list[tuple[str, int]]]] | None = None,
) -> tuple[TagReport, TagSummary]:
    """Write the pages of one tag, remove those of packages that left it; nothing when
    its record says they were written from this state (unless ``full``)."""
    folder = _safe_folder(outdir, "_cache", tag)
    record_path = folder / RECORD
    state = tag_state(catalog, tag)
    found = read_record(record_path)
    if found is not None and found.state == state and not full:
        summary = TagSummary(found.version, found.count, Counter(found.compilers), Counter(found.parameters))
        report = TagReport(tag, folder, found.pages, found.specs, 0, found.pages, 0, found.skipped, current=True)
        return report, summary
    mine = catalog.identity()
    if found is None or found.state != state:
        # Pages change now: the record no longer holds, but still names the catalog that
        # writes them (a run stopped from here on leaves pages that a later `forget` of
        # the tag must know as this catalog's; a state of none is never current).
        pending = Record(b"", 0, 0, (), "", 0, {}, {}, mine)
        update_file(str(record_path), msgspec.msgpack.encode(pending))
    entries = _existing_folders(folder)
    existing = {name: not entry.is_symlink() and entry.is_dir() for name, entry in entries.items()}
    root = next((m for m in catalog.mirrors(tag) if m.stack == ROOT_STACK), None)
    parts = worker_count((root.listed or 0) if root else 0, threshold=PARALLEL_MIN_SPECS, requested=workers)
    # (the shares split the names: which clash is seen over all of them)
    unpaged = package_clashes((package_tags or catalog.all_package_tags)(), tag)
    if parts == 1:
        shares = [write_pages(catalog.listed_rows(tag), tag, str(folder), existing, unpaged)]
    else:
        jobs = [ShareJob(catalog.path, tag, str(folder), existing, part, parts, unpaged) for part in range(parts)]
        with new_pool(parts) as pool:
            shares = pool.map(write_share, jobs, chunksize=1)
    left_out = sum(share.left_out for share in shares)
    summary = TagSummary(
        version=str(root.db_version) if root and root.db_version is not None else "",
        # (cache.spack.io's generator counts the binaries its pages list, and the index's
        # records only for a tag with none; the specs no page shows are not counted)
        count=max((root.listed or root.records or 0) - left_out, 0) if root else 0,
    )
    kept: set[str] = set()
    skipped: list[str] = []
    refusals: list[tuple[str, str, str]] = []
    for share in shares:
        kept.update(share.kept)
        skipped.extend(share.skipped)
        refusals.extend(share.refusals)
        summary.compilers.update(share.compilers)
        summary.parameters.update(share.parameters)
    removed = _remove_left_packages(entries, kept)
    # What a killed run left half-written here (this tag was not current: it may be why).
    folders = [str(folder), *(entry.path for name, entry in entries.items() if existing[name])]
    remove_stale_temporaries(folders, _TAG_FILES)
    pages, specs = len(kept), sum(s.specs for s in shares)
    skips = tuple(sorted(skipped)) + _refused([line for *_, line in sorted(refusals)], sum(s.refused for s in shares))
    record = Record(
        state,
        pages,
        specs,
        skips,
        summary.version,
        summary.count,
        dict(summary.compilers),
        dict(summary.parameters),
        mine,
    )
    update_file(str(record_path), msgspec.msgpack.encode(record))
    report = TagReport(
        tag,
        folder,
        pages,
        specs,
        sum(s.written for s in shares),
        sum(s.unchanged for s in shares),
        removed,
        skips,
        parts,
    )
    return report, summary


def _refused(named: list[str], count: int) -> tuple[str, ...]:
    """What a tag's report says of the specs left out: the first few named (each share
    named its first, in package then hash order: these hold the tag's first), the
    others counted."""
    shown = named[:NAMED_REFUSALS]
    more = count - len(shown)
    return (
        (*shown, f"{counted(more, 'more spec')} holding a value Spack's grammar cannot write") if more else tuple(shown)
    )


def _remove_left_packages(existing: Mapping[str, os.DirEntry[str]], kept: set[str]) -> int:
    """Delete ``specs.md`` of package folders not in ``kept``, and the folder once empty.

    Only real folders holding a ``specs.md`` count as pages: anything else in the tag
    folder (a README, a symlink, a user's folder) is left alone.
    """
    removed = 0
    for name, entry in existing.items():
        if name in kept or entry.is_symlink() or not entry.is_dir():
            continue
        page = os.path.join(entry.path, PAGE_NAME)
        if not os.path.isfile(page) or os.path.islink(page):
            continue
        os.unlink(page)
        removed += 1
        try:
            os.rmdir(entry.path)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
    return removed


# -- entry point ---------------------------------------------------------------------


def write_jekyll(
    catalog: Catalog, outdir: Path, *, tags: list[str] | None = None, workers: int | None = None, full: bool = False
) -> JekyllReport:
    """Write the pages of ``tags`` (default: every tag of the catalog) under ``outdir``.

    A tag of at least :data:`PARALLEL_MIN_SPECS` listed specs is shared among ``workers``
    processes (default: one per CPU, at most ``parallel.MAX_WORKERS``; 1 disables this).

    Returns a :class:`JekyllReport` (pages written, unchanged, removed per tag; the
    ``_data`` files rewritten; names skipped; seconds). Raises :class:`JekyllError` for a
    tag not in the catalog, a folder of OUTDIR that is a symlink or a file where a folder
    must be, an unreadable ``_data`` file, or an OS error (the message names the path).
    Unchanged files are not rewritten; tags not selected keep their pages. A tag whose
    record says its pages were written from its current state is left alone (``current``
    in its report), unless ``full``.
    """
    started = time.perf_counter()
    outdir = Path(outdir).resolve()
    selected, skipped_tags = selected_tags(catalog, tags)
    data_written: list[str] = []
    data_unchanged: list[str] = []
    reports: list[TagReport] = []
    try:
        if not selected and (tags is not None or not (outdir / "_cache").is_dir()):  # (nothing to write or remove)
            return JekyllReport(outdir, (), (), (), time.perf_counter() - started, tuple(skipped_tags))
        outdir.mkdir(parents=True, exist_ok=True)
        with held_alone(outdir, JekyllError):  # one run at a time: two race for the same folders
            # Read the _data files first: a broken one stops the run before any page changes.
            data = _safe_folder(outdir, "_data")
            remove_stale_temporaries([str(data)], _DATA_FILES)
            tags_path, meta_path = data / "tags.yaml", data / "meta.yaml"
            previous_tags = read_yaml(tags_path, list)
            previous_meta = read_yaml(meta_path, dict)
            # Tags this catalog wrote (their record names it) that it no longer has: their
            # pages and _data entries go; a tag another catalog or hand wrote stays. Their
            # records go last, once _data no longer names them: a run stopped before then
            # leaves them for the next, which would otherwise not know whose they were.
            leaving = _gone_tags(outdir, catalog) if tags is None else {}
            for tag in leaving:
                previous_meta = {k: v for k, v in (previous_meta or {}).items() if k != tag}
                previous_tags = [e for e in previous_tags or () if not (isinstance(e, dict) and e.get("name") == tag)]
            summaries: dict[str, TagSummary] = {}
            stacks: dict[str, list[str]] = {}
            # (read once, when a tag is written: every tag's packages, to tell clashing names)
            package_tags = functools.cache(catalog.all_package_tags)
            for tag in selected:
                report, summary = _write_tag(catalog, outdir, tag, workers, full, package_tags)
                reports.append(report)
                summaries[tag] = summary
                stacks[tag] = stack_labels(tag, [m.stack for m in catalog.mirrors(tag)], skipped_tags)
            for path, content in (
                (tags_path, tags_yaml(previous_tags, stacks)),
                (meta_path, meta_yaml(previous_meta, summaries)),
            ):
                relative = str(path.relative_to(outdir))
                (data_written if update_file(str(path), content) else data_unchanged).append(relative)
            gone = {tag: _remove_tag_pages(folder) for tag, folder in leaving.items()}
    except OSError as exc:
        where = exc.filename2 or exc.filename or outdir  # (a replace's target, not its temporary file)
        raise JekyllError(f"{where}: {exc.strerror or exc}") from exc
    return JekyllReport(
        outdir=outdir,
        tags=tuple(reports),
        data_written=tuple(data_written),
        data_unchanged=tuple(data_unchanged),
        seconds=time.perf_counter() - started,
        skipped=tuple(skipped_tags),
        gone=tuple(gone.items()),
    )


def _gone_tags(outdir: Path, catalog: Catalog) -> dict[str, str]:
    """{tag: its folder} of each ``_cache/<tag>`` whose record says ``catalog`` wrote it
    and whose tag it no longer has."""
    gone: dict[str, str] = {}
    cache = outdir / "_cache"
    if not cache.is_dir() or cache.is_symlink():
        return gone
    known, mine = set(catalog.tag_names()), catalog.identity()
    for name, entry in _existing_folders(cache).items():
        if name in known or entry.is_symlink() or not entry.is_dir():
            continue
        record = os.path.join(entry.path, RECORD)
        found = read_record(Path(record)) if not os.path.islink(record) else None
        if found is not None and found.catalog == mine:
            gone[name] = entry.path
    return gone


def _remove_tag_pages(folder: str) -> int:
    """Remove a gone tag's pages, then its record (and its folder when nothing else is
    there); the pages removed."""
    removed = _remove_left_packages(_existing_folders(Path(folder)), set())
    os.unlink(os.path.join(folder, RECORD))
    with contextlib.suppress(OSError):  # (not empty: something else is there)
        os.rmdir(folder)
    return removed
