"""Spliced specs in a lockfile's or a spec file's nodes (:mod:`.lockfile` reads them).

A spliced spec (``spack.solve_splices``, ``Spec.splice``) names its ``build_spec``: Spack
installs it from that spec's binary, rewired, and writes the build spec's nodes beside the
environment's. :func:`find_splices` finds each spliced spec's link to its build spec;
:func:`without_build_specs` leaves out the nodes only build specs reach, which the
environment installs none of.
"""

from __future__ import annotations

import msgspec

from ..errors import IndexFormatError
from ..values import SpecRecord, is_dag_hash, short_repr

__all__ = ["find_splices", "without_build_specs"]


class _BuildSpec(msgspec.Struct):
    """The spec a node was spliced from: its hash (and name)."""

    hash: str = ""
    name: str = ""


class _Spliced(msgspec.Struct):
    """A node's link to the spec it was spliced from, if it was."""

    build_spec: _BuildSpec | None = None


_spliced_decoder = msgspec.json.Decoder(_Spliced)


def find_splices(data: bytes, nodes: dict[str, msgspec.Raw], name: str) -> dict[str, str]:
    """{spliced spec's hash: its build spec's hash} of the ``nodes`` that name one."""
    # (most files: no second look at each node; a key may be written with escapes,
    # "build\u005fspec", which the decoder reads as build_spec)
    if b'"build_spec"' not in data and b"\\u" not in data:
        return {}
    found = {}
    for key, node in nodes.items():
        try:
            build = _spliced_decoder.decode(node).build_spec
        except msgspec.DecodeError as exc:
            raise IndexFormatError(name, f"/{key[:7]}: its build_spec is not a spec's name and hash: {exc}") from exc
        if build is not None and build.hash and build.hash != key:
            if not is_dag_hash(build.hash):  # (it was told raw: a line break, a colour)
                raise IndexFormatError(
                    name, f"/{key[:7]}: its build_spec's hash {short_repr(build.hash)} is not a hash"
                )
            if build.hash not in nodes:  # (Spack cannot read such a file either)
                raise IndexFormatError(
                    name, f"/{key[:7]} was spliced from /{build.hash[:7]}, which the file does not hold"
                )
            found[key] = build.hash
    return found


def without_build_specs(specs: list[SpecRecord], roots: list[str], splices: dict[str, str]) -> list[SpecRecord]:
    """``specs`` less the nodes only a spliced spec's build spec reaches (Spack writes
    them for the build spec's sake: the environment installs none of them)."""
    if not splices:
        return specs
    by_hash = {spec.hash: spec for spec in specs}

    def reached(start: list[str]) -> set[str]:
        found: set[str] = set()
        pending = [key for key in start if key in by_hash]
        while pending:
            key = pending.pop()
            if key not in found:
                found.add(key)
                pending += [edge.hash for edge in by_hash[key].dependencies]
        return found

    apart = reached(list(splices.values())) - reached(roots)
    return [spec for spec in specs if spec.hash not in apart]
