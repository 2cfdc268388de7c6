"""Deploying a site as users do: the files a build writes can be read by the web server's
own user (nginx's workers), under any umask, and after a later build rewrote some."""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from cachedex.catalog import Catalog
from cachedex.publish.export import PACKAGES_FILE, SPECS_FILE, export_spack_cache
from cachedex.publish.site import write_site
from tests.helpers import record, write_tag
from tests.servers import free_port, wait_for_port

#: The user nginx's workers run as when its master runs as root (Debian's ``www-data``
#: is the same kind of user: not the one who built the site).
NOBODY = "nobody nogroup"

COMMON = {"os": "rhel8", "target": "x86_64", "compiler": "gcc@13.1.0", "node": b'{"name": "x"}'}


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder another user can enter (tmp_path is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="cachedex-deploy-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@contextmanager
def nginx_as_nobody(root: Path, workdir: Path) -> Iterator[str]:
    """Debian's nginx, stock ``mime.types`` and ``gzip_static``, its workers running as
    ``nobody`` (the master as root): the way a server reads a site it did not build."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(binary):
        pytest.fail("nginx is not installed (Debian package nginx-light; scripts/test installs it)")
    port = free_port()
    workdir.mkdir()
    log = workdir / "error.log"
    (workdir / "nginx.conf").write_text(
        f"""
user {NOBODY};
daemon off;
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {log} warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {workdir}/body;
    proxy_temp_path {workdir}/proxy;
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        gzip_static on;
    }}
}}
"""
    )
    with log.open("wb") as stream:
        process = subprocess.Popen([binary, "-c", str(workdir / "nginx.conf"), "-p", str(workdir)], stderr=stream)
    try:
        wait_for_port(port, process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def served_files(site: Path) -> list[str]:
    """Every file a visitor can ask for (the hidden ones are the build's own)."""
    return sorted(
        str(path.relative_to(site))
        for path in site.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(site).parts)
    )


def readable_by_all(folder: Path) -> None:
    """``chmod -R a+rX``: what a user whose umask is 077 runs once to publish a folder."""
    for path in [folder, *folder.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        path.chmod(mode | 0o444 | (0o111 if path.is_dir() else 0))


@pytest.mark.skipif(os.geteuid() != 0, reason="nginx switches its workers to another user only as root")
def test_pages_a_later_build_rewrites_stay_readable_by_the_web_servers_user(shared_folder: Path) -> None:
    site = shared_folder / "site"
    zlib = record("a" * 32, "zlib", version="1.3.1", variants=(), **COMMON)
    hdf5 = record("b" * 32, "hdf5", version="1.14.3", variants=(), **COMMON)
    with Catalog(shared_folder / "c.sqlite") as catalog:
        write_tag(catalog, "t", [zlib, hdf5])
        with umask(0o077):  # a cron job's, or a hardened account's
            write_site(catalog, site, workers=1)
        readable_by_all(site)
        # A nightly sync: hdf5 left the tag. The build rewrites the pages that listed it
        # (and makes no new file, which would follow the umask: 0600, as cp's would).
        write_tag(catalog, "t", [], members={zlib.hash: True}, checksum="y")
        with umask(0o077):
            report = write_site(catalog, site, workers=1)
    assert report.written > 0
    files = served_files(site)
    assert "tags/t/index.json" in files and "tags/t/packages/hdf5/index.html" not in files
    with nginx_as_nobody(site, shared_folder / "nginx") as url, httpx.Client(base_url=url) as client:
        refused = [
            (name, answer.status_code) for name in files if (answer := client.get("/" + name)).status_code != 200
        ]
        assert refused == []
        # The gzipped twin nginx sends in the page's place is the same data.
        twin = client.get("/tags/t/index.json", headers={"Accept-Encoding": "gzip"})
        assert twin.headers["content-encoding"] == "gzip"
        assert twin.headers["content-type"] == "application/json"
        assert twin.content == (site / "tags/t/index.json").read_bytes()


def test_a_rewritten_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    site = tmp_path / "site"
    zlib = record("a" * 32, "zlib", version="1.3.1", variants=(), **COMMON)
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [zlib])
        with umask(0o022):  # as cp: a new file gets 0644 & ~umask, never mkstemp's 0600
            write_site(catalog, site, workers=1)
        modes = {name: stat.S_IMODE((site / name).stat().st_mode) for name in served_files(site)}
        assert set(modes.values()) == {0o644}
        (site / "index.html").chmod(0o664)  # a group of editors may write it
        write_tag(catalog, "t", [record("c" * 32, "zlib", version="1.3.2", variants=(), **COMMON)], checksum="y")
        with umask(0o077):
            report = write_site(catalog, site, workers=1)
    assert report.written > 0
    after = {name: stat.S_IMODE((site / name).stat().st_mode) for name in served_files(site)}
    changed = {name for name in after if name in modes and after[name] != modes[name]}
    assert changed == {"index.html"} and after["index.html"] == 0o664
    # Files the build made anew (the new spec's page) follow this run's umask.
    new = set(after) - set(modes)
    assert new and {after[name] for name in new} == {0o600}


def test_an_export_rewritten_under_another_umask_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "api"
    with Catalog(tmp_path / "c.sqlite") as catalog:
        # (a stack's mirror: the export leaves the root out)
        write_tag(catalog, "t", [record("a" * 32, "zlib", variants=(), **COMMON)], stack="e4s")
        with umask(0o022):
            export_spack_cache(catalog, out)
        newer = record("c" * 32, "zlib", version="1.3.2", variants=(), **COMMON)
        write_tag(catalog, "t", [newer], stack="e4s", checksum="y")
        with umask(0o077):
            report = export_spack_cache(catalog, out)
    assert sorted(report.written) == [PACKAGES_FILE, SPECS_FILE]
    assert b'"1.3.2"' in gzip.decompress((out / SPECS_FILE).read_bytes())
    assert {stat.S_IMODE((out / name).stat().st_mode) for name in (PACKAGES_FILE, SPECS_FILE)} == {0o644}
