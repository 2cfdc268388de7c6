"""Spec manifest paths a sync refuses, found unguarded by a mutation hunt: the check of
a spec's name and version is remembered per name and version, so a spec whose name was
already found safe must still have its version checked."""

from __future__ import annotations

from pathlib import Path

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from tests.helpers import fixture_index, make_config, spec_row, write_v3_mirror

LIBELF_CORE2 = "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"  # libelf 0.8.13, first in the index
SECOND_LIBELF = "jr3yipyxyjulcdvckwwwjrrumis7glpa"  # libelf 0.8.13 again, later in the index


def test_an_unsafe_version_after_a_safe_spec_of_the_same_name_is_refused(mirrors: Path, tmp_path: Path) -> None:
    """The mirror even holds a manifest at the path the unsafe version would make: a
    sync that asked for it would record its size, and say nothing."""
    index = fixture_index(mirrors)
    installs = index["database"]["installs"]  # type: ignore[index]
    assert list(installs).index(LIBELF_CORE2) < list(installs).index(SECOND_LIBELF)
    installs[SECOND_LIBELF]["spec"]["version"] = "1..2"
    write_v3_mirror(tmp_path / "m", index)
    config = make_config(tmp_path, [{"name": "t", "url": str(tmp_path / "m")}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
        assert outcome.ok, outcome.error
        safe, unsafe = spec_row(catalog, LIBELF_CORE2), spec_row(catalog, SECOND_LIBELF)
    assert safe is not None and safe["size"] is not None
    assert unsafe is not None and unsafe["size"] is None
    (warning,) = outcome.warnings
    assert warning.startswith("root: 1 sizes unknown") and f"spec {SECOND_LIBELF}: " in warning
    assert warning.endswith("cannot be part of a path")
