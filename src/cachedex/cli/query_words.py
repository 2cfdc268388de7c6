"""Query words that start with '-': ``cachedex search hdf5 -cuda``.

Spack writes a disabled variant ``~cuda`` or ``-cuda``; click reads any word starting
with '-' as an option (``-cuda`` as ``-c`` ...), and ``-shared`` as ``-s hared``.
:class:`QueryCommand` keeps such words in the query.
"""

from __future__ import annotations

from collections.abc import Iterable

import click

__all__ = ["QueryCommand", "query_text"]


class QueryCommand(click.Command):
    """A command whose arguments are a spec query: a word starting with '-' that is none
    of its options (``-cuda``, Spack's disabled variant; ``-shared``, although -s is an
    option) is a word of the query. Options are known by their exact names; one with its
    value attached (``-tdevelop``) is taken as a query word, so write ``-t develop``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        names: set[str] = set()
        takes_value: set[str] = set()
        takes_number: set[str] = set()  # (-n1 is no variant anyone means: -n 1 is)
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                names.update(param.opts + param.secondary_opts)
                if not param.is_flag:
                    takes_value.update(param.opts)
                if isinstance(param.type, (click.types.IntParamType, click.IntRange)):
                    takes_number.update(param.opts)
        marked: list[str] = []
        after_option = False  # the previous word is an option that takes the next as its value
        for position, arg in enumerate(args):
            if arg == "--":
                marked += args[position:]
                break
            word = arg.startswith("-") and not arg.startswith("--") and len(arg) > 1 and arg not in names
            if word and not after_option and arg[:2] in takes_number and arg[2:].isdigit():
                # Read as Spack reads it (a disabled variant), but said: an option was likely meant.
                option = arg[:2]
                click.echo(
                    f"warning: {arg} is read as a query word (~{arg[1:]}); for the option {option}, "
                    f"write {option} {arg[2:]}",
                    err=True,
                )
            marked.append(_MARK + arg if word and not after_option else arg)
            after_option = arg in takes_value
        return super().parse_args(ctx, marked)


#: Marks a word of a query that starts with '-' while click parses the options (click
#: reads any word starting with '-' as an option); removed again before the query is parsed.
_MARK = "\x00"


def query_text(words: Iterable[str]) -> str:
    """The query the words of a :class:`QueryCommand` make."""
    return " ".join(word.removeprefix(_MARK) for word in words)
