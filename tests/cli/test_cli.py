"""The command line through its real entry point: exit codes, messages, tables, JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from tests.helpers import Demo


def _config(tmp_path: Path, mirrors: Path, *extra_tags: str) -> Path:
    path = tmp_path / "cachedex.yaml"
    path.write_text(
        "tags:\n"
        f"  - name: develop\n    url: {mirrors / 'v2_layout/unsigned'}\n"
        f"    stacks:\n      e4s: {mirrors / 'v2_layout/signed'}\n" + "".join(extra_tags)
    )
    return path


def test_sync_then_stats(mirrors: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, mirrors)
    runner = CliRunner()
    result = runner.invoke(main, ["--config", str(config), "sync"])
    assert result.exit_code == 0, result.output
    assert "develop" in result.output and "records" in result.output
    result = runner.invoke(main, ["--config", str(config), "stats", "--json"])
    assert result.exit_code == 0, result.output
    (stats,) = json.loads(result.stdout)
    assert (stats["tag"], stats["records"], stats["specs"], stats["packages"], stats["stacks"]) == (
        "develop",
        7,
        6,
        4,
        1,
    )
    # A first sync compares with nothing, and a v2 mirror's sizes are unknown: null, not 0.
    assert (stats["last_sync_first"], stats["last_sync_added"], stats["last_sync_removed"]) == (True, None, None)
    assert (stats["size_bytes"], stats["specs_with_size"]) == (None, 0)
    result = runner.invoke(main, ["--config", str(config), "stats"], env={"COLUMNS": "160"})
    (row,) = [line for line in result.output.splitlines() if "develop" in line]
    assert row.split("│")[8].strip() == "first sync", row
    assert runner.invoke(main, ["--config", str(config), "sync"]).exit_code == 0
    (stats,) = json.loads(runner.invoke(main, ["--config", str(config), "stats", "--json"]).stdout)
    assert (stats["last_sync_first"], stats["last_sync_added"], stats["last_sync_removed"]) == (False, 0, 0)
    result = runner.invoke(main, ["--config", str(config), "stats"], env={"COLUMNS": "160"})
    (row,) = [line for line in result.output.splitlines() if "develop" in line]
    assert row.split("│")[8].strip() == "+0 -0", row


def test_stats_says_of_how_many_specs_a_size_total_is(mirrors: Path, tmp_path: Path) -> None:
    """A v2 mirror's sizes are unknown until asked for; one recorded: "(1 of 6 known)"."""
    config = _config(tmp_path, mirrors)
    runner = CliRunner()
    assert runner.invoke(main, ["--config", str(config), "sync"]).exit_code == 0

    def size_cell() -> str:
        result = runner.invoke(main, ["--config", str(config), "stats"], env={"COLUMNS": "160"})
        (row,) = [line for line in result.output.splitlines() if "develop" in line]
        assert row.split("│")[7].strip().endswith(" UTC"), row  # (the last sync, as diffs say it)
        return row.split("│")[6].strip()

    assert size_cell() == "unknown"
    with Catalog(tmp_path / "cachedex.sqlite") as catalog:
        listed = [h for h, is_listed in catalog.members_of("develop", "root").items() if is_listed]
        assert catalog.record_sizes({catalog.spec_ids(listed[:1])[listed[0]]: 2_500_000}) == 1
    assert size_cell() == "2.5 MB (1 of 6 known)"


def test_sync_table_says_first_sync_instead_of_counting_from_nothing(mirrors: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, mirrors)
    runner = CliRunner()
    first = runner.invoke(main, ["--config", str(config), "sync"], env={"COLUMNS": "160"})
    assert first.exit_code == 0, first.output
    (row,) = [line for line in first.output.splitlines() if "develop" in line]
    assert "develop (first sync)" in row and "+0" not in row and "-0" not in row, row
    again = runner.invoke(main, ["--config", str(config), "sync"], env={"COLUMNS": "160"})
    (row,) = [line for line in again.output.splitlines() if "develop" in line]
    assert "develop (unchanged)" in row and "+0" in row and "-0" in row, row


def test_failed_tag_exits_1_with_a_summary(mirrors: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, mirrors, f"  - name: future\n    url: {mirrors / 'future_layout'}\n")
    result = CliRunner().invoke(main, ["--config", str(config), "sync"])
    assert result.exit_code == 1
    assert "error: future: " in result.output and "layout version 10 is newer" in result.output
    assert "1 of 2 tags failed; they keep their previous content." in result.output
    assert "Traceback" not in result.output


def test_config_errors_are_one_line_and_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("tags:\n  - name: a/b\n    url: ./x\n")
    result = CliRunner().invoke(main, ["--config", str(bad), "sync"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: {bad}: 'tags[0].name': 'a/b' must not contain '/' or '\\' (it becomes a folder name)"
    ]


def test_stats_before_any_sync(mirrors: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--config", str(_config(tmp_path, mirrors)), "stats"])
    assert result.exit_code == 1
    assert "no catalog here yet; run 'cachedex sync' first" in result.output


def test_usage_errors_exit_2() -> None:
    result = CliRunner().invoke(main, ["sync", "--no-such-flag"])
    assert result.exit_code == 2
    # options that cannot go together, or an option's value that is no date: before any catalog is read
    stack = CliRunner().invoke(main, ["search", "zlib", "--stack", "e4s"])
    assert stack.exit_code == 2 and "--stack needs --tag" in stack.output
    for nothing in ("", "/", " "):
        shown = CliRunner().invoke(main, ["show", nothing])
        assert shown.exit_code == 2 and "give a spec's hash (or its first characters) or a package name" in shown.output
    since = CliRunner().invoke(main, ["diff", "develop", "--since", "2026-13-01"])
    assert since.exit_code == 2 and "Invalid value for '--since': since must be a date like" in since.output


def test_every_command_has_help() -> None:
    runner = CliRunner()
    for command in ([], ["sync"], ["stats"], ["demo"], ["jekyll"]):
        result = runner.invoke(main, [*command, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, command


@pytest.mark.parametrize("command", ["sync", "verify"])
def test_unknown_tag_is_wrong_usage_and_makes_no_catalog(mirrors: Path, tmp_path: Path, command: str) -> None:
    """As 'cachedex forget' says it: exit code 2, and a typo leaves no empty catalog behind."""
    result = CliRunner().invoke(main, ["--config", str(_config(tmp_path, mirrors)), command, "develop", "nope"])
    assert result.exit_code == 2, result.output
    assert "unknown tag 'nope' (configured: develop)" in result.output
    assert not (tmp_path / "cachedex.sqlite").exists()


def test_verify_before_a_first_sync_says_when_its_result_is_shown(mirrors: Path, tmp_path: Path) -> None:
    """The site and the API show a tag's verification beside its listing: before the tag's
    first sync, the command says so rather than leaving it to be looked for."""
    config = str(_config(tmp_path, mirrors))
    before = CliRunner().invoke(main, ["--config", config, "verify", "develop"])
    assert "develop: kept; the site and the API show it once the tag is synced" in before.output, before.output
    assert CliRunner().invoke(main, ["--config", config, "sync"]).exit_code == 0
    after = CliRunner().invoke(main, ["--config", config, "verify", "develop"])
    assert "verified 2 mirrors" in after.output and "once the tag is synced" not in after.output, after.output


def test_console_script_and_env_config(mirrors: Path, tmp_path: Path) -> None:
    """The installed entry point, configured through $CACHEDEX_CONFIG."""
    env = {**os.environ, "CACHEDEX_CONFIG": str(_config(tmp_path, mirrors))}
    done = subprocess.run(
        [sys.executable, "-c", "from cachedex.cli import main; main()", "sync"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cachedex.sqlite").exists()


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--debug", "--config", str(tmp_path / "none.yaml"), "sync"])
    assert result.exit_code == 1
    assert result.exception is not None and "no config file here" in str(result.exception)


def test_a_reader_that_stops_reading_ends_the_command_quietly(demo_run: Demo) -> None:
    """``cachedex show hdf5 | head -1``: answered as far as it was read, exit 0 and no
    message (rich's own handling exited 1, the code of an error, without one); output
    that cannot be written at all is an error in one line."""
    cli = [sys.executable, "-c", "from cachedex.cli import main; main()", "--config", str(demo_run.config)]
    for args in (
        ["show", "hdf5"],
        ["reuse", str(demo_run.folder / "spack.lock"), "--all"],
        ["search", "", "-n", "1000"],
    ):
        process = subprocess.Popen([*cli, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # as head does once it has its line
        errors = process.stderr.read()
        process.stderr.close()
        assert process.wait(timeout=60) == 0 and errors == b"", (args, errors)
    with open("/dev/full", "wb") as full:
        done = subprocess.run([*cli, "show", "hdf5"], stdout=full, stderr=subprocess.PIPE, timeout=60, check=False)
    assert done.returncode == 1 and done.stderr.decode().splitlines() == ["error: No space left on device"]
