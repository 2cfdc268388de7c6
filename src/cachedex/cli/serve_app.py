"""The app ``cachedex serve`` runs: :func:`~cachedex.publish.serve.create_app` given the
lockfile reader, so that it answers ``POST /api/reuse`` too.

It lives here because the server (``publish``) may not import the reader (``ingest``);
this layer sees both. uvicorn's worker processes import :func:`app_from_environment` by
name (``cachedex.cli.serve_app:app_from_environment``) and find the catalog's path in
``$CACHEDEX_SERVE_CATALOG``, the config's ``compare:`` pairs in ``$CACHEDEX_SERVE_COMPARE``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec
from starlette.applications import Starlette

from ..ingest.lockfile import parse_lockfile
from ..publish.serve import CATALOG_ENV, create_app
from ..values import SpecRecord

__all__ = ["COMPARE_ENV", "FACTORY", "app_from_environment", "read_environment", "serve_app"]

#: What uvicorn imports in each worker process.
FACTORY = f"{__name__}:app_from_environment"


def read_environment(data: bytes, name: str) -> tuple[Sequence[SpecRecord], Sequence[str], Mapping[str, str]]:
    """A lockfile's or a spec file's concrete specs, its roots' hashes and its splices."""
    lock = parse_lockfile(data, name)
    return lock.specs, [root.hash for root in lock.roots], lock.splices


#: Where the worker processes find the config's ``compare:`` pairs (JSON).
COMPARE_ENV = "CACHEDEX_SERVE_COMPARE"


def serve_app(catalog: Path, compare: Sequence[tuple[str, str]] = ()) -> Starlette:
    """The app over ``catalog``, lockfiles read; ``compare``: the config's pairs."""
    return create_app(catalog, read_environment=read_environment, compare=compare)


def app_from_environment() -> Starlette:
    """The app over the catalog named by ``$CACHEDEX_SERVE_CATALOG``, with the pairs of
    ``$CACHEDEX_SERVE_COMPARE``."""
    pairs = msgspec.json.decode(os.environ.get(COMPARE_ENV, "[]"), type=list[tuple[str, str]])
    return serve_app(Path(os.environ[CATALOG_ENV]), pairs)
