"""``python -m cachedex`` and the ``cachedex`` command: the command line."""

import sys

__all__ = ["run"]


def run() -> None:
    """The command line. Ctrl-C while it loads (a tenth of a second of imports) says
    "interrupted" and exits 130, as it does later, rather than print a traceback."""
    try:
        from cachedex.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)  # (cli.state.INTERRUPTED, which this must not import first)
    main()


if __name__ == "__main__":
    run()
