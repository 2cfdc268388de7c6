"""A name of the longest length a file system takes still gets its folder."""

from __future__ import annotations

from cachedex.publish.files import NAME_MAX, name_problem


def test_a_name_of_exactly_the_longest_file_name_has_a_folder() -> None:
    assert name_problem("a" * NAME_MAX) is None
    assert name_problem("a" * (NAME_MAX + 1)) is not None
