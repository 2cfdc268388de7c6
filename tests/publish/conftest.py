"""Fixtures of the website's tests: Debian's Chromium driven by Playwright (never
``playwright install``), shared by the browser tests of this folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, Demo, StaticServer, one_worker_at_a_time

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = REPO / "test-artifacts"
TIMEOUT_MS = 15_000


#: What a browser test waits for once a page is loaded: the site's script has run. The
#: body is asked for with ``?.``: right after a click, the next page may have none yet,
#: and a wait that throws fails the test instead of waiting (a CI run met it once).
# (a function, not an expression: Playwright evaluates an expression string with eval,
# which the live server's content security policy refuses, as it should)
PAGE_READY = "() => document.body?.dataset.ready === '1'"
#: How a page's main part opens (base.html): what comes after it is the page's own.
MAIN_OPENS = '<main id="main" tabindex="-1">'


def opened(browser: Any, url: str, *, script: bool) -> tuple[Any, Any]:
    """(its context, a page) at ``url`` in a new context with the script on or off;
    with it, once the script has run. The caller closes the context."""
    context = browser.new_context(java_script_enabled=script)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    if script:
        page.wait_for_function(PAGE_READY)
    return context, page


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed (apt-get install -y chromium); scripts/test installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=TIMEOUT_MS)
        yield launched
        launched.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    """A desktop-sized page that may reach 127.0.0.1 only."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(TIMEOUT_MS)
    external: list[str] = []
    opened.on(
        "request",
        lambda r: external.append(r.url) if not r.url.startswith(("http://127.0.0.1", "about:", "data:")) else None,
    )
    yield opened
    context.close()
    assert not external, f"requests to other hosts: {external}"


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


#: Where the tests install axe-core (from the npm registry, for the tests only; the site
#: never ships it): a git-ignored folder.
AXE_HOME = ARTIFACTS / ".node"
AXE_VERSION = "4.10"


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script, installed with npm on first use."""
    import shutil
    import subprocess

    script = AXE_HOME / "node_modules" / "axe-core" / "axe.min.js"
    AXE_HOME.mkdir(parents=True, exist_ok=True)
    # Each pytest-xdist worker asks on its own: one installs while the others wait.
    with one_worker_at_a_time(AXE_HOME / ".lock"):
        if not script.exists():
            npm = shutil.which("npm")
            if npm is None:
                pytest.fail("npm is not installed: cannot install axe-core (apt-get install npm; scripts/test does)")
            done = subprocess.run(
                [npm, "install", "--prefix", str(AXE_HOME), "--no-audit", "--no-fund", f"axe-core@{AXE_VERSION}"],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert done.returncode == 0 and script.exists(), (
                f"npm install axe-core failed:\n{done.stdout}\n{done.stderr}"
            )
        return script.read_text()


@pytest.fixture(scope="module")
def served(demo_run: Demo) -> Iterator[str]:
    """The demo's static site on a plain static file server on 127.0.0.1: its URL."""
    server = StaticServer(demo_run.site)
    yield server.url
    server.close()
