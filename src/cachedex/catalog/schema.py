"""The catalog's schema: the tables, their versions, and the migrations between them.

``PRAGMA user_version`` holds the schema version; :func:`migrate` upgrades an older
file in place, one step at a time, in one transaction, and refuses a newer one. The
tables are described in ``docs/catalog.md``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import CatalogError
from .connection import refuse_foreign

__all__ = ["BULK_INDEXES", "BULK_MEMBER_INDEXES", "SCHEMA_VERSION", "migrate", "no_catalog_yet", "schema_version"]

#: Version of the schema this code writes; stored in ``PRAGMA user_version``.
SCHEMA_VERSION = 12

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

#: The edges by child: a spec's dependents, and the walks up to everything depending on
#: it (``^dep`` searches, the pages a change reaches). It holds every column an edge has,
#: so those read it alone: a walk up from a core library visits most of the catalog's
#: edges, and looking each up in the table as well took twice as long.
_EDGES_CHILD = "CREATE INDEX edges_child ON edges (child, parent, deptypes, virtuals)"

#: Secondary indexes that a bulk load drops and rebuilds (name -> CREATE statement).
BULK_INDEXES = {
    "specs_hash": "CREATE UNIQUE INDEX specs_hash ON specs (hash)",
    "specs_name": "CREATE INDEX specs_name ON specs (name, version)",
    "edges_child": _EDGES_CHILD,
    "specs_target": "CREATE INDEX specs_target ON specs (target)",
    "specs_os": "CREATE INDEX specs_os ON specs (os)",
    "specs_compiler": "CREATE INDEX specs_compiler ON specs (compiler)",
    "specs_unsized": "CREATE INDEX specs_unsized ON specs (id) WHERE size IS NULL",
}

#: The members index that a tag's first sync (more rows than the catalog has) rebuilds.
BULK_MEMBER_INDEXES = {"members_spec": "CREATE INDEX members_spec ON members (spec_id)"}

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

# A sync stopped while it fetched sizes leaves listed specs without one, in mirrors whose
# index did not change: the next sync finds them from the few specs still unsized.
_V3_TO_V4 = """
CREATE INDEX specs_unsized ON specs (id) WHERE size IS NULL;
"""

# Buildcache views: a stack may be a view of a mirror (its index under
# v3/manifests/index/<view>/), and a mirror of views only has no root index: its root
# then lists what its stacks list (own_index = 0).
_V4_TO_V5 = """
ALTER TABLE mirrors ADD COLUMN view TEXT;
ALTER TABLE mirrors ADD COLUMN own_index INTEGER NOT NULL DEFAULT 1;
"""

# Verifications (``cachedex verify``): each check of a mirror, its problems, and the
# signature status of every spec it lists. Mirrors and specs are named by text, not by
# id: a sync may drop a stack or forget a spec without touching what was verified.
_V5_TO_V6 = """
CREATE TABLE verifications (
    id          INTEGER PRIMARY KEY,
    tag         TEXT NOT NULL,
    stack       TEXT NOT NULL,
    url         TEXT NOT NULL,
    view        TEXT,
    layout      INTEGER,            -- NULL when the index could not be read
    started_at  REAL NOT NULL,
    finished_at REAL NOT NULL,
    deep        INTEGER NOT NULL,   -- 1 when tarballs were downloaded and checksummed
    checks      TEXT NOT NULL,      -- JSON list of the checks that ran
    skipped     TEXT NOT NULL,      -- JSON list of the checks that could not run, and why
    listed      INTEGER NOT NULL,   -- specs the index lists
    found       INTEGER NOT NULL,   -- of them, those whose spec manifest or file was found
    binaries    INTEGER NOT NULL,   -- of them, those whose binary was found
    signing     TEXT NOT NULL,      -- signed, unsigned, none (an OCI registry)
    keys        TEXT NOT NULL,      -- JSON list of the fingerprints the mirror publishes
    keyring     TEXT NOT NULL,      -- sha256 of those keys, to reuse signature results
    signed      INTEGER NOT NULL,
    unsigned    INTEGER NOT NULL,
    bad         INTEGER NOT NULL,
    unknown_key INTEGER NOT NULL,
    problems    INTEGER NOT NULL
);
CREATE INDEX verifications_mirror ON verifications (tag, stack, id);

CREATE TABLE verification_problems (
    verification_id INTEGER NOT NULL REFERENCES verifications (id) ON DELETE CASCADE,
    hash     TEXT,                  -- the spec; NULL for a file of the mirror (index, key)
    kind     TEXT NOT NULL,
    url      TEXT NOT NULL,
    message  TEXT NOT NULL
);
CREATE INDEX verification_problems_run ON verification_problems (verification_id);
CREATE INDEX verification_problems_hash ON verification_problems (hash);

CREATE TABLE verification_signatures (
    verification_id INTEGER NOT NULL REFERENCES verifications (id) ON DELETE CASCADE,
    hash     TEXT NOT NULL,
    status   TEXT NOT NULL,         -- signed, unsigned, bad, unknown-key
    signer   TEXT,                  -- fingerprint of the signing key, when known
    digest   TEXT,                  -- sha256 of the signed file
    PRIMARY KEY (verification_id, hash)
) WITHOUT ROWID;
CREATE INDEX verification_signatures_hash ON verification_signatures (hash);
"""

# Nodes are stored compressed with a dictionary trained on the catalog's own nodes
# (catalog/nodes.py): a node's frame names its dictionary by id. Older nodes stay text.
_V6_TO_V7 = """
CREATE TABLE node_dictionaries (
    id          INTEGER PRIMARY KEY,  -- zstd's dictionary id, which each frame names
    dictionary  BLOB NOT NULL
);
"""

# The edges' child index covers their columns (see _EDGES_CHILD).
_V7_TO_V8 = f"""
DROP INDEX edges_child;
{_EDGES_CHILD};
"""

# A tag forgotten (``cachedex forget``) is recorded: its syncs' ids are then reused, and
# the catalog's state token counts forgettings, so that no later state takes a token an
# earlier one had. The catalog's own id marks what its builds write into shared folders
# (a Jekyll tree two catalogs write): only its own pages are ever removed.
_V8_TO_V9 = """
CREATE TABLE forgotten (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused
    tag     TEXT NOT NULL,
    at      REAL NOT NULL
);
CREATE TABLE identity (
    id      TEXT NOT NULL                       -- random, made once
);
INSERT INTO identity VALUES (lower(hex(randomblob(16))));
"""

# A sync's id is never given again once its tag is forgotten (an Atom entry's id and a
# change page's anchor name it; SQLite gives the highest rowid + 1): each forgetting
# records the highest sync id then, and a sync takes an id above it. A garbage
# collection that removed anything is counted: the state token reads it (a spec's page
# may be gone).
_V9_TO_V10 = """
ALTER TABLE forgotten ADD COLUMN last_sync INTEGER NOT NULL DEFAULT 0;
ALTER TABLE identity ADD COLUMN collected INTEGER NOT NULL DEFAULT 0;
"""

# A stack no longer configured (or a view gone from its mirror) keeps its mirror row and
# history: its specs are recorded as removed by the sync that dropped it, so that a diff
# since before then says so, and a stack put back is not all new. (Its history went with
# it: a stack dropped for one sync and put back showed every spec as added.)
_V10_TO_V11 = """
ALTER TABLE mirrors ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0;
"""

# Whether a mirror signs its binaries, as its last sync that read a changed index saw
# it in a few listed specs' manifests and its key index (1 signs, 0 not; NULL not known): the
# commands the pages give add an unsigned mirror with --unsigned, or Spack's install
# stops at every binary. Of that and a verification's finding, the newer counts
# (``signed_at``: when a sync found it).
_V11_TO_V12 = """
ALTER TABLE mirrors ADD COLUMN signed INTEGER;
ALTER TABLE mirrors ADD COLUMN signed_at REAL;
"""

_MIGRATIONS: dict[int, str] = {
    0: _SCHEMA_V1,
    1: _V1_TO_V2,
    2: _V2_TO_V3,
    3: _V3_TO_V4,
    4: _V4_TO_V5,
    5: _V5_TO_V6,
    6: _V6_TO_V7,
    7: _V7_TO_V8,
    8: _V8_TO_V9,
    9: _V9_TO_V10,
    10: _V10_TO_V11,
    11: _V11_TO_V12,
}


def schema_version(db: sqlite3.Connection) -> int:
    """The schema version of an open catalog file."""
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def no_catalog_yet(path: Path) -> CatalogError:
    """The error for a catalog file no sync has finished writing: empty, or created by a
    first sync that stopped before its tables were made."""
    return CatalogError(f"{path}: holds no catalog yet (no sync has finished writing it); run 'cachedex sync' first")


def migrate(db: sqlite3.Connection, path: Path, *, readonly: bool) -> None:
    """Bring the catalog at ``path`` to :data:`SCHEMA_VERSION`; CatalogError if it is
    newer than this code, or older and opened read-only."""
    version = schema_version(db)
    if version > SCHEMA_VERSION:
        raise CatalogError(
            f"{path}: catalog schema {version} is newer than this cachedex "
            f"understands ({SCHEMA_VERSION}); upgrade cachedex"
        )
    if version == SCHEMA_VERSION:
        return
    if readonly and version == 0:  # created, but its first sync was stopped before writing anything
        refuse_foreign(db, path)  # (or another program's: open_writable asks before it changes the file)
        raise no_catalog_yet(path)
    if readonly:
        raise CatalogError(f"{path}: catalog schema {version} needs an upgrade; run 'cachedex sync' once")
    db.execute("BEGIN IMMEDIATE")
    try:
        # Read again under the write lock: another process may have just created or
        # upgraded the file (two first syncs started together).
        version = schema_version(db)
        while version < SCHEMA_VERSION:
            for statement in _split_sql(_MIGRATIONS[version]):
                db.execute(statement)
            version += 1
            db.execute(f"PRAGMA user_version={version}")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _split_sql(script: str) -> list[str]:
    """Statements of a schema script (ours: no semicolons inside literals)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
