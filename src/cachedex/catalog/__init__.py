"""The SQLite catalog: schema, migrations, writes and named queries. All SQL lives here.

Layout (see ``docs/catalog.md`` for the full reference):

- ``specs``    one row per DAG hash, whatever number of tags hold it
- ``edges``    dependency edges between specs (deptypes as a bit mask, virtuals)
- ``tags`` / ``mirrors``  a tag has a root mirror and one mirror per stack, each
  with its sync state (URL, layout, Database version, checksum, HTTP validators)
- ``members``  which records each mirror's index holds, and whether listed
  (``in_buildcache``)
- ``syncs`` / ``changes``  history: what each sync of a mirror added or dropped

The file is plain SQLite in WAL mode, so ``sqlite3`` and datasette can read it while a
sync writes. One tag is written in one transaction: a failure leaves it as it was.
"""

from __future__ import annotations

import heapq
import itertools
import json
import sqlite3
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from ..errors import CatalogError
from ..query import Query, VersionRange, target_family, variants_satisfy, version_satisfies
from ..values import SpecRecord

__all__ = [
    "SCHEMA_VERSION",
    "Catalog",
    "ListedSpec",
    "MirrorState",
    "TagStats",
    "TagWriter",
    "package_names_of",
]

#: Version of the schema this code writes; stored in ``PRAGMA user_version``.
SCHEMA_VERSION = 3

_SCHEMA_V1 = """
CREATE TABLE specs (
    id        INTEGER PRIMARY KEY,
    hash      TEXT NOT NULL,
    name      TEXT NOT NULL,
    version   TEXT NOT NULL,
    platform  TEXT NOT NULL,
    os        TEXT NOT NULL,
    target    TEXT NOT NULL,
    compiler  TEXT NOT NULL,
    variants  TEXT NOT NULL,        -- JSON list of display strings, stored order
    external  INTEGER NOT NULL,
    size      INTEGER,              -- bytes of the binary; NULL when unknown
    node      TEXT NOT NULL         -- the node dict as the index holds it
);
CREATE UNIQUE INDEX specs_hash ON specs (hash);
CREATE INDEX specs_name ON specs (name, version);

CREATE TABLE edges (
    parent    INTEGER NOT NULL REFERENCES specs (id),
    child     INTEGER NOT NULL REFERENCES specs (id),  -- the edge's name is the child's name
    deptypes  INTEGER NOT NULL,     -- bits: build 1, link 2, run 4, test 8
    virtuals  TEXT NOT NULL,        -- comma-separated, '' when none
    PRIMARY KEY (parent, child)
) WITHOUT ROWID;
CREATE INDEX edges_child ON edges (child);

CREATE TABLE tags (
    id        INTEGER PRIMARY KEY,
    name      TEXT NOT NULL UNIQUE,
    synced_at REAL,
    -- totals as of the last sync, so that reading them costs nothing
    records   INTEGER NOT NULL DEFAULT 0,   -- distinct records over all its mirrors
    specs     INTEGER NOT NULL DEFAULT 0,   -- listed by the root mirror
    packages  INTEGER NOT NULL DEFAULT 0,   -- distinct names of listed specs
    size      INTEGER NOT NULL DEFAULT 0,   -- bytes of the listed specs whose size is known
    sized     INTEGER NOT NULL DEFAULT 0    -- listed specs whose size is known
);

CREATE TABLE mirrors (
    id            INTEGER PRIMARY KEY,
    tag_id        INTEGER NOT NULL REFERENCES tags (id),
    stack         TEXT NOT NULL,    -- 'root' for the tag's own mirror
    url           TEXT NOT NULL,
    layout        INTEGER,
    db_version    INTEGER,
    checksum      TEXT,
    etag          TEXT,
    last_modified TEXT,
    fetched_at    REAL,
    records       INTEGER,
    listed        INTEGER,
    UNIQUE (tag_id, stack)
);

CREATE TABLE members (
    mirror_id INTEGER NOT NULL REFERENCES mirrors (id),
    spec_id   INTEGER NOT NULL REFERENCES specs (id),
    listed    INTEGER NOT NULL,     -- in_buildcache in that mirror's index
    PRIMARY KEY (mirror_id, spec_id)
) WITHOUT ROWID;
CREATE INDEX members_spec ON members (spec_id);

CREATE TABLE syncs (
    id          INTEGER PRIMARY KEY,
    tag_id      INTEGER NOT NULL REFERENCES tags (id),
    started_at  REAL NOT NULL,
    finished_at REAL NOT NULL,
    added       INTEGER NOT NULL,   -- listed specs of the tag added by this sync
    removed     INTEGER NOT NULL
);

-- Only changes after a mirror's first sync are recorded: the state at any time T is
-- today's members minus what was added after T plus what was removed after T.
CREATE TABLE changes (
    sync_id   INTEGER NOT NULL REFERENCES syncs (id),
    mirror_id INTEGER NOT NULL REFERENCES mirrors (id),
    spec_id   INTEGER NOT NULL REFERENCES specs (id),
    change    INTEGER NOT NULL      -- +1 became listed, -1 no longer listed
);
CREATE INDEX changes_sync ON changes (sync_id);
CREATE INDEX changes_mirror ON changes (mirror_id, sync_id);
"""

#: Secondary indexes that a bulk load drops and rebuilds (name -> CREATE statement).
_BULK_INDEXES = {
    "specs_hash": "CREATE UNIQUE INDEX specs_hash ON specs (hash)",
    "specs_name": "CREATE INDEX specs_name ON specs (name, version)",
    "edges_child": "CREATE INDEX edges_child ON edges (child)",
    "specs_target": "CREATE INDEX specs_target ON specs (target)",
    "specs_os": "CREATE INDEX specs_os ON specs (os)",
    "specs_compiler": "CREATE INDEX specs_compiler ON specs (compiler)",
}

#: migrations[n] upgrades a catalog from user_version n to n + 1.
# The raw node is cold data (only a spec's own page shows it). Out of the specs table,
# whose rows every listing and query scans, those rows stay ~150 bytes instead of ~2 KB:
# reading a 250k-spec tag's listing is then several times faster.
_V1_TO_V2 = """
CREATE TABLE nodes (
    spec_id   INTEGER PRIMARY KEY REFERENCES specs (id),
    node      TEXT NOT NULL         -- the node dict as the index holds it
);
INSERT INTO nodes SELECT id, node FROM specs;
ALTER TABLE specs DROP COLUMN node;
"""

# Queries name a target, an os or a compiler without a package: answer them from indexes.
_V2_TO_V3 = """
CREATE INDEX specs_target ON specs (target);
CREATE INDEX specs_os ON specs (os);
CREATE INDEX specs_compiler ON specs (compiler);
"""

_MIGRATIONS: dict[int, str] = {0: _SCHEMA_V1, 1: _V1_TO_V2, 2: _V2_TO_V3}


class MirrorState(msgspec.Struct, frozen=True):
    """A mirror's row: where it is and what its last successful sync found."""

    tag: str
    stack: str
    url: str
    layout: int | None
    db_version: int | None
    checksum: str | None
    etag: str | None
    last_modified: str | None
    fetched_at: float | None
    records: int | None
    listed: int | None


class ListedSpec(msgspec.Struct, frozen=True):
    """A spec listed by a tag's root mirror, with the tag's stacks whose index holds it."""

    name: str
    hash: str
    version: str
    platform: str
    os: str
    target: str
    compiler: str
    variants: tuple[str, ...]
    size: int | None
    stacks: tuple[str, ...]  # sorted, 'root' included


class TagStats(msgspec.Struct, frozen=True):
    """Totals of one tag, as ``cachedex stats`` prints them."""

    tag: str
    records: int
    specs: int
    packages: int
    stacks: int
    size: int
    sized: int
    synced_at: float | None
    added: int
    removed: int


class Catalog:
    """An open catalog file. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        try:
            if readonly:
                if not path.exists():
                    raise CatalogError(f"{path}: no catalog here yet; run 'cachedex sync' first")
                self._db = sqlite3.connect(
                    f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
                )
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                # A first sync inserts millions of index entries; keep the B-trees in memory.
                self._db.execute("PRAGMA cache_size=-131072")
            # What SQL cannot compare (Spack versions, variant sets) is checked by these,
            # on rows the indexes already narrowed.
            self._db.create_function("cx_version", 2, _sql_version, deterministic=True)
            self._db.create_function("cx_variants", 2, _sql_variants, deterministic=True)
            self._db.execute("PRAGMA busy_timeout=10000")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise CatalogError(f"{path}: cannot open the catalog ({exc})") from None

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    # -- schema ------------------------------------------------------------------

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise CatalogError(
                f"{self.path}: catalog schema {version} is newer than this cachedex "
                f"understands ({SCHEMA_VERSION}); upgrade cachedex"
            )
        if version == SCHEMA_VERSION:
            return
        if self.readonly:
            raise CatalogError(f"{self.path}: catalog schema {version} needs an upgrade; run 'cachedex sync' once")
        self._db.execute("BEGIN IMMEDIATE")
        try:
            while version < SCHEMA_VERSION:
                for statement in _split_sql(_MIGRATIONS[version]):
                    self._db.execute(statement)
                version += 1
                self._db.execute(f"PRAGMA user_version={version}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    @property
    def schema_version(self) -> int:
        """The schema version of the open file."""
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    # -- reads -------------------------------------------------------------------

    def mirror_state(self, tag: str, stack: str) -> MirrorState | None:
        """The stored state of one mirror, or None if it was never synced."""
        row = self._db.execute(
            f"SELECT {_MIRROR_COLUMNS} FROM mirrors m JOIN tags t ON t.id = m.tag_id WHERE t.name = ? AND m.stack = ?",
            (tag, stack),
        ).fetchone()
        return MirrorState(*row) if row else None

    def mirrors(self, tag: str | None = None) -> list[MirrorState]:
        """All mirrors (of one tag), sorted by tag then stack with root first."""
        sql = (
            f"SELECT {_MIRROR_COLUMNS} FROM mirrors m JOIN tags t ON t.id = m.tag_id "
            + ("WHERE t.name = ? " if tag else "")
            + "ORDER BY t.name, m.stack != 'root', m.stack"
        )
        return [MirrorState(*row) for row in self._db.execute(sql, (tag,) if tag else ())]

    def tag_names(self) -> list[str]:
        """Names of the tags in the catalog, sorted."""
        return [row[0] for row in self._db.execute("SELECT name FROM tags ORDER BY name")]

    def spec_ids(self, hashes: Iterable[str]) -> dict[str, int]:
        """Map the given hashes to the ids of the specs the catalog already has."""
        payload = json.dumps(list(hashes))
        return dict(
            self._db.execute(
                "SELECT hash, id FROM specs WHERE hash IN (SELECT value FROM json_each(?))",
                (payload,),
            )
        )

    def sized_hashes(self, hashes: Iterable[str]) -> set[str]:
        """Those of ``hashes`` whose binary size the catalog already knows."""
        payload = json.dumps(list(hashes))
        return {
            row[0]
            for row in self._db.execute(
                "SELECT hash FROM specs WHERE size IS NOT NULL AND hash IN (SELECT value FROM json_each(?))",
                (payload,),
            )
        }

    def size_keys(self, hashes: Iterable[str]) -> list[tuple[str, str, str, str, str, str, str]]:
        """(hash, name, version, platform, os, target, compiler) of known specs: what
        locating a spec's manifest or tarball needs."""
        return list(
            self._db.execute(
                "SELECT hash, name, version, platform, os, target, compiler FROM specs "
                "WHERE hash IN (SELECT value FROM json_each(?)) ORDER BY hash",
                (json.dumps(list(hashes)),),
            )
        )

    def tag_stats(self, tags: Iterable[str] | None = None) -> list[TagStats]:
        """Totals per tag: records, listed specs, packages, stacks, sizes, last changes."""
        known = self.tag_names()
        wanted = known if tags is None else [tag for tag in tags if tag in known]
        return [self._one_tag_stats(tag) for tag in wanted]

    def _one_tag_stats(self, tag: str) -> TagStats:
        tag_id, synced_at, records, specs, packages, size, sized = self._db.execute(
            "SELECT id, synced_at, records, specs, packages, size, sized FROM tags WHERE name = ?",
            (tag,),
        ).fetchone()
        stacks = self._db.execute(
            "SELECT count(*) FROM mirrors WHERE tag_id = ? AND stack != 'root'", (tag_id,)
        ).fetchone()[0]
        last = self._db.execute(
            "SELECT added, removed FROM syncs WHERE tag_id = ? ORDER BY id DESC LIMIT 1", (tag_id,)
        ).fetchone()
        added, removed = last if last else (0, 0)
        return TagStats(tag, records, specs, packages, stacks, size, sized, synced_at, added, removed)

    def listed_specs(self, tag: str) -> Iterator[ListedSpec]:
        """Specs listed by ``tag``'s root mirror, ordered by package name then hash.

        Streams from a cursor, so memory does not grow with the size of the tag. A spec's
        stacks are every mirror of the tag whose index holds the hash (listed or not),
        as cache.spack.io counts them (format doc §6.3).
        """
        decode = _variants_decoder.decode
        for name, dag_hash, version, compiler, os, platform, target, variants, size, stacks in self.listed_spec_rows(
            tag
        ):
            yield ListedSpec(
                name,
                dag_hash,
                version,
                platform,
                os,
                target,
                compiler,
                decode(variants),
                size,
                tuple(sorted(stacks.split("\x1f"))),
            )

    def history(self, tag: str) -> list[tuple[float, int, int]]:
        """(finished_at, added, removed) of every sync of ``tag``, oldest first."""
        return list(
            self._db.execute(
                "SELECT finished_at, added, removed FROM syncs "
                "WHERE tag_id = (SELECT id FROM tags WHERE name = ?) ORDER BY id",
                (tag,),
            )
        )

    def changes(self, tag: str, stack: str = "root") -> list[tuple[float, str, str, int]]:
        """(when, hash, package, +1/-1) of every recorded change of one mirror, oldest first."""
        return list(
            self._db.execute(
                "SELECT y.finished_at, s.hash, s.name, c.change FROM changes c "
                "JOIN syncs y ON y.id = c.sync_id JOIN specs s ON s.id = c.spec_id "
                "JOIN mirrors m ON m.id = c.mirror_id JOIN tags t ON t.id = m.tag_id "
                "WHERE t.name = ? AND m.stack = ? ORDER BY y.id, s.hash",
                (tag, stack),
            )
        )

    def listed_hashes(self, tag: str, stack: str = "root") -> set[str]:
        """Hashes listed (``in_buildcache``) by one mirror of a tag."""
        return {
            row[0]
            for row in self._db.execute(
                "SELECT s.hash FROM members mb JOIN specs s ON s.id = mb.spec_id "
                "JOIN mirrors m ON m.id = mb.mirror_id JOIN tags t ON t.id = m.tag_id "
                "WHERE t.name = ? AND m.stack = ? AND mb.listed",
                (tag, stack),
            )
        }

    def spec_row(self, dag_hash: str) -> dict[str, object] | None:
        """One spec as a dict of its columns, or None (the raw node: :meth:`node`)."""
        cursor = self._db.execute(
            "SELECT hash, name, version, platform, os, target, compiler, variants, external, "
            "size FROM specs WHERE hash = ?",
            (dag_hash,),
        )
        row = cursor.fetchone()
        if row is None:
            return None
        result = dict(zip([d[0] for d in cursor.description], row, strict=True))
        result["variants"] = json.loads(str(result["variants"]))
        return result

    def node(self, dag_hash: str) -> str | None:
        """The raw node JSON of a spec, as its index held it, or None."""
        row = self._db.execute(
            "SELECT n.node FROM nodes n JOIN specs s ON s.id = n.spec_id WHERE s.hash = ?",
            (dag_hash,),
        ).fetchone()
        return None if row is None else str(row[0])

    def dependencies(self, dag_hash: str) -> list[tuple[str, str, int, str]]:
        """(child hash, name, deptypes mask, virtuals) of the direct dependencies of a spec."""
        return list(
            self._db.execute(
                "SELECT c.hash, c.name, e.deptypes, e.virtuals FROM edges e "
                "JOIN specs p ON p.id = e.parent JOIN specs c ON c.id = e.child "
                "WHERE p.hash = ? ORDER BY c.name, c.hash",
                (dag_hash,),
            )
        )

    def integrity_check(self) -> str:
        """SQLite's own integrity check ('ok' when the file is sound)."""
        return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])

    def dump(self) -> list[tuple[object, ...]]:
        """Every row of every table, for tests that prove a failed sync changed nothing."""
        rows: list[tuple[object, ...]] = []
        for (table,) in self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        ).fetchall():
            rows.extend((table, *row) for row in self._db.execute(f"SELECT * FROM {table} ORDER BY 1, 2"))
        return rows

    # -- writes ------------------------------------------------------------------

    @contextmanager
    def writing_tag(self, tag: str) -> Iterator[TagWriter]:
        """A transaction that rewrites one tag; rolled back if the block raises."""
        if self.readonly:
            raise CatalogError(f"{self.path}: opened read-only")
        self._db.execute("BEGIN IMMEDIATE")
        try:
            writer = TagWriter(self._db, tag)
            yield writer
            writer._finish()
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    # -- reads for the Jekyll site -------------------------------------------------

    def listed_spec_rows(
        self, tag: str, *, part: int = 0, parts: int = 1
    ) -> Iterator[tuple[str, str, str, str, str, str, str, str, int | None, str]]:
        """The rows of :meth:`listed_specs`, undecoded, for writers that emit JSON text.

        Yields ``(name, hash, version, compiler, os, platform, target, variants, size,
        stacks)`` ordered by package name then hash, streamed from a cursor (memory does
        not grow with the tag). ``variants`` is the stored JSON list of display strings
        (compact, as msgspec wrote it); ``stacks`` is the names of the tag's mirrors
        whose index holds the hash, 'root' included, joined by ``\\x1f``, unsorted.
        Nothing for an unknown tag. About twice as fast as :meth:`listed_specs`.

        ``parts`` > 1 splits the packages into that many groups by a cheap function of
        the name and yields only group ``part`` (0-based): processes can each write a
        share of a big tag, every package whole in exactly one share.
        """
        if not 0 <= part < parts:
            raise ValueError(f"part must be in 0..{parts - 1}, got {part}")
        row = self._db.execute(
            "SELECT m.id, m.tag_id FROM mirrors m JOIN tags t ON t.id = m.tag_id WHERE t.name = ? AND m.stack = 'root'",
            (tag,),
        ).fetchone()
        if row is None:
            return
        root_id, tag_id = row
        # Length plus the last two characters (padded: never NULL) spread names evenly.
        share = (
            " AND (length(s.name) + unicode(substr(' ' || s.name, -1)) + unicode(substr('  ' || s.name, -2))) % ? = ?"
            if parts > 1
            else ""
        )
        cursor = self._db.execute(
            "SELECT s.name, s.hash, s.version, s.compiler, s.os, s.platform, s.target, "
            "s.variants, s.size, (SELECT group_concat(m2.stack, char(31)) FROM members mb2 "
            "JOIN mirrors m2 ON m2.id = mb2.mirror_id WHERE mb2.spec_id = s.id "
            "AND m2.tag_id = ?) FROM members mb JOIN specs s ON s.id = mb.spec_id "
            f"WHERE mb.mirror_id = ? AND mb.listed{share} ORDER BY s.name, s.hash",
            (tag_id, root_id, parts, part) if parts > 1 else (tag_id, root_id),
        )
        while batch := cursor.fetchmany(2000):
            yield from batch

    # -- bulk reads for writing every spec page at once ----------------------------

    def all_spec_rows(self) -> Iterator[tuple[int, str, str, str, str, str, str, str, str, int | None, bool]]:
        """``(id, hash, name, version, compiler, platform, os, target, variants, size,
        listed)`` of every spec; ``variants`` is the stored JSON text, ``listed`` whether
        some mirror has its binary."""
        cursor = self._db.execute(
            "SELECT s.id, s.hash, s.name, s.version, s.compiler, s.platform, s.os, s.target, s.variants, "
            "s.size, EXISTS (SELECT 1 FROM members mb WHERE mb.spec_id = s.id AND mb.listed) FROM specs s"
        )
        while batch := cursor.fetchmany(5000):
            yield from ((*row[:10], bool(row[10])) for row in batch)

    def all_edge_rows(self) -> Iterator[tuple[int, int, int, str]]:
        """``(parent id, child id, deptypes, virtuals)`` of every edge."""
        cursor = self._db.execute("SELECT parent, child, deptypes, virtuals FROM edges")
        while batch := cursor.fetchmany(20000):
            yield from batch

    def all_holder_rows(self) -> Iterator[tuple[int, str, str, bool, str]]:
        """``(spec id, tag, stack, listed, mirror URL)`` of every mirror's records, in
        the order of :meth:`holders` for each spec."""
        cursor = self._db.execute(
            "SELECT mb.spec_id, t.name, m.stack, mb.listed, m.url FROM members mb "
            "JOIN mirrors m ON m.id = mb.mirror_id JOIN tags t ON t.id = m.tag_id "
            "ORDER BY t.name, m.stack != 'root', m.stack"
        )
        while batch := cursor.fetchmany(20000):
            yield from ((i, t, m, bool(listed), u) for i, t, m, listed, u in batch)

    def root_listing_tags(self) -> Iterator[tuple[int, str]]:
        """``(spec id, tag)`` for every tag whose root mirror lists a spec, tags in order."""
        cursor = self._db.execute(
            "SELECT mb.spec_id, t.name FROM members mb JOIN mirrors m ON m.id = mb.mirror_id "
            "JOIN tags t ON t.id = m.tag_id WHERE mb.listed AND m.stack = 'root' ORDER BY t.name"
        )
        while batch := cursor.fetchmany(20000):
            yield from batch

    def nodes_of(self, ids: Sequence[int]) -> Iterator[tuple[int, str]]:
        """``(spec id, raw node JSON)`` for the given ids, in ascending id order."""
        wanted = sorted(ids)
        for start in range(0, len(wanted), 5000):
            chunk = wanted[start : start + 5000]
            yield from self._db.execute(
                "SELECT spec_id, node FROM nodes WHERE spec_id IN (SELECT value FROM json_each(?)) ORDER BY spec_id",
                (json.dumps(chunk),),
            )

    # -- reads for queries, diffs and the API ---------------------------------------

    def search(
        self,
        query: Query,
        *,
        tag: str | None = None,
        stack: str | None = None,
        limit: int = 50,
        offset: int = 0,
        explain: bool = False,
    ) -> SearchPage:
        """Listed specs satisfying ``query``, ordered by name, version and hash.

        ``tag`` limits the search to that tag's listed specs (``stack`` further to those
        its stack holds) and fills each row's ``stacks``; without a tag, every spec some
        mirror lists, with the tags listing it. Raises CatalogError for an unknown tag or
        stack. ``explain`` returns SQLite's plan of the rows' query (a list of lines)
        instead, for tests and curious users.

        How it stays quick on a big tag:
        - indexed columns (name, hash, target, os, compiler) narrow the rows first;
        - a query of facets only (target, os, compiler, platform), which may match tens
          of thousands of specs, is answered by the scope's :class:`_FacetIndex`, built
          once per catalog state and shared by the connections of the process.
        """
        with self.snapshot():
            token = self.state_token()[0]
            mirrors = self._scope_mirrors(tag, stack)
            facets = _facet_terms(query, lambda: self._remembered(token, ("compilers",), self._compilers))
            facets_only = query.name is None and query.hash_prefix is None and not query.versions and not query.variants
            if facets_only:
                index = self._facet_index_of(token, *mirrors)
                total, ids = index.matches(facets, offset, limit)
                if explain:
                    plan = [f"facet index of {index.size} specs in {len(index.groups)} groups"]
                    return plan  # type: ignore[return-value]
                condition, all_params = "s.id IN (SELECT value FROM json_each(?))", [json.dumps(ids)]
                rows = self._found_rows(tag, condition, all_params, limit, 0) if ids else []
            else:
                where, params = _query_sql(query, facets)
                scope, scope_params = _scope_sql(*mirrors)
                condition = " AND ".join([*where, scope])
                all_params = [*params, *scope_params]
                if explain:
                    plan = self._db.execute(
                        f"EXPLAIN QUERY PLAN SELECT s.id FROM specs s WHERE {condition} "
                        "ORDER BY s.name, s.version, s.hash LIMIT ? OFFSET ?",
                        [*all_params, limit, offset],
                    )
                    return [str(row[-1]) for row in plan]  # type: ignore[return-value]
                (total,) = self._db.execute(f"SELECT count(*) FROM specs s WHERE {condition}", all_params).fetchone()
                rows = self._found_rows(tag, condition, all_params, limit, offset) if total > offset else []
        decode = _variants_decoder.decode
        found = tuple(
            SpecSummary(
                hash=h,
                name=n,
                version=v,
                compiler=c,
                platform=p,
                os=o,
                target=t,
                variants=decode(var),
                size=size,
                tags=(tag,) if tag is not None else tuple(sorted(set((held or "").split(",")) - {""})),
                stacks=tuple(sorted((held or "").split(","))) if tag is not None else (),
            )
            for h, n, v, c, p, o, t, var, size, held in rows
        )
        return SearchPage(total=total, offset=offset, limit=limit, specs=found)

    def _scope_mirrors(self, tag: str | None, stack: str | None) -> tuple[int | None, int | None]:
        """(root mirror id, stack mirror id) of a search's scope: (None, None) for every
        listed spec of the catalog, (root, None) for a tag (or its stack 'root')."""
        if tag is None:
            if stack is not None:
                raise CatalogError("a stack needs a tag")
            return None, None
        mirrors = dict(
            self._db.execute(
                "SELECT m.stack, m.id FROM mirrors m JOIN tags t ON t.id = m.tag_id WHERE t.name = ?",
                (tag,),
            ).fetchall()
        )
        if "root" not in mirrors:
            raise CatalogError(f"unknown tag {tag!r}; run 'cachedex stats' to list tags")
        if stack is None or stack == "root":
            return mirrors["root"], None
        if stack not in mirrors:
            raise CatalogError(f"tag {tag!r} has no stack {stack!r}")
        return mirrors["root"], mirrors[stack]

    def warm_search(self) -> int:
        """Build now what the first facet query of each scope (the whole catalog, each
        tag, each of its stacks) would otherwise build: a server calls this at start and
        after a sync. Returns the number of scopes."""
        with self.snapshot():
            token = self.state_token()[0]
            self._remembered(token, ("compilers",), self._compilers)
            scopes = [(None, None)] + [(m.tag, m.stack) for m in self.mirrors()]
            for tag, stack in scopes:
                self._facet_index_of(token, *self._scope_mirrors(tag, stack))
        return len(scopes)

    def _facet_index_of(self, token: str, root: int | None, stack: int | None) -> _FacetIndex:
        return self._remembered(token, ("facets", root, stack), lambda: self._facet_index(root, stack))

    def _facet_index(self, root: int | None, stack: int | None) -> _FacetIndex:
        """The :class:`_FacetIndex` of a search scope (see :meth:`_scope_mirrors`): one
        ordered pass over its specs, driven by the smallest membership list that
        defines it."""
        if root is None:
            source = "specs s"
            where, params = _scope_sql(None, None)
        elif stack is None:
            source = "members mb0 JOIN specs s ON s.id = mb0.spec_id"
            where, params = "mb0.mirror_id = ? AND mb0.listed", [root]
        else:
            source = "members mb0 JOIN specs s ON s.id = mb0.spec_id"
            where = (
                "mb0.mirror_id = ? AND EXISTS (SELECT 1 FROM members mb WHERE mb.mirror_id = ? "
                "AND mb.spec_id = s.id AND mb.listed)"
            )
            params = [stack, root]
        return _FacetIndex(
            self._db.execute(
                f"SELECT s.id, s.target, s.os, s.compiler, s.platform FROM {source} WHERE {where} "
                "ORDER BY s.name, s.version, s.hash",
                params,
            )
        )

    def _found_rows(
        self, tag: str | None, condition: str, params: list[object], limit: int, offset: int
    ) -> list[tuple[Any, ...]]:
        if tag is None:
            holders = (
                "(SELECT group_concat(DISTINCT t.name) FROM members mb JOIN mirrors m "
                "ON m.id = mb.mirror_id JOIN tags t ON t.id = m.tag_id "
                "WHERE mb.spec_id = s.id AND mb.listed AND m.stack = 'root')"
            )
            extra: list[object] = []
        else:
            holders = (
                "(SELECT group_concat(m.stack) FROM members mb JOIN mirrors m "
                "ON m.id = mb.mirror_id JOIN tags t ON t.id = m.tag_id "
                "WHERE mb.spec_id = s.id AND t.name = ?)"
            )
            extra = [tag]
        return self._db.execute(
            "SELECT s.hash, s.name, s.version, s.compiler, s.platform, s.os, s.target, s.variants, "
            f"s.size, {holders} FROM specs s WHERE {condition} "
            "ORDER BY s.name, s.version, s.hash LIMIT ? OFFSET ?",
            [*extra, *params, limit, offset],
        ).fetchall()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every statement inside sees the same catalog state,
        even while a sync commits."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            self._db.execute("COMMIT")

    #: Values derived from a catalog state, shared by every connection of the process:
    #: (catalog path, state token, key) -> value, least recently used dropped first.
    _memo: ClassVar[OrderedDict[tuple[str, str, tuple[object, ...]], Any]] = OrderedDict()
    _memo_lock: ClassVar[threading.Lock] = threading.Lock()
    _MEMO_SIZE: ClassVar[int] = 4096  # a facet index per tag and stack, mostly

    def _remembered(self, token: str, key: tuple[object, ...], compute: Callable[[], Any]) -> Any:
        full = (str(self.path), token, key)
        with self._memo_lock:
            if full in self._memo:
                self._memo.move_to_end(full)
                return self._memo[full]
        value = compute()
        with self._memo_lock:
            self._memo[full] = value
            while len(self._memo) > self._MEMO_SIZE:
                self._memo.popitem(last=False)
        return value

    def _compilers(self) -> list[str]:
        """The distinct compiler strings (a few dozen), so that a compiler test becomes
        ``compiler IN (...)`` on the index instead of a check on every row."""
        return [row[0] for row in self._db.execute("SELECT DISTINCT compiler FROM specs")]

    def spec_summary(self, dag_hash: str) -> SpecSummary | None:
        """One spec with every tag listing it (``stacks`` empty), or None."""
        found = self.search(Query(hash_prefix=dag_hash), limit=2).specs
        exact = [s for s in found if s.hash == dag_hash]
        if exact:
            return exact[0]
        row = self.spec_row(dag_hash)  # a record no mirror lists (a compiler, an external)
        if row is None:
            return None
        return SpecSummary(
            hash=dag_hash,
            name=str(row["name"]),
            version=str(row["version"]),
            compiler=str(row["compiler"]),
            platform=str(row["platform"]),
            os=str(row["os"]),
            target=str(row["target"]),
            variants=tuple(row["variants"]),  # type: ignore[arg-type]
            size=row["size"],
            tags=(),
            stacks=(),  # type: ignore[arg-type]
        )

    def holders(self, dag_hash: str) -> list[tuple[str, str, bool, str]]:
        """(tag, stack, listed, mirror URL) of every mirror whose index holds a hash."""
        return list(
            self._db.execute(
                "SELECT t.name, m.stack, mb.listed, m.url FROM specs s "
                "JOIN members mb ON mb.spec_id = s.id JOIN mirrors m ON m.id = mb.mirror_id "
                "JOIN tags t ON t.id = m.tag_id WHERE s.hash = ? "
                "ORDER BY t.name, m.stack != 'root', m.stack",
                (dag_hash,),
            )
        )

    def edges_of(self, dag_hash: str, *, reverse: bool = False) -> list[Edge]:
        """Direct dependencies of a spec (or, ``reverse``, its direct dependents)."""
        near, far = ("child", "parent") if reverse else ("parent", "child")
        return [
            Edge(row[0], row[1], row[2], bool(row[5]), row[6], row[3], row[4])
            for row in self._db.execute(
                f"SELECT o.hash, o.name, o.version, e.deptypes, e.virtuals, "
                "EXISTS (SELECT 1 FROM members mb WHERE mb.spec_id = o.id AND mb.listed), o.size "
                f"FROM edges e JOIN specs me ON me.id = e.{near} JOIN specs o ON o.id = e.{far} "
                "WHERE me.hash = ? ORDER BY o.name, o.version, o.hash",
                (dag_hash,),
            )
        ]

    def closure(self, dag_hash: str, *, mask: int = 0b110) -> list[Edge]:
        """Every spec reachable from a spec through edges whose deptypes meet ``mask``
        (default link and run: what installing the binary downloads), itself excluded."""
        return [
            Edge(h, n, v, bool(listed), size)
            for h, n, v, listed, size in self._db.execute(
                "WITH RECURSIVE reach(id) AS ("
                " SELECT e.child FROM edges e JOIN specs s ON s.id = e.parent"
                "  WHERE s.hash = ? AND e.deptypes & ?"
                " UNION SELECT e.child FROM edges e JOIN reach r ON e.parent = r.id WHERE e.deptypes & ?)"
                " SELECT s.hash, s.name, s.version, "
                " EXISTS (SELECT 1 FROM members mb WHERE mb.spec_id = s.id AND mb.listed), s.size "
                " FROM reach JOIN specs s ON s.id = reach.id ORDER BY s.name, s.hash",
                (dag_hash, mask, mask),
            )
        ]

    def package_tags(self, name: str) -> list[tuple[str, int]]:
        """(tag, listed specs) of every tag whose root mirror lists a package."""
        return list(
            self._db.execute(
                "SELECT t.name, count(*) FROM specs s JOIN members mb ON mb.spec_id = s.id AND mb.listed "
                "JOIN mirrors m ON m.id = mb.mirror_id AND m.stack = 'root' JOIN tags t ON t.id = m.tag_id "
                "WHERE s.name = ? GROUP BY t.name ORDER BY t.name",
                (name,),
            )
        )

    def all_package_tags(self) -> dict[str, list[tuple[str, int]]]:
        """{package: :meth:`package_tags` of it} for every package, in one pass."""
        result: dict[str, list[tuple[str, int]]] = {}
        for name, tag, count in self._db.execute(
            "SELECT s.name, t.name, count(*) FROM specs s JOIN members mb ON mb.spec_id = s.id AND mb.listed "
            "JOIN mirrors m ON m.id = mb.mirror_id AND m.stack = 'root' JOIN tags t ON t.id = m.tag_id "
            "GROUP BY s.name, t.name ORDER BY t.name"
        ):
            result.setdefault(name, []).append((tag, count))
        return result

    def tag_members(self, tag: str) -> dict[str, dict[str, tuple[str, str]]]:
        """{stack: {hash: (name, version)}} of the listed specs of every mirror of a tag
        (a stack's own listing), for diffs."""
        result: dict[str, dict[str, tuple[str, str]]] = {}
        for stack, dag_hash, name, version in self._db.execute(
            "SELECT m.stack, s.hash, s.name, s.version FROM mirrors m JOIN tags t ON t.id = m.tag_id "
            "JOIN members mb ON mb.mirror_id = m.id AND mb.listed JOIN specs s ON s.id = mb.spec_id "
            "WHERE t.name = ?",
            (tag,),
        ):
            result.setdefault(stack, {})[dag_hash] = (name, version)
        return result

    def changes_since(self, tag: str, since: float) -> list[tuple[str, str, str, str, int]]:
        """(stack, hash, name, version, +1/-1) of listing changes of a tag's mirrors
        recorded by syncs that finished after ``since`` (epoch seconds), oldest first."""
        return list(
            self._db.execute(
                "SELECT m.stack, s.hash, s.name, s.version, c.change FROM changes c "
                "JOIN syncs y ON y.id = c.sync_id JOIN specs s ON s.id = c.spec_id "
                "JOIN mirrors m ON m.id = c.mirror_id JOIN tags t ON t.id = m.tag_id "
                "WHERE t.name = ? AND y.finished_at > ? ORDER BY y.id",
                (tag, since),
            )
        )

    def held_hashes(self) -> set[str]:
        """Every hash some mirror holds, listed or not."""
        return {
            row[0]
            for row in self._db.execute(
                "SELECT s.hash FROM specs s WHERE EXISTS (SELECT 1 FROM members mb WHERE mb.spec_id = s.id)"
            )
        }

    def package_names(self) -> dict[str, list[str]]:
        """{package: [tags listing it]} over every tag, names sorted."""
        return package_names_of(self.all_package_tags())

    def state_token(self) -> tuple[str, float | None]:
        """(token, time of the last sync): the token changes whenever a sync commits, in
        any process, so readers can key caches and ETags on it."""
        last, finished = self._db.execute("SELECT max(id), max(finished_at) FROM syncs").fetchone()
        return f"s{last or 0}", finished


_variants_decoder = msgspec.json.Decoder(tuple[str, ...])
_ranges_decoder = msgspec.json.Decoder(tuple[VersionRange, ...])
_query_decoder = msgspec.json.Decoder(Query)


# gc=False: instances hold only strings and numbers, so the garbage collector need not
# track them; a whole-site build keeps millions of them.
class SpecSummary(msgspec.Struct, frozen=True, gc=False):
    """A spec as search results show it."""

    hash: str
    name: str
    version: str
    compiler: str
    platform: str
    os: str
    target: str
    variants: tuple[str, ...]
    size: int | None
    tags: tuple[str, ...]  # the tags listing it (the searched tag only, when one was given)
    stacks: tuple[str, ...]  # of the searched tag, 'root' included; () without a tag


class Edge(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A spec at the other end of a dependency edge. In JSON, ``deptypes`` and
    ``virtuals`` are left out when they are 0 and '' (always, in a closure): the
    JSON twin of a spec page with a big closure is an eighth smaller."""

    hash: str
    name: str
    version: str
    listed: bool  # some mirror has its binary
    size: int | None  # bytes of that binary, when known
    deptypes: int = 0  # of a direct edge; 0 in a closure
    virtuals: str = ""


class SearchPage(msgspec.Struct, frozen=True):
    """One page of search results and the number of all matches."""

    total: int
    offset: int
    limit: int
    specs: tuple[SpecSummary, ...]


def package_names_of(package_tags: dict[str, list[tuple[str, int]]]) -> dict[str, list[str]]:
    """:meth:`Catalog.package_names` from :meth:`Catalog.all_package_tags`, for a
    caller that has read the latter already."""
    return {name: [tag for tag, _ in package_tags[name]] for name in sorted(package_tags)}


def _scope_sql(root: int | None, stack: int | None) -> tuple[str, list[object]]:
    """The SQL condition (on ``s``) and parameters of a search's scope, given by
    :meth:`Catalog._scope_mirrors`."""
    if root is None:
        return "EXISTS (SELECT 1 FROM members mb WHERE mb.spec_id = s.id AND mb.listed)", []
    scope = "EXISTS (SELECT 1 FROM members mb WHERE mb.mirror_id = ? AND mb.spec_id = s.id AND mb.listed)"
    if stack is None:
        return scope, [root]
    return scope + " AND EXISTS (SELECT 1 FROM members mb WHERE mb.mirror_id = ? AND mb.spec_id = s.id)", [root, stack]


#: Facet columns in the order of a facet group's key.
_FACET_COLUMNS = ("target", "os", "compiler", "platform")


def _facet_terms(query: Query, compilers: Callable[[], list[str]]) -> list[tuple[int, tuple[str, ...]]]:
    """The query's facet constraints as (column number in :data:`_FACET_COLUMNS`,
    allowed values). ``compilers`` lists the catalog's distinct compiler strings (asked
    only if the query names a compiler)."""
    terms: list[tuple[int, tuple[str, ...]]] = []
    if query.target is not None:
        terms.append((0, target_family(query.target) if query.target_family else (query.target,)))
    if query.os is not None:
        terms.append((1, (query.os,)))
    if query.compiler is not None:
        prefix = query.compiler + "@"
        terms.append(
            (
                2,
                tuple(
                    c
                    for c in compilers()
                    if c == query.compiler
                    or (
                        c.startswith(prefix)
                        and (
                            not query.compiler_versions or version_satisfies(c[len(prefix) :], query.compiler_versions)
                        )
                    )
                ),
            )
        )
    if query.platform is not None:
        terms.append((3, (query.platform,)))
    return terms


def _group_matches(key: tuple[str, ...], facets: list[tuple[int, tuple[str, ...]]]) -> bool:
    return all(key[column] in values for column, values in facets)


class _FacetIndex:
    """A search scope's specs in result order (name, version, hash), grouped by their
    facets (target, os, compiler, platform). Built once per catalog state and scope, it
    answers a query of facets alone without touching a row it does not return: the
    count is a sum over the matching groups, and the page merges their (sorted) lists
    of positions up to ``offset + limit``. A big tag has a few hundred groups."""

    def __init__(self, rows: Iterable[tuple[int, str, str, str, str]]) -> None:
        self.ids = array("q")
        number: dict[tuple[str, str, str, str], int] = {}
        self.positions: list[array[int]] = []
        for position, (spec_id, *key) in enumerate(rows):
            self.ids.append(spec_id)
            group = number.setdefault(tuple(key), len(number))  # type: ignore[arg-type]
            if group == len(self.positions):
                self.positions.append(array("q"))
            self.positions[group].append(position)
        self.groups = list(number)
        self.size = len(self.ids)

    def matches(self, facets: list[tuple[int, tuple[str, ...]]], offset: int, limit: int) -> tuple[int, list[int]]:
        """(number of specs matching, spec ids of the page ``offset``..``offset + limit``)."""
        lists = [self.positions[g] for g, key in enumerate(self.groups) if _group_matches(key, facets)]
        total = sum(len(found) for found in lists)
        merged = lists[0] if len(lists) == 1 else heapq.merge(*lists)
        page = itertools.islice(merged, offset, offset + limit) if total > offset else ()
        return total, [self.ids[position] for position in page]


def _query_sql(query: Query, facets: list[tuple[int, tuple[str, ...]]]) -> tuple[list[str], list[object]]:
    """WHERE terms and their parameters for a query and its :func:`_facet_terms`;
    indexed columns first."""
    where: list[str] = []
    params: list[object] = []
    if query.name is not None:
        where.append("s.name = ?")
        params.append(query.name)
    if query.hash_prefix is not None:
        # Hashes are lower-case base32: '{' sorts after every character they use.
        where.append("s.hash >= ? AND s.hash < ?")
        params += [query.hash_prefix, query.hash_prefix + "{"]
    for column, values in facets:
        where.append(f"s.{_FACET_COLUMNS[column]} IN ({','.join('?' * len(values))})" if values else "0")
        params += values
    if query.versions:
        where.append("cx_version(s.version, ?)")
        params.append(_encode(query.versions).decode())
    if query.variants:
        # A C-speed text test first: '"+mpi"' must occur for +mpi, '"name=' or '"name:='
        # for a valued variant. Booleans need nothing more; values go on to the exact check.
        for name, value in query.variants:
            if isinstance(value, bool):
                where.append("instr(s.variants, ?) > 0")
                params.append(_encode(("+" if value else "~") + name).decode())
            else:
                where.append("(instr(s.variants, ?) > 0 OR instr(s.variants, ?) > 0)")
                params += [f'"{name}=', f'"{name}:=']
        if not all(isinstance(value, bool) for _, value in query.variants):
            where.append("cx_variants(s.variants, ?)")
            params.append(_encode(Query(variants=query.variants)).decode())
    return where or ["1"], params


# The constraint is the same JSON text on every row of one query: decode it once.
_decoded_ranges = lru_cache(maxsize=64)(_ranges_decoder.decode)
_decoded_query = lru_cache(maxsize=64)(_query_decoder.decode)


def _sql_version(version: str, ranges: str) -> bool:
    return version_satisfies(version or "", _decoded_ranges(ranges))


def _sql_variants(stored: str, wanted: str) -> bool:
    return variants_satisfy(_variants_decoder.decode(stored), _decoded_query(wanted))


_encode = msgspec.json.encode

_MIRROR_COLUMNS = (
    "t.name, m.stack, m.url, m.layout, m.db_version, m.checksum, m.etag, m.last_modified, "
    "m.fetched_at, m.records, m.listed"
)


def _split_sql(script: str) -> list[str]:
    """Statements of a schema script (ours: no semicolons inside literals)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


class TagWriter:
    """Writes one tag inside the transaction opened by :meth:`Catalog.writing_tag`."""

    def __init__(self, db: sqlite3.Connection, tag: str) -> None:
        self._db = db
        self.tag = tag
        self.started_at = time.time()
        db.execute("INSERT OR IGNORE INTO tags (name) VALUES (?)", (tag,))
        self._tag_id: int = db.execute("SELECT id FROM tags WHERE name = ?", (tag,)).fetchone()[0]
        self._ids: dict[str, int] = {}
        self._pending_changes: list[tuple[int, int, int]] = []  # (mirror, spec, +1/-1)
        self._root_added = 0
        self._root_removed = 0
        self._kept_stacks: set[str] = set()
        self._changed = False  # whether the tag's totals must be counted again

    def add_specs(self, records: Iterable[SpecRecord], sizes: Mapping[str, int]) -> int:
        """Insert specs the catalog does not have yet, then their edges. Returns the count."""
        records = list(records)
        return self.add_spec_batches([r.hash for r in records], [records], sizes)

    def add_spec_batches(
        self,
        hashes: Sequence[str],
        batches: Iterable[Iterable[SpecRecord]],
        sizes: Mapping[str, int],
    ) -> int:
        """Insert the specs ``hashes``, new to the catalog, built batch by batch by ``batches``.

        Ids are given to every hash first, so an edge may point to a spec of a later batch;
        only one batch of decoded records is alive at a time, which bounds the memory of
        a first sync. Edges whose child is neither among ``hashes`` nor already known are
        skipped: the index was incomplete. Returns the number of specs inserted.
        """
        if not hashes:
            return 0  # a re-sync with nothing new: not even a count of the table
        db = self._db
        (next_id, existing) = db.execute("SELECT coalesce(max(id), 0) + 1, count(*) FROM specs").fetchone()
        ids = self._ids
        for offset, dag_hash in enumerate(hashes):
            ids[dag_hash] = next_id + offset
        # Loading many rows into indexed tables is faster with the indexes built afterwards
        # from sorted data than maintained row by row (a first sync of a big tag).
        bulk = len(hashes) > max(20_000, existing)
        if bulk:
            for name in _BULK_INDEXES:
                db.execute(f"DROP INDEX IF EXISTS {name}")
        # An edge may be written before its child (a later batch): check at commit instead.
        db.execute("PRAGMA defer_foreign_keys = ON")
        inserted = 0
        for batch in batches:
            records = list(batch)
            missing = [d.hash for r in records for d in r.dependencies if d.hash not in ids]
            if missing:
                ids.update(self._known_ids(missing))
            # Rows are generated while SQLite consumes them: no second copy of every node.
            db.executemany(
                "INSERT INTO specs VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    (
                        ids[r.hash],
                        r.hash,
                        r.name,
                        r.version,
                        r.platform,
                        r.os,
                        r.target,
                        r.compiler,
                        _encode(r.variants).decode(),
                        int(r.external),
                        sizes.get(r.hash),
                    )
                    for r in records
                ),
            )
            db.executemany(
                "INSERT INTO nodes VALUES (?,?)",
                ((ids[r.hash], str(r.node, "utf-8")) for r in records),
            )
            db.executemany(
                "INSERT OR IGNORE INTO edges VALUES (?,?,?,?)",
                (
                    (ids[r.hash], ids[dep.hash], dep.deptypes, dep.virtuals)
                    for r in records
                    for dep in r.dependencies
                    if dep.hash in ids
                ),
            )
            inserted += len(records)
        if bulk:
            for statement in _BULK_INDEXES.values():
                db.execute(statement)
        if inserted != len(hashes):
            raise CatalogError(f"{len(hashes)} specs announced, {inserted} given")
        return inserted

    def _known_ids(self, hashes: list[str]) -> dict[str, int]:
        return dict(
            self._db.execute(
                "SELECT hash, id FROM specs WHERE hash IN (SELECT value FROM json_each(?))",
                (json.dumps(hashes),),
            )
        )

    def set_sizes(self, sizes: Mapping[str, int]) -> None:
        """Record binary sizes of specs already in the catalog (a hash's size never changes)."""
        self._changed = self._changed or bool(sizes)
        self._db.executemany(
            "UPDATE specs SET size = ? WHERE hash = ? AND size IS NULL",
            [(size, dag_hash) for dag_hash, size in sizes.items()],
        )

    def keep_mirror(
        self, stack: str, url: str, *, fetched_at: float, etag: str | None, last_modified: str | None
    ) -> None:
        """Mark an unchanged mirror as read now (its index checksum did not change)."""
        self._kept_stacks.add(stack)
        self._db.execute(
            "UPDATE mirrors SET url = ?, fetched_at = ?, etag = coalesce(?, etag), "
            "last_modified = coalesce(?, last_modified) WHERE tag_id = ? AND stack = ?",
            (url, fetched_at, etag, last_modified, self._tag_id, stack),
        )

    def replace_mirror(
        self,
        stack: str,
        url: str,
        *,
        layout: int,
        db_version: int,
        checksum: str,
        etag: str | None,
        last_modified: str | None,
        fetched_at: float,
        members: Mapping[str, bool],
    ) -> None:
        """Store a mirror's new index: its state and the records it holds (hash -> listed)."""
        self._kept_stacks.add(stack)
        self._changed = True
        db = self._db
        row = db.execute("SELECT id FROM mirrors WHERE tag_id = ? AND stack = ?", (self._tag_id, stack)).fetchone()
        listed_count = sum(1 for listed in members.values() if listed)
        values = (url, layout, db_version, checksum, etag, last_modified, fetched_at, len(members), listed_count)
        if row is None:
            mirror_id = db.execute(
                "INSERT INTO mirrors (url, layout, db_version, checksum, etag, last_modified, "
                "fetched_at, records, listed, tag_id, stack) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (*values, self._tag_id, stack),
            ).lastrowid
            old: dict[int, int] = {}
            first_sync = True
        else:
            mirror_id = row[0]
            db.execute(
                "UPDATE mirrors SET url = ?, layout = ?, db_version = ?, checksum = ?, etag = ?, "
                "last_modified = ?, fetched_at = ?, records = ?, listed = ? WHERE id = ?",
                (*values, mirror_id),
            )
            old = dict(db.execute("SELECT spec_id, listed FROM members WHERE mirror_id = ?", (mirror_id,)))
            first_sync = False
        missing = [h for h in members if h not in self._ids]
        if missing:
            self._ids.update(self._known_ids(missing))
        unknown = [h for h in members if h not in self._ids]
        if unknown:
            raise CatalogError(f"internal: {len(unknown)} records of {stack} were not stored first")
        new = {self._ids[h]: int(listed) for h, listed in members.items()}
        if first_sync:
            db.executemany(
                "INSERT INTO members VALUES (?,?,?)",
                [(mirror_id, spec_id, new[spec_id]) for spec_id in sorted(new)],
            )
        else:
            gone = [(mirror_id, spec_id) for spec_id in old.keys() - new.keys()]
            db.executemany("DELETE FROM members WHERE mirror_id = ? AND spec_id = ?", gone)
            upsert = [(mirror_id, spec_id, listed) for spec_id, listed in new.items() if old.get(spec_id) != listed]
            db.executemany("INSERT OR REPLACE INTO members VALUES (?,?,?)", upsert)
            self._record_changes(mirror_id, stack, old, new)

    def _record_changes(self, mirror_id: int, stack: str, old: dict[int, int], new: dict[int, int]) -> None:
        was = {spec_id for spec_id, listed in old.items() if listed}
        now = {spec_id for spec_id, listed in new.items() if listed}
        added, removed = now - was, was - now
        self._pending_changes.extend((mirror_id, spec_id, 1) for spec_id in added)
        self._pending_changes.extend((mirror_id, spec_id, -1) for spec_id in removed)
        if stack == "root":
            self._root_added, self._root_removed = len(added), len(removed)

    def drop_other_stacks(self) -> list[str]:
        """Remove mirrors of this tag that were not kept or replaced (stacks no longer configured)."""
        placeholders = ",".join("?" * len(self._kept_stacks)) or "''"
        stale = self._db.execute(
            f"SELECT id, stack FROM mirrors WHERE tag_id = ? AND stack NOT IN ({placeholders})",
            (self._tag_id, *sorted(self._kept_stacks)),
        ).fetchall()
        self._changed = self._changed or bool(stale)
        for mirror_id, _stack in stale:
            self._db.execute("DELETE FROM changes WHERE mirror_id = ?", (mirror_id,))
            self._db.execute("DELETE FROM members WHERE mirror_id = ?", (mirror_id,))
            self._db.execute("DELETE FROM mirrors WHERE id = ?", (mirror_id,))
        return [stack for _id, stack in stale]

    @property
    def root_added(self) -> int:
        """Listed specs the root mirror gained in this sync (0 on a first sync)."""
        return self._root_added

    @property
    def root_removed(self) -> int:
        """Listed specs the root mirror lost in this sync."""
        return self._root_removed

    def _finish(self) -> None:
        now = time.time()
        sync_id = self._db.execute(
            "INSERT INTO syncs (tag_id, started_at, finished_at, added, removed) VALUES (?,?,?,?,?)",
            (self._tag_id, self.started_at, now, self._root_added, self._root_removed),
        ).lastrowid
        self._db.executemany(
            "INSERT INTO changes VALUES (?,?,?,?)",
            [(sync_id, mirror, spec, change) for mirror, spec, change in self._pending_changes],
        )
        self._db.execute("UPDATE tags SET synced_at = ? WHERE id = ?", (now, self._tag_id))
        if self._changed:
            self._update_totals()

    def _update_totals(self) -> None:
        db, tag_id = self._db, self._tag_id
        (records,) = db.execute(
            "SELECT count(DISTINCT spec_id) FROM members WHERE mirror_id IN (SELECT id FROM mirrors WHERE tag_id = ?)",
            (tag_id,),
        ).fetchone()
        specs, packages, size, sized = db.execute(
            "SELECT count(*), count(DISTINCT s.name), coalesce(sum(s.size), 0), count(s.size) "
            "FROM members mb JOIN specs s ON s.id = mb.spec_id "
            "WHERE mb.listed AND mb.mirror_id = "
            "(SELECT id FROM mirrors WHERE tag_id = ? AND stack = 'root')",
            (tag_id,),
        ).fetchone()
        db.execute(
            "UPDATE tags SET records = ?, specs = ?, packages = ?, size = ?, sized = ? WHERE id = ?",
            (records, specs, packages, size, sized, tag_id),
        )
