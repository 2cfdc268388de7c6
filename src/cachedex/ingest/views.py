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
from ..errors import IndexFormatError, SourceNotFound
from ..values import MirrorRef, check_label
from .layouts import find_views, view_manifest
from .local_source import LocalSource
from .sources import Source

__all__ = ["union_of_stacks", "with_found_views"]


def with_found_views(tag: TagConfig, root: Source, *, none_ok: bool = False) -> TagConfig:
    """``tag`` with a stack for each view of its root mirror that is not configured
    already. A view name that could not be a stack name (it would escape its folder,
    or hold shell syntax) is an IndexFormatError naming its manifest. A mirror with no
    view is a SourceNotFound unless ``none_ok`` (then ``tag`` as it is: a mirror that
    has its root index and no view yet, as one does before its first view is made)."""
    if isinstance(root, LocalSource) and not root.root.is_dir():
        raise SourceNotFound(root.url, "no such folder")  # (not "no view": there is no mirror here)
    found = find_views(root)
    if found is None:
        raise SourceNotFound(root.url, "cannot list this mirror's views; name them with views: [...]")
    known = {ref.stack for ref in tag.mirrors}
    added: list[MirrorRef] = []
    for view in found:
        why = check_label(view)
        if why:
            raise IndexFormatError(root.join(view_manifest(view)), f"view name {why}")
        if view not in known:
            added.append(MirrorRef(tag.name, view, tag.mirrors[0].url, view=view))
    if not added and not any(ref.view for ref in tag.mirrors):
        if none_ok:
            return tag
        raise SourceNotFound(root.join("v3/manifests/index/"), "views: all, but this mirror has no view")
    return msgspec.structs.replace(tag, mirrors=(*tag.mirrors, *added))


def union_of_stacks(members: list[dict[str, bool]]) -> dict[str, bool]:
    """What a root without an index of its own holds: every record of its stacks,
    listed where any stack lists it."""
    union: dict[str, bool] = {}
    for stack in members:
        for dag_hash, listed in stack.items():
            union[dag_hash] = union.get(dag_hash, False) or listed
    return union
