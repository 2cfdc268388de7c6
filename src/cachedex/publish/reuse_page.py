"""The live site's page for ``POST /api/reuse``: choose a ``spack.lock`` (or a spec file)
and a tag, and see which of its specs are cached and, for the others, the nearest build.

The page is a form; its script sends the file to the API and shows the answer. Only a
server that reads lockfiles has it (``cachedex serve``): a static copy cannot ask.
"""

from __future__ import annotations

import msgspec

from ..catalog import Catalog
from ..versions import tag_order

__all__ = ["ReuseView", "reuse_view"]


class ReuseView(msgspec.Struct, frozen=True, tag_field="page", tag="reuse"):
    """The form: the tags to compare with."""

    tags: tuple[str, ...]  #: every tag, in the order people look for them


def reuse_view(catalog: Catalog) -> ReuseView:
    return ReuseView(tuple(tag_order(catalog.tag_names())))
