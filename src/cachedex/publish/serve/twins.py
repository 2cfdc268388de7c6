"""A page's JSON twin gzipped (``index.json.gz``, ``<hash>.json.gz``), at the URL where
the static site writes one: beside every tag page's twin (the page's script reads it)
and beside any twin of 256 KiB or more (a comparison of two big tags, a big spec's
closure), for hosts that do not compress. A client written against the static site
finds it here too, whatever the twin's size. Unfiltered, as the static file is: it
takes no parameter."""

from __future__ import annotations

from starlette.requests import Request

from ...catalog import Catalog
from ..gzipped import gzip_bytes
from .api import Endpoint
from .cache import GZIP

__all__ = ["gzipped_twin"]


def gzipped_twin(page: Endpoint) -> Endpoint:
    """The endpoint of ``page``'s twin gzipped (its builder answers JSON on a ``.json.gz`` path)."""

    def build(catalog: Catalog, request: Request) -> tuple[bytes, str]:
        body, _ = page.build(catalog, request)
        return gzip_bytes(body), GZIP

    return Endpoint(build)
