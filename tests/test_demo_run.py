"""``cachedex demo`` end to end through the real entry point: mirrors, catalog, outputs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("demo") / "cachedex-demo"
    result = CliRunner().invoke(main, ["demo", str(folder)])
    assert result.exit_code == 0, result.output
    return folder, result.output


def test_demo_syncs_every_tag_with_history(demo_run: tuple[Path, str]) -> None:
    folder, output = demo_run
    with Catalog(folder / "cachedex.sqlite", readonly=True) as catalog:
        stats = {s.tag: s for s in catalog.tag_stats()}
        assert set(stats) == {"develop", "develop-2026-11-08", "develop-2026-11-01", "v1.0.2"}
        assert all(s.stacks >= 8 and s.packages >= 150 for s in stats.values())
        develop = catalog.history("develop")
        assert len(develop) == 2 and develop[1][1] > 0 and develop[1][2] > 0
        assert catalog.integrity_check() == "ok"
    assert "second sync" in output and f"cachedex --config {folder / 'cachedex.yaml'} stats" in output


def test_demo_writes_the_jekyll_tree_and_says_where(demo_run: tuple[Path, str]) -> None:
    folder, output = demo_run
    jekyll = folder / "jekyll"
    assert f"{jekyll}/_cache" in output
    pages = list((jekyll / "_cache").glob("*/*/specs.md"))
    with Catalog(folder / "cachedex.sqlite", readonly=True) as catalog:
        assert len(pages) == sum(s.packages for s in catalog.tag_stats())
    assert (jekyll / "_data/tags.yaml").is_file() and (jekyll / "_data/meta.yaml").is_file()
    # develop is a v3 mirror: its pages carry real sizes.
    assert '"size":"-"' not in (jekyll / "_cache/develop/zlib/specs.md").read_text()


def test_demo_runs_again_in_its_own_folder_only(demo_run: tuple[Path, str], tmp_path: Path) -> None:
    folder, _ = demo_run
    again = CliRunner().invoke(main, ["demo", str(folder)])
    assert again.exit_code == 0, again.output
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    refused = CliRunner().invoke(main, ["demo", str(other)])
    assert refused.exit_code == 1
    assert "not made by 'cachedex demo'" in refused.output
    assert (other / "notes.txt").read_text() == "keep me" and len(list(other.iterdir())) == 1
