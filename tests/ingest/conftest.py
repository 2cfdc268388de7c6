"""Fixtures shared by the ingest tests: a signing key for those of verify, an HTTP client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cachedex.config import HttpOptions
from cachedex.ingest.http import HttpClient
from tests.ingest.test_signatures import TestKey


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestKey]:
    """A mirror's signing key (a real gpg key), one per test module."""
    test_key = TestKey(tmp_path_factory.mktemp("key") / "k", "mirror key")
    yield test_key
    test_key.close()


@pytest.fixture
def client() -> Iterator[HttpClient]:
    """An HTTP client that does not retry, waits 5 s at most, 8 requests at a time."""
    with HttpClient(HttpOptions(retries=0, timeout=5, concurrency=8)) as http:
        yield http
