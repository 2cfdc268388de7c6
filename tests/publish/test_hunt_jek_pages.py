"""Pages (``specs.md``) whose values need care: escapes json.dumps and YAML agree on."""

from __future__ import annotations

import json

import yaml

from cachedex.publish.jekyll_pages import render_page
from tests.helpers import Listed, as_row


def _spec(dag_hash: str = "a" * 32, **fields: object) -> Listed:
    values: dict[str, object] = {
        "name": "pkg",
        "hash": dag_hash,
        "version": "1.0",
        "platform": "linux",
        "os": "ubuntu24.04",
        "target": "x86_64",
        "compiler": "gcc@13.2.0",
        "variants": ("+shared",),
        "size": None,
        "stacks": ("root",),
    }
    values.update(fields)
    return Listed(**values)  # type: ignore[arg-type]


def _front_matter(page: bytes) -> dict[str, str]:
    lines = page.decode("utf-8").split("\n")
    assert lines[0] == "---" and lines[-1] == "---"
    return dict(line.split(": ", 1) for line in lines[1:-1])


def test_a_variant_ending_in_an_escaped_quote_and_comma_keeps_its_value() -> None:
    # Stored compact, 'x=a",' is ["x=a\","]: its '","' is no separator of two items.
    variants = ('x=a",', "+y")
    page = render_page("t", "pkg", [as_row(_spec(variants=variants))])
    details = _front_matter(page)["spec_details"]
    assert json.loads(details)[0]["variants"] == list(variants)
    assert yaml.safe_load(page.decode()[4:-4])["spec_details"][0]["variants"] == list(variants)


def test_u_ffff_stays_escaped_beside_a_character_beyond_the_bmp() -> None:
    # Only characters beyond U+FFFF are written as themselves; U+FFFF itself is no
    # printable YAML character (libyaml and PyYAML refuse the page), so it stays \uffff.
    version = "1.0-\uffff-😀"
    page = render_page("t", "pkg", [as_row(_spec(version=version))])
    text = page.decode("utf-8")
    assert "\uffff" not in text and "\\uffff" in text and "😀" in text
    data = yaml.safe_load(text[4:-4])
    assert data["spec_details"][0]["versions"] == [version]
    assert data["meta"]["versions"] == [version]


def test_a_hash_that_is_no_dag_hash_is_still_a_json_string() -> None:
    # render_page takes any rows: a hash with a quote or backslash must not break the JSON.
    odd_hash = 'ab"c\\d'
    page = render_page("t", "pkg", [as_row(_spec(odd_hash))])
    assert json.loads(_front_matter(page)["spec_details"])[0]["hash"] == odd_hash


def test_rows_given_in_any_order_are_listed_by_hash() -> None:
    hashes = ["c" * 32, "a" * 32, "b" * 32]
    page = render_page("t", "pkg", [as_row(_spec(h)) for h in hashes])
    listed = [detail["hash"] for detail in json.loads(_front_matter(page)["spec_details"])]
    assert listed == sorted(hashes)
