"""What a search's facets read: a compiler against the query's ``%compiler``."""

from __future__ import annotations

import pytest

from cachedex.catalog.facets import compiler_matcher
from cachedex.query import parse


@pytest.mark.parametrize(
    ("compiler", "query", "expected"),
    [
        ("gcc", "%gcc@:12", False),  # a compiler without a version satisfies no version asked for
        ("gcc", "%gcc", True),
        ("gcc@12.3.0", "%gcc@:12", True),
        ("gcc@13.1.0", "%gcc@:12", False),
        ("clang@17", "%llvm", True),  # (a legacy name)
    ],
)
def test_a_compiler_satisfies_the_query_by_name_and_version(compiler: str, query: str, expected: bool) -> None:
    assert compiler_matcher(parse(query))(compiler) is expected
