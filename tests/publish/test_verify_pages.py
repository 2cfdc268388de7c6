"""What ``cachedex verify`` found, on the website: each mirror's latest verification on
the mirrors page, each spec's signature status and problems on its page, in the static
site and on the live server alike. Spack's signed fixture holds three good and three
bad signatures, and no tarballs."""

from __future__ import annotations

import html
import re
from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from cachedex.ingest.verify import verify
from cachedex.publish.graph import SpecGraph
from cachedex.publish.pages import spec_page
from cachedex.publish.render import render
from cachedex.publish.site import write_site
from tests.helpers import MIRRORS, make_config
from tests.ingest.test_signatures import FIXTURE
from tests.publish.serve.test_requests import get


def _text(markup: str) -> str:
    """The text a reader sees: inline elements joined, blocks apart."""
    inline = re.sub(r"</?(?:span|code|small|strong|a)\b[^>]*>", "", markup)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def test_verification_on_the_mirrors_and_spec_pages(tmp_path: Path) -> None:
    config = make_config(tmp_path, [{"name": "t", "url": str(MIRRORS / "v2_layout/signed")}])
    status = {stem[-32:]: said for stem, (said, _) in FIXTURE.items()}
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok
        site = write_site(catalog, tmp_path / "before").outdir
        never = _text((site / "mirrors/index.html").read_text())
        assert "never (cachedex verify)" in never
        assert "Verified" not in _text((site / f"specs/{next(iter(status))[:2]}/{next(iter(status))}.html").read_text())

        verify(config, catalog)
        site = write_site(catalog, tmp_path / "site").outdir
        mirrors = _text((site / "mirrors/index.html").read_text())
        assert "9 problems; 6 of 6 manifests, 0 binaries; signatures: 3 good, 3 bad" in mirrors
        assert mirrors.count("tarball-missing") + mirrors.count("signature-bad") == 5  # the first five
        assert "and 4 more: cachedex verify t" in mirrors

        graph = SpecGraph(catalog)
        for dag_hash, said in status.items():
            page = spec_page(catalog, dag_hash)
            assert graph.page(graph.ids[dag_hash], page.node) == page  # the site's and the server's pages agree
            (found,) = page.verifications
            assert found.signature == said
            text = _text((site / f"specs/{dag_hash[:2]}/{dag_hash}.html").read_text())
            shown = "bad signature" if said == "bad" else "signed"
            assert "Verified t / root, " in text and f": {shown}" in text
            kinds = sorted(p.kind for p in found.problems)
            assert kinds == (["signature-bad", "tarball-missing"] if said == "bad" else ["tarball-missing"])
            assert f"{len(kinds)} problem{'s' if len(kinds) > 1 else ''}" in text
            assert all(f"{kind} " in text for kind in kinds)

    app_page = get_mirrors(config.catalog)
    assert "3 bad" in app_page and "9 problems" in app_page


def get_mirrors(catalog: Path) -> str:
    from cachedex.publish.serve import create_app

    answer = get(create_app(catalog), "/mirrors/index.html")
    assert answer.status_code == 200
    return _text(answer.text)


def test_problems_are_escaped_where_they_are_shown(tmp_path: Path) -> None:
    """A problem's URL and message come from the mirror: shown as text, never as markup."""
    from cachedex.catalog.verifications import MirrorVerification, Problem, SignatureCounts
    from cachedex.publish.pages import mirrors_page

    config = make_config(tmp_path, [{"name": "t", "url": str(MIRRORS / "v2_layout/signed")}])
    hostile = "<img src=x onerror=alert(1)>"
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        (mirror,) = catalog.mirrors()
        result = MirrorVerification(
            "t", "root", mirror.url, None, 2, 1.0, 2.0, False, ("index",), (), 6, 6, 0, "unsigned",
            (), SignatureCounts(), (Problem("index-unreadable", mirror.url + "/" + hostile, hostile),), 1,
        )  # fmt: skip
        catalog.store_verification(result, [], "")
        markup = render(mirrors_page(catalog))
    assert hostile not in markup and html.escape(hostile) in markup
