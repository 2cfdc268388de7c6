"""Ingest: build caches (mirrors) into the catalog.

``sources`` reads files (local, ``file://``, HTTP), ``layouts`` finds and verifies a
mirror's index and its binaries' sizes, ``index`` decodes index.json into records, and
``sync`` writes each tag into the catalog in one transaction.
"""

__all__: list[str] = []
