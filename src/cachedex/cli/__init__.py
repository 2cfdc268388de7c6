"""The ``cachedex`` command line: a thin layer of click commands over the library.

Each command loads the config, calls one library function and prints what it returns
(:mod:`.present`). Exit codes: 0 success, 1 an error the user can fix (one line;
``--debug`` shows the traceback and its cause), 2 wrong usage.
"""

from __future__ import annotations

import functools
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import __version__
from ..catalog import Catalog
from ..config import Config, find_config, load_config
from ..errors import CachedexError
from . import present
from .coverage_command import coverage_command
from .progress import Reporter
from .query_words import QueryCommand, query_text
from .verify_command import verify_command

__all__ = ["main", "reference_markdown"]

F = TypeVar("F", bound=Callable[..., Any])


class _State:
    def __init__(self, config: str | None, debug: bool) -> None:
        self.config_arg = config
        self.debug = debug
        #: The catalog of the config once loaded: errors name it.
        self.catalog_path: Path | None = None

    def config(self) -> Config:
        config = load_config(find_config(self.config_arg))
        self.catalog_path = config.catalog
        return config

    def catalog(self, *, readonly: bool = True) -> Catalog:
        return Catalog(self.config().catalog, readonly=readonly)


#: SQLite's primary result codes that mean the file itself is damaged (or no database).
_SQLITE_CORRUPT = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def _catalog_problem(state: _State | None, exc: sqlite3.DatabaseError) -> str:
    """The one line for an SQLite error that reached the command line: a read of a damaged
    page (opening the catalog already reports its own errors as CatalogError)."""
    where = str(state.catalog_path) if state is not None and state.catalog_path else "the catalog"
    if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _SQLITE_CORRUPT:
        return f"{where}: the catalog is corrupt ({exc}); delete it and run 'cachedex sync'"
    return f"{where}: cannot read the catalog ({exc})"


def _friendly(func: F) -> F:
    """Turn CachedexError, and SQLite's errors about the catalog, into one line on stderr
    and exit code 1 (traceback with --debug)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (CachedexError, sqlite3.DatabaseError) as exc:
            state = click.get_current_context().find_object(_State)
            if state is not None and state.debug:
                raise
            message = str(exc) if isinstance(exc, CachedexError) else _catalog_problem(state, exc)
            click.echo(f"error: {message}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "-c", metavar="FILE", help="Config file (default: $CACHEDEX_CONFIG, else ./cachedex.yaml).")
@click.option("--debug", is_flag=True, help="Show the full traceback of errors.")
@click.version_option(__version__, prog_name="cachedex")
@click.pass_context
def main(ctx: click.Context, config: str | None, debug: bool) -> None:
    """What is in the Spack build cache?

    cachedex reads Spack binary mirrors (build caches) named in a config file into a
    local SQLite catalog, and answers from it. Start with 'cachedex demo' to see it
    work on generated sample mirrors, then write your own cachedex.yaml (see README).
    """
    ctx.obj = _State(config, debug)


@main.command("sync")
@click.argument("tags", nargs=-1, metavar="[TAG]...")
@click.option(
    "--sizes",
    is_flag=True,
    help="Also ask v2 mirrors for every binary's size (one HTTP HEAD each). "
    "v3 mirrors always give sizes from their spec manifests.",
)
@click.pass_obj
@_friendly
def sync_command(state: _State, tags: tuple[str, ...], sizes: bool) -> None:
    """Read the mirrors of TAGs (default: every configured tag) into the catalog.

    A mirror whose index checksum did not change since the last sync is skipped
    without downloading its index. Each tag is written in one transaction: if
    anything fails for a tag, it keeps its previous content, the other tags still
    update, and the command exits 1 with what failed and why.
    """
    from ..ingest.sync import sync

    config = state.config()
    with Catalog(config.catalog) as catalog, Reporter() as reporter:
        outcomes = sync(
            config, catalog, tags or None, head_sizes=sizes, reporter=reporter, raise_unexpected=state.debug
        )
    present.print_outcomes(outcomes)
    failed = [o for o in outcomes if not o.ok]
    if failed:
        for outcome in failed:
            for line in (outcome.error or "").splitlines():
                click.echo(f"error: {outcome.tag}: {line}", err=True)
        click.echo(f"{len(failed)} of {len(outcomes)} tags failed; they keep their previous content.", err=True)
        sys.exit(1)


@main.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (one object per tag).")
@click.pass_obj
@_friendly
def stats_command(state: _State, as_json: bool) -> None:
    """Totals per tag from the catalog: records, listed specs, packages, stacks, size."""
    config = state.config()
    with Catalog(config.catalog, readonly=True) as catalog:
        stats = catalog.tag_stats()
    if as_json:
        present.print_json([present.stats_json(s) for s in stats])
    else:
        present.print_stats(str(config.catalog), stats)


@main.command("demo")
@click.argument("directory", default="cachedex-demo", metavar="[DIR]", type=click.Path(file_okay=False, path_type=Path))
@click.pass_obj
@_friendly
def demo_command(state: _State, directory: Path) -> None:
    """Build sample mirrors in DIR (default ./cachedex-demo), sync them, show the result.

    The mirrors are generated by code in cachedex: four tags (a mutable develop, two
    dated snapshots, a release) with v2 and v3 layouts and nine stacks each. develop
    is synced twice, before and after a change, so the history has something to show.
    """
    from ..demo import run_demo

    with Reporter() as reporter:
        run_demo(directory, echo=click.echo, print_outcomes=present.print_outcomes, progress=reporter)


@main.command("jekyll")
@click.argument("outdir", metavar="OUTDIR", type=click.Path(file_okay=False, path_type=Path))
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
@_friendly
def jekyll_command(state: _State, outdir: Path, tags: tuple[str, ...], full: bool) -> None:
    """Write the catalog as cache.spack.io pages into the Jekyll site OUTDIR.

    Per tag, one page per package, OUTDIR/_cache/TAG/PACKAGE/specs.md, with the same
    front matter (meta, spec_details) as cache.spack.io, byte for byte; sizes are
    bytes where the catalog knows them, "-" elsewhere. Also OUTDIR/_data/tags.yaml
    and OUTDIR/_data/meta.yaml (entries of other tags are kept).

    Safe to re-run: unchanged files are not rewritten, each file is replaced
    atomically, pages of packages that left a tag are removed, tags not selected and
    other files in OUTDIR are not touched. Names that cannot be folder names are
    skipped and reported. A big tag is written by several processes.
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
    present.print_jekyll_report(report)


@main.group("export")
def export_group() -> None:
    """Write the catalog as data files for other tools."""


@export_group.command("spack-cache")
@click.argument("outdir", metavar="OUTDIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--tag", "-t", "tags", multiple=True, metavar="TAG", help="Only this tag (repeatable).")
@click.option("--stack", "-s", "stacks", multiple=True, metavar="STACK", help="Only this stack (repeatable).")
@click.option("--package", "-p", "packages", multiple=True, metavar="NAME", help="Only this package (repeatable).")
@click.option(
    "--include-root",
    is_flag=True,
    help="Also count each tag's root mirror as a stack named 'root' (needed for a tag without stacks).",
)
@click.pass_obj
@_friendly
def export_spack_cache_command(
    state: _State,
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
    when unknown) and compiler, each package its latest version.

    Files are replaced atomically and only when their bytes change: an unchanged
    catalog gives byte-identical files.

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
    present.print_export_report(report)


# -- questions: search, show, diff ------------------------------------------------------


@main.command("search", cls=QueryCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("--tag", "-t", help="Only specs this tag lists (default: every tag).")
@click.option("--stack", "-s", help="Only specs this stack of --tag holds.")
@click.option(
    "--limit", "-n", type=click.IntRange(1, 100_000), default=50, show_default=True, help="At most this many specs."
)
@click.option("--offset", type=click.IntRange(0), default=0, help="Skip this many matches first.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects, for scripts.")
@click.pass_obj
@_friendly
def search_command(
    state: _State, query: tuple[str, ...], tag: str | None, stack: str | None, limit: int, offset: int, as_json: bool
) -> None:
    """Find specs with Spack's spec syntax.

    \b
    Examples:
      cachedex search zlib
      cachedex search 'py-keras@3.9 backend=jax target=aarch64:'
      cachedex search 'hdf5+mpi~cuda %gcc@13 os=ubuntu24.04' --tag develop
      cachedex search /2763an2                   # a hash prefix
      cachedex search arch=linux-ubuntu24.04-x86_64_v3 --stack e4s --tag develop
      cachedex search 'py-keras ^py-jax@0.4'       # needs py-jax 0.4 (link/run, at any depth)

    @3.9 holds 3.9 and 3.9.x (not 3.10), @1.2:1.4 is a range, @=1.2.3 exact;
    target=aarch64: (trailing colon) also matches targets descending from aarch64.
    A word starting with '-' (hdf5 -cuda) is part of the query, not an option;
    after '--' every word is (cachedex search -- hdf5 -cuda).
    """
    from ..query import parse

    parsed = parse(query_text(query))
    with state.catalog() as catalog:
        page = catalog.search(parsed, tag=tag, stack=stack, limit=limit, offset=offset, hints=True)
    present.print_search(page, by_stack=tag is not None, as_json=as_json)


@main.command("show")
@click.argument("what", metavar="HASH-OR-PACKAGE")
@click.option("--tag", "-t", help="For a package: only this tag.")
@click.option("--json", "as_json", is_flag=True, help="Print the data as JSON.")
@click.pass_obj
@_friendly
def show_command(state: _State, what: str, tag: str | None, as_json: bool) -> None:
    """Show one spec in full, or a package's summary per tag.

    A spec is named by its hash or a unique prefix (with or without '/'): its
    dependencies, its cached dependents, the tags and stacks holding it, its size
    and its closure's, and how to install it. Anything else is a package.
    """
    from ..publish.pages import package_page, resolve, spec_page

    with state.catalog() as catalog:
        found = resolve(catalog, what)
        if not isinstance(found, str):
            page = spec_page(catalog, found.hash)
            present.print_json(page) if as_json else present.print_spec(page)
            return
        tags = [tag] if tag else [t for t, _ in catalog.package_tags(found)]
        pages = [package_page(catalog, t, found) for t in tags]
    if as_json:
        present.print_json(pages)
        return
    for package in pages:
        present.print_package(package)


@main.command("diff")
@click.argument("tags", nargs=-1, required=True, metavar="TAG_A [TAG_B]")
@click.option("--since", metavar="DATE", help="Compare TAG_A with itself at DATE (YYYY-MM-DD, UTC).")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON.")
@click.pass_obj
@_friendly
def diff_command(state: _State, tags: tuple[str, ...], since: str | None, as_json: bool) -> None:
    """What changed between two tags, or in one tag since a date.

    Per stack: packages added, removed and changed (same package, new hash), and
    the specs added and removed.

    \b
    Examples:
      cachedex diff develop-2026-11-01 develop
      cachedex diff develop --since 2026-11-01     # from the sync history
    """
    from ..diff import diff_since, diff_tags, parse_since

    if since is None and len(tags) != 2:
        raise click.UsageError("give two tags, or one tag and --since DATE")
    if since is not None and len(tags) != 1:
        raise click.UsageError("--since takes one tag")
    with state.catalog() as catalog:
        if since is not None:
            result = diff_since(catalog, tags[0], parse_since(since), since)
        else:
            result = diff_tags(catalog, tags[0], tags[1])
    present.print_json(result) if as_json else present.print_diff(result)


@main.command("site")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--tag", "-t", "tags", multiple=True, help="Only this tag (repeatable).")
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
@_friendly
def site_command(state: _State, outdir: Path, tags: tuple[str, ...], workers: int | None, full: bool) -> None:
    """Write the catalog as a self-contained static website into OUTDIR.

    Home (tags, package search), a page per tag (packages, facet filters kept in the
    URL), per package and tag (specs), per spec (specs/<ab>/<hash>.html: dependencies,
    dependents, sizes, install commands) and the mirrors; each page with a JSON twin
    beside it (index.json, <hash>.json). No external host is referenced: serve OUTDIR
    with any static file server. Unchanged pages are not rewritten; pages of packages
    and specs that left are removed. OUTDIR/.cachedex-site records the catalog state,
    templates and tags the site was built from: when they are the same, the run ends
    at once (--full compares every page anyway). After a sync, only the pages that
    the catalog's changes reach are made (OUTDIR/.cachedex-site-inputs says what the
    last build's pages were made from).

    \b
    Example:
      cachedex site ./site && python3 -m http.server -d ./site 8000
    """
    from ..publish.site import write_site

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
    present.print_site_report(report)


@main.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Server processes (one per CPU serves the most requests).",
)
@click.pass_obj
@_friendly
def serve_command(state: _State, host: str, port: int, workers: int) -> None:
    """Serve the website and a JSON API over the catalog, live.

    The same pages as 'cachedex site', rendered on demand, and a JSON API under
    /api (OpenAPI document: /api/openapi.json): tags, packages with facet counts,
    specs with dependencies and dependents, search in Spack's spec syntax
    (/api/search?q=hdf5%2Bmpi&tag=develop: in a URL, '+' is written %2B), diffs.
    The catalog is opened read-only: a 'cachedex sync' may run meanwhile; responses
    change when it commits.

    Each process caches up to 64 MiB of answers, takes up to 1000 connections, and
    closes a connection whose request head is not complete within 10 s. Open to more
    than a trusted network, put it behind a reverse proxy (see README).
    """
    from ..publish.serve import CATALOG_ENV, create_app
    from ..publish.serve.server import check_listen, serve

    config = state.config()
    create_app(config.catalog)  # a missing or unreadable catalog fails here, in one line
    check_listen(host, port)  # a port in use fails here, in one line
    click.echo(f"Serving {config.catalog} on http://{host}:{port}/ (API: /api/openapi.json); Ctrl-C stops.")
    serve(config.catalog, host=host, port=port, workers=workers, environment_key=CATALOG_ENV)


main.add_command(verify_command)
main.add_command(coverage_command)


def reference_markdown() -> str:
    """``docs/cli.md``: the ``--help`` of the group and of every command, as Markdown."""
    parts = [
        "# Command reference",
        "",
        "<!-- Generated from the commands' --help by scripts/gen-docs; do not edit by hand. -->",
        "",
    ]
    commands: list[tuple[str, click.Command]] = [("cachedex", main)]
    for name in sorted(main.commands):
        command = main.commands[name]
        commands.append((f"cachedex {name}", command))
        if isinstance(command, click.Group):  # and its subcommands (cachedex export spack-cache)
            commands += [(f"cachedex {name} {sub}", command.commands[sub]) for sub in sorted(command.commands)]
    for name, command in commands:
        context = click.Context(
            command, info_name=name, terminal_width=100, max_content_width=100, help_option_names=["-h", "--help"]
        )
        parts += [f"## `{name}`", "", "```", command.get_help(context), "```", ""]
    return "\n".join(parts)
