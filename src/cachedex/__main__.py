"""``python -m cachedex`` and the ``cachedex`` command: the command line."""

import atexit
import io
import os
import sys
import threading

__all__ = ["run"]


def _usable_streams() -> None:
    """Standard streams a command can always write and read: one the shell closed
    (``>&-``) reads and writes nothing, as ``/dev/null`` (Python gives None, which the
    first print would fail on); a character the locale cannot encode (a mirror's value
    under ``LC_ALL=C`` without UTF-8 mode) is written as its escape, not a traceback."""
    for name in ("stdin", "stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "r" if name == "stdin" else "w"))  # noqa: SIM115  # (for the process's life)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def _exit_at_once(code: object) -> None:
    """End the process with ``code`` without the interpreter's teardown, when nothing is
    left that needs it: no thread but this one (Python would wait for the others), an
    exit status that is a number, and standard streams that take what is left in them.
    What ``atexit`` holds still runs. The teardown frees each module and object one by
    one, memory the system takes back at once anyway: ~50 ms of a command that takes
    0.3-0.4 s (a no-op re-sync), more after a sync that made millions of objects."""
    if threading.active_count() != 1 or not (code is None or isinstance(code, int)):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # (a closed or broken stream: Python's own exit says so, as it would)
    atexit._run_exitfuncs()  # noqa: SLF001  # (the handlers os._exit skips; CPython since 3.0)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 120  # what Python's exit gives when its last flush fails
    os._exit(code or 0)


def run() -> None:
    """The command line. Ctrl-C while it loads (a tenth of a second of imports) says
    "interrupted" and exits 130, as it does later, rather than print a traceback."""
    _usable_streams()
    try:
        from cachedex.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)  # (cli.state.INTERRUPTED, which this must not import first)
    try:
        main()
    except SystemExit as done:  # (click ends every command so, 0 included)
        _exit_at_once(done.code)
        raise


if __name__ == "__main__":
    run()
