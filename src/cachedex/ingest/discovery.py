"""``tags_from``: cache.spack.io's discovery file, read when a command needs its tags.

The file (``{"<tag>": [{"label": "root" | "<stack>", "url": "<index URL>"}]}``, format
doc §6.2) is read with a size limit, from a regular file or over HTTP through the sync's
client. A file read over HTTP may name only http(s) mirrors (never ``file://`` or a
local path): whoever serves it must not be able to point cachedex at this machine's
files.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin, urlsplit

import msgspec

from ..config import Config, TagConfig, check_unique
from ..config.tags import check_url
from ..errors import CachedexError, ConfigError
from ..values import ROOT_STACK, MirrorRef, check_label, short_repr
from .credentials import auth_for, authorization
from .http_requests import Request
from .sources import over_network, read_at_most

if TYPE_CHECKING:
    from .http import HttpClient

__all__ = ["chosen_tags", "mirror_url_from_index_url", "mirrors_from_discovery", "with_discovered_tags"]


def _needs_http(config: Config, tags: Iterable[TagConfig]) -> bool:
    # (by the rule open_source reads a URL by: "HTTPS://" is https too)
    return over_network(config.tags_from or "") or any(over_network(m.url) for t in tags for m in t.mirrors)


@contextmanager
def chosen_tags(
    config: Config, names: Iterable[str] | None
) -> Iterator[tuple[Config, list[TagConfig], HttpClient | None]]:
    """What a command over tags (``sync``, ``verify``) reads: ``config`` with its
    ``tags_from`` tags added, the tags ``names`` chooses, each once (default: every one;
    ConfigError for a tag not configured), and the HTTP client they need (None if no mirror is
    remote), closed when the block ends."""
    client = _client(config) if _needs_http(config, config.tags) else None
    try:
        config = with_discovered_tags(config, client)
        # (a tag named twice is synced once: dict keeps the first of each, in order)
        chosen = [config.tag(name) for name in dict.fromkeys(names)] if names else list(config.tags)
        if client is None and _needs_http(config, chosen):
            client = _client(config)
        yield config, chosen, client
    finally:
        if client is not None:
            client.close()


def _client(config: Config) -> HttpClient:
    """The HTTP client of ``config``'s ``http`` settings; a ConfigError names the file."""
    # Imported here: a sync of folders alone never loads pycurl, ssl and urllib.request
    # (~40 ms of every command's start on a slow machine).
    from .http import HttpClient

    try:
        return HttpClient(config.http)
    except ConfigError as exc:  # (http.ca_bundle, checked when HTTP is used)
        raise ConfigError(exc.problems, path=str(config.path) if config.path else None) from None


def _read_local(path: Path, limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` (``/dev/zero`` and FIFOs are refused)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        too_big = f"larger than {limit:,} bytes (limits.discovery_bytes)"
        if info.st_size > limit:
            raise OSError(too_big)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = read_at_most(handle.read, limit + 1)  # (not limit + 1 bytes reserved at once)
        if len(data) > limit:  # (a file that grew since, or whose size says nothing: /proc's)
            raise OSError(too_big)
        return data
    finally:
        os.close(fd)


def with_discovered_tags(config: Config, client: HttpClient | None) -> Config:
    """``config`` with the tags of its ``tags_from`` added (unchanged without one).
    ConfigError naming the file for anything wrong in it."""
    source = config.tags_from
    if source is None:
        return config
    where = str(config.path) if config.path else None
    limit = config.limits.discovery_bytes
    remote = urlsplit(source).scheme in ("http", "https")
    try:
        if remote:
            if client is None:
                raise RuntimeError("reading tags_from over HTTP needs the sync's HTTP client")
            auth = auth_for(source, config.registries)  # (a private server's file: its credentials)
            headers = [authorization(source, auth)] if auth is not None else []
            # (no credentials: a 403 is S3's answer for a file it lacks as well; a page a soft 404's)
            request = Request(
                source, headers=headers, limit=limit, forbidden_is_missing=auth is None, page_is_missing=True
            )
            data: bytes | bytearray = client.request(request).body
            base = source
        else:
            local = Path(unquote(urlsplit(source).path)) if source.startswith("file:") else Path(source)
            data = _read_local(local, limit)
            base = local.resolve().as_uri()
    except OSError as exc:  # (its text names the file again: only what went wrong)
        why = exc.strerror or str(exc)
        raise ConfigError([f"'tags_from': cannot read {source!r}: {why}"], path=where) from exc
    except CachedexError as exc:
        raise ConfigError([f"'tags_from': cannot read {source!r}: {exc}"], path=where) from exc
    try:
        document = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ConfigError([f"'tags_from': {source!r} is not valid JSON: {exc}"], path=where) from exc
    tags, problems = mirrors_from_discovery(document, base=base, remote=remote)
    everything = [*config.tags, *tags]
    check_unique([tag.name for tag in everything], problems)
    if problems:
        raise ConfigError(problems, path=where)
    return msgspec.structs.replace(config, tags=tuple(everything))


# -- the cache.spack.io discovery file (format doc §6.2) -------------------------------

_PUBLIC_BUCKET = "s3://spack-binaries/"
_PUBLIC_HTTP = "https://binaries.spack.io/"
_INDEX_SUFFIXES = (
    re.compile(r"/blobs/[^/]+/[^/]+/[^/]+$"),
    re.compile(r"/v\d+/manifests/index/index\.manifest\.json$"),
    re.compile(r"/build_cache/index\.json$"),
)


def mirror_url_from_index_url(url: str) -> str | None:
    """The mirror root of an index URL as the discovery file gives it, or None."""
    if url.startswith(_PUBLIC_BUCKET):
        # The public bucket is served over HTTPS; this is how cache.spack.io reads it.
        url = _PUBLIC_HTTP + url[len(_PUBLIC_BUCKET) :]
    for pattern in _INDEX_SUFFIXES:
        match = pattern.search(url)
        if match:
            return url[: match.start()]
    return None


def _entry_problem(entry: object, seen: set[str]) -> str | None:
    """What is wrong with one ``{label, url}`` entry of a tag (``seen``: the labels of
    the entries before it); None if nothing."""
    if not isinstance(entry, dict):
        return "expected {label, url}"
    label, url = entry.get("label"), entry.get("url")
    why = check_label(label)
    if why:
        return f"label {why}"
    if not isinstance(url, str):
        return f"url: expected a string, got {short_repr(url)}"
    if label in seen:
        return f"label {short_repr(label)} given twice"
    return None


def mirrors_from_discovery(document: object, *, base: str, remote: bool = False) -> tuple[list[TagConfig], list[str]]:
    """Tags from a decoded discovery file; relative URLs resolve against ``base``.

    A ``remote`` file (read over HTTP) may name only http(s) mirrors: a server must not
    point cachedex at local files."""
    problems: list[str] = []
    if not isinstance(document, dict):
        return [], [f"'tags_from': expected a JSON object of tag -> list, got {type(document).__name__}"]
    tags: list[TagConfig] = []
    for tag, entries in document.items():
        why = check_label(tag)
        if why:
            problems.append(f"'tags_from': tag {why}")
            continue
        if not isinstance(entries, list):
            problems.append(f"'tags_from': tag {short_repr(tag)}: expected a list of {{label, url}}")
            continue
        root: MirrorRef | None = None
        stacks: list[MirrorRef] = []
        seen: set[str] = set()
        for entry in entries:
            why = _entry_problem(entry, seen)
            if why:
                problems.append(f"'tags_from': tag {short_repr(tag)}: entry {short_repr(entry)}: {why}")
                continue
            assert isinstance(entry, dict)  # (_entry_problem saw to it: a label and a URL)
            label, url = str(entry["label"]), str(entry["url"])
            seen.add(label)
            mirror_url = mirror_url_from_index_url(urljoin(base, url))
            if mirror_url is None or urlsplit(mirror_url).scheme == "s3":
                problems.append(f"'tags_from': tag {short_repr(tag)} {label}: cannot read index URL {short_repr(url)}")
                continue
            # As a configured URL is checked: no credentials (printed and published with
            # it), spaces, ?query or control characters.
            refused: list[str] = []
            if not check_url("url", mirror_url, refused):
                problems += [f"'tags_from': tag {short_repr(tag)} {label}: {p.split(': ', 1)[1]}" for p in refused]
                continue
            if remote and urlsplit(mirror_url).scheme not in ("http", "https"):
                problems.append(
                    f"'tags_from': tag {short_repr(tag)} {label}: a discovery file read over HTTP may only name "
                    f"http(s) mirrors, not {short_repr(mirror_url)}"
                )
                continue
            ref = MirrorRef(tag, label, mirror_url)
            if label == ROOT_STACK:
                root = ref
            else:
                stacks.append(ref)
        if root is None and ROOT_STACK not in seen:  # (a root refused has said why)
            # cache.spack.io skips refs without a root index too (format doc §6.3).
            problems.append(f"'tags_from': tag {short_repr(tag)} has no 'root' entry")
        if root is None:
            continue
        tags.append(TagConfig(tag, (root, *sorted(stacks, key=lambda m: m.stack))))
    return tags, problems
