"""Badges: every package badge of the site parsed as SVG, its text and its count against
the catalog; the text fits its box; the server's are the same; hostile names."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.badges import BADGE_LABEL, badge_svg, count_text, package_badge, text_width
from cachedex.publish.pages import package_page
from cachedex.publish.render import render
from cachedex.publish.serve import create_app
from cachedex.publish.site import write_site
from tests.helpers import Demo, evil_catalog, listed_specs
from tests.publish.serve import get

SVG = "{http://www.w3.org/2000/svg}"


def _texts(data: bytes) -> tuple[ET.Element, list[str]]:
    root = ET.fromstring(data)
    assert root.tag == f"{SVG}svg" and root.get("height") == "20"
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    return root, texts[1::2]  # each text twice: its shadow, then itself


def _fits(root: ET.Element) -> None:
    """Each text's length fits the box it is centred in, with room to spare."""
    rects = [r for r in root.iter(f"{SVG}rect") if r.get("fill") not in ("url(#s)", "#fff")]
    boxes = [(float(r.get("x", 0)), float(r.get("width", 0))) for r in rects]
    for text in list(root.iter(f"{SVG}text"))[1::2]:
        x, length = float(text.get("x", 0)), float(text.get("textLength", 0))
        assert length >= text_width(text.text or "") - 1
        (start, width) = next((s, w) for s, w in boxes if s <= x <= s + w)
        assert start + 4 <= x - length / 2 and x + length / 2 <= start + width - 4
    assert float(root.get("width", 0)) == sum(w for _, w in boxes)


def test_every_package_badge_of_the_site(demo_run: Demo) -> None:
    site = demo_run.site
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        for tag in catalog.tag_names():
            counts: dict[str, int] = {}
            for spec in listed_specs(catalog, tag):
                counts[spec.name] = counts.get(spec.name, 0) + 1
            badges = sorted((site / "tags" / tag / "packages").glob("*/badge.svg"))
            assert len(badges) == len(counts), tag
            for badge in badges:
                root, texts = _texts(badge.read_bytes())
                assert texts == [BADGE_LABEL, count_text(counts[badge.parent.name])], badge
                _fits(root)
            root, texts = _texts((site / "tags" / tag / "badge.svg").read_bytes())
            assert texts == [BADGE_LABEL, count_text(len(listed_specs(catalog, tag)))]
    html = (site / "tags/develop/packages/zlib/index.html").read_text()
    markdown = "[![spack binaries](https://SITE/tags/develop/packages/zlib/badge.svg)](https://SITE/tags/develop/packages/zlib/index.html)"
    assert markdown in html and '<img src="badge.svg"' in html


def test_the_server_serves_the_same_badges(demo_run: Demo) -> None:
    app = create_app(demo_run.catalog)
    for path in ("tags/develop/packages/zlib/badge.svg", "tags/develop/badge.svg"):
        answer = get(app, "/" + path)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("image/svg+xml")
        assert answer.content == (demo_run.site / path).read_bytes()
    assert get(app, "/tags/develop/packages/no-such/badge.svg").status_code == 404
    assert get(app, "/tags/nope/badge.svg").status_code == 404


@pytest.mark.parametrize(
    "value", ["1 spec", "12 specs", "123,456 specs", "no specs", "WWWWWWWWWW", "\u6f22\u5b57\u6f22\u5b57", "iiiiiiii"]
)
def test_text_never_overflows(value: str) -> None:
    root, texts = _texts(badge_svg(value))
    assert texts == [BADGE_LABEL, value]
    _fits(root)
    assert text_width("WWW") > text_width("iii")  # measured, not counted


def test_counts_and_colours() -> None:
    assert [count_text(n) for n in (0, 1, 2, 12_345)] == ["no specs", "1 spec", "2 specs", "12,345 specs"]
    assert b'fill="#4c1"' in package_badge(3) and b'fill="#4c1"' not in package_badge(0)


def test_hostile_names_in_badges(tmp_path: Path) -> None:
    nasty = "<b>&amp;\"'\x01]]>"
    root, texts = _texts(badge_svg(nasty, label=nasty))
    assert texts == ["<b>&amp;\"']]>"] * 2  # the text, escaped in the file; the control character dropped
    with evil_catalog(tmp_path / "evil.sqlite") as catalog:
        html = render(package_page(catalog, "t<i>x", "we\"ird'<b>name"))
        assert "<b>name" not in html and "t%3Ci%3Ex/packages/we%22ird%27%3Cb%3Ename/badge.svg" in html
        write_site(catalog, tmp_path / "site")
    for badge in (tmp_path / "site").rglob("badge.svg"):
        _texts(badge.read_bytes())
    assert (tmp_path / "site/tags/t<i>x/packages/we\"ird'<b>name/badge.svg").is_file()
    answer = get(create_app(tmp_path / "evil.sqlite"), "/tags/t%3Ci%3Ex/packages/we%22ird%27%3Cb%3Ename/badge.svg")
    assert answer.status_code == 200 and _texts(answer.content)[1] == [BADGE_LABEL, "1 spec"]


@pytest.mark.parametrize("value", ["1 spec", "12 specs", "no specs", "iiiiiiii"])
def test_each_text_s_box_is_at_least_as_wide_as_its_text(value: str) -> None:
    """Widths are fractions of a pixel: rounded down, a box would squeeze its text by up
    to a pixel (the label's 78.73 px in a 78 px textLength)."""
    root = ET.fromstring(badge_svg(value))
    texts = list(root.iter(f"{SVG}text"))[1::2]
    assert [t.text for t in texts] == [BADGE_LABEL, value]
    assert all(text_width(value) % 1 for value in (BADGE_LABEL, value))  # (so rounding matters)
    for text in texts:
        assert float(text.get("textLength", 0)) >= text_width(text.text or "")
