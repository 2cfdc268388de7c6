"""cachedex coverage: the matrix it prints and its JSON, against a brute-force count."""

from __future__ import annotations

import importlib
import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.publish.coverage import target_family
from tests.helpers import Demo, listed_specs, record, replace_mirror


def _run(demo: Demo, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--config", str(demo.config), "coverage", *args])
    return result.exit_code, result.output


def test_stacks_by_target_as_json(demo_run: Demo) -> None:
    code, out = _run(demo_run, "develop", "--json")
    assert code == 0, out
    matrix = json.loads(out)
    assert (matrix["tag"], matrix["rows"], matrix["columns"]) == ("develop", "stack", "target")
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        specs = listed_specs(catalog, "develop")
    assert list(matrix["counts"])[0] == "root"
    for stack, counts in matrix["counts"].items():
        brute = Counter(s.target for s in specs if stack in s.stacks)
        assert dict(zip(matrix["names"], counts, strict=True)) == {t: brute.get(t, 0) for t in matrix["names"]}


def test_packages_by_family_and_the_table(demo_run: Demo) -> None:
    code, out = _run(demo_run, "develop", "--by", "package,family", "--json")
    assert code == 0, out
    matrix = json.loads(out)
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        specs = listed_specs(catalog, "develop")
    brute = Counter((s.name, target_family(s.platform, s.target)) for s in specs)
    found = {
        (package, family): n
        for package, counts in matrix["counts"].items()
        for family, n in zip(matrix["names"], counts, strict=True)
        if n
    }
    assert found == dict(brute)
    code, out = _run(demo_run, "develop", "--by", "version,arch")
    assert code == 0 and "version" in out and "linux-" in out
    # 200 version columns fit no terminal: each package's row, its versions written whole
    code, out = _run(demo_run, "develop", "--by", "package,version")
    lines = out.splitlines()
    assert code == 0 and "columns: too many for a table, listed row by row; --json gives the matrix" in lines[0]
    brute_versions = Counter((s.name, s.version) for s in specs)
    rows = dict(line.split(": ", 1) for line in lines[1:])
    hdf5 = {version: brute_versions[("hdf5", version)] for name, version in brute_versions if name == "hdf5"}
    assert set(rows[f"hdf5 ({sum(hdf5.values())})"].split(", ")) == {f"{v} {n}" for v, n in hdf5.items()}
    assert "┃" not in out and len(rows) == len({s.name for s in specs})  # no table; every package
    code, out = _run(demo_run, "develop")
    assert code == 0 and "root" in out and "x86_64_v3" in out and f"{len(specs):,}" in out


def test_bad_usage(demo_run: Demo) -> None:
    assert _run(demo_run, "nope")[0] == 1
    for by in ("stack", "stack,stack", "stack,colour", "stack,version"):
        code, out = _run(demo_run, "develop", "--by", by)
        assert code == 2, (by, out)


def test_a_bad_by_names_the_option_and_the_axis_it_does_not_know(demo_run: Demo) -> None:
    code, out = _run(demo_run, "develop", "--by", "foo")
    assert code == 2 and "Invalid value for '--by': 'foo': unknown axis 'foo'; choose two among stack" in out
    code, out = _run(demo_run, "develop", "--by", "target,os,stack")
    assert code == 2 and "'--by': 'target,os,stack': give two axes" in out


def test_a_matrix_of_many_rows_is_listed_row_by_row(demo_run: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    """rich drew a table of 10,005 packages in 5.7 s: past TABLE_ROWS, a line a row."""
    import importlib

    monkeypatch.setattr(importlib.import_module("cachedex.cli.coverage_command"), "TABLE_ROWS", 10)
    code, out = _run(demo_run, "develop", "--by", "package,family")
    lines = out.splitlines()
    assert code == 0 and "package rows: too many for a table, listed row by row" in lines[0]
    packages = json.loads(_run(demo_run, "develop", "--by", "package,family", "--json")[1])["counts"]
    assert len(lines) == 1 + len(packages) and all(" (" in line and "): " in line for line in lines[1:])


def test_a_row_s_total_counts_each_spec_once_when_stacks_are_the_columns(
    demo_run: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stacks overlap (root is the whole tag, a spec may be in two stacks): a target's
    "all" summed its stacks' columns and counted its specs two or three times."""
    command = importlib.import_module("cachedex.cli.coverage_command")  # (the package names its command so)
    monkeypatch.setattr(command, "LAYOUT_WIDTH", 0)  # row by row: each row's total in words
    with Catalog(demo_run.catalog, readonly=True) as catalog:
        specs = listed_specs(catalog, "develop")
    for axes, value in (("target,stack", "target"), ("stack,target", "stack")):
        code, out = _run(demo_run, "develop", "--by", axes)
        assert code == 0, out
        totals = {
            row: int(n.replace(",", ""))
            for row, n in (line.split(": ")[0][:-1].split(" (") for line in out.splitlines()[1:])
        }
        if value == "target":
            assert totals == dict(Counter(s.target for s in specs))
        else:  # a stack's row: its own specs, one target each
            assert totals == {stack: sum(stack in s.stacks for s in specs) for stack in totals}
            assert totals["root"] == len(specs)


def test_a_stack_that_lists_nothing_is_counted_as_zeros(tmp_path: Path) -> None:
    """A stack whose index lists nothing was no row (and no column) at all, where the
    tag's page counts it among its stacks."""
    with Catalog(tmp_path / "c.sqlite") as catalog:
        a = record("a" * 32, "zlib")
        with catalog.writing_tag("t") as writer:
            writer.add_specs([a], {})
            replace_mirror(writer, "root", {a.hash: True})
            replace_mirror(writer, "empty", {a.hash: False}, url="/empty")
    config = tmp_path / "cachedex.yaml"
    config.write_text(f"catalog: {tmp_path / 'c.sqlite'}\ntags:\n  - name: t\n    url: ./m\n")

    def matrix(*args: str) -> dict[str, object]:
        result = CliRunner().invoke(main, ["--config", str(config), "coverage", "t", *args])
        assert result.exit_code == 0, result.output
        return dict(json.loads(result.output))

    assert matrix("--json")["counts"] == {"root": [1], "empty": [0]}
    by_target = matrix("--by", "target,stack", "--json")
    assert (by_target["names"], by_target["counts"]) == (["root", "empty"], {"x86_64_v3": [1, 0]})
    result = CliRunner().invoke(main, ["--config", str(config), "coverage", "t"])
    assert result.exit_code == 0 and "│ empty │" in result.output
