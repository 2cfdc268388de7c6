"""Keeping the catalog: ``cachedex forget`` (tags the config no longer names) and
``cachedex gc`` (the space of specs nothing needs any more)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

import click

from ..catalog import Catalog
from ..config import Config
from ..errors import UnknownTag
from ..values import counted, human_size, visible
from .state import State, friendly

__all__ = ["forget_command", "gc_command", "unconfigured_tags", "warn_unconfigured"]


def unconfigured_tags(config: Config, catalog: Catalog, also: Iterable[str] = ()) -> list[str]:
    """The catalog's tags that ``config`` does not name (removed, or renamed) nor
    ``also`` (tags its ``tags_from`` gave): still searched and published until forgotten."""
    configured = {tag.name for tag in config.tags} | set(also)
    return [tag for tag in catalog.tag_names() if tag not in configured]


def warn_unconfigured(config: Config, catalog: Catalog, also: Iterable[str] = ()) -> None:
    """One warning line per tag the catalog keeps that the config does not name."""
    for tag in unconfigured_tags(config, catalog, also):
        click.echo(
            visible(
                f"warning: tag {tag} is in the catalog but not in {config.path or 'the config'}: "
                f"its specs are still searched and published; 'cachedex forget {tag}' removes it"
            ),
            err=True,
        )


def _file_size(path: os.PathLike[str]) -> int:
    """The catalog's bytes on disk: its file and its write-ahead log (which the command's
    checkpoint empties: counted before, a catalog that shrank was said to grow)."""
    total = 0
    for name in (os.fspath(path), os.fspath(path) + "-wal"):
        with contextlib.suppress(OSError):  # (none: 0)
            total += os.stat(name).st_size
    return total


@click.command("forget", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("tags", nargs=-1, required=True, metavar="TAG...")
@click.pass_obj
@friendly
def forget_command(state: State, tags: tuple[str, ...]) -> None:
    """Remove TAGs from the catalog: their listings, history and verifications.

    For a tag removed from the config or renamed in it (the old name stays in the
    catalog, searched and published, until forgotten; 'cachedex sync' warns of it).
    A tag the config still names is refused: the next sync would read it again.
    Then the specs no other tag holds are removed and the space given back, as
    'cachedex gc' does. The next 'cachedex site' and 'cachedex jekyll' remove the
    tags' pages.

    \b
    Example:
      cachedex forget develop-2025-01-05
    """
    from ..ingest.discovery import chosen_tags

    config = state.config()
    with chosen_tags(config, None) as (everything, _, _):  # tags_from's tags too (read now)
        configured = sorted({tag.name for tag in everything.tags} & set(tags))
    if configured:
        raise click.UsageError(
            f"{', '.join(configured)}: still in {config.path or 'the config'} (the next sync would read "
            "it again); remove it from the config first"
        )
    with Catalog(config.catalog, create=False) as catalog:  # (none: nothing to forget)
        known = set(catalog.tag_names())
        unknown = [tag for tag in tags if tag not in known]
        if unknown:  # (as every command that reads the catalog says it: exit code 1; each named)
            raise UnknownTag(unknown[0], sorted(known), others=unknown[1:])
        before = _file_size(config.catalog)
        forgotten = catalog.forget_tags(dict.fromkeys(tags), on_wait=_say_waiting)
        specs, _ = catalog.collect_garbage(on_wait=_say_waiting, on_readers=_say_readers)
    for tag, listed in forgotten.items():
        click.echo(visible(f"forgot {tag} ({counted(listed, 'spec')} listed)"))
    _said_space(specs, before, _file_size(config.catalog))


@click.command("gc", context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_obj
@friendly
def gc_command(state: State) -> None:
    """Remove the specs nothing needs any more, and give their space back.

    A spec stays in the catalog while a mirror lists it or names it, the history
    of a sync names it, or a spec kept depends on it: a mirror that replaces
    builds night after night leaves the others behind. This removes them and
    rewrites the catalog file compactly (VACUUM: it needs as much free disk as the
    catalog takes, and waits for a running sync). History is kept whole.
    """
    config = state.config()
    before = _file_size(config.catalog)
    with Catalog(config.catalog, create=False) as catalog:  # (none: nothing to collect)
        specs, _ = catalog.collect_garbage(on_wait=_say_waiting, on_readers=_say_readers)
    _said_space(specs, before, _file_size(config.catalog))


def _say_waiting() -> None:
    """Another process writes the catalog (a sync): said, or the command seems to hang."""
    click.echo("waiting for another process writing the catalog (a sync?) to finish ...", err=True)


def _say_readers() -> None:
    """The catalog was compacted, but readers kept its log from being emptied."""
    click.echo(
        "note: another process has the catalog open (a server, a site build, a sync): the space comes back "
        "once it has ended and 'cachedex gc' runs again (meanwhile the catalog's log holds the compacted file)",
        err=True,
    )


def _said_space(specs: int, before: int, after: int) -> None:
    click.echo(
        f"removed {counted(specs, 'spec')} nothing needed; "
        f"the catalog is {human_size(after)} (was {human_size(before)})"
    )
