"""``friendly``: what reaches the command line of an error no command said in words."""

from __future__ import annotations

import errno

import click
from click.testing import CliRunner

from cachedex.cli.state import friendly


def test_an_os_error_no_command_caught_names_its_file() -> None:
    @click.command()
    @click.argument("where", required=False)
    @friendly
    def fails(where: str | None) -> None:
        raise OSError(errno.EACCES, "Permission denied", where)

    result = CliRunner().invoke(fails, ["/srv/out/\x1b[2Jx"])
    assert (result.exit_code, result.stderr) == (1, "error: /srv/out/\\x1b[2Jx: Permission denied\n")
    result = CliRunner().invoke(fails, [])  # (no file to name)
    assert (result.exit_code, result.stderr) == (1, "error: Permission denied\n")
