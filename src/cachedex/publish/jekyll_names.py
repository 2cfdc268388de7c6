"""Which tags and stacks ``cachedex jekyll`` names, and which it skips and why: a tag
or a stack becomes a folder name and a value cache.spack.io's Liquid prints as it is,
so each is checked before anything is written (the names a mirror gives, its packages,
are checked as its pages are written, in :mod:`.jekyll_shares`)."""

from __future__ import annotations

from ..catalog import Catalog
from ..errors import UnknownTag
from ..values import check_label
from .files import name_problem, quoted
from .folder_names import folder_clashes
from .jekyll_data import ALL_KEY

__all__ = ["selected_tags", "stack_labels"]


def selected_tags(catalog: Catalog, tags: list[str] | None) -> tuple[list[str], list[str]]:
    """(tags to write, messages for tags skipped). UnknownTag for a tag not in the catalog."""
    known = catalog.tag_names()
    if tags is None:
        wanted = known
    else:
        unknown = [t for t in tags if t not in known]
        if unknown:
            raise UnknownTag(unknown[0], known)
        wanted = list(dict.fromkeys(tags))
    good: list[str] = []
    skipped: list[str] = []
    clashing = folder_clashes(known)  # (a tag asked for alone would take another's folder too)
    for tag in wanted:
        why = name_problem(tag) or check_label(tag) or clashing.get(tag)  # (printed by the site's pages as it is)
        if why is None and tag == ALL_KEY:
            why = f"{tag!r} is the name of the totals entry of _data/meta.yaml"
        if why is None:
            good.append(tag)
        else:
            skipped.append(f"tag {quoted(tag)}: {why}")
    return good, skipped


def stack_labels(tag: str, stacks: list[str], skipped: list[str]) -> list[str]:
    """The stacks of ``tag`` that are labels, as the config has them: a catalog written
    otherwise may name others, which tags.yaml would hand to the site's pages as they
    are (their specs are left out of the pages); those are reported in ``skipped``."""
    good: list[str] = []
    for stack in stacks:
        why = check_label(stack)
        if why is None:
            good.append(stack)
        else:
            skipped.append(f"stack {quoted(stack)} of tag {quoted(tag)} (not in _data/tags.yaml): {why}")
    return good
