"""The ETags of the server's answers: one definition (``sending.etag``) for the answers
built from the catalog and those of the code alone, both naming the code's stamp."""

from __future__ import annotations

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.render import render_stamp
from cachedex.publish.serve import app as app_module
from cachedex.publish.serve import create_app
from cachedex.publish.serve.sending import etag
from tests.publish.serve import get


def test_every_etag_names_the_code(small_catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = ["/api/openapi.json", "/api/tags", "/tags/t/"]  # of the code alone; built from the catalog
    before = {path: get(create_app(small_catalog.path), path) for path in paths}
    document = before["/api/openapi.json"]
    plain = get(create_app(small_catalog.path), "/api/openapi.json", **{"accept-encoding": "identity"})
    assert document.headers["etag"].removesuffix('-gzip"') == etag(render_stamp(), plain.content)[:-1]
    monkeypatch.setattr(app_module, "render_stamp", lambda: b"cachedex 99.0 upgraded\n")
    upgraded = create_app(small_catalog.path)
    for path, answer in before.items():
        again = get(upgraded, path, **{"if-none-match": answer.headers["etag"]})
        assert again.status_code == 200 and again.headers["etag"] != answer.headers["etag"], path
