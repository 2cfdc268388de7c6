"""The catalog's state token changes with everything pages show: a sync, a verification,
and sizes, which a sync records in batches after committing its listing. The server's
response cache and ETags, and a site build's consistency check, are keyed on it."""

from __future__ import annotations

import time
from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.publish.serve import create_app
from tests.helpers import _db, record, write_tag
from tests.publish.serve import get


def test_sizes_recorded_after_a_sync_change_the_token_and_what_the_server_answers(tmp_path: Path) -> None:
    path, dag_hash = tmp_path / "c.sqlite", "a" * 32
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [record(dag_hash)])
        before = catalog.state_token()[0]
        app = create_app(path)
        first = get(app, f"/api/specs/{dag_hash}")
        assert first.json()["spec"]["size"] is None
        (spec_id,) = _db(catalog).execute("SELECT id FROM specs WHERE hash = ?", (dag_hash,)).fetchone()
        assert catalog.record_sizes({spec_id: 1234}) == 1
        assert catalog.state_token()[0] != before
        again = get(app, f"/api/specs/{dag_hash}", **{"If-None-Match": first.headers["etag"]})
        assert again.status_code == 200 and again.json()["spec"]["size"] == 1234
        assert again.headers["etag"] != first.headers["etag"]


def test_a_read_only_catalog_reads_its_token_again_only_after_another_connection_commits(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Catalog(path) as writer:
        write_tag(writer, "t", [record("a" * 32)])
        with Catalog(path, readonly=True) as reader:
            statements: list[str] = []
            _db(reader).set_trace_callback(statements.append)
            first = reader.state_token()
            assert reader.state_token() == first and reader.state_token() == first
            assert sum("FROM syncs" in s for s in statements) == 1  # read once, then kept
            write_tag(writer, "u", [record("b" * 32)])
            second = reader.state_token()
            assert second != first and sum("FROM syncs" in s for s in statements) == 2
            (spec_id,) = _db(writer).execute("SELECT id FROM specs WHERE hash = ?", ("b" * 32,)).fetchone()
            assert writer.record_sizes({spec_id: 1}) == 1
            assert reader.state_token() != second  # any commit elsewhere, sizes too
            assert writer.state_token() == reader.state_token()  # (a writer reads it every time)


def test_a_gc_that_forgot_only_history_changes_the_token_and_one_that_forgot_nothing_does_not(tmp_path: Path) -> None:
    """Change pages show the history a ``gc --history-before`` forgets, held specs kept."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        write_tag(catalog, "t", [record("a" * 32)])
        write_tag(catalog, "t", [record("b" * 32, "cmake")], members={"a" * 32: True, "b" * 32: True}, checksum="2")
        before = catalog.state_token()[0]
        assert catalog.collect_garbage(vacuum=False) == (0, 0)
        assert catalog.state_token()[0] == before
        specs, changes = catalog.collect_garbage(history_before=time.time() + 60, vacuum=False)
        assert (specs, changes) == (0, 1)  # (a first sync records no change)
        assert catalog.state_token()[0] != before
