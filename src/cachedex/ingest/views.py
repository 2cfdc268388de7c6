"""Buildcache views: stacks that are views of one mirror (buildcache-2026 §1).

A view's index sits at ``v3/manifests/index/<view>/index.manifest.json`` of a mirror
and lists a subset of the mirror's specs; their spec manifests and tarballs are the
mirror's own. A tag configured with ``views: all`` gets one stack per view found in its
mirror (where the mirror's folders can be listed). A mirror may hold views and no root
index at all: the tag's root then lists what its stacks list, and is marked as having
no index of its own, so that no output shows "root" as a stack that holds anything.
"""

from __future__ import annotations

import msgspec

from ..config import TagConfig
from ..config.tags import mirror_place
from ..errors import SourceNotFound
from ..values import ROOT_STACK, MirrorRef, check_label, short_repr
from .layouts import find_views, view_manifest
from .local_source import LocalSource
from .sources import Source

__all__ = ["SkippedView", "union_of_stacks", "with_found_views"]


class SkippedView(msgspec.Struct, frozen=True):
    """A view found in a mirror that is not read as a stack: its index manifest's URL,
    and why (a sync warns of it, ``verify`` counts it a problem of the root mirror)."""

    view: str
    url: str
    why: str

    def __str__(self) -> str:
        return f"{self.url}: view not read as a stack: {self.why}"


def with_found_views(
    tag: TagConfig, root: Source, *, none_ok: bool = False
) -> tuple[TagConfig, tuple[SkippedView, ...]]:
    """``tag`` with a stack for each view of its root mirror that is not configured
    already, and the views it could not add. A view is skipped, the others still read,
    where its name could not be a stack name (it would escape its folder, or hold shell
    syntax), is ``root``, or is a configured stack's that reads something else. A
    mirror with no view at all is a SourceNotFound unless ``none_ok`` (then ``tag`` as
    it is: a mirror that has its root index and no view yet, as one does before its
    first view is made)."""
    if isinstance(root, LocalSource) and not root.root.is_dir():
        raise SourceNotFound(root.url, "no such folder")  # (not "no view": there is no mirror here)
    found = find_views(root)
    if found is None:
        raise SourceNotFound(root.url, "cannot list this mirror's views; name them with views: [...]")
    root_url = tag.mirrors[0].url
    configured = {ref.stack: ref for ref in tag.mirrors}
    # (the root's place however written: a stack reading a view of /x/m reads the root
    # file:///x/m's, which was read a second time as a stack of its own)
    root_place = mirror_place(root_url)
    read_already = {ref.view for ref in tag.mirrors if ref.view and mirror_place(ref.url) == root_place}
    added: list[MirrorRef] = []
    skipped: list[SkippedView] = []
    for view in found:
        if view in read_already:  # (a configured stack reads it, of its name or another: once is enough)
            continue
        why = _why_skipped(tag, view, configured.get(view))
        if why:
            skipped.append(SkippedView(view, root.join(view_manifest(view)), why))
        else:
            added.append(MirrorRef(tag.name, view, root_url, view=view))
    if not added and not skipped and not tag.reads_root_views:
        if none_ok:
            return tag, ()
        raise SourceNotFound(root.join("v3/manifests/index/"), "views: all, but this mirror has no view")
    return msgspec.structs.replace(tag, mirrors=(*tag.mirrors, *added)), tuple(skipped)


def _why_skipped(tag: TagConfig, view: str, same_name: MirrorRef | None) -> str | None:
    """Why the found ``view``, which no configured stack reads, cannot be the stack of
    its name (``same_name``: the configured mirror of that name); None if it can."""
    why = check_label(view)
    if why:
        return f"its name {why}"
    # (a name taken is said: the view was dropped silently, and the user never knew why)
    rename = f"to read it, give it a stack name of its own: stacks: {{NAME: {{view: {view}}}}}"
    if view == ROOT_STACK:
        return f"'root' names tag {tag.name}'s own mirror, not a stack; {rename}"
    if same_name is None:
        return None
    what = f"view {short_repr(same_name.view)} of {same_name.url}" if same_name.view else same_name.url
    return f"stack {short_repr(view)} of tag {tag.name} is configured already, as {what}; {rename}"


def union_of_stacks(members: list[dict[str, bool]]) -> dict[str, bool]:
    """What a root without an index of its own holds: every record of its stacks,
    listed where any stack lists it."""
    union: dict[str, bool] = {}
    for stack in members:
        for dag_hash, listed in stack.items():
            union[dag_hash] = union.get(dag_hash, False) or listed
    return union
