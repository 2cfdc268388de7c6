"""Mutation hunt of ``cachedex.values``: the boundaries, escapes and wordings that the
other tests of the module left free to change."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cachedex.values import (
    check_label,
    check_name,
    compilers_text,
    counted,
    format_version,
    is_dag_hash,
    json_visible,
    page_visible,
    shared_variants,
    short_repr,
    size_text,
    spec_manifest_path,
    stack_order,
    tarball_path_v2,
    total_size_text,
    variant_name,
    visible,
)


@pytest.mark.parametrize(
    ("written", "version"),
    [
        (8, 8),
        ("3", 3),
        ("123456789", 123456789),
        # Not what Spack writes, though int() reads them all
        (" 8", None),
        ("\u0668", None),  # ARABIC-INDIC DIGIT EIGHT
        ("1234567890", None),  # more than nine digits
        ("-1", None),
        ("8.0", None),
        (None, None),
    ],
)
def test_format_version_reads_only_whole_ascii_numbers(written: object, version: int | None) -> None:
    assert format_version(written) == version


def test_root_stack_sorts_first_then_stacks_by_name() -> None:
    assert sorted(["ml", "root", "aaa", "zz"], key=stack_order) == ["root", "aaa", "ml", "zz"]


@pytest.mark.parametrize(
    ("shown", "name"),
    [("+mpi", "mpi"), ("~shared", "shared"), ("build_system=cmake", "build_system"), ("cuda_arch:=80,90", "cuda_arch")],
)
def test_variant_name_as_a_spec_shows_it(shown: str, name: str) -> None:
    assert variant_name(shown) == name


class _Specs:
    def __init__(self, *variants: str) -> None:
        self.variants = variants


def test_shared_variants_are_those_every_spec_holds() -> None:
    # The second spec lacks +mpi: every spec after the first counts, not only the third on
    specs = [_Specs("+mpi", "~x", "a=1"), _Specs("~x", "a=1"), _Specs("+mpi", "~x", "a=1")]
    assert shared_variants(specs) == {"~x", "a=1"}
    assert shared_variants([_Specs("+mpi")]) == {"+mpi"}
    assert shared_variants([]) == set()


def test_a_dag_hash_has_exactly_32_characters() -> None:
    assert is_dag_hash("a" * 32)
    assert not is_dag_hash("a" * 31) and not is_dag_hash("a" * 33)


@pytest.mark.parametrize(
    ("size", "sized", "count", "shown"),
    [
        (None, 0, 0, "unknown"),
        (5_000, 0, 3, "unknown"),  # no size known: not the 0 B of nothing
        (None, 2, 3, "unknown"),
        (5_000, 3, 3, "5.0 kB"),
        (5_000, 2, 3, "5.0 kB (2 of 3 known)"),
        (1_200_000_000, 1_200, 5_000, "1.2 GB (1,200 of 5,000 known)"),
    ],
)
def test_total_size_text_says_how_many_sizes_it_knows(size: int | None, sized: int, count: int, shown: str) -> None:
    assert total_size_text(size, sized, count) == shown


def test_a_size_no_mirror_told_is_unknown_not_a_dash() -> None:
    assert size_text(None) == "unknown"
    assert size_text(0) == "0 B"


@pytest.mark.parametrize(("n", "shown"), [(0, "0 specs"), (1, "1 spec"), (2, "2 specs"), (1_200, "1,200 specs")])
def test_counted_is_plural_unless_one(n: int, shown: str) -> None:
    assert counted(n, "spec") == shown


def test_compilers_text_marks_each_other_compiler_with_a_plus() -> None:
    assert compilers_text("apple-clang@16.0.0", ["gcc@14.2.0"]) == "apple-clang@16.0.0 +gcc@14.2.0"
    assert compilers_text("gcc@14", ()) == "gcc@14"


def test_short_repr_lists_four_items_two_levels_deep() -> None:
    assert short_repr(list(range(10))) == "[0, 1, 2, 3, ...]"
    assert short_repr([[[1]]]) == "[[[...]]]"


def test_short_repr_keeps_a_repr_of_up_to_ten_characters_over_the_limit() -> None:
    four = ["a" * 18] * 4  # reprlib writes it whole: 88 characters
    assert short_repr(four) == repr(four) and len(repr(four)) == 88


def test_short_repr_cuts_a_longer_repr_at_the_limit() -> None:
    shown = short_repr(["b" * 200] * 4)
    assert len(shown) == 83 and shown.endswith("...")


def test_short_repr_of_a_number_too_long_to_write_counts_its_digits() -> None:
    if sys.get_int_max_str_digits() == 0:  # unlimited: the number is written, cut
        pytest.skip("int digits limit disabled")
    assert short_repr(10**5000) == "<a number of about 5000 digits>"


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (None, "missing: expected a string"),
        ("", "must not be empty"),
        (3.5, "expected a string, got float 3.5"),
    ],
)
def test_check_name_words_its_problem(name: object, problem: str) -> None:
    assert check_name(name) == problem


@pytest.mark.parametrize(("name", "fine"), [("_x", False), (".x", False), ("a@b", True), ("a=b", True), ("1.0", True)])
def test_a_label_starts_with_a_letter_or_digit_and_may_hold_at(name: str, fine: bool) -> None:
    assert (check_label(name) is None) is fine


def test_paths_of_a_spec_write_a_slash_in_its_fields_as_an_underscore() -> None:
    assert spec_manifest_path("n", "git.a/b=1", "h") == "v3/manifests/spec/n/n-git.a_b=1-h.spec.manifest.json"
    assert (
        tarball_path_v2(
            hash="h", name="n", version="git.f/x=1", compiler="gcc@1/2", platform="linux", os="u/b", target="x"
        )
        == "build_cache/linux-u_b-x/gcc-1_2/n-git.f_x=1/linux-u_b-x-gcc-1_2-n-git.f_x=1-h.spack"
    )


def test_a_v2_tarball_path_of_a_spec_without_a_compiler_version() -> None:
    # Spack writes the compiler part of a spec with no compiler (Spack 1.x) as none-none
    path = tarball_path_v2(hash="h", name="n", version="1", compiler="", platform="linux", os="u", target="x")
    assert path == "build_cache/linux-u-x/none-none/n-1/linux-u-x-none-none-n-1-h.spack"


def test_page_visible_keeps_ascii_and_escapes_beyond_it() -> None:
    # A page shows no ASCII control, so those stay raw; the override would reorder the line
    assert page_visible("a\x7f\u202e\n") == "a\x7f\\u202e\n"


@pytest.mark.parametrize(
    ("char", "escape"),
    [
        ("\uffff", "\\uffff"),  # the last code point JSON writes as one escape
        ("\u2028", "\\u2028"),
        ("\x85", "\\u0085"),  # four hex digits, always
        ("\U000e0041", "\\udb40\\udc41"),  # TAG LATIN CAPITAL LETTER A: a surrogate pair
        ("\U0010fffe", "\\udbff\\udffe"),
    ],
)
def test_json_visible_writes_json_escapes(char: str, escape: str) -> None:
    assert json_visible(char) == escape
    assert json.loads(f'"{escape}"') == char


@given(st.text())
def test_json_visible_parses_back_to_the_same_values_with_nothing_hidden_raw(value: str) -> None:
    shown = json_visible(json.dumps(value, ensure_ascii=False))
    assert json.loads(shown) == value
    assert all(char < "\x80" or char.isprintable() for char in shown)


@given(st.text())
def test_visible_is_always_printable_and_page_visible_only_keeps_ascii_raw(value: str) -> None:
    assert visible(value).isprintable()
    assert all(char < "\x80" or char.isprintable() for char in page_visible(value))
