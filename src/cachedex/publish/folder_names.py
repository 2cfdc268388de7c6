"""Names that are one folder where a file system ignores case.

Pages live in folders named after tags and packages (``tags/<tag>/packages/<name>/``).
Where the output is served from, or copied to, a file system that ignores case (macOS's
APFS, Windows's NTFS and shares, a sync to one), ``Zlib`` and ``zlib`` are one folder:
written both, one page overwrites the other, and a hostile mirror's ``Zlib`` would
replace the real ``zlib``'s page. Spack 1.0 makes only lowercase package names
(``util/naming.py``), older repositories allowed capitals; a name is kept unless it
clashes, and of names that clash the lowercase one keeps its folder.

The publishers already refuse names beyond ASCII (:func:`.files.name_problem`), so a
name's folder here is its lowercase, without the trailing dots and spaces Windows drops.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .files import name_problem, quoted

__all__ = ["folder_clashes", "folder_key", "package_clashes"]


def folder_key(name: str) -> str:
    """What is left of ``name`` (ASCII) on a file system that ignores case and drops
    trailing dots and spaces: two names with one key are one folder there."""
    return name.lower().rstrip(". ")


def folder_clashes(names: Iterable[str]) -> dict[str, str]:
    """``{name: why}`` for each of ``names`` (the entries of one folder) that gets no
    folder because another has its :func:`folder_key`. Of names that clash, the one
    written as its key keeps its folder; if none is, none does, as which is real cannot
    be told. Only names that are not their own key can clash: a tag's 10,000 lowercase
    names cost a pass of ``str.lower``."""
    unique = set(names)
    odd = {name: key for name in unique if (key := folder_key(name)) != name}
    if not odd:
        return {}
    groups: dict[str, list[str]] = {}
    for name, key in odd.items():
        groups.setdefault(key, []).append(name)
    clashes: dict[str, str] = {}
    for key, group in groups.items():
        if key not in unique and len(group) < 2:
            continue
        kept = key if key in unique else None
        everyone = sorted(group + ([key] if kept else []))
        for name in group:
            others = ", ".join(quoted(other) for other in everyone if other != name)
            keeps = f"{quoted(kept)} keeps it" if kept else "none has a page"
            clashes[name] = f"one folder with {others} where case is ignored; {keeps}"
    return clashes


def package_clashes(package_tags: Mapping[str, Sequence[tuple[str, int]]], tag: str) -> dict[str, str]:
    """:func:`folder_clashes` of the packages of ``tag`` that may have a page (see
    :func:`.files.name_problem`), from :meth:`Catalog.all_package_tags` (``{package:
    [(tag, specs)]}``): what a site build's plan finds, found again by its workers."""
    names = [name for name, tags in package_tags.items() if any(t == tag for t, _ in tags)]
    if all(folder_key(name) == name for name in names):  # (as nearly always: no name is checked)
        return {}
    return folder_clashes(name for name in names if name_problem(name) is None)
