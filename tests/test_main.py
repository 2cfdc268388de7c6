"""``python -m cachedex``: a command ends without the interpreter's teardown when nothing
needs it, and with it when something does (real processes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: Runs the command line as ``cachedex`` does, with a module-level object whose
#: finalizer only the interpreter's teardown calls, an ``atexit`` handler, and, when
#: asked, a thread still working when the command ends.
_SCRIPT = """
import atexit, sys, threading, time
from pathlib import Path
marks = Path(sys.argv[1])

class TornDown:
    # Self-contained: the teardown may clear this module's other names before it.
    def __init__(self, path):
        self.path = path

    def __del__(self, open=open):
        with open(self.path, "a") as out:
            out.write("teardown\\n")

torn_down = TornDown(str(marks))
atexit.register(lambda: marks.open("a").write("atexit\\n"))
if sys.argv[2] == "thread":
    def late():  # (works until the command has ended, however long it takes)
        while threading.main_thread().is_alive():
            time.sleep(0.01)
        with marks.open("a") as out:
            out.write("thread\\n")
    threading.Thread(target=late).start()
sys.argv = ["cachedex", *sys.argv[3:]]
from cachedex.__main__ import run
run()
"""


def _run(tmp_path: Path, thread: str, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    marks = tmp_path / "marks.txt"
    marks.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(marks), thread, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, marks.read_text().split() if marks.exists() else []


def test_a_command_ends_at_once_after_its_exit_handlers(tmp_path: Path) -> None:
    done, marks = _run(tmp_path, "none", "--version")
    assert done.returncode == 0 and done.stdout.startswith("cachedex, version"), done.stderr
    assert marks == ["atexit"]  # the handlers ran; the teardown (the finalizer) did not


def test_a_failed_command_keeps_its_exit_status_and_message(tmp_path: Path) -> None:
    done, marks = _run(tmp_path, "none", "--config", str(tmp_path / "none.yaml"), "stats")
    assert done.returncode == 1 and "no config file here" in done.stderr
    assert marks == ["atexit"]


def test_whole_output_reaches_a_pipe(tmp_path: Path) -> None:
    done, _ = _run(tmp_path, "none", "sync", "--help")
    assert done.returncode == 0 and done.stdout.rstrip().endswith("Show this message and exit.")


def test_a_thread_still_working_is_waited_for(tmp_path: Path) -> None:
    done, marks = _run(tmp_path, "thread", "--version")
    assert done.returncode == 0
    assert marks == ["thread", "atexit", "teardown"]  # Python's own exit, every step of it
