"""What the checks of one mirror found (:class:`Findings`), before the tag's dependency
check, and how a problem row says an error (:func:`without_url`): shared by the checks
of each layout (:mod:`.verify_mirror`, :mod:`.verify_v2`, :mod:`.verify_oci`) and the
tag's (:mod:`.verify`)."""

from __future__ import annotations

import time

from ..catalog.verifications import Problem, SpecSignature
from ..errors import CachedexError
from ..values import MirrorRef

__all__ = ["Findings", "sent_encoded", "where_and_what", "without_url"]


class Findings:
    """What the checks of one mirror found, before the tag's dependency check."""

    def __init__(self, ref: MirrorRef) -> None:
        self.ref = ref
        self.layout: int | None = None
        self.started = time.time()
        self.checks: list[str] = []
        self.skipped: list[str] = []  #: checks that could not run, and why
        self.problems: list[Problem] = []
        self.signatures: list[SpecSignature] = []
        self.listed: dict[str, tuple[tuple[str, str], ...]] = {}  #: listed hash -> link/run (hash, name)
        self.labels: dict[str, str] = {}  #: listed hash -> name@version, for messages
        self.externals: set[str] = set()
        self.index_url = ""
        self.found = 0
        self.binaries = 0
        self.signing = "unsigned"
        self.keys: tuple[str, ...] = ()
        self.keyring = ""

    def problem(self, kind: str, url: str, message: str, dag_hash: str | None = None) -> None:
        self.problems.append(Problem(kind, url, message, dag_hash))


def without_url(error: CachedexError) -> str:
    """What went wrong, without the URL a problem row names already."""
    return str(getattr(error, "problem", error))


def where_and_what(error: BaseException, url: str) -> tuple[str, str]:
    """(URL, what is wrong) of an error for a problem row, which prints the URL before
    the message: the URL the error names (else ``url``) and, then, the error without it
    (as :func:`without_url`)."""
    at, problem = getattr(error, "url", None), getattr(error, "problem", None)
    if isinstance(at, str):
        return at, problem if isinstance(problem, str) else str(error)
    return url, str(error)


def sent_encoded(coding: str) -> str:
    """What a binary's answer labelled with a Content-Encoding (``coding``) adds to a
    size or checksum problem: the bytes checked are those sent, as Spack saves them (its
    urllib and its curl decode nothing). A label alone proves no encoding (an S3
    object's metadata on bytes sent as stored), so the cause is said as a condition."""
    return (
        f"the server labels it Content-Encoding: {coding} although asked for the bytes as stored "
        "(Accept-Encoding: identity); if it encodes the file for sending, Spack, which saves the "
        "bytes as sent, fails on it too (send it as stored: no gzip_static on the mirror, no "
        "Content-Encoding on an S3 object), else the file is cut short or corrupt"
    )
