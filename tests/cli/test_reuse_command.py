"""cachedex reuse: its table, what it lists to build, its JSON, its errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from cachedex.cli import main
from tests.helpers import Demo
from tests.lockfiles import changed, closure, demo_nodes, developed, lockfile, roots_named, spliced, write_lockfile


def _run(demo: Demo, *args: str, stdin: bytes | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--config", str(demo.config), "reuse", *args], input=stdin)
    return result.exit_code, result.output


def _bumped(tmp_path: Path, value: str = "9.9.9") -> tuple[Path, dict[str, Any]]:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5", "py-numpy")
    specs, renamed = changed(closure(nodes, roots), "zlib-ng", lambda node: node["parameters"].update(note=value))
    return write_lockfile(tmp_path / "spack.lock", lockfile(specs, [renamed[r] for r in roots])), specs


def test_the_table_the_cause_and_what_follows(demo_run: Demo, tmp_path: Path) -> None:
    path, specs = _bumped(tmp_path)
    code, out = _run(demo_run, str(path))
    assert code == 0, out
    lines = out.splitlines()
    externals = sum("external" in node for node in specs.values())
    assert lines[0] == f"{path}: {len(specs)} specs, 2 roots; {externals} external (never in a build cache)"
    # (each tag's row: binaries "cached of needed", then those to build)
    code, report = _run(demo_run, str(path), "--json")
    for row in json.loads(report)["tags"]:
        (shown,) = [line for line in lines if line.startswith(f"│ {row['tag']} ")]
        cells = [cell.strip() for cell in shown.split("│")[1:-1]]
        assert cells[2:4] == [f"{row['cached']:,} of {row['needed']:,}", f"{row['needed'] - row['cached']:,}"], cells
    assert any(line.startswith("│ develop ") for line in lines)
    (cause,) = [line for line in lines if line.startswith("  zlib-ng@")]
    assert "variants (none) (yours note=9.9.9)" in cause
    follow = lines[lines.index(next(line for line in lines if line.startswith("Built because"))) + 1]
    assert "hdf5@" in follow and "py-numpy@" in follow and follow.endswith("(--all: each)")
    code, every = _run(demo_run, str(path), "--all")
    assert code == 0 and any(
        line.startswith("  hdf5@") and "(root)" in line and "^zlib-ng" in line for line in every.splitlines()
    )


def test_a_stack_some_tags_lack_compares_those_that_have_it(demo_run: Demo, tmp_path: Path) -> None:
    path, _ = _bumped(tmp_path)
    code, out = _run(demo_run, str(path), "--stack", "ml-linux-x86_64-rocm")
    assert code == 0, out
    assert "Not compared (no stack ml-linux-x86_64-rocm): develop-2026-11-01, v1.0.2" in out
    assert any(line.startswith("│ develop ") for line in out.splitlines())


def test_json_and_standard_input(demo_run: Demo, tmp_path: Path) -> None:
    path, specs = _bumped(tmp_path)
    code, out = _run(demo_run, "-", "--tag", "develop", "--json", stdin=path.read_bytes())
    assert code == 0, out
    report = json.loads(out)
    assert report["lockfile"] == "<stdin>" and [row["tag"] for row in report["tags"]] == ["develop"]
    (row,) = report["tags"]
    assert row["needed"] == len(specs) - report["external"] and row["cached"] + len(row["missing"]) == row["needed"]
    assert sum(not m["follows"] for m in row["missing"]) == 1


def test_a_mirror_value_shows_as_escapes_and_errors_name_the_file(demo_run: Demo, tmp_path: Path) -> None:
    path, _ = _bumped(tmp_path, "\x1b[2J\u202e")
    code, out = _run(demo_run, str(path))
    assert code == 0, out
    assert "\x1b" not in out and "\u202e" not in out and "\\x1b[2J" in out
    (tmp_path / "bad.lock").write_text("{}")
    code, out = _run(demo_run, str(tmp_path / "bad.lock"))
    assert code == 1 and out.startswith(f"error: {tmp_path / 'bad.lock'}: not a Spack lockfile")
    code, out = _run(demo_run, str(path), "--tag", "nope")
    assert code == 1 and "nope" in out


def test_long_lists_are_cut_unless_all_and_an_environment_of_externals(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = list(nodes)  # the whole stack, zlib-ng a release newer: much builds because it does
    specs, renamed = changed(nodes, "zlib-ng", lambda node: node["parameters"].update(note="9.9.9"))
    path = write_lockfile(tmp_path / "spack.lock", lockfile(specs, [renamed.get(r, r) for r in roots]))
    code, out = _run(demo_run, str(path), "--tag", "develop", "--json")
    follows = sum(m["follows"] for m in json.loads(out)["tags"][0]["missing"])
    assert code == 0 and follows > 25
    code, out = _run(demo_run, str(path), "--tag", "develop")
    lines = out.splitlines()
    listed = lines[lines.index(next(line for line in lines if line.startswith("Built because"))) + 1]
    assert code == 0 and listed.endswith(f" and {follows - 25:,} more (--all: each)") and listed.count("@") == 25
    for node in specs.values():
        node["external"] = {"path": "/usr", "module": None, "extra_attributes": {}}
    external = write_lockfile(tmp_path / "external.lock", lockfile(specs, [renamed.get(r, r) for r in roots]))
    code, out = _run(demo_run, str(external), "--tag", "develop")
    assert code == 0 and "No spec of the environment comes from a build cache: every one is external." in out
    assert "has a binary of every spec" not in out


def test_an_environment_without_specs_is_said_to_have_none(demo_run: Demo, tmp_path: Path) -> None:
    """An empty environment (nothing concretized yet) was said to be all externals."""
    path = write_lockfile(tmp_path / "spack.lock", lockfile({}, []))
    code, out = _run(demo_run, str(path), "--tag", "develop")
    assert code == 0 and "0 specs, 0 roots; 0 external" in out, out
    assert "The environment has no spec." in out and "external." not in out.splitlines()[-1]


def test_spliced_specs_are_counted_from_their_build_specs(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5")
    specs, renamed = spliced(nodes, roots, "zlib-ng")
    path = write_lockfile(tmp_path / "spack.lock", lockfile(specs, [renamed[r] for r in roots]))
    code, out = _run(demo_run, str(path), "--tag", "develop")
    assert code == 0, out
    above = sum("build_spec" in node for node in specs.values())
    assert f"develop: {above} spliced specs from the binary of the spec each was spliced from" in out
    (to_build,) = [line for line in out.splitlines() if line.startswith("To build from source")]
    assert to_build == "To build from source with develop: 1 spec."


def test_what_spack_spec_json_prints_for_several_specs(demo_run: Demo, tmp_path: Path) -> None:
    """``spack spec --json hdf5 py-numpy | cachedex reuse -``: one spec file a line, each
    a root (it was refused: "trailing characters")."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5", "py-numpy")
    lines = []
    for root in roots:
        built = closure(nodes, [root])
        ordered = [built[root], *(node for key, node in built.items() if key != root)]
        lines.append(json.dumps({"spec": {"_meta": {"version": 5}, "nodes": ordered}}, separators=(",", ":")))
    code, out = _run(demo_run, "-", "--tag", "develop", "--json", stdin=("\n".join(lines) + "\n").encode())
    assert code == 0, out
    report = json.loads(out)
    assert report["roots"] == 2 and report["specs"] == len(closure(nodes, roots))
    (row,) = report["tags"]
    assert row["cached"] == row["needed"] == report["specs"] - report["external"] and not row["missing"]


def test_a_spec_developed_in_place_is_listed_apart_with_no_nearest_build(demo_run: Demo, tmp_path: Path) -> None:
    """A spec with ``dev_path`` (``spack develop``) was one "to build" with a nearest
    cached build, as if a binary were near: Spack builds it from its source, always."""
    nodes = demo_nodes()
    roots = roots_named(nodes, "hdf5", "py-numpy")
    specs, renamed = developed(nodes, roots, "zlib-ng")
    (zlib,) = [key for key, node in specs.items() if node["name"] == "zlib-ng"]
    path = write_lockfile(tmp_path / "spack.lock", lockfile(specs, [renamed[r] for r in roots]))
    code, out = _run(demo_run, str(path), "--tag", "develop")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].endswith("; 1 developed locally (always built from source)")
    at = lines.index("Developed locally (1): Spack builds each from its source, never from a build cache:")
    assert lines[at + 1] == f"  zlib-ng@{specs[zlib]['version']} /{zlib[:7]}"
    assert not any(line.startswith("  zlib-ng@") and "nearest" in line for line in lines)
    assert "Not cached as locked" not in out  # what builds on it follows from it
    assert any(line.startswith("Built because") for line in lines)
    code, out = _run(demo_run, str(path), "--tag", "develop", "--json")
    report = json.loads(out)
    assert report["developed"] == [{"hash": zlib, "name": "zlib-ng", "version": specs[zlib]["version"], "root": False}]
    (row,) = report["tags"]
    assert row["needed"] == report["specs"] - report["external"] - 1
    assert zlib not in {m["hash"] for m in row["missing"]}


def test_an_environment_of_developed_and_external_specs(demo_run: Demo, tmp_path: Path) -> None:
    nodes = demo_nodes()
    roots = roots_named(nodes, "zlib-ng")
    specs, renamed = developed(nodes, roots, "zlib-ng")
    for node in specs.values():
        if node["name"] != "zlib-ng":
            node["external"] = {"path": "/usr", "module": None, "extra_attributes": {}}
    path = write_lockfile(tmp_path / "spack.lock", lockfile(specs, [renamed[r] for r in roots]))
    code, out = _run(demo_run, str(path), "--tag", "develop")
    assert code == 0, out
    assert out.splitlines()[-1] == (
        "No spec of the environment comes from a build cache: every one is external or developed locally."
    )
