"""One gzip file made of parts compressed apart (as pigz does), and script-safe JSON.

:mod:`.export` compresses each part of a big JSON file in its own process: a part is a
raw deflate stream ending with a sync flush (the last one with the final block), so the
parts concatenated are one valid deflate stream. :func:`gzip_file` puts the gzip header
(no name, no time) and trailer around them; :func:`crc32_combine` gives the trailer's
CRC from the parts' CRCs, as zlib's own ``crc32_combine`` (which Python does not expose).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence

__all__ = ["DeflatedPart", "crc32_combine", "deflate_part", "gzip_file", "script_safe"]

#: The gzip header: deflate, no name, no time (MTIME 0), OS unknown; what
#: ``gzip.compress(data, mtime=0)`` writes.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"

DeflatedPart = tuple[bytes, int, int]  #: (raw deflate bytes, CRC-32 of the text, length of the text)


def deflate_part(pieces: Iterable[bytes], level: int, *, last: bool) -> DeflatedPart:
    """``pieces`` joined, compressed as one part of a deflate stream (ending with a sync
    flush, or with the final block when ``last``). ``pieces`` may be a generator: a
    part is then made while it is compressed, and not held whole."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    out = []
    crc = size = 0
    for piece in pieces:
        out.append(compressor.compress(piece))
        crc = zlib.crc32(piece, crc)
        size += len(piece)
    out.append(compressor.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH))
    return b"".join(out), crc, size


def gzip_file(parts: Sequence[DeflatedPart]) -> bytes:
    """The gzip file of ``parts`` (from :func:`deflate_part`, the last one ``last``)."""
    crc, size = 0, 0
    for _, part_crc, part_size in parts:
        crc = crc32_combine(crc, part_crc, part_size)
        size += part_size
    return b"".join([_GZIP_HEADER, *(data for data, _, _ in parts), struct.pack("<II", crc, size & 0xFFFFFFFF)])


def _times(matrix: list[int], vector: int) -> int:
    """``matrix`` (32 columns over GF(2)) times ``vector``."""
    total = 0
    row = 0
    while vector:
        if vector & 1:
            total ^= matrix[row]
        vector >>= 1
        row += 1
    return total


def _square(matrix: list[int]) -> list[int]:
    return [_times(matrix, column) for column in matrix]


def crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """The CRC-32 of A + B from that of A, that of B and B's length (zlib's algorithm:
    apply ``length2`` zero bytes to ``crc1`` with squared GF(2) operator matrices)."""
    if length2 <= 0:
        return crc1
    odd = [0xEDB88320] + [1 << row for row in range(31)]  # the operator for one zero bit
    even = _square(odd)  # two zero bits
    odd = _square(even)  # four zero bits
    while True:
        even = _square(odd)  # the first time: one zero byte
        if length2 & 1:
            crc1 = _times(even, crc1)
        length2 >>= 1
        if not length2:
            break
        odd = _square(even)
        if length2 & 1:
            crc1 = _times(odd, crc1)
        length2 >>= 1
        if not length2:
            break
    return crc1 ^ crc2


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
