"""``cachedex reuse LOCKFILE``: which specs of a Spack environment (or of one concretized
spec) the cache has as binaries, per tag, and for each it lacks the nearest cached build
and what differs.

Registered on the ``cachedex`` group as ``main.add_command(reuse_command)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..values import ROOT_STACK, counted, total_size_text
from .present import OUT, print_json, print_table, shown
from .state import State, friendly, not_empty

if TYPE_CHECKING:  # (loaded by the command itself: not on every command's start)
    from ..reuse import Developed, Difference, Missing, ReuseReport, TagReuse

__all__ = ["reuse_command"]

#: Specs to build listed without --all.
LISTED = 25


@click.command("reuse", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("lockfile", metavar="LOCKFILE|SPECFILE", callback=not_empty)
@click.option(
    "--tag", "-t", "tags", multiple=True, help="Compare with this tag only (repeat for several; default: all)."
)
@click.option(
    "--stack",
    "-s",
    default=ROOT_STACK,
    show_default=True,
    help="Compare with this stack of each tag (of each that has it, when no --tag is given).",
)
@click.option("--all", "show_all", is_flag=True, help=f"List every spec to build (default: the first {LISTED}).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.pass_obj
@friendly
def reuse_command(
    state: State, lockfile: str, tags: tuple[str, ...], stack: str, show_all: bool, as_json: bool
) -> None:
    """Which specs of a Spack environment (its spack.lock) have a binary in the cache.

    SPECFILE: one concretized spec instead, as 'spack spec --json' prints it (or a
    build cache's .spec.json, clearsigned or not), its first node the root.

    For each tag: how many of the environment's specs it lists by their very hash
    (what Spack installs from a binary) and what those weigh. For the tag that lists
    the most, each spec it lacks with the nearest build of that package it has, and
    what differs: version, compiler, OS, target, variants, or its dependencies' hashes
    (the same build against another dependency is another binary). A spliced spec
    counts where the binary of the spec it was spliced from is (Spack installs it
    from that, rewired). Externals are never in a build cache, and a spec developed
    in place ('spack develop') is always built from its source: each is listed
    apart, with no nearest build. '-' reads standard input.

    \b
    Examples:
      cachedex reuse spack.lock
      cachedex reuse spack.lock --tag develop --stack e4s
      spack spec --json hdf5+mpi | cachedex reuse -
      spack -e . concretize -f && cachedex reuse spack.lock --json
    """
    from ..ingest.lockfile import read_lockfile
    from ..reuse import reuse_report

    lock = read_lockfile(lockfile)
    with state.catalog() as catalog:
        report = reuse_report(
            catalog,
            lock.path,
            lock.specs,
            [root.hash for root in lock.roots],
            tags=tags or None,
            stack=stack,
            splices=lock.splices,
        )
    if as_json:
        print_json(report)
        return
    _print(report, show_all)


def _print(report: ReuseReport, show_all: bool) -> None:
    OUT.print(
        shown(
            f"{report.lockfile}: {counted(report.specs, 'spec')}, {counted(report.roots, 'root')}; "
            f"{report.external:,} external (never in a build cache)"
            + (f"; {len(report.developed):,} developed locally (always built from source)" if report.developed else "")
        )
    )
    if not report.tags:
        OUT.print("The catalog has no tags: run 'cachedex sync' first.")
        return
    print_table(
        "",
        [("tag", "left"), ("stack", "left"), ("binaries", "right"), ("to build", "right"), ("download", "right")],
        (
            (
                shown(row.tag),
                shown(row.stack),
                f"{row.cached:,} of {row.needed:,}",
                f"{row.needed - row.cached:,}",
                _size(row),
            )
            for row in report.tags
        ),
    )
    for row in report.tags:
        if row.rewired:
            OUT.print(
                shown(
                    f"{row.tag}: {counted(row.rewired, 'spliced spec')} from the binary of the spec each was "
                    "spliced from (Spack installs it so, rewired)"
                )
            )
    if report.without_stack:
        stack = report.tags[0].stack
        OUT.print(shown(f"Not compared (no stack {stack}): {', '.join(report.without_stack)}"))
    best = report.tags[0]
    _print_developed(report.developed, show_all)
    if not best.needed:
        OUT.print(
            "The environment has no spec."
            if not report.specs
            else "No spec of the environment comes from a build cache: every one is external"
            + (" or developed locally." if report.developed else ".")
        )
        return
    if not best.missing:
        others = " not developed locally" if report.developed else ""
        OUT.print(shown(f"{best.tag} has a binary of every spec of the environment{others}."))
        return
    causes = [m for m in best.missing if not m.follows]
    follow = [m for m in best.missing if m.follows]
    OUT.print(shown(f"To build from source with {best.tag}: {counted(len(best.missing), 'spec')}."))
    if causes:
        OUT.print(f"Not cached as locked ({len(causes):,}), each with the nearest cached build and what differs:")
        for missing in causes if show_all else causes[:LISTED]:
            OUT.print(shown(_missing_line(missing, best.tag)))
        if not show_all and len(causes) > LISTED:
            OUT.print(f"  ... and {len(causes) - LISTED:,} more (--all lists them)")
    if follow:
        OUT.print(f"Built because a dependency above is built ({len(follow):,}):")
        if show_all:
            for missing in follow:
                OUT.print(shown(_missing_line(missing, best.tag)))
        else:
            names = ", ".join(f"{m.name}@{m.version}" for m in follow[:LISTED])
            more = f" and {len(follow) - LISTED:,} more" if len(follow) > LISTED else ""
            OUT.print(shown(f"  {names}{more} (--all: each)"))


def _print_developed(developed: tuple[Developed, ...], show_all: bool) -> None:
    """The specs developed in place: no nearest build, as Spack takes none from a cache."""
    if not developed:
        return
    OUT.print(f"Developed locally ({len(developed):,}): Spack builds each from its source, never from a build cache:")
    for spec in developed if show_all else developed[:LISTED]:
        OUT.print(shown(f"  {spec.name}@{spec.version} /{spec.hash[:7]}{' (root)' if spec.root else ''}"))
    if not show_all and len(developed) > LISTED:
        OUT.print(f"  ... and {len(developed) - LISTED:,} more (--all lists them)")


def _size(row: TagReuse) -> str:
    return total_size_text(row.size, row.sized, row.cached) if row.cached else "-"


def _missing_line(missing: Missing, tag: str) -> str:
    spec = f"  {missing.name}@{missing.version} /{missing.hash[:7]}{' (root)' if missing.root else ''}"
    nearest = missing.nearest
    if nearest is None:
        return f"{spec}: no build of {missing.name} in {tag}"
    if not nearest.differences:  # the same build and the same dependencies: cannot be (its hash would be ours)
        return f"{spec}: nearest /{nearest.hash[:7]}"
    return f"{spec}: nearest /{nearest.hash[:7]}, " + "; ".join(map(_difference_text, nearest.differences))


def _difference_text(difference: Difference) -> str:
    """``target x86_64_v3 (yours zen4; it runs on zen4)``, ``^zlib-ng 2.2.1 /7dlgwmr
    (yours 9.9.9 /h6ucypw)``."""
    runs = f"; it runs on {difference.wanted}" if difference.runs else ""
    return f"{difference.what} {difference.cached or '(none)'} (yours {difference.wanted or '(none)'}{runs})"
