"""What the publishing commands (``jekyll``, ``site``, ``export spack-cache``) print
when they are done: what they wrote, and what they skipped or refused as warnings on
stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..values import counted, human_size, visible

if TYPE_CHECKING:  # types only: importing the publishers costs every command ~0.1 s
    from ..publish.export import ExportReport
    from ..publish.jekyll import JekyllReport
    from ..publish.site import SiteReport

__all__ = ["SHOWN_WARNINGS", "print_export_report", "print_jekyll_report", "print_site_report", "say_visible"]


def say_visible(line: str, *, err: bool = False) -> None:
    """Print ``line``: it names output folders and mirrors' names (the demo's report too),
    whose control characters would act on the terminal, so they are shown as escapes."""
    click.echo(visible(line), err=err)


#: Warnings of one kind (skipped tags, or one tag's packages and specs) printed; the others counted.
SHOWN_WARNINGS = 20


def _warn_skipped(prefix: str, skipped: tuple[str, ...]) -> None:
    """One warning per thing skipped, the first :data:`SHOWN_WARNINGS`; then how many more
    (a hostile mirror may have thousands)."""
    for message in skipped[:SHOWN_WARNINGS]:
        say_visible(f"warning: {prefix}skipped {message}", err=True)
    if len(skipped) > SHOWN_WARNINGS:
        say_visible(f"warning: {prefix}and {len(skipped) - SHOWN_WARNINGS:,} more skipped", err=True)


def print_jekyll_report(report: JekyllReport) -> None:
    """What ``cachedex jekyll`` wrote, per tag; skipped names as warnings on stderr."""
    _warn_skipped("", report.skipped)
    for tag_name, pages in report.gone:
        say_visible(f"{tag_name}: no longer in the catalog: its {pages:,} pages removed, and its _data entries")
    for tag in report.tags:
        _warn_skipped(f"{tag.tag}: ", tag.skipped)
        if tag.current:
            size = f"{counted(tag.pages, 'page')} ({counted(tag.specs, 'spec')})"
            say_visible(
                f"{tag.tag}: {size} {'is' if tag.pages == 1 else 'are'} current: written from this state "
                f"of the catalog (--full checks every page) -> {tag.directory}"
            )
            continue
        say_visible(
            f"{tag.tag}: {counted(tag.pages, 'page')} ({counted(tag.specs, 'spec')}): {tag.written:,} written, "
            f"{tag.unchanged:,} unchanged, {tag.removed:,} removed -> {tag.directory}"
        )
    if not report.tags:
        if not report.skipped:  # (else none was written: the command says so, as an error)
            say_visible("No tags to write; run 'cachedex sync' first.")
        return
    data = ", ".join(report.data_written) or "unchanged"
    say_visible(f"_data: {data} ({report.outdir / '_data'}); {report.seconds:.2f} s")


def print_site_report(report: SiteReport) -> None:
    """What ``cachedex site`` wrote; skipped names as warnings on stderr."""
    for skipped in report.skipped:
        say_visible(f"warning: skipped {skipped}", err=True)
    if report.current:
        say_visible(f"{report.outdir} is current: built from this state of the catalog (--full checks every page)")
        return
    reached = " (only those the catalog's changes since the last build reach)" if report.changed_only else ""
    say_visible(
        f"{report.pages:,} pages{reached}: {report.written:,} files written, {report.unchanged:,} unchanged, "
        f"{report.removed:,} removed -> {report.outdir} ({report.seconds:.1f} s)"
    )


def print_export_report(report: ExportReport) -> None:
    """What ``cachedex export spack-cache`` wrote, in one line; the specs it refused and
    the packages asked for but not exported as warnings on stderr."""
    refused = report.refused_warning()
    if refused is not None:
        say_visible(refused, err=True)
    if report.missing_packages:
        names = ", ".join(report.missing_packages)
        why = "no chosen stack lists a binary of it" + (", or each was refused" if report.refused else "")
        say_visible(f"warning: not exported ({why}): {names}", err=True)
    files = ", ".join(
        f"{name} {human_size(report.sizes[name])} ({'written' if name in report.written else 'unchanged'})"
        for name in (*report.written, *report.unchanged)
    )
    tags, stacks = len(report.releases), len(report.stacks)
    say_visible(
        f"{counted(report.specs, 'spec')}, {counted(report.packages, 'package')}, {counted(tags, 'tag')}, "
        f"{counted(stacks, 'stack')}: {files} -> {report.outdir} ({report.seconds:.1f} s)"
    )
