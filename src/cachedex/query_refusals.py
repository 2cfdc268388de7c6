"""What the query parser says of syntax Spack has and a question about built binaries
does not take: a compiler for one language (Spack 1.0's ``%c=gcc``), a variant
propagated to the dependencies (``++mpi``, ``mpi==x``); else which character it did not
expect."""

from __future__ import annotations

import re

__all__ = ["propagated", "unexpected"]

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"  # (as the parser's)

#: Spack 1.0's compiler for one language (``%c=gcc``, ``%[virtuals=c] gcc``), up to the
#: compiler's name.
_LANGUAGE_COMPILER = re.compile(rf"%\s*(?:{_NAME}=|\[[^\]]*\]\s*)(?P<compiler>{_NAME}(?:@[^\s%+~^]*)?)?")


def unexpected(text: str, position: int) -> str:
    """What the character at ``position`` is not, saying so for syntax Spack has and
    cachedex does not read."""
    start = text.rfind("%", 0, position + 1)
    found = _LANGUAGE_COMPILER.match(text, start) if start >= 0 else None
    if found is not None and found.start() <= position < found.end():
        instead = f"search %{found['compiler']}" if found["compiler"] else "search %COMPILER, e.g. %gcc@13"
        return (
            f"a compiler for one language ({found[0].strip()}, Spack 1.0) is not read here: a binary's compiler "
            f"is the one its C, C++ or Fortran was built by; {instead}"
        )
    doubled = re.match(rf"(\+\+|~~)\s*({_NAME})", text[position:])
    if doubled is not None:
        return propagated(doubled[0])
    return f"unexpected {text[position]!r}"


def propagated(written: str) -> str:
    """Why a propagated variant (``++mpi``, ``mpi==x``: Spack's, to the dependencies
    too) is refused, and what to search instead."""
    own = written.replace("++", "+", 1).replace("~~", "~", 1).replace("==", "=", 1)
    return (
        f"{written} propagates a variant to the dependencies, which Spack settles before it builds: "
        f"a binary has its own variants only; search {own}"
    )
