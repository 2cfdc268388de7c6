"""Spec-file and index forms Spack writes or reads, read as Spack reads them.

The multi-node spec files below are cut down from Spack's own samples
(``lib/spack/spack/test/data/specfiles/hdf5.v016.json`` and ``hdf5.v017.json`` in
spack/spack; the fixtures do not copy them): the node names, hashes and edges are
theirs, the architecture is shortened.
"""

from __future__ import annotations

import json
from pathlib import Path

from cachedex.config import Limits
from cachedex.ingest.index import decode_index
from cachedex.ingest.layouts import read_index
from cachedex.ingest.records import build_records
from cachedex.ingest.sources import open_source
from cachedex.values import SpecRecord

_ARCH = {"platform": "linux", "platform_os": "ubuntu20.04", "target": "icelake"}
_COMPILER = {"name": "gcc", "version": "9.4.0"}


def _records_of(root: Path, stem: str, document: object) -> dict[str, SpecRecord]:
    """The records of a mirror without an index whose one spec file is ``document``
    (``build_cache/<stem>.spec.json``), as a sync reads them."""
    folder = root / "build_cache"
    folder.mkdir()
    (folder / f"{stem}.spec.json").write_text(json.dumps(document))
    snapshot = read_index(open_source(str(root), client=None), None, limits=Limits())
    index = decode_index(snapshot.data or b"", url=str(root))
    return {record.hash: record for record in build_records(index)}


def _node(name: str, version: str, hashes: tuple[str, str], **fields: object) -> dict[str, object]:
    dag_hash, build_hash = hashes
    return {
        "name": name,
        "version": version,
        "arch": _ARCH,
        "compiler": _COMPILER,
        "namespace": "builtin",
        "parameters": {"cflags": [], "cppflags": [], "cxxflags": [], "fflags": [], "ldflags": [], "ldlibs": []},
        **fields,
        "hash": dag_hash,
        "build_hash": build_hash,
    }


# cmake -> ncurses -> pkgconf, as hdf5.v017.json (spec v2, Spack 0.17) holds them.
CMAKE = ("c5h7icftdadpsg7hhvi2kprwihrraeso", "o2axmiarbjjqvpgptaygwbho57fboh5q")
NCURSES = ("6gkqi3dyyesh7cnendsajfck5tkn7ddu", "kkxdddh7ucktz5wavf6mfpi5tg7cm2s2")
PKGCONF = ("xdlqvfbqcoaym7lcmxyjmqmg476tah2g", "xdlqvfbqcoaym7lcmxyjmqmg476tah2g")


def test_spec_v2_edges_named_by_build_hash_point_at_the_dag_hash(tmp_path: Path) -> None:
    """Spack 0.17 spec files name each edge's target by its ``build_hash``, which is not
    the target's DAG hash when the target has build dependencies; Spack wires the nodes
    by that hash kind (spec.py ``SpecfileReaderBase._load`` / ``wire_spec_nodes``), so
    the edge leads to the node whose DAG hash is its ``hash``."""
    nodes = [
        _node(
            "cmake",
            "3.21.4",
            CMAKE,
            dependencies=[{"name": "ncurses", "build_hash": NCURSES[1], "type": ["build", "link"]}],
        ),
        _node(
            "ncurses",
            "6.2",
            NCURSES,
            dependencies=[{"name": "pkgconf", "build_hash": PKGCONF[1], "type": ["build"]}],
        ),
        _node("pkgconf", "1.8.0", PKGCONF),
    ]
    document = {"spec": {"_meta": {"version": 2}, "nodes": nodes}}
    records = _records_of(tmp_path, f"linux-ubuntu20.04-icelake-gcc-9.4.0-cmake-3.21.4-{CMAKE[0]}", document)
    (edge,) = records[CMAKE[0]].dependencies
    assert (edge.name, edge.hash) == ("ncurses", NCURSES[0])
    assert NCURSES[0] in records and not records[NCURSES[0]].in_buildcache
    (edge,) = records[NCURSES[0]].dependencies
    assert (edge.name, edge.hash) == ("pkgconf", PKGCONF[0])


# openmpi -> hwloc -> libpciaccess, as hdf5.v016.json (spec v1, Spack 0.16) holds them.
HWLOC = ("p77cl3dpovii6riyneg4tvubdhxdaqvf", "u7gxm3lq2z7m4juvk75uwclhe4wgqbfo")
LIBPCIACCESS = ("n6gf6qdyfowaq6fiyqbbzn5atl25rocd", "25jfglkoz7ddiyq5cuy3hiknx2xdbex2")


def test_spec_v1_edges_lead_to_the_node_of_their_name(tmp_path: Path) -> None:
    """In a spec v1 file an edge's ``hash`` holds the target's build hash (hwloc's is
    u7gxm3l…, its DAG hash p77cl3d…); Spack wires v1 nodes by name
    (spec.py ``SpecfileV1.load``: ``deps[dep.name]``), and so must the edge here."""

    def v1(name: str, version: str, hashes: tuple[str, str], **fields: object) -> dict[str, object]:
        node = _node(name, version, hashes, **fields)
        del node["name"]
        return {name: node}

    document = {
        "spec": [
            v1(
                "hwloc",
                "1.11.11",
                HWLOC,
                dependencies={"libpciaccess": {"hash": LIBPCIACCESS[1], "type": ["build", "link"]}},
            ),
            v1("libpciaccess", "0.16", LIBPCIACCESS),
        ]
    }
    records = _records_of(tmp_path, f"linux-ubuntu20.04-icelake-gcc-9.4.0-hwloc-1.11.11-{HWLOC[0]}", document)
    (edge,) = records[HWLOC[0]].dependencies
    assert (edge.name, edge.hash) == ("libpciaccess", LIBPCIACCESS[0])
    assert records[LIBPCIACCESS[0]].name == "libpciaccess"
