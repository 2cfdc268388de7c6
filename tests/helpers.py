"""Helpers shared by tests: building records and small catalogs, reading a catalog whole,
the demo's paths, and a few small servers.

Fixtures live in ``conftest.py``; what tests import lives here.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol, TypeVar

import msgspec

from cachedex.catalog import Catalog, ListedRow, TagWriter
from cachedex.config import Config, parse_config
from cachedex.ingest.manifests import spec_manifest_path
from cachedex.values import Dependency, SpecRecord
from cachedex.versions import version_key

REPO = Path(__file__).resolve().parents[1]
#: The workplace's shared folder (its fixtures are read in place): beside the checkout,
#: or where CACHEDEX_SHARED says (``.ci/run`` sets it for a clone made elsewhere).
SHARED = Path(os.environ.get("CACHEDEX_SHARED") or REPO.parent / "shared")
FIXTURES = SHARED / "fixtures"
MIRRORS = FIXTURES / "spack" / "lib" / "spack" / "spack" / "test" / "data" / "mirrors"
CACHE_PAGES = FIXTURES / "cache.spack.io" / "_cache"


# -- small mirrors and configs ----------------------------------------------------------------

UNSIGNED_INDEX = "v2_layout/unsigned/build_cache/index.json"
LIBELF_CORE2 = "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"
LIBDWARF_CORE2 = "sk2gqqz4n5njmvktycnd25wq25jxiqkr"


def write_v2_mirror(root: Path, index: dict[str, object]) -> None:
    """A v2 mirror holding ``index`` (with a matching index.json.hash)."""
    (root / "build_cache").mkdir(parents=True, exist_ok=True)
    data = json.dumps(index, separators=(",", ":")).encode()
    (root / "build_cache/index.json").write_bytes(data)
    (root / "build_cache/index.json.hash").write_text(hashlib.sha256(data).hexdigest())


def fixture_index(mirrors: Path, *, drop: tuple[str, ...] = ()) -> dict[str, object]:
    """The real v2 test index, optionally without some records."""
    index = json.loads((mirrors / UNSIGNED_INDEX).read_bytes())
    for dag_hash in drop:
        del index["database"]["installs"][dag_hash]
    return index


def dead_pid() -> int:
    """The pid of a process that ran and is gone (and, so soon after, not reused)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def index_nodes(index: dict[str, object]) -> dict[str, dict[str, Any]]:
    """Each record's spec node (its name, version...) by hash."""
    return {h: r["spec"] for h, r in index["database"]["installs"].items()}  # type: ignore[index]


def manifest_path_of(nodes: Mapping[str, Mapping[str, Any]], dag_hash: str) -> str:
    """A spec's v3 manifest path in a mirror, from its node (see :func:`index_nodes`)."""
    return spec_manifest_path(nodes[dag_hash]["name"], nodes[dag_hash]["version"], dag_hash)


def name_version_in(index: dict[str, object]) -> Callable[[str], tuple[str, str]]:
    """A spec's (name, version) by hash, as a sync's prefetch asks them."""
    nodes = index_nodes(index)
    return lambda dag_hash: (nodes[dag_hash]["name"], nodes[dag_hash]["version"])


def fixture_listing(mirrors: Path, keep: int) -> dict[str, object]:
    """The real index with only its first ``keep`` records listed (the rest unlisted)."""
    index = fixture_index(mirrors)
    for position, record in enumerate(index["database"]["installs"].values()):  # type: ignore[index]
        record["in_buildcache"] = record["in_buildcache"] and position < keep
    return index


def listed_in(index: dict[str, object]) -> set[str]:
    """The hashes an index lists (``in_buildcache``)."""
    return {h for h, r in index["database"]["installs"].items() if r["in_buildcache"]}  # type: ignore[index]


def make_config(tmp_path: Path, tags: list[dict[str, object]], **http: object) -> Config:
    document = {"catalog": "cat.sqlite", "tags": tags, "http": {"retries": 1, "backoff": 0.01, **http}}
    return parse_config(document, base=tmp_path)


TARBALL = "application/vnd.spack.install.v2.tar+gzip"
SIGNED = (
    "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n{body}\n"
    "-----BEGIN PGP SIGNATURE-----\n\nZmFrZQ==\n-----END PGP SIGNATURE-----\n"
)


def _write_v3_index(root: Path, index: dict[str, object], manifest: str, media: str) -> None:
    data = json.dumps(index, separators=(",", ":")).encode()
    digest = hashlib.sha256(data).hexdigest()
    blob = root / "blobs/sha256" / digest[:2] / digest
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    entry = {
        "contentLength": len(data),
        "mediaType": media,
        "compression": "none",
        "checksumAlgorithm": "sha256",
        "checksum": digest,
    }
    path = root / manifest
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 3, "data": [entry]}))


def write_v3_view(root: Path, view: str, index: dict[str, object]) -> None:
    """A buildcache view of the v3 mirror at ``root``: its index, in the shared blobs."""
    _write_v3_index(root, index, f"v3/manifests/index/{view}/index.manifest.json", "application/vnd.spack.db.v8+json")


def write_v3_mirror(
    root: Path, index: dict[str, object], *, signed: bool = False, media: str = "application/vnd.spack.db.v8+json"
) -> dict[str, int]:
    """A v3 mirror of ``index``: manifest, blob, and a spec manifest (with a size) per listed spec."""
    _write_v3_index(root, index, "v3/manifests/index/index.manifest.json", media)
    sizes = {}
    for dag_hash, record in index["database"]["installs"].items():  # type: ignore[index]
        if not record["in_buildcache"]:
            continue
        node = record["spec"]
        sizes[dag_hash] = 1000 + int(hashlib.sha256(dag_hash.encode()).hexdigest()[:6], 16)
        spec_manifest = {
            "version": 3,
            "data": [
                {
                    "contentLength": sizes[dag_hash],
                    "mediaType": TARBALL,
                    "compression": "gzip",
                    "checksumAlgorithm": "sha256",
                    "checksum": "0" * 64,
                },
                {
                    "contentLength": 10,
                    "mediaType": "application/vnd.spack.spec.v5+json",
                    "compression": "gzip",
                    "checksumAlgorithm": "sha256",
                    "checksum": "1" * 64,
                },
            ],
        }
        text = json.dumps(spec_manifest, indent=0)
        target = root / spec_manifest_path(node["name"], node["version"], dag_hash)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(SIGNED.format(body=text) if signed else text)
    return sizes


# -- records and small catalogs ---------------------------------------------------------------


def spack_target_satisfies(target: str, constraint: str) -> bool:
    """Does a spec built for ``target`` satisfy ``target=constraint``? Spack's own rule,
    written out apart from cachedex's: each comma-separated part is a name (equal) or a
    range whose ends archspec's microarchitectures compare with (``low <= target <= high``,
    ancestry as the order); a name archspec does not know has no relatives."""
    import archspec.cpu

    def known(name: str) -> Any:
        return archspec.cpu.TARGETS.get(name) or archspec.cpu.generic_microarchitecture(name)

    for part in constraint.split(","):
        low, colon, high = part.partition(":")
        if not colon:
            if target == low:
                return True
            continue
        if (not low or known(target) >= known(low)) and (not high or known(target) <= known(high)):
            return True
    return False


def record(dag_hash: str, name: str = "zlib", **fields: Any) -> SpecRecord:
    """A listed spec record with plausible defaults; ``fields`` override any of them."""
    values: dict[str, Any] = {
        "hash": dag_hash,
        "name": name,
        "version": "1.3.1",
        "compiler": "gcc@13.2.0",
        "platform": "linux",
        "os": "ubuntu24.04",
        "target": "x86_64_v3",
        "variants": ("+shared",),
        "dependencies": (),
        "in_buildcache": True,
        "external": False,
        "node": b'{"name": "' + name.encode() + b'"}',
    }
    values.update(fields)
    return SpecRecord(**values)


def write_tag(
    catalog: Catalog,
    tag: str,
    records: Iterable[SpecRecord],
    *,
    members: Mapping[str, bool] | None = None,
    sizes: Mapping[str, int] | None = None,
    stack: str = "root",
    checksum: str = "x",
) -> None:
    """Write ``records`` (new to the catalog) and one mirror of ``tag`` holding
    ``members`` (default: every record, listed), as a sync would."""
    records = list(records)
    with catalog.writing_tag(tag) as writer:
        writer.add_specs(records, sizes or {})
        members = members if members is not None else {r.hash: True for r in records}
        replace_mirror(writer, stack, members, checksum=checksum)


def replace_mirror(
    writer: TagWriter,
    stack: str,
    members: Mapping[str, bool],
    *,
    url: str = "/m",
    checksum: str | None = "x",
    layout: int = 3,
    etag: str | None = None,
    last_modified: str | None = None,
    fetched_at: float = 0.0,
    **state: Any,
) -> None:
    """Write ``stack``'s mirror of the writer's tag holding ``members`` ({hash: listed}),
    a mirror of ``layout`` at ``url``, as a sync would; ``state``: the rest of
    ``TagWriter.replace_mirror``'s (``signed``, ``own_index``, ``view``, ...)."""
    writer.replace_mirror(
        stack,
        url,
        layout=layout,
        db_version=8,
        checksum=checksum,
        etag=etag,
        last_modified=last_modified,
        fetched_at=fetched_at,
        members=members,
        **state,
    )


def listed_row(
    *,
    hash: str,
    name: str,
    version: str,
    compiler: str,
    platform: str,
    os: str,
    target: str,
    variants: Iterable[str],
    size: int | None,
    stacks: Iterable[str],
) -> ListedRow:
    """A :class:`ListedRow` from plain values (variants as a list, stacks as names)."""
    return ListedRow(
        hash=hash,
        name=name,
        version=version,
        compiler=compiler,
        platform=platform,
        os=os,
        target=target,
        variants=msgspec.json.encode(list(variants)).decode(),
        size=size,
        stacks="\x1f".join(stacks),
    )


def evil_catalog(path: Path) -> Catalog:
    """A catalog whose names and values try to break out of HTML and folders."""
    catalog = Catalog(path)
    common = {"version": "1.0", "os": "rhel8", "target": "x86_64", "compiler": "gcc@13.1.0", "node": b'{"name": "x"}'}
    zlib = record("b" * 32, "zlib", variants=(), **common)
    evil = record(
        "a" * 32,
        "we\"ird'<b>name",
        # (a right-to-left override: "gnp.exe" would show as "exe.png", and what follows backwards)
        variants=("note=<script>alert(1)</script>", "label=\u202egnp.exe", "+shared"),
        dependencies=(Dependency(hash="b" * 32, name="zlib", deptypes=2, virtuals="\u202ebla"),),
        **common,
    )
    escape = record("c" * 32, "../escape", variants=(), **common)
    write_tag(catalog, "t<i>x", [zlib, evil, escape], sizes={"a" * 32: 1234})
    write_tag(catalog, "../up", [], members={"b" * 32: True}, checksum="y")
    return catalog


# -- reading a catalog whole (what only tests ask) -----------------------------------------


def _db(catalog: Catalog) -> sqlite3.Connection:
    return catalog._db


def dump(catalog: Catalog) -> list[tuple[object, ...]]:
    """Every row of every table, to prove a failed operation changed nothing."""
    db = _db(catalog)
    rows: list[tuple[object, ...]] = []
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall():
        order = "1, 2" if len(db.execute(f"PRAGMA table_info({table})").fetchall()) > 1 else "1"
        rows.extend((table, *row) for row in db.execute(f"SELECT * FROM {table} ORDER BY {order}"))
    return rows


def integrity_check(catalog: Catalog) -> str:
    """SQLite's own integrity check ('ok' when the file is sound)."""
    return str(_db(catalog).execute("PRAGMA integrity_check").fetchone()[0])


def history(catalog: Catalog, tag: str) -> list[tuple[float, int, int]]:
    """(finished_at, added, removed) of every sync of ``tag``, oldest first."""
    return list(
        _db(catalog).execute(
            "SELECT finished_at, added, removed FROM syncs WHERE tag_id = (SELECT id FROM tags WHERE name = ?) "
            "ORDER BY id",
            (tag,),
        )
    )


def changes(catalog: Catalog, tag: str, stack: str = "root") -> list[tuple[float, str, str, int]]:
    """(when, hash, package, +1/-1) of every recorded change of one mirror, oldest first."""
    return list(
        _db(catalog).execute(
            "SELECT y.finished_at, s.hash, s.name, c.change FROM changes c "
            "JOIN syncs y ON y.id = c.sync_id JOIN specs s ON s.id = c.spec_id "
            "JOIN mirrors m ON m.id = c.mirror_id JOIN tags t ON t.id = m.tag_id "
            "WHERE t.name = ? AND m.stack = ? ORDER BY y.id, s.hash",
            (tag, stack),
        )
    )


def dependencies(catalog: Catalog, dag_hash: str) -> list[tuple[str, str, int, str]]:
    """(child hash, name, deptypes mask, virtuals) of the direct dependencies of a spec."""
    return [(e.hash, e.name, e.deptypes, e.virtuals) for e in catalog.edges_of(dag_hash)]


def compilers_of(catalog: Catalog) -> dict[str, frozenset[str]]:
    """Each spec's compilers (``name@version``), as a brute force reads them: its own
    (the ``compiler`` column), and each dependency its raw node's edges name as the
    provider of ``c``, ``cxx`` or ``fortran`` (Spack 1.0: a spec may have two)."""
    ids = [spec_id for (spec_id,) in _db(catalog).execute("SELECT id FROM specs ORDER BY id")]
    specs = list(catalog.spec_nodes(ids))
    named = {row[1]: f"{row[2]}@{row[3]}" if row[3] else row[2] for row in specs}
    found: dict[str, frozenset[str]] = {}
    for _, dag_hash, _, _, compiler, *_, node in specs:
        edges = json.loads(node).get("dependencies") or []
        compiling = {
            named[e["hash"]]
            for e in (edges if isinstance(edges, list) else [])
            if isinstance(e, dict)
            and isinstance(e.get("parameters"), dict)
            and {"c", "cxx", "fortran"} & set(e["parameters"].get("virtuals") or ())
            and e.get("hash") in named
        }
        found[dag_hash] = frozenset({compiler, *compiling})
    return found


def spec_row(catalog: Catalog, dag_hash: str) -> dict[str, object] | None:
    """One spec as a dict of its columns (variants decoded), or None."""
    cursor = _db(catalog).execute(
        "SELECT hash, name, version, platform, os, target, compiler, variants, external, size FROM specs "
        "WHERE hash = ?",
        (dag_hash,),
    )
    row = cursor.fetchone()
    if row is None:
        return None
    result = dict(zip([d[0] for d in cursor.description], row, strict=True))
    result["variants"] = msgspec.json.decode(str(result["variants"]))
    return result


@dataclass(frozen=True)
class Listed:
    """A listed spec with its variants and stacks decoded (what pages show)."""

    name: str
    hash: str
    version: str
    platform: str
    os: str
    target: str
    compiler: str
    variants: tuple[str, ...]
    size: int | None
    stacks: tuple[str, ...]
    other_compilers: tuple[str, ...] = ()  #: (by :func:`compilers_of`, sorted)


def listed_specs(catalog: Catalog, tag: str) -> list[Listed]:
    """The specs ``tag``'s root mirror lists, decoded, by package name then hash, each
    with its other compilers as a brute force reads them (:func:`compilers_of`)."""
    compilers = compilers_of(catalog)
    return [
        Listed(
            name=row.name,
            hash=row.hash,
            version=row.version,
            platform=row.platform,
            os=row.os,
            target=row.target,
            compiler=row.compiler,
            variants=tuple(msgspec.json.decode(row.variants)),
            size=row.size,
            stacks=tuple(sorted(row.stacks.split("\x1f"))),
            other_compilers=tuple(sorted(compilers[row.hash] - {row.compiler})),
        )
        for row in catalog.listed_rows(tag)
    ]


class Named(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def hash(self) -> str: ...


N = TypeVar("N", bound=Named)


def in_result_order(specs: Iterable[N]) -> list[N]:
    """``specs`` as search results come: by name, newest version first in Spack's order,
    then by hash (three stable sorts, written apart from the catalog's one key)."""
    by_hash = sorted(specs, key=lambda s: s.hash)
    newest_first = sorted(by_hash, key=lambda s: (version_key(s.version), s.version), reverse=True)
    return sorted(newest_first, key=lambda s: s.name)


# -- the demo and servers ---------------------------------------------------------------------


@dataclass(frozen=True)
class Demo:
    """``cachedex demo`` run once per test session: mirrors, catalog, Jekyll tree, site."""

    folder: Path
    output: str

    @property
    def config(self) -> Path:
        return self.folder / "cachedex.yaml"

    @property
    def catalog(self) -> Path:
        return self.folder / "cachedex.sqlite"

    @property
    def site(self) -> Path:
        return self.folder / "site"


class StaticServer:
    """A plain static file server (Python's http.server) on 127.0.0.1, in a thread."""

    def __init__(self, root: Path) -> None:
        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def file_bytes(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (by path relative to it) with its bytes: two output
    folders compared file for file."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@contextlib.contextmanager
def one_worker_at_a_time(lock: Path) -> Iterator[None]:
    """Hold the file lock ``lock`` (made if missing) while the block runs: pytest-xdist's
    workers take turns, so the first makes what the others then find made."""
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def as_row(spec: Listed) -> ListedRow:
    """A :class:`Listed` spec as the catalog's bulk reads give it."""
    return listed_row(
        hash=spec.hash,
        name=spec.name,
        version=spec.version,
        compiler=spec.compiler,
        platform=spec.platform,
        os=spec.os,
        target=spec.target,
        variants=spec.variants,
        size=spec.size,
        stacks=spec.stacks,
    )
