"""Data for today's cache.spack.io: ``package_data.json.gz`` and ``specs_data.json.gz``.

cache.spack.io is built by the ``spack/spack-cache`` repository: its ``data.py``
downloads every stack index of every release and writes two gzipped JSON files that its
single-page app fetches from ``api/``. :func:`export_spack_cache` writes the same two
files from the catalog, with no network, in the shapes that app reads:

``package_data.json.gz``, one entry per package, keys sorted::

    {"<name>": {"uid": "<name>", "url": "https://packages.spack.io/package.html?name=<name>",
                "releases": ["<tag>", ...], "specs": {"<tag>": ["<hash>", ...], ...},
                "latest_version": "<version>"}}

``specs_data.json.gz``, one entry per spec, keys sorted::

    {"<hash>": {"hash": ..., "version": ..., "variants": ["+mpi", "cuda_arch=80", ...],
                "platform": ..., "os": ..., "target": "<name>", "dependencies": [<edge>, ...],
                "stacks": [...], "releases": [...], "size": <bytes> | null,
                "compiler": "<name>@<version>" | "none"}}

What it does differently from ``data.py``:

- only specs with a binary: a spec is in a stack (and a release) only where that
  stack's index lists it ``in_buildcache``, where ``data.py`` counts every record;
- stacks are the mirrors with an index of their own; the root is left out (the app
  shows stacks) unless ``include_root``, then it is one more stack named ``root``. The
  root of a mirror of views only is never a stack: it has no index of its own;
- ``size``, ``compiler`` and the package's ``latest_version`` (in Spack's version
  order) are added; the app ignores keys it does not know;
- a package's ``specs`` are grouped by release, as the app's sidebar reads them
  (``pkg.specs[release]``; its other readers take both shapes,
  ``Object.values(pkg.specs).flat()``). ``data.py`` wrote one list, which the app of
  August 2026 read (``pkg.specs.map(...)``): the later app, with per-release counts in
  its sidebar, cannot read that one;
- each dependency is ``{"name", "hash", "parameters": {"deptypes", "virtuals", ...}}``
  as the index has it; an old node's form (a dict of edges, ``type`` instead of
  ``parameters``, ``build_hash``) is turned into that one.

``variants`` are made from the raw node's ``parameters`` as ``data.py`` makes them
(``true`` gives ``+name``, ``false`` ``~name``, a list one ``name=value`` per element,
anything else ``name=value``), in the node's order.

Deterministic and safe: keys and lists sorted (variants and dependencies keep the node's
order), compact JSON whose ``<``, ``>``, ``&``, U+2028 and U+2029 are escaped (so that
it can also sit inside an HTML page), a gzip header without time or name, each file
replaced atomically, and left untouched when its bytes would not change. The names of
packages are data here, not paths. The app writes the values into its page as markup
(``innerHTML``, after ``JSON.parse`` undid the escapes): a spec holding a value Spack's
grammar cannot write (a hostile mirror's ``<img src=x onerror=...>`` as a name, version,
variant, arch, compiler, stack or dependency) is left out and named in the report's
``refused`` (:mod:`.export_specs`); a package left without specs is not written.

Fast (``bench/export.py`` times it against the tag's first sync): one snapshot, two
streaming reads in the tables' own order (the listings, then every exported spec's row
and raw node), each spec made and encoded once
(:mod:`.export_specs`), then sorted; the specs file is cut into parts of
:data:`PART_SPECS` specs compressed by parallel threads and joined into one gzip stream
(:mod:`.export_gzip`), while the package file is made. The parts do not depend on the
number of CPUs, so neither do the bytes.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .._perf import gc_paused
from ..catalog import Catalog
from ..errors import LookupFailed, OutputError, UnknownPackage, UnknownStack, UnknownTag
from ..values import ROOT_STACK, counted
from .export_gzip import deflate_part, gzip_file, script_safe
from .export_rules import Refusal
from .export_specs import PACKAGE_URL, PackageSpecs, json_parts, package_member, package_specs, read_specs
from .files import remove_stale_temporaries, update_file
from .parallel import cpu_workers

__all__ = [
    "COMPRESSION_LEVEL",
    "PACKAGES_FILE",
    "PACKAGE_URL",
    "PART_SPECS",
    "SPECS_FILE",
    "ExportReport",
    "Refusal",
    "export_spack_cache",
]

#: The file names ``data.py`` writes and the app fetches (from ``api/``).
PACKAGES_FILE = "package_data.json.gz"
SPECS_FILE = "specs_data.json.gz"

#: Compression level of both files, zlib-ng's (:mod:`.export_gzip`). Compressing was a
#: third of an export's work with the standard library's zlib at level 1; zlib-ng's level
#: 2 makes the files 7 % smaller in 0.84 x the export's CPU (bench/README.md, gzip). With
#: zlib, level 6 made the specs file 15 % smaller than level 1 in twice the time, level 9
#: (``data.py``'s, gzip's default) 18 % in five times (on bench/export.py's tag).
COMPRESSION_LEVEL = 2

#: Specs (consecutive hashes) per part of ``specs_data`` compressed apart, in parallel.
PART_SPECS = 16_384


@dataclass
class ExportReport:
    """What :func:`export_spack_cache` wrote."""

    outdir: Path
    specs: int = 0  #: specs exported
    packages: int = 0
    releases: list[str] = field(default_factory=list)  #: tags with at least one exported spec
    stacks: list[str] = field(default_factory=list)  #: stack names with at least one exported spec
    written: list[str] = field(default_factory=list)  #: file names rewritten
    unchanged: list[str] = field(default_factory=list)  #: file names whose bytes were already these
    sizes: dict[str, int] = field(default_factory=dict)  #: bytes of each file (compressed)
    missing_packages: list[str] = field(default_factory=list)  #: asked for, but not exported
    refused: list[Refusal] = field(default_factory=list)  #: specs left out: a value Spack cannot write
    seconds: float = 0.0

    def refused_warning(self, shown: int = 20) -> str | None:
        """One line naming the refused specs (the first ``shown``), or None if none."""
        if not self.refused:
            return None
        named = "; ".join(str(refusal) for refusal in self.refused[:shown])
        more = f"; and {len(self.refused) - shown:,} more" if len(self.refused) > shown else ""
        count = len(self.refused)
        return (
            f"warning: {count:,} spec{'' if count == 1 else 's'} not exported, holding a value Spack cannot "
            f"write (cache.spack.io's app would show it as markup): {named}{more}"
        )


def export_spack_cache(
    catalog: Catalog,
    outdir: Path,
    *,
    tags: Sequence[str] | None = None,
    stacks: Sequence[str] | None = None,
    packages: Sequence[str] | None = None,
    include_root: bool = False,
    level: int = COMPRESSION_LEVEL,
) -> ExportReport:
    """Write ``OUTDIR/package_data.json.gz`` and ``OUTDIR/specs_data.json.gz`` for
    cache.spack.io's app from the catalog (see the module's docstring).

    ``tags``, ``stacks`` and ``packages`` narrow the export (default: everything);
    naming ``root`` among ``stacks`` implies ``include_root``, and ``include_root`` with
    ``stacks`` adds the root to them. An unknown tag or stack
    raises :class:`~cachedex.errors.UnknownTag` / :class:`~cachedex.errors.UnknownStack`
    (and writes nothing), and so does :class:`~cachedex.errors.UnknownPackage` for a
    package no tag lists; packages the chosen stacks do not list are reported, not
    refused, unless none of those asked is listed (then nothing is written)."""
    start = time.perf_counter()
    outdir = Path(outdir)
    report = ExportReport(outdir)
    wanted_tags = sorted(set(tags)) if tags else None
    wanted_stacks = sorted(set(stacks)) if stacks else None
    wanted_packages = sorted(set(packages)) if packages else None
    include_root = include_root or (wanted_stacks is not None and ROOT_STACK in wanted_stacks)
    if include_root and wanted_stacks is not None and ROOT_STACK not in wanted_stacks:
        wanted_stacks = sorted([*wanted_stacks, ROOT_STACK])  # (with --stack, the root is one more chosen)
    with catalog.snapshot(), gc_paused():
        _check_scope(catalog, wanted_tags, wanted_stacks, wanted_packages)
        mirrors, listings = catalog.stack_listings(
            tags=wanted_tags, stacks=wanted_stacks, packages=wanted_packages, include_root=include_root
        )
        held: dict[int, tuple[int, ...]] = {}
        known = held.get
        for spec_id, mirror_id in listings:
            held[spec_id] = known(spec_id, ()) + (mirror_id,)
        members, report.refused = read_specs(catalog.spec_nodes(list(held)), held, mirrors)
    with gc_paused(), ThreadPoolExecutor(cpu_workers(), thread_name_prefix="cachedex-gzip") as pool:
        parts = json_parts(members, PART_SPECS)
        deflated = [
            pool.submit(deflate_part, pieces, level, last=number == len(parts) - 1)
            for number, pieces in enumerate(parts)
        ]
        by_package = package_specs(members)  # meanwhile
        package_data = _package_data(by_package, level)
        specs_data = gzip_file([future.result() for future in deflated])
    report.specs = len(members)
    report.packages = len(by_package)
    report.releases = sorted({r for by_release, _ in by_package.values() for r in by_release})
    report.stacks = sorted({s for stacks in {id(m[5]): m[5] for m in members}.values() for s in stacks})
    report.missing_packages = [name for name in wanted_packages or () if name not in by_package]
    if not by_package:  # files with nothing in them would replace the last export
        shown = ", ".join(map(str, report.refused[:1])) + (", ..." if len(report.refused) > 1 else "")
        refused = f"; {counted(len(report.refused), 'spec')} refused ({shown})" if report.refused else ""
        of = f" of {', '.join(wanted_packages)}" if wanted_packages else ""
        root = "" if include_root else " (a tag's root counts as a stack with --include-root)"
        raise LookupFailed(f"no chosen stack lists a binary{of}{refused}; nothing written to {outdir}{root}")
    del members, parts
    _prepare(outdir)  # (once there is something to write: a refused export leaves no folder)
    # Specs first: the app looks a package's specs up in specs_data, so new package
    # data never names a spec the files lack.
    for name, data in ((SPECS_FILE, specs_data), (PACKAGES_FILE, package_data)):
        _write(outdir, name, data, report)
    report.seconds = time.perf_counter() - start
    return report


def _package_data(by_package: dict[str, PackageSpecs], level: int) -> bytes:
    """``package_data.json.gz``'s bytes: packages by name."""
    members = [package_member(name, *by_package[name]) for name in sorted(by_package)]
    return gzip_file([deflate_part([b"{", script_safe(b",".join(members)), b"}"], level, last=True)])


def _check_scope(
    catalog: Catalog, tags: Sequence[str] | None, stacks: Sequence[str] | None, packages: Sequence[str] | None
) -> None:
    """UnknownTag for a tag the catalog lacks; UnknownStack for a stack no chosen tag
    has; UnknownPackage for a package no tag lists (a typo: not a package to leave out)."""
    known = catalog.tag_names()
    if not known and not tags:
        raise LookupFailed("the catalog has no tags yet; run 'cachedex sync' first")
    for tag in tags or ():
        if tag not in known:
            raise UnknownTag(tag, known)
    if stacks:
        chosen = set(tags or known)
        have = {m.stack for m in catalog.mirrors() if m.tag in chosen}
        for stack in stacks:
            if stack not in have:
                if len(chosen) == 1:
                    raise UnknownStack(next(iter(chosen)), stack)
                listed = ", ".join(sorted(have))
                raise LookupFailed(f"no tag of {', '.join(sorted(chosen))} has a stack {stack!r} (stacks: {listed})")
    for package in packages or ():
        if not catalog.package_tags(package):
            raise UnknownPackage(package)


#: The temporary files of :func:`~.files.write_atomically` for the two files.
_OUR_FILES = re.compile(re.escape(PACKAGES_FILE) + "|" + re.escape(SPECS_FILE))


def _prepare(outdir: Path) -> None:
    """Create OUTDIR if needed; remove temporaries a killed export left there."""
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise OutputError(f"{outdir}: exists and is not a folder") from exc
    except OSError as exc:
        raise OutputError(f"{outdir}: cannot create ({exc.strerror or exc})") from exc
    remove_stale_temporaries([str(outdir)], _OUR_FILES)


def _write(outdir: Path, name: str, data: bytes, report: ExportReport) -> None:
    path = os.path.join(outdir, name)
    try:
        written = update_file(path, data)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from exc
    (report.written if written else report.unchanged).append(name)
    report.sizes[name] = len(data)
