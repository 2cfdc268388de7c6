"""``tags_from``: cache.spack.io's discovery file, read when a command needs its tags.

The file (``{"<tag>": [{"label": "root" | "<stack>", "url": "<index URL>"}]}``, format
doc §6.2) is read with a size limit, from a regular file or over HTTP through the sync's
client. A file read over HTTP may name only http(s) mirrors (never ``file://`` or a
local path): whoever serves it must not be able to point cachedex at this machine's
files.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import unquote, urlsplit

import msgspec

from ..config import Config, check_unique, mirrors_from_discovery
from ..errors import CachedexError, ConfigError
from .http import HttpClient, Request

__all__ = ["with_discovered_tags"]


def _read_local(path: Path, limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` (``/dev/zero`` and FIFOs are refused)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > limit:
            raise OSError(f"larger than {limit:,} bytes (limits.discovery_bytes)")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit + 1)
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
            data: bytes | bytearray = client.request(Request(source, limit=limit)).body
            base = source
        else:
            local = Path(unquote(urlsplit(source).path)) if source.startswith("file:") else Path(source)
            data = _read_local(local, limit)
            base = local.resolve().as_uri()
        document = msgspec.json.decode(data)
    except (OSError, CachedexError, msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ConfigError([f"'tags_from': cannot read {source!r}: {exc}"], path=where) from exc
    tags, problems = mirrors_from_discovery(document, base=base, remote=remote)
    everything = [*config.tags, *tags]
    check_unique(everything, problems)
    if problems:
        raise ConfigError(problems, path=where)
    return msgspec.structs.replace(config, tags=tuple(everything))
