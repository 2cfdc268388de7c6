"""Fixtures shared by the verify tests over real servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.ingest.test_signatures import TestKey


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestKey]:
    """A mirror's signing key (a real gpg key), one per test module."""
    test_key = TestKey(tmp_path_factory.mktemp("key") / "k", "mirror key")
    yield test_key
    test_key.close()
