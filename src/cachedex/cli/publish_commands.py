"""The commands that publish the catalog: ``cachedex jekyll``, ``export spack-cache``,
``site`` and ``serve``; registered on the ``cachedex`` group by :mod:`cachedex.cli`."""

from __future__ import annotations

import os
from pathlib import Path

import click
import msgspec

from ..catalog import Catalog
from ..errors import OutputError
from ..values import visible
from . import publish_reports
from .progress import Reporter
from .state import OutputFolder, State, friendly

__all__ = ["export_group", "jekyll_command", "serve_command", "site_command"]


@click.command("jekyll")
@click.argument("outdir", metavar="OUTDIR", type=OutputFolder())
@click.option(
    "--tag",
    "-t",
    "tags",
    multiple=True,
    metavar="TAG",
    help="Write only this tag (repeat for several; default: every tag in the catalog).",
)
@click.option(
    "--full",
    is_flag=True,
    help="Compare every page with what is on disk, even if a tag's record says it is current.",
)
@click.pass_obj
@friendly
def jekyll_command(state: State, outdir: Path, tags: tuple[str, ...], full: bool) -> None:
    """Write the catalog as cache.spack.io pages into the Jekyll site OUTDIR.

    Per tag, one page per package, OUTDIR/_cache/TAG/PACKAGE/specs.md, with the same
    front matter (meta, spec_details) as cache.spack.io, byte for byte; sizes are
    bytes where the catalog knows them, "-" elsewhere. Also OUTDIR/_data/tags.yaml
    and OUTDIR/_data/meta.yaml (entries of other tags are kept).

    Safe to re-run: unchanged files are not rewritten, each file is replaced
    atomically, pages of packages that left a tag are removed, tags not selected and
    other files in OUTDIR are not touched. Names that cannot be folder names are
    skipped and reported; so are packages and specs holding a value Spack's grammar
    cannot write, which cache.spack.io's layout would print as markup (at most 20
    warnings a tag, then a count). A big tag is written by several processes.
    OUTDIR/_cache/TAG/.cachedex-jekyll records the state of the catalog the tag's
    pages were written from: a run that finds the same leaves the tag alone (--full
    compares its pages anyway).

    The site's _config.yml needs the collection (collections: {cache: {output:
    true}}) and a 'cache' layout, as cache.spack.io has.

    \b
    Example:
      cachedex sync develop && cachedex jekyll ./site --tag develop
    """
    from ..publish.jekyll import write_jekyll

    with state.catalog() as catalog:
        report = write_jekyll(catalog, outdir, tags=list(tags) or None, full=full)
    publish_reports.print_jekyll_report(report)
    if not report.tags and report.skipped:  # (it said "run 'cachedex sync' first", and exited 0)
        raise OutputError("no tag written: each was skipped (the warnings above say why)")


@click.group("export")
def export_group() -> None:
    """Write the catalog as data files for other tools."""


@export_group.command("spack-cache")
@click.argument("outdir", metavar="OUTDIR", type=OutputFolder())
@click.option("--tag", "-t", "tags", multiple=True, metavar="TAG", help="Only this tag (repeatable).")
@click.option("--stack", "-s", "stacks", multiple=True, metavar="STACK", help="Only this stack (repeatable).")
@click.option("--package", "-p", "packages", multiple=True, metavar="NAME", help="Only this package (repeatable).")
@click.option(
    "--include-root",
    is_flag=True,
    help="Also count each tag's root mirror as a stack named 'root' (needed for a tag without stacks).",
)
@click.pass_obj
@friendly
def export_spack_cache_command(
    state: State,
    outdir: Path,
    tags: tuple[str, ...],
    stacks: tuple[str, ...],
    packages: tuple[str, ...],
    include_root: bool,
) -> None:
    """Write OUTDIR/package_data.json.gz and OUTDIR/specs_data.json.gz for cache.spack.io.

    The two files that spack/spack-cache's data.py makes by downloading every stack
    index, in the same shapes, so that its app reads them unchanged; made from the
    catalog, with no network. Releases are the catalog's tags. Unlike data.py: only
    specs with a binary, each with the stacks and tags whose index lists it so; the
    root mirror is no stack unless --include-root; each spec also has its size (null
    when unknown) and compiler, each package its latest version. The app writes the
    values into its page as markup: a spec holding a value Spack's grammar cannot
    write is left out, and one warning line names such specs (the first 20).

    Files are replaced atomically and only when their bytes change: an unchanged
    catalog gives byte-identical files. A choice that leaves no spec is refused and
    writes nothing (the export before stays).

    \b
    Example (feeding a checkout of spack/spack-cache):
      cachedex sync && cachedex export spack-cache ./spack-cache/_data
    """
    from ..publish.export import export_spack_cache

    with state.catalog() as catalog:
        report = export_spack_cache(
            catalog,
            outdir,
            tags=list(tags) or None,
            stacks=list(stacks) or None,
            packages=list(packages) or None,
            include_root=include_root,
        )
    publish_reports.print_export_report(report)


@click.command("site")
@click.argument("outdir", type=OutputFolder())
@click.option(
    "--tag",
    "-t",
    "tags",
    multiple=True,
    help="Only this tag's pages (repeatable). They link to every tag's: in a folder without the others, "
    "a warning names them.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes writing pages of a big site  [default: one per CPU, at most 4].",
)
@click.option(
    "--full",
    is_flag=True,
    help="Compare every page with what is on disk, even if OUTDIR/.cachedex-site says it is current.",
)
@click.pass_obj
@friendly
def site_command(state: State, outdir: Path, tags: tuple[str, ...], workers: int | None, full: bool) -> None:
    """Write the catalog as a self-contained static website into OUTDIR.

    Home (tags, package search), a page per tag (packages, facet filters and the rows'
    order kept in the URL), per package and tag (specs), per spec (specs/<ab>/<hash>.html: dependencies,
    dependents, sizes, install commands) and the mirrors; each page with a JSON twin
    beside it (index.json, <hash>.json). Nothing is loaded from another host (a
    package's packages.spack.io page is linked): serve OUTDIR with any static file
    server. OUTDIR is new, empty (hidden files aside: a .git), or one an earlier run
    wrote: a folder of other files is refused, not overwritten. Unchanged pages are
    not rewritten; pages of packages
    and specs that left are removed. OUTDIR/.cachedex-site records the catalog state,
    templates and tags the site was built from: when they are the same, the run ends
    at once (--full compares every page anyway). After a sync, only the pages that
    the catalog's changes reach are made (OUTDIR/.cachedex-site-inputs says what the
    last build's pages were made from).

    \b
    Example:
      cachedex site ./site && python3 -m http.server -d ./site 8000
    """
    from ..publish.site import BUILD_ATTEMPTS, write_site

    config = state.config()
    with Catalog(config.catalog, readonly=True) as catalog, Reporter() as reporter:
        line = reporter.task("site", total=None)
        report = write_site(
            catalog,
            outdir,
            tags=list(tags) or None,
            on_progress=line.describe,
            workers=workers,
            full=full,
            compare=config.compare,
        )
        line.done()
    publish_reports.print_site_report(report)
    if not report.complete:  # (a script's `cachedex site ./site && serve it` must not serve a part)
        raise OutputError(
            f"{report.outdir}: syncs committed during each of {BUILD_ATTEMPTS} builds; the site is not "
            "complete: run 'cachedex site' again once they are done"
        )


def _bare_host(host: str) -> str:
    """``host`` without the brackets a URL puts around an IPv6 address (``[::1]``), which
    the system does not resolve."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") and ":" in host else host


@click.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    callback=lambda _context, _option, host: _bare_host(host),
    help="Address to listen on (an IPv6 one as ::1 or [::1]).",
)
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0: a free one, which it prints).",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Server processes (one per CPU serves the most requests).",
)
@click.pass_obj
@friendly
def serve_command(state: State, host: str, port: int, workers: int) -> None:
    """Serve the website and a JSON API over the catalog, live.

    The same pages as 'cachedex site', rendered on demand, and a JSON API under
    /api (OpenAPI document: /api/openapi.json): tags, packages with facet counts,
    specs with dependencies and dependents, search in Spack's spec syntax
    (/api/search?q=hdf5%2Bmpi&tag=develop: in a URL, '+' is written %2B), diffs,
    and POST /api/reuse?tag=develop with a spack.lock as the body: what
    'cachedex reuse' says of it, as JSON.
    The catalog is opened read-only: a 'cachedex sync' may run meanwhile; responses
    change when it commits.

    Each process caches up to 64 MiB of answers, takes up to 1000 connections (fewer
    under a lower open-file limit; past them it answers 503 with Retry-After), and
    closes a connection whose request head is not complete within 10 s. Open to more
    than a trusted network, put it behind a reverse proxy (see README).
    """
    from ..publish.serve import CATALOG_ENV
    from ..publish.serve.server import check_listen, free_port, serve
    from .serve_app import COMPARE_ENV, FACTORY, serve_app

    config = state.config()
    serve_app(config.catalog)  # a missing or unreadable catalog fails here, in one line
    os.environ[COMPARE_ENV] = msgspec.json.encode(config.compare).decode()  # (for the worker processes)
    check_listen(host, port)  # a port in use fails here, in one line
    if port == 0:  # any free port: chosen here, so that the line below can name it
        port = free_port(host)
    where = f"[{host}]" if ":" in host else host  # an IPv6 address, as a URL writes it
    click.echo(
        f"Serving {visible(str(config.catalog))} on http://{where}:{port}/ (API: /api/openapi.json); Ctrl-C stops."
    )
    serve(config.catalog, host=host, port=port, workers=workers, environment_key=CATALOG_ENV, factory=FACTORY)
