"""What the query parser says of syntax Spack has and a question about built binaries
does not take: a compiler for one language (Spack 1.0's ``%c=gcc``), a variant
propagated to the dependencies (``++mpi``, ``mpi==x``) or a compiler (``%%gcc``), what follows ``%gcc`` (Spack
1.0's: the compiler's), compiler flags, a virtual's provider (``^mpi=openmpi``) and an
edge's attributes (``^[virtuals=mpi] openmpi``); else which character it did not
expect. Each says what to search instead."""

from __future__ import annotations

import re

__all__ = ["after_compiler", "compiler_moved", "flag_refused", "propagated", "provider_assigned", "unexpected"]

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"  # (as the parser's)

#: Spack 1.0's compiler for one language (``%c=gcc``, ``%[virtuals=c] gcc``), up to the
#: compiler's name.
_LANGUAGE_COMPILER = re.compile(
    rf"%%?\s*(?:{_NAME}(?:\s*,\s*{_NAME})*\s*=\s*|\[[^\]]*\]\s*)(?P<compiler>{_NAME}(?:@[^\s%+~^]*)?)?"
)
#: Spack 1.0's compiler propagated to the dependencies (``%%gcc``).
_PROPAGATED_COMPILER = re.compile(rf"%%\s*(?P<compiler>{_NAME}(?:@[^\s%+~^]*)?)")


def unexpected(text: str, position: int) -> str:
    """What the character at ``position`` is not, saying so for syntax Spack has and
    cachedex does not read."""
    start = text.rfind("%", 0, position + 1)
    found = _LANGUAGE_COMPILER.match(text, start) if start >= 0 else None
    if found is not None and found.start() <= position < found.end():
        instead = f"search %{found['compiler']}" if found["compiler"] else "search %COMPILER, e.g. %gcc@13"
        return (
            f"a compiler for one language ({found[0].strip()}, Spack 1.0) is not read here: a binary's compiler "
            f"is any its C, C++ or Fortran was built by; {instead}"
        )
    doubled_compiler = _PROPAGATED_COMPILER.match(text, start) if start >= 0 else None
    if doubled_compiler is not None:
        return propagated(doubled_compiler[0])
    attributes = re.match(rf"\[[^\]]*\]\s*(?P<name>{_NAME})?", text[position:])
    if attributes is not None and text[:position].rstrip().endswith("^"):
        instead = f"^{attributes['name']}" if attributes["name"] else "^NAME"
        return f"an edge's attributes ({attributes[0].strip()}) are not read here; search {instead}"
    doubled = re.match(rf"(\+\+|~~)\s*({_NAME})", text[position:])
    if doubled is not None:
        return propagated(doubled[0])
    return f"unexpected {text[position]!r}"


def propagated(written: str) -> str:
    """Why a propagated variant or compiler (``++mpi``, ``mpi==x``, ``%%gcc``: Spack's,
    to the dependencies too) is refused, and what to search instead."""
    own = written.replace("++", "+", 1).replace("~~", "~", 1).replace("==", "=", 1).replace("%%", "%", 1)
    # (a compiler: a binary is found by each that built it, its C's, C++'s or Fortran's)
    one, held = (
        ("compiler", "the compilers that built it") if written.startswith("%%") else ("variant", "its own variants")
    )
    return (
        f"{written} propagates a {one} to the dependencies, which Spack settles before it builds: "
        f"a binary has {held} only; search {own}"
    )


def compiler_moved(text: str, compiler_start: int, compiler_end: int, end: int) -> str:
    """``text`` with the ``%compiler`` at ``compiler_start:compiler_end`` moved to the end
    of its spec (which ends at ``end``): what follows it then is the package's."""
    compiler = text[compiler_start:compiler_end].strip()
    moved = f"{text[:compiler_start].rstrip()} {text[compiler_end:end].strip()} {compiler}".strip()
    return " ".join(f"{moved} {text[end:]}".split())


def after_compiler(text: str, compiler_start: int, compiler_end: int, at: int, end: int, rewritten: str | None) -> str:
    """Why what follows ``%gcc`` in one spec of ``text`` (``text[at:end]``) is refused, with
    the query written so that it is the package's (``rewritten``, when that is a query
    cachedex reads): Spack 1.0 reads it as the compiler's own (``hdf5 %gcc@13
    target=zen4``: gcc's target), older Spack as the package's, and cachedex reads a
    compiler by its name and version only."""
    compiler = text[compiler_start:compiler_end].strip()
    what = text[at:end].split()[0] if text[at:end].split() else text[at:end]
    then = f": {rewritten}" if rewritten else ""
    return (
        f"{what} follows {compiler}: Spack 1.0 reads it as the compiler's, older Spack as the package's; "
        f"for the package's, write it before the compiler{then}"
    )


def flag_refused(key: str) -> str:
    """Why a compiler flag (``cflags=-O3``) is refused: the catalog does not index them."""
    return (
        f"{key}= is a compiler flag, which cachedex does not search (each spec's flags are in its JSON); "
        "search without it"
    )


def provider_assigned(virtual: str, provider: str) -> str:
    """Why ``^mpi=openmpi`` (Spack 1.0: openmpi as the provider of mpi) is refused."""
    return f"^{virtual}={provider} (Spack 1.0: {provider} providing {virtual}) is not read here; search ^{provider}" + (
        "" if "," in virtual else f" or ^{virtual}"
    )
