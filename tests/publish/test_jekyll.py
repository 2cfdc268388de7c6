"""``cachedex jekyll``: cache.spack.io pages, byte for byte, written safely.

The key proof rebuilds three real cache.spack.io pages (``zlib``, ``py-pip``, ``openmpi``
of ``develop-2025-07-13``): mirrors are generated whose index records carry exactly what
each page shows, synced and written through the real command line, and the output is
compared with the real files byte for byte (v2 mirrors: sizes unknown, ``"-"``; v3
mirrors: the sizes their spec manifests carry). Then: idempotence, removal, ``--tag``,
atomic writes, names that would escape OUTDIR, and a real ``jekyll build`` of the output.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.demo.mirrorgen import write_mirror
from cachedex.errors import JekyllError
from cachedex.publish import jekyll
from cachedex.publish.jekyll import write_jekyll
from cachedex.publish.jekyll_data import read_record
from cachedex.publish.jekyll_pages import render_page
from tests.helpers import CACHE_PAGES, Listed, as_row, record, write_tag

TAG = "develop-2025-07-13"
PACKAGES = ("zlib", "py-pip", "openmpi")
FLAGS = ("cflags", "cppflags", "cxxflags", "fflags", "ldflags", "ldlibs")
Record = tuple[dict[str, Any], bool]  # (node dict, in_buildcache)


# -- what the real pages show ----------------------------------------------------------


@dataclass(frozen=True)
class PageSpec:
    """One element of a real page's ``spec_details``."""

    name: str
    hash: str
    version: str
    platform: str
    os: str
    target: str
    compiler: str
    variants: tuple[str, ...]
    stacks: tuple[str, ...]


def fixture_page(package: str) -> bytes:
    path = CACHE_PAGES / TAG / package / "specs.md"
    if not path.is_file():
        pytest.fail(
            f"cache.spack.io fixture not found at {path}: "
            "../shared must sit beside the checkout, or CACHEDEX_SHARED name it"
        )
    return path.read_bytes()


def front_matter(page: bytes) -> dict[str, str]:
    """The ``key: value`` lines between the two ``---`` lines of a page, values as text."""
    lines = page.decode("utf-8").split("\n")
    assert lines[0] == "---" and lines[-1] == "---", "not a front-matter-only page"
    return dict(line.split(": ", 1) for line in lines[1:-1])


def page_specs(package: str) -> list[PageSpec]:
    details = json.loads(front_matter(fixture_page(package))["spec_details"])
    return [
        PageSpec(
            package,
            d["hash"],
            d["versions"][0],
            d["platform"],
            d["os"],
            d["target"],
            d["compiler"],
            tuple(d["variants"]),
            tuple(d["stacks"]),
        )
        for d in details
    ]


# -- index records that produce those strings ------------------------------------------


def fake_hash(text: str) -> str:
    return base64.b32encode(hashlib.sha1(text.encode()).digest()).decode().lower()[:32]


def parameters(variants: Iterable[str]) -> dict[str, Any]:
    """``parameters`` whose display strings are ``variants``, in that order (format doc §4.3),
    followed by the six (empty) flag lists as Spack writes them."""
    result: dict[str, Any] = {}
    for text in variants:
        if text[0] in "+~":
            result[text[1:]] = text[0] == "+"
        elif ":=" in text:
            name, values = text.split(":=", 1)
            result[name] = values.split(",")
        else:
            name, value = text.split("=", 1)
            result[name] = value
    for flag in FLAGS:
        result.setdefault(flag, [])
    return result


def compiler_node(compiler: str) -> dict[str, Any]:
    """An external compiler node (``in_buildcache`` false) named like ``gcc@11.4.0``."""
    name, version = compiler.split("@", 1)
    return {
        "name": name,
        "version": version,
        "arch": {"platform": "linux", "platform_os": "ubuntu22.04", "target": "x86_64"},
        "namespace": "builtin",
        "parameters": parameters(()),
        "external": {"path": "/usr", "module": None, "extra_attributes": {}},
        "annotations": {"original_specfile_version": 5},
        "hash": fake_hash(compiler),
    }


def spec_node(spec: PageSpec, *, flags: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """A spec-v5 node showing ``spec``: the compiler is a build edge providing c/cxx, the
    DAG hash is simply the key given (never recomputed by readers, format doc §3.2)."""
    node: dict[str, Any] = {
        "name": spec.name,
        "version": spec.version,
        "arch": {"platform": spec.platform, "platform_os": spec.os, "target": spec.target},
        "namespace": "builtin",
        "parameters": {**parameters(spec.variants), **(flags or {})},
        "package_hash": fake_hash(f"package:{spec.name}") + "========================",
    }
    if spec.compiler != "none":
        node["dependencies"] = [
            {
                "name": spec.compiler.split("@")[0],
                "hash": fake_hash(spec.compiler),
                "parameters": {"deptypes": ["build"], "virtuals": ["c", "cxx"]},
            }
        ]
    node["annotations"] = {"original_specfile_version": 5}
    node["hash"] = spec.hash
    return node


def mirrors_for(specs: Iterable[PageSpec]) -> dict[str, list[Record]]:
    """Records per stack ('root' included): a spec is in every stack its page lists; each
    mirror also holds the compiler nodes its specs need (not listed)."""
    members: dict[str, list[PageSpec]] = {}
    for spec in specs:
        for stack in spec.stacks:
            members.setdefault(stack, []).append(spec)
    return {
        stack: [(spec_node(s), True) for s in group]
        + [(compiler_node(c), False) for c in sorted({s.compiler for s in group} - {"none"})]
        for stack, group in members.items()
    }


ALL_SPECS = [spec for package in PACKAGES for spec in page_specs(package)] if (CACHE_PAGES / TAG).is_dir() else []


def write_v2_mirror(root: Path, records: Iterable[Record], *, db_version: str = "8") -> None:
    """A layout-2 mirror: ``build_cache/index.json`` (compact, as Spack writes it) + its hash."""
    nodes = {node["hash"]: (node, listed) for node, listed in records}
    refs = {key: 0 for key in nodes}
    for node, _ in nodes.values():
        for dep in node.get("dependencies", ()):
            if dep["hash"] in refs:
                refs[dep["hash"]] += 1
    installs = {
        key: {"spec": node, "ref_count": refs[key], "in_buildcache": listed} for key, (node, listed) in nodes.items()
    }
    data = json.dumps({"database": {"version": db_version, "installs": installs}}, separators=(",", ":")).encode()
    (root / "build_cache").mkdir(parents=True, exist_ok=True)
    (root / "build_cache/index.json").write_bytes(data)
    (root / "build_cache/index.json.hash").write_text(hashlib.sha256(data).hexdigest())


def write_v3_mirror(root: Path, records: list[Record], sizes: dict[str, int]) -> None:
    """A layout-3 mirror (index manifest + blob, a spec manifest per listed record whose
    tarball ``contentLength`` is ``sizes[hash]``), by the package's own generator."""
    write_mirror(root, records, layout=3, sizes=sizes)


def write_config(path: Path, tags: dict[str, dict[str, Path]]) -> Path:
    """A config with one tag per entry: {tag: {'root': path, stack: path, ...}}."""
    document = {
        "catalog": "catalog.sqlite",
        "tags": [
            {
                "name": tag,
                "url": str(mirrors["root"]),
                "stacks": {stack: str(p) for stack, p in mirrors.items() if stack != "root"},
            }
            for tag, mirrors in tags.items()
        ],
    }
    path.write_text(yaml.safe_dump(document))
    return path


def cli(config: Path, *args: str, ok: bool = True) -> Result:
    result = CliRunner().invoke(main, ["--config", str(config), *args])
    if ok:
        assert result.exit_code == 0, result.output
    return result


def fixture_site(tmp_path: Path, *, layout: int) -> tuple[Path, dict[str, int]]:
    """Mirrors for the three fixture pages synced into a catalog; returns (config, sizes)."""
    sizes = {spec.hash: 10_000 + 7919 * i for i, spec in enumerate(sorted(ALL_SPECS, key=lambda s: s.hash))}
    mirrors: dict[str, Path] = {}
    for stack, records in mirrors_for(ALL_SPECS).items():
        mirrors[stack] = tmp_path / "mirrors" / stack
        if layout == 2:
            write_v2_mirror(mirrors[stack], records)
        else:
            write_v3_mirror(mirrors[stack], records, sizes)
    config = write_config(tmp_path / "cachedex.yaml", {TAG: mirrors})
    cli(config, "sync")
    return config, sizes


def files_under(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``folder``: relative path -> (bytes, mtime_ns)."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# -- 1. the key proof: real pages, byte for byte ----------------------------------------


def test_fixture_pages_are_what_the_generator_expects() -> None:
    # Guards the reconstruction itself: parsing the pages back must give their own strings.
    assert [len(page_specs(p)) for p in PACKAGES] == [2, 38, 15]
    for package in PACKAGES:
        page = fixture_page(package)
        assert not page.endswith(b"\n") and page.isascii()
        assert b'"size": "-"' in page


def test_v2_mirrors_reproduce_the_real_pages_byte_for_byte(tmp_path: Path) -> None:
    config, _sizes = fixture_site(tmp_path, layout=2)
    out = tmp_path / "site"
    result = cli(config, "jekyll", str(out))
    assert f"{TAG}: 3 pages (55 specs): 3 written, 0 unchanged, 0 removed" in result.output
    for package in PACKAGES:
        written = (out / "_cache" / TAG / package / "specs.md").read_bytes()
        assert written == fixture_page(package), package


def test_v3_mirrors_reproduce_the_real_pages_with_sizes(tmp_path: Path) -> None:
    config, sizes = fixture_site(tmp_path, layout=3)
    out = tmp_path / "site"
    cli(config, "jekyll", str(out))
    pattern = re.compile(rb'("hash": "([a-z0-9]{32})", "os": "[^"]*", "platform": "[^"]*", "size": )"-"')
    for package in PACKAGES:
        expected, replaced = pattern.subn(lambda m: m[1] + str(sizes[m[2].decode()]).encode(), fixture_page(package))
        assert replaced == len(page_specs(package))
        assert (out / "_cache" / TAG / package / "specs.md").read_bytes() == expected, package


def test_data_files_describe_the_tag(tmp_path: Path) -> None:
    config, _sizes = fixture_site(tmp_path, layout=2)
    out = tmp_path / "site"
    cli(config, "jekyll", str(out))
    stacks = sorted({stack for spec in ALL_SPECS for stack in spec.stacks})
    tags_text = (out / "_data/tags.yaml").read_text()
    assert tags_text.startswith(f"- name: {TAG}\n  stacks:\n  - {stacks[0]}\n")
    assert yaml.safe_load(tags_text) == [{"name": TAG, "stacks": stacks}]
    meta = yaml.safe_load((out / "_data/meta.yaml").read_text())
    entry = meta[TAG]
    assert entry["version"] == "8"
    assert entry["count"] == len(ALL_SPECS)  # the binaries listed (the compilers' records are not)
    assert sum(entry["compilers"].values()) == len(ALL_SPECS) == 55
    assert entry["compilers"]["none"] == 38 and entry["compilers"]["apple-clang@17.0.0"] == 1
    # as cache.spack.io counts them: parameter names whose value is truthy
    truthy = Counter(name for spec in ALL_SPECS for name, value in parameters(spec.variants).items() if value)
    assert entry["parameters"] == dict(truthy)
    assert entry["parameters"]["build_system"] == 55 and "debug" not in entry["parameters"]  # ~debug
    assert entry["compiler_count"] == str(len(entry["compilers"]))
    assert meta["all"] == {
        "version": "all",
        "count": entry["count"],
        "compiler_count": entry["compiler_count"],
        "parameter_count": entry["parameter_count"],
    }


def test_json_pieces_match_json_dumps_for_awkward_strings() -> None:
    awkward = ["plain", "é-ünïcode", 'quo"te', "back\\slash", "tab\tnew\nline", "\x7f\x01", "emoji 😀", ""]
    specs = [
        Listed(
            name="pkg",
            hash=f"{i:032d}",
            version=awkward[i % 8],
            platform=awkward[(i + 1) % 8],
            os=awkward[(i + 2) % 8],
            target=awkward[(i + 3) % 8],
            compiler=awkward[(i + 4) % 8],
            variants=tuple(awkward[: i % 8]),
            size=None if i % 2 else i * 1000,
            stacks=tuple(sorted({"root", awkward[(i + 5) % 8]})),
        )
        for i in range(16)
    ]
    page = render_page("t", 'pk"g', map(as_row, specs))
    fields = front_matter(page)
    details = [
        {
            "compiler": s.compiler,
            "hash": s.hash,
            "os": s.os,
            "platform": s.platform,
            "size": "-" if s.size is None else s.size,
            "stacks": list(s.stacks),
            "target": s.target,
            "variants": list(s.variants),
            "versions": [s.version],
        }
        for s in specs
    ]
    # (json.dumps's surrogate pair for the emoji would make Jekyll's YAML refuse the page)
    emoji = ("\\ud83d\\ude00", "😀")
    assert fields["spec_details"] == json.dumps(details, sort_keys=True).replace(*emoji)
    assert fields["title"] == json.dumps('pk"g')
    assert fields["categories"] == "[package, t]"
    for tag in ("1.10", "true", "2025-07-13", "a b"):  # YAML would not read these back as strings
        categories = front_matter(render_page(tag, "p", map(as_row, specs[:1])))["categories"]
        assert yaml.safe_load(categories) == ["package", tag]
    by_stack = Counter(stack for s in specs for stack in s.stacks)
    meta = {
        "compilers": sorted({s.compiler for s in specs}),
        "num_specs": 16,
        "num_specs_by_stack": dict(by_stack),
        "oss": sorted({s.os for s in specs}),
        "platforms": sorted({s.platform for s in specs}),
        "stacks": sorted(by_stack),
        "targets": sorted({s.target for s in specs}),
        "versions": sorted({s.version for s in specs}),
    }
    assert fields["meta"] == json.dumps(meta, sort_keys=True).replace(*emoji)  # as cache.spack.io writes it


# -- 2. safe regeneration ---------------------------------------------------------------


def small_node(name: str, version: str = "1.0", *, flags: dict[str, list[str]] | None = None) -> dict[str, Any]:
    spec = PageSpec(
        name,
        fake_hash(f"{name}@{version}"),
        version,
        "linux",
        "ubuntu22.04",
        "x86_64_v3",
        "none",
        ("+shared", "build_system=cmake"),
        ("root",),
    )
    return spec_node(spec, flags=flags)


@pytest.fixture
def small_tag(tmp_path: Path) -> tuple[Path, Path]:
    """A tag 'small' (alpha, beta, gamma; delta sets cflags) synced; returns (config, root mirror)."""
    root = tmp_path / "mirrors/small"
    write_v2_mirror(
        root,
        [(small_node(n), True) for n in ("alpha", "beta", "gamma")]
        + [(small_node("delta", flags={"cflags": ["-O3"]}), True)],
    )
    config = write_config(tmp_path / "cachedex.yaml", {"small": {"root": root}})
    cli(config, "sync")
    return config, root


def test_second_run_rewrites_nothing(small_tag: tuple[Path, Path], tmp_path: Path) -> None:
    config, _root = small_tag
    out = tmp_path / "site"
    cli(config, "jekyll", str(out))
    before = files_under(out)
    assert len(before) == 8  # 4 pages + tags.yaml + meta.yaml + the tag's record + the runs' lock
    result = cli(config, "jekyll", str(out))  # the record says the tag is current: no page read
    assert "small: 4 pages (4 specs) are current" in result.output
    assert "_data: unchanged" in result.output
    assert files_under(out) == before  # bytes and mtime_ns
    result = cli(config, "jekyll", str(out), "--full")  # every page compared
    assert "small: 4 pages (4 specs): 0 written, 4 unchanged, 0 removed" in result.output
    assert files_under(out) == before
    with Catalog(tmp_path / "catalog.sqlite", readonly=True) as catalog:
        report = write_jekyll(catalog, out, full=True)
        assert not report.tags[0].current
        assert (report.written, report.unchanged, report.removed, report.data_written) == (0, 4, 0, ())
        assert write_jekyll(catalog, out).tags[0].current
    meta = yaml.safe_load((out / "_data/meta.yaml").read_text())
    # variant names only: compiler flags (delta's cflags) live in the node, not in variants
    assert meta["small"]["parameters"] == {"build_system": 4, "shared": 4}


def test_a_package_that_left_the_tag_loses_its_page_only(small_tag: tuple[Path, Path], tmp_path: Path) -> None:
    config, root = small_tag
    out = tmp_path / "site"
    (out / "_cache").mkdir(parents=True)
    (out / "index.md").write_text("my site\n")
    (out / "_cache/README").write_text("do not touch\n")
    cli(config, "jekyll", str(out))
    (out / "_cache/small/gamma/notes.txt").write_text("a user's file\n")
    write_v2_mirror(root, [(small_node("alpha"), True)])
    cli(config, "sync")
    result = cli(config, "jekyll", str(out))
    assert "small: 1 page (1 spec): 0 written, 1 unchanged, 3 removed" in result.output
    assert sorted(p.name for p in (out / "_cache/small").iterdir()) == [".cachedex-jekyll", "alpha", "gamma"]
    assert not (out / "_cache/small/beta").exists()  # page and empty folder gone
    assert not (out / "_cache/small/gamma/specs.md").exists()  # a user's file keeps the folder
    assert (out / "_cache/small/gamma/notes.txt").read_text() == "a user's file\n"
    assert (out / "index.md").read_text() == "my site\n"
    assert (out / "_cache/README").read_text() == "do not touch\n"


def test_tag_option_writes_only_that_tag(small_tag: tuple[Path, Path], tmp_path: Path) -> None:
    _config, root = small_tag
    config = write_config(tmp_path / "two.yaml", {"small": {"root": root}, "other": {"root": root}})
    cli(config, "sync")
    out = tmp_path / "site"
    cli(config, "jekyll", str(out), "--tag", "other")
    assert sorted(p.name for p in (out / "_cache").iterdir()) == ["other"]
    (out / "_cache/other/alpha/specs.md").write_text("stale, but not selected")
    cli(config, "jekyll", str(out), "--tag", "small")
    assert sorted(p.name for p in (out / "_cache").iterdir()) == ["other", "small"]
    assert (out / "_cache/other/alpha/specs.md").read_text() == "stale, but not selected"
    # _data files keep the entries of the tag not written in this run
    assert [e["name"] for e in yaml.safe_load((out / "_data/tags.yaml").read_text())] == ["other", "small"]
    meta = yaml.safe_load((out / "_data/meta.yaml").read_text())
    assert set(meta) == {"all", "other", "small"} and meta["all"]["count"] == 8
    result = cli(config, "jekyll", str(out), "--tag", "nope", ok=False)
    assert result.exit_code == 1 and "no tag 'nope' in the catalog" in result.output


def test_data_files_keep_other_entries_and_reject_garbage(small_tag: tuple[Path, Path], tmp_path: Path) -> None:
    config, _root = small_tag
    out = tmp_path / "site"
    (out / "_data").mkdir(parents=True)
    # as a clone of cache.spack.io would have them, plus an entry edited by hand
    (out / "_data/tags.yaml").write_text("- name: develop\n  stacks:\n  - e4s\n  - root\n")
    (out / "_data/meta.yaml").write_text(
        "develop:\n  compilers:\n    gcc@=7.3.1: 10\n  count: 100\n  parameters:\n    shared: 3\n"
        "odd:\n  count: lots\n  compilers: [gcc]\n"
        # (a YAML true is no count; a thousand compilers are written "1,002", as the generator does)
        "flagged:\n  count: true\n  compilers:\n" + "".join(f"    c{n}: 1\n" for n in range(1000))
    )
    cli(config, "jekyll", str(out))
    tags = yaml.safe_load((out / "_data/tags.yaml").read_text())
    assert tags == [{"name": "develop", "stacks": ["e4s", "root"]}, {"name": "small", "stacks": ["root"]}]
    meta = yaml.safe_load((out / "_data/meta.yaml").read_text())
    assert meta["develop"]["count"] == 100 and meta["odd"]["count"] == "lots"
    assert meta["all"] == {"version": "all", "count": 104, "compiler_count": "1,002", "parameter_count": "2"}
    (out / "_data/tags.yaml").write_text("develop: {stacks: [root]}\n")
    result = cli(config, "jekyll", str(out), ok=False)
    assert (
        result.output.strip() == f"error: {out.resolve() / '_data/tags.yaml'}: expected a YAML list; fix or delete it"
    )
    (out / "_data/tags.yaml").write_text("- name: develop\n  stacks:\n  - e4s\n  - root\n")
    (out / "_data/meta.yaml").write_text("develop: [unclosed\n")
    shutil.rmtree(out / "_cache/small/alpha")
    result = cli(config, "jekyll", str(out), ok=False)
    assert result.exit_code == 1
    assert result.output.strip() == f"error: {out.resolve() / '_data/meta.yaml'}: not valid YAML; fix or delete it"
    assert not (out / "_cache/small/alpha").exists()  # checked before any page was written
    # Not read through a symlink: its target's entries were published in the new file
    # (and one to /dev/zero was read to the end of memory).
    victim = out.parent / "victim.yaml"
    victim.write_text("- {name: secret, stacks: [s3cret]}\n")
    for target in (victim, Path("/dev/zero")):
        (out / "_data/tags.yaml").unlink()
        (out / "_data/tags.yaml").symlink_to(target)
        result = cli(config, "jekyll", str(out), ok=False)
        assert result.exit_code == 1 and result.output.strip() == (
            f"error: {out.resolve() / '_data/tags.yaml'}: a symlink: cachedex reads and writes its files, not another's"
        )
    assert victim.read_text() == "- {name: secret, stacks: [s3cret]}\n"


@pytest.mark.parametrize("workers", [1, 2])
def test_writes_are_atomic_and_leave_no_temporary_files(
    small_tag: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    config, root = small_tag
    monkeypatch.setattr(jekyll, "PARALLEL_MIN_SPECS", 0)  # share even this small tag
    out = tmp_path / "site"
    cli(config, "jekyll", str(out))
    before = files_under(out)
    write_v2_mirror(root, [(small_node(n, "2.0"), True) for n in ("alpha", "beta", "gamma", "delta")])
    cli(config, "sync")
    real_replace = os.replace
    calls = []

    def failing_replace(src: str, dst: str) -> None:
        calls.append(dst)  # (a forked worker counts its own calls)
        if len(calls) == 3:  # (the first: the tag's record, which names the catalog while pages change)
            raise OSError(28, "No space left on device", dst)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with Catalog(tmp_path / "catalog.sqlite", readonly=True) as catalog, pytest.raises(JekyllError) as caught:
        write_jekyll(catalog, out, workers=workers)
    assert "No space left on device" in str(caught.value) and "specs.md" in str(caught.value)
    after = files_under(out)
    # No temporary file left behind; the tag's record no longer says its pages are current
    # as they began to change (it names the catalog writing them, and no state).
    record = "_cache/small/.cachedex-jekyll"
    assert after.keys() == before.keys() and after[record] != before[record]
    assert read_record(out / record).state == b""  # type: ignore[union-attr]
    replaced = [name for name in after if after[name][0] != before[name][0] and name != record]
    assert 1 <= len(replaced) < 4  # some pages were replaced before the failure, not all
    for name in replaced:  # and each page is whole: the old one or the new one
        assert b'"versions": ["2.0"]' in after[name][0] and after[name][0].endswith(b"]\n---")
    if workers == 1:
        assert replaced == ["_cache/small/alpha/specs.md"] and "beta" in str(caught.value)
    monkeypatch.setattr(os, "replace", real_replace)
    cli(config, "jekyll", str(out))
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_worker_processes_write_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "mirrors/big"
    names = [f"pkg-{i:03d}{'x' * (i % 5)}" for i in range(60)]
    write_v2_mirror(root, [(small_node(n, v), True) for n in names for v in ("1.0", "2.0", "3.1")])
    config = write_config(tmp_path / "cachedex.yaml", {"big": {"root": root}})
    cli(config, "sync")
    monkeypatch.setattr(jekyll, "PARALLEL_MIN_SPECS", 0)
    with Catalog(tmp_path / "catalog.sqlite", readonly=True) as catalog:
        alone = write_jekyll(catalog, tmp_path / "alone", workers=1)
        shared = write_jekyll(catalog, tmp_path / "shared", workers=3)
        again = write_jekyll(catalog, tmp_path / "shared", workers=3)
    assert (alone.tags[0].workers, shared.tags[0].workers) == (1, 3)
    assert (shared.pages, shared.written, shared.tags[0].specs) == (60, 60, 180)
    assert (again.written, again.unchanged) == (0, 60)
    assert {k: v[0] for k, v in files_under(tmp_path / "alone").items()} == {
        k: v[0] for k, v in files_under(tmp_path / "shared").items()
    }


def test_names_that_would_escape_outdir_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "mirrors/t"
    evil = ["../evil", "a/b", "..", ".hidden", "x\\y"]
    write_v2_mirror(root, [(small_node(n), True) for n in ["fine", *evil]])
    config = write_config(tmp_path / "cachedex.yaml", {"t": {"root": root}})
    assert "package name '../evil' must not contain '/'" in cli(config, "sync", ok=False).output  # refused at ingest
    # ... yet a catalog may hold such names (written by an older cachedex): publishers skip them.
    with Catalog(tmp_path / "catalog.sqlite") as catalog:
        write_tag(catalog, "t", [record(f"{i:032d}".replace("0", "a"), n) for i, n in enumerate(["fine", *evil])])
    outside_before = {p for p in tmp_path.rglob("*")}
    out = tmp_path / "deep/site"
    result = cli(config, "jekyll", str(out))
    assert "t: 1 page (1 spec): 1 written" in result.output
    for name in evil:
        assert f"warning: t: skipped package {name!r}" in result.output
    assert sorted(p.name for p in (out / "_cache/t").iterdir()) == [".cachedex-jekyll", "fine"]
    created = {p for p in tmp_path.rglob("*") if not p.name.startswith("catalog.sqlite")} - outside_before
    assert all(p == out.parent or p.is_relative_to(out) for p in created), created


def test_symlinked_folders_are_never_written_through(small_tag: tuple[Path, Path], tmp_path: Path) -> None:
    config, _root = small_tag
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "site"
    (out / "_cache/small").mkdir(parents=True)
    (out / "_cache/small/alpha").symlink_to(elsewhere)
    result = cli(config, "jekyll", str(out))
    assert "skipped package 'alpha'" in result.output and "symlink" in result.output
    assert list(elsewhere.iterdir()) == []
    (out / "_cache/small/alpha").unlink()
    shutil.rmtree(out / "_cache")
    (out / "_cache").symlink_to(elsewhere)
    result = cli(config, "jekyll", str(out), ok=False)
    assert result.exit_code == 1 and "is a symlink" in result.output
    assert list(elsewhere.iterdir()) == []


def test_a_page_that_left_is_removed_and_no_symlink_is_followed_to_remove_one(
    small_tag: tuple[Path, Path], tmp_path: Path
) -> None:
    """A package folder no catalog package names loses its page; a symlinked folder, or
    a page that is a symlink, is someone else's: neither it nor its target is removed."""
    config, _root = small_tag
    out = tmp_path / "site"
    cli(config, "jekyll", str(out))
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "folder").mkdir(parents=True)
    (elsewhere / "folder" / "specs.md").write_text("theirs\n")
    (elsewhere / "specs.md").write_text("theirs too\n")
    tag = out / "_cache/small"
    (tag / "linked").symlink_to(elsewhere / "folder")
    (tag / "page-linked").mkdir()
    (tag / "page-linked/specs.md").symlink_to(elsewhere / "specs.md")
    (tag / "left").mkdir()
    (tag / "left/specs.md").write_text("a page of a package that left\n")
    result = cli(config, "jekyll", "--full", str(out))
    assert "1 removed" in result.output, result.output
    assert not (tag / "left").exists()
    assert (tag / "linked").is_symlink() and (tag / "page-linked/specs.md").is_symlink()
    assert (elsewhere / "folder/specs.md").read_text() == "theirs\n"
    assert (elsewhere / "specs.md").read_text() == "theirs too\n"


def test_a_folder_where_a_page_goes_is_named_in_the_error(small_tag: tuple[Path, Path], tmp_path: Path) -> None:
    """The error named the temporary file the page was written to (gone by then), not
    the page a folder stands in the way of."""
    config, _root = small_tag
    out = tmp_path / "site"
    cli(config, "jekyll", str(out))
    page = out / "_cache/small/alpha/specs.md"
    page.unlink()
    (page / "x").mkdir(parents=True)
    result = cli(config, "jekyll", str(out), "--full", ok=False)
    assert result.exit_code == 1 and result.stderr == f"error: {page}: Is a directory\n", result.output


def test_bad_tag_names_in_the_catalog_are_skipped(tmp_path: Path) -> None:
    # config refuses such names; a catalog written by other means might still hold one
    with Catalog(tmp_path / "catalog.sqlite") as catalog:
        for tag in ("../x", "all"):
            with catalog.writing_tag(tag) as writer:
                writer.replace_mirror(
                    "root",
                    "/nowhere",
                    layout=2,
                    db_version=8,
                    checksum="0",
                    etag=None,
                    last_modified=None,
                    fetched_at=0.0,
                    members={},
                )
    with Catalog(tmp_path / "catalog.sqlite", readonly=True) as catalog:
        report = write_jekyll(catalog, tmp_path / "site")
    assert report.tags == () and len(report.skipped) == 2
    assert not (tmp_path / "x").exists() and not (tmp_path / "site/_cache").exists()
    assert not (tmp_path / "site").exists()  # (nothing to write: no empty OUTDIR made either)
    # The command says none was written, as an error: it said "run 'cachedex sync' first", and exited 0.
    config = tmp_path / "cachedex.yaml"
    config.write_text("catalog: catalog.sqlite\ntags: [{name: all, url: ./m}]\n")
    result = cli(config, "jekyll", str(tmp_path / "site"), "-t", "all", ok=False)
    assert result.exit_code == 1 and "sync" not in result.stdout, result.output
    assert result.stderr.endswith("error: no tag written: each was skipped (the warnings above say why)\n")
    assert "warning: skipped tag 'all': 'all' is the name of the totals entry" in result.stderr


def test_a_catalog_without_tags_makes_no_outdir(tmp_path: Path) -> None:
    """ "No tags to write" left an empty OUTDIR behind."""
    Catalog(tmp_path / "catalog.sqlite").close()
    with Catalog(tmp_path / "catalog.sqlite", readonly=True) as catalog:
        report = write_jekyll(catalog, tmp_path / "site")
    assert report.tags == () and not (tmp_path / "site").exists()


# -- 3. a real Jekyll build -------------------------------------------------------------

LAYOUT = """<pre id="meta">{{ page.meta | jsonify }}</pre>
<pre id="details">{{ page.spec_details | jsonify }}</pre>
<p id="title">{{ page.title }}</p><p id="categories">{{ page.categories | join: "," }}</p>
"""

INDEX = """---
---
<pre id="tags">{{ site.data.tags | jsonify }}</pre>
<pre id="meta">{{ site.data.meta | jsonify }}</pre>
"""


def _between(html: str, element: str) -> Any:
    found = re.search(rf'<pre id="{element}">(.*?)</pre>', html, re.S)
    assert found, html[:500]
    return json.loads(found[1].replace("&quot;", '"'))


def jekyll_build(site: Path, layout: str) -> subprocess.CompletedProcess[str]:
    """A real ``jekyll build`` of the tree ``cachedex jekyll`` wrote into ``site``, with the
    ``cache`` collection and ``layout`` as its ``cache`` layout, into ``site/_site``."""
    jekyll = shutil.which("jekyll")
    if jekyll is None:
        pytest.fail(
            "jekyll is not on PATH: install Debian's package (apt-get install -y jekyll); scripts/test installs it"
        )
    (site / "_config.yml").write_text("collections:\n  cache:\n    output: true\n")
    (site / "_layouts").mkdir(exist_ok=True)
    (site / "_layouts/cache.html").write_text(layout)
    done = subprocess.run(
        [jekyll, "build", "--source", str(site), "--destination", str(site / "_site"), "--disable-disk-cache"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=site.parent,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.mark.jekyll
def test_jekyll_builds_the_generated_site(tmp_path: Path) -> None:
    config, sizes = fixture_site(tmp_path, layout=3)
    site = tmp_path / "site"
    cli(config, "jekyll", str(site))
    (site / "index.html").write_text(INDEX)
    done = jekyll_build(site, LAYOUT)
    pages = sorted((site / "_site").rglob("specs.html"))
    assert len(pages) == 3, done.stdout + done.stderr
    html = (site / "_site/cache" / TAG / "openmpi/specs.html").read_text()
    meta = _between(html, "meta")
    details = _between(html, "details")
    assert meta["num_specs"] == 15 and meta["num_specs_by_stack"]["root"] == 15
    first = min(page_specs("openmpi"), key=lambda s: s.hash)
    assert details[0]["hash"] == first.hash and details[0]["size"] == sizes[first.hash]
    assert "fabrics:=none" in details[0]["variants"]
    assert '<p id="categories">package,' + TAG in html
    index = (site / "_site/index.html").read_text()
    assert _between(index, "tags")[0]["name"] == TAG
    assert _between(index, "meta")[TAG]["count"] == len(ALL_SPECS)

    # unknown sizes come through as "-"
    config2, _ = fixture_site(tmp_path / "v2", layout=2)
    cli(config2, "jekyll", str(site))
    jekyll_build(site, LAYOUT)
    html = (site / "_site/cache" / TAG / "zlib/specs.html").read_text()
    assert {d["size"] for d in _between(html, "details")} == {"-"}
    assert '<p id="title">zlib</p>' in html


def test_names_jekyll_would_read_as_dates_or_numbers_are_quoted() -> None:
    """Jekyll reads YAML with Ruby's Psych, which takes ``2025-7-1`` for a date where
    PyYAML sees a string: a tag so named must stay a string in every file Jekyll reads."""
    from cachedex.publish.jekyll_data import tags_yaml
    from cachedex.publish.jekyll_pages import _yaml_flow_item

    # (and booleans or nulls in any case, which PyYAML knows in three spellings; a name
    # PyYAML takes for a number it cannot build made the run a traceback)
    names = ["2025-7-1", "2025-07-13", "1.10", "true", "develop-2025-07-13", "v1.0.2", "yES", "oN", "nuLL", "0x_"]
    flow = "[" + ", ".join(_yaml_flow_item(name) for name in names) + "]"
    tags = tags_yaml(None, {name: ["root"] for name in names}).decode()
    ruby = "require 'yaml'; require 'json'; print JSON.dump(ARGV.map { |t| YAML.safe_load(t) })"
    done = subprocess.run(["ruby", "-e", ruby, flow, tags], capture_output=True, text=True, timeout=60, check=True)
    read_flow, read_tags = json.loads(done.stdout)  # (a Date would not load at all: safe_load refuses it)
    assert read_flow == names and sorted(entry["name"] for entry in read_tags) == sorted(names)
    assert "develop-2025-07-13" in flow.split(", ")  # what cache.spack.io writes plain stays plain


def test_one_run_at_a_time_and_what_killed_runs_left_goes(small_tag: tuple[Path, Path], tmp_path: Path) -> None:
    """Two runs on one folder raced for its folders ("File exists"): the second is told
    another is writing. Temporary files of killed runs, of any file a run writes, go."""
    from cachedex.publish.files import held_alone

    config, _root = small_tag
    out = tmp_path / "site"
    cli(config, "jekyll", str(out))
    gone = subprocess.Popen(["true"])
    gone.wait()
    planted = [
        out / "_cache/small/alpha" / f".specs.md.{gone.pid}.tmp",
        out / "_cache/small" / f"..cachedex-jekyll.{gone.pid}.tmp",
        out / "_data" / f".tags.yaml.{gone.pid}.tmp",
    ]
    for path in planted:
        path.write_text("partial")
    with Catalog(tmp_path / "catalog.sqlite", readonly=True) as catalog:
        with held_alone(out), pytest.raises(JekyllError, match="another cachedex run is writing this folder"):
            write_jekyll(catalog, out, full=True)
        assert all(path.exists() for path in planted)  # (refused before anything)
        write_jekyll(catalog, out, full=True)
    assert not [path for path in planted if path.exists()]


def test_characters_beyond_the_bmp_reach_jekyll_intact() -> None:
    """json.dumps writes 😀 as a surrogate pair (``\\ud83d\\ude00``), which Jekyll's YAML
    (libyaml) refuses ("invalid Unicode character escape code"): the page lost its front
    matter, and PyYAML read two surrogates. Such a character is written as itself."""
    odd = "1.0-😀"
    spec = Listed(
        name="pkg😀",
        hash="a" * 32,
        version=odd,
        platform="linux",
        os="os𝔘",
        target="t",
        compiler="none",
        variants=(f"v={odd}", "+x", "é"),
        size=None,
        stacks=("root", "s😀"),
    )
    page = render_page("t", "pkg😀", [as_row(spec)])
    text = page.decode("utf-8")
    assert text.startswith("---\n") and text.endswith("\n---")
    expected_detail = {
        "compiler": "none",
        "hash": "a" * 32,
        "os": "os𝔘",
        "platform": "linux",
        "size": "-",
        "stacks": ["root", "s😀"],
        "target": "t",
        "variants": [f"v={odd}", "+x", "é"],
        "versions": [odd],
    }
    for line in text.split("\n")[1:-1]:  # still JSON, as json.dumps(..., ensure_ascii=False) writes these
        key, value = line.split(": ", 1)
        if key == "spec_details":
            assert json.loads(value) == [expected_detail]
    data = yaml.safe_load(text[4:-4])
    assert data["title"] == "pkg😀" and data["spec_details"] == [expected_detail]
    assert data["meta"]["versions"] == [odd] and data["meta"]["num_specs_by_stack"] == {"root": 1, "s😀": 1}
    ruby = "require 'yaml'; require 'json'; print JSON.dump(YAML.safe_load(ARGV[0]))"
    done = subprocess.run(["ruby", "-e", ruby, text[4:-4]], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == data


def test_a_root_of_views_only_lists_every_spec_under_root(mirrors: Path, tmp_path: Path) -> None:
    """A mirror of views only has no root index, yet its root lists every spec of the
    tag (tags.yaml names it): as cache.spack.io's generator has it, every spec's stacks
    hold ``root`` and ``num_specs_by_stack["root"]`` is ``num_specs``."""
    from tests import helpers

    helpers.write_v3_mirror(tmp_path / "m", helpers.fixture_index(mirrors))
    shutil.rmtree(tmp_path / "m/v3/manifests/index")  # no root index at all
    helpers.write_v3_view(tmp_path / "m", "one", helpers.fixture_index(mirrors))
    config = tmp_path / "views.yaml"
    config.write_text(yaml.safe_dump({"catalog": "c.sqlite", "tags": [{"name": "t", "url": "./m", "views": "all"}]}))
    cli(config, "sync")
    out = tmp_path / "site"
    cli(config, "jekyll", str(out))
    pages = sorted((out / "_cache/t").glob("*/specs.md"))
    assert len(pages) == 4
    for page in pages:
        fields = front_matter(page.read_bytes())
        meta, details = json.loads(fields["meta"]), json.loads(fields["spec_details"])
        assert meta["num_specs_by_stack"] == {"one": meta["num_specs"], "root": meta["num_specs"]}, page
        assert meta["stacks"] == ["one", "root"] and all(d["stacks"] == ["one", "root"] for d in details)
    assert yaml.safe_load((out / "_data/tags.yaml").read_text()) == [{"name": "t", "stacks": ["one", "root"]}]
