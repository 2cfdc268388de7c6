"""The dates the server sends: when the code was installed (not when its bytecode was
written), and a state's Last-Modified after the second it was first seen in, and after
the code's own date."""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

import pytest

from cachedex.publish.serve import headers
from cachedex.publish.serve.headers import StateDates, code_modified


def test_the_code_is_dated_by_its_newest_file_not_by_its_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade writes every file anew (the newest counts); a process writes bytecode
    whenever it first imports a module (it does not)."""
    for relative, mtime in (("a.py", 1_000), ("templates/b.html", 1_500), ("__pycache__/a.cpython-311.pyc", 9_000)):
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        os.utime(path, (mtime, mtime))
    monkeypatch.setattr(importlib.resources, "files", lambda package: tmp_path)
    assert code_modified() == 1_500


def test_a_state_is_dated_after_the_second_it_was_first_seen_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another state may have been seen (and dated) in that very second, by this process
    or another worker: a client holding it would be told its copy is current."""
    clock = [2_000_000.2]
    monkeypatch.setattr(headers.time, "time", lambda: clock[0])
    assert StateDates(0).of("a") == 2_000_001


def test_no_state_is_dated_before_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """After an upgrade (its files dated by a clock ahead of this one), a date before the
    code's would confirm a page the old code made."""
    clock = [2_000_000.2]
    monkeypatch.setattr(headers.time, "time", lambda: clock[0])
    code = 2_000_100.5
    assert StateDates(code).of("a") > code
