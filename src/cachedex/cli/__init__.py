"""The ``cachedex`` command line: a thin layer of click commands over the library.

Exit codes: 0 success, 1 an error the user can fix (one line; ``--debug`` shows the
traceback), 2 wrong usage.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .. import __version__
from ..catalog import Catalog, TagStats
from ..config import Config, find_config, load_config
from ..errors import CachedexError
from ..ingest.sync import TagOutcome, sync
from ..values import human_size
from .progress import Reporter

__all__ = ["main"]

F = TypeVar("F", bound=Callable[..., Any])

# Wide enough for the tables when output goes to a file or a pipe (rich assumes 80).
_out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 132)


class _State:
    def __init__(self, config: str | None, debug: bool) -> None:
        self.config_arg = config
        self.debug = debug

    def config(self) -> Config:
        return load_config(find_config(self.config_arg))


def _friendly(func: F) -> F:
    """Turn CachedexError into one line on stderr and exit code 1 (traceback with --debug)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except CachedexError as exc:
            state = click.get_current_context().find_object(_State)
            if state is not None and state.debug:
                raise
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config",
    "-c",
    metavar="FILE",
    help="Config file (default: $CACHEDEX_CONFIG, else ./cachedex.yaml).",
)
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
    config = state.config()
    with Catalog(config.catalog) as catalog, Reporter() as reporter:
        outcomes = sync(config, catalog, tags or None, head_sizes=sizes, reporter=reporter)
    _print_outcomes(outcomes)
    failed = [o for o in outcomes if not o.ok]
    if failed:
        for outcome in failed:
            click.echo(f"error: {outcome.tag}: {outcome.error}", err=True)
        click.echo(f"{len(failed)} of {len(outcomes)} tags failed; they keep their previous content.", err=True)
        sys.exit(1)


def _print_outcomes(outcomes: list[TagOutcome]) -> None:
    table = Table(title="sync", title_justify="left")
    for column in ("tag", "records", "specs", "packages", "stacks", "added", "removed", "seconds"):
        table.add_column(column, justify="left" if column == "tag" else "right")
    for o in outcomes:
        if o.ok:
            changed = sum(1 for m in o.mirrors if m.changed)
            note = "" if changed else " (unchanged)"
            table.add_row(
                f"{o.tag}{note}",
                f"{o.records:,}",
                f"{o.specs:,}",
                f"{o.packages:,}",
                str(o.stacks),
                f"+{o.added:,}",
                f"-{o.removed:,}",
                f"{o.seconds:.2f}",
            )
        else:
            table.add_row(f"{o.tag} [red](failed)[/red]", "-", "-", "-", "-", "-", "-", f"{o.seconds:.2f}")
    _out.print(table)
    for o in outcomes:
        for warning in o.warnings:
            _out.print(f"warning: {o.tag}: {warning}")


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
        click.echo(json.dumps([_stats_dict(s) for s in stats], indent=2))
        return
    if not stats:
        click.echo("The catalog has no tags yet; run 'cachedex sync'.")
        return
    table = Table(title=f"catalog {config.catalog}", title_justify="left")
    for column in ("tag", "records", "specs", "packages", "stacks", "size", "last sync"):
        table.add_column(column, justify="left" if column in ("tag", "last sync") else "right")
    for s in stats:
        size = f"{human_size(s.size)} ({s.sized:,} known)" if s.sized else "unknown"
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.synced_at)) if s.synced_at else "never"
        table.add_row(s.tag, f"{s.records:,}", f"{s.specs:,}", f"{s.packages:,}", str(s.stacks), size, when)
    _out.print(table)


def _stats_dict(stats: TagStats) -> dict[str, Any]:
    return {
        "tag": stats.tag,
        "records": stats.records,
        "specs": stats.specs,
        "packages": stats.packages,
        "stacks": stats.stacks,
        "size_bytes": stats.size,
        "specs_with_size": stats.sized,
        "synced_at": stats.synced_at,
        "last_sync_added": stats.added,
        "last_sync_removed": stats.removed,
    }


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
        run_demo(directory, echo=_out.print, print_outcomes=_print_outcomes, progress=reporter)


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
@click.pass_obj
@_friendly
def jekyll_command(state: _State, outdir: Path, tags: tuple[str, ...]) -> None:
    """Write the catalog as cache.spack.io pages into the Jekyll site OUTDIR.

    Per tag, one page per package, OUTDIR/_cache/TAG/PACKAGE/specs.md, with the same
    front matter (meta, spec_details) as cache.spack.io, byte for byte; sizes are
    bytes where the catalog knows them, "-" elsewhere. Also OUTDIR/_data/tags.yaml
    and OUTDIR/_data/meta.yaml (entries of other tags are kept).

    Safe to re-run: unchanged files are not rewritten, each file is replaced
    atomically, pages of packages that left a tag are removed, tags not selected and
    other files in OUTDIR are not touched. Names that cannot be folder names are
    skipped and reported. A big tag is written by several processes.

    The site's _config.yml needs the collection (collections: {cache: {output:
    true}}) and a 'cache' layout, as cache.spack.io has.

    \b
    Example:
      cachedex sync develop && cachedex jekyll ./site --tag develop
    """
    from ..publish.jekyll import write_jekyll

    config = state.config()
    with Catalog(config.catalog, readonly=True) as catalog:
        report = write_jekyll(catalog, outdir, tags=list(tags) or None)
    for skipped in report.skipped:
        click.echo(f"warning: skipped {skipped}", err=True)
    for tag in report.tags:
        for skipped in tag.skipped:
            click.echo(f"warning: {tag.tag}: skipped {skipped}", err=True)
        click.echo(
            f"{tag.tag}: {tag.pages:,} pages ({tag.specs:,} specs): {tag.written:,} written, "
            f"{tag.unchanged:,} unchanged, {tag.removed:,} removed -> {tag.directory}"
        )
    if not report.tags:
        click.echo("No tags to write; run 'cachedex sync' first.")
        return
    data = ", ".join(report.data_written) or "unchanged"
    click.echo(f"_data: {data} ({report.outdir / '_data'}); {report.seconds:.2f} s")


# -- questions: search, show, diff ------------------------------------------------------


@main.command("search")
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

    @3.9 holds 3.9 and 3.9.x (not 3.10), @1.2:1.4 is a range, @=1.2.3 exact;
    target=aarch64: (trailing colon) also matches targets descending from aarch64.
    """
    from ..query import parse

    parsed = parse(" ".join(query))
    config = state.config()
    with Catalog(config.catalog, readonly=True) as catalog:
        page = catalog.search(parsed, tag=tag, stack=stack, limit=limit, offset=offset)
    if as_json:
        click.echo(json.dumps([_spec_json(s) for s in page.specs], indent=2))
        return
    table = Table(
        title=f"{page.total:,} specs match" + (f" (showing {len(page.specs)})" if page.total > len(page.specs) else ""),
        title_justify="left",
    )
    for column in ("hash", "spec", "compiler", "arch", "variants", "stacks" if tag else "tags", "size"):
        table.add_column(column, justify="right" if column == "size" else "left")
    for s in page.specs:
        # Values come from mirrors: show them as text, never as rich markup.
        table.add_row(
            *(
                escape(cell)
                for cell in (
                    s.hash[:7],
                    f"{s.name}@{s.version}",
                    s.compiler,
                    f"{s.platform}-{s.os}-{s.target}",
                    " ".join(s.variants),
                    ", ".join(s.stacks if tag else s.tags),
                    human_size(s.size),
                )
            )
        )
    _out.print(table)


def _spec_json(spec: Any) -> dict[str, Any]:
    import msgspec

    data: dict[str, Any] = msgspec.to_builtins(spec)
    data["arch"] = f"{spec.platform}-{spec.os}-{spec.target}"
    return data


@main.command("show")
@click.argument("what", metavar="HASH-OR-PACKAGE")
@click.option("--tag", "-t", help="For a package: only this tag.")
@click.option("--json", "as_json", is_flag=True, help="Print the data as JSON.")
@click.pass_obj
@_friendly
def show_command(state: _State, what: str, tag: str | None, as_json: bool) -> None:
    """Show one spec in full, or a package's summary per tag.

    A spec is named by its hash or a unique prefix (with or without '/'): its
    dependencies as a tree, its cached dependents, the tags and stacks holding it,
    its size and its closure's, and how to install it. Anything else is a package.
    """
    import msgspec

    from ..publish.pages import PageNotFound, package_page, spec_page
    from ..query import Query

    config = state.config()
    with Catalog(config.catalog, readonly=True) as catalog:
        prefix = what.lstrip("/")
        matches = catalog.search(Query(hash_prefix=prefix), limit=2).specs if prefix.isalnum() else ()
        if what.startswith("/") or (matches and not catalog.package_tags(what)):
            if not matches:
                raise CachedexError(f"no spec with a hash starting with {prefix!r}")
            if len(matches) > 1:
                raise CachedexError(f"hash prefix {prefix!r} is ambiguous; give more characters")
            page = spec_page(catalog, matches[0].hash)
            if as_json:
                click.echo(msgspec.json.format(msgspec.json.encode(page)).decode())
                return
            _print_spec(page, catalog)
            return
        tags = [tag] if tag else [t for t, _ in catalog.package_tags(what)]
        if not tags:
            raise PageNotFound(f"no tag lists a package {what!r}; try 'cachedex search {what}'")
        pages = [package_page(catalog, t, what) for t in tags]
    if as_json:
        click.echo(msgspec.json.format(msgspec.json.encode(pages)).decode())
        return
    for page in pages:
        versions = sorted({s.version for s in page.specs}, reverse=True)
        _out.print(
            f"[bold]{escape(page.name)}[/bold] in [bold]{escape(page.tag)}[/bold]: {len(page.specs)} specs, "
            f"{human_size(page.size)}; versions {escape(', '.join(versions))}"
        )
        for key, counts in page.facets.items():
            _out.print(f"  {key}: " + escape(", ".join(f"{v} ({n})" for v, n in counts.items())))


def _print_spec(page: Any, catalog: Catalog) -> None:
    from rich.tree import Tree

    s = page.spec
    _out.print(f"[bold]{escape(s.name)}@{escape(s.version)}[/bold] /{s.hash}")
    _out.print(escape(f"  compiler {s.compiler}  arch {s.platform}-{s.os}-{s.target}"))
    _out.print(escape(f"  variants {' '.join(s.variants) or '-'}"))
    _out.print(
        f"  size {human_size(s.size)}; with its link/run closure "
        f"{human_size(page.closure_size)}"
        + (f" ({page.closure_unknown} sizes unknown)" if page.closure_unknown else "")
    )
    _out.print(
        "  held by "
        + ", ".join(escape(f"{h.tag}/{h.stack}") + ("" if h.listed else " (no binary)") for h in page.holders)
    )
    tree = Tree(escape(f"{s.name}@{s.version}"))
    seen: set[str] = set()

    def grow(node: Tree, dag_hash: str, depth: int) -> None:
        for edge in catalog.edges_of(dag_hash):
            mark = "" if edge.listed else " [dim](no binary)[/dim]"
            branch = node.add(escape(f"{edge.name}@{edge.version} /{edge.hash[:7]}") + mark)
            if edge.hash in seen or depth >= 2:
                continue
            seen.add(edge.hash)
            grow(branch, edge.hash, depth + 1)

    grow(tree, s.hash, 0)
    _out.print(tree)
    if page.dependents:
        _out.print(
            "cached dependents: " + escape(", ".join(f"{d.name}@{d.version} /{d.hash[:7]}" for d in page.dependents))
        )
    for install in page.install[:1]:
        _out.print(escape(f"install ({install.tag}/{install.stack}):"))
        for line in install.commands.splitlines():
            _out.print(f"  {line}", markup=False)


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
    import datetime

    import msgspec

    from ..diff import diff_since, diff_tags

    if since is None and len(tags) != 2:
        raise click.UsageError("give two tags, or one tag and --since DATE")
    if since is not None and len(tags) != 1:
        raise click.UsageError("--since takes one tag")
    config = state.config()
    with Catalog(config.catalog, readonly=True) as catalog:
        if since is not None:
            try:
                when = datetime.datetime.fromisoformat(since)
            except ValueError:
                raise click.BadParameter(f"{since!r} is not a date like 2026-11-01", param_hint="--since") from None
            if when.tzinfo is None:
                when = when.replace(tzinfo=datetime.UTC)
            result = diff_since(catalog, tags[0], when.timestamp(), since)
        else:
            result = diff_tags(catalog, tags[0], tags[1])
    if as_json:
        click.echo(msgspec.json.format(msgspec.json.encode(result)).decode())
        return
    if result.unchanged:
        click.echo(f"{result.old} -> {result.new}: no change")
        return
    table = Table(title=f"{result.old} -> {result.new}", title_justify="left")
    for column in ("stack", "+specs", "-specs", "+packages", "-packages", "changed packages"):
        table.add_column(column, justify="left" if column in ("stack", "changed packages") else "right")
    for stack in result.stacks:
        changed = ", ".join(stack.changed_packages[:8]) + (" ..." if len(stack.changed_packages) > 8 else "")
        table.add_row(
            stack.stack,
            f"{len(stack.added):,}",
            f"{len(stack.removed):,}",
            ", ".join(stack.added_packages[:5]) or "-",
            ", ".join(stack.removed_packages[:5]) or "-",
            changed or "-",
        )
    _out.print(table)


@main.command("site")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--tag", "-t", "tags", multiple=True, help="Only this tag (repeatable).")
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes writing pages of a big site  [default: one per CPU, at most 4].",
)
@click.pass_obj
@_friendly
def site_command(state: _State, outdir: Path, tags: tuple[str, ...], workers: int | None) -> None:
    """Write the catalog as a self-contained static website into OUTDIR.

    Home (tags, package search), a page per tag (packages, facet filters kept in the
    URL), per package and tag (specs), per spec (specs/<ab>/<hash>.html: dependencies,
    dependents, sizes, install commands) and the mirrors; each page with a JSON twin
    beside it (index.json, <hash>.json). No external host is referenced: serve OUTDIR
    with any static file server. Unchanged pages are not rewritten; pages of packages
    and specs that left are removed.

    \b
    Example:
      cachedex site ./site && python3 -m http.server -d ./site 8000
    """
    from ..publish.site import write_site

    config = state.config()
    with Catalog(config.catalog, readonly=True) as catalog, Reporter() as reporter:
        line = reporter.task("site", total=None)
        report = write_site(catalog, outdir, tags=list(tags) or None, on_progress=line.describe, workers=workers)
        line.done()
    for skipped in report.skipped:
        click.echo(f"warning: skipped {skipped}", err=True)
    click.echo(
        f"{report.pages:,} pages: {report.written:,} files written, {report.unchanged:,} unchanged, "
        f"{report.removed:,} removed -> {report.outdir} ({report.seconds:.1f} s)"
    )


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
    (/api/search?q=hdf5+mpi&tag=develop), diffs. The catalog is opened read-only:
    a 'cachedex sync' may run meanwhile; responses change when it commits.
    """
    import uvicorn

    from ..publish.serve import CATALOG_ENV, create_app

    config = state.config()
    create_app(config.catalog)  # a missing or unreadable catalog fails here, in one line
    click.echo(f"Serving {config.catalog} on http://{host}:{port}/ (API: /api/openapi.json); Ctrl-C stops.")
    # Worker processes import the app by name; the catalog's path goes by environment.
    os.environ[CATALOG_ENV] = str(config.catalog)
    uvicorn.run(
        "cachedex.publish.serve:app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
    )
