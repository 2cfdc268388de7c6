"""Mutation hunt of ``cachedex.versions``: tag kinds and order, the edges of Spack's
version parsing, range ends and git versions, each checked against what Spack does
(``spack.version.version_types``: ``parse_string_components``, ``_next_version``,
``ClosedOpenRange``, ``GitVersion``; ``spack.version.common.is_git_version``)."""

from __future__ import annotations

import pytest

from cachedex.query import parse
from cachedex.versions import at_most, git_ref, tag_kind, tag_order, version_key, version_satisfies


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("develop-2026-11-08", "snapshot"),
        ("v1.0-2026-01-01", "snapshot"),  # the date decides
        ("develop-26-11-08", "branch"),  # a year has four digits
        ("v1.0.2", "release"),
        ("2026.06.0", "release"),  # the v is optional
        ("v1", "branch"),  # a release has at least one dot
        ("1", "branch"),
        ("develop", "branch"),
        ("ml-linux", "branch"),
    ],
)
def test_tag_kind(name: str, kind: str) -> None:
    assert tag_kind(name) == kind


def test_tag_order_knows_main_and_master_as_branches_and_releases_with_or_without_v() -> None:
    names = ["0.9.0", "v1.0", "zz", "master", "main", "aa", "v0.10", "release-2026-01-01", "master-2026-01-02"]
    assert tag_order(names) == [
        "main",
        "master",
        "master-2026-01-02",
        "release-2026-01-01",  # a branch of which only snapshots are kept
        "v1.0",
        "v0.10",
        "0.9.0",  # in version order with the v-prefixed ones, not apart from them
        "aa",
        "zz",
    ]


def test_master_and_main_are_branches_even_without_snapshots() -> None:
    assert tag_order(["aa", "v1.0", "master"]) == ["master", "v1.0", "aa"]
    assert tag_order(["aa", "v1.0", "main"]) == ["main", "v1.0", "aa"]


def test_releases_come_before_other_names_whatever_their_spelling() -> None:
    assert tag_order(["a-stack", "v1.0"]) == ["v1.0", "a-stack"]


@pytest.mark.parametrize(
    ("version", "same_as"),
    [
        ("a=1.2", "1.2"),  # a git version (any ref, one character too) sorts as its given version
        ("git.abc=1.2", "1.2"),
    ],
)
def test_a_git_version_sorts_as_its_given_version(version: str, same_as: str) -> None:
    assert version_key(version) == version_key(same_as)


def test_a_prerelease_word_alone_is_a_word() -> None:
    # Spack makes a pre-release only of something: "rc1" and "rc" are release words
    # (parse_string_components needs three segments, or two for the bare word)
    assert version_key("rc1") == (((1, "rc"), (2, 1)), (3,))
    assert version_key("rc") == (((1, "rc"),), (3,))
    assert version_key("a") < version_key("rc") < version_key("rc1") < version_key("0")


def test_a_prerelease_word_followed_by_a_word_is_not_a_numbered_prerelease() -> None:
    assert version_key("1.alpha.beta") == (((2, 1), (1, "alpha")), (1,))


@pytest.mark.parametrize(
    ("version", "high", "held"),
    [
        # Spack's _next_version of 1.3rc (no number) is 1.3rc0: the range stops before it
        ("1.3rc", "1.3rc", True),
        ("1.3rc0", "1.3rc", False),
        ("1.3rc0", "1.3rc0", True),
        ("1.3rc1", "1.3rc0", False),
        # of 1.2, 1.3
        ("1.2.99", "1.2", True),
        ("1.3.5", "1.2", False),
        ("1.2", "1.2a", True),
        ("1.2a", "1.2a", True),
        ("1.2a.rc1", "1.2a", True),
    ],
)
def test_the_end_of_a_range(version: str, high: str, held: bool) -> None:
    assert at_most(version, high) is held


@pytest.mark.parametrize(
    ("version", "ref"),
    [
        ("git.abc", ("abc", "")),
        ("git.abc=1.2", ("abc", "1.2")),
        ("abc=1.2", ("abc", "1.2")),
        ("0123456789" * 4, ("0123456789" * 4, "")),
        ("0123456789" * 4 + "=2.1", ("0123456789" * 4, "2.1")),
        # not git versions (is_git_version: "git.", a 40-digit SHA, or "=" after the first character)
        ("=1.2", None),
        ("012345678" * 4 + "012", None),  # 39 hex digits
        ("0123456789" * 4 + "0", None),  # 41
        ("1.2", None),
    ],
)
def test_git_ref_reads_what_spack_reads_as_a_git_version(version: str, ref: tuple[str, str] | None) -> None:
    assert git_ref(version) == ref


@pytest.mark.parametrize(
    ("query", "version", "expected"),
    [
        # a git version asked exactly holds its version with other separators (GitVersion
        # equality compares the StandardVersion given: 1_2 == 1.2)
        ("@git.abc=1.2", "git.abc=1_2", True),
        ("@git.abc=1.2", "git.abc=1.3", False),
        # an exact plain version never holds a git version, even of that version
        ("@=1.2", "git.abc=1.2", False),
        ("@=1.2", "git.abc=1_2", False),
        # written exactly as asked: a GitVersion satisfies itself
        ("@=git.abc=1.2", "git.abc=1.2", True),
        ("@=git.abc=1.2", "git.other=1.2", False),
    ],
)
def test_exact_and_git_versions(query: str, version: str, expected: bool) -> None:
    assert version_satisfies(version, parse(query).versions) is expected


def test_words_compare_case_sensitively_as_in_spack() -> None:
    # VersionStrComponent compares its str data: every capital before every lowercase
    assert version_key("1.0B") < version_key("1.0a") < version_key("1.0b")
    assert version_key("1.0A") != version_key("1.0a")
