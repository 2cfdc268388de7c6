"""Verify the specs of a layout 1 or 2 mirror (``build_cache/``): spec files, signatures,
``.spack`` binaries, and spec files its index does not list.

A listed spec's spec file is ``<stem>-<hash>.spec.json.sig`` (clearsigned) or
``.spec.json`` (format doc §5.2); where both exist the signed one is checked, as Spack
prefers it. v2 metadata gives no binary size, so a binary is checked for existence
only, and with ``--deep`` against the spec file's ``binary_cache_checksum``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import msgspec

from ..errors import CachedexError, SourceNotFound
from ..values import DAG_HASH, SpecRecord
from .manifests import tarball_path_v2
from .verify_documents import NO_ROOT, DecodedSpec, raw_bytes, root_hash
from .verify_mirror import MirrorChecker

__all__ = ["check_v2", "spec_file_stem"]

_SPEC_FILE = re.compile(rf".+-({DAG_HASH.pattern})\.spec\.(json|json\.sig|yaml)")


def spec_file_stem(record: SpecRecord) -> str:
    """``build_cache/<arch>-<compiler>-<name>-<version>-<hash>`` of a listed record."""
    return "build_cache/" + _tarball(record).rpartition("/")[2].removesuffix(".spack")


def check_v2(checker: MirrorChecker, listed: list[SpecRecord]) -> None:
    """The spec files, signatures and binaries of a v1/v2 mirror's listed specs."""
    source, out = checker.source, checker.out
    checker.phase("spec files", len(listed))
    stems = dict(checker.manifest_paths(listed, spec_file_stem))
    names = source.list_dir("build_cache")
    chosen: dict[str, str] = {}  #: the spec file read, by hash
    if names is not None:  # a folder: take the file that is there
        present = set(names)
        for dag_hash, stem in stems.items():
            base = stem.rpartition("/")[2]
            suffix = next((s for s in (".spec.json.sig", ".spec.json") if base + s in present), ".spec.json.sig")
            chosen[dag_hash] = stem + suffix
        results = source.read_many(chosen.items(), raw_bytes, limit=checker.limits.spec_file_bytes)
    else:
        results = _signed_then_plain(checker, stems, chosen)
    decoded = checker.decode_all(results, lambda h, data: _decode(checker, h, data, chosen[h]))
    checker.note_signatures(decoded)
    by_hash = {record.hash: record for record in listed}
    tarballs = {d.hash: _tarball(by_hash[d.hash]) for d in decoded}
    found = checker.check_binaries([(h, path, None) for h, path in tarballs.items()])
    if checker.deep:
        items = []
        for d in decoded:
            digest = _checksum_of(d.document)
            if d.hash in found and digest is not None:
                items.append((d.hash, tarballs[d.hash], "sha256", digest, None))
        checker.check_checksums(items)
    if names is None:
        out.skipped.append("unindexed: this mirror's folders cannot be listed")
        return
    checker.phase("unindexed", len(names))
    for name in checker.counted(names):
        match = _SPEC_FILE.fullmatch(name)
        if match and match.group(1) not in out.listed:
            url = source.join(f"build_cache/{name}")
            out.problem("unindexed", url, "a spec file the index does not list", match.group(1))


def _signed_then_plain(
    checker: MirrorChecker, stems: dict[str, str], chosen: dict[str, str]
) -> Iterator[tuple[str, bytes | CachedexError]]:
    """Over HTTP: each ``.spec.json.sig``, then the ``.spec.json`` of those without one;
    notes in ``chosen`` the path of each spec file read."""
    limit = checker.limits.spec_file_bytes
    unsigned: list[tuple[str, str]] = []
    for dag_hash, result in checker.source.read_many(
        ((h, stem + ".spec.json.sig") for h, stem in stems.items()), raw_bytes, limit=limit
    ):
        if isinstance(result, SourceNotFound):
            unsigned.append((dag_hash, stems[dag_hash] + ".spec.json"))
        else:
            chosen[dag_hash] = stems[dag_hash] + ".spec.json.sig"
            yield dag_hash, result
    for dag_hash, result in checker.source.read_many(unsigned, raw_bytes, limit=limit):
        if isinstance(result, SourceNotFound):
            base = checker.source.join(stems[dag_hash])
            yield dag_hash, SourceNotFound(base + ".spec.json.sig", "not found (nor .spec.json)")
        else:
            chosen[dag_hash] = stems[dag_hash] + ".spec.json"
            yield dag_hash, result


def _decode(checker: MirrorChecker, dag_hash: str, data: bytes, path: str) -> DecodedSpec:
    url = checker.source.join(path)  # the file read, whatever it holds
    check, digest, text = checker.signature(dag_hash, data)
    decoded = DecodedSpec(dag_hash, url, check, digest)
    try:
        decoded.document = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError) as exc:
        checker.out.problem("manifest-unreadable", url, f"not a spec file ({exc})", dag_hash)
        return decoded
    found = root_hash(decoded.document)
    if found is None:  # (it was said to hold "the spec of None")
        checker.out.problem("manifest-unreadable", url, NO_ROOT, dag_hash)
    elif found != dag_hash:
        message = f"holds the spec of {found!r}, not of {dag_hash}, which its name says"
        checker.out.problem("dag-hash-mismatch", url, message, dag_hash)
    return decoded


def _tarball(record: SpecRecord) -> str:
    return tarball_path_v2(
        hash=record.hash,
        name=record.name,
        version=record.version,
        compiler=record.compiler,
        platform=record.platform,
        os=record.os,
        target=record.target,
    )


def _checksum_of(document: object) -> str | None:
    """The sha256 a v1/v2 spec file gives for its ``.spack`` (``binary_cache_checksum``)."""
    checksum = document.get("binary_cache_checksum") if isinstance(document, dict) else None
    if isinstance(checksum, dict) and checksum.get("hash_algorithm", "sha256") == "sha256":
        value = checksum.get("hash")
        return value if isinstance(value, str) else None
    return None
