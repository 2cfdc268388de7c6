"""Verify one mirror (``cachedex verify``): its index, keys, and every spec it lists.

:class:`MirrorChecker` runs the checks in order, each over every listed spec at once
(concurrent reads over HTTP), and notes each problem with the URL concerned:

1. the index: present, and matching its checksum (v3 manifest, v2 ``index.json.hash``,
   OCI digest); nothing else is checked when it is not;
2. the keys the mirror publishes (:mod:`.verify_keys`);
3. per listed spec, its spec manifest (v3; spec file for v2, :mod:`.verify_v2`; image
   for OCI, :mod:`.verify_oci`), its signature (:mod:`.signatures`, several gpg at once),
   its binary (exists, with the size the manifest gives), its spec blob (checksum, and
   the DAG hash inside equals the hash in the manifest's name);
4. with ``deep``, each binary's checksum, streamed;
5. what the mirror holds that its index does not list (where its folders can be listed).

Dependencies are checked over the whole tag afterwards (:mod:`.verify`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..catalog.verifications import SpecSignature
from ..config import Limits
from ..errors import CachedexError, ChecksumError, IndexFormatError, SourceError, SourceNotFound
from ..progress import ProgressLine
from ..values import LINK_RUN, TARBALL_MEDIA_TYPE, MirrorRef, SpecRecord, is_dag_hash
from .index import decode_index
from .layouts import V2_INDEX_HASH, read_index
from .manifests import BlobRecord, blob_path, decode_manifest, gunzip_bounded, verify_checksum
from .records import build_records
from .signatures import GPG_MISSING, Keyring, SignatureCheck, gpg_available, is_clearsigned
from .sizes import manifest_path_safe
from .snapshots import OCI_LAYOUT
from .sources import Source
from .verify_documents import DecodedSpec, blob_root_hash, plain_text, raw_bytes
from .verify_findings import Findings, sent_encoded, without_url
from .verify_io import checksums, sizes
from .verify_keys import load_keys

__all__ = ["MirrorChecker"]

#: Files whose signatures are checked at once (each a gpg process).
SIGNATURE_WORKERS = 2
#: Manifests handed to the signature workers at a time.
BATCH = 1024
_SPEC_MEDIA = "application/vnd.spack.spec."


class MirrorChecker:
    """The checks of one mirror; :meth:`run` returns its :class:`Findings`."""

    def __init__(
        self,
        ref: MirrorRef,
        source: Source,
        *,
        limits: Limits,
        deep: bool,
        previous: Callable[[str], dict[str, SpecSignature]],
        line: ProgressLine,
    ) -> None:
        self.ref = ref
        self.source = source
        self.limits = limits
        self.deep = deep
        self.previous = previous
        self.line = line
        self.out = Findings(ref)
        self.keyring: Keyring | None = None
        self.known: dict[str, SpecSignature] = {}
        self.saw_signed = False  #: a spec was clearsigned, though without gpg none is checked

    # -- progress ------------------------------------------------------------------------

    def phase(self, name: str, total: int) -> None:
        self.out.checks.append(name)
        self.line.describe(f"{self.ref.tag}/{self.ref.stack}: {name}")
        self.line.update(0, total)

    def counted(self, results: Iterable[Any]) -> Iterator[Any]:
        done = 0
        for result in results:
            yield result
            done += 1
            if done % 128 == 0:
                self.line.advance(128)
        self.line.advance(done % 128)

    # -- the run -------------------------------------------------------------------------

    def run(self) -> Findings:
        out = self.out
        try:
            records = self._index()
            if records is None:
                return out
            if out.layout == OCI_LAYOUT:
                from .verify_oci import check_oci

                check_oci(self, records)
                return out
            self._keys()
            listed = [r for r in records if r.in_buildcache]
            if out.layout == 3:
                self._v3(listed)
            else:
                from .verify_v2 import check_v2

                check_v2(self, listed)
        finally:
            if self.keyring is not None:
                self.keyring.close()
        return out

    def _index(self) -> list[SpecRecord] | None:
        out, source = self.out, self.source
        self.phase("index", 1)
        try:
            snapshot = read_index(source, None, limits=self.limits, view=self.ref.view)
        except ChecksumError as exc:
            out.problem("index-checksum", exc.url, exc.problem)
            return None
        except SourceNotFound as exc:
            out.problem("index-missing", exc.url, exc.problem)
            return None
        except SourceError as exc:
            # index.json gone beside its index.json.hash, the index blob a manifest lists
            # gone: the mirror has no index (not an error reading one)
            cause = exc.__cause__
            gone = isinstance(cause, SourceNotFound) and cause.url == exc.url
            kind = "index-missing" if gone else "index-unreadable"
            out.problem(kind, exc.url, exc.problem)
            return None
        except IndexFormatError as exc:
            out.problem("index-unreadable", exc.url, exc.problem)
            return None
        out.index_url = snapshot.url or source.url
        if snapshot.data is None:  # never: no previous state was given
            raise AssertionError("read_index returned no data without a previous state")
        if snapshot.layout in (1, 2) and snapshot.url.endswith("/build_cache"):
            out.problem("index-missing", source.join("build_cache/index.json"), "no index (read from the spec files)")
        elif snapshot.layout in (1, 2) and source.size(V2_INDEX_HASH) is None:
            out.problem("index-missing", source.join(V2_INDEX_HASH), "missing: the index's checksum cannot be checked")
        try:
            records = build_records(decode_index(snapshot.data, url=out.index_url))
        except IndexFormatError as exc:
            out.problem("index-unreadable", exc.url, exc.problem)
            return None
        # (known once the index is read: one that is not was summed up as an empty, unsigned mirror)
        out.layout = snapshot.layout
        self.line.advance(1)
        for record in records:
            if record.external:
                out.externals.add(record.hash)
            if record.in_buildcache:
                out.listed[record.hash] = tuple((d.hash, d.name) for d in record.dependencies if d.deptypes & LINK_RUN)
                out.labels[record.hash] = f"{record.name}@{record.version}"
        return records

    def _keys(self) -> None:
        out = self.out
        if not gpg_available():
            out.skipped.append(f"signatures: {GPG_MISSING}")
            return
        self.phase("keys", 1)
        self.keyring = Keyring()
        out.problems.extend(load_keys(self.source, out.layout or 2, self.keyring, self.limits))
        out.keys = tuple(self.keyring.fingerprints)
        out.keyring = self.keyring.id
        self.known = self.previous(out.keyring)
        self.line.advance(1)

    # -- shared steps: signatures, binaries --------------------------------------------------

    def signature(self, dag_hash: str, data: bytes) -> tuple[SignatureCheck | None, str, str]:
        """(verdict, digest of the file, the text to decode) of one spec manifest or file."""
        digest = hashlib.sha256(data).hexdigest()
        signed = is_clearsigned(data)
        if self.keyring is None:
            self.saw_signed = self.saw_signed or signed
            return (SignatureCheck("unsigned") if not signed else None), digest, plain_text(data)
        known = self.known.get(dag_hash)
        if known is not None and known.digest == digest and known.status in ("signed", "unsigned"):
            return SignatureCheck(known.status, known.signer), digest, plain_text(data)
        check = self.keyring.verify(data)
        return check, digest, check.text if check.text is not None else plain_text(data)

    def decode_all(
        self, results: Iterable[tuple[str, bytes | CachedexError]], decode: Callable[[str, bytes], DecodedSpec | None]
    ) -> list[DecodedSpec]:
        """Each manifest read, decoded by ``decode`` (signatures checked by several gpg
        at once); a missing or unreadable one is noted."""
        decoded: list[DecodedSpec] = []
        batch: list[tuple[str, bytes]] = []
        workers = SIGNATURE_WORKERS if self.keyring is not None else 1
        with ThreadPoolExecutor(workers) as pool:
            for dag_hash, result in self.counted(results):
                if isinstance(result, SourceNotFound):
                    # (its problem: "not found", or over HTTP the status that says so, a
                    # 403 "missing (or not readable)", a host's "not found" page)
                    self.out.problem(
                        "manifest-missing", result.url, f"{self.label(dag_hash)}: {result.problem}", dag_hash
                    )
                elif isinstance(result, CachedexError):
                    self.out.problem(
                        "manifest-unreadable",
                        str(getattr(result, "url", "")),
                        f"{self.label(dag_hash)}: {without_url(result)}",
                        dag_hash,
                    )
                else:
                    batch.append((dag_hash, result))
                    if len(batch) >= BATCH:
                        decoded.extend(d for d in pool.map(lambda item: decode(*item), batch) if d is not None)
                        batch = []
            decoded.extend(d for d in pool.map(lambda item: decode(*item), batch) if d is not None)
        self.out.found = len(decoded)
        return decoded

    def label(self, dag_hash: str) -> str:
        return f"{self.out.labels.get(dag_hash, 'spec')} /{dag_hash}"

    def note_signatures(self, decoded: list[DecodedSpec]) -> None:
        """Record each spec's signature status; report bad and unknown-key ones, and
        unsigned ones when the mirror signs (publishes keys, or signed any spec)."""
        out = self.out
        checks = [(d, d.check) for d in decoded if d.check is not None]
        # (signed specs not checked, gpg missing, still make it a mirror that signs)
        signs = bool(out.keys) or self.saw_signed or any(c.status != "unsigned" for _d, c in checks)
        out.signing = "signed" if signs else "unsigned"
        for item, check in checks:
            out.signatures.append(SpecSignature(item.hash, check.status, check.signer, item.digest))
            if check.status == "bad":
                out.problem("signature-bad", item.url, check.problem, item.hash)
            elif check.status == "unknown-key":
                out.problem("signature-unknown-key", item.url, check.problem, item.hash)
            elif check.status == "unsigned" and signs:
                out.problem("unsigned", item.url, "not signed, though the mirror signs its specs", item.hash)

    def check_binaries(self, items: list[tuple[str, str, int | None]]) -> set[str]:
        """Check that each ``(hash, path, expected size)`` exists with that size; returns
        the hashes whose binary was found."""
        self.phase("binaries", len(items))
        expected = {dag_hash: (path, size) for dag_hash, path, size in items}
        found: set[str] = set()
        encoded: dict[str, str] = {}  # the binaries sent with a Content-Encoding: their sizes are as sent
        for dag_hash, result in self.counted(sizes(self.source, ((h, p) for h, p, _s in items), encoded=encoded)):
            path, size = expected[dag_hash]
            url = self.source.join(path)
            if dag_hash in encoded and size is not None and isinstance(result, int) and result != size:
                # (a length as sent: Spack saves those bytes, and its checksum fails on them)
                sent = sent_encoded(encoded[dag_hash])
                message = (
                    f"binary of {self.label(dag_hash)}: {result:,} bytes as sent, its manifest says {size:,}: {sent}"
                )
                self.out.problem("tarball-size", url, message, dag_hash)
            elif isinstance(result, SourceNotFound):
                message = f"binary of {self.label(dag_hash)}: {result.problem}"
                self.out.problem("tarball-missing", url, message, dag_hash)
            elif isinstance(result, CachedexError):
                message = f"binary of {self.label(dag_hash)}: {without_url(result)}"
                self.out.problem("tarball-unreadable", url, message, dag_hash)
            elif size is not None and result is not None and result != size:
                message = f"binary of {self.label(dag_hash)}: {result:,} bytes, its manifest says {size:,}"
                self.out.problem("tarball-size", url, message, dag_hash)
            else:
                found.add(dag_hash)
        self.out.binaries = len(found)
        return found

    def check_checksums(self, items: Sequence[tuple[str, str, str, str, int | None]]) -> None:
        """--deep: read each ``(hash, path, algorithm, expected digest, expected size)``
        whole (never past that size, when known)."""
        self.phase("checksums", len(items))
        expected = {dag_hash: (path, digest, size) for dag_hash, path, _algorithm, digest, size in items}
        work = ((h, p, a, s) for h, p, a, _d, s in items)
        for dag_hash, result in self.counted(checksums(self.source, work)):
            path, digest, size = expected[dag_hash]
            url = self.source.join(path)
            sent = f" (as sent): {sent_encoded(result.coding)}" if result.coding else ""
            if result.over:
                message = f"binary of {self.label(dag_hash)}: more than the {size or 0:,} bytes its manifest says"
                self.out.problem("tarball-size", url, message + sent, dag_hash)
            elif result.error is not None:
                message = f"binary of {self.label(dag_hash)}: {without_url(result.error)}"
                self.out.problem("tarball-unreadable", url, message, dag_hash)
            elif result.digest != digest:
                message = f"binary of {self.label(dag_hash)}: checksum {result.digest[:12]}…, expected {digest[:12]}…"
                self.out.problem("tarball-checksum", url, message + sent, dag_hash)

    # -- layout 3 ------------------------------------------------------------------------------

    def manifest_paths(self, listed: list[SpecRecord], path: Callable[[SpecRecord], str]) -> Iterator[tuple[str, str]]:
        for record in listed:
            if manifest_path_safe(record.name, record.version):
                yield record.hash, path(record)
            else:
                self.out.problem(
                    "manifest-unreadable", self.out.index_url, f"{self.label(record.hash)}: no safe path", record.hash
                )

    def _v3(self, listed: list[SpecRecord]) -> None:
        from .manifests import spec_manifest_path

        self.phase("manifests", len(listed))
        paths = self.manifest_paths(listed, lambda r: spec_manifest_path(r.name, r.version, r.hash))
        results = self.source.read_many(paths, raw_bytes, limit=self.limits.manifest_bytes)
        decoded = self.decode_all(results, self._decode_v3)
        self.note_signatures(decoded)
        tarballs = {d.hash: d.tarball for d in decoded if d.tarball is not None}
        found = self.check_binaries([(h, blob_path(t), t.contentLength) for h, t in tarballs.items()])
        self._spec_blobs([d for d in decoded if d.spec is not None])
        if self.deep:
            self.check_checksums(
                [
                    (h, blob_path(t), t.checksumAlgorithm, t.checksum, t.contentLength)
                    for h, t in tarballs.items()
                    if h in found
                ]
            )
        if self.ref.view is None:
            self._unindexed_v3()
        else:
            self.out.skipped.append("unindexed: not for a view (its index lists a part of the mirror)")

    def _decode_v3(self, dag_hash: str, data: bytes) -> DecodedSpec | None:
        url = self.source.join(_manifest_path_of(self, dag_hash))
        check, digest, text = self.signature(dag_hash, data)
        try:
            manifest = decode_manifest(text.encode("utf-8"), url)
        except IndexFormatError as exc:
            self.out.problem("manifest-unreadable", url, exc.problem, dag_hash)
            return DecodedSpec(dag_hash, url, check, digest)
        tarball = next((r for r in manifest.data if r.mediaType == TARBALL_MEDIA_TYPE), None)
        spec = next((r for r in manifest.data if r.mediaType.startswith(_SPEC_MEDIA)), None)
        if tarball is None or spec is None:
            missing = TARBALL_MEDIA_TYPE if tarball is None else "spec"
            self.out.problem("manifest-unreadable", url, f"lists no {missing} blob", dag_hash)
        return DecodedSpec(dag_hash, url, check, digest, tarball, spec)

    def _spec_blobs(self, decoded: list[DecodedSpec]) -> None:
        self.phase("spec blobs", len(decoded))
        by_hash = {d.hash: d for d in decoded}
        limit = self.limits.spec_file_bytes

        def root(url: str, data: bytes | bytearray, record: BlobRecord) -> str:
            verify_checksum(data, record, url)
            body = gunzip_bounded(data, limit, url) if data[:2] == b"\x1f\x8b" else bytes(data)
            return blob_root_hash(body, url)

        paths = ((d.hash, blob_path(d.spec)) for d in decoded if d.spec is not None)
        reads = self.source.read_many(paths, lambda url, data: (url, bytes(data)), limit=limit)
        for dag_hash, result in self.counted(reads):
            record = by_hash[dag_hash].spec
            assert record is not None
            url = self.source.join(blob_path(record))
            try:
                if isinstance(result, CachedexError):
                    raise result
                found = root(url, result[1], record)
            except SourceNotFound as exc:
                self.out.problem("spec-blob-missing", url, f"spec of {self.label(dag_hash)}: {exc.problem}", dag_hash)
                continue
            except ChecksumError as exc:
                self.out.problem("spec-blob-checksum", url, f"spec of {self.label(dag_hash)}: {exc.problem}", dag_hash)
                continue
            except CachedexError as exc:
                message = f"spec of {self.label(dag_hash)}: {without_url(exc)}"
                self.out.problem("spec-blob-unreadable", url, message, dag_hash)
                continue
            if found != dag_hash:
                message = f"holds the spec of {found!r}, not of {dag_hash}, which its manifest's name says"
                self.out.problem("dag-hash-mismatch", url, message, dag_hash)

    def _unindexed_v3(self) -> None:
        folders = self.source.list_folders("v3/manifests/spec")
        if folders is None:
            self.out.skipped.append("unindexed: this mirror's folders cannot be listed")
            return
        self.phase("unindexed", len(folders))
        for folder in self.counted(folders):
            for name in self.source.list_dir(f"v3/manifests/spec/{folder}") or ():
                if not name.endswith(".spec.manifest.json"):
                    continue
                dag_hash = name[: -len(".spec.manifest.json")].rpartition("-")[2]
                if is_dag_hash(dag_hash) and dag_hash not in self.out.listed:
                    url = self.source.join(f"v3/manifests/spec/{folder}/{name}")
                    self.out.problem("unindexed", url, "a spec manifest the index does not list", dag_hash)


def _manifest_path_of(checker: MirrorChecker, dag_hash: str) -> str:
    from .manifests import spec_manifest_path

    name, _, version = checker.out.labels.get(dag_hash, "@").partition("@")
    return spec_manifest_path(name, version, dag_hash)
