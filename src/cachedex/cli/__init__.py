"""The ``cachedex`` command line: a thin layer of click commands over the library.

Each command loads the config, calls one library function and prints what it returns
(:mod:`.present`). Exit codes: 0 success, 1 an error the user can fix (one line;
``--debug`` shows the traceback and its cause), 2 wrong usage.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from pathlib import Path

import click

from .. import __version__
from ..catalog import Catalog
from ..errors import BadQuery, CachedexError
from ..values import visible
from ..versions import tag_order
from . import present, publish_reports
from .catalog_commands import forget_command, gc_command, warn_unconfigured
from .coverage_command import coverage_command
from .progress import Reporter
from .publish_commands import export_group, jekyll_command, serve_command, site_command
from .query_words import QueryCommand, query_text
from .reuse_command import reuse_command
from .state import OutputFolder, State, configured_tags, friendly, not_empty
from .verify_command import verify_command

__all__ = ["main", "reference_markdown"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config",
    "-c",
    metavar="FILE",
    callback=not_empty,
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
    ctx.obj = State(config, debug)


@main.command("sync")
@click.argument("tags", nargs=-1, metavar="[TAG]...")
@click.option(
    "--sizes",
    is_flag=True,
    help="Also ask v2 mirrors for every binary's size (one HTTP HEAD each). "
    "v3 mirrors always give sizes from their spec manifests.",
)
@click.pass_obj
@friendly
def sync_command(state: State, tags: tuple[str, ...], sizes: bool) -> None:
    """Read the mirrors of TAGs (default: every configured tag) into the catalog.

    A mirror whose index checksum did not change since the last sync is skipped
    without downloading its index. Each tag's listing is written in one transaction:
    if anything fails for a tag, it keeps its previous content, the other tags still
    update, and the command exits 1 with what failed and why. Most sizes the catalog
    lacks are read after it, and kept as they come: a sync stopped then keeps its new
    listing, and the next reads the sizes still missing. A TAG the config does not
    name is wrong usage (exit code 2).
    """
    from ..ingest.sync import sync

    config = state.config()
    with configured_tags(config, tags), Catalog(config.catalog) as catalog, Reporter() as reporter:
        outcomes = sync(
            config, catalog, tags or None, head_sizes=sizes, reporter=reporter, raise_unexpected=state.debug
        )
        present.print_outcomes(outcomes)
        if not tags:  # every tag the config names (tags_from's too) was synced: the others are left over
            # (advice: a catalog a failed write left unreadable must not hide the tags' errors)
            with contextlib.suppress(CachedexError, sqlite3.DatabaseError):
                warn_unconfigured(config, catalog, also=(o.tag for o in outcomes))
    failed = [o for o in outcomes if not o.ok]
    if failed:
        for outcome in failed:
            for line in (outcome.error or "").splitlines():
                click.echo(visible(f"error: {outcome.tag}: {line}"), err=True)  # (it may quote a mirror)
        click.echo(f"{len(failed)} of {len(outcomes)} tags failed; they keep their previous content.", err=True)
        sys.exit(1)


@main.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (one object per tag).")
@click.pass_obj
@friendly
def stats_command(state: State, as_json: bool) -> None:
    """Totals per tag from the catalog: records, listed specs, packages, stacks, size.

    Also what the tag's last sync changed in its root listing (specs added and removed),
    or that it was the tag's first sync, which compares with nothing. With --json, a size
    no spec of the tag has yet is null (size_bytes), as are a first sync's added and
    removed (last_sync_first is then true); synced_at is in seconds since the epoch.
    """
    config = state.config()
    with Catalog(config.catalog, readonly=True) as catalog:
        stats = catalog.tag_stats()
        if config.tags_from is None:  # (the tags it names are known only once it is read)
            warn_unconfigured(config, catalog)
    if as_json:
        present.print_json([present.stats_json(s) for s in stats])
    else:
        present.print_stats(str(config.catalog), stats)


@main.command("demo")
@click.argument("directory", default="cachedex-demo", metavar="[DIR]", type=OutputFolder())
@click.pass_obj
@friendly
def demo_command(state: State, directory: Path) -> None:
    """Build sample mirrors in DIR (default ./cachedex-demo), sync them, show the result.

    The mirrors are generated by code in cachedex: four tags (a mutable develop, two
    dated snapshots, a release) with v2 and v3 layouts and 10 to 13 stacks each. develop
    is synced twice, before and after a change, so the history has something to show.
    """
    from ..demo import run_demo

    with Reporter() as reporter:
        run_demo(directory, echo=publish_reports.say_visible, print_outcomes=present.print_outcomes, progress=reporter)


def _given_once(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> str | None:
    """An option of one value that a repeat would silently replace (``--tag develop
    --tag v1.0.2`` searched v1.0.2 alone, where ``reuse`` and ``site`` take several):
    refused, saying so."""
    if len(values) > 1:
        shown = ", ".join(visible(value) for value in values)
        raise click.BadParameter(f"given {len(values)} times ({shown}); this command takes one", ctx, param)
    return values[0] if values else None


# -- questions: search, show, diff ------------------------------------------------------


@main.command("search", cls=QueryCommand)
@click.argument("query", nargs=-1, required=True)
@click.option(
    "--tag", "-t", multiple=True, callback=_given_once, help="Only specs this tag lists (default: every tag)."
)
@click.option("--stack", "-s", multiple=True, callback=_given_once, help="Only specs this stack of --tag holds.")
@click.option(
    "--limit", "-n", type=click.IntRange(1, 100_000), default=50, show_default=True, help="At most this many specs."
)
@click.option("--offset", type=click.IntRange(0), default=0, help="Skip this many matches first.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help=(
        "Print a JSON list of objects, for scripts (when nothing matches, why goes to stderr; "
        "so does a note when --limit left matches out)."
    ),
)
@click.pass_obj
@friendly
def search_command(
    state: State, query: tuple[str, ...], tag: str | None, stack: str | None, limit: int, offset: int, as_json: bool
) -> None:
    """Find specs with Spack's spec syntax.

    \b
    Examples:
      cachedex search zlib
      cachedex search 'py-keras@3.9 backend=jax target=aarch64:'
      cachedex search 'hdf5+mpi~cuda os=ubuntu24.04 %gcc@13' --tag develop
      cachedex search /22qji2q                   # a hash prefix
      cachedex search arch=linux-ubuntu24.04-x86_64_v3 --stack e4s --tag develop
      cachedex search 'py-keras ^py-jax@0.4'       # needs py-jax 0.4 (link/run, at any depth)
      cachedex search 'hdf5 ^mpi'                  # built with any MPI (a virtual)
      cachedex search 'hdf5 target=:zen3'          # what runs on a zen3 machine

    @3.9 holds 3.9 and 3.9.x (not 3.10), @1.2:1.4 is a range, @=1.2.3 exact.
    Targets are ranges as in Spack: target=aarch64: is aarch64 and every target
    descending from it, target=:zen3 is zen3 and every target it descends from
    (the binaries a zen3 machine runs), target=x86_64_v2:zen3 both; commas join them.

    A ^dep that no package is named, such as ^mpi, is a virtual: it matches what
    depends, through an edge Spack marked so, on a package used as one (openmpi,
    mpich), whatever its version (a virtual's version is its interface's, which is
    not compared); a virtual alone (mpi) finds the providers some edge uses as it.

    The compiler comes last (hdf5 target=zen4 %gcc@13): Spack 1.0 reads what
    follows %gcc as gcc's own, and such a query is refused with the query written
    the other way. '*' is any value (mpi=*); compiler flags are not searched.

    A word starting with '-' (hdf5 -cuda) is part of the query, not an option;
    after '--' every word is (cachedex search -- hdf5 -cuda).
    """
    from ..query import parse

    if stack is not None and tag is None:
        raise click.UsageError("--stack needs --tag (a stack is a tag's)")
    parsed = parse(query_text(query))
    with state.catalog() as catalog:
        page = catalog.search(parsed, tag=tag, stack=stack, limit=limit, offset=offset, hints=True)
    present.print_search(page, by_stack=tag is not None, as_json=as_json)


@main.command("show")
@click.argument("what", metavar="HASH-OR-PACKAGE")
@click.option("--tag", "-t", multiple=True, callback=_given_once, help="For a package: only this tag.")
@click.option("--json", "as_json", is_flag=True, help="Print the data as JSON.")
@click.pass_obj
@friendly
def show_command(state: State, what: str, tag: str | None, as_json: bool) -> None:
    """Show one spec in full, or a package's summary per tag.

    A spec is named by its hash or a unique prefix (with or without '/'): its
    dependencies, its cached dependents, the tags and stacks holding it, its size
    and its closure's, and how to install it. Anything else is a package.
    """
    from ..publish.pages import package_page, resolve, spec_page

    if not what.strip().lstrip("/"):
        raise click.UsageError("give a spec's hash (or its first characters) or a package name")
    with state.catalog() as catalog:
        found = resolve(catalog, what)
        if not isinstance(found, str):
            page = spec_page(catalog, found.hash)
            if as_json:
                present.print_json(page)
            else:
                present.print_spec(page, catalog.spec_configs)
            return
        # in the order people look for tags (a branch, its snapshots newest first, releases)
        tags = [tag] if tag is not None else tag_order(t for t, _ in catalog.package_tags(found))
        pages = [package_page(catalog, t, found) for t in tags]
    if as_json:
        present.print_json(pages)
        return
    for package in pages:
        present.print_package(package)


@main.command("diff")
@click.argument("tags", nargs=-1, required=True, metavar="TAG_A [TAG_B]")
@click.option(
    "--since",
    metavar="DATE",
    help="Compare TAG_A with itself at DATE (YYYY-MM-DD, or an ISO date and time such as "
    "2026-11-01T09:30+01:00; UTC unless it says).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON.")
@click.pass_obj
@friendly
def diff_command(state: State, tags: tuple[str, ...], since: str | None, as_json: bool) -> None:
    """What changed between two tags, or in one tag since a date.

    Per stack: packages added, removed and changed (still there, a spec added or removed), and
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
    try:
        after = parse_since(since) if since is not None else None
    except BadQuery as exc:
        raise click.BadParameter(exc.problem, param_hint="'--since'") from exc
    with state.catalog() as catalog:
        if since is not None and after is not None:
            result = diff_since(catalog, tags[0], after, since)
        else:
            result = diff_tags(catalog, tags[0], tags[1])
    present.print_json(result) if as_json else present.print_diff(result)


for command in (
    verify_command,
    coverage_command,
    forget_command,
    gc_command,
    reuse_command,
    jekyll_command,
    export_group,
    site_command,
    serve_command,
):
    main.add_command(command)


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
