"""Small shared values: names that may become folders, sizes for people, deptype masks."""

from __future__ import annotations

import pytest

from cachedex.values import (
    DEPTYPE_BITS,
    LINK_RUN,
    check_name,
    decode_variants,
    deptypes_from_mask,
    deptypes_to_mask,
    human_size,
    is_dag_hash,
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
        ("tab\there", "control characters"),
        (12, "expected a string"),
    ],
)
def test_check_name(name: object, problem: str | None) -> None:
    found = check_name(name)
    assert (found is None) if problem is None else (problem in (found or ""))


@pytest.mark.parametrize(
    ("size", "shown"),
    [(None, "-"), (0, "0 B"), (999, "999 B"), (1000, "1.0 kB"), (12_345_678, "12.3 MB"), (2 * 10**12, "2.0 TB")],
)
def test_human_size(size: int | None, shown: str) -> None:
    assert human_size(size) == shown


def test_deptype_masks_round_trip() -> None:
    assert deptypes_to_mask(["build", "link", "nonsense"]) == 3
    assert deptypes_to_mask("run") == 4 and deptypes_to_mask(None) == 0
    assert deptypes_from_mask(0b1111) == tuple(DEPTYPE_BITS)
    assert deptypes_to_mask(("link", "run")) == LINK_RUN


def test_dag_hashes_and_variants() -> None:
    assert is_dag_hash("u5uz3dcch5if4eve4sef67o2rf2lbfgh")
    assert not is_dag_hash("U5UZ3DCCH5IF4EVE4SEF67O2RF2LBFGH") and not is_dag_hash("short") and not is_dag_hash(None)
    assert decode_variants('["+mpi","cuda_arch:=80"]') == ("+mpi", "cuda_arch:=80")
