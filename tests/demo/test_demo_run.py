"""``cachedex demo`` end to end through the real entry point: mirrors, catalog, outputs."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from tests.helpers import Demo, history, integrity_check


@pytest.fixture(scope="module")
def demo_copy(demo_run: Demo, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A copy: one test runs the demo again in its folder (named as a shell would split)."""
    folder = tmp_path_factory.mktemp("again") / "my demo's copy"
    shutil.copytree(demo_run.folder, folder)
    return folder, demo_run.output


def test_demo_syncs_every_tag_with_history(demo_run: Demo) -> None:
    folder, output = demo_run.folder, demo_run.output
    with Catalog(folder / "cachedex.sqlite", readonly=True) as catalog:
        stats = {s.tag: s for s in catalog.tag_stats()}
        assert set(stats) == {"develop", "develop-2026-11-08", "develop-2026-11-01", "v1.0.2"}
        assert all(s.stacks >= 8 and s.packages >= 150 for s in stats.values())
        develop = history(catalog, "develop")
        assert len(develop) == 2 and develop[1][1] > 0 and develop[1][2] > 0
        assert integrity_check(catalog) == "ok"
    assert (folder / "site/index.html").is_file() and f"python3 -m http.server -d {folder / 'site'}" in output
    assert "second sync" in output and f"cachedex --config {folder / 'cachedex.yaml'} stats" in output


def test_demo_writes_the_jekyll_tree_and_says_where(demo_run: Demo) -> None:
    folder, output = demo_run.folder, demo_run.output
    jekyll = folder / "jekyll"
    assert f"{jekyll}/_cache" in output
    pages = list((jekyll / "_cache").glob("*/*/specs.md"))
    with Catalog(folder / "cachedex.sqlite", readonly=True) as catalog:
        assert len(pages) == sum(s.packages for s in catalog.tag_stats())
    assert (jekyll / "_data/tags.yaml").is_file() and (jekyll / "_data/meta.yaml").is_file()
    # develop is a v3 mirror: its pages carry real sizes.
    assert '"size":"-"' not in (jekyll / "_cache/develop/zlib/specs.md").read_text()


def test_demo_runs_again_in_its_own_folder_only(demo_copy: tuple[Path, str], tmp_path: Path) -> None:
    folder, _ = demo_copy
    again = CliRunner().invoke(main, ["demo", str(folder)])
    assert again.exit_code == 0, again.output
    # The commands it suggests paste into a shell as they are: each path stays one word.
    suggested = [shlex.split(line) for line in again.output.splitlines() if line.startswith("  cachedex --config")]
    assert len(suggested) >= 5 and all(words[2] == str(folder / "cachedex.yaml") for words in suggested)
    assert ["diff", "develop-2026-11-08", "develop"] in [words[3:6] for words in suggested]
    serve_static = next(line for line in again.output.splitlines() if "http.server" in line)
    assert shlex.split(serve_static)[4] == str(folder / "site")
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    refused = CliRunner().invoke(main, ["demo", str(other)])
    assert refused.exit_code == 1
    assert "not made by 'cachedex demo'" in refused.output
    assert (other / "notes.txt").read_text() == "keep me" and len(list(other.iterdir())) == 1


def test_demo_writes_an_environment_whose_zlib_ng_is_newer(demo_run: Demo) -> None:
    """Its spack.lock: one spec not cached as locked (zlib-ng, a release newer than
    develop's), and everything that builds on it, which follows."""
    lock = demo_run.folder / "spack.lock"
    assert f"cachedex --config {demo_run.config} reuse {lock}" in demo_run.output
    result = CliRunner().invoke(main, ["--config", str(demo_run.config), "reuse", str(lock), "--json"])
    assert result.exit_code == 0, result.output
    best = json.loads(result.stdout)["tags"][0]
    assert best["tag"] == "develop"
    causes = [m for m in best["missing"] if not m["follows"]]
    assert [(m["name"], [d["what"] for d in m["nearest"]["differences"]]) for m in causes] == [("zlib-ng", ["version"])]
    assert {m["name"] for m in best["missing"] if m["follows"]} >= {"hdf5", "py-numpy"}


def test_demo_shows_a_folder_with_control_characters_as_escapes(tmp_path: Path) -> None:
    """Its report names the folder a dozen times: one named with escape sequences
    cleared the screen and retitled the terminal."""
    folder = tmp_path / "demo\x1b[2J\x1b]0;evil\x07"
    result = CliRunner().invoke(main, ["demo", str(folder)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert result.output.count("demo\\x1b[2J\\x1b]0;evil\\x07") >= 8 and (folder / "site/index.html").is_file()
    # Its commands to paste still name the folder: in bash's $'...' quoting (in plain
    # quotes, the escape shown would be pasted as two characters)
    line = next(line for line in result.output.splitlines() if "http.server" in line)
    word = line.split(" -d ", 1)[1].rsplit(" 8001", 1)[0]
    said = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout
    assert said == os.fsencode(folder / "site"), (word, said)
