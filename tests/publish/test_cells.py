"""The search page's result rows, written in Python (``publish/cells.py``): the same
text as the Jinja loop they replaced, for hostile values too."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import Environment
from markupsafe import Markup, escape

from cachedex.catalog import SpecSummary
from cachedex.publish import cells
from cachedex.publish.facets import shown_stacks
from cachedex.publish.urls import spec_url
from cachedex.values import size_text

#: The loop the search page had in its template, and the filters it used.
_LOOP = """<tbody>
{% for s in specs %}
    {% set differing = s.variants | select_variants(page_differing.get(s.name, ())) %}
    <tr>
      <td class="name"><a href="{{ root }}{{ s.hash | spec_url }}">{{ s.name }}@{{ s.version }}</a> <code>/{{ s.hash[:7] }}</code></td>
      <td class="variants" data-label="variants">{{ s.variants | variants_cell(differing) }}</td>
      <td data-label="arch">{{ s.platform }}-{{ s.os }}-{{ s.target }}</td>
      <td data-label="compiler">{{ s.compiler }}{% for c in s.other_compilers %} <span class="muted">+{{ c }}</span>{% endfor %}</td>
      <td class="stacks" data-label="{% if tag %}stacks{% else %}tags{% endif %}">{% if tag %}{{ s.stacks | shown_stacks | chips(2) }}{% else %}{{ s.tags | chips(2) }}{% endif %}</td>
      <td class="num size" data-label="size">{{ s.size | size }}</td>
      <td data-label="install"><button type="button" class="copy" data-copy="spack install --cache-only /{{ s.hash }}" aria-label="Copy the install command of {{ s.name }} /{{ s.hash[:7] }}">install</button></td>
    </tr>
{% endfor %}
  </tbody>"""  # noqa: E501 (the template, as it was)

#: The loop a package page had in its template.
_PACKAGE_LOOP = """<tbody>
  {% for s in page.specs %}
    {% set differing = s.variants | select_variants(page.differing) %}
    <tr data-stacks="{{ s.stacks | json }}" data-os="{{ s.os }}" data-target="{{ s.target }}" data-compiler="{{ s.compiler }}"{% if s.other_compilers %} data-other-compilers="{{ s.other_compilers | json }}"{% endif %} data-platform="{{ s.platform }}" data-variants="{{ differing | json }}" data-version="{{ s.version }}" data-size="{{ s.size if s.size is not none else '' }}"{% if not page.matches[loop.index0] %} hidden{% endif %}>
      <td class="hash name"><a href="{{ root }}{{ s.hash | spec_url }}"><code>{{ s.hash[:7] }}</code></a> <button type="button" class="copy" data-copy="{{ s.hash }}" aria-label="Copy the full hash of {{ s.hash[:7] }}">copy</button></td>
      <td data-label="version">{{ s.version }}</td>
      <td class="variants" data-label="variants">{{ s.variants | variants_cell(differing) }}</td>
      <td data-label="compiler">{{ s.compiler }}{% for c in s.other_compilers %} <span class="muted">+{{ c }}</span>{% endfor %}</td>
      <td data-label="arch">{{ s.platform }}-{{ s.os }}-{{ s.target }}</td>
      <td class="stacks" data-label="stacks">{{ s.stacks | shown_stacks | chips(2) }}</td>
      <td class="num size" data-label="size">{{ s.size | size }}</td>
      <td data-label="install"><button type="button" class="copy" data-copy="spack install --cache-only /{{ s.hash }}" aria-label="Copy the install command of {{ s.hash[:7] }}">install</button></td>
    </tr>
  {% endfor %}
  </tbody>"""  # noqa: E501 (the template, as it was)


def _variants_cell(variants: list[str], differing: list[str]) -> Markup:
    """The variants cell as the templates' filter made it (MarkupSafe's ``escape``)."""
    rest = [text for text in variants if text not in differing]
    parts = [f"<strong>{escape(' '.join(differing))}</strong>"] if differing else []
    if rest:
        text = escape(" ".join(rest))
        parts.append(f"<details><summary>{len(rest)} more</summary>{text}</details>" if len(rest) > 4 else str(text))
    return Markup(" ".join(parts))


_env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
_env.filters.update(
    select_variants=cells.select_variants,
    variants_cell=_variants_cell,
    spec_url=spec_url,
    shown_stacks=shown_stacks,
    chips=cells.chips,
    size=size_text,
    json=lambda value: msgspec.json.encode(value).decode(),
)
_LOOP_TEMPLATE = _env.from_string(_LOOP)
_PACKAGE_TEMPLATE = _env.from_string(_PACKAGE_LOOP)

# Hostile text: markup, quotes and ampersands, in every field a mirror's index sets.
_text = st.text(alphabet=st.sampled_from(list("ab+~=<>&\"' /@1")), max_size=8)
_variant = st.sampled_from(["+mpi", "~cuda", "build_type=Release", "x=<b>", "+a&b", "cuda_arch:=80"])


@st.composite
def _spec(draw: Any) -> SpecSummary:
    return SpecSummary(
        hash=draw(st.sampled_from(["a" * 32, "0123456789abcdefghijklmnopqrstuv", "<x>&'\"" * 6])),
        name=draw(st.sampled_from(["zlib", "hdf5", "<i>"])),
        version=draw(_text),
        compiler=draw(_text),
        platform=draw(_text),
        os=draw(_text),
        target=draw(_text),
        variants=tuple(draw(st.lists(_variant, max_size=7, unique=True))),
        size=draw(st.none() | st.integers(0, 10**13)),
        tags=tuple(draw(st.lists(_text, max_size=4))),
        stacks=tuple(draw(st.lists(st.sampled_from(["root", "e4s", "<ml>", "a&b"]), max_size=4, unique=True))),
        other_compilers=tuple(draw(st.lists(_text, max_size=2))),
    )


@given(
    specs=st.lists(_spec(), max_size=6),
    differing=st.dictionaries(st.sampled_from(["zlib", "hdf5", "<i>"]), st.lists(st.sampled_from(["mpi", "x", "a&b"]))),
    root=st.sampled_from(["", "../", "a&<b>/"]),
    tag=st.sampled_from(["", "develop"]),
)
def test_rows_are_the_text_of_the_template_loop(
    specs: list[SpecSummary], differing: dict[str, list[str]], root: str, tag: str
) -> None:
    expected = _LOOP_TEMPLATE.render(specs=specs, page_differing=differing, root=root, tag=tag)
    assert cells.search_rows(specs, differing, root, by_stack=bool(tag)) == expected


@given(
    specs=st.lists(_spec(), max_size=6),
    differing=st.lists(st.sampled_from(["mpi", "x", "a&b", "cuda"]), max_size=3, unique=True),
    hidden=st.sets(st.integers(0, 5)),
    root=st.sampled_from(["../../../../", "a&<b>/"]),
)
def test_package_rows_are_the_text_of_the_template_loop(
    specs: list[SpecSummary], differing: list[str], hidden: set[int], root: str
) -> None:
    matches = [i not in hidden for i in range(len(specs))]
    page = {"specs": specs, "differing": differing, "matches": matches}
    expected = _PACKAGE_TEMPLATE.render(page=page, root=root)
    assert cells.package_rows(specs, differing, matches, root) == expected


_OPTIONS = _env.from_string(
    '{% for v in values %}<option value="{{ v }}"{% if v == chosen %} selected{% endif %}>{{ v }}</option>{% endfor %}'
)


@given(values=st.lists(_text, max_size=6), chosen=_text)
def test_options_are_the_text_of_the_template_loop(values: list[str], chosen: str) -> None:
    expected = _OPTIONS.render(values=values, chosen=chosen)
    assert cells.options(values, chosen) == expected
    assert cells.options(values, chosen) == expected  # and again, from the cache


_COUNTED_OPTIONS = _env.from_string(
    '{% for v in values %}<option value="{{ v }}"{% if v == chosen %} selected{% elif not counts.get(v, 0) %}'
    ' disabled{% endif %}>{{ v }} ({{ "{:,}".format(counts.get(v, 0)) }})</option>{% endfor %}'
)


@given(
    values=st.lists(_text, max_size=6, unique=True),
    chosen=_text,
    counts=st.dictionaries(_text, st.integers(0, 2_000_000), max_size=6),
)
def test_counted_options_are_the_text_of_the_facets_loop(
    values: list[str], chosen: str, counts: dict[str, int]
) -> None:
    """A facet's option says its count; one of none is disabled, unless it is the one chosen."""
    assert cells.options(values, chosen, counts) == _COUNTED_OPTIONS.render(values=values, chosen=chosen, counts=counts)


@given(values=st.lists(_text, max_size=6), limit=st.integers(1, 4))
def test_chips_escape_as_markupsafe_does(values: list[str], limit: int) -> None:
    shown = ", ".join(str(escape(v)) for v in values[:limit])
    rest = ", ".join(str(escape(v)) for v in values[limit:])
    opens = f'+{len(values) - limit}<span class="visually-hidden"> more</span>'
    more = f' <details class="more"><summary>{opens}</summary>{rest}</details>'
    assert cells.chips(values, limit) == Markup(shown + (more if len(values) > limit else ""))


@given(variants=st.lists(_variant, max_size=7, unique=True), differing=st.lists(_variant, max_size=2, unique=True))
def test_variants_cell_escapes_both_parts(variants: list[str], differing: list[str]) -> None:
    cell = cells.variants_html(variants, differing)
    assert "<b>" not in cell and "&b" not in cell.replace("&amp;b", "")
    rest = [v for v in variants if v not in differing]
    assert cell.endswith("</details>") == (len(rest) > 4)


def test_variants_are_selected_by_name_and_none_when_none_differ() -> None:
    variants = ["+cuda", "build_type=Release", "~doc"]
    assert cells.select_variants(variants, ["build_type", "doc"]) == ["build_type=Release", "~doc"]
    assert cells.select_variants(variants, []) == []  # (none differs: the column shows none)


def test_stacks_shown_leave_out_root_which_every_listed_spec_is_in() -> None:
    assert shown_stacks(["root", "e4s", "ml"]) == ["e4s", "ml"]
