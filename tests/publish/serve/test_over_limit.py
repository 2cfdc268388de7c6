"""``cachedex serve`` past its limit of connections, as a real process: the 503 is the
server's own, with the headers every answer carries, ``Retry-After`` and the error shape
(JSON on the API and a page's JSON twin, the site's error page elsewhere)."""

from __future__ import annotations

import httpx

from cachedex.cli.serve_app import serve_app
from tests.helpers import Demo
from tests.publish.serve import crowded, get

#: What every answer carries whatever its status (``serve/headers.py``).
_EVERY_ANSWERS = ("content-security-policy", "x-content-type-options", "referrer-policy")
_MESSAGE = "the server holds as many connections as it takes at once; try again in 5 s"


def test_the_503_past_the_limit_is_cachedexs_own(demo_run: Demo) -> None:
    asked = [
        ("GET", "/api/tags"),
        ("GET", "/tags/develop/index.json"),
        ("POST", "/api/reuse"),
        ("GET", "/tags/develop/"),
        ("HEAD", "/tags/develop/"),
    ]
    with crowded(demo_run.config) as url:
        answers = {(method, path): httpx.request(method, url + path, timeout=5) for method, path in asked}
    usual = get(serve_app(demo_run.catalog), "/api/tags")  # an answer under the limit
    for (method, path), answer in answers.items():
        assert answer.status_code == 503, (method, path, answer.text[:200])
        for name in _EVERY_ANSWERS:
            assert answer.headers.get(name) == usual.headers[name], (method, path, name)
        assert answer.headers["retry-after"] == "5" and answer.headers["cache-control"] == "no-cache"
        assert answer.headers["connection"] == "close"  # (its place given back at once)
        if path.startswith("/api/") or path.endswith(".json"):
            assert answer.headers["content-type"] == "application/json"
            assert answer.json() == {"error": {"status": 503, "message": _MESSAGE}}
        else:
            assert answer.headers["content-type"] == "text/html; charset=utf-8"
    page, head = answers["GET", "/tags/develop/"], answers["HEAD", "/tags/develop/"]
    assert "<h1>503 Service Unavailable</h1>" in page.text and _MESSAGE in page.text
    assert head.content == b"" and head.headers["content-length"] == page.headers["content-length"]
