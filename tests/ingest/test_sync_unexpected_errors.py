"""A bug met while one tag is written: that tag's write is rolled back, the error names
the tag and says it is a bug, and the tags after it still sync."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog, TagWriter
from cachedex.cli import main
from cachedex.ingest.sync import MirrorRead, _TagSync
from tests.helpers import fixture_index, listed_in, listed_specs, spec_row, write_v2_mirror


def test_an_unexpected_error_in_one_tag_rolls_it_back_and_the_next_tag_still_syncs(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # t gains a spec no tag held (its write, rolled back, must leave no trace of it);
    # u gains one it lacked, which its sync after t's failure must bring.
    only_t_adds, u_gains = sorted(listed_in(fixture_index(mirrors)))[-2:]
    write_v2_mirror(tmp_path / "t", fixture_index(mirrors, drop=(only_t_adds,)))
    write_v2_mirror(tmp_path / "u", fixture_index(mirrors, drop=(only_t_adds, u_gains)))
    config = tmp_path / "cachedex.yaml"
    config.write_text(
        json.dumps({"catalog": "c.sqlite", "tags": [{"name": "t", "url": "t"}, {"name": "u", "url": "u"}]})
    )
    assert CliRunner().invoke(main, ["--config", str(config), "sync"]).exit_code == 0
    with Catalog(tmp_path / "c.sqlite") as catalog:
        t_before = listed_specs(catalog, "t")
        assert u_gains not in {spec.hash for spec in listed_specs(catalog, "u")}
    # t's write fails after its new spec is written into the transaction (members are
    # written last).
    write_v2_mirror(tmp_path / "t", fixture_index(mirrors))
    write_v2_mirror(tmp_path / "u", fixture_index(mirrors, drop=(only_t_adds,)))
    write_members = _TagSync._write_members

    def members_of_u_only(writer: TagWriter, reads: list[MirrorRead], fetched_at: float) -> list[str]:
        if writer.tag == "t":
            raise RuntimeError("members lost")
        return write_members(writer, reads, fetched_at)

    monkeypatch.setattr(_TagSync, "_write_members", staticmethod(members_of_u_only))
    result = CliRunner().invoke(main, ["--config", str(config), "sync"])
    assert result.exit_code == 1
    assert "t: unexpected RuntimeError: members lost (a bug in cachedex; --debug shows where)" in result.stderr
    assert "Traceback" not in result.output and "1 of 2 tags failed" in result.stderr
    with Catalog(tmp_path / "c.sqlite") as catalog:
        assert listed_specs(catalog, "t") == t_before
        assert spec_row(catalog, only_t_adds) is None  # its new spec went with the rollback
        assert u_gains in {spec.hash for spec in listed_specs(catalog, "u")}
    # With --debug the bug is not caught: its traceback is what --debug is for.
    debug = CliRunner().invoke(main, ["--config", str(config), "--debug", "sync"])
    assert isinstance(debug.exception, RuntimeError)
