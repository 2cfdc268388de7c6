"""A mirror of views only moved to another URL, found unguarded by a mutation hunt: what
its old rows said of signing must not carry over to a mirror that says nothing; nor
may a root of views be said unsigned while one of its views could not be told."""

from __future__ import annotations

import shutil
from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.ingest.manifests import spec_manifest_path
from cachedex.ingest.sync import sync
from cachedex.values import ROOT_STACK
from tests.helpers import fixture_index, make_config, write_v3_mirror, write_v3_view


def _views_only(root: Path, mirrors: Path) -> None:
    """A signed v3 mirror of views only: one view listing every spec."""
    write_v3_mirror(root, fixture_index(mirrors), signed=True)
    shutil.rmtree(root / "v3/manifests/index")
    write_v3_view(root, "one", fixture_index(mirrors))


def test_a_mirror_of_views_only_moved_where_signing_cannot_be_told_is_not_said_signed(
    mirrors: Path, tmp_path: Path
) -> None:
    """Moved (its URL edited) to a copy whose spec manifests are gone, neither its root nor
    its view can be told signed: both must say "not known", not the old URL's "signed"
    (which would keep `verify` from asking for --unsigned)."""
    _views_only(tmp_path / "old", mirrors)
    shutil.copytree(tmp_path / "old", tmp_path / "new")
    shutil.rmtree(tmp_path / "new/v3/manifests/spec")  # nothing tells whether it signs
    before, after = (
        make_config(tmp_path, [{"name": "t", "url": str(tmp_path / m), "views": ["one"]}]) for m in ("old", "new")
    )
    with Catalog(before.catalog) as catalog:
        (first,) = sync(before, catalog)
        assert first.ok, first.error
        signed = {s: catalog.mirror_state("t", s).signed for s in (ROOT_STACK, "one")}  # type: ignore[union-attr]
        assert signed == {ROOT_STACK: True, "one": True}
        (moved,) = sync(after, catalog)
        assert moved.ok, moved.error
        root, view = catalog.mirror_state("t", ROOT_STACK), catalog.mirror_state("t", "one")
    assert root is not None and view is not None
    assert root.url == str(tmp_path / "new") and not root.own_index
    assert (root.signed, view.signed) == (None, None)


def test_a_root_of_views_is_not_said_unsigned_while_a_view_could_not_be_told(
    http_server, mirrors: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """One view plain, the other's manifests answering 500 (a passing failure): that view
    may be the one that signs, so the root is not known, not "unsigned" (which `verify`
    would take as needing --unsigned)."""
    root = http_server.state.root / "m"
    index = fixture_index(mirrors)
    installs = index["database"]["installs"]  # type: ignore[index]
    listed = [h for h, record in installs.items() if record["in_buildcache"]]
    write_v3_mirror(root, index)  # plain manifests
    shutil.rmtree(root / "v3/manifests/index")

    def view(keep: list[str]) -> dict[str, object]:
        subset = fixture_index(mirrors)
        for dag_hash, record in subset["database"]["installs"].items():  # type: ignore[union-attr]
            record["in_buildcache"] = record["in_buildcache"] and dag_hash in keep
        return subset

    plain, failing = listed[:2], listed[2:]
    write_v3_view(root, "one", view(plain))
    write_v3_view(root, "two", view(failing))
    for dag_hash in failing:
        spec = installs[dag_hash]["spec"]
        http_server.state.faults[f"/m/{spec_manifest_path(spec['name'], spec['version'], dag_hash)}"] = "500"
    config = make_config(tmp_path, [{"name": "t", "url": f"{http_server.url}/m", "views": ["one", "two"]}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        states = {s: catalog.mirror_state("t", s) for s in (ROOT_STACK, "one", "two")}
        unsigned = catalog.unsigned_mirrors()
    assert {s: state.signed for s, state in states.items() if state is not None} == {
        ROOT_STACK: None,
        "one": False,
        "two": None,
    }
    assert ("t", ROOT_STACK) not in unsigned
