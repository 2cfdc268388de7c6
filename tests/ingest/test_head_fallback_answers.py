"""A first-byte GET's answers that carry a body past its one byte: an error status the
request takes as an answer (an empty file's 416, a registry's 401) is that answer, not
"too big"; and an HTTP mirror's size of a missing file behind a soft 404 is None.
Served by a real nginx."""

from __future__ import annotations

from pathlib import Path

from cachedex.config import HttpOptions
from cachedex.ingest import head_fallback
from cachedex.ingest.http import HttpClient
from cachedex.ingest.http_requests import Request
from cachedex.ingest.sources import HttpSource
from cachedex.ingest.verify_io import sizes
from tests.servers import Nginx

#: A body of some length, as S3 sends with a 416 and a registry with a 401.
ERROR_BODY = '<?xml version="1.0"?><Error><Code>InvalidRange</Code><Message>not satisfiable</Message></Error>'

#: nginx refusing HEAD under /m/, answering empty.spack as S3 answers a range of an empty
#: object (416, its size in Content-Range, a body), and /auth with a 401 and a body.
SERVER = (
    "location /m/ { if ($request_method = HEAD) { return 405; } }\n"
    "location = /m/empty.spack { if ($request_method = HEAD) { return 405; }\n"
    '  add_header Content-Range "bytes */0" always; return 416 \'' + ERROR_BODY + "'; }\n"
    "location = /m/empty-html.spack { if ($request_method = HEAD) { return 405; }\n"
    '  add_header Content-Range "bytes */0" always; return 416; }\n'  # (nginx's own HTML page)
    "location = /auth { return 401 '" + ERROR_BODY + "'; }\n"
    "location /soft/ { types { text/html html; } if ($request_method = HEAD) { return 405; }\n"
    "  try_files $uri /soft/404.html; }\n"
)


def _served(tmp_path: Path) -> Path:
    www = tmp_path / "www"
    (www / "m").mkdir(parents=True)
    (www / "m/one.spack").write_bytes(b"\x1f" + bytes(4095))
    (www / "soft").mkdir()
    (www / "soft/one.spack").write_bytes(b"\x1f" + bytes(99))
    (www / "soft/404.html").write_text("<!DOCTYPE html><html><body>Not found</body></html>\n" * 10)
    return www


def test_an_error_status_a_request_takes_is_its_answer_whatever_its_body(tmp_path: Path) -> None:
    """A 401 (a registry's, in JSON) to a request that takes 401 and reads one byte was
    "larger than 1 bytes": the registry's session never saw its challenge."""
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        response = client.request(Request(f"{nginx.url}/auth", limit=1, ok=(200, 401)))
        assert response.status == 401


def test_an_empty_binary_of_a_server_refusing_head_has_size_0(tmp_path: Path) -> None:
    """S3 answers a range of an empty object 416 with a body: its size is 0, not an
    error, and the server is not taken for one that ignores Range."""
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        source = HttpSource(f"{nginx.url}/m", client)
        asked = [("empty", "empty.spack"), ("html", "empty-html.spack"), ("one", "one.spack")]
        assert dict(sizes(source, asked)) == {"empty": 0, "html": 0, "one": 4096}  # (a 416's page: no soft 404)
        other = HttpSource(f"{nginx.url}/m", client)
        assert other.size("empty.spack") == 0
        assert other.size("one.spack") == 4096
        assert other not in head_fallback._range_ignored


def test_a_missing_file_behind_a_soft_404_has_no_size(tmp_path: Path) -> None:
    """A host refusing HEAD and answering a missing path with its HTML page (206 of it,
    as Range is honoured) gave the page's size as the file's: verify then missed a v2
    mirror's missing ``index.json.hash``."""
    with Nginx(_served(tmp_path), extra=SERVER) as nginx, HttpClient(HttpOptions(retries=0)) as client:
        source = HttpSource(f"{nginx.url}/soft", client)
        assert source.size("gone.spack") is None
        assert source.size("one.spack") == 100
