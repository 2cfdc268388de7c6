"""What the server says to a client that asks something slightly off: a spec's page
under the wrong folder, a path next to the API's, the API's own document."""

from __future__ import annotations

from typing import Any

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.serve import create_app
from cachedex.values import stack_order
from tests.helpers import Demo
from tests.publish.serve import get


@pytest.fixture
def app(small_catalog: Catalog) -> Any:
    return create_app(small_catalog.path)


def test_a_spec_under_the_wrong_folder_is_pointed_to_its_own(app: Any) -> None:
    answer = get(app, f"/specs/aa/{'z' * 32}.json")
    assert answer.status_code == 404
    assert "its page is under specs/zz/" in answer.json()["error"]["message"]


@pytest.mark.parametrize("name", ["q" * 32, "Z" * 32, "zzzz"])
def test_a_hash_no_spec_has_is_not_said_to_have_a_page(app: Any, name: str) -> None:
    # (uppercase, or a prefix: no page has that name, under any folder)
    answer = get(app, f"/specs/aa/{name}.json")
    assert answer.status_code == 404
    message = answer.json()["error"]["message"]
    assert "its page is under" not in message
    assert message == f"no spec with hash {name!r} in the catalog"
    page = get(app, f"/specs/aa/{name}.html")
    assert page.status_code == 404 and "its page is under" not in page.text


@pytest.mark.parametrize("path", ["/api", "/api/nope", "/api/tags/t/nope"])
def test_a_path_that_is_no_endpoint_of_the_api_is_said_in_json_with_where_they_are(app: Any, path: str) -> None:
    answer = get(app, path)
    assert answer.status_code == 404
    assert answer.headers["content-type"] == "application/json"
    message = answer.json()["error"]["message"]
    assert message.startswith(f"no such endpoint: {path}") and "openapi.json" in message


@pytest.mark.parametrize("path", ["/api/openapi.json", "/live.json"])
def test_the_documents_of_no_parameter_refuse_one_and_are_revalidated(app: Any, path: str) -> None:
    refused = get(app, path + "?format=yaml")
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == "unknown parameter 'format' (allowed: none)"
    first = get(app, path)
    assert first.status_code == 200 and first.headers["etag"]
    again = get(app, path, **{"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize("path", ["/no/such/page", "/static/nope.css"])
def test_the_not_found_page_is_gzipped_as_every_answer_of_its_size(app: Any, path: str) -> None:
    zipped = get(app, path, **{"accept-encoding": "gzip"})
    plain = get(app, path, **{"accept-encoding": "identity"})
    assert (zipped.status_code, plain.status_code) == (404, 404)
    assert zipped.headers.get("content-encoding") == "gzip" and "content-encoding" not in plain.headers
    assert zipped.text == plain.text and len(plain.content) > 800 and zipped.headers["vary"] == "Accept-Encoding"


def test_a_results_stacks_are_in_the_order_of_a_specs_page(demo_run: Demo) -> None:
    """``root`` first, as a spec's page, its API answer and every page list them (a
    search's were sorted by name: ``developer-tools-darwin`` before ``root``)."""
    app = create_app(demo_run.catalog)
    found = get(app, "/api/search?q=netlib-lapack&tag=develop&limit=100").json()["specs"]
    darwin = [spec for spec in found if "developer-tools-darwin" in spec["stacks"]]
    assert darwin and all("root" in spec["stacks"] for spec in darwin)  # (a stack before "root" by name)
    for spec in found:
        assert spec["stacks"] == sorted(spec["stacks"], key=stack_order), spec["hash"]
    for spec in darwin:
        page = get(app, f"/api/specs/{spec['hash']}").json()["spec"]  # (its stacks in every tag)
        assert set(spec["stacks"]) <= set(page["stacks"]) and page["stacks"] == sorted(page["stacks"], key=stack_order)
