"""The SQLite catalog: every spec read from every mirror, and its history. All SQL lives here.

Layout of the file (``docs/catalog.md`` has the full reference):

- ``specs``    one row per DAG hash, whatever number of tags hold it; ``nodes`` its raw node
- ``edges``    dependency edges between specs (deptypes as a bit mask, virtuals)
- ``tags`` / ``mirrors``  a tag has a root mirror and one mirror per stack, each with its
  sync state (URL, layout, Database version, checksum, HTTP validators)
- ``members``  which records each mirror's index holds, and whether listed (``in_buildcache``)
- ``syncs`` / ``changes``  history: what each sync of a mirror added or dropped

The file is plain SQLite in WAL mode, so ``sqlite3`` and datasette can read it while a
sync writes. One tag is written in one transaction: a failure leaves it as it was.

:class:`Catalog` is the one entry point, gathered from four parts (``facade_core``: the
connection, states, transactions and writes; ``facade_reads``, ``facade_history``,
``facade_publishing``: the reads); its methods delegate to the modules below, each a
function of an open connection:

    connection  how the file is opened (a new file's page size, WAL, read-only storage)
    schema    tables, versions, migrations
    rows      typed results and the row shapes of bulk reads
    reads     named point reads (a page's, a command's, a sync step's)
    bulk      whole-catalog streams for publishers
    search    a Query answered from the indexes; explain_search
    facets    facet indexes of search scopes, cached per catalog state
    writer    TagWriter: the only code that writes a tag (batches: a bulk load's later
              batches built by a forked process meanwhile; bulk_load: a first sync's
              indexes built after its rows; totals: a tag's totals and sizes;
              forgetting: forget and gc)
"""

from __future__ import annotations

from .connection import PAGE_SIZE
from .facade_history import HistoryReads
from .facade_publishing import PublishingReads
from .facade_reads import PointReads, package_names_of
from .inputs import PageInputs, SpecInputs
from .rows import (
    DependentRow,
    Edge,
    HolderRow,
    HoldingMirror,
    KnownSpecs,
    ListedRow,
    MirrorState,
    SearchPage,
    SizeKey,
    SpecConfig,
    SpecRow,
    SpecSummary,
    TagStats,
    summary_of,
)
from .schema import SCHEMA_VERSION
from .writer import TagWriter

__all__ = [
    "PAGE_SIZE",
    "SCHEMA_VERSION",
    "Catalog",
    "DependentRow",
    "Edge",
    "HolderRow",
    "HoldingMirror",
    "KnownSpecs",
    "ListedRow",
    "MirrorState",
    "PageInputs",
    "SearchPage",
    "SizeKey",
    "SpecConfig",
    "SpecInputs",
    "SpecRow",
    "SpecSummary",
    "TagStats",
    "TagWriter",
    "package_names_of",
    "summary_of",
]


class Catalog(PointReads, HistoryReads, PublishingReads):
    """An open catalog file. Use as a context manager, or call :meth:`close`.

    Its methods are gathered from four parts, each a module of its own: the connection,
    states, transactions and writes (:class:`~.facade_core.CatalogCore`), the point reads
    (:class:`~.facade_reads.PointReads`), history, coverage and verifications
    (:class:`~.facade_history.HistoryReads`), and the publishers' streams and searches
    (:class:`~.facade_publishing.PublishingReads`)."""
