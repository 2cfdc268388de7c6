"""The OpenAPI document of ``/api``, served at ``/api/openapi.json``.

The paths are written here; every schema of a body comes from the struct that
encodes it (``msgspec.json.schema_components``), docstrings included, so the document
cannot drift from the JSON the server sends.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ... import __version__
from ...catalog import SearchPage
from ...catalog.verifications import TagVerification
from ...diff import TagDiff
from ...reuse import ReuseReport
from ..coverage import CoveragePage
from ..pages import PackagePage, SpecPage, TagRow
from .api import DEFAULT_LIMIT, FACET_PARAMETERS, MAX_LIMIT, MAX_OFFSET, VERIFY_PROBLEMS, PackageList
from .refusals import ErrorBody
from .reuse_route import BODY_BYTES, BODY_SECONDS

__all__ = ["openapi_document"]

_REF = "#/components/schemas/{name}"


def _ref(kind: type) -> dict[str, str]:
    return {"$ref": _REF.format(name=kind.__name__)}


#: The body of every error the app itself answers.
_ERROR = {"application/json": {"schema": _ref(ErrorBody)}}
#: What uvicorn answers to a request head it cannot take (``cachedex serve``): one line of text.
_PLAIN = {"text/plain": {"schema": {"type": "string"}}}

#: 400 from the HTTP layer, on any path.
_BAD_HEAD = " (a request head over 64 KiB, or not HTTP at all: a line of text from the HTTP layer)"
#: Any parameter a route does not list, or one given twice, is refused (refusals.check_parameters).
_UNLISTED = "a parameter not listed here, or one given twice"
_NO_TAG = "No such tag"
#: On every 503.
_RETRY_AFTER = {"Retry-After": {"required": True, "schema": {"type": "string"}, "description": "seconds"}}


def _responses(
    ok: dict[str, Any], bad: str, not_found: str = "", *, get: bool = True, more: dict[int, Any] | None = None
) -> dict[str, Any]:
    """An operation's answers: 200 with ``ok``, 400 (``bad``: why), 404 (``not_found``:
    why, if it can), ``more`` by status, and those any path may answer. A GET answer
    carries an ETag and is revalidated (304); every path is also reached with its
    trailing "/" toggled (307); past its limit of connections the server refuses (503)."""
    headers: dict[str, Any] = {
        "ETag": {"required": True, "schema": {"type": "string"}, "description": "send it as If-None-Match"},
        "Last-Modified": {
            "schema": {"type": "string"},
            "description": "the date of the catalog's state, as this server dates it (the second after it "
            "first saw that state); send it as If-Modified-Since",
        },
    }
    result: dict[str, Any] = {
        "200": {
            "description": "OK",
            "content": {"application/json": {"schema": ok}},
            **({"headers": headers} if get else {}),
        }
    }
    if get:
        result["304"] = {
            "description": "Not modified: If-None-Match names the answer's ETag (or, without If-None-Match, "
            "If-Modified-Since is not before its Last-Modified); no body"
        }
    result["307"] = {
        "description": 'Answered to this path written with a trailing "/" (e.g. /api/tags/): Location names '
        "this path (relative, the query kept); repeat the request there, same method and body",
        "headers": {"Location": {"required": True, "schema": {"type": "string"}}},
    }
    result["400"] = {"description": bad + _BAD_HEAD, "content": {**_ERROR, **_PLAIN}}
    if not_found:
        result["404"] = {"description": not_found, "content": _ERROR}
    result.update((str(status), answer) for status, answer in (more or {}).items())
    result["405"] = {
        "description": 'A method the path does not take, written with or without a trailing "/" '
        "(the Allow header names those it does)",
        "content": _ERROR,
    }
    result["500"] = {
        "description": "The catalog cannot be read (damaged or replaced by another file), or an internal error; "
        "the server's log says why",
        "content": _ERROR,
    }
    result.setdefault(
        "503",
        {
            "description": "The server holds as many connections and requests as it takes at once "
            "(a thousand per process, fewer under a low open-file limit); the connection is then "
            "closed: try again after Retry-After seconds",
            "headers": _RETRY_AFTER,
            "content": _ERROR,
        },
    )
    return dict(sorted(result.items()))


def _param(
    name: str, where: str = "query", *, schema: dict[str, Any] | None = None, description: str = ""
) -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": where == "path",
        "schema": schema or {"type": "string"},
        "description": description,
    }


#: What only ``POST /api/reuse`` answers: it reads a body (reuse_route).
_REUSE_REFUSALS: dict[int, Any] = {
    408: {"description": f"The body did not arrive within {BODY_SECONDS:.0f} s", "content": _ERROR},
    413: {"description": f"The body is larger than {BODY_BYTES // 2**20} MiB", "content": _ERROR},
    503: {
        "description": "The server holds as many bodies as it takes at once, or as many connections and "
        "requests (then the connection is closed); try again after Retry-After seconds",
        "headers": _RETRY_AFTER,
        "content": _ERROR,
    },
}


def _operation(
    operation_id: str, summary: str, ok: dict[str, Any], bad: str, not_found: str = "", **extra: Any
) -> dict[str, Any]:
    return {
        "get": {"summary": summary, "operationId": operation_id, **extra, "responses": _responses(ok, bad, not_found)}
    }


def openapi_document(*, reuse: bool = True) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the API (with ``reuse``, of a server that reads
    lockfiles: ``POST /api/reuse``)."""
    _, schemas = msgspec.json.schema_components(
        [
            TagRow,
            PackageList,
            PackagePage,
            SpecPage,
            SearchPage,
            TagDiff,
            TagVerification,
            CoveragePage,
            ReuseReport,
            ErrorBody,
        ],
        ref_template=_REF,
    )
    described = {
        "stack": "only packages with a spec of this stack that matches the other filters too "
        "(a stack the tag does not have: 404)",
        "runs_on": "only packages with a spec a machine of this target runs (e.g. zen3)",
    }
    facets = [
        _param(
            key,
            description=described.get(
                key, f"only packages with a spec of this {key} that matches the other filters too"
            ),
        )
        for key in FACET_PARAMETERS
    ]
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "cachedex",
            "version": __version__,
            "description": "What is in the Spack build cache? Tags, packages and specs of the synced "
            "mirrors; search with Spack's spec syntax; diffs. Errors: "
            '{"error": {"status": ..., "message": ...}}, '
            "but for the HTTP layer's 400 (a request it cannot read), a line of text. A GET answer "
            "carries an ETag and a HEAD is answered as a GET; a request with If-None-Match or "
            "If-Modified-Since gets 304 while the answer holds.",
        },
        # Relative to this document (/api/openapi.json): the server's root, under whatever
        # prefix a reverse proxy serves it (without it, clients call the host's /api/).
        "servers": [{"url": "..", "description": "this server (the folder above this document)"}],
        "paths": {
            "/api/tags": _operation(
                "tags", "Every tag with its totals", {"type": "array", "items": _ref(TagRow)}, "Any parameter"
            ),
            "/api/tags/{tag}/packages": _operation(
                "packages",
                "Packages of a tag, with facet counts",
                _ref(PackageList),
                f"A facet not listed here, or {_UNLISTED}",
                f"{_NO_TAG}, or the tag has no such stack",
                parameters=[_param("tag", "path"), *facets],
            ),
            "/api/tags/{tag}/packages/{name}": _operation(
                "package",
                "A package's specs in a tag",
                _ref(PackagePage),
                "Any parameter",
                f"{_NO_TAG}, or the tag lists no such package",
                parameters=[_param("tag", "path"), _param("name", "path")],
            ),
            "/api/specs/{hash}": _operation(
                "spec",
                "One spec with its dependencies and dependents",
                _ref(SpecPage),
                "Any parameter",
                "No spec has a hash starting with this, or several do (the prefix is ambiguous: "
                "give more characters); the message says which",
                parameters=[
                    _param("hash", "path", description="the DAG hash, or a prefix of it that no other spec has")
                ],
            ),
            "/api/search": _operation(
                "search",
                "Specs matching a query in Spack's spec syntax",
                _ref(SearchPage),
                "A query that is not Spack's spec syntax (the message shows where), limit or offset not a "
                f"whole number in range, stack without tag, or {_UNLISTED}",
                f"{_NO_TAG}, or the tag has no such stack",
                parameters=[
                    _param(
                        "q",
                        description="Spack spec syntax, e.g. 'hdf5+mpi target=x86_64: %gcc@13', "
                        "'zlib target=:zen3' (what runs on zen3: zen3 and the targets it descends from), "
                        "or 'hdf5 ^mpi' (a virtual: what depends on a provider of it); none: every spec",
                    ),
                    _param("tag", description="only specs of this tag"),
                    _param("stack", description="only specs of this stack of the tag (needs tag)"),
                    # (empty is the default: a form's empty field is sent as "limit=")
                    _param(
                        "limit",
                        schema={"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
                    )
                    | {"allowEmptyValue": True},
                    _param("offset", schema={"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0})
                    | {"allowEmptyValue": True},
                ],
            ),
            "/api/tags/{tag}/verify": _operation(
                "verify",
                "The latest verification of each mirror of a tag (cachedex verify): checks, counts, problems "
                f"(the first {VERIFY_PROBLEMS:,} of each mirror; problem_count counts them all)",
                _ref(TagVerification),
                "Any parameter",
                f"{_NO_TAG}, or the tag was never verified (cachedex verify)",
                parameters=[_param("tag", "path")],
            ),
            "/api/tags/{tag}/coverage": _operation(
                "coverage",
                "What covers what in a tag: specs per stack and platform-os-target, per package and target family",
                _ref(CoveragePage),
                "Any parameter",
                _NO_TAG,
                parameters=[_param("tag", "path")],
            ),
            "/api/diff": _operation(
                "diff",
                "What changed between two tags (from, to) or in a tag since a date (tag, since)",
                _ref(TagDiff),
                f"Neither from and to nor tag and since, both pairs, since not an ISO 8601 date, or {_UNLISTED}",
                _NO_TAG,
                parameters=[
                    _param("from", description="the older tag (with to)"),
                    _param("to", description="the newer tag (with from)"),
                    _param("tag", description="the tag whose changes since a date are asked (with since)"),
                    _param(
                        "since",
                        description="a date, YYYY-MM-DD, or an ISO 8601 date and time, UTC unless it says (with tag)",
                    ),
                ],
            ),
            "/api/reuse": {
                "post": {
                    "summary": "Which specs of a Spack environment each tag has as binaries (cachedex reuse): "
                    "the body a spack.lock or a spec file (spack spec --json); for the tag that has the most, "
                    "each spec it lacks with the nearest cached build and what differs; the specs developed in place "
                    "(spack develop), which Spack always builds from their source, listed apart (developed)",
                    "operationId": "reuse",
                    "parameters": [
                        _param("tag", description="a tag, or several joined by commas (default: every tag)"),
                        _param("stack", description="compare with this stack of each tag (default: root)"),
                    ],
                    "requestBody": {
                        "required": True,
                        # (a clearsigned spec file is text; the body's type is not checked)
                        "content": {
                            "application/json": {"schema": {"type": "object"}},
                            "text/plain": {"schema": {"type": "string"}},
                        },
                    },
                    "responses": _responses(
                        _ref(ReuseReport),
                        f"An empty body, one that is neither a lockfile nor a spec file, or {_UNLISTED}",
                        f"{_NO_TAG}, or no such stack in a tag asked (or, with no tag, in any)",
                        get=False,
                        more=_REUSE_REFUSALS,
                    ),
                }
            },
        },
        "components": {"schemas": schemas},
    }
    if not reuse:
        del document["paths"]["/api/reuse"]
    return document
