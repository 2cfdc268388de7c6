"""The point reads of the :class:`~cachedex.catalog.Catalog` facade (``reads.py``): a
mirror's state, a tag's names and totals, a sync step's ids and sizes, a page's spec,
edges and holders.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ..errors import UnknownTag
from ..values import ROOT_STACK, compilers_text
from . import mirror_rows, reads
from .bulk_load import is_bulk_load
from .facade_core import CatalogCore
from .rows import (
    Edge,
    KnownSpecs,
    MirrorState,
    SizeKey,
    SpecConfig,
    TagStats,
)

__all__ = ["PointReads", "package_names_of"]


class PointReads(CatalogCore):
    """Named point reads: a page's, a command's, a sync step's."""

    # -- point reads (see reads.py) ---------------------------------------------------

    def require_tag(self, tag: str) -> None:
        """UnknownTag (listing the tags there are) unless the catalog has ``tag``."""
        known = self.tag_names()
        if tag not in known:
            raise UnknownTag(tag, known)

    def mirror_state(self, tag: str, stack: str) -> MirrorState | None:
        """The stored state of one mirror, or None if it was never synced."""
        return reads.mirror_state(self._db, tag, stack)

    def mirrors(self, tag: str | None = None) -> list[MirrorState]:
        """All mirrors (of one tag), sorted by tag then stack with root first."""
        return reads.mirrors(self._db, tag)

    def members_of(self, tag: str, stack: str) -> dict[str, bool]:
        """{hash: listed} of every record one mirror of a tag holds."""
        return reads.members_of(self._db, tag, stack)

    def signing_samples(self, tag: str, stack: str, count: int) -> list[tuple[str, str, str]]:
        """(hash, name, version) of up to ``count`` listed specs of a mirror, spread over
        its listing (see :func:`.mirror_rows.signing_samples`)."""
        return mirror_rows.signing_samples(self._db, tag, stack, count)

    def tag_names(self) -> list[str]:
        """Names of the tags in the catalog, sorted."""
        return reads.tag_names(self._db)

    def tag_stats(self, tags: Iterable[str] | None = None) -> list[TagStats]:
        """Totals per tag: records, listed specs, packages, stacks, sizes, last changes."""
        return reads.tag_stats(self._db, tags)

    def spec_ids(self, hashes: Iterable[str]) -> dict[str, int]:
        """Map the given hashes to the ids of the specs the catalog already has."""
        return reads.spec_ids(self._db, hashes)

    def is_bulk_load(self, new_specs: int) -> bool:
        """Whether writing ``new_specs`` new specs would be a bulk load (many, and more than
        the catalog holds: the secondary indexes are built after the rows)."""
        return is_bulk_load(self._db, new_specs)

    def known_specs(self, hashes: Iterable[str]) -> KnownSpecs:
        """The ids and known sizes of ``hashes``, read once for a sync that needs both, and
        the catalog's state then (see :meth:`still_as_of`)."""
        as_of = self._data_version()  # before reading: a commit in between makes it stale, never wrong
        ids, sized = reads.known_specs(self._db, hashes)
        return KnownSpecs(ids, frozenset(sized), as_of)

    def still_as_of(self, known: KnownSpecs) -> bool:
        """Whether no other process committed since ``known`` was read (inside a write
        transaction: nor can one until it ends), so that its ids still hold."""
        return self._data_version() == known.as_of

    def _data_version(self) -> int:
        (version,) = self._db.execute("PRAGMA data_version").fetchone()
        return int(version)

    def sized_hashes(self, hashes: Iterable[str]) -> set[str]:
        """Those of ``hashes`` whose binary size the catalog already knows."""
        return reads.sized_hashes(self._db, hashes)

    def spec_sizes(self, hashes: Iterable[str]) -> dict[str, int | None]:
        """{hash: binary size, or None when unknown} of those of ``hashes`` the catalog has."""
        return reads.spec_sizes(self._db, hashes)

    def size_keys(self, hashes: Iterable[str]) -> list[SizeKey]:
        """What locating the manifest or tarball of each known spec of ``hashes`` needs."""
        return reads.size_keys(self._db, hashes)

    def listed_hashes(self, tag: str, stack: str = ROOT_STACK, among: Iterable[str] | None = None) -> set[str]:
        """Hashes listed (``in_buildcache``) by one mirror of a tag (of ``among`` only)."""
        return reads.listed_hashes(self._db, tag, stack, among)

    def unsized_listed_by_stack(self, tag: str) -> dict[str, set[str]]:
        """{stack: hashes it lists whose size is unknown} of every mirror of a tag."""
        return reads.unsized_listed_by_stack(self._db, tag)

    def node(self, dag_hash: str) -> str | None:
        """The raw node JSON of a spec, as its index held it, or None."""
        return reads.node(self._db, dag_hash)

    def holders(self, dag_hash: str) -> list[tuple[str, str, bool, str, int | None]]:
        """(tag, stack, listed, mirror URL, layout) of every mirror whose index holds a hash."""
        return reads.holders(self._db, dag_hash)

    def edges_of(self, dag_hash: str, *, reverse: bool = False) -> list[Edge]:
        """Direct dependencies of a spec (or, ``reverse``, its direct dependents)."""
        return reads.edges_of(self._db, dag_hash, reverse=reverse)

    def spec_configs(self, hashes: Collection[str]) -> dict[str, SpecConfig]:
        """{hash: variants, compilers, OS and target} of those of ``hashes`` the catalog
        has; the compiler with the others that built it (:func:`~cachedex.values.compilers_text`)."""
        from .other_compilers import others_of_hashes

        with self.snapshot():
            found = reads.spec_configs(self._db, hashes)
            others = others_of_hashes(self._db, str(self.path), self.state_token()[0], found) if found else {}
        for dag_hash, more in others.items():
            found[dag_hash] = found[dag_hash]._replace(compiler=compilers_text(found[dag_hash].compiler, more))
        return found

    def closure(self, dag_hash: str) -> list[Edge]:
        """Every spec reachable from a spec through link and run edges, itself excluded."""
        return reads.closure(self._db, dag_hash)

    def package_tags(self, name: str) -> list[tuple[str, int]]:
        """(tag, listed specs) of every tag whose root mirror lists a package."""
        return reads.package_tags(self._db, name)

    def all_package_tags(self) -> dict[str, list[tuple[str, int]]]:
        """{package: :meth:`package_tags` of it} for every package, in one pass."""
        return reads.all_package_tags(self._db)

    def package_names(self) -> dict[str, list[str]]:
        """{package: [tags listing it]} over every tag, names sorted."""
        return package_names_of(self.all_package_tags())

    def tag_members(
        self, tag: str, names: Collection[str] | None = None, stacks: Collection[str] | None = None
    ) -> dict[str, dict[str, tuple[str, str]]]:
        """{stack: {hash: (name, version)}} of the listed specs of every mirror of a tag
        (of the packages ``names`` and the stacks ``stacks`` only, if given)."""
        return reads.tag_members(self._db, tag, names, stacks)

    def held_hashes(self, hashes: Iterable[str] | None = None) -> set[str]:
        """Every hash some mirror holds, listed or not (of ``hashes`` only, if given)."""
        return reads.held_hashes(self._db, hashes)

    def hashes_starting(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` hashes of any of the catalog's records that start with ``prefix``."""
        return reads.hashes_starting(self._db, prefix, limit)


def package_names_of(package_tags: dict[str, list[tuple[str, int]]]) -> dict[str, list[str]]:
    """:meth:`Catalog.package_names` from :meth:`Catalog.all_package_tags`, for a caller
    that has read the latter already."""
    return {name: [tag for tag, _ in package_tags[name]] for name in sorted(package_tags)}
