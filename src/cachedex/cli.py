"""The ``cachedex`` command line: a thin layer of click commands over the library.

Exit codes: 0 success, 1 an error the user can fix (one line; ``--debug`` shows the
traceback), 2 wrong usage.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from .catalog import Catalog, TagStats
from .config import Config, find_config, load_config
from .errors import CachedexError
from .progress import Reporter
from .sync import TagOutcome, sync

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
    "--config", "-c", metavar="FILE",
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
    "--sizes", is_flag=True,
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
            table.add_row(f"{o.tag}{note}", f"{o.records:,}", f"{o.specs:,}", f"{o.packages:,}",
                          str(o.stacks), f"+{o.added:,}", f"-{o.removed:,}", f"{o.seconds:.2f}")
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
        size = f"{_human_size(s.size)} ({s.sized:,} known)" if s.sized else "unknown"
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


def _human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


@main.command("demo")
@click.argument("directory", default="cachedex-demo", metavar="[DIR]",
                type=click.Path(file_okay=False, path_type=Path))
@click.pass_obj
@_friendly
def demo_command(state: _State, directory: Path) -> None:
    """Build sample mirrors in DIR (default ./cachedex-demo), sync them, show the result.

    The mirrors are generated by code in cachedex: four tags (a mutable develop, two
    dated snapshots, a release) with v2 and v3 layouts and nine stacks each. develop
    is synced twice, before and after a change, so the history has something to show.
    """
    from .demo_run import run_demo

    run_demo(directory, echo=_out.print, print_outcomes=_print_outcomes)


@main.command("jekyll")
@click.argument("outdir", metavar="OUTDIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--tag", "-t", "tags", multiple=True, metavar="TAG",
              help="Write only this tag (repeat for several; default: every tag in the catalog).")
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
    from .jekyll import write_jekyll

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
