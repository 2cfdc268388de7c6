"""OCI registries for tests and benchmarks: Debian's ``docker-registry`` on 127.0.0.1, a
pusher that lays a Spack build cache into one over the distribution API, and a small
scripted registry with its own token service (the bearer flow the real one is not set
up for here).

The pusher follows Spack's layout (``binary_distribution._oci_push``): per listed spec an
image tagged ``<name>-<version>-<hash>.spack`` whose layers are the tarballs of its
link/run dependencies, then its own tarball last, and whose config holds the spec; and
``index.spack``, one layer holding the index's bytes. Its tag rule is written here again,
on purpose, rather than imported: a test of the reader must not share the reader's bug.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.servers import _Server, free_port, settled_log, wait_for_port

__all__ = [
    "OCI_MANIFEST",
    "FakeRegistry",
    "PushedCache",
    "Recorder",
    "Registry",
    "RegistryProxy",
    "RegistryPusher",
    "expected_tag",
    "push_spack_cache",
]

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def expected_tag(name: str, version: str, dag_hash: str) -> str:
    """Spack's tag for a spec (``_oci_default_tag``, ``ensure_valid_tag``), written out anew."""
    tag = "".join(
        c if (c.isascii() and (c.isalnum() or c in "_.-")) else "_" for c in f"{name}-{version}-{dag_hash}.spack"
    )
    return tag if len(tag) <= 128 else tag[:64] + tag[-64:]


# -- the real registry ----------------------------------------------------------------------------


class Registry(_Server):
    """Debian's docker-registry (distribution 2.8) on 127.0.0.1, storing under
    ``storage`` (default: its own temporary folder, removed when it stops); without auth,
    or with ``htpasswd`` (a file's line ``user:bcrypt hash``) asking every request for
    Basic credentials (401 ``WWW-Authenticate: Basic realm=...``, as AWS ECR asks).
    :meth:`requests` lists what it served, from its access log."""

    def __init__(self, storage: Path | None = None, *, htpasswd: str | None = None) -> None:
        binary = shutil.which("docker-registry") or "/usr/bin/docker-registry"
        if not os.path.exists(binary):
            raise RuntimeError(
                "docker-registry is not installed (Debian package docker-registry; scripts/test installs it)"
            )
        self.workdir = Path(tempfile.mkdtemp(prefix="cachedex-registry-"))
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.host}"
        self.access_log = self.workdir / "access.log"
        auth = ""
        if htpasswd is not None:
            (self.workdir / "htpasswd").write_text(htpasswd + "\n")
            auth = f"auth:\n  htpasswd:\n    realm: cachedex-tests\n    path: {self.workdir / 'htpasswd'}\n"
        config = f"""
version: 0.1
log:
  level: error
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: {storage or self.workdir / "storage"}
  delete:
    enabled: true
{auth}http:
  addr: {self.host}
  secret: cachedex-tests
"""
        (self.workdir / "config.yml").write_text(config)
        log = self.workdir / "error.log"
        self._log = open(log, "ab")  # noqa: SIM115 - the server writes to it as long as it runs
        self._access = open(self.access_log, "ab")  # noqa: SIM115
        self.process = subprocess.Popen(
            [binary, "serve", str(self.workdir / "config.yml")], stdout=self._access, stderr=self._log
        )
        wait_for_port(self.port, self.process, log)

    def stop(self) -> None:
        super().stop()
        self._access.close()

    def requests(self) -> list[tuple[str, str, int]]:
        """(method, path with query, status) of every request served so far."""
        found = re.findall(r'"([A-Z]+) (\S+) HTTP/[\d.]+" (\d+)', settled_log(self.access_log))
        return [(method, path, int(status)) for method, path, status in found]


class RegistryPusher:
    """The distribution API's push side, over keep-alive connections (one per thread)."""

    def __init__(self, base_url: str, repository: str) -> None:
        parts = urlsplit(base_url)
        self.netloc = parts.netloc
        self.repository = repository
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []

    def close(self) -> None:
        for connection in self._connections:
            connection.close()

    def __enter__(self) -> RegistryPusher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> Any:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = http.client.HTTPConnection(self.netloc, timeout=60)
            self._connections.append(connection)
        connection.request(method, path, body=body, headers={"Content-Length": str(len(body)), **(headers or {})})
        response = connection.getresponse()
        response.read()
        if response.status not in (200, 201, 202):
            raise RuntimeError(f"{method} {path}: HTTP {response.status}")
        return response

    def put_blob(self, data: bytes) -> str:
        """Upload ``data`` (POST an upload, PUT it with its digest); its digest."""
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        started = self._call("POST", f"/v2/{self.repository}/blobs/uploads/")
        location = urlsplit(started.getheader("Location"))
        query = f"{location.query}&" if location.query else ""
        self._call(
            "PUT",
            f"{location.path}?{query}digest={digest}",
            data,
            {"Content-Type": "application/octet-stream"},
        )
        return digest

    def put_manifest(self, tag: str, manifest: dict[str, Any]) -> tuple[str, bytes]:
        """PUT ``manifest`` under ``tag`` with its media type; (its digest, its bytes)."""
        data = json.dumps(manifest, separators=(",", ":")).encode()
        response = self._call(
            "PUT", f"/v2/{self.repository}/manifests/{tag}", data, {"Content-Type": manifest["mediaType"]}
        )
        digest = response.getheader("Docker-Content-Digest")
        assert digest == "sha256:" + hashlib.sha256(data).hexdigest()
        return digest, data


@dataclass
class PushedCache:
    """What :func:`push_spack_cache` put in the registry."""

    index: bytes  # the bytes of index.spack's layer
    index_digest: str  # the digest of index.spack's manifest
    sizes: dict[str, int] = field(default_factory=dict)  # dag hash -> size of its own tarball
    tags: dict[str, str] = field(default_factory=dict)  # dag hash -> its tag


def _descriptor(media: str, digest: str, size: int) -> dict[str, Any]:
    return {"mediaType": media, "digest": digest, "size": size}


def push_index(pusher: RegistryPusher, layer: bytes, *, tag: str = "index.spack") -> str:
    """``index.spack`` (or ``tag``): an empty config and one layer, ``layer``; its digest."""
    config = pusher.put_blob(b"{}")
    digest = pusher.put_blob(layer)
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": _descriptor(OCI_CONFIG, config, 2),
        "layers": [_descriptor(OCI_LAYER, digest, len(layer))],
    }
    return pusher.put_manifest(tag, manifest)[0]


def push_spack_cache(
    base_url: str,
    repository: str,
    index: dict[str, Any],
    *,
    seed: int = 0,
    workers: int = 1,
    index_layer: bytes | None = None,
    spec_configs: bool = True,
) -> PushedCache:
    """Push ``index`` (a Database dict) as a Spack OCI build cache: a random tarball of a
    known size per listed spec (the sizes returned), its image, and ``index.spack``
    holding ``index_layer`` (default: the index as compact JSON). ``spec_configs=False``
    gives every image one shared config (a benchmark's shortcut)."""
    with RegistryPusher(base_url, repository) as pusher, ThreadPoolExecutor(workers) as pool:
        return _push(pusher, pool.map if workers > 1 else map, index, seed, index_layer, spec_configs)


def _push(
    pusher: RegistryPusher,
    run: Callable[..., Iterable[Any]],
    index: dict[str, Any],
    seed: int,
    index_layer: bytes | None,
    spec_configs: bool,
) -> PushedCache:
    rng = random.Random(seed)
    installs: dict[str, Any] = index["database"]["installs"]
    listed = [h for h, r in installs.items() if r.get("in_buildcache")]
    tarballs = {h: rng.randbytes(rng.randint(50, 3000)) for h in listed}
    digests = dict(zip(listed, run(pusher.put_blob, [tarballs[h] for h in listed]), strict=True))
    shared_config = None if spec_configs else pusher.put_blob(b'{"architecture":"amd64","os":"linux"}')
    pushed = PushedCache(b"", "")

    def push_spec(dag_hash: str) -> None:
        node = installs[dag_hash]["spec"]
        layers = [_descriptor(OCI_LAYER, digests[d], len(tarballs[d])) for d in _link_run_closure(installs, dag_hash)]
        own = tarballs[dag_hash]
        layers.append(_descriptor(OCI_LAYER, digests[dag_hash], len(own)))
        if shared_config is None:
            config_data = json.dumps(
                {
                    "architecture": "amd64",
                    "os": "linux",
                    "spec": {"_meta": {"version": 5}, "nodes": [node]},
                    "buildcache_layout_version": 2,
                    "binary_cache_checksum": {"hash_algorithm": "sha256", "hash": digests[dag_hash][7:]},
                    "archive_size": len(own),
                    "archive_compression": "gzip",
                }
            ).encode()
            config = _descriptor(OCI_CONFIG, pusher.put_blob(config_data), len(config_data))
        else:
            config = _descriptor(OCI_CONFIG, shared_config, 37)
        manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": config, "layers": layers}
        tag = expected_tag(node["name"], str(node["version"]), dag_hash)
        pusher.put_manifest(tag, manifest)
        pushed.sizes[dag_hash] = len(own)
        pushed.tags[dag_hash] = tag

    list(run(push_spec, listed))
    pushed.index = index_layer if index_layer is not None else json.dumps(index, separators=(",", ":")).encode()
    pushed.index_digest = push_index(pusher, pushed.index)
    return pushed


def _link_run_closure(installs: dict[str, Any], dag_hash: str) -> list[str]:
    """The listed link/run dependencies of a spec, deepest first (each once)."""
    order: list[str] = []

    def visit(current: str) -> None:
        for edge in installs[current]["spec"].get("dependencies", []):
            types = edge.get("parameters", {}).get("deptypes", edge.get("type", []))
            child = edge["hash"]
            if child in order or child not in installs or not ({"link", "run"} & set(types)):
                continue
            visit(child)
            if installs[child].get("in_buildcache") and child not in order:
                order.append(child)

    visit(dag_hash)
    return order


# -- fakes ------------------------------------------------------------------------------------------


@dataclass
class Seen:
    """One request a fake received."""

    method: str
    path: str  # with its query
    headers: dict[str, str]


Route = tuple[int, dict[str, str], bytes]


class _Fake:
    """An http.server on 127.0.0.1 (keep-alive, threads) answering through ``respond``."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - silence
                pass

            def do_GET(self) -> None:  # noqa: N802
                self._answer(body=True)

            def do_HEAD(self) -> None:  # noqa: N802
                self._answer(body=False)

            def _answer(self, *, body: bool) -> None:
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()})
                fake.seen.append(seen)
                status, headers, data = fake.respond(seen)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.host = f"127.0.0.1:{self.server.server_port}"
        self.url = f"http://{self.host}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def respond(self, seen: Seen) -> Route:
        raise NotImplementedError

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> _Fake:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Recorder(_Fake):
    """Answers every request with ``data`` (a CDN a blob is redirected to), recording it."""

    def __init__(self, data: bytes = b"") -> None:
        self.data = data
        super().__init__()

    def respond(self, seen: Seen) -> Route:
        return 200, {"Content-Type": "application/octet-stream"}, self.data


class FakeRegistry(_Fake):
    """A registry of ``routes`` (path, with or without its query -> status, headers, body)
    with a token service at ``/token``.

    With ``token_required``, a request without a token the service issued gets 401 and
    ``challenge`` (default: a Bearer challenge naming /token). The service answers
    ``token_answer(n)`` (default ``{token_field: "tok-<n>-…"}``) with ``token_status``; with
    ``basic`` set it wants those Basic credentials. ``revoke()`` forgets every token issued."""

    def __init__(
        self,
        *,
        token_required: bool = True,
        token_field: str = "token",
        token_status: int = 200,
        basic: str | None = None,
        challenge: str | None = None,
        token_answer: Callable[[int], dict[str, Any]] | None = None,
    ) -> None:
        self.routes: dict[str, Route] = {}
        self.token_required = token_required
        self.token_field = token_field
        self.token_status = token_status
        self.basic = basic
        self.token_answer = token_answer
        self.issued: list[str] = []
        self.valid: set[str] = set()
        self._lock = threading.Lock()
        super().__init__()
        self.challenge = (
            challenge
            if challenge is not None
            else f'Bearer realm="{self.url}/token",service="fake",scope="repository:cache/spack:pull"'
        )

    def revoke(self) -> None:
        with self._lock:
            self.valid.clear()

    def token_requests(self) -> list[Seen]:
        return [s for s in self.seen if s.path.startswith("/token")]

    def respond(self, seen: Seen) -> Route:
        if seen.path.startswith("/token"):
            return self._token(seen)
        if self.token_required:
            offered = seen.headers.get("authorization", "")
            with self._lock:
                good = offered.startswith("Bearer ") and offered[7:] in self.valid
            if not good:
                headers = {"WWW-Authenticate": self.challenge} if self.challenge else {}
                return 401, {**headers, "Content-Type": "application/json"}, b'{"errors":[{"code":"UNAUTHORIZED"}]}'
        route = self.routes.get(seen.path) or self.routes.get(seen.path.split("?", 1)[0])
        if route is None:
            return 404, {"Content-Type": "application/json"}, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}'
        return route

    def _token(self, seen: Seen) -> Route:
        if self.token_status != 200:
            return self.token_status, {}, b'{"details":"no"}'
        if self.basic is not None and seen.headers.get("authorization") != f"Basic {self.basic}":
            return 401, {}, b'{"details":"bad credentials"}'
        with self._lock:
            number = len(self.issued)
            token = f"tok-{number}-{random.getrandbits(64):x}"
            self.issued.append(token)
            self.valid.add(token)
        answer = self.token_answer(number) if self.token_answer else {self.token_field: token}
        return 200, {"Content-Type": "application/json"}, json.dumps(answer).encode()

    def add_manifest(self, tag: str, manifest: dict[str, Any] | bytes, *, digest: str | None = None) -> str:
        """Serve ``manifest`` as ``manifests/<tag>`` of repository ``cache/spack``; its digest."""
        data = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
        digest = digest or "sha256:" + hashlib.sha256(data).hexdigest()
        headers = {"Content-Type": OCI_MANIFEST, "Docker-Content-Digest": digest}
        self.routes[f"/v2/cache/spack/manifests/{tag}"] = (200, headers, data)
        return digest

    def add_blob(self, data: bytes, *, digest: str | None = None) -> str:
        """Serve ``data`` as ``blobs/<digest>`` (its own digest unless given); the digest."""
        digest = digest or "sha256:" + hashlib.sha256(data).hexdigest()
        self.routes[f"/v2/cache/spack/blobs/{digest}"] = (200, {"Content-Type": "application/octet-stream"}, data)
        return digest

    def add_index(self, layer: bytes, *, layer_digest: str | None = None, layers: int = 1) -> str:
        """``index.spack`` with ``layers`` copies of one layer holding ``layer``; the manifest's digest."""
        digest = self.add_blob(layer, digest=layer_digest)
        manifest = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": _descriptor(OCI_CONFIG, self.add_blob(b"{}"), 2),
            "layers": [_descriptor(OCI_LAYER, digest, len(layer))] * layers,
        }
        return self.add_manifest("index.spack", manifest)


def query_of(seen: Seen) -> dict[str, list[str]]:
    """The query parameters of a request a fake received."""
    return parse_qs(urlsplit(seen.path).query)


def spec_manifest(sizes: Iterable[int]) -> dict[str, Any]:
    """An image manifest whose layers have ``sizes`` (the last is the spec's own tarball)."""
    layers = [_descriptor(OCI_LAYER, "sha256:" + f"{n:x}".rjust(64, "0"), size) for n, size in enumerate(sizes)]
    return {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": _descriptor(OCI_CONFIG, "sha256:" + "0" * 64, 2),
        "layers": layers,
    }


class RegistryProxy(FakeRegistry):
    """A real registry (``upstream``) behind :class:`FakeRegistry`'s token check: what
    the check lets through goes to ``upstream``, unless ``intercept`` answers it first
    (a registry's quirk the real one cannot be configured to show). Without
    ``token_required`` it is a plain relay."""

    _HOP_BY_HOP = frozenset({"connection", "content-length", "date", "keep-alive", "transfer-encoding"})

    def __init__(
        self, upstream: Registry, *, intercept: Callable[[Seen], Route | None] | None = None, **options: Any
    ) -> None:
        self.upstream = upstream
        self.intercept = intercept
        super().__init__(**options)

    def respond(self, seen: Seen) -> Route:
        answer = super().respond(seen)  # the token service, a 401, or (no routes) a 404
        if seen.path.startswith("/token") or answer[0] == 401:
            return answer
        if self.intercept is not None:
            intercepted = self.intercept(seen)
            if intercepted is not None:
                return intercepted
        connection = http.client.HTTPConnection(self.upstream.host, timeout=30)
        try:
            accept = {"Accept": seen.headers["accept"]} if "accept" in seen.headers else {}
            connection.request(seen.method, seen.path, headers=accept)
            response = connection.getresponse()
            body = response.read()
            headers = {k: v for k, v in response.getheaders() if k.lower() not in self._HOP_BY_HOP}
            return response.status, headers, body
        finally:
            connection.close()
