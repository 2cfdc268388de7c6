"""``cachedex verify``: is what a mirror holds complete, consistent and signed?

For every mirror of the chosen tags (root, stacks, views, OCI repositories),
:class:`~.verify_mirror.MirrorChecker` checks the index, the published keys and every
listed spec (spec manifest or file, signature, binary, spec blob; with ``deep`` each
binary's checksum) and what the mirror holds that its index does not list. Then, over
the whole tag, every link or run dependency of a listed spec must be listed by some
mirror of the tag, or be an external. Spack's ``buildcache check-index`` checks the
index, manifests against the index and that blobs exist (buildcache-2026 §4.6); this
adds sizes, checksums, DAG hashes, dependencies, signatures, v2 and OCI.

Each mirror's :class:`~cachedex.catalog.verifications.MirrorVerification` (one line per
problem, naming the URL) is kept in the catalog with its specs' signature statuses; a
later verification reuses the statuses of files that did not change, with the same keys.
The catalog's listing (specs, members) is never touched. :func:`verify` returns a
:class:`VerifyReport`, which ``--json`` prints (``docs/cli.md``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import msgspec

from ..catalog import Catalog
from ..catalog.verifications import (
    PROBLEM_KINDS,
    MirrorVerification,
    Problem,
    SignatureCounts,
    TagVerification,
)
from ..config import Config, TagConfig
from ..errors import CachedexError
from ..progress import SILENT, Progress
from ..values import MirrorRef
from .discovery import chosen_tags
from .http import HttpClient
from .snapshots import OCI_LAYOUT
from .sources import Source, open_source
from .verify_findings import Findings, where_and_what
from .verify_mirror import MirrorChecker
from .views import SkippedView, with_found_views

__all__ = ["PROBLEM_KINDS", "MirrorVerification", "Problem", "TagVerification", "VerifyReport", "verify"]


class VerifyReport(msgspec.Struct, frozen=True):
    """What one ``cachedex verify`` found: per tag, the verification of each mirror."""

    deep: bool  #: whether binaries were downloaded and checksummed
    ok: bool  #: no problem anywhere
    problems: int  #: problems over every mirror
    seconds: float
    tags: tuple[TagVerification, ...]


def verify(
    config: Config,
    catalog: Catalog,
    tags: Iterable[str] | None = None,
    *,
    deep: bool = False,
    reporter: Progress | None = None,
) -> VerifyReport:
    """Verify every mirror of the named tags (default: every configured tag), keep each
    verification in ``catalog``, and return what was found. A tag that is not
    configured is a ConfigError, raised before anything is read."""
    started = time.perf_counter()
    reporter = reporter or SILENT
    with chosen_tags(config, tags) as (config, chosen, client):
        results = [_verify_tag(config, catalog, client, tag, deep, reporter) for tag in chosen]
    total = sum(t.problems for t in results)
    return VerifyReport(deep, total == 0, total, time.perf_counter() - started, tuple(results))


def _open(config: Config, ref: MirrorRef, client: HttpClient | None) -> Source:
    return open_source(ref.url, client=client, registries=config.registries)


def _verify_tag(
    config: Config, catalog: Catalog, client: HttpClient | None, tag: TagConfig, deep: bool, reporter: Progress
) -> TagVerification:
    unlisted: CachedexError | None = None
    skipped: tuple[SkippedView, ...] = ()
    if tag.discover_views:
        try:
            tag, skipped = with_found_views(tag, _open(config, tag.mirrors[0], client))
        except CachedexError as exc:
            unlisted = exc
    findings = [_check_mirror(config, catalog, client, ref, deep, reporter) for ref in tag.mirrors]
    root = findings[0]
    if unlisted is not None:  # the root's own problem: it is checked (and counted) once
        url, problem = where_and_what(unlisted, root.ref.url)
        root.problem("mirror-unreadable", url, f"its views cannot be found: {problem}")
    if tag.reads_root_views and [p.kind for p in root.problems] == ["index-missing"]:
        # A mirror of views only: its root has no index of its own, and needs none (it
        # stays only to report the views that are not read).
        root.problems.clear()
        if not skipped:
            findings.pop(0)
    for view in skipped:  # (its index is not checked: no stack reads it)
        root.problem("index-unreadable", view.url, f"view not read as a stack: {view.why}")
    _check_dependencies(tag.name, findings)
    mirrors = tuple(_store(catalog, found, deep) for found in findings)
    total = sum(m.problem_count for m in mirrors)
    return TagVerification(tag=tag.name, ok=total == 0, problems=total, mirrors=mirrors)


def _check_mirror(
    config: Config, catalog: Catalog, client: HttpClient | None, ref: MirrorRef, deep: bool, reporter: Progress
) -> Findings:
    line = reporter.task(f"{ref.tag}/{ref.stack}: verify", total=None)
    try:
        source = _open(config, ref, client)
        checker = MirrorChecker(
            ref,
            source,
            limits=config.limits,
            deep=deep,
            previous=lambda keyring: catalog.previous_signatures(ref.tag, ref.stack, keyring),
            line=line,
        )
        try:
            return checker.run()
        except (CachedexError, RuntimeError) as exc:  # the rest of this mirror cannot be read
            checker.out.problem("mirror-unreadable", *where_and_what(exc, ref.url))
            return checker.out
    except CachedexError as exc:
        failed = Findings(ref)
        failed.problem("mirror-unreadable", *where_and_what(exc, ref.url))
        return failed
    finally:
        line.done()


def _check_dependencies(tag: str, findings: list[Findings]) -> None:
    """Every link/run dependency of a listed spec must be listed by a mirror of the tag,
    or be an external (a record without a binary, by design)."""
    available: set[str] = set()
    for found in findings:
        available.update(found.listed)
        available.update(found.externals)
    for found in findings:
        if found.layout is None:
            continue
        found.checks.append("dependencies")
        for dag_hash, dependencies in found.listed.items():
            for dependency, name in dependencies:
                if dependency not in available:
                    message = (
                        f"{found.labels[dag_hash]} /{dag_hash} needs {name} /{dependency} (link/run), "
                        f"which no mirror of tag {tag} lists"
                    )
                    found.problem("dependency-missing", found.index_url, message, dag_hash)


def _store(catalog: Catalog, found: Findings, deep: bool) -> MirrorVerification:
    ref = found.ref
    counts: dict[str, int] = {}
    for signature in found.signatures:
        counts[signature.status] = counts.get(signature.status, 0) + 1
    problems = tuple(sorted(found.problems, key=lambda p: (p.url, p.kind, p.hash or "")))
    result = MirrorVerification(
        tag=ref.tag,
        stack=ref.stack,
        url=ref.url,
        view=ref.view,
        layout=found.layout,
        started_at=found.started,
        finished_at=time.time(),
        deep=deep,
        checks=tuple(found.checks),
        skipped=tuple(found.skipped),
        listed=len(found.listed),
        found=found.found,
        binaries=found.binaries,
        signing="none" if found.layout == OCI_LAYOUT else found.signing,
        keys=found.keys,
        signatures=SignatureCounts(
            counts.get("signed", 0), counts.get("unsigned", 0), counts.get("bad", 0), counts.get("unknown-key", 0)
        ),
        problems=problems,
        problem_count=len(problems),
    )
    if catalog.readonly:
        return result
    run = catalog.store_verification(result, found.signatures, found.keyring)
    return msgspec.structs.replace(result, id=run)
