"""``cachedex export spack-cache`` and a hostile mirror: cache.spack.io's app writes the
exported values into its page with ``innerHTML`` once ``JSON.parse`` undid the file's
escapes, so a spec holding a value Spack cannot write is refused, counted and named.

The mirror is test_hostile_pages.py's (the real test index with hostile records), with
one more record per field that only that field spoils; its real records export as their
index says (test_export.py's reader)."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.errors import LookupFailed
from cachedex.ingest.sync import sync
from cachedex.publish.export import PACKAGES_FILE, SPECS_FILE, ExportReport, export_spack_cache
from tests.helpers import LIBDWARF_CORE2, make_config, record, write_tag, write_v3_mirror
from tests.publish.test_export import brute_force
from tests.publish.test_hostile_pages import EVIL, IMG, LATER, OVERRIDE, SCRIPT, SECOND, SVG, THIRD
from tests.publish.test_hostile_pages import _index as hostile_index

#: One record per field, only that field hostile: hash -> (field, how the node changes).
ONE_FIELD: dict[str, tuple[str, Any]] = {
    "p" * 32: ("platform", lambda node: node["arch"].update(platform=IMG)),
    "q" * 32: ("compiler", lambda node: node["annotations"].update(compiler="gcc@=1<b>")),
    "r" * 32: ("variant", lambda node: node["parameters"].update({"label": OVERRIDE})),
    "s" * 32: ("variant", lambda node: node["parameters"].update({SVG: True})),
    "t" * 32: ("dependency type", lambda node: node["dependencies"][0]["parameters"].update(deptypes=[IMG])),
    "u" * 32: ("virtual", lambda node: node["dependencies"][0]["parameters"].update(virtuals=["c&d"])),
    "v" * 32: ("version", lambda node: node.update(version="1.0<i>")),
    "w" * 32: ("variant", lambda node: node["parameters"].update({"label": "fish&chips"})),  # (an entity's start)
}
#: The first field of test_hostile_pages.py's own records that is refused.
EXPECTED = {EVIL: "package name", SECOND: "package name", THIRD: "package name", LATER: "package name"}
EXPECTED |= {dag_hash: field for dag_hash, (field, _) in ONE_FIELD.items()}


def _mirror_index() -> dict[str, Any]:
    index: dict[str, Any] = hostile_index(later=True)
    installs = index["database"]["installs"]
    for dag_hash, (_, change) in ONE_FIELD.items():
        entry = copy.deepcopy(installs[LIBDWARF_CORE2])
        entry["spec"]["hash"] = dag_hash
        change(entry["spec"])
        installs[dag_hash] = entry
    return index


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]], Path]:
    """(base, tags, config file) of one tag: the hostile mirror as a stack."""
    base = tmp_path_factory.mktemp("export-hostile")
    write_v3_mirror(base / "m", _mirror_index())
    tags: list[dict[str, Any]] = [{"name": "t", "url": "./m", "stacks": {"s": "./m"}}]
    config = make_config(base, tags)
    with Catalog(config.catalog) as catalog:
        assert [outcome.error for outcome in sync(config, catalog)] == [None]
    (base / "cachedex.json").write_text(json.dumps({"catalog": str(config.catalog), "tags": tags}))
    return base, tags, config.catalog


def _strings(value: Any) -> list[str]:
    """Every string of a decoded JSON value, keys included."""
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (key, *_strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


def _export(catalog_path: Path, outdir: Path) -> tuple[ExportReport, dict[str, Any], dict[str, Any]]:
    with Catalog(catalog_path, readonly=True) as catalog:
        report = export_spack_cache(catalog, outdir)
    packages, specs = (json.loads(gzip.decompress((outdir / f).read_bytes())) for f in (PACKAGES_FILE, SPECS_FILE))
    return report, packages, specs


def test_specs_with_values_spack_cannot_write_are_refused_and_named(
    hostile: tuple[Path, list[dict[str, Any]], Path],
) -> None:
    base, tags, catalog = hostile
    report, packages, specs = _export(catalog, base / "out")
    assert {refusal.hash: refusal.field for refusal in report.refused} == EXPECTED
    assert not set(EXPECTED) & set(specs)
    # What the app writes into its page holds no markup, and no hostile name is a package.
    text = _strings(packages) + _strings(specs)
    assert not [s for s in text if set(s) & set("<>&") or not s.isascii()]
    assert set(packages) == {"libdwarf", "libelf", "compiler-wrapper", "gcc-runtime"}
    assert report.specs == len(specs) and report.packages == len(packages)
    # The real records: as their index says, the hostile ones left out.
    want_packages, want_specs = brute_force(base, tags)
    assert specs == {h: s for h, s in want_specs.items() if h not in EXPECTED}
    for name, package in packages.items():
        want = {r: [h for h in hashes if h not in EXPECTED] for r, hashes in want_packages[name]["specs"].items()}
        assert package["specs"] == want and package["latest_version"] in {s["version"] for s in specs.values()}
    # Named as they were, a value's invisible characters as escapes.
    warning = report.refused_warning()
    assert warning is not None and warning.count("\n") == 0
    assert warning.startswith(f"warning: {len(EXPECTED)} specs not exported")
    assert all(f"'{dag_hash}' ({field} " in warning for dag_hash, field in EXPECTED.items())
    assert f"(package name {IMG!r})" in warning and "(version '1.0<i>')" in warning
    assert "(variant 'label=\\u202egnp.exe')" in warning and OVERRIDE not in warning
    assert SCRIPT not in warning  # EVIL's version: its name was the first refused


def test_the_command_says_which_specs_it_refused(hostile: tuple[Path, list[dict[str, Any]], Path]) -> None:
    base, _, _ = hostile
    args = ["--config", str(base / "cachedex.json"), "export", "spack-cache", str(base / "cli")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    (warning,) = [line for line in result.stderr.splitlines() if "not exported" in line]
    assert warning.startswith(f"warning: {len(EXPECTED)} specs not exported")
    assert all(dag_hash in warning for dag_hash in EXPECTED)
    assert "specs," in result.stdout and "warning" not in result.stdout


def test_a_catalog_s_own_hostile_names_are_refused_too(tmp_path: Path) -> None:
    """Tags and stacks come from the config, which refuses such names; a catalog
    written otherwise is checked all the same, and a package left without specs is
    not written."""
    catalog = Catalog(tmp_path / "c.sqlite")
    bad_stack, bad_dependency = record("a" * 32, "zlib"), record("b" * 32, "cmake", node=b'{"dependencies": [1]}')
    fine = record("d" * 32, "zstd")
    write_tag(catalog, "t", [bad_stack, bad_dependency, fine])
    write_tag(catalog, "t", [], members={"a" * 32: True}, stack="<b>s", checksum="s")
    write_tag(catalog, "t", [], members={"b" * 32: True, "d" * 32: True}, stack="ok", checksum="o")
    with catalog:
        report = export_spack_cache(catalog, tmp_path / "out")
    assert [(r.hash, r.field) for r in report.refused] == [("a" * 32, "stack"), ("b" * 32, "dependencies")]
    assert report.specs == report.packages == 1 and report.stacks == ["ok"]
    assert list(json.loads(gzip.decompress((tmp_path / "out" / PACKAGES_FILE).read_bytes()))) == ["zstd"]


def test_a_package_asked_for_whose_specs_were_all_refused_says_so(
    hostile: tuple[Path, list[dict[str, Any]], Path],
) -> None:
    """Not only "no chosen stack lists a binary of it": its stack does, and each was refused."""
    base, _, catalog = hostile
    with Catalog(catalog, readonly=True) as opened, pytest.raises(LookupFailed) as failed:
        export_spack_cache(opened, base / "asked", packages=[IMG])
    assert f"no chosen stack lists a binary of {IMG}; 1 spec refused ('{EVIL}' (package name " in str(failed.value)
    assert not (base / "asked").exists()
