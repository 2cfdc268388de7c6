"""What the commands print: rich tables and trees for people, JSON for scripts.

Every value that comes from a mirror or the catalog (names, versions, variants, URLs)
is printed as text, never as rich markup: a package named ``[red]`` prints as written.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import click
import msgspec
from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from ..values import compilers_text, counted, shared_variants, size_text, total_size_text, visible

if TYPE_CHECKING:  # types only: importing the publishers costs every command ~0.1 s
    from ..catalog import Edge, SearchPage, SpecSummary, TagStats
    from ..diff import TagDiff
    from ..ingest.sync import TagOutcome
    from ..publish.edge_lists import Configs
    from ..publish.pages import PackagePage, SpecPage

__all__ = [
    "LAYOUT_WIDTH",
    "OUT",
    "print_diff",
    "print_json",
    "print_outcomes",
    "print_package",
    "print_search",
    "print_spec",
    "print_stats",
    "print_table",
    "shown",
    "spec_json",
    "stats_json",
]


class _Output(Console):
    """Standard output: a reader that stops reading (``| head``) ends the command as
    its ``BrokenPipeError`` does (see ``state.friendly``), not rich's exit code 1."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def _columns() -> int | None:
    """``COLUMNS``, when it is set to a width."""
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


_TERMINAL = sys.stdout is not None and sys.stdout.isatty()
# Output to a file or a pipe is as wide as a row is, unless COLUMNS says otherwise (rich
# would assume 80 and fold every row); a terminal's is the terminal's.
OUT = _Output(highlight=False, emoji=False, soft_wrap=True, width=None if _TERMINAL else _columns() or 10_000)
#: The width a matrix of many columns is laid out for (``cachedex coverage``): a row of a
#: hundred counts is no line to read, even in a file.
LAYOUT_WIDTH = OUT.width if _TERMINAL else _columns() or 132

#: Below this many characters a column, a table is printed row by row instead: each
#: column would be folded into a few letters a line.
_COLUMN_MINIMUM = 8


def print_table(title: str, columns: Sequence[tuple[str, JustifyMethod]], rows: Iterable[Sequence[str]]) -> None:
    """A table of ``rows`` (each a cell per column, rich markup: values ``shown``). A
    cell too long for its column folds onto the next line, never cut to "…": a hash,
    a version or a stack name is what people copy and grep. On a terminal too narrow
    for the columns, each row is a line of ``column: value`` pairs."""
    rows = list(rows)
    if OUT.width < _COLUMN_MINIMUM * len(columns):
        if title:
            OUT.print(title)
        for row in rows:
            OUT.print("; ".join(f"{name}: {cell}" for (name, _), cell in zip(columns, row, strict=True) if cell))
        return
    table = Table(title=title or None, title_justify="left", show_lines=False)
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")
    for row in rows:
        table.add_row(*row)
    OUT.print(table)


def shown(text: str) -> str:
    """A value from outside as rich prints it: literally (its markup escaped), its
    control characters visible (:func:`~cachedex.values.visible`)."""
    return escape(visible(text))


def print_json(value: Any) -> None:
    """``value`` as indented JSON on stdout."""
    click.echo(msgspec.json.format(msgspec.json.encode(value)).decode())


def print_outcomes(outcomes: list[TagOutcome]) -> None:
    """The table of what a sync did, per tag, then its warnings."""
    rows = []
    for o in outcomes:
        if o.ok:
            note = "" if o.changed else " (unchanged)"  # a dropped stack is a change (DATA-4)
            # A first sync has no listing to compare with: "+0" would say nothing came.
            note = " (first sync)" if o.first else note
            rows.append(
                (
                    shown(f"{o.tag}{note}"),
                    f"{o.records:,}",
                    f"{o.specs:,}",
                    f"{o.packages:,}",
                    str(o.stacks),
                    "-" if o.first else f"+{o.added:,}",
                    "-" if o.first else f"-{o.removed:,}",
                    f"{o.seconds:.2f}",
                )
            )
        else:
            rows.append((f"{shown(o.tag)} [red](failed)[/red]", "-", "-", "-", "-", "-", "-", f"{o.seconds:.2f}"))
    columns = ("tag", "records", "specs", "packages", "stacks", "added", "removed", "seconds")
    print_table("sync", [(c, "left" if c == "tag" else "right") for c in columns], rows)
    for o in outcomes:
        for warning in o.warnings:
            click.echo(visible(f"warning: {o.tag}: {warning}"))


def stats_json(stats: TagStats) -> dict[str, Any]:
    """One tag's totals as ``cachedex stats --json`` prints them."""
    return {
        "tag": stats.tag,
        "records": stats.records,
        "specs": stats.specs,
        "packages": stats.packages,
        "stacks": stats.stacks,
        # null, not 0, where there is nothing to say: no size known, or a first sync
        # (nothing listed before it to have added to or removed from).
        "size_bytes": stats.size if stats.sized else None,
        "specs_with_size": stats.sized,
        "synced_at": stats.synced_at,
        "last_sync_first": stats.last_was_first,
        "last_sync_added": None if stats.last_was_first else stats.added,
        "last_sync_removed": None if stats.last_was_first else stats.removed,
    }


def print_stats(catalog_path: str, stats: list[TagStats]) -> None:
    """The table of ``cachedex stats``."""
    if not stats:
        OUT.print("The catalog has no tags yet; run 'cachedex sync'.")
        return
    rows = []
    for s in stats:
        size = total_size_text(s.size, s.sized, s.specs)  # of how many, as pages say it
        # In UTC, as diffs, the site and the API give times (the local zone is the machine's, not the reader's).
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(s.synced_at)) if s.synced_at else "never"
        # As the sync table says it: a first sync's "+0" would say nothing came.
        changes = "-" if not s.synced_at else "first sync" if s.last_was_first else f"+{s.added:,} -{s.removed:,}"
        row = (f"{s.records:,}", f"{s.specs:,}", f"{s.packages:,}", str(s.stacks), size, when, changes)
        rows.append((shown(s.tag), *row))
    columns = ("tag", "records", "specs", "packages", "stacks", "size", "last sync", "changes")
    justify: list[tuple[str, JustifyMethod]] = [(c, "left" if c in ("tag", "last sync") else "right") for c in columns]
    print_table(shown(f"catalog {catalog_path}"), justify, rows)


def spec_json(spec: SpecSummary) -> dict[str, Any]:
    """A search result as ``cachedex search --json`` prints it: its fields plus ``arch``."""
    data: dict[str, Any] = msgspec.to_builtins(spec)
    data["arch"] = f"{spec.platform}-{spec.os}-{spec.target}"
    return data


def print_search(page: SearchPage, *, by_stack: bool, as_json: bool) -> None:
    """Search results: a table (stacks when a tag was searched, else tags), or JSON."""
    if as_json:
        click.echo(json.dumps([spec_json(s) for s in page.specs], indent=2))
        for hint in page.hints:  # for the person running the script; its output stays JSON
            click.echo(visible(f"hint: {hint}"), err=True)
        if page.total and not page.specs:  # --offset past the last, as the table says it
            click.echo(f"note: none from --offset {page.offset:,}: the last is {page.total - 1:,}", err=True)
        elif page.total > len(page.specs):  # (as the table says it: cut at --limit's 50 without a word, it was)
            start = f" from --offset {page.offset:,}" if page.offset else ""
            click.echo(
                f"note: {len(page.specs):,} of {page.total:,} matches{start}; --limit and --offset give the others",
                err=True,
            )
        return
    # (from where, after --offset: "(showing 50)" did not say which 50)
    start = f" from --offset {page.offset:,}" if page.offset else ""
    more = f" (showing {len(page.specs):,}{start})" if page.total > len(page.specs) else ""
    if page.total and not page.specs:  # --offset past the last
        more = f" (none from --offset {page.offset:,}: the last is {page.total - 1:,})"
    matching = f"{counted(page.total, 'spec')} match{'es' if page.total == 1 else ''}"
    shared = _shared_variants(page.specs)
    rows = [
        tuple(
            shown(cell)
            for cell in (
                s.hash[:7],
                f"{s.name}@{s.version}",
                compilers_text(s.compiler, s.other_compilers),
                f"{s.platform}-{s.os}-{s.target}",
                " ".join(v for v in s.variants if v not in shared.get(s.name, ())),
                ", ".join(s.stacks if by_stack else s.tags),
                size_text(s.size),  # "unknown" (never "-"), as show, stats and the pages say it
            )
        )
        for s in page.specs
    ]
    columns: tuple[str, ...] = (
        "hash",
        "spec",
        "compiler",
        "arch",
        "variants",
        "stacks" if by_stack else "tags",
        "size",
    )
    table: list[tuple[str, ...]] = list(rows)
    if not any(row[4] for row in rows):  # (none differs: each package's line below says them)
        columns = columns[:4] + columns[5:]
        table = [row[:4] + row[5:] for row in rows]
    if page.specs:
        print_table(f"{matching}{more}", [(c, "right" if c == "size" else "left") for c in columns], table)
    else:
        OUT.print(f"{matching}{more}")
    for name, every in shared.items():  # (the column shows what tells them apart)
        OUT.print(shown(f"  {name}: the same in each of its specs above: {' '.join(every)}"))
    for hint in page.hints:  # nothing matched: say which condition nothing satisfies
        OUT.print(shown(f"  {hint}"))


def _shared_variants(specs: Sequence[SpecSummary]) -> dict[str, list[str]]:
    """Per package with several specs in ``specs``, the variants each of them holds (in
    its first spec's order): a search's table shows the others, those that differ, as
    the pages do; a package's 20 variants repeated on every row hid them."""
    groups: dict[str, list[SpecSummary]] = {}
    for spec in specs:
        groups.setdefault(spec.name, []).append(spec)
    shared: dict[str, list[str]] = {}
    for name, group in groups.items():
        if len(group) > 1:
            every = shared_variants(group)
            if every:
                shared[name] = [v for v in group[0].variants if v in every]
    return shared


#: Dependents a spec's summary lists one by one; beyond, it counts them by package.
DEPENDENTS_LISTED = 10
#: Packages named in a summary of many dependents (a core library has thousands).
DEPENDENT_PACKAGES = 20


def _dependents_text(dependents: Sequence[Edge], configs: Configs | None = None) -> str:
    """A spec's cached dependents for a terminal: each, when few (with ``configs``,
    labelled with what tells it apart from the others of its package, as the spec page
    does); else how many of each package, the first :data:`DEPENDENT_PACKAGES`."""
    if len(dependents) <= DEPENDENTS_LISTED:
        from ..publish.edge_lists import told_apart  # (a spec's summary only)

        told = told_apart(dependents, configs) if configs is not None else [""] * len(dependents)
        return ", ".join(
            f"{d.name}@{d.version}{' ' + label if label else ''} /{d.hash[:7]}"
            for d, label in zip(dependents, told, strict=True)
        )
    per_package = Counter(d.name for d in dependents)
    named = ", ".join(f"{name} ({n})" for name, n in itertools.islice(per_package.items(), DEPENDENT_PACKAGES))
    rest = len(per_package) - DEPENDENT_PACKAGES
    more = f" and {counted(rest, 'more package')}" if rest > 0 else ""
    return (
        f"{counted(len(dependents), 'spec')} of {counted(len(per_package), 'package')}: {named}{more}"
        " ('cachedex show --json' lists each)"
    )


def print_spec(page: SpecPage, configs: Configs | None = None) -> None:
    """One spec: facts, dependencies as a tree, dependents (``configs``: how to tell
    those of one package apart), how to install it."""
    s = page.spec
    OUT.print(f"[bold]{shown(s.name)}@{shown(s.version)}[/bold] /{shown(s.hash)}")
    OUT.print(shown(f"  compiler {compilers_text(s.compiler, s.other_compilers)}  arch {s.platform}-{s.os}-{s.target}"))
    OUT.print(shown(f"  variants {' '.join(s.variants) or '-'}"))
    # A total says how many sizes it knows ("3.0 MB (2 of 3 known)"), as the spec page
    # does; no binary to download at all is nothing, not a size nobody knows.
    known = page.closure_binaries - page.closure_unknown
    closure = (
        total_size_text(page.closure_size, known, page.closure_binaries)
        if page.closure_binaries
        else "nothing to download (no binary)"
    )
    OUT.print(f"  size {size_text(s.size)}; with its link/run closure {closure}")
    from ..publish.spec_pages import CLOSURE_LISTED, largest_dependencies  # (a spec's summary only)

    if largest := largest_dependencies(page.closure, page.closure_size):
        said = ", ".join(f"{e.name}@{e.version} {size_text(e.size)} ({share})" for e, share in largest)
        OUT.print("  largest dependencies: " + shown(said))
    if page.holders:
        # A mirror whose index names the spec without its binary (a dependency, an
        # external) does not hold it: said apart, as the spec page says it.
        for listed, said in ((True, "binary in"), (False, "no binary in")):
            per_tag: dict[str, list[str]] = {}
            for h in page.holders:
                if h.listed == listed:
                    per_tag.setdefault(h.tag, []).append(h.stack)
            if per_tag:
                OUT.print(
                    f"  {said} " + shown("; ".join(f"{tag}: {', '.join(found)}" for tag, found in per_tag.items()))
                )
    else:
        OUT.print("  held by no mirror now: every tag that listed it has dropped it ('cachedex diff' tells when)")
    tree = Tree(shown(f"{s.name}@{s.version}"))
    for edge in page.dependencies:
        mark = "" if edge.listed else " [dim](no binary)[/dim]"
        tree.add(shown(f"{edge.name}@{edge.version} /{edge.hash[:7]}") + mark)
    OUT.print(tree)
    if page.closure_count:
        which = "them" if page.closure_count <= len(page.closure) else f"the first {CLOSURE_LISTED:,}"
        if page.closure_count == 1:  # ("1 link/run dependencies")
            OUT.print("  1 link/run dependency in all ('cachedex show --json' lists it)")
        else:
            OUT.print(f"  {page.closure_count:,} link/run dependencies in all ('cachedex show --json' lists {which})")
    if page.dependents:
        OUT.print("cached dependents: " + shown(_dependents_text(page.dependents, configs)))
    for install in page.install[:1]:
        OUT.print(shown(f"install ({install.tag}/{install.stack}):"))
        for line in install.commands.splitlines():
            OUT.print(f"  {visible(line)}", markup=False, emoji=False)


def print_package(page: PackagePage) -> None:
    """A package's summary in one tag: its versions newest first (Spack's order, as the
    page lists its specs), its size, and the values that tell its specs apart."""
    versions = dict.fromkeys(s.version for s in page.specs)
    size = size_text(page.size) if page.sized else "sizes unknown"
    if 0 < page.sized < len(page.specs):
        size += f" ({page.sized:,} of {len(page.specs):,} sizes known)"
    OUT.print(
        f"[bold]{shown(page.name)}[/bold] in [bold]{shown(page.tag)}[/bold]: {counted(len(page.specs), 'spec')}, "
        f"{size}; {'versions' if len(versions) > 1 else 'version'} {shown(', '.join(versions))}"
    )
    for key, counts in page.facets.items():
        if key == "runs_on":  # (some 60 machines of a target family: the page's filter, not a summary)
            continue
        if counts:
            OUT.print(f"  {key}: " + shown(", ".join(f"{v} ({n})" for v, n in counts.items())))
        elif key == "variant" and page.specs and page.specs[0].variants:  # none differs: say what they are
            every = "the same in every spec: " if len(page.specs) > 1 else ""
            OUT.print(f"  variant: {every}" + shown(" ".join(page.specs[0].variants)))


def print_diff(result: TagDiff) -> None:
    """A diff's table: per stack, specs and packages added and removed, packages changed."""
    if result.unchanged:
        click.echo(f"{result.old} -> {result.new}: no change")
        return
    rows, cut = [], False
    for stack in result.stacks:
        names = [(stack.added_packages, 5), (stack.removed_packages, 5), (stack.changed_packages, 8)]
        cut = cut or any(len(some) > listed + 1 for some, listed in names)
        rows.append((shown(stack.stack), f"{len(stack.added):,}", f"{len(stack.removed):,}", *_first(names)))
    columns = ("stack", "+specs", "-specs", "+packages", "-packages", "changed packages")
    justify: list[tuple[str, JustifyMethod]] = [
        (c, "left" if c in ("stack", "changed packages") else "right") for c in columns
    ]
    print_table(shown(f"{result.old} -> {result.new}"), justify, rows)
    if cut:
        OUT.print("('cachedex diff --json' lists every package and spec)")


def _first(names: Iterable[tuple[Sequence[str], int]]) -> list[str]:
    """Per list, its first names, then how many more: a bare cut (or "...") read as all."""
    cells = []
    for some, listed in names:
        rest = len(some) - listed if len(some) > listed + 1 else 0  # ("and 1 more": the name is as short)
        cells.append(shown(", ".join(some[: len(some) - rest]) or "-") + (f" and {rest:,} more" if rest else ""))
    return cells
