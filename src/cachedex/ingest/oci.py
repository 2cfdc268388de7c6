"""A Spack build cache in an OCI registry: ``oci://HOST/REPO`` (https) or ``oci+http://``.

Spack keeps one image per spec, tagged ``<name>-<version>-<hash>.spack``: its layers are
the tarballs of the spec's link and run dependencies, then its own tarball, last; its
config is the spec. The tag ``index.spack`` is an image of one layer, the index
(``index.json``, in fact not gzipped though typed so). Reading the index is a HEAD of
that manifest (its ``Docker-Content-Digest`` says whether it changed since the last
read; a registry that refuses HEAD is sent the GET alone), then the manifest and its
one blob, each checked against its digest. A spec's
binary size is its manifest's last layer's ``size``: one small GET per spec, read
concurrently like a v3 mirror's spec manifests. Authorization (the bearer-token flow) is
:mod:`.oci_auth`'s.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urljoin, urlsplit

import msgspec

from ..config import Limits
from ..config.tags import RegistryAuth
from ..errors import CachedexError, ChecksumError, IndexFormatError, SourceError, SourceNotFound, TooBig
from ..values import short_repr
from .head_fallback import FirstByteRequest, size_by_head_or_first_byte
from .http_requests import ProgressCallback, Response
from .manifests import MAX_SIZE, gunzip_bounded
from .oci_auth import RegistrySession
from .snapshots import OCI_LAYOUT, IndexSnapshot, PreviousState
from .sources import Decoder, Fetched, Source, conditional_get

if TYPE_CHECKING:
    from .http import HttpClient

__all__ = [
    "DOCKER_HUB",
    "INDEX_TAG",
    "MANIFEST_MEDIA_TYPES",
    "OciSource",
    "registry_and_repository",
    "registry_url",
    "spack_tag",
]

K = TypeVar("K")
V = TypeVar("V")

#: Where an image name without a registry host is (Spack's and Docker's default).
DOCKER_HUB = "index.docker.io"
#: The tag of a build cache's index.
INDEX_TAG = "index.spack"
#: Image manifests a spec or the index may be: OCI's, and Docker's (from a Docker base image).
MANIFEST_MEDIA_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
#: Image indexes (manifest lists), which Spack never writes: accepted so that a tag that
#: holds one is told apart from a missing tag (a registry answers 404 to an Accept
#: without them), then refused as what it is.
_IMAGE_INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
_ACCEPT_MANIFEST = "Accept: " + ", ".join((*MANIFEST_MEDIA_TYPES, *_IMAGE_INDEX_TYPES))
_ACCEPT_JSON = "Accept: application/json"
#: The most pages of a tag list followed, the most bytes of one page, and of them all
#: (the pages alone allowed 160 GB; a million tags of Spack's length are ~80 MB).
MAX_TAG_PAGES = 10_000
TAG_PAGE_BYTES = 16_000_000
TAG_LIST_BYTES = 256_000_000
_DIGEST = re.compile(r"(sha256):([0-9a-f]{64})|(sha512):([0-9a-f]{128})")
_REPOSITORY = re.compile(r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*")
_VALID_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_NOT_TAG_CHAR = re.compile(r"[^A-Za-z0-9_.-]")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: A link of a ``Link`` header (RFC 8288): its target, then its parameters, whose quoted
#: values may hold ``,`` and ``;``; and one parameter of them.
_LINK = re.compile(r'<([^>]*)>((?:\s*;\s*[^;,=\s]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^;,"]*))?)*)')
_LINK_PARAMETER = re.compile(r'\s*;\s*([^;,=\s]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^;,"]*))?')


def spack_tag(name: str, version: str, dag_hash: str) -> str:
    """The tag Spack pushes a spec's image under: ``<name>-<version>-<hash>.spack``, every
    character outside ``[A-Za-z0-9_.-]`` made ``_``, and a tag over 128 characters cut
    to its first 64 and last 64."""
    tag = _NOT_TAG_CHAR.sub("_", f"{name}-{version}-{dag_hash}.spack")
    return tag if len(tag) <= 128 else tag[:64] + tag[-64:]


class _Descriptor(msgspec.Struct):
    digest: str
    size: int
    mediaType: str = ""


class _ImageManifest(msgspec.Struct):
    schemaVersion: int = 0
    mediaType: str | None = None
    layers: list[_Descriptor] | None = None


class _SizeLayer(msgspec.Struct):
    size: int


class _SizeManifest(msgspec.Struct):
    mediaType: str | None = None
    layers: list[_SizeLayer] | None = None


class _TagList(msgspec.Struct):
    tags: list[str] | None = None


_manifest_decoder = msgspec.json.Decoder(_ImageManifest)
_size_decoder = msgspec.json.Decoder(_SizeManifest)
_tags_decoder = msgspec.json.Decoder(_TagList)


class OciSource(Source):
    """A build cache in a repository of an OCI registry (``oci://`` or ``oci+http://``)."""

    concurrent = True

    def __init__(self, url: str, client: HttpClient, auth: RegistryAuth | None = None) -> None:
        self.url = url
        self.client = client
        parts = urlsplit(url)
        scheme = {"oci": "https", "oci+http": "http"}.get(parts.scheme)
        if scheme is None:
            raise SourceError(url, "not an OCI registry URL (expected oci://HOST/REPOSITORY or oci+http://)")
        if "@" in parts.netloc:
            shown = f"{parts.scheme}://…@{parts.netloc.rpartition('@')[2]}{parts.path}"
            raise SourceError(shown, "credentials in the URL are not read; name environment variables under registries")
        try:
            parts.port  # noqa: B018 - raises ValueError on a port that is not a number
        except ValueError as exc:
            raise SourceError(url, "the registry's port is not a number") from exc
        host, repository = registry_and_repository(parts.netloc, parts.path)
        if not parts.hostname or parts.query or parts.fragment or not _REPOSITORY.fullmatch(repository):
            raise SourceError(url, "expected oci://HOST[:PORT]/REPOSITORY, a repository name without tag or digest")
        self.scheme = scheme
        self.host = host
        self.repository = repository
        self._base = f"{scheme}://{self.host}/v2/{repository}/"
        self._session = RegistrySession(
            client, f"{scheme}://{self.host}", auth, plain_http=scheme == "http", repository=repository
        )

    def __repr__(self) -> str:
        return f"OciSource({self.url!r})"

    def join(self, path: str) -> str:
        """The real URL of ``path`` (``manifests/<tag>``, ``blobs/<digest>``, ``tags/list``)."""
        return self._base + path

    def auth_headers(self, url: str) -> list[str]:
        """The headers that authorize a request to ``url`` now (the registry's token)."""
        return self._session.auth_headers(url)

    # -- requests, with the bearer-token flow ----------------------------------------------------

    @staticmethod
    def _headers_for(path: str) -> list[str]:
        if path.startswith("manifests/"):
            return [_ACCEPT_MANIFEST]
        return [_ACCEPT_JSON] if path.startswith("tags/") else []

    # -- the index --------------------------------------------------------------------------------

    def read_index(
        self, previous: PreviousState | None, *, limits: Limits, progress: ProgressCallback | None = None
    ) -> IndexSnapshot:
        """The index (tag ``index.spack``); without data when its manifest's digest is
        ``previous``'s checksum (then only a HEAD was sent)."""
        url = self.join(f"manifests/{INDEX_TAG}")
        same_layout = previous is not None and previous.layout == OCI_LAYOUT
        try:
            # Nexus, and distribution before 2.3 behind token auth, refuse HEAD on a
            # manifest (405) though the spec wants it: then the GET alone tells.
            head = self._session.request(url, method="HEAD", headers=[_ACCEPT_MANIFEST], limit=0, ok=(200, 405, 501))
            digest = _digest_header(head, url) if head.status == 200 else None
            if same_layout and previous is not None and digest is not None and previous.checksum == digest:
                return IndexSnapshot(OCI_LAYOUT, digest, None)
            response = self._session.request(url, headers=[_ACCEPT_MANIFEST], limit=limits.manifest_bytes)
        except SourceNotFound as exc:
            raise SourceNotFound(
                url, "no index.spack in this repository; run 'spack buildcache update-index' on it"
            ) from exc
        expected = _digest_header(response, url) or digest
        actual = _digest_of(response.body, expected or "sha256:")
        if expected is not None and actual != expected:
            raise ChecksumError(
                url, f"the manifest does not match its digest (expected {expected[:19]}…, got {actual[:19]}…)"
            )
        if same_layout and previous is not None and previous.checksum == actual:
            return IndexSnapshot(OCI_LAYOUT, actual, None)
        manifest = _decode_manifest(url, response.body, response.headers.get("content-type", ""))
        layers = manifest.layers or []
        if len(layers) != 1:
            raise IndexFormatError(url, f"index.spack has {len(layers)} layers; expected exactly one, the index")
        layer = layers[0]
        blob_url = self.join(f"blobs/{layer.digest}")
        if layer.size > limits.index_bytes:
            raise TooBig(blob_url, f"larger than {limits.index_bytes:,} bytes, the limit for this kind of file")
        try:
            blob = self._session.request(blob_url, limit=limits.index_bytes, progress=progress).body
        except SourceNotFound as exc:
            raise SourceError(blob_url, f"the index blob listed in {url} is missing ({exc.problem})") from exc
        got = _digest_of(blob, layer.digest)
        if got != layer.digest:
            raise ChecksumError(
                blob_url, f"checksum mismatch (expected {layer.digest[:19]}…, got {got[:19]}…): the blob is corrupt"
            )
        if len(blob) != layer.size:
            raise ChecksumError(blob_url, f"size mismatch (the manifest says {layer.size} bytes, got {len(blob)})")
        # Spack types the layer gzip but writes plain JSON: trust the bytes, not the type.
        data = gunzip_bounded(blob, limits.index_bytes, blob_url) if blob[:2] == b"\x1f\x8b" else blob
        return IndexSnapshot(OCI_LAYOUT, actual, data, url=blob_url)

    # -- sizes -------------------------------------------------------------------------------------

    def size_requests(self, specs: Iterable[tuple[str, str, str]], refused: list[str]) -> Iterator[tuple[str, str]]:
        """``(dag_hash, "manifests/<tag>")`` for each ``(dag_hash, name, version)``; a spec
        whose name or version is empty or holds a control character is noted in
        ``refused`` and skipped."""
        for dag_hash, name, version in specs:
            bad = next((part for part in (name, version, dag_hash) if not part or _CONTROL.search(part)), None)
            if bad is not None:
                refused.append(f"{self.url}: spec {short_repr(dag_hash)}: {short_repr(bad)} cannot be part of a tag")
                continue
            yield dag_hash, f"manifests/{spack_tag(name, version, dag_hash)}"

    @staticmethod
    def decode_size(url: str, data: bytes | bytearray) -> int:
        """A spec's binary size from its image manifest: the size of the last layer."""
        try:
            manifest = _size_decoder.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise IndexFormatError(url, f"not an image manifest: {short_repr(str(exc))}") from exc
        if manifest.mediaType is not None and manifest.mediaType not in MANIFEST_MEDIA_TYPES:
            raise IndexFormatError(url, _not_a_manifest(manifest.mediaType))
        if not manifest.layers:
            raise IndexFormatError(url, "the image manifest lists no layers")
        size = manifest.layers[-1].size
        if not 0 <= size < MAX_SIZE:
            raise IndexFormatError(url, f"layer size {size} is not a size a file can have")
        return size

    # -- Source -------------------------------------------------------------------------------------

    def fetch(
        self,
        path: str,
        *,
        limit: int,
        etag: str | None = None,
        last_modified: str | None = None,
        progress: ProgressCallback | None = None,
    ) -> Fetched | None:
        return conditional_get(
            self._session.request,
            self.join(path),
            self._headers_for(path),
            limit=limit,
            etag=etag,
            last_modified=last_modified,
            progress=progress,
        )

    def size(self, path: str) -> int | None:
        headers = self._headers_for(path)

        def probe(url: str) -> FirstByteRequest:  # (a registry that ignores Range: its token as it is now)
            return FirstByteRequest(url, headers=[*headers, *self.auth_headers(url)])

        send, client = self._session.request, self.client
        return size_by_head_or_first_byte(self, self.join(path), headers, send=send, client=client, probe=probe)

    def read_many(
        self, items: Iterable[tuple[K, str]], decode: Decoder[V], *, limit: int
    ) -> Iterator[tuple[K, V | CachedexError]]:
        def body(response: Response) -> V:
            return decode(response.url, response.body)

        wanted = ((key, self.join(path), self._headers_for(path)) for key, path in items)
        return self._session.map(wanted, body, limit=limit)

    def list_dir(self, path: str) -> list[str] | None:
        """The repository's tags, as the "files" under ``manifests``; None elsewhere."""
        return self.list_tags() if path.strip("/") == "manifests" else None

    def list_tags(self) -> list[str]:
        """Every tag of the repository (``tags/list``, following ``Link: <…>; rel="next"``
        to pages of this registry, at most :data:`MAX_TAG_PAGES`)."""
        url = self.join("tags/list")
        origin = _origin(url)
        seen = {url}
        tags: list[str] = []
        read = 0
        for _page in range(MAX_TAG_PAGES):
            response = self._session.request(url, headers=[_ACCEPT_JSON], limit=TAG_PAGE_BYTES)
            read += len(response.body)
            if read > TAG_LIST_BYTES:
                raise SourceError(self.join("tags/list"), f"the tag list is larger than {TAG_LIST_BYTES:,} bytes")
            try:
                listed = _tags_decoder.decode(response.body).tags or []
            except (msgspec.DecodeError, RecursionError) as exc:
                raise IndexFormatError(url, f"not a tag list: {short_repr(str(exc))}") from exc
            for tag in listed:
                if not _VALID_TAG.fullmatch(tag):
                    raise IndexFormatError(url, f"{short_repr(tag)} is not a valid tag")
            tags.extend(listed)
            link = _next_link(response.headers.get("link", ""))
            if link is None:
                return tags
            following = urljoin(url, link)
            if _origin(following) != origin:
                raise SourceError(url, f"the next page {short_repr(link)} is not on this registry")
            if following in seen:
                raise SourceError(url, f"the next page {short_repr(link)} was read before: a loop")
            seen.add(following)
            url = following
        raise SourceError(self.join("tags/list"), f"more than {MAX_TAG_PAGES:,} pages of tags")


def registry_and_repository(netloc: str, path: str) -> tuple[str, str]:
    """The registry host and the repository an OCI URL's ``netloc`` and ``path`` name, as
    Spack reads an image name (``ImageReference.from_string``, like Docker): a first part
    with no ``.`` or ``:`` that is not ``localhost`` is no host but a Docker Hub user, so
    ``oci://myuser/cache`` is ``index.docker.io``'s ``myuser/cache`` (read as the host
    ``myuser``, it could not be resolved), and ``oci://ubuntu`` its ``library/ubuntu``.
    The repository is lower-cased, as Spack pushes it."""
    name = path.strip("/")
    if "." in netloc or ":" in netloc or netloc == "localhost" or netloc != netloc.lower():
        return netloc.lower(), name.lower()
    return DOCKER_HUB, (f"{netloc}/{name}" if name else f"library/{netloc}").lower()


def registry_url(url: str) -> str:
    """The ``scheme://host/`` an OCI mirror URL's requests go to (see
    :func:`registry_and_repository`), for whom its credentials are."""
    parts = urlsplit(url)
    host, _ = registry_and_repository(parts.netloc, parts.path)
    return f"{'http' if parts.scheme == 'oci+http' else 'https'}://{host}/"


def _next_link(header: str) -> str | None:
    """The target of the link in ``header`` whose ``rel`` lists ``next`` among its
    space-separated relation types (RFC 8288: ``rel="last next"`` is one; a type that
    only starts with it, ``next-archive``, is not); None if there is none."""
    for link in _LINK.finditer(header):
        for parameter in _LINK_PARAMETER.finditer(link.group(2)):
            if parameter.group(1).lower() == "rel":
                # (a link's second rel is ignored, as RFC 8288 says)
                if "next" in (parameter.group(2) or "").strip().strip('"').lower().split():
                    return link.group(1)
                break
    return None


def _origin(url: str) -> str:
    """``scheme://host:port`` of ``url``, the port said even where it is the default one
    (``https://r.example:443/`` is ``https://r.example/``'s origin)."""
    parts = urlsplit(url)
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        port = None  # (a port out of range names no server: compared as written)
    host = (parts.hostname or "").lower()
    return f"{parts.scheme}://{host}:{port}" if port else f"{parts.scheme}://{parts.netloc.lower()}"


def _digest_header(response: Response, url: str) -> str | None:
    """The ``Docker-Content-Digest`` of ``response`` (None if absent); SourceError if malformed."""
    value = response.headers.get("docker-content-digest", "").strip()
    if not value:
        return None
    if not _DIGEST.fullmatch(value):
        raise SourceError(url, f"Docker-Content-Digest {short_repr(value)} is not a sha256 or sha512 digest")
    return value


def _not_a_manifest(media: str) -> str:
    """Why a manifest of media type ``media`` is not the image manifest Spack pushes."""
    if media in _IMAGE_INDEX_TYPES:
        return f"an image index ({media}: a list of manifests), not the image manifest Spack pushes"
    return f"a manifest of unknown media type {short_repr(media)} (expected an OCI or Docker v2 image manifest)"


def _digest_of(data: bytes | bytearray, like: str) -> str:
    """``algorithm:hex`` of ``data``, with the algorithm of digest ``like``."""
    algorithm = "sha512" if like.startswith("sha512:") else "sha256"
    return f"{algorithm}:{hashlib.new(algorithm, data).hexdigest()}"


def _decode_manifest(url: str, data: bytes | bytearray, content_type: str) -> _ImageManifest:
    """An image manifest whose layers' digests and sizes are sound; IndexFormatError naming ``url``."""
    try:
        manifest = _manifest_decoder.decode(data)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise IndexFormatError(url, f"not an image manifest: {short_repr(str(exc))}") from exc
    media = manifest.mediaType or content_type.partition(";")[0].strip()
    if media not in MANIFEST_MEDIA_TYPES:
        raise IndexFormatError(url, _not_a_manifest(media))
    if manifest.schemaVersion != 2:
        raise IndexFormatError(url, f"schemaVersion {manifest.schemaVersion} is not 2")
    for layer in manifest.layers or []:
        if not _DIGEST.fullmatch(layer.digest):
            raise IndexFormatError(url, f"layer digest {short_repr(layer.digest)} is not a sha256 or sha512 digest")
        if not 0 <= layer.size < MAX_SIZE:
            raise IndexFormatError(url, f"layer size {layer.size} is not a size a file can have")
    return manifest
