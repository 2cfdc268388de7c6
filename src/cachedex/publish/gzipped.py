"""Gzip for what cachedex serves and publishes: a site's big JSON twins, and the live
server's answers (``cachedex export`` deflates its parts with the same library, in
:mod:`.export_gzip`).

Compressed by zlib-ng (``zlib_ng``), the same gzip format as the standard library's,
which any client reads: at level 6, a hub library's 9-10 MB twin or a big tag's 12 MB
page data takes 0.53-0.61 x the time of ``gzip.compress`` and comes out 1-2 % smaller;
at level 3, up to a few hundred kilobytes take 0.46-0.64 x, 4-20 % smaller
(bench/README.md, gzip). A site build after a sync gzips both kinds again.
"""

from __future__ import annotations

from zlib_ng import zlib_ng

__all__ = ["COMPRESSOR", "gzip_bytes"]

#: What compresses: another zlib-ng may write other bytes for the same data, so a site
#: records it with what rendered its pages (``render.render_stamp``).
COMPRESSOR = f"zlib-ng {zlib_ng.ZLIBNG_VERSION}"


def gzip_bytes(data: bytes, level: int = 6) -> bytes:
    """``data`` as a gzip file with no name and no time: the same bytes for the same
    ``data`` and ``level``, so an unchanged page's copy compares equal on disk."""
    return zlib_ng.compress(data, level, wbits=_GZIP)


#: zlib's ``wbits`` for a gzip container (16 + the largest window): a header with no
#: name and time 0, then the deflate stream and the CRC-32 and length.
_GZIP = 16 + 15
