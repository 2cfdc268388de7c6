"""Self-contained SVG badges, "spack binaries | 12 specs", per package of a tag
(``tags/<tag>/packages/<name>/badge.svg``) and per tag (``tags/<tag>/badge.svg``).

No external service and no font file: the text is measured with a table of Verdana's
advance widths at 11px (DejaVu Sans, the usual fallback, is no wider), characters not in
it counted as the widest, and each text also carries ``textLength``, so that a renderer
with another font squeezes or stretches the text into its box rather than overflow it.
"""

from __future__ import annotations

import math
import re
from xml.sax.saxutils import escape, quoteattr

__all__ = ["BADGE_LABEL", "SVG", "badge_svg", "count_text", "package_badge", "text_width"]

#: The media type of a badge.
SVG = "image/svg+xml"

#: The left half of every badge.
BADGE_LABEL = "spack binaries"

# Advance widths of Verdana at 11px, in pixels, for printable ASCII (as shields.io measures).
_WIDTHS = dict(
    zip(
        " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
        (
            3.87,
            4.33,
            5.05,
            9.0,
            6.99,
            11.84,
            7.99,
            2.95,
            5.0,
            5.0,
            6.99,
            9.0,
            4.0,
            5.0,
            4.0,
            5.0,
            6.99,
            6.99,
            6.99,
            6.99,
            6.99,
            6.99,
            6.99,
            6.99,
            6.99,
            6.99,
            5.0,
            5.0,
            9.0,
            9.0,
            9.0,
            6.0,
            11.0,
            7.52,
            7.54,
            7.68,
            8.48,
            6.96,
            6.32,
            8.53,
            8.27,
            4.63,
            5.0,
            7.62,
            6.12,
            9.27,
            8.23,
            8.66,
            6.63,
            8.66,
            7.65,
            7.52,
            6.78,
            8.05,
            7.52,
            10.88,
            7.54,
            6.77,
            7.54,
            5.0,
            5.0,
            5.0,
            9.0,
            6.99,
            6.99,
            6.61,
            6.85,
            5.73,
            6.85,
            6.55,
            3.87,
            6.85,
            6.96,
            3.02,
            3.79,
            6.51,
            3.02,
            10.75,
            6.96,
            6.68,
            6.85,
            6.85,
            4.69,
            5.73,
            4.33,
            6.96,
            6.51,
            8.98,
            6.51,
            6.51,
            5.78,
            6.98,
            5.0,
            6.98,
            9.0,
        ),  # fmt: skip
        strict=True,
    )
)
#: Any other character: as wide as the widest (a wide CJK glyph is about 11px).
_OTHER = 11.84
_PAD = 6  # pixels each side of a text
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_GREEN, _GREY = "#4c1", "#9f9f9f"


def text_width(text: str) -> float:
    """The width of ``text`` in Verdana 11px, in pixels (never less than it renders)."""
    return sum(_WIDTHS.get(char, _OTHER) for char in text)


def count_text(specs: int) -> str:
    """``12 specs``, ``1 spec``, ``no specs``."""
    if specs == 0:
        return "no specs"
    return f"{specs:,} spec" + ("" if specs == 1 else "s")


def badge_svg(value: str, *, label: str = BADGE_LABEL, ok: bool = True) -> bytes:
    """A flat badge: ``label`` on grey, ``value`` on green (grey when not ``ok``)."""
    label, value = _NOT_XML.sub("", label), _NOT_XML.sub("", value)
    label_text, value_text = math.ceil(text_width(label)), math.ceil(text_width(value))
    left, right = label_text + 2 * _PAD, value_text + 2 * _PAD
    width = left + right
    title = f"{label}: {value}"
    colour = _GREEN if ok else _GREY

    def text(x: float, length: int, content: str) -> str:
        return (
            f'<text x="{x:g}" y="15" fill="#010101" fill-opacity=".3" textLength="{length}">{escape(content)}</text>'
            f'<text x="{x:g}" y="14" textLength="{length}">{escape(content)}</text>'
        )

    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" aria-label={quoteattr(title)}>'
        f"<title>{escape(title)}</title>"
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
        f'<rect width="{width}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        'text-rendering="geometricPrecision" font-size="11">'
        f"{text(left / 2, label_text, label)}{text(left + right / 2, value_text, value)}</g></svg>\n"
    ).encode()


def package_badge(specs: int) -> bytes:
    """The badge of a package in a tag, or of a tag: its listed specs."""
    return badge_svg(count_text(specs), ok=specs > 0)
