"""Badges read as SVG with the stdlib: each text centred in its box, its shadow the same
text at the same place and length, the rounded clip and the shading over the whole
badge, a name for screen readers, and a character the width table lacks never
measured narrower than the widest it has."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from cachedex.publish.badges import BADGE_LABEL, badge_svg, package_badge, text_width

SVG = "{http://www.w3.org/2000/svg}"
#: The characters the width table has (printable ASCII).
ASCII = [chr(code) for code in range(0x20, 0x7F)]
VALUES = ["1 spec", "12 specs", "no specs", "WWWWWWWWWW", "iiiiiiii", "\u6f22\u5b57"]


def _texts(root: ET.Element) -> list[ET.Element]:
    return list(root.iter(f"{SVG}text"))


def _boxes(root: ET.Element) -> list[tuple[float, float]]:
    """(x, width) of the label's box and the value's: the clipped group's coloured rects."""
    group = root.find(f"{SVG}g[@clip-path='url(#r)']")
    assert group is not None
    rects = [r for r in group.findall(f"{SVG}rect") if r.get("fill") != "url(#s)"]
    return [(float(r.get("x", 0)), float(r.get("width", 0))) for r in rects]


def test_a_character_the_table_lacks_is_measured_as_the_widest_it_has() -> None:
    """A glyph of another script is about as wide as the widest: measured narrower, its
    box would be too small and the text squeezed."""
    widest = max(text_width(char) for char in ASCII)
    for char in ("\u6f22", "\u00e9", "\U0001f600"):
        assert text_width(char) >= widest, char


@pytest.mark.parametrize("value", VALUES)
def test_each_text_is_centred_in_its_box(value: str) -> None:
    root = ET.fromstring(badge_svg(value))
    label_box, value_box = _boxes(root)
    assert label_box[0] == 0 and value_box[0] == label_box[1]  # side by side, from the left edge
    shown = _texts(root)[1::2]  # (each text follows its shadow)
    assert [t.text for t in shown] == [BADGE_LABEL, value]
    rooms = []
    for text, (start, width) in zip(shown, (label_box, value_box), strict=True):
        assert float(text.get("x", 0)) == start + width / 2, text.text
        rooms.append(width - float(text.get("textLength", 0)))
    # each box is its text's length and the same padding: both halves alike
    assert rooms[0] == rooms[1] > 0


@pytest.mark.parametrize("value", VALUES)
def test_each_shadow_is_its_text_at_the_same_place_and_length(value: str) -> None:
    """A shadow without the text's textLength is laid out at the renderer's own width:
    beside its text, not under it, when the font differs."""
    texts = _texts(ET.fromstring(badge_svg(value)))
    assert len(texts) == 4
    for shadow, text in (texts[0:2], texts[2:4]):
        assert shadow.get("fill-opacity") and not text.get("fill-opacity")
        assert (shadow.text, shadow.get("x"), shadow.get("textLength")) == (
            text.text,
            text.get("x"),
            text.get("textLength"),
        )


@pytest.mark.parametrize("value", VALUES)
def test_the_clip_and_the_shading_cover_the_whole_badge(value: str) -> None:
    root = ET.fromstring(badge_svg(value))
    width = root.get("width")
    clip = root.find(f"{SVG}clipPath[@id='r']/{SVG}rect")
    shading = root.find(f"{SVG}g/{SVG}rect[@fill='url(#s)']")
    assert clip is not None and shading is not None
    assert clip.get("width") == width and shading.get("width") == width
    assert clip.get("height") == shading.get("height") == root.get("height")


@pytest.mark.parametrize("specs", [0, 1, 12])
def test_a_badge_says_its_label_and_value_to_a_screen_reader(specs: int) -> None:
    """An image's name (role, aria-label) and its title (shown on hover): both halves."""
    root = ET.fromstring(package_badge(specs))
    value = _texts(root)[-1].text
    assert root.get("role") == "img"
    assert root.get("aria-label") == root.findtext(f"{SVG}title") == f"{BADGE_LABEL}: {value}"
