"""A site's spec pages, built from one graph of the whole catalog, against the server's,
which reads each page apart: the labels that tell a spec's dependents apart."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.publish.serve import create_app
from cachedex.publish.site import write_site
from cachedex.values import DEPTYPE_BITS, Dependency
from tests.helpers import record, replace_mirror
from tests.publish.serve import get

BUILD, LINK = DEPTYPE_BITS["build"], DEPTYPE_BITS["link"]
GCC, CLANG, ZLIB = "g" * 32, "c" * 32, "z" * 32


def test_dependents_built_by_two_compilers_are_told_apart_by_both(tmp_path: Path) -> None:
    """Two builds of lapack@3.12.0 link zlib, both by apple-clang, one with gcc's
    gfortran beside it: zlib's page tells them apart by that, on the site as on the
    server (the site's graph named apple-clang alone for both)."""
    darwin = {"platform": "darwin", "os": "sequoia", "target": "m1"}
    clang = Dependency(CLANG, "apple-clang", BUILD, "c")
    specs = [
        record(GCC, "gcc", version="13.3.0", compiler="none", external=True, in_buildcache=False, **darwin),
        record(CLANG, "apple-clang", version="16.0.0", compiler="none", external=True, in_buildcache=False, **darwin),
        record(ZLIB, "zlib", compiler="apple-clang@16.0.0", dependencies=(clang,), **darwin),
        record(
            "a" * 32,
            "lapack",
            version="3.12.0",
            compiler="apple-clang@16.0.0",
            dependencies=(clang, Dependency(ZLIB, "zlib", LINK, "")),
            **darwin,
        ),
        record(
            "b" * 32,
            "lapack",
            version="3.12.0",
            compiler="apple-clang@16.0.0",
            dependencies=(clang, Dependency(GCC, "gcc", BUILD, "fortran"), Dependency(ZLIB, "zlib", LINK, "")),
            **darwin,
        ),
    ]
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("t") as writer:
            writer.add_specs(specs, {})
            replace_mirror(writer, "root", {s.hash: s.in_buildcache for s in specs})
        write_site(catalog, tmp_path / "site", workers=1)
    path = f"specs/{ZLIB[:2]}/{ZLIB}.html"
    page = (tmp_path / "site" / path).read_text()
    dependents = page.split('id="dependents"')[1]
    assert "+gcc@13.3.0" in dependents
    assert get(create_app(tmp_path / "c.sqlite"), "/" + path).text == page
