"""``python -m cachedex`` and the ``cachedex`` command: the command line."""

import io
import os
import sys

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


def run() -> None:
    """The command line. Ctrl-C while it loads (a tenth of a second of imports) says
    "interrupted" and exits 130, as it does later, rather than print a traceback."""
    _usable_streams()
    try:
        from cachedex.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)  # (cli.state.INTERRUPTED, which this must not import first)
    main()


if __name__ == "__main__":
    run()
