"""The history, coverage and verifications of the :class:`~cachedex.catalog.Catalog`
facade (``history.py``, ``verifications.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ..values import ROOT_STACK
from . import history, verifications
from .facade_core import CatalogCore

__all__ = ["HistoryReads"]


class HistoryReads(CatalogCore):
    """What each sync changed, coverage counts, and what ``cachedex verify`` found."""

    # -- history and coverage (see history.py) ---------------------------------------------

    def listing_difference(self, old: str, new: str) -> list[tuple[str, str, str, str, int]]:
        """(stack, hash, name, version, +1 in ``new`` only / -1 in ``old`` only) of the
        listed specs two tags do not share, stack by stack."""
        return history.listing_difference(self._db, old, new)

    def changes_since(self, tag: str, since: float) -> list[tuple[str, str, str, str, int]]:
        """(stack, hash, name, version, +1/-1) of listing changes after ``since``, oldest first."""
        return history.changes_since(self._db, tag, since)

    def first_sync_after(self, tag: str, since: float) -> int | None:
        """See :func:`.history.first_sync_after`."""
        return history.first_sync_after(self._db, tag, since)

    def first_synced_at(self, tag: str) -> float | None:
        """When the first recorded sync of ``tag`` finished (epoch seconds), or None."""
        return history.first_synced_at(self._db, tag)

    def tag_syncs(
        self, tag: str | None = None, *, limit: int = 1000, changed_only: bool = False
    ) -> list[history.SyncRecord]:
        """The syncs of ``tag`` (of every tag), newest first, with their change counts
        (``changed_only``: those that changed something)."""
        return history.tag_syncs(self._db, tag, limit=limit, changed_only=changed_only)

    def package_changes(
        self, tag: str, names: Collection[str] | None = None, *, syncs: int = 50
    ) -> dict[str, list[history.PackageChange]]:
        """What each of the newest ``syncs`` syncs that changed a package added to and
        removed from ``tag``'s listing, by package (of ``names``), newest sync first."""
        return history.package_changes(self._db, tag, names, syncs=syncs)

    def sync_changes(self, sync_id: int) -> list[history.ChangedSpec]:
        """What one sync added to and removed from each mirror's listing."""
        return history.sync_changes(self._db, sync_id)

    def changed_packages(self, sync_id: int, stack: str = ROOT_STACK) -> list[tuple[bool, str]]:
        """(added, name) of the packages one sync added or removed specs of in ``stack``."""
        return history.changed_packages(self._db, sync_id, stack)

    def additions(self, ids: Collection[int] | None = None) -> list[tuple[str, str, str, float]]:
        """(hash, tag, stack, end of the sync) of each recorded addition of a spec (of ``ids``) to a mirror."""
        return history.additions(self._db, ids)

    def first_syncs(self) -> dict[str, float]:
        """When each tag's first sync ended."""
        return history.first_syncs(self._db)

    def first_seen(self, dag_hash: str) -> list[history.FirstSeen]:
        """When a spec first appeared in each mirror listing it now."""
        return history.first_seen(self._db, dag_hash)

    def listing_counts(
        self, tag: str, names: Collection[str] | None = None, stacks: Collection[str] | None = None
    ) -> list[tuple[str, str, str, int]]:
        """(stack, name, version, listed specs) of every mirror of a tag (of ``names`` and
        ``stacks`` only)."""
        return history.listing_counts(self._db, tag, names, stacks)

    def coverage_cells(self, tag: str, *, root: bool = True) -> list[history.CoverageCell]:
        """Listed specs of a tag per stack and platform-os-target (the root's too if ``root``)."""
        return history.coverage_cells(self._db, tag, root=root)

    def package_coverage(
        self, tag: str, name: str | None = None, *, versions: bool = True
    ) -> list[history.PackageCoverage]:
        """Listed specs of a tag (of one package) per version (unless not ``versions``)
        and platform-os-target."""
        return history.package_coverage(self._db, tag, name, versions=versions)

    # -- verifications (see verifications.py) ---------------------------------------------

    def store_verification(
        self, result: verifications.MirrorVerification, signatures: Iterable[verifications.SpecSignature], keyring: str
    ) -> int:
        """Keep one mirror's verification and its specs' signature statuses (never
        touching what the mirrors list); returns its id."""
        with self._transaction():
            return verifications.store_verification(self._db, result, signatures, keyring)

    def latest_verifications(
        self, tag: str | None = None, *, problems: int | None = None
    ) -> list[verifications.MirrorVerification]:
        """The latest verification of each mirror (of one tag), root first, each with at
        most ``problems`` of its problems (None: all); ``problem_count`` has them all."""
        return verifications.latest_verifications(self._db, tag, problems=problems)

    def tag_verification(self, tag: str, *, problems: int | None = None) -> verifications.TagVerification | None:
        """The latest verification of each mirror of ``tag`` (each with at most
        ``problems`` of its problems; ``problem_count`` has them all), or None if never verified."""
        return verifications.tag_verification(self._db, tag, problems=problems)

    def unsigned_mirrors(self) -> frozenset[tuple[str, str]]:
        """(tag, stack) of each mirror known not to sign its binaries: Spack must add it
        with ``--unsigned`` (see :func:`.verifications.unsigned_mirrors`)."""
        return verifications.unsigned_mirrors(self._db)

    def spec_verifications(self, dag_hash: str) -> list[verifications.SpecVerification]:
        """Signature status and problems of one spec in the latest verification of each
        mirror listing it."""
        return verifications.spec_verifications(self._db, dag_hash)

    def all_spec_verifications(self) -> dict[str, list[verifications.SpecVerification]]:
        """:meth:`spec_verifications` of every spec a verification mentions, in one read
        (hash -> findings), for a site build."""
        return verifications.all_spec_verifications(self._db)

    def previous_signatures(self, tag: str, stack: str, keyring: str) -> dict[str, verifications.SpecSignature]:
        """Signature statuses of the mirror's latest verification with the same keys, by hash."""
        return verifications.previous_signatures(self._db, tag, stack, keyring)
