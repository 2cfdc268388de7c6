"""What two spec nodes differ in that a catalog's listing does not hold: compiler
flags, the recipe's hash (``package_hash``: the same version of a package, built from a
changed ``package.py``), the namespace and the types of a dependency of the same hash.
Each makes another DAG hash, and the most common reason a develop binary is not reused
is the recipe's; :mod:`.reuse` says them of the nearest cached build, as its
:class:`.reuse.Difference`."""

from __future__ import annotations

import msgspec

from .values import FLAG_NAMES

__all__ = ["NodeDifference", "node_differences"]

#: (what, the cached build's value, the wanted spec's), as :class:`.reuse.Difference` has them.
NodeDifference = tuple[str, str, str]


def node_differences(
    cached: str | bytes | msgspec.Raw | None, wanted: str | bytes | msgspec.Raw
) -> list[NodeDifference]:
    """Each way the node ``cached`` (a cached build's, as the catalog keeps it) differs
    from ``wanted`` (the lockfile's) in what the listing does not compare; none when
    either cannot be read."""
    if cached is None:
        return []
    try:
        theirs, yours = _facts(cached), _facts(wanted)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError, ValueError, TypeError):
        return []
    if theirs is None or yours is None:
        return []
    return _compared(theirs, yours)


class _Facts(msgspec.Struct):
    flags: dict[str, str]
    package_hash: str
    namespace: str
    types: dict[str, tuple[str, str]]  #: dependency name -> (hash, its types joined)


def _facts(node: str | bytes | msgspec.Raw) -> _Facts | None:
    data = msgspec.json.decode(bytes(node) if isinstance(node, msgspec.Raw) else node)
    if not isinstance(data, dict):
        return None
    parameters = data.get("parameters")
    parameters = parameters if isinstance(parameters, dict) else {}
    flags = {}
    for name in FLAG_NAMES:
        value = parameters.get(name)
        if isinstance(value, list) and value:
            flags[name] = " ".join(map(str, value))
    types: dict[str, tuple[str, str]] = {}
    edges = data.get("dependencies")
    for edge in edges if isinstance(edges, list) else []:
        if isinstance(edge, dict) and isinstance(edge.get("name"), str) and isinstance(edge.get("hash"), str):
            given = edge.get("parameters")
            kinds = given.get("deptypes") if isinstance(given, dict) else edge.get("type")
            joined = ",".join(sorted(map(str, kinds))) if isinstance(kinds, list) else ""
            types[edge["name"]] = (edge["hash"], joined)
    package_hash, namespace = data.get("package_hash"), data.get("namespace")
    return _Facts(
        flags,
        package_hash if isinstance(package_hash, str) else "",
        namespace if isinstance(namespace, str) else "",
        types,
    )


def _compared(theirs: _Facts, yours: _Facts) -> list[NodeDifference]:
    found: list[NodeDifference] = [
        (name, theirs.flags.get(name, ""), yours.flags.get(name, ""))
        for name in FLAG_NAMES
        if theirs.flags.get(name, "") != yours.flags.get(name, "")
    ]
    if theirs.package_hash and yours.package_hash and theirs.package_hash != yours.package_hash:
        found.append(("package_hash", theirs.package_hash[:7], yours.package_hash[:7]))
    if theirs.namespace and yours.namespace and theirs.namespace != yours.namespace:
        found.append(("namespace", theirs.namespace, yours.namespace))
    for name in sorted(theirs.types.keys() & yours.types.keys()):
        (their_hash, their_types), (your_hash, your_types) = theirs.types[name], yours.types[name]
        if their_hash == your_hash and their_types != your_types:  # (another hash: said as a dependency)
            found.append((f"^{name} type", their_types, your_types))
    return found
