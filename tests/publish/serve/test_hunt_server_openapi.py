"""What the OpenAPI document (``serve/openapi.py``) says that no generated client checks:
the version of OpenAPI its schemas need, which answers a POST has (no ETag, no 304, its
own 503), the limits it states and the parameters it lists, each as the server has them."""

from __future__ import annotations

from typing import Any

import pytest

from cachedex import __version__
from cachedex.catalog import Catalog
from cachedex.publish.serve import create_app
from cachedex.publish.serve.api import DEFAULT_LIMIT, FACET_PARAMETERS
from cachedex.publish.serve.openapi import openapi_document
from cachedex.publish.serve.reuse_route import BODY_BYTES, BODY_SECONDS
from tests.helpers import record, write_tag
from tests.publish.serve import get


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi_document()


def _refs(value: Any) -> set[str]:
    if isinstance(value, dict):
        found = {value["$ref"]} if isinstance(value.get("$ref"), str) else set()
        return found.union(*(_refs(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(_refs(item) for item in value))
    return set()


def test_the_document_is_openapi_3_1_of_this_version(document: dict[str, Any]) -> None:
    """The schemas are JSON Schema 2020-12 (msgspec's), which OpenAPI 3.1 alone takes;
    the version is the package's."""
    assert document["openapi"] == "3.1.0"
    assert document["info"]["version"] == __version__


def test_every_schema_referred_to_is_in_the_components(document: dict[str, Any]) -> None:
    """Each ``$ref`` names a schema the document holds (none dangles)."""
    refs = _refs(document["paths"]) | _refs(document["components"])
    assert refs
    names = {ref.removeprefix("#/components/schemas/") for ref in refs}
    assert all(ref.startswith("#/components/schemas/") for ref in refs)
    assert names <= set(document["components"]["schemas"]), names - set(document["components"]["schemas"])


def test_a_post_answer_has_no_etag_nor_304_and_its_own_503(document: dict[str, Any]) -> None:
    """``POST /api/reuse`` is never revalidated (no ETag, no 304), and its 503 is the one
    that also says it holds as many bodies as it takes; a GET's has ETag and 304."""
    reuse = document["paths"]["/api/reuse"]["post"]["responses"]
    assert "304" not in reuse and "headers" not in reuse["200"]
    assert reuse["503"]["description"].startswith("The server holds as many bodies as it takes at once")
    assert reuse["503"]["headers"]["Retry-After"]["required"] is True
    search = document["paths"]["/api/search"]["get"]["responses"]
    assert "304" in search and search["200"]["headers"]["ETag"]["required"] is True
    assert "bodies" not in search["503"]["description"]


def test_the_body_limits_stated_are_the_routes(document: dict[str, Any]) -> None:
    """408 and 413 say the seconds and MiB that POST /api/reuse allows."""
    reuse = document["paths"]["/api/reuse"]["post"]["responses"]
    assert (
        reuse["413"]["description"]
        == f"The body is larger than {BODY_BYTES // 2**20} MiB"
        == ("The body is larger than 64 MiB")
    )
    assert reuse["408"]["description"] == f"The body did not arrive within {BODY_SECONDS:.0f} s"


def test_a_redirect_names_its_location_and_a_400_may_be_plain_text(document: dict[str, Any]) -> None:
    """Every 307 carries Location (required); every 400 may be the HTTP layer's line of
    text as well as the app's JSON error."""
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert responses["307"]["headers"]["Location"]["required"] is True, (path, method)
            assert set(responses["400"]["content"]) == {"application/json", "text/plain"}, (path, method)


def test_a_tag_s_packages_list_every_facet_filter_as_an_optional_query_parameter(document: dict[str, Any]) -> None:
    """Each filter the route takes is listed, in the query, optional; each says what it
    keeps (the stack's also that a stack the tag lacks is a 404)."""
    parameters = document["paths"]["/api/tags/{tag}/packages"]["get"]["parameters"]
    query = {p["name"]: p for p in parameters if p["in"] == "query"}
    assert set(query) == set(FACET_PARAMETERS)
    assert not any(p["required"] for p in query.values())
    assert "404" in query["stack"]["description"]
    for name, parameter in query.items():
        assert parameter["description"].startswith("only packages with a spec"), name
    (tag,) = [p for p in parameters if p["in"] == "path"]
    assert tag["name"] == "tag" and tag["required"] is True


def test_the_default_limit_declared_is_the_number_of_results_given(tmp_path: Any) -> None:
    """A search without ``limit`` gets as many specs as the document's default says."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record(f"{n:032x}", f"pkg-{n:03d}") for n in range(DEFAULT_LIMIT + 7)])
    app = create_app(tmp_path / "c.sqlite")
    declared = get(app, "/api/openapi.json").json()["paths"]["/api/search"]["get"]["parameters"]
    (limit,) = [p for p in declared if p["name"] == "limit"]
    answer = get(app, "/api/search?q=").json()
    assert limit["schema"]["default"] == len(answer["specs"]) == 50
    assert answer["total"] == DEFAULT_LIMIT + 7
