"""The command line where users run it: output to a pipe or a file, a narrow terminal, a
locale that is not UTF-8, a closed stream, a reader that stops reading (real processes)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.cli import main, present
from tests.helpers import LIBELF_CORE2, Demo, fixture_index, write_v2_mirror, write_v3_mirror

COMMAND = [sys.executable, "-m", "cachedex"]
#: A variant value longer than any line rich would give its column.
LONG = "x" * 240


@pytest.fixture
def config(mirrors: Path, tmp_path: Path) -> Path:
    """A synced tag ``a`` whose libelf has a long variant value and one beyond ASCII."""
    index = fixture_index(mirrors)
    spec = index["database"]["installs"][LIBELF_CORE2]["spec"]  # type: ignore[index]
    spec["parameters"]["note"] = LONG
    spec["parameters"]["place"] = "café"
    write_v2_mirror(tmp_path / "m", index)
    path = tmp_path / "cachedex.yaml"
    path.write_text(f"tags:\n  - name: a\n    url: {tmp_path / 'm'}\n")
    assert CliRunner().invoke(main, ["--config", str(path), "sync"]).exit_code == 0
    return path


def _run(*args: str, env: dict[str, str] | None = None, shell: str = "") -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | (env or {})
    if shell:  # a redirection the shell makes (">&-", "| head -1")
        line = " ".join(f"'{word}'" for word in (*COMMAND, *args))
        return subprocess.run(
            ["bash", "-c", f"{line} {shell}"], capture_output=True, text=True, timeout=60, env=environment
        )
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=60, env=environment)


def test_tables_piped_to_a_file_are_never_cut(config: Path) -> None:
    """rich assumed 132 columns and cut each cell it could not fit to "…": an arch, a
    version, a stack that people grep were lost. Piped, a row is as wide as it is."""
    done = _run("--config", str(config), "search", "libelf")
    assert done.returncode == 0, done.stderr
    assert f"note={LONG}" in done.stdout and "…" not in done.stdout
    assert "core2" in done.stdout
    wide = _run("--config", str(config), "search", "libelf", env={"COLUMNS": "100"})
    assert f"note={LONG}" not in wide.stdout and "…" not in wide.stdout  # folded onto lines, not cut
    assert max(map(len, wide.stdout.splitlines())) <= 100 and wide.stdout.count("x") >= len(LONG)


@pytest.fixture
def narrow() -> Iterator[None]:
    width = present.OUT.width
    present.OUT.width = 20
    try:
        yield
    finally:
        present.OUT.width = width


def test_a_terminal_too_narrow_for_a_table_lists_each_row(config: Path, narrow: None) -> None:
    """At 20 columns, stats and search printed tables of empty cells."""
    result = CliRunner().invoke(main, ["--config", str(config), "stats"])
    assert result.exit_code == 0
    assert "tag: a; records: " in result.output and "; specs: " in result.output
    result = CliRunner().invoke(main, ["--config", str(config), "search", "libelf"])
    assert "hash: " in result.output and f"note={LONG}" in result.output


def test_a_locale_that_is_not_utf8_gets_escapes_not_a_traceback(config: Path) -> None:
    """The "…" of a cut cell, or a mirror's "é", under an ASCII locale without Python's
    UTF-8 mode, ended search and diff with UnicodeEncodeError."""
    ascii_locale = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii"}
    for args in (["search", "libelf"], ["show", "libelf"], ["diff", "a", "--since", "2000-01-01"]):
        done = _run("--config", str(config), *args, env=ascii_locale)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
    assert "caf\\xe9" in _run("--config", str(config), "search", "libelf", env=ascii_locale).stdout


def test_a_closed_standard_output_is_no_traceback(config: Path) -> None:
    for args in (["--version"], ["--config", str(config), "stats"]):
        done = _run(*args, shell=">&-")
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    done = _run("--config", str(config), "reuse", "-", shell="<&-")
    assert done.returncode == 1 and "error: <stdin>: empty" in done.stderr and "Traceback" not in done.stderr


def test_coverage_read_by_head_ends_quietly(config: Path) -> None:
    """coverage lacked the commands' shared handling: a BrokenPipeError traceback."""
    # (a reader gone before the first line: a small output would fit the pipe's buffer)
    done = _run("--config", str(config), "coverage", "a", "--by", "package,arch", shell="| true; exit ${PIPESTATUS[0]}")
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_ctrl_c_stops_verify_with_130(mirrors: Path, tmp_path: Path, http_server) -> None:  # type: ignore[no-untyped-def]
    """verify said click's "Aborted!" and exited 1, the code of "problems found"."""
    write_v3_mirror(http_server.state.root, fixture_index(mirrors))
    path = tmp_path / "cachedex.yaml"
    path.write_text(json.dumps({"catalog": "cat.sqlite", "tags": [{"name": "t", "url": http_server.url}]}))
    assert _run("--config", str(path), "sync").returncode == 0
    manifest = "/v3/manifests/index/index.manifest.json"
    http_server.state.stall_seconds = 30
    http_server.state.faults[manifest] = "never"
    asked = http_server.state.count(manifest)
    verify = subprocess.Popen(
        [*COMMAND, "--config", str(path), "verify"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 20
        while http_server.state.count(manifest) <= asked and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        verify.send_signal(signal.SIGINT)
        _, err = verify.communicate(timeout=15)
    finally:
        verify.kill()
    assert verify.returncode == 130 and err.strip().splitlines()[-1] == "interrupted", err


def test_serve_on_port_0_names_the_port_it_listens_on(config: Path) -> None:
    """And its catalog, whose folder's control characters (the config's folder's) are
    shown as escapes."""
    folder = config.parent / "at\x1b]0;evil\x07"
    folder.mkdir()
    shutil.copy(config.parent / "cachedex.sqlite", folder / "cachedex.sqlite")
    (folder / "cachedex.yaml").write_text(config.read_text())
    server = subprocess.Popen(
        [*COMMAND, "--config", str(folder / "cachedex.yaml"), "serve", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith(f"Serving {config.parent}/at\\x1b]0;evil\\x07/cachedex.sqlite on "), line
        url = line.split(" on ", 1)[1].split(" ", 1)[0]
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0/"), line
        import urllib.request

        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(url + "api/tags", timeout=5) as answer:
                    assert answer.status == 200
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    finally:
        server.terminate()
        server.communicate(timeout=15)


def test_search_past_the_last_result_says_so(config: Path) -> None:
    result = CliRunner().invoke(main, ["--config", str(config), "search", "libelf", "--offset", "50"])
    assert result.exit_code == 0 and "(none from --offset 50: the last is " in result.output


def test_show_of_a_word_no_tag_lists_says_so_before_hashes(demo_run: Demo) -> None:
    """`cachedex show gcc` (an external: no tag lists it) said only that hash prefix
    'gcc' is ambiguous."""
    result = CliRunner().invoke(main, ["--config", str(demo_run.config), "show", "a"])
    assert result.exit_code == 1
    assert "no tag lists a package 'a', and as the start of a hash it is ambiguous" in result.stderr
    assert "try 'cachedex search a'" in result.stderr


def test_work_that_lasts_says_so_in_a_log_now_and_then(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Progress bars need a terminal: a CI job's log saw nothing for a 74 s site build.
    Work that lasts prints a plain line every LOG_EVERY seconds; short work nothing."""
    from cachedex.cli import progress

    monkeypatch.setattr(progress, "LOG_EVERY", 0.05)
    with progress.Reporter() as reporter:  # (stderr is pytest's capture: no terminal)
        quick = reporter.task("quick", total=10)
        quick.advance(10)
        line = reporter.task("tag/root: sizes", total=1000)
        for _ in range(4):
            time.sleep(0.06)
            line.advance(250)
        site = reporter.task("site")
        time.sleep(0.06)
        site.describe("writing spec pages")
    err = capsys.readouterr().err.splitlines()
    assert not any(line.startswith("quick") for line in err)
    assert "tag/root: sizes: 250 of 1,000 (25 %) (0 s)" in err and err[-2].startswith("tag/root: sizes: 1,000 of 1,000")
    assert err[-1].startswith("writing spec pages (")


def test_verify_read_by_head_does_not_say_no_problem(config: Path) -> None:
    """verify's exit code is its answer: a reader that stopped reading made it 0 ("no
    problem") though the check had not ended, whatever it would have found."""
    alone = _run("--config", str(config), "verify", "a")
    assert alone.returncode in (0, 1) and "Traceback" not in alone.stderr
    done = _run("--config", str(config), "verify", "a", shell="| true; exit ${PIPESTATUS[0]}")
    assert done.returncode == 1 and done.stderr == "", done.stderr
    shown = _run("--config", str(config), "search", "libelf", shell="| true; exit ${PIPESTATUS[0]}")
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr  # (a question's answer: 0)
