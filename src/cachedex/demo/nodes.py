"""Concrete Spack node dicts, as Spack writes them: for the demo, tests and benchmarks.

Node dicts in the key order Spack writes (``shared/docs/buildcache-format.md`` §3), the
DAG hash (§3.2), dependency edges of spec v4/v5, targets as archspec describes them.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

import msgspec

from ..values import FLAG_NAMES

__all__ = ["dag_hash", "edge", "make_node", "node_compiler", "target_object"]

_DEPTYPE_ORDER = {"build": 0, "link": 1, "run": 2, "test": 3}
_COMPILER_VIRTUALS = ("c", "cxx", "fortran")
_encode = msgspec.json.encode


def dag_hash(node: Mapping[str, Any]) -> str:
    """Spack's DAG hash of a node dict: base32(SHA-1(compact JSON without ``hash``))[:32].

    Keys are serialised in the dict's own order, as Spack does (§3.2). msgspec gives the
    same bytes as ``json.dumps(separators=(",", ":"))`` for ASCII text without escapes
    (node dicts hold no floats); anything else goes through :mod:`json` itself.
    """
    content = {key: value for key, value in node.items() if key != "hash"}
    data = _encode(content)
    if not data.isascii() or b"\\" in data or b"\x7f" in data:
        data = json.dumps(content, separators=(",", ":")).encode("ascii")
    return base64.b32encode(hashlib.sha1(data).digest()).decode("ascii").lower()[:32]


@cache
def _target_template(name: str) -> tuple[str, tuple[str, ...], int, tuple[str, ...], str]:
    import archspec.cpu

    try:
        uarch = archspec.cpu.TARGETS[name]
    except KeyError as exc:
        raise ValueError(f"unknown microarchitecture {name!r} (not in archspec)") from exc
    cpupart = getattr(uarch, "cpu_part", "") or ""
    return (
        uarch.vendor,
        tuple(sorted(uarch.features)),
        uarch.generation,
        tuple(p.name for p in uarch.parents),
        cpupart,
    )


def target_object(name: str) -> dict[str, Any]:
    """The object form of a named microarchitecture (``arch.target``), from archspec.

    ``{"name", "vendor", "features" (sorted), "generation", "parents", "cpupart"}``;
    ``cpupart`` is ``""`` when archspec knows none. ValueError for unknown names.
    """
    vendor, features, generation, parents, cpupart = _target_template(name)
    return {
        "name": name,
        "vendor": vendor,
        "features": list(features),
        "generation": generation,
        "parents": list(parents),
        "cpupart": cpupart,
    }


@lru_cache(maxsize=1024)
def _edge_parameters(deptypes: tuple[str, ...], virtuals: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    unknown = [d for d in deptypes if d not in _DEPTYPE_ORDER]
    if unknown or not deptypes:
        raise ValueError(f"bad dependency types {list(deptypes)!r} (use build, link, run, test)")
    return tuple(sorted(set(deptypes), key=_DEPTYPE_ORDER.__getitem__)), tuple(sorted(set(virtuals)))


def edge(
    node: Mapping[str, Any], deptypes: Sequence[str] = ("build", "link"), virtuals: Sequence[str] = ()
) -> dict[str, Any]:
    """A spec v4/v5 dependency edge to ``node``: ``{"name", "hash", "parameters"}``.

    ``deptypes`` are written in Spack's order (build, link, run, test), ``virtuals`` sorted.
    """
    kinds, provided = _edge_parameters(tuple(deptypes), tuple(virtuals))
    return {
        "name": node["name"],
        "hash": node["hash"],
        "parameters": {"deptypes": list(kinds), "virtuals": list(provided)},
    }


@lru_cache(maxsize=65536)
def _package_hash(namespace: str, name: str, version: str) -> str:
    digest = hashlib.sha256(f"{namespace}.{name}@{version}".encode()).digest()
    return base64.b32encode(digest).decode("ascii").lower()  # 56 chars ending in "===="


def make_node(
    name: str,
    version: str,
    *,
    platform: str = "linux",
    os: str = "ubuntu22.04",  # noqa: A002 - the Spack key is platform_os
    target: str | Mapping[str, Any] = "x86_64_v3",
    variants: Mapping[str, bool | str | Sequence[str]] | None = None,
    dependencies: Iterable[Mapping[str, Any]] = (),
    compiler: tuple[str, str] | None = None,
    annotations: Mapping[str, Any] | None = None,
    external_path: str | None = None,
    extra_attributes: Mapping[str, Any] | None = None,
    namespace: str = "builtin",
    spec_version: int = 5,
) -> dict[str, Any]:
    """A concrete node dict in the key order Spack writes, its ``hash`` computed last.

    ``target`` is written as given: a string for generic targets, or an object from
    :func:`target_object`. ``variants`` values: bool, str (single-valued) or a list of
    str (multi-valued, written sorted). ``dependencies`` are edges from :func:`edge` or
    node dicts (then a build+link edge). ``compiler`` (name, version) is the node-level
    compiler of spec v4; in spec v5 a compiler is a build edge with virtuals c/cxx/fortran.
    ``external_path`` makes the node an external (``extra_attributes`` optional).
    """
    if spec_version not in (4, 5):
        raise ValueError(f"spec_version must be 4 or 5, got {spec_version}")
    if compiler is not None and spec_version >= 5:
        raise ValueError(
            "spec v5 nodes have no 'compiler' key: pass the compiler as a build edge with virtuals c/cxx/fortran"
        )
    node: dict[str, Any] = {
        "name": name,
        "version": str(version),
        "arch": {"platform": platform, "platform_os": os, "target": target},
    }
    if compiler is not None:
        node["compiler"] = {"name": compiler[0], "version": str(compiler[1])}
    node["namespace"] = namespace
    parameters: dict[str, Any] = {}
    for key in sorted(variants or {}):
        if key in FLAG_NAMES:
            raise ValueError(f"{key!r} is a compiler flag, not a variant")
        value = variants[key]  # type: ignore[index]
        if isinstance(value, (bool, str)):
            parameters[key] = value
        else:
            parameters[key] = sorted(str(v) for v in value)
    for flag in FLAG_NAMES:
        parameters[flag] = []
    node["parameters"] = parameters
    if external_path is not None:
        node["external"] = {"path": external_path, "module": None, "extra_attributes": dict(extra_attributes or {})}
    node["package_hash"] = _package_hash(namespace, name, str(version))
    edges = sorted(
        (d if "arch" not in d and "deptypes" in d.get("parameters", ()) else edge(d) for d in dependencies),
        key=lambda e: (e["name"], e["hash"]),
    )
    if edges:
        node["dependencies"] = edges
    notes: dict[str, Any] = {"original_specfile_version": spec_version} if spec_version >= 5 else {}
    notes.update(annotations or {})
    if notes:
        node["annotations"] = notes
    node["hash"] = dag_hash(node)
    return node


def node_compiler(node: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> tuple[str, str] | None:
    """The (name, version) compiler of a node (format doc §4.2), None when it has none.

    ``compiler`` key (spec ≤4), else ``annotations.compiler`` (``gcc@=10.2.1``), else the
    first edge providing c, then cxx, then fortran, looked up by hash in ``nodes``.
    """
    legacy = node.get("compiler")
    if isinstance(legacy, Mapping):
        return str(legacy.get("name")), str(legacy.get("version", "")).lstrip("=")
    noted = (node.get("annotations") or {}).get("compiler")
    if isinstance(noted, str) and "@" in noted:
        cname, _, cversion = noted.partition("@")
        return cname, cversion.lstrip("=")
    edges = node.get("dependencies") or ()
    for language in _COMPILER_VIRTUALS:
        for dep in edges:
            if language in dep.get("parameters", {}).get("virtuals", ()):
                provider = nodes.get(dep["hash"])
                if provider is None:
                    return dep["name"], "unknown"
                return provider["name"], provider["version"]
    return None
