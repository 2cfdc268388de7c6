"""Links to the page of a spec whose "hash" is not a DAG hash (a hostile index's, in a
catalog written before ingest checked them): each character that means something in a
URL (``#``, ``?``, ``/``) is percent-encoded, so the link leads to that spec's page and
is not cut at a fragment, a query or an extra folder."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.serve import create_app
from tests.helpers import record, write_tag
from tests.publish.serve import get

PAGE = "/tags/t/packages/zlib/"


def _spec_links(app: object, path: str) -> list[str]:
    """The links of the page at ``path`` to spec pages, as absolute paths on the server."""
    html = get(app, path).text
    return [urljoin(path, href.replace("&amp;", "&")) for href in re.findall(r'href="([^"]*specs/[^"]*)"', html)]


@pytest.mark.parametrize("dag_hash", ["ab#c?d" + "x" * 26, "a/#b?c" + "x" * 26])
def test_a_link_to_a_spec_names_its_whole_hash_in_one_path_segment(tmp_path: Path, dag_hash: str) -> None:
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(dag_hash, "zlib")])
    app = create_app(tmp_path / "c.sqlite")
    for path in (PAGE, "/search.html?q=zlib"):
        (link,) = _spec_links(app, path)
        parts = urlsplit(link)
        assert not parts.query and not parts.fragment, link
        assert [unquote(part) for part in parts.path.split("/")] == ["", "specs", dag_hash[:2], f"{dag_hash}.html"]


def test_the_link_to_a_spec_whose_hash_holds_a_hash_sign_opens_its_page(tmp_path: Path) -> None:
    """Unencoded, ``specs/ab/ab#c?d...html`` asks the server for ``specs/ab/ab``."""
    dag_hash = "ab#c?d" + "x" * 26
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(dag_hash, "zlib")])
    app = create_app(tmp_path / "c.sqlite")
    (link,) = _spec_links(app, PAGE)
    answer = get(app, link)
    assert answer.status_code == 200 and "<code>ab#c?dx</code>" in answer.text
