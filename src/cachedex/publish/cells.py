"""Table cells that several pages show (sizes, chips of names, variants), and the
rows of the search page's results and of a package page's specs, written in Python.

A search page of 50 rows cost ~0.8 ms of Jinja, most of it the row loop: ~1,400 small
pieces yielded one by one, each escaped through a call. The rows here are the same
text (``tests/publish/test_cells.py`` renders them with the template loop they replace
and compares), made with one f-string a row. A package page's rows are the same
kind: a site writes ten thousand such pages, a quarter of a million rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import msgspec
from markupsafe import Markup

from ..values import json_visible, size_text, variant_name
from ._jinja_fast import escape_exact, escape_text
from .facets import shown_stacks
from .urls import spec_url

if TYPE_CHECKING:
    from ..catalog import SpecSummary

__all__ = ["chips", "compilers_html", "options", "package_rows", "search_rows", "select_variants", "variants_html"]


def chips(values: Sequence[str], limit: int = 3) -> Markup:
    """The first ``limit`` values, then "+N", which opens on the others (a click, a tap
    or the keyboard: a title shown on hover alone left them out for touch and keys)."""
    return Markup(_chips_html(values, limit))


def _chips_html(values: Sequence[str], limit: int) -> str:
    shown = ", ".join(map(escape_text, values[:limit]))
    if len(values) <= limit:
        return shown
    rest = ", ".join(map(escape_text, values[limit:]))
    more = f'+{len(values) - limit}<span class="visually-hidden"> more</span>'
    return f'{shown} <details class="more"><summary>{more}</summary>{rest}</details>'


def select_variants(variants: Sequence[str], names: Sequence[str]) -> list[str]:
    """The variants (as a spec shows them) whose names are among ``names``."""
    return [text for text in variants if variant_name(text) in names] if names else []


def variants_html(variants: Sequence[str], differing: Sequence[str]) -> str:
    """A spec's variants in a table: those that differ between the specs listed first,
    in bold, then the others (folded when more than four)."""
    rest = [text for text in variants if text not in differing] if differing else variants
    parts = [f"<strong>{escape_text(' '.join(differing))}</strong>"] if differing else []
    if rest:
        text = escape_text(" ".join(rest))
        parts.append(f"<details><summary>{len(rest)} more</summary>{text}</details>" if len(rest) > 4 else text)
    return " ".join(parts)


def compilers_html(compiler: str, others: Sequence[str]) -> Markup:
    """A spec's compiler and, muted, the others that built it (its Fortran's gcc beside
    its C's apple-clang): search results, package and spec pages, change pages."""
    return Markup(escape_text(compiler) + "".join(f' <span class="muted">+{escape_text(c)}</span>' for c in others))


def _other_compilers(compilers: tuple[str, ...]) -> str:
    """A package page row's attribute of its other compilers (none when one built it),
    which the page's Compiler filter reads."""
    return f' data-other-compilers="{escape_exact(_json_text(compilers))}"' if compilers else ""


def search_rows(
    specs: Sequence[SpecSummary], differing: Mapping[str, Sequence[str]], root: str, *, by_stack: bool
) -> Markup:
    """The ``<tbody>`` of a search page's results: each spec's link, variants (those
    that differ between the page's specs of its package first), arch, compiler, its
    stacks (``by_stack``, a search within a tag) or tags, size and install button."""
    out = escape_text  # every field is a plain string
    root = out(root)
    label = "stacks" if by_stack else "tags"
    rows = ["<tbody>\n"]
    for s in specs:
        name, hash_, short = out(s.name), out(s.hash), out(s.hash[:7])
        variants = variants_html(s.variants, select_variants(s.variants, differing.get(s.name, ())))
        held = _chips_html(shown_stacks(s.stacks) if by_stack else s.tags, 2)
        rows.append(
            "    <tr>\n"
            f'      <td class="name"><a href="{root}{out(spec_url(s.hash))}">{name}@{out(s.version)}</a>'
            f" <code>/{short}</code></td>\n"
            f'      <td class="variants" data-label="variants">{variants}</td>\n'
            f'      <td data-label="arch">{out(s.platform)}-{out(s.os)}-{out(s.target)}</td>\n'
            f'      <td data-label="compiler">{compilers_html(s.compiler, s.other_compilers)}</td>\n'
            f'      <td class="stacks" data-label="{label}">{held}</td>\n'
            f'      <td class="num size" data-label="size">{out(size_text(s.size))}</td>\n'
            '      <td data-label="install"><button type="button" class="copy" data-copy="spack install'
            f' --cache-only /{hash_}" aria-label="Copy the install command of {name} /{short}">install</button></td>\n'
            "    </tr>\n"
        )
    rows.append("  </tbody>")
    return Markup("".join(rows))


def package_rows(specs: Sequence[SpecSummary], differing: Sequence[str], matches: Sequence[bool], root: str) -> Markup:
    """The ``<tbody>`` of a package page: each spec's row with the data its filters and
    sorting read (stacks, facets, the variants that differ, version, size), hidden when
    it does not match the page's filters (``matches``, one per spec)."""
    out, exact = escape_text, escape_exact  # (the row's data attributes are read back by the page's script)
    root = out(root)
    encode = _json_text
    rows = ["<tbody>\n"]
    for s, shown in zip(specs, matches, strict=True):
        hash_, short, version = out(s.hash), out(s.hash[:7]), out(s.version)
        os, target, platform = out(s.os), out(s.target), out(s.platform)
        selected = select_variants(s.variants, differing)
        rows.append(
            f'    <tr data-stacks="{exact(encode(s.stacks))}" data-os="{exact(s.os)}" data-target="{exact(s.target)}"'
            f' data-compiler="{exact(s.compiler)}"{_other_compilers(s.other_compilers)}'
            f' data-platform="{exact(s.platform)}"'
            f' data-variants="{exact(encode(selected))}"'
            f' data-version="{version}" data-size="{"" if s.size is None else s.size}"{"" if shown else " hidden"}>\n'
            f'      <td class="hash name"><a href="{root}{out(spec_url(s.hash))}"><code>{short}</code></a>'
            f' <button type="button" class="copy" data-copy="{hash_}" aria-label="Copy the full hash of {short}">'
            "copy</button></td>\n"
            f'      <td data-label="version">{version}</td>\n'
            f'      <td class="variants" data-label="variants">{variants_html(s.variants, selected)}</td>\n'
            f'      <td data-label="compiler">{compilers_html(s.compiler, s.other_compilers)}</td>\n'
            f'      <td data-label="arch">{platform}-{os}-{target}</td>\n'
            '      <td class="stacks" data-label="stacks">'
            f"{_chips_html(shown_stacks(s.stacks), 2)}</td>\n"
            f'      <td class="num size" data-label="size">{out(size_text(s.size))}</td>\n'
            '      <td data-label="install"><button type="button" class="copy" data-copy="spack install'
            f' --cache-only /{hash_}" aria-label="Copy the install command of {short}">install</button></td>\n'
            "    </tr>\n"
        )
    rows.append("  </tbody>")
    return Markup("".join(rows))


def _json_text(value: object) -> str:
    return json_visible(msgspec.json.encode(value).decode())


def options(values: Sequence[str], chosen: str, counts: Mapping[str, int] | None = None) -> Markup:
    """A select's ``<option>`` of each value, ``chosen`` selected: the search page's tags
    and stacks, the same on each of a scope's searches (a few hundred pieces for Jinja),
    and the machines of "Runs on" (~60 on a package page of x86_64 builds, the same on
    many). With ``counts``, each says its count and is disabled at 0 unless chosen, as a
    facet's options (_facets.html)."""
    found = None if counts is None else tuple(counts.get(value, 0) for value in values)
    return Markup(_options(tuple(values), chosen, found))


@lru_cache(maxsize=256)
def _options(values: tuple[str, ...], chosen: str, counts: tuple[int, ...] | None) -> str:
    # (the value as it is: a filter's script compares it with the data)
    if counts is None:
        return "".join(
            f'<option value="{escape_exact(value)}"{" selected" if value == chosen else ""}>'
            f"{escape_text(value)}</option>"
            for value in values
        )
    return "".join(
        f'<option value="{escape_exact(value)}"{" selected" if value == chosen else "" if count else " disabled"}>'
        f"{escape_text(value)} ({count:,})</option>"
        for value, count in zip(values, counts, strict=True)
    )
