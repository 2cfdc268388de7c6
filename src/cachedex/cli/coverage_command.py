"""``cachedex coverage TAG``: a tag's listed specs counted by two axes (a matrix).

Registered on the ``cachedex`` group as ``main.add_command(coverage_command)``.
"""

from __future__ import annotations

from typing import Any

import click
import msgspec
from rich.table import Table

from ..catalog import Catalog
from ..publish.coverage import AXES, pivot
from ..values import ROOT_STACK, visible
from .present import LAYOUT_WIDTH, OUT, print_json, shown
from .state import friendly

__all__ = ["CoverageMatrix", "coverage_command"]


class CoverageMatrix(msgspec.Struct, frozen=True):
    """What ``--json`` prints: ``counts[row][column]`` specs."""

    tag: str
    rows: str  #: the axis of the rows
    columns: str  #: the axis of the columns
    names: tuple[str, ...]  #: the columns
    counts: dict[str, tuple[int, ...]]  #: row -> a count per column, rows in order


def _axes(value: str) -> tuple[str, str]:
    parts = [part.strip() for part in value.split(",")]

    def refused(why: str) -> click.BadParameter:
        return click.BadParameter(f"{value!r}: {why}", param_hint="'--by'")

    for part in parts:
        if part and part not in AXES:
            raise refused(f"unknown axis {part!r}; choose two among {', '.join(AXES)}, like stack,target")
    if len(parts) != 2 or not all(parts):
        raise refused("give two axes, like stack,target")
    if parts[0] == parts[1]:
        raise refused("give two different axes")
    if "stack" in parts and ({"package", "version"} & set(parts)):
        raise refused("stack cannot be counted with package or version")
    return parts[0], parts[1]


@click.command("coverage", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("tag")
@click.option(
    "--by",
    "by",
    default="stack,target",
    show_default=True,
    metavar="ROWS,COLUMNS",
    help=f"The two axes to count by: {', '.join(AXES)}.",
)
@click.option("--json", "as_json", is_flag=True, help="Print {tag, rows, columns, names, counts} as JSON.")
@click.pass_obj
@friendly
def coverage_command(state: Any, tag: str, by: str, as_json: bool) -> None:
    """What covers what in TAG: its listed specs counted by two axes.

    Axes: stack (root is the whole tag), arch (platform-os-target), platform, os,
    target, family (x86_64, aarch64, darwin ...: where a binary runs), package, version.
    stack cannot go with package or version (those count the whole tag).

    \b
    Examples:
      cachedex coverage develop                     # stacks x targets
      cachedex coverage develop --by package,family
      cachedex coverage develop --by version,arch --json
    """
    rows, columns = _axes(by)
    config = state.config()
    with Catalog(config.catalog, readonly=True) as catalog:
        names, matrix = pivot(catalog, tag, rows, columns)
    if as_json:
        print_json(CoverageMatrix(tag, rows, columns, tuple(names), {row: tuple(c) for row, c in matrix}))
        return
    totals = _totals(columns, names, matrix)
    if _width(rows, names, matrix, totals) > LAYOUT_WIDTH or len(matrix) > TABLE_ROWS:
        _print_rows(tag, rows, columns, names, matrix, totals)
        return
    # The axes' values come from the mirrors (a target, a stack, a variant): shown as written.
    table = Table(title=shown(f"{tag}: listed specs by {rows} and {columns}"), show_lines=False)
    table.add_column(rows, overflow="fold")
    for name in names:
        table.add_column(shown(name), justify="right", overflow="fold")
    table.add_column("all", justify="right")
    for (row, counts), total in zip(matrix, totals, strict=True):
        table.add_row(shown(row), *(f"{n:,}" if n else "." for n in counts), f"{total:,}")
    OUT.print(table)


def _totals(columns: str, names: list[str], matrix: list[tuple[str, list[int]]]) -> list[int]:
    """Each row's specs in all: the sum of its columns, but for stacks as columns, which
    overlap (a spec in two stacks; root is the whole tag): the root's column."""
    if columns != "stack":
        return [sum(counts) for _, counts in matrix]
    whole = names.index(ROOT_STACK) if ROOT_STACK in names else None
    return [counts[whole] if whole is not None else max(counts, default=0) for _, counts in matrix]


def _width(rows: str, names: list[str], matrix: list[tuple[str, list[int]]], totals: list[int]) -> int:
    """The characters a table of these needs, each cell whole (rich's borders and padding
    take 3 a column)."""
    if 4 * len(names) > LAYOUT_WIDTH:  # (a column is 4 at least: no need to measure them)
        return 4 * len(names)
    # The widest count of a column is its largest (columns in C: 10,000 x 455 cells were
    # each formatted in 2.2 s).
    largest = [max(column) for column in zip(*(c for _, c in matrix), strict=True)] if matrix else []
    counts = [len(f"{n:,}") for n in largest] or [1] * len(names)
    first = max([len(rows), *(len(row) for row, _ in matrix)])
    total = max([3, *(len(f"{n:,}") for n in totals)])
    return 1 + sum(3 + width for width in (first, *(max(len(n), c) for n, c in zip(names, counts, strict=True)), total))


#: Rows beyond which a matrix is listed row by row, not drawn as a table: rich drew a
#: table of 10,005 packages in 5.7 s.
TABLE_ROWS = 2000


def _print_rows(
    tag: str, rows: str, columns: str, names: list[str], matrix: list[tuple[str, list[int]]], totals: list[int]
) -> None:
    """A matrix too wide for the terminal, or too long to draw, row by row: each row's
    columns that count any, one line of plain text each."""
    why = (
        f"{len(matrix):,} {rows} rows" if len(matrix) > TABLE_ROWS else f"{len(names):,} {columns} columns"
    ) + ": too many for a table, listed row by row; --json gives the matrix"
    OUT.print(shown(f"{tag}: listed specs by {rows} and {columns} ({why})"))
    for (row, counts), total in zip(matrix, totals, strict=True):
        cells = ", ".join(f"{name} {n:,}" for name, n in zip(names, counts, strict=True) if n)
        click.echo(visible(f"{row} ({total:,}): {cells}"))
