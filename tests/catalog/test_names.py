"""``NameIndex.close`` against difflib over every name: the same answer, always."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from cachedex.catalog.names import NameIndex

# Few letters, so that names share many of them and the cutoff is often near.
_name = st.text(alphabet="abcelp-0", min_size=1, max_size=12)


@settings(max_examples=400)
@given(st.lists(_name, max_size=60), _name, st.sampled_from([0.6, 0.3, 0.8]))
def test_close_names_are_difflibs_over_every_name(names: list[str], wanted: str, cutoff: float) -> None:
    index = NameIndex(names)
    expected = difflib.get_close_matches(wanted, sorted(set(names)), n=3, cutoff=cutoff)
    assert index.close(wanted, cutoff=cutoff) == expected


def test_a_transposed_name_is_found_among_many() -> None:
    names = [f"py-package-{n:05d}" for n in range(5000)] + ["zlib", "libelf", "libdwarf"]
    assert NameIndex(names).close("zlbi") == ["zlib"]
    assert NameIndex(names).close("nosuchpkg") == []
