"""Verifications of mirrors (``cachedex verify``): their typed results and their SQL.

A verification checks one mirror of a tag: its index, every spec it lists (spec
manifest or spec file, binary, spec blob, signature, dependencies) and what it holds
that its index does not list. :class:`MirrorVerification` is the whole result, the
same for the command's ``--json``, the API and the catalog; the catalog keeps every
verification with its problems, and the signature status of each spec for the latest
ones (:data:`KEEP_SIGNATURES` per mirror), from which a later verification reuses the
results of files that did not change.

Mirrors and specs are named by text (tag, stack; hash), never by id: a sync may drop a
stack or forget a spec, and what was verified stays readable.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

import msgspec

from ..values import ROOT_STACK

__all__ = [
    "KEEP_PROBLEMS",
    "KEEP_SIGNATURES",
    "PROBLEM_KINDS",
    "SIGNATURE_STATUSES",
    "MirrorVerification",
    "Problem",
    "SignatureCounts",
    "SpecSignature",
    "SpecVerification",
    "TagVerification",
    "all_spec_verifications",
    "latest_verifications",
    "previous_signatures",
    "spec_verifications",
    "store_verification",
    "tag_verification",
    "unsigned_mirrors",
]

#: Every kind of problem a verification reports, and what it means.
PROBLEM_KINDS: dict[str, str] = {
    "index-missing": "the mirror has no index (or no index.json.hash beside a v2 index.json)",
    "index-checksum": "the index does not match the checksum that describes it",
    "index-unreadable": "the index cannot be read or decoded",
    "manifest-missing": "a listed spec has no spec manifest (v3), spec file (v2) or image (OCI)",
    "manifest-unreadable": "a spec manifest, spec file or image manifest cannot be read or decoded",
    "unindexed": "a spec manifest, spec file or image the index does not list",
    "tarball-missing": "a listed spec's binary (tarball blob, .spack file, last layer) is missing",
    "tarball-size": "a binary's size differs from the one its manifest gives",
    "tarball-checksum": "a binary's checksum differs from its manifest's (--deep)",
    "tarball-unreadable": "a binary cannot be checked (an error other than 'not found')",
    "layer-missing": "a layer an OCI image lists is missing from the registry",
    "spec-blob-missing": "the spec blob a spec manifest lists is missing",
    "spec-blob-checksum": "a spec blob does not match its manifest's checksum or size",
    "spec-blob-unreadable": "a spec blob cannot be read or decoded",
    "dag-hash-mismatch": "a spec file or blob holds another spec than its name says",
    "dependency-missing": "a link or run dependency of a listed spec is neither listed by a mirror of the tag "
    "nor an external",
    "unsigned": "a spec of a signed mirror has no signature",
    "signature-bad": "a signature that does not verify (altered text, mangled signature)",
    "signature-unknown-key": "a signature by a key the mirror does not publish",
    "key-missing": "a public key the mirror's key index lists cannot be read",
    "key-unreadable": "a published key is not an OpenPGP public key, or not the one its name says",
    "mirror-unreadable": "the mirror's check stopped early (an error reading it)",
}

#: Signature statuses of a spec: signed (by a key the mirror publishes), unsigned, bad,
#: unknown-key (signed by a key the mirror does not publish).
SIGNATURE_STATUSES = ("signed", "unsigned", "bad", "unknown-key")

#: Verifications per mirror whose problems are kept (older ones keep their counts only).
KEEP_PROBLEMS = 20
#: Verifications per mirror whose per-spec signature statuses are kept.
KEEP_SIGNATURES = 1


class Problem(msgspec.Struct, frozen=True):
    """One thing wrong with a mirror: its kind (:data:`PROBLEM_KINDS`), the URL of the
    file concerned and what is wrong with it, in one line."""

    kind: str
    url: str
    message: str
    hash: str | None = None  #: the spec concerned; None for a file of the mirror itself

    def line(self) -> str:
        """The problem as one line of output: the URL, then what is wrong."""
        return f"{self.url}: {self.message}"


class SignatureCounts(msgspec.Struct, frozen=True):
    """How many listed specs are signed (by a published key), unsigned, badly signed,
    and signed by a key the mirror does not publish."""

    signed: int = 0
    unsigned: int = 0
    bad: int = 0
    unknown_key: int = 0


class MirrorVerification(msgspec.Struct, frozen=True):
    """One verification of one mirror: what was checked, what was found, what is wrong."""

    tag: str
    stack: str  #: ``root`` for the tag's own mirror
    url: str
    view: str | None  #: the buildcache view read as this stack, if any
    layout: int | None  #: 1-3, 100 for an OCI registry; None when the index could not be read
    started_at: float  #: epoch seconds
    finished_at: float
    deep: bool  #: whether binaries were downloaded and checksummed
    checks: tuple[str, ...]  #: the checks that ran (index, keys, manifests, binaries, ...)
    skipped: tuple[str, ...]  #: checks that could not run, each with why
    listed: int  #: specs the index lists
    found: int  #: of them, those whose spec manifest (v3), spec file (v2) or image (OCI) was found
    binaries: int  #: of them, those whose binary was found (with the right size where known)
    signing: str  #: ``signed`` (it publishes keys or signs specs), ``unsigned``, ``none`` (OCI)
    keys: tuple[str, ...]  #: fingerprints of the public keys the mirror publishes
    signatures: SignatureCounts
    problems: tuple[Problem, ...]
    problem_count: int = 0  #: problems found (``problems`` may hold fewer, when read with a limit)
    id: int | None = None  #: the verification's id in the catalog, once stored

    @property
    def ok(self) -> bool:
        """Whether nothing is wrong."""
        return self.problem_count == 0


class TagVerification(msgspec.Struct, frozen=True):
    """The latest verification of each mirror of a tag."""

    tag: str
    ok: bool  #: no mirror has a problem
    problems: int  #: problems over all its mirrors
    mirrors: tuple[MirrorVerification, ...]


class SpecSignature(msgspec.Struct, frozen=True):
    """A listed spec's signature status in one verification (:data:`SIGNATURE_STATUSES`)."""

    hash: str
    status: str
    signer: str | None = None  #: fingerprint of the key that signed it, when known
    digest: str | None = None  #: sha256 of the signed file


class SpecVerification(msgspec.Struct, frozen=True):
    """What the latest verification of one mirror found about one spec."""

    tag: str
    stack: str
    verified_at: float  #: epoch seconds
    signature: str | None  #: its signature status, None when not checked (OCI, no manifest)
    signer: str | None
    problems: tuple[Problem, ...]


_RUN_COLUMNS = (
    "id, tag, stack, url, view, layout, started_at, finished_at, deep, checks, skipped, listed, found, binaries, "
    "signing, keys, signed, unsigned, bad, unknown_key, problems"
)
_decode_strings = msgspec.json.Decoder(tuple[str, ...]).decode


def store_verification(
    db: sqlite3.Connection, result: MirrorVerification, signatures: Iterable[SpecSignature], keyring: str
) -> int:
    """Record ``result`` and its specs' ``signatures`` (inside the caller's transaction);
    older verifications of the mirror lose their problems and signatures past the
    numbers kept. Returns the verification's id; 0, and nothing stored, when its tag was
    forgotten since the verification began (its rows would outlive the forgetting, and a
    tag later given that name would show them as its own)."""
    if db.execute("SELECT 1 FROM forgotten WHERE tag = ? AND at >= ?", (result.tag, result.started_at)).fetchone():
        return 0
    counts = result.signatures
    cursor = db.execute(
        "INSERT INTO verifications (tag, stack, url, view, layout, started_at, finished_at, deep, checks, skipped, "
        "listed, found, binaries, signing, keys, keyring, signed, unsigned, bad, unknown_key, problems) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            result.tag,
            result.stack,
            result.url,
            result.view,
            result.layout,
            result.started_at,
            result.finished_at,
            int(result.deep),
            msgspec.json.encode(result.checks).decode(),
            msgspec.json.encode(result.skipped).decode(),
            result.listed,
            result.found,
            result.binaries,
            result.signing,
            msgspec.json.encode(result.keys).decode(),
            keyring,
            counts.signed,
            counts.unsigned,
            counts.bad,
            counts.unknown_key,
            len(result.problems),
        ),
    )
    run = int(cursor.lastrowid or 0)
    db.executemany(
        "INSERT INTO verification_problems VALUES (?,?,?,?,?)",
        ((run, p.hash, p.kind, p.url, p.message) for p in result.problems),
    )
    db.executemany(
        "INSERT OR REPLACE INTO verification_signatures VALUES (?,?,?,?,?)",
        ((run, s.hash, s.status, s.signer, s.digest) for s in signatures),
    )
    for table, keep in (("verification_problems", KEEP_PROBLEMS), ("verification_signatures", KEEP_SIGNATURES)):
        db.execute(
            f"DELETE FROM {table} WHERE verification_id IN (SELECT id FROM verifications WHERE tag = ? AND stack = ? "
            "ORDER BY id DESC LIMIT -1 OFFSET ?)",
            (result.tag, result.stack, keep),
        )
    return run


def _problems(db: sqlite3.Connection, run: int, limit: int | None) -> tuple[Problem, ...]:
    rows = db.execute(
        "SELECT kind, url, message, hash FROM verification_problems WHERE verification_id = ? ORDER BY rowid LIMIT ?",
        (run, -1 if limit is None else limit),
    )
    return tuple(Problem(kind, url, message, dag_hash) for kind, url, message, dag_hash in rows)


def _verification(db: sqlite3.Connection, row: tuple[Any, ...], limit: int | None) -> MirrorVerification:
    (run, tag, stack, url, view, layout, started, finished, deep, checks, skipped, listed, found, binaries) = row[:14]
    signing, keys, signed, unsigned, bad, unknown_key, problems = row[14:]
    return MirrorVerification(
        tag=tag,
        stack=stack,
        url=url,
        view=view,
        layout=layout,
        started_at=started,
        finished_at=finished,
        deep=bool(deep),
        checks=_decode_strings(checks),
        skipped=_decode_strings(skipped),
        listed=listed,
        found=found,
        binaries=binaries,
        signing=signing,
        keys=_decode_strings(keys),
        signatures=SignatureCounts(signed, unsigned, bad, unknown_key),
        problems=_problems(db, run, limit),
        problem_count=problems,
        id=run,
    )


#: Only the verifications of a tag's stacks are shown: not those of a stack no longer
#: the tag's (dropped from the config, a view gone: kept, for a stack put back), removed
#: by an older cachedex with its row, or verified but never synced.
_CURRENT = (
    "EXISTS (SELECT 1 FROM mirrors m JOIN tags t ON t.id = m.tag_id "
    "WHERE t.name = verifications.tag AND m.stack = verifications.stack AND NOT m.dropped)"
)


def latest_verifications(
    db: sqlite3.Connection, tag: str | None = None, *, problems: int | None = None
) -> list[MirrorVerification]:
    """The latest verification of each mirror (of one tag), by tag then stack with root
    first, each with at most ``problems`` of its problems (None: all)."""
    where = "AND tag = ?" if tag is not None else ""
    rows = db.execute(
        f"SELECT {_RUN_COLUMNS} FROM verifications WHERE id IN "
        f"(SELECT max(id) FROM verifications WHERE {_CURRENT} {where} GROUP BY tag, stack) "
        "ORDER BY tag, stack != 'root', stack",
        (tag,) if tag is not None else (),
    ).fetchall()
    return [_verification(db, row, problems) for row in rows]


def tag_verification(db: sqlite3.Connection, tag: str, *, problems: int | None = None) -> TagVerification | None:
    """The latest verification of each mirror of ``tag`` (each with at most ``problems``
    of its problems), or None if it was never verified."""
    mirrors = latest_verifications(db, tag, problems=problems)
    if not mirrors:
        return None
    total = sum(m.problem_count for m in mirrors)
    return TagVerification(tag=tag, ok=total == 0, problems=total, mirrors=tuple(mirrors))


def unsigned_mirrors(db: sqlite3.Connection) -> frozenset[tuple[str, str]]:
    """(tag, stack) of each mirror known not to sign its binaries, which Spack must be
    told (``spack mirror add --unsigned``) or its install stops at every binary: the
    mirror's latest verification that read its spec files or keys says so, or its last
    sync of a changed index found the manifests it read (three listed specs') all plain
    and no key index published (:attr:`~.rows.MirrorState.signed`), whichever is newer.
    An OCI registry's verification ("none") leaves it to the URL, which always says so."""
    # The newer of the two findings counts: a mirror pushed again with (or without)
    # signing since its last verification is what its last sync saw, and the reverse.
    rows = db.execute(
        "SELECT t.name, m.stack FROM mirrors m JOIN tags t ON t.id = m.tag_id "
        "LEFT JOIN verifications v ON v.id = (SELECT max(id) FROM verifications w WHERE w.tag = t.name "
        "AND w.stack = m.stack AND w.url = m.url AND (w.found > 0 OR w.signing = 'signed') AND w.signing != 'none') "
        "WHERE CASE WHEN v.id IS NOT NULL AND (m.signed IS NULL OR v.finished_at >= coalesce(m.signed_at, 0)) "
        "THEN v.signing = 'unsigned' ELSE m.signed = 0 END"
    )
    return frozenset(rows)


def spec_verifications(db: sqlite3.Connection, dag_hash: str) -> list[SpecVerification]:
    """What the latest verification of every mirror listing ``dag_hash`` found about it:
    its signature status and its problems, by tag then stack with root first."""
    return all_spec_verifications(db, dag_hash).get(dag_hash, [])


def all_spec_verifications(db: sqlite3.Connection, dag_hash: str | None = None) -> dict[str, list[SpecVerification]]:
    """:func:`spec_verifications` of every spec (or of ``dag_hash`` only) in one read:
    hash -> what the latest verification of each mirror found about it. Specs that no
    verification mentions are absent."""
    only = "AND hash = ?" if dag_hash else ""
    bound = (dag_hash,) if dag_hash else ()
    runs = {
        run: (tag, stack, finished)
        for run, tag, stack, finished in db.execute(
            "SELECT id, tag, stack, finished_at FROM verifications WHERE id IN "
            f"(SELECT max(id) FROM verifications WHERE {_CURRENT} GROUP BY tag, stack)"
        )
    }
    if not runs:
        return {}
    latest = ",".join(map(str, runs))  # integers the catalog made: safe to inline
    found: dict[tuple[str, int], tuple[str | None, str | None, list[Problem]]] = {}
    for run, spec, status, signer in db.execute(
        f"SELECT verification_id, hash, status, signer FROM verification_signatures "
        f"WHERE verification_id IN ({latest}) {only}",
        bound,
    ):
        found[spec, run] = (status, signer, [])
    for run, spec, kind, url, message in db.execute(
        f"SELECT verification_id, hash, kind, url, message FROM verification_problems "
        f"WHERE verification_id IN ({latest}) AND hash IS NOT NULL {only} ORDER BY rowid",
        bound,
    ):
        found.setdefault((spec, run), (None, None, []))[2].append(Problem(kind, url, message, spec))
    by_spec: dict[str, list[SpecVerification]] = {}
    for (spec, run), (status, signer, problems) in found.items():
        tag, stack, finished = runs[run]
        by_spec.setdefault(spec, []).append(SpecVerification(tag, stack, finished, status, signer, tuple(problems)))
    for verified in by_spec.values():
        verified.sort(key=lambda v: (v.tag, v.stack != ROOT_STACK, v.stack))
    return by_spec


def previous_signatures(db: sqlite3.Connection, tag: str, stack: str, keyring: str) -> dict[str, SpecSignature]:
    """The signature statuses the latest verification of a mirror found with the same
    keys, by hash (empty when its keys differed): a file whose digest did not change
    need not be verified again."""
    row = db.execute(
        "SELECT id, keyring FROM verifications WHERE tag = ? AND stack = ? ORDER BY id DESC LIMIT 1", (tag, stack)
    ).fetchone()
    if row is None or row[1] != keyring:
        return {}
    return {
        dag_hash: SpecSignature(dag_hash, status, signer, digest)
        for dag_hash, status, signer, digest in db.execute(
            "SELECT hash, status, signer, digest FROM verification_signatures WHERE verification_id = ? "
            "AND digest IS NOT NULL",
            (row[0],),
        )
    }
