"""The text of one cache.spack.io page, byte for byte: ``_cache/<tag>/<package>/specs.md``.

A page is Jekyll front matter only::

    ---
    title: "<package>"
    layout: cache
    categories: [package, <tag>]
    meta: {"compilers": [...], "num_specs": N, "num_specs_by_stack": {...}, ...}
    spec_details: [{"compiler": ..., "hash": ..., ..., "versions": [...]}, ...]
    ---

(no newline after the closing ``---``). The JSON is what ``json.dumps(value,
sort_keys=True)`` gives (``", "`` and ``": "`` separators, non-ASCII escaped), except
that a character beyond U+FFFF is written as itself (UTF-8): json.dumps escapes it as a
surrogate pair, which Jekyll's YAML (libyaml) refuses, losing the page's front matter.
It is assembled from memoised pieces, because a big tag has hundreds of thousands of
specs but few distinct compilers, targets, stack sets or variant lists.

Every spec a page shows is listed by the tag's root mirror: its ``stacks`` always hold
``root`` (so ``num_specs_by_stack["root"]`` is ``num_specs``, format doc §6.3), also for
a root of views only, whose catalog rows name only the views.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from json.encoder import encode_basestring_ascii as _json_ascii
from operator import attrgetter

import yaml

from .._perf import BoundedMemo
from ..catalog import ListedRow
from ..values import ROOT_STACK, decode_variants

__all__ = ["JekyllDumper", "PageWriter", "SpecCounts", "render_page"]

# Memo tables hold JSON text of values that repeat across specs (stack sets, variant
# lists, compilers...). They are cleared when they reach this many entries, so memory
# stays bounded whatever the size or number of tags.
_MEMO_LIMIT = 200_000

_Arch = tuple[str, str, str, str]  # (compiler, os, platform, target)


def _json_string(text: str) -> str:
    """``json.dumps(text)``, but a character beyond U+FFFF as itself: libyaml (Jekyll)
    refuses the surrogate pair escapes json.dumps writes for it."""
    escaped = _json_ascii(text)
    if text.isascii() or max(text) <= "\uffff":
        return escaped
    return '"' + "".join(c if c > "\uffff" else _json_ascii(c)[1:-1] for c in text) + '"'


@dataclass
class SpecCounts:
    """What meta.yaml counts, gathered per spec while pages are made."""

    arch: Counter[_Arch] = field(default_factory=Counter)  # listed specs per arch
    variants: Counter[str] = field(default_factory=Counter)  # per variants JSON text

    def compilers(self) -> Counter[str]:
        """Listed specs per ``name@version`` compiler (``none`` included)."""
        result: Counter[str] = Counter()
        for arch, times in self.arch.items():
            result[arch[0]] += times
        return result

    def parameters(self) -> Counter[str]:
        """Listed specs per variant name whose value is truthy (format doc §6.3)."""
        by_string: Counter[str] = Counter()
        for text, times in self.variants.items():
            for variant in decode_variants(text):
                by_string[variant] += times
        result: Counter[str] = Counter()
        for variant, times in by_string.items():
            name = _truthy_variant_name(variant)
            if name is not None:
                result[name] += times
        return result


class PageWriter:
    """Turns catalog rows into page bytes identical to ``json.dumps(..., sort_keys=True)``.

    A big tag has hundreds of thousands of specs but few distinct compilers, targets,
    stack sets or variant lists: the JSON text of each is made once and memoised.
    """

    def __init__(self) -> None:
        self._strings: BoundedMemo[str, str] = BoundedMemo(_MEMO_LIMIT)
        self._arch: BoundedMemo[_Arch, tuple[str, str, str]] = BoundedMemo(_MEMO_LIMIT)
        self._variants: BoundedMemo[str, str] = BoundedMemo(_MEMO_LIMIT)
        self._stacks: BoundedMemo[str, tuple[tuple[str, ...], str]] = BoundedMemo(_MEMO_LIMIT)

    def string(self, text: str) -> str:
        """``json.dumps(text)``."""
        try:
            return self._strings[text]
        except KeyError:
            return self._strings.remember(text, _json_string(text))

    def string_list(self, items: Iterable[str]) -> str:
        """``json.dumps(list(items))``."""
        return "[" + ", ".join(map(self.string, items)) + "]"

    def _arch_pieces(self, arch: _Arch) -> tuple[str, str, str]:
        """The text around the hash, size, stacks and variants in a spec's object."""
        try:
            return self._arch[arch]
        except KeyError:
            compiler, os_, platform, target = map(self.string, arch)
            return self._arch.remember(
                arch,
                (
                    f'{{"compiler": {compiler}, "hash": ',
                    f', "os": {os_}, "platform": {platform}, "size": ',
                    f', "target": {target}, "variants": ',
                ),
            )

    def _variants_json(self, stored: str) -> str:
        """The stored (compact) JSON list of variant strings as json.dumps writes it."""
        try:
            return self._variants[stored]
        except KeyError:
            if stored.isascii() and stored.isprintable() and "\\" not in stored:
                # No escapes: every '","' separates two items.
                text = stored.replace('","', '", "')
            else:
                text = "[" + ", ".join(map(self.string, json.loads(stored))) + "]"
            return self._variants.remember(stored, text)

    def _stack_set(self, joined: str) -> tuple[tuple[str, ...], str]:
        """(sorted stack names, their JSON list) of a ``\\x1f``-joined set of stacks,
        ``root`` added (a root of views only is not among them, yet lists the spec)."""
        try:
            return self._stacks[joined]
        except KeyError:
            names = tuple(sorted({ROOT_STACK, *joined.split("\x1f")} if joined else {ROOT_STACK}))
            return self._stacks.remember(joined, (names, self.string_list(names)))

    def page(self, tag: str, package: str, rows: list[ListedRow], counts: SpecCounts | None = None) -> bytes:
        """The bytes of ``_cache/<tag>/<package>/specs.md`` for one package's ``rows``.

        ``title`` is a JSON string, ``meta`` and ``spec_details`` are what
        ``json.dumps(..., sort_keys=True)`` writes, details sorted by hash, no newline
        after the closing ``---``. What meta.yaml counts goes to ``counts``.
        """
        rows = sorted(rows, key=_row_hash)  # already in order from the catalog: O(n)
        # The loop runs once per spec of the tag: locals, memo lookups with .get, one
        # f-string per spec; counting is left to Counter's C code below.
        strings, archs, variant_lists, stack_sets = self._strings, self._arch, self._variants, self._stacks
        details: list[str] = []
        for dag_hash, version, compiler, os_, platform, target, variants, size, stacks in map(_row_details, rows):
            arch = archs.get((compiler, os_, platform, target)) or self._arch_pieces((compiler, os_, platform, target))
            if not (dag_hash.isascii() and dag_hash.isalnum()):  # never for a real DAG hash
                dag_hash = _json_string(dag_hash)[1:-1]
            size_text = '"-"' if size is None else size
            details.append(
                f'{arch[0]}"{dag_hash}"{arch[1]}{size_text}, "stacks": '
                f"{(stack_sets.get(stacks) or self._stack_set(stacks))[1]}{arch[2]}"
                f"{variant_lists.get(variants) or self._variants_json(variants)}, "
                f'"versions": [{strings.get(version) or self.string(version)}]}}'
            )
        arch_counts = Counter(map(_row_arch, rows))
        if counts is not None:
            counts.arch.update(arch_counts)
            counts.variants.update(map(_row_variants, rows))
        by_stack: Counter[str] = Counter()
        for joined, times in Counter(map(_row_stacks, rows)).items():
            for stack in self._stack_set(joined)[0]:
                by_stack[stack] += times
        stack_names = sorted(by_stack)
        string, string_list = self.string, self.string_list
        meta = (
            f'{{"compilers": {string_list(sorted({a[0] for a in arch_counts}))}, '
            f'"num_specs": {len(rows)}, '
            '"num_specs_by_stack": {'
            + ", ".join(f"{string(name)}: {by_stack[name]}" for name in stack_names)
            + f'}}, "oss": {string_list(sorted({a[1] for a in arch_counts}))}, '
            f'"platforms": {string_list(sorted({a[2] for a in arch_counts}))}, '
            f'"stacks": {string_list(stack_names)}, '
            f'"targets": {string_list(sorted({a[3] for a in arch_counts}))}, '
            f'"versions": {string_list(sorted(set(map(_row_version, rows))))}}}'
        )
        text = (
            f"---\ntitle: {_json_string(package)}\nlayout: cache\n"
            f"categories: [package, {_yaml_flow_item(tag)}]\n"
            f"meta: {meta}\nspec_details: [{', '.join(details)}]\n---"
        )
        return text.encode("utf-8")  # ASCII, unless a character beyond U+FFFF


# Fields read by name, several at once in C: a tag's every spec passes through these.
_row_details = attrgetter("hash", "version", "compiler", "os", "platform", "target", "variants", "size", "stacks")
_row_hash = attrgetter("hash")
_row_version = attrgetter("version")
_row_arch = attrgetter("compiler", "os", "platform", "target")
_row_variants = attrgetter("variants")
_row_stacks = attrgetter("stacks")


#: What Jekyll's YAML (Ruby's Psych) reads as a date and PyYAML as a string: a month or
#: day of one digit (``2025-7-1``). PyYAML alone would write it plain.
_RUBY_DATE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}")


#: What Psych reads as a boolean or null in any case (``yES``, ``oN``, ``nuLL``), where
#: PyYAML knows three spellings of each: two tags ``yES`` and ``oN`` were both ``true``
#: in ``meta.yaml``, one overwriting the other.
_PSYCH_WORD = re.compile(r"(?i:yes|true|on|no|false|off|null)")


class JekyllDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, quoting also what Jekyll would read as a date, a boolean or
    a null."""


JekyllDumper.add_implicit_resolver(
    "tag:yaml.org,2002:timestamp", re.compile(f"^{_RUBY_DATE.pattern}$"), list("0123456789")
)
JekyllDumper.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(f"^{_PSYCH_WORD.pattern}$"), list("yYtToOnNfF"))


@lru_cache(maxsize=1024)
def _yaml_flow_item(text: str) -> str:
    """``text`` as an item of a YAML flow sequence: plain as cache.spack.io writes it
    (``develop-2025-07-13``) when YAML, PyYAML's and Jekyll's, reads that back as the same
    string, else quoted (a name like ``1.10``, ``true`` or ``2025-7-1`` would become a
    number, a boolean or a date)."""
    plain = text and text.isascii() and all(c.isalnum() or c in "._-" for c in text)
    if plain and not _RUBY_DATE.fullmatch(text) and not _PSYCH_WORD.fullmatch(text) and _reads_as(text):
        return text
    return _json_string(text)


def _reads_as(text: str) -> bool:
    """Whether PyYAML reads ``text``, a flow sequence's plain item, back as itself (a
    name it takes for a number it then cannot build, ``0x_``, is no such name)."""
    try:
        return bool(yaml.safe_load(f"[{text}]") == [text])
    except (yaml.YAMLError, ValueError):
        return False


def render_page(tag: str, package: str, rows: Iterable[ListedRow]) -> bytes:
    """The bytes of ``_cache/<tag>/<package>/specs.md`` for one package's ``rows`` (any
    order), as cache.spack.io writes them; what ``write_jekyll`` writes for them."""
    return PageWriter().page(tag, package, list(rows))


# -- meta.yaml parameter names -------------------------------------------------------


def _truthy_variant_name(variant: str) -> str | None:
    """The name of a variant whose ``parameters`` value is truthy, from its display string;
    None when the value is false or empty.

    ``+x`` is true, ``~x`` false, ``x=v`` / ``x:=a,b`` true unless the value is empty
    (shown as ``''``), as cache.spack.io counts ``if setting`` (format doc §6.3).
    """
    if variant.startswith("+"):
        return variant[1:]
    if variant.startswith("~"):
        return None
    name, _, value = variant.partition("=")
    if not value or value == "''":
        return None
    return name[:-1] if name.endswith(":") else name
