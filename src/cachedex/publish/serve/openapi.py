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
from .api import FACET_PARAMETERS, MAX_LIMIT, MAX_OFFSET, PackageList
from .refusals import ErrorBody

__all__ = ["openapi_document"]

_REF = "#/components/schemas/{name}"


def _ref(kind: type) -> dict[str, str]:
    return {"$ref": _REF.format(name=kind.__name__)}


def _responses(ok: dict[str, Any], *errors: int) -> dict[str, Any]:
    result: dict[str, Any] = {"200": {"description": "OK", "content": {"application/json": {"schema": ok}}}}
    reasons = {
        400: "A bad parameter or query",
        404: "No such tag, stack, package or spec",
        408: "The body did not arrive in time",
        413: "The body is too large",
        503: "The server holds as many bodies as it takes at once: retry after Retry-After seconds",
        405: "A method the path does not take (the Allow header names those it does)",
        500: "The catalog cannot be read (damaged or replaced by another file); the server's log says why",
    }
    for status in (*errors, 405, 500):  # (any path may answer those two)
        result[str(status)] = {
            "description": reasons[status],
            "content": {"application/json": {"schema": _ref(ErrorBody)}},
        }
    return result


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


def _operation(operation_id: str, summary: str, ok: dict[str, Any], *errors: int, **extra: Any) -> dict[str, Any]:
    return {"get": {"summary": summary, "operationId": operation_id, **extra, "responses": _responses(ok, *errors)}}


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
    facets = [
        _param(key, description=f"only packages with a spec of this {key} that matches the other filters too")
        if key != "runs_on"
        else _param(key, description="only packages with a spec a machine of this target runs (e.g. zen3)")
        for key in FACET_PARAMETERS
    ]
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "cachedex",
            "version": __version__,
            "description": "What is in the Spack build cache? Tags, packages and specs of the synced "
            "mirrors; search with Spack's spec syntax; diffs. Errors: "
            '{"error": {"status": ..., "message": ...}}.',
        },
        # Relative to this document (/api/openapi.json): the server's root, under whatever
        # prefix a reverse proxy serves it (without it, clients call the host's /api/).
        "servers": [{"url": "..", "description": "this server (the folder above this document)"}],
        "paths": {
            "/api/tags": _operation("tags", "Every tag with its totals", {"type": "array", "items": _ref(TagRow)}, 400),
            "/api/tags/{tag}/packages": _operation(
                "packages",
                "Packages of a tag, with facet counts",
                _ref(PackageList),
                400,
                404,
                parameters=[_param("tag", "path"), *facets],
            ),
            "/api/tags/{tag}/packages/{name}": _operation(
                "package",
                "A package's specs in a tag",
                _ref(PackagePage),
                400,
                404,
                parameters=[_param("tag", "path"), _param("name", "path")],
            ),
            "/api/specs/{hash}": _operation(
                "spec",
                "One spec with its dependencies and dependents",
                _ref(SpecPage),
                400,
                404,
                parameters=[
                    _param("hash", "path", description="the DAG hash, or a prefix of it that no other spec has")
                ],
            ),
            "/api/search": _operation(
                "search",
                "Specs matching a query in Spack's spec syntax",
                _ref(SearchPage),
                400,
                404,
                parameters=[
                    _param(
                        "q",
                        description="Spack spec syntax, e.g. 'hdf5+mpi target=x86_64: %gcc@13', "
                        "'zlib target=:zen3' (what runs on zen3: zen3 and the targets it descends from), "
                        "or 'hdf5 ^mpi' (a virtual: what depends on a provider of it)",
                    ),
                    _param("tag"),
                    _param("stack", description="needs tag"),
                    _param("limit", schema={"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 50}),
                    _param("offset", schema={"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0}),
                ],
            ),
            "/api/tags/{tag}/verify": _operation(
                "verify",
                "The latest verification of each mirror of a tag (cachedex verify): checks, counts, problems "
                "(the first 1,000 of each mirror; problem_count counts them all)",
                _ref(TagVerification),
                400,
                404,
                parameters=[_param("tag", "path")],
            ),
            "/api/tags/{tag}/coverage": _operation(
                "coverage",
                "What covers what in a tag: specs per stack and platform-os-target, per package and target family",
                _ref(CoveragePage),
                400,
                404,
                parameters=[_param("tag", "path")],
            ),
            "/api/diff": _operation(
                "diff",
                "What changed between two tags (from, to) or in a tag since a date (tag, since)",
                _ref(TagDiff),
                400,
                404,
                parameters=[
                    _param("from"),
                    _param("to"),
                    _param("tag"),
                    _param("since", description="YYYY-MM-DD"),
                ],
            ),
            "/api/reuse": {
                "post": {
                    "summary": "Which specs of a Spack environment each tag has as binaries (cachedex reuse): "
                    "the body a spack.lock or a spec file (spack spec --json); for the tag that has the most, "
                    "each spec it lacks with the nearest cached build and what differs",
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
                    "responses": _responses(_ref(ReuseReport), 400, 404, 408, 413, 503),
                }
            },
        },
        "components": {"schemas": schemas},
    }
    if not reuse:
        del document["paths"]["/api/reuse"]
    return document
