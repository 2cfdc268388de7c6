"""The files of a ``cachedex site`` folder: writing pages, the spec pages' folder, and
removing what left (pages of packages and specs, and temporary files of killed runs).

:mod:`.site` decides what to write and in which order; this module only touches files,
and never outside the site folder (see :mod:`.files`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputError
from ..values import is_dag_hash
from .edge_lists import Configs, EdgeItems
from .files import (
    Replacer,
    remove_old_files,
    remove_stale_temporaries,
    safe_folder,
    same_bytes,
    update_file,
    write_atomically,
    write_new,
)
from .gzipped import gzip_bytes
from .pages import PackagePage, SpecPage, TagPage
from .render import COLUMNS_FILE, columns_json, render, to_json
from .urls import SITE_PAGES, Page, PageLinks, json_path, page_path, spec_path

__all__ = [
    "GZIP_TWIN",
    "PACKAGES_STAGING",
    "PAGES_PER_RUN",
    "STAGING",
    "STAMP",
    "KeptFiles",
    "SiteWriter",
    "StagedWriter",
    "first_build",
    "place_staged_packages",
    "remove_others",
    "remove_pages_of",
    "remove_spec_pages",
    "remove_stale_files",
    "spec_folder",
    "spec_pages_exist",
    "staging",
]

#: Pages written in one run (see :meth:`SiteWriter.flush`): about 10 MB of spec pages.
PAGES_PER_RUN = 500

#: What rendered the site's pages (see :func:`.render.render_stamp`), written after
#: each build that completed from one state of the catalog.
STAMP = ".cachedex-site"

#: Where a first build writes spec pages before renaming the folder to ``specs``.
STAGING = ".specs-staging"

#: Where a first build shared among processes writes package pages (as
#: ``tags/<tag>/packages/...`` under it) before renaming each tag's folder into place,
#: once the spec pages they link to are: a worker starts on them while the graph is read.
PACKAGES_STAGING = ".packages-staging"

#: A JSON twin at least this long gets a gzipped copy beside it (``index.json.gz``), as
#: does every tag page's (its script reads it): many static hosts do not compress.
GZIP_TWIN = 256 * 1024


class SiteWriter:
    """Writes pages into a site folder and counts files written and left alone.

    With ``trust_twins`` (the site was last built by templates identical to these, see
    :func:`.render.render_stamp`), a page whose JSON twin on disk already holds its
    data is left alone without rendering its HTML, which depends on nothing else: a
    re-run over an unchanged catalog then costs a fraction of a first build. HTML is
    written before its twin, so a build stopped between the two is redone next time.
    ``links`` (:class:`.urls.PageLinks`) are in no twin: a build with others trusts none."""

    def __init__(
        self,
        outdir: Path,
        *,
        trust_twins: bool = False,
        edge_items: EdgeItems | None = None,
        links: PageLinks = SITE_PAGES,
    ) -> None:
        self.outdir = outdir
        self.trust_twins = trust_twins
        self.links = links  #: which names the pages link (see :func:`.urls.page_links`)
        self.edge_items = edge_items if edge_items is not None else EdgeItems()
        self.configs: Configs | None = None  #: how spec pages find their dependents' builds
        self._replacer = Replacer(str(outdir))  # old files removed off the build's path
        self.written = 0
        self.unchanged = 0
        self.pages = 0
        self._pending: list[tuple[str, str, Page, bool]] = []  # (html, twin, page, staged): see flush()

    #: Whether this writer's folder is a staging one (see :class:`StagedWriter`).
    staged = False

    def file(self, relative: str, data: bytes) -> None:
        *folders, name = relative.split("/")
        self._store(str(safe_folder(self.outdir, *folders) / name), data, staged=self.staged)

    def page(self, page: Page) -> None:
        path = page_path(page)
        folder = str(safe_folder(self.outdir, *path.split("/")[:-1]))
        html = os.path.join(folder, path.rsplit("/", 1)[-1])
        self._pair(html, json_path(html), page, staged=self.staged)

    def spec_page(self, specs: str, page: SpecPage, *, staged: bool) -> None:
        """A spec page as ``<ab>/<hash>.html`` and ``.json`` in ``specs``, a folder
        :func:`spec_folder` chose (and made its ``<ab>`` folders). A DAG hash is a
        safe file name, so this skips the checks a page named after a package needs (on
        a 250,000-spec site they cost more than the writing)."""
        dag_hash = page.spec.hash
        if not is_dag_hash(dag_hash):
            raise OutputError(f"{dag_hash!r}: not a DAG hash, refusing it as a file name")
        base = os.path.join(specs, dag_hash[:2], dag_hash)
        self._pair(base + ".html", base + ".json", page, staged=staged)

    def _pair(self, html: str, twin: str, page: Page, *, staged: bool) -> None:
        """A page and its JSON twin, HTML first, kept until a run of them is written
        (:meth:`flush`)."""
        self._pending.append((html, twin, page, staged))
        if len(self._pending) >= PAGES_PER_RUN:
            self.flush()

    def flush(self) -> None:
        """Write the pages kept so far, a stage at a time for all of them: their JSON,
        which pages changed, their HTML, their files in order. Each stage then finds
        its code and data still in the CPU's caches (figures: bench/README.md, site).

        In a ``staged`` folder, which nobody reads until it is renamed into place
        whole, files are written directly instead of replaced, and nothing there is old
        enough to trust."""
        pending, self._pending = self._pending, []
        twins = [to_json(page) for _, _, page, _ in pending]
        self.pages += len(pending)
        # Twins found to differ from the file on disk: written without comparing again.
        differs = [False] * len(pending)
        if self.trust_twins:
            differs = [
                not staged and not same_bytes(twin, data)
                for (_, twin, _, staged), data in zip(pending, twins, strict=True)
            ]
            relinks = self.edge_items.relinks
            changed = [
                staged
                or differ
                or not os.path.isfile(html)
                or os.path.islink(html)
                or (isinstance(page, SpecPage) and relinks(page))
                for (html, _, page, staged), differ in zip(pending, differs, strict=True)
            ]
            self.unchanged += 2 * changed.count(False)
            pending = list(itertools.compress(pending, changed))
            twins = list(itertools.compress(twins, changed))
            differs = list(itertools.compress(differs, changed))
        edges, configs, links = self.edge_items, self.configs, self.links
        markup = [render(page, edge_items=edges, configs=configs, links=links).encode() for _, _, page, _ in pending]
        for (html, twin, page, staged), text, data, differ in zip(pending, markup, twins, differs, strict=True):
            self._store(html, text, staged=staged)
            if isinstance(page, TagPage):  # what its script loads, gzipped (see columns_json)
                columns, body = os.path.join(os.path.dirname(twin), COLUMNS_FILE), columns_json(page)
                self._gzipped(columns + ".gz", body, True, staged=staged, differs=differ)
                self._store(columns, body, staged=staged, differs=differ)
            self._gzipped(twin + ".gz", data, isinstance(page, TagPage), staged=staged, differs=differ)
            self._store(twin, data, staged=staged, differs=differ)  # last: an unchanged twin vouches for the rest

    def _gzipped(self, path: str, data: bytes, always: bool, *, staged: bool, differs: bool = False) -> None:
        """The twin's gzipped copy if it is long (or ``always``), else none; ``differs``:
        the twin differs from the one on disk, and so does its copy."""
        if always or len(data) >= GZIP_TWIN:
            self._store(path, gzip_bytes(data), staged=staged, differs=differs)
        elif not staged and os.path.lexists(path):
            os.unlink(path)

    def _store(self, path: str, data: bytes, *, staged: bool = False, differs: bool = False) -> None:
        """Write ``path`` if it does not hold ``data`` (``differs``: known not to)."""
        try:
            if staged:
                write_new(path, data)
                changed = True
            elif differs:
                write_atomically(path, data, self._replacer.replace)
                changed = True
            else:
                changed = update_file(path, data, self._replacer.replace)
        except OSError as exc:
            raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from exc
        self.written += changed
        self.unchanged += not changed

    def write_kept(self, files: list[tuple[str, bytes]]) -> None:
        """Write the files a :class:`KeptFiles` kept (paths in this writer's folder)."""
        for path, data in files:
            self._store(path, data)

    def close(self) -> None:
        """Wait until the files replaced are gone from the disk (see :class:`.files.Replacer`)."""
        self._replacer.close()

    def add(self, written: int, unchanged: int, pages: int) -> None:
        """Count what a worker process wrote."""
        self.written += written
        self.unchanged += unchanged
        self.pages += pages


class StagedWriter(SiteWriter):
    """A writer into a staging folder (:data:`PACKAGES_STAGING`), which nobody reads
    until its folders are renamed into place whole: every file is created directly, with
    no temporary file and rename, and nothing there is old enough to trust."""

    staged = True


def place_staged_packages(outdir: Path, tags: Iterable[str]) -> None:
    """Rename each tag's package pages that a :class:`StagedWriter` wrote under
    :data:`PACKAGES_STAGING` into ``tags/<tag>/packages``, a folder at a time, then remove
    the staging folder. A first build has no package page there yet; a site whose spec
    pages were deleted by hand may: its package folders are then replaced one by one."""
    staging = outdir / PACKAGES_STAGING
    try:
        for tag in tags:
            staged = staging / "tags" / tag / "packages"
            if not staged.is_dir():
                continue
            target = safe_folder(outdir, "tags", tag) / "packages"
            try:
                os.rename(staged, target)  # absent, or an empty folder
                continue
            except OSError:  # holds pages already (or is no folder: refused below)
                pass
            with os.scandir(staged) as entries:
                for entry in entries:
                    folder = safe_folder(outdir, "tags", tag, "packages", entry.name)
                    shutil.rmtree(folder)
                    os.rename(entry.path, folder)
        shutil.rmtree(staging)
    except OSError as exc:
        raise OutputError(f"{staging}: cannot move package pages into place ({exc.strerror or exc})") from exc


class KeptFiles(SiteWriter):
    """A writer that keeps the files it makes (:attr:`kept`) instead of writing them,
    for another process to write (:meth:`SiteWriter.write_kept`) once the pages they
    link to exist: a worker with time to spare makes a tag page early that way."""

    def __init__(self, outdir: Path, *, trust_twins: bool = False) -> None:
        super().__init__(outdir, trust_twins=trust_twins)
        self.kept: list[tuple[str, bytes]] = []

    def _store(self, path: str, data: bytes, *, staged: bool = False, differs: bool = False) -> None:
        self.kept.append((path, data))


def spec_pages_exist(outdir: Path, page: PackagePage) -> bool:
    """Whether every spec a package page links to has its page in ``outdir`` already
    (a spec whose hash is not a DAG hash never has one, and does not count)."""
    top = str(outdir)
    return all(os.path.isfile(os.path.join(top, spec_path(spec.hash))) for spec in page.specs if is_dag_hash(spec.hash))


def first_build(outdir: Path) -> bool:
    """Whether the site has no ``specs`` folder yet: its spec pages are then staged
    (see :func:`spec_folder`)."""
    specs = outdir / "specs"
    return not (specs.exists() or specs.is_symlink())


def spec_folder(outdir: Path, staged: bool, hashes: list[str], *, clear: bool = True) -> str:
    """The folder to write spec pages into, with the ``<ab>`` folders of ``hashes``
    made. A site's first build (``staged``) writes its spec pages into a hidden folder
    renamed to ``specs`` once they are all written (a reader sees every page or none),
    which spares a temporary file and a rename per page; later builds replace changed
    pages one by one. ``clear``: first remove a staging folder a stopped build left
    (not in a worker: the build's own may be in use)."""
    staging = outdir / STAGING
    if clear and staging.is_dir() and not staging.is_symlink():
        shutil.rmtree(staging)  # left by a build that was stopped
    name = STAGING if staged else "specs"
    for prefix in {dag_hash[:2] for dag_hash in hashes}:  # two characters of a DAG hash: safe
        safe_folder(outdir, name, prefix)
    return str(safe_folder(outdir, name))


@contextmanager
def staging(folder: str, staged: bool) -> Iterator[None]:
    """Remove a staging folder (``staged``) if writing into it fails: it is no use to anyone."""
    try:
        yield
    except BaseException:
        if staged:
            shutil.rmtree(folder, ignore_errors=True)
        raise


#: The files a site build writes (through a temporary file ``.<name>.<pid>.tmp``).
_SITE_FILES = re.compile(r"[^/]+\.(?:html|json|json\.gz|css|js|svg|atom)|\.cachedex-site(?:-inputs|-building)?")


def remove_stale_files(outdir: Path) -> int:
    """Remove the temporary files that killed builds left in the site's folders, and
    the staging folders of a stopped first build; returns how many files.

    A killed build leaves ``.<name>.<pid>.tmp`` beside the file it was replacing; no
    later build has that pid, so none would ever replace or remove it. Only folders
    this writer makes are looked into, and only names it writes are removed."""
    top = str(outdir)
    subfolders = {entry.name: entry.path for entry in _folders_in(top)}  # never through a symlink
    folders = [top, *(subfolders[name] for name in ("static", "mirrors") if name in subfolders)]
    for name, depth in (("tags", 3), ("specs", 1)):
        level = [subfolders[name]] if name in subfolders else []
        for _ in range(depth):  # tags/<tag>/packages/<package>, specs/<ab>
            level = [entry.path for folder in level for entry in _folders_in(folder)]
            folders.extend(level)
    for name in (STAGING, PACKAGES_STAGING):
        staging = outdir / name
        if staging.is_dir() and not staging.is_symlink():
            shutil.rmtree(staging)
    return remove_stale_temporaries(folders, _SITE_FILES) + remove_old_files(top)


def _folders_in(folder: str) -> list[os.DirEntry[str]]:
    """The real folders (not symlinks) in ``folder``, none if it is not one."""
    try:
        with os.scandir(folder) as entries:
            return [entry for entry in entries if entry.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []


def remove_spec_pages(folder: Path, keep: set[str]) -> int:
    """Remove the spec pages (``<ab>/<hash>.html`` and ``.json``) under ``folder``
    whose hash is not in ``keep``, and ``<ab>`` folders left empty; returns how many
    pages."""
    if not folder.is_dir() or folder.is_symlink():
        return 0
    removed = 0
    for shard in os.scandir(folder):
        if len(shard.name) != 2 or not shard.is_dir(follow_symlinks=False):
            continue
        for entry in os.scandir(shard.path):
            stem, _, suffix = entry.name.removesuffix(".gz").rpartition(".")
            if (
                suffix in ("html", "json")
                and is_dag_hash(stem)
                and stem[:2] == shard.name
                and stem not in keep
                and entry.is_file(follow_symlinks=False)
            ):
                os.unlink(entry.path)
                removed += entry.name.endswith(".html")
        if not os.listdir(shard.path):
            os.rmdir(shard.path)
    return removed


def remove_pages_of(folder: Path, hashes: Iterable[str]) -> int:
    """Remove the spec pages of ``hashes`` under ``folder`` (see :func:`remove_spec_pages`),
    and ``<ab>`` folders left empty; returns how many pages. What a build after a sync
    removes: it knows which hashes left, and need not list 250,000 files to find them."""
    if not folder.is_dir() or folder.is_symlink():
        return 0
    removed = 0
    for dag_hash in hashes:
        if not is_dag_hash(dag_hash):
            continue
        shard = folder / dag_hash[:2]
        if shard.is_symlink():  # never through it, as remove_spec_pages never goes in one
            continue
        for suffix in (".html", ".json", ".json.gz"):
            try:
                os.unlink(shard / (dag_hash + suffix))
            except FileNotFoundError:
                continue
            removed += suffix == ".html"
        with contextlib.suppress(OSError):  # the folder's last page gone: the folder too
            shard.rmdir()
    return removed


def remove_others(folder: Path, keep: set[str]) -> int:
    """Remove the page folders under ``folder`` not in ``keep`` (only those holding a
    page this writer makes; anything else there is left alone)."""
    if not folder.is_dir() or folder.is_symlink():
        return 0
    removed = 0
    for entry in folder.iterdir():
        if entry.name in keep or entry.is_symlink() or not entry.is_dir():
            continue
        if (entry / "index.html").is_file() and (entry / "index.json").is_file():
            shutil.rmtree(entry)
            removed += 1
    return removed
