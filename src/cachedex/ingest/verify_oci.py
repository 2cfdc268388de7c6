"""Verify a Spack build cache in an OCI registry: each listed spec's image and layers.

The index (tag ``index.spack``) was read and checked against its digest already. Per
listed spec: its image manifest (tag ``<name>-<version>-<hash>.spack``) is there and
is an image manifest; every layer it lists (its link/run dependencies' tarballs, then
its own) exists in the repository with the size the manifest gives (HEAD; each distinct
layer asked once); with ``deep``, its own tarball (the last layer) matches its digest.
Tags of spec images the index does not list are reported. OCI caches are not signed
(Spack never signs them), so there are no keys and no signatures to check.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..errors import CachedexError, IndexFormatError, SourceNotFound
from ..values import SpecRecord, is_dag_hash
from .oci import INDEX_TAG, MANIFEST_MEDIA_TYPES, OciSource, spack_tag
from .verify_findings import without_url
from .verify_io import sizes
from .verify_mirror import MirrorChecker

__all__ = ["check_oci"]


class _Layer(msgspec.Struct):
    digest: str
    size: int


class _Image(msgspec.Struct):
    mediaType: str | None = None  # noqa: N815 - the registry's key
    layers: list[_Layer] = []


_image = msgspec.json.Decoder(_Image)


def _decode(url: str, data: bytes | bytearray) -> _Image | CachedexError:
    # (an error holding its URL apart: the problem row prints it once, not twice)
    try:
        image = _image.decode(data)
    except (msgspec.DecodeError, RecursionError) as exc:
        return IndexFormatError(url, f"not an image manifest ({exc})")
    if image.mediaType is not None and image.mediaType not in MANIFEST_MEDIA_TYPES:
        return IndexFormatError(url, f"not an image manifest (mediaType {image.mediaType!r})")
    if not image.layers:
        return IndexFormatError(url, "the image lists no layers")
    return image


def check_oci(checker: MirrorChecker, records: list[SpecRecord]) -> None:
    """The images and layers of an OCI build cache's listed specs."""
    source = checker.source
    assert isinstance(source, OciSource)
    out = checker.out
    out.signing = "none"
    listed = [r for r in records if r.in_buildcache]
    checker.phase("images", len(listed))
    refused: list[str] = []
    paths = dict(source.size_requests(((r.hash, r.name, r.version) for r in listed), refused))
    for line in refused:
        out.problem("manifest-unreadable", out.index_url, line)
    images: dict[str, _Image] = {}
    for dag_hash, result in checker.counted(
        source.read_many(paths.items(), _decode, limit=checker.limits.manifest_bytes)
    ):
        url = source.join(paths[dag_hash])
        value: Any = result
        if isinstance(value, SourceNotFound):
            out.problem("manifest-missing", url, f"image of {checker.label(dag_hash)}: not found", dag_hash)
        elif isinstance(value, CachedexError):
            out.problem(
                "manifest-unreadable", url, f"image of {checker.label(dag_hash)}: {without_url(value)}", dag_hash
            )
        else:
            images[dag_hash] = value
    out.found = len(images)
    _check_layers(checker, images)
    _unindexed(checker)


def _check_layers(checker: MirrorChecker, images: dict[str, _Image]) -> None:
    source, out = checker.source, checker.out
    wanted = sorted({layer.digest for image in images.values() for layer in image.layers})
    checker.phase("layers", len(wanted))
    found: dict[str, int | None | CachedexError] = dict(
        checker.counted(sizes(source, ((digest, f"blobs/{digest}") for digest in wanted)))
    )
    whole: set[str] = set()
    for dag_hash, image in images.items():
        complete = True
        for position, layer in enumerate(image.layers):
            result = found.get(layer.digest)
            url = source.join(f"blobs/{layer.digest}")
            own = "its own tarball" if position == len(image.layers) - 1 else f"layer {position + 1}"
            if isinstance(result, SourceNotFound):
                out.problem("layer-missing", url, f"{own} of {checker.label(dag_hash)}: not found", dag_hash)
                complete = False
            elif isinstance(result, CachedexError):
                message = f"{own} of {checker.label(dag_hash)}: {without_url(result)}"
                out.problem("tarball-unreadable", url, message, dag_hash)
                complete = False
            elif result is not None and result != layer.size:
                message = f"{own} of {checker.label(dag_hash)}: {result:,} bytes, its image says {layer.size:,}"
                out.problem("tarball-size", url, message, dag_hash)
                complete = False
        if complete:
            whole.add(dag_hash)
    out.binaries = len(whole)
    if checker.deep:
        items = []
        for dag_hash in sorted(whole):
            last = images[dag_hash].layers[-1]
            algorithm, _, digest = last.digest.partition(":")
            items.append((dag_hash, f"blobs/{last.digest}", algorithm, digest, last.size))
        checker.check_checksums(items)


def _unindexed(checker: MirrorChecker) -> None:
    source, out = checker.source, checker.out
    assert isinstance(source, OciSource)
    try:
        tags = source.list_tags()
    except CachedexError as exc:
        out.skipped.append(f"unindexed: the repository's tags cannot be listed ({exc})")
        return
    checker.phase("unindexed", len(tags))
    expected = {spack_tag(*label.partition("@")[::2], dag_hash) for dag_hash, label in out.labels.items()}
    for tag in checker.counted(tags):
        if not tag.endswith(".spack") or tag == INDEX_TAG or tag in expected:
            continue
        dag_hash = tag[: -len(".spack")].rpartition("-")[2]
        if is_dag_hash(dag_hash) and dag_hash not in out.listed:
            out.problem("unindexed", source.join(f"manifests/{tag}"), "a spec image the index does not list", dag_hash)
