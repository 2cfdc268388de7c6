"""Package page rows (``cells.package_rows``) with a value beyond ASCII that reorders text
(a right-to-left override): test_cells.py's values are ASCII. A data attribute the page's
script compares with a filter's value holds the value itself; one holding JSON holds it
as a JSON escape (parsed, the same value); the text a reader sees shows its escape."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from cachedex.catalog import SpecSummary
from cachedex.publish import cells

OVERRIDE = "\u202e"


class _Rows(HTMLParser):
    """The attributes of each ``<tr>`` (unescaped, as a script reads them) and the text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_a_reordering_character_is_exact_in_attributes_and_escaped_in_text() -> None:
    value = f"rhel{OVERRIDE}8"
    spec = SpecSummary(
        hash="a" * 32,
        name="zlib",
        version="1.0",
        compiler=f"gcc{OVERRIDE}",
        platform="linux",
        os=value,
        target="x86_64",
        variants=(f"x={OVERRIDE}",),
        size=None,
        tags=(),
        stacks=("root", f"s{OVERRIDE}"),
        other_compilers=(f"gfortran{OVERRIDE}",),
    )
    html = str(cells.package_rows([spec], ["x"], [True], ""))
    parser = _Rows()
    parser.feed(html)
    (row,) = parser.rows
    # compared with a filter's value: the value itself
    assert (row["data-os"], row["data-compiler"]) == (value, f"gcc{OVERRIDE}")
    # JSON: the same values once parsed, and no raw override in the page's source
    assert json.loads(row["data-stacks"] or "") == list(spec.stacks)
    assert json.loads(row["data-variants"] or "") == list(spec.variants)
    assert json.loads(row["data-other-compilers"] or "") == list(spec.other_compilers)
    shown = "".join(parser.text)
    assert "rhel\\u202e8" in shown and OVERRIDE not in shown
    assert html.count(OVERRIDE) == 2  # data-os and data-compiler, nowhere else
