"""One gzip file made of parts compressed apart (as pigz does), and script-safe JSON.

:mod:`.export` compresses the parts of a big JSON file on a pool of threads: a part is a
raw deflate stream ending with a sync flush (the last one with the final block), so the
parts concatenated are one valid deflate stream. :func:`gzip_file` puts the gzip header
(no name, no time) and trailer around them, the trailer's CRC combined from the parts'
CRCs (``crc32_combine``). Compressed by zlib-ng, as :mod:`.gzipped` is (bench/README.md, gzip).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from zlib_ng import zlib_ng

__all__ = ["DeflatedPart", "deflate_part", "gzip_file", "script_safe"]

#: The gzip header: deflate, no name, no time (MTIME 0), OS unknown; what
#: ``gzip.compress(data, mtime=0)`` writes.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"

DeflatedPart = tuple[bytes, int, int]  #: (raw deflate bytes, CRC-32 of the text, length of the text)


def deflate_part(pieces: Iterable[bytes], level: int, *, last: bool) -> DeflatedPart:
    """``pieces`` joined, compressed as one part of a deflate stream (ending with a sync
    flush, or with the final block when ``last``). ``pieces`` may be a generator: a
    part is then made while it is compressed, and not held whole."""
    compressor = zlib_ng.compressobj(level, zlib_ng.DEFLATED, -zlib_ng.MAX_WBITS)
    out = []
    crc = size = 0
    for piece in pieces:
        out.append(compressor.compress(piece))
        crc = zlib_ng.crc32(piece, crc)
        size += len(piece)
    out.append(compressor.flush(zlib_ng.Z_FINISH if last else zlib_ng.Z_SYNC_FLUSH))
    return b"".join(out), crc, size


def gzip_file(parts: Sequence[DeflatedPart]) -> bytes:
    """The gzip file of ``parts`` (from :func:`deflate_part`, the last one ``last``)."""
    crc, size = 0, 0
    for _, part_crc, part_size in parts:
        crc = zlib_ng.crc32_combine(crc, part_crc, part_size)
        size += part_size
    return b"".join([_GZIP_HEADER, *(data for data, _, _ in parts), struct.pack("<II", crc, size & 0xFFFFFFFF)])


# Characters that are plain in JSON but end or confuse a <script> element or a JS string.
_SCRIPT_UNSAFE = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"))
_LINE_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def script_safe(data: bytes) -> bytes:
    """JSON text with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped: the same JSON
    (they only occur inside strings), safe inside an HTML page too."""
    for plain, escaped in _SCRIPT_UNSAFE:
        if plain in data:
            data = data.replace(plain, escaped)
    if b"\xe2" in data:
        for plain, escaped in _LINE_SEPARATORS:
            data = data.replace(plain, escaped)
    return data
