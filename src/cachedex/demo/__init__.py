"""``cachedex demo``: generate sample mirrors, sync them, and say what to run next."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

from ..catalog import Catalog
from ..config import load_config
from ..errors import CachedexError, OutputError
from ..ingest.sync import TagOutcome, sync
from ..progress import SILENT, Progress
from ..publish.jekyll import write_jekyll
from ..publish.site import write_site
from .build import build_demo_mirrors
from .environment import write_demo_environment

__all__ = ["run_demo"]

_MARKER = ".cachedex-demo"
#: What each run makes again from nothing in its folder.
_REMADE = ("mirrors", "jekyll", "site", "cachedex.sqlite", "cachedex.sqlite-wal", "cachedex.sqlite-shm")


def _prepare(directory: Path) -> None:
    """Refuse to write into a folder that holds something other than an earlier demo."""
    if directory.exists() and any(directory.iterdir()) and not (directory / _MARKER).exists():
        raise CachedexError(
            f"{directory}: folder is not empty and was not made by 'cachedex demo'; choose another folder"
        )
    if (directory / _MARKER).exists():
        targets = [directory / stale for stale in _REMADE]
        # Checked before anything is removed: a symlink may lead anywhere, and what it
        # leads to is not the demo's to delete or write into.
        for target in targets:
            if target.is_symlink():
                raise OutputError(f"{target} is a symlink; cachedex demo does not follow it")
        try:
            for target in targets:
                if target.is_dir():
                    shutil.rmtree(target)
                elif target.exists():
                    target.unlink()
        except OSError as exc:
            raise OutputError(f"{exc.filename or directory}: cannot remove ({exc.strerror or exc})") from exc
    directory.mkdir(parents=True, exist_ok=True)
    (directory / _MARKER).write_text("made by cachedex demo; safe to delete\n", encoding="utf-8")


def run_demo(
    directory: Path,
    *,
    echo: Callable[[str], None],
    print_outcomes: Callable[[list[TagOutcome]], None],
    progress: Progress = SILENT,
) -> list[TagOutcome]:
    """Build the demo in ``directory`` and sync it; returns the outcomes of the last sync.

    develop is generated and synced twice (before and after a change) so that the
    catalog's history shows added and removed specs.
    """
    _prepare(directory)
    echo(f"Generating sample mirrors in {directory}/mirrors ...")
    config_path = build_demo_mirrors(directory, develop_revision=0)
    config = load_config(config_path)
    with Catalog(config.catalog) as catalog:
        first = sync(config, catalog, reporter=progress)
        _raise_on_failure(first)
        echo("First sync of every tag:")
        print_outcomes(first)
        build_demo_mirrors(directory, develop_revision=1)
        second = sync(config, catalog, ["develop"], reporter=progress)
        _raise_on_failure(second)
    echo("develop changed upstream; second sync (only develop's changed mirrors are read):")
    print_outcomes(second)
    jekyll_dir = directory / "jekyll"
    site_dir = directory / "site"
    with Catalog(config.catalog, readonly=True) as catalog:
        report = write_jekyll(catalog, jekyll_dir)
        site = write_site(catalog, site_dir)
    pages = sum(tag.pages for tag in report.tags)
    echo(
        f"Jekyll data (cache.spack.io pages): {pages:,} pages in {jekyll_dir}/_cache, "
        f"tags.yaml and meta.yaml in {jekyll_dir}/_data"
    )
    echo(f"Website: {site.pages:,} pages in {site_dir}")
    environment = write_demo_environment(directory)
    echo(f"A Spack environment's lockfile (hdf5, py-numpy; its zlib-ng a release newer): {environment}")
    echo("")
    echo(f"Catalog: {config.catalog}")
    echo(f"Config:  {config_path}")
    config_arg, site_arg, jekyll_arg, lock_arg, catalog_arg = (
        _shell_word(path) for path in (config_path, site_dir, jekyll_dir, environment, config.catalog)
    )
    cachedex = f"cachedex --config {config_arg}"
    echo("Next:")
    echo(f"  python3 -m http.server -d {site_arg} 8001   # then open http://127.0.0.1:8001/")
    echo(f"  {cachedex} serve        # the live site and its JSON API, on http://127.0.0.1:8000/")
    echo(f"  {cachedex} search 'hdf5+mpi target=x86_64:'")
    echo(f"  {cachedex} diff develop-2026-11-08 develop   # what a week changed")
    echo(f"  {cachedex} reuse {lock_arg}   # which of its specs have a binary, and why not")
    echo(f"  {cachedex} stats")
    echo(f"  {cachedex} sync        # a no-op: nothing changed")
    echo(f"  {cachedex} jekyll {jekyll_arg}   # unchanged: rewrites nothing")
    echo(f"  sqlite3 {catalog_arg} 'select name, version, compiler from specs limit 5'")
    return second


def _shell_word(path: Path) -> str:
    """``path`` for a command to paste into a shell: one word whatever it holds (a space,
    a quote), and never read as an option (a relative ``-dash`` is written ``./-dash``).
    A control character is written as bash's ``$'\\t'`` quoting has it: inside plain
    quotes, the escape the terminal is shown would be pasted as two characters."""
    text = str(path)
    text = f"./{text}" if text.startswith("-") else text
    if text.isprintable():
        return shlex.quote(text)
    return "$'" + "".join(_ansi_c(char) for char in text) + "'"


def _ansi_c(char: str) -> str:
    if char in "\\'":
        return "\\" + char
    if char.isprintable():
        return char
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8, as Python holds it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _raise_on_failure(outcomes: list[TagOutcome]) -> None:
    for outcome in outcomes:
        if outcome.error is not None:
            raise CachedexError(f"demo sync of {outcome.tag} failed: {outcome.error}")
