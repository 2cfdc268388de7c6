"""The ETags of the server's answers: one definition (``sending.etag``) for the answers
built from the catalog and those of the code alone, both naming the code's stamp."""

from __future__ import annotations

import time

import pytest

from cachedex.catalog import Catalog
from cachedex.publish.render import render_stamp
from cachedex.publish.serve import app as app_module
from cachedex.publish.serve import create_app
from cachedex.publish.serve.sending import etag
from tests.helpers import record, write_tag
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


def test_an_answer_built_after_a_sync_committed_is_tagged_with_that_state(
    small_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync that commits between the state a request reads (its cache key) and the
    answer's build: the answer shows the new state, so its ETag and its place in the
    cache are the new state's (one ETag was served with two bodies)."""
    from cachedex.publish.serve.catalogs import Catalogs

    warm = Catalogs.warm
    synced: list[bool] = []

    def sync_meanwhile(self: Catalogs, state: object) -> None:
        warm(self, state)
        if not synced:
            synced.append(True)
            write_tag(small_catalog, "u", [record("u" * 32, "zstd", version="1.5.6")], members={"u" * 32: True})

    monkeypatch.setattr(Catalogs, "warm", sync_meanwhile)
    app = create_app(small_catalog.path)
    first = get(app, "/api/tags")
    assert synced and "u" in [tag["name"] for tag in first.json()]
    again = get(app, "/api/tags")
    assert (again.headers["etag"], again.content) == (first.headers["etag"], first.content)


def test_an_answer_built_after_a_sync_committed_is_not_dated_by_the_state_before(
    small_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It shows the new state: its Last-Modified is the new state's (withheld in its
    first second), never the old one's, which a client asking by date would keep."""
    from cachedex.publish.serve.catalogs import Catalogs

    warm = Catalogs.warm
    calls: list[object] = []

    def sync_on_the_third_request(self: Catalogs, state: object) -> None:
        warm(self, state)
        calls.append(state)
        if len(calls) == 3:
            write_tag(small_catalog, "u", [record("u" * 32, "zstd", version="1.5.6")], members={"u" * 32: True})

    monkeypatch.setattr(Catalogs, "warm", sync_on_the_third_request)
    app = create_app(small_catalog.path)
    old = get(app, "/api/tags/t/packages")
    time.sleep(1.1)  # the old state's date may be sent now
    old_date = get(app, "/api/tags/t/packages?stack=root").headers["last-modified"]
    assert len(calls) == 2
    overlapped = get(app, "/api/tags")
    assert "u" in [tag["name"] for tag in overlapped.json()] and old.status_code == 200
    assert overlapped.headers.get("last-modified") != old_date


def test_a_burst_of_syncs_does_not_put_the_date_ahead_of_the_clock() -> None:
    """Each state seen took the second after the last state's date: forty syncs in five
    seconds withheld Last-Modified for the next forty. A state's date follows the
    latest date sent, and each is later than every date sent before it."""
    from cachedex.publish.serve.headers import StateDates

    dates = StateDates(0)
    burst = [dates.of(state) for state in range(40)]
    # (states no answer could be dated by yet may share a date: no client holds one)
    assert burst == sorted(burst) and burst[-1] - burst[0] <= 2
    started = time.monotonic()
    while not StateDates.servable(date := dates.of(39)):
        assert time.monotonic() - started < 3, "no date within 3 s"
        time.sleep(0.05)
    later = dates.of("next")
    assert later > date


def test_if_modified_since_in_each_of_http_date_forms(small_catalog: Catalog) -> None:
    """RFC 9110: IMF-fixdate, RFC 850 and asctime's form, all GMT (asctime's was ignored)."""
    import email.utils

    app = create_app(small_catalog.path)
    deadline = time.monotonic() + 5
    while "last-modified" not in (first := get(app, "/api/tags")).headers:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    when = email.utils.parsedate_to_datetime(first.headers["last-modified"])
    for form in ("%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %d %H:%M:%S %Y"):
        since = when.strftime(form)
        assert get(app, "/api/tags", **{"if-modified-since": since}).status_code == 304, since
    earlier = when.replace(year=when.year - 1).strftime("%a %b %d %H:%M:%S %Y")
    assert get(app, "/api/tags", **{"if-modified-since": earlier}).status_code == 200
    assert get(app, "/api/tags", **{"if-modified-since": "Tue, 01 Dec 2099 18:06:12 -0000"}).status_code == 200
    # A date no clock reaches cannot be read: ignored too (it was a 500 and a traceback)
    for unreadable in ("Fri, 01 Jan 99999999999 00:00:00 GMT", "Fri, 01 Jan 99999 00:00:00 GMT", "garbage"):
        assert get(app, "/api/tags", **{"if-modified-since": unreadable}).status_code == 200, unreadable


def test_a_state_seen_after_the_clock_was_set_back_is_dated_after_every_date_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A date sent is a promise: a later state dated by the clock set back an hour would
    be "not modified since" to every client holding the earlier one."""
    from cachedex.publish.serve import headers
    from cachedex.publish.serve.headers import StateDates

    clock = [2_000_000.5]
    monkeypatch.setattr(headers.time, "time", lambda: clock[0])
    dates = StateDates(0)
    first = dates.of("a")
    clock[0] = first + 0.5  # (its second begun: it is sent)
    assert dates.of("a") == first
    clock[0] -= 3600
    assert dates.of("b") == first + 1


@pytest.mark.parametrize(
    ("header", "gzipped"),
    [
        ("gzip", True),
        ("x-gzip", True),  # (HTTP/1.1's old name, still taken: RFC 9110)
        ("*;q=0.5", True),
        ("gzip;q=0", False),
        ("gzip;q=junk", False),  # (a weight that is no number takes nothing)
        ("identity, *;q=0", False),
        ("", False),
    ],
)
def test_gzip_is_sent_to_those_that_take_it(header: str, gzipped: bool) -> None:
    from cachedex.publish.serve.headers import accepts_gzip

    assert accepts_gzip(header) is gzipped


def test_an_error_answer_is_never_not_modified(small_catalog: Catalog) -> None:
    """If-None-Match holds for a page there: a 404 with its own ETag is sent as it is."""
    app = create_app(small_catalog.path)
    missing = get(app, "/api/tags/nope/packages")
    assert missing.status_code == 404 and missing.headers["etag"]  # (of the catalog state it was built from)
    for validator in ("*", missing.headers["etag"]):
        again = get(app, "/api/tags/nope/packages", **{"if-none-match": validator})
        assert (again.status_code, again.json()) == (404, missing.json())
