"""Static hosting as people do it: the site under a sub-path (a GitHub Pages project
site, ``https://user.github.io/project/``) served by a real static server (Debian's
nginx on 127.0.0.1) that answers unknown URLs with the site's 404 page, as GitHub Pages
does, and that serves the gzipped twins the tag pages read."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Demo
from tests.publish.conftest import PAGE_READY
from tests.servers import Nginx

pytestmark = pytest.mark.browser

PREFIX = "/project/"


@pytest.fixture(scope="module")
def www(demo_run: Demo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    www = tmp_path_factory.mktemp("www")
    os.symlink(demo_run.site, www / PREFIX.strip("/"))
    return www


@pytest.fixture(scope="module")
def project_site(www: Path) -> Iterator[str]:
    extra = f"""
        disable_symlinks off;
        include /etc/nginx/mime.types;
        location / {{ error_page 404 {PREFIX}404.html; }}
    """
    with Nginx(www, extra=extra) as server:
        yield server.url + PREFIX


def test_every_page_kind_works_under_a_sub_path(page: Any, project_site: str, demo_run: Demo) -> None:
    page.goto(project_site + "index.html")
    page.click("text=develop")
    page.wait_for_url(f"**{PREFIX}tags/develop/index.html")
    page.wait_for_function(PAGE_READY)
    assert page.locator("#rows tbody tr").count() > 0  # the tag's data came, from under the prefix
    page.locator("#rows tbody tr td.name a").first.click()
    page.wait_for_url(f"**{PREFIX}tags/develop/packages/*/index.html")
    page.locator("#rows tbody tr td.hash a").first.click()
    page.wait_for_selector("#hash")
    assert PREFIX + "specs/" in page.url
    page.click("header.top nav >> text=Mirrors")
    page.wait_for_url(f"**{PREFIX}mirrors/index.html")
    page.click("header.top .brand")
    page.wait_for_url(f"**{PREFIX}index.html")


def test_the_404_page_is_styled_and_leads_back_to_the_top_of_the_sub_path(page: Any, project_site: str) -> None:
    answer = page.goto(project_site + "tags/develop/packages/no-such-package/index.html")
    assert answer.status == 404
    assert page.inner_text("h1") == "Not found"
    # Its style is inline (no stylesheet URL could hold at every depth).
    assert page.evaluate("getComputedStyle(document.querySelector('header.top')).display") == "flex"
    # Its links find the top of the site, not the top of the host.
    page.wait_for_function(f"document.querySelector('header.top .brand').href.startsWith('{project_site}')")
    page.click("header.top .brand")
    page.wait_for_url(f"**{PREFIX}index.html")
    assert page.locator("text=develop").count() > 0


def test_the_404_page_never_leads_to_another_host(page: Any, project_site: str, www: Path) -> None:
    """A path that starts with // names another host to a browser: the 404 page at
    //other/project/tags/x must not find the site's top there, though that host serves
    the same site to anyone (CORS)."""
    extra = 'disable_symlinks off; add_header Access-Control-Allow-Origin "*" always;'
    with Nginx(www, extra=extra) as other:
        other_host = other.url.removeprefix("http:")
        here = project_site.removesuffix(PREFIX)
        answer = page.goto(f"{here}/{other_host}{PREFIX}tags/x/index.html")
        assert answer.status == 404 and page.inner_text("h1") == "Not found"
        page.wait_for_timeout(1500)  # its script has looked for the top by then
        links = page.eval_on_selector_all("[data-top]", "links => links.map((a) => a.href)")
        action = page.eval_on_selector("[data-top-action]", "form => form.action")
    assert links and all(url.startswith(here + "/") for url in [*links, action]), [*links, action]
    assert not any(other.url in url for url in [*links, action])


def test_gzipped_twins_are_the_same_json(demo_run: Demo) -> None:
    twins = sorted(Path(demo_run.site).rglob("*.json.gz"))
    assert any(path.parent.name == "develop" for path in twins)  # every tag page's data
    for path in twins:
        assert gzip.decompress(path.read_bytes()) == path.with_suffix("").read_bytes(), path
