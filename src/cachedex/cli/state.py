"""What every ``cachedex`` command shares: the options of the group (:class:`State`)
and how an error becomes one line on stderr (:func:`friendly`)."""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from ..catalog import Catalog
from ..config import Config, find_config, load_config
from ..errors import CORRUPT_ADVICE, CachedexError, ConfigError, resource_problem
from ..values import visible

__all__ = ["OutputFolder", "State", "configured_tags", "friendly", "not_empty", "verdict_command"]

F = TypeVar("F", bound=Callable[..., Any])


class State:
    """The group's options, and the config and catalog they name, loaded when a command asks."""

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


@contextlib.contextmanager
def configured_tags(config: Config, tags: tuple[str, ...]) -> Iterator[None]:
    """A tag on the command line the config does not name is wrong usage (exit code 2),
    said before the catalog is opened (a typo made an empty catalog); with ``tags_from``
    the tags are known once it is read, so the block's "unknown tag" is said so too."""
    try:
        if config.tags_from is None:
            for name in tags:
                config.tag(name)
        yield
    except ConfigError as exc:
        if any(problem.startswith("unknown tag") for problem in exc.problems):
            raise click.UsageError(str(exc)) from exc
        raise


class OutputFolder(click.Path):
    """A folder to write into (``OUTDIR``), given as click's Path; an empty one is refused:
    ``cachedex site "$OUT"`` with $OUT unset wrote the site into the current folder."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, (str, bytes)) and not value:
            self.fail("an empty path; give a folder ('.' is the current one)", param, ctx)
        return super().convert(value, param, ctx)


def not_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A callback refusing an empty file name (``--config ""`` used $CACHEDEX_CONFIG or
    ./cachedex.yaml as if none were given; ``reuse ""`` said "error: : not found")."""
    if value == "":
        raise click.BadParameter("an empty path; give a file's path", ctx=ctx, param=param)
    return value


#: SQLite's primary result codes that mean the file itself is damaged (or no database).
_SQLITE_CORRUPT = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def _catalog_problem(state: State | None, exc: sqlite3.DatabaseError) -> str:
    """The one line for an SQLite error that reached the command line: a read of a damaged
    page (opening the catalog already reports its own errors as CatalogError)."""
    where = str(state.catalog_path) if state is not None and state.catalog_path else "the catalog"
    if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _SQLITE_CORRUPT:
        return f"{where}: the catalog is corrupt ({exc}); {CORRUPT_ADVICE}"
    return f"{where}: cannot read the catalog ({exc})"


_VERDICT = "cachedex.verdict"


def verdict_command() -> None:
    """Mark the running command as one whose exit code is its answer (``verify``): a
    reader that stops reading (``cachedex verify | head``) then makes it exit 1, not 0,
    the code of a check that ended and found nothing."""
    click.get_current_context().meta[_VERDICT] = True


#: The exit code of a command stopped by Ctrl-C, as shells report one killed by SIGINT.
INTERRUPTED = 130


def friendly(func: F) -> F:
    """Turn CachedexError, SQLite's errors about the catalog and the system's (a folder
    it may not write) into one line on stderr and exit code 1 (traceback with --debug);
    Ctrl-C into "interrupted" and exit code 130, not click's "Aborted!" and 1, the code
    of an error to fix; a reader that stopped reading (``| head``) into exit code 0, or
    1 for a command marked by :func:`verdict_command`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            result = func(*args, **kwargs)
            sys.stdout.flush()  # here: a closed pipe is met in this try, not at exit
            return result
        except BrokenPipeError:
            # What was asked was answered as far as it was read: not an error, unless the
            # exit code is the command's answer (verify's "no problem"), which it did not
            # reach. Nothing more may reach the pipe (Python would complain of it at exit).
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1 if click.get_current_context().meta.get(_VERDICT) else 0)
        except (KeyboardInterrupt, CachedexError, sqlite3.DatabaseError, OSError, MemoryError, RuntimeError) as exc:
            context = click.get_current_context()
            state = context.find_object(State)
            ran_out = resource_problem(exc)
            if (state is not None and state.debug) or (isinstance(exc, RuntimeError) and ran_out is None):
                raise
            if isinstance(exc, KeyboardInterrupt):
                # (each tag's listing is one transaction: the one being written keeps what it
                # had; most sizes come after it, a batch at a time, and are kept as fetched)
                kept = (
                    "; a tag whose new listing was not written keeps its previous content; one whose listing "
                    "was written keeps it, and the next sync reads the sizes it lacks"
                )
                click.echo(f"interrupted{kept if context.info_name == 'sync' else ''}", err=True)
                sys.exit(INTERRUPTED)
            if ran_out is not None:
                message = ran_out
            elif isinstance(exc, CachedexError):
                message = str(exc)
            elif isinstance(exc, OSError):
                where = f"{exc.filename}: " if exc.filename else ""
                message = f"{where}{exc.strerror or exc}"
            else:  # (a RuntimeError or MemoryError is a resource's, or was raised above)
                assert isinstance(exc, sqlite3.DatabaseError)
                message = _catalog_problem(state, exc)
            # Line by line: a query's error shows a caret under it on a line of its own.
            click.echo("\n".join(visible(line) for line in f"error: {message}".split("\n")), err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]
