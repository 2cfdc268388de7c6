"""One share of a tag's Jekyll pages (``jekyll_shares.write_pages``) fed rows directly:
a hash that is no DAG hash is refused however the package's hashes line up (the check
of them all at once must agree with the check of each), and a hostile value is refused
even after every other value of its spec was seen good in an earlier package (the
values seen good are kept across packages and tags, so each field is checked on its
own). The counts a share reports add up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cachedex.catalog import ListedRow
from cachedex.publish.jekyll_shares import PAGE_NAME, write_pages
from tests.helpers import listed_row

GOOD: dict[str, Any] = {
    "version": "1.3.1",
    "compiler": "gcc@13.2.0",
    "platform": "linux",
    "os": "ubuntu24.04",
    "target": "x86_64_v3",
    "variants": ["+shared"],
    "size": 10,
    "stacks": ["root"],
}


def _row(dag_hash: str, name: str, **fields: Any) -> ListedRow:
    return listed_row(hash=dag_hash, name=name, **{**GOOD, **fields})


def _ok(n: int) -> str:
    return f"{n:032d}"


@pytest.mark.parametrize(
    "hashes",
    [
        ["a" * 15 + " " + "a" * 16],  # a space inside: as long as one hash
        ["b" * 31, "c" * 33],  # two of the right total length, the space misplaced
        ["D" * 32],  # upper case
        ["e" * 31],  # too short
        ["f" * 33],  # too long (a prefix is a DAG hash)
        [_ok(1), "g" * 31 + "-"],  # one bad among good ones
    ],
    ids=["space-inside", "misplaced-space", "upper-case", "short", "long", "one-of-two"],
)
def test_a_hash_that_is_no_dag_hash_is_refused(tmp_path: Path, hashes: list[str]) -> None:
    rows = [_row(h, "zlib") for h in sorted(hashes)]
    bad = [h for h in hashes if h != _ok(1)]
    share = write_pages(rows, "t", str(tmp_path), {})
    assert (share.refused, share.left_out, share.specs) == (len(bad), len(bad), len(rows) - len(bad))
    assert sorted(h for _, h, _ in share.refusals) == sorted(bad)
    page = tmp_path / "zlib" / PAGE_NAME
    assert page.is_file() == (len(bad) < len(rows))
    if page.is_file():
        assert all(h not in page.read_text() for h in bad)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("version", "1<i>"),
        ("compiler", "gcc@<i>"),
        ("platform", "<i>"),
        ("os", "<i>"),
        ("target", "<i>"),
        ("variants", ["<i>"]),
        ("stacks", ["root", "<i>"]),
    ],
)
def test_one_hostile_field_is_refused_when_the_others_were_seen_good(tmp_path: Path, field: str, value: object) -> None:
    """Package "aaa" makes every good value known; "bbb"'s spec differs from it by one
    hostile field alone: that field is what refuses it."""
    rows = [_row(_ok(1), "aaa"), _row(_ok(2), "bbb", **{field: value})]
    share = write_pages(rows, "t", str(tmp_path), {})
    assert share.kept == ["aaa"] and share.refused == share.left_out == 1
    assert [(package, h) for package, h, _ in share.refusals] == [("bbb", _ok(2))]
    assert not (tmp_path / "bbb").exists()


def test_a_share_counts_what_it_wrote_kept_and_left_out(tmp_path: Path) -> None:
    """A folder already there is compared (unchanged, or written when it differs); a new
    one is made; a name that is a file is skipped with all its specs; an unpaged name too."""
    rows = [
        _row(_ok(1), "aaa"),
        _row(_ok(2), "bbb"),
        _row(_ok(3), "ccc"),
        _row(_ok(4), "ccc", version="2"),
        _row(_ok(5), "ddd"),
        _row(_ok(6), "eee"),
    ]
    first = write_pages(rows[:2], "t", str(tmp_path), {})
    assert (first.kept, first.written, first.unchanged, first.specs) == (["aaa", "bbb"], 2, 0, 2)
    (tmp_path / "ddd").write_text("someone else's")
    (tmp_path / "bbb" / PAGE_NAME).write_text("stale")
    existing = {"aaa": True, "bbb": True, "ddd": False}
    share = write_pages(rows, "t", str(tmp_path), existing, {"eee": "clashes with another"})
    assert share.kept == ["aaa", "bbb", "ccc"]
    assert (share.written, share.unchanged, share.specs, share.left_out) == (2, 1, 4, 2)
    assert [line.split(":")[0] for line in share.skipped] == ["package 'ddd'", "package 'eee'"]
    assert "clashes with another" in share.skipped[1]
    assert (tmp_path / "ddd").read_text() == "someone else's"
