"""``cachedex jekyll`` and a hostile mirror: cache.spack.io's layout (``_layouts/cache.html``)
prints ``{{ page.title }}`` and each spec's hash, versions, compiler, variants and stacks
with Liquid, which escapes nothing. A package whose name Spack's grammar cannot write has
no page; a spec holding such a value is left out of its page and named; the others are
written as a mirror without the hostile records has them, byte for byte.

The mirror is test_export_hostile.py's (test_hostile_pages.py's records with hostile
names, and one record per field that only that field spoils)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.cli.publish_reports import SHOWN_WARNINGS
from cachedex.ingest.sync import sync
from cachedex.publish import jekyll
from cachedex.publish.jekyll import write_jekyll
from cachedex.publish.jekyll_shares import NAMED_REFUSALS
from tests.helpers import make_config, record, write_tag, write_v3_mirror
from tests.publish.test_export_hostile import ONE_FIELD, _mirror_index
from tests.publish.test_hostile_pages import EVIL, IMG, JS, LATER, NAMES, OVERRIDE, SECOND, SVG, TEMPLATE, THIRD
from tests.publish.test_jekyll import jekyll_build

#: The records test_hostile_pages.py adds, each named by a payload: no page.
HOSTILE_PACKAGES = {EVIL: IMG, SECOND: JS, THIRD: SVG, LATER: TEMPLATE}
#: The specs left out of their page, by the field refused. A page shows no dependency:
#: a spec spoiled only there ("dependency type", "virtual") is written.
REFUSED = {dag_hash: field for dag_hash, (field, _) in ONE_FIELD.items() if field not in {"dependency type", "virtual"}}


def _index(*, hostile: bool) -> dict[str, Any]:
    """test_export_hostile.py's mirror, or (not ``hostile``) the same without the records
    a page must not show."""
    index = _mirror_index()
    if not hostile:
        installs = index["database"]["installs"]
        for dag_hash in (*HOSTILE_PACKAGES, *REFUSED):
            del installs[dag_hash]
    return index


def _synced(base: Path, index: dict[str, Any]) -> Path:
    """The config of one tag ``t`` whose root and stack ``s`` are a mirror of ``index``, synced."""
    write_v3_mirror(base / "m", index)
    tags: list[dict[str, Any]] = [{"name": "t", "url": "./m", "stacks": {"s": "./m"}}]
    config = make_config(base, tags)
    with Catalog(config.catalog) as catalog:
        assert [outcome.error for outcome in sync(config, catalog)] == [None]
    (base / "cachedex.json").write_text(json.dumps({"catalog": str(config.catalog), "tags": tags}))
    return base / "cachedex.json"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert set(HOSTILE_PACKAGES.values()) == set(NAMES)
    return _synced(tmp_path_factory.mktemp("jekyll-hostile"), _index(hostile=True))


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _synced(tmp_path_factory.mktemp("jekyll-clean"), _index(hostile=False))


def _jekyll(config: Path, outdir: Path) -> Result:
    result = CliRunner().invoke(main, ["--config", str(config), "jekyll", str(outdir)])
    assert result.exit_code == 0, result.output
    return result


def _strings(value: Any) -> list[str]:
    """Every string of a parsed YAML value, keys included."""
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (*_strings(key), *_strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


def _markup(outdir: Path) -> list[str]:
    """The strings of the pages' front matter and the _data files that hold markup
    characters or anything not ASCII, where they are."""
    found = []
    for path in sorted(outdir.glob("_cache/*/*/specs.md")) + sorted(outdir.glob("_data/*.yaml")):
        text = path.read_text("utf-8")
        document = yaml.safe_load(text[4:-4] if path.name == "specs.md" else text)
        found += [f"{path}: {s!r}" for s in _strings(document) if set(s) & set("<>&") or not s.isascii()]
    return found


def test_no_value_spack_cannot_write_reaches_a_page(hostile: Path, clean: Path, tmp_path: Path) -> None:
    result = _jekyll(hostile, tmp_path / "site")
    assert _markup(tmp_path / "site") == []
    pages = {p.parent.name for p in (tmp_path / "site/_cache/t").glob("*/specs.md")}
    assert pages == {"libdwarf", "libelf", "compiler-wrapper", "gcc-runtime"}
    # Each left out is named: the packages, and each spec with the value refused.
    warnings = result.stderr.splitlines()
    for name in NAMES:
        assert f"warning: t: skipped package {name!r}: a name Spack's grammar cannot write" in warnings
    refused = [line for line in warnings if line.startswith("warning: t: skipped spec '")]
    assert len(refused) == len(REFUSED)
    for dag_hash, field in REFUSED.items():
        (line,) = [line for line in refused if f"'{dag_hash}'" in line]
        # (not "skipped package 'libdwarf': spec ...", read as the whole package skipped)
        assert (
            line.startswith(f"warning: t: skipped spec '{dag_hash}' ({field} ") and " of package 'libdwarf': " in line
        )
    assert "(version '1.0<i>')" in result.stderr and "(variant \"label='\\u202egnp.exe'\")" in result.stderr
    assert OVERRIDE not in result.stderr  # (shown as its escape)
    assert "t: 4 pages (" in result.stdout and "warning" not in result.stdout
    # The rest as a mirror without those records has them, byte for byte.
    _jekyll(clean, tmp_path / "reference")
    for package in pages:
        written = (tmp_path / "site/_cache/t" / package / "specs.md").read_bytes()
        assert written == (tmp_path / "reference/_cache/t" / package / "specs.md").read_bytes(), package
    # meta.yaml counts the binaries the pages list, not those left out
    meta, reference = (yaml.safe_load((tmp_path / d / "_data/meta.yaml").read_text()) for d in ("site", "reference"))
    assert meta["t"]["count"] == reference["t"]["count"] and meta == reference
    libdwarf = (tmp_path / "site/_cache/t/libdwarf/specs.md").read_text()
    assert "t" * 32 in libdwarf and "u" * 32 in libdwarf  # (spoiled in their dependencies only, not shown)
    # The report says the same as the command, and so does a run that finds the tag current.
    with Catalog(Path(json.loads(hostile.read_text())["catalog"]), readonly=True) as catalog:
        (tag,) = write_jekyll(catalog, tmp_path / "api", workers=1).tags
        again = write_jekyll(catalog, tmp_path / "api").tags[0]
    assert again.current and again.skipped == tag.skipped and len(tag.skipped) == len(NAMES) + len(REFUSED)


def test_a_catalog_s_own_hostile_names_are_left_out(tmp_path: Path) -> None:
    """Tags and stacks come from the config, which refuses such names; a catalog written
    otherwise is checked all the same: a stack that is no label spoils its specs and is
    not in tags.yaml, a tag that is none is skipped; a spec whose hash is no DAG hash is
    left out (its page prints it)."""
    catalog = Catalog(tmp_path / "c.sqlite")
    # (a package's hashes are checked at once: those of cmake are all 32 characters long)
    odd = {"b" * 31 + "<": "cmake", "B" * 32: "cmake", "d" * 31: "ninja", "d" * 33: "ninja"}
    listed = [record("a" * 32, "zlib"), record("b" * 32, "cmake"), *(record(h, n) for h, n in odd.items())]
    write_tag(catalog, "t", listed)
    write_tag(catalog, "t", [], members={"a" * 32: True}, stack="<b>s", checksum="s")
    write_tag(catalog, "t", [], members={h: True for h in ["b" * 32, *odd]}, stack="ok", checksum="o")
    write_tag(catalog, "<i>t", [record("c" * 32, "zlib", version="2.0")])
    with catalog:
        report = write_jekyll(catalog, tmp_path / "site")
    (tag,) = report.tags
    assert tag.tag == "t" and tag.pages == tag.specs == 1
    assert tag.skipped == tuple(
        f"spec {h!r} ({field} {value!r}) of package {package!r}: a value Spack's grammar cannot write"
        for package, h, field, value in sorted(  # (by package, then hash)
            [(name, h, "hash", h) for h, name in odd.items()] + [("zlib", "a" * 32, "stack", "<b>s")]
        )
    )
    assert [s.split(":")[0] for s in report.skipped] == [
        "tag '<i>t'",
        "stack '<b>s' of tag 't' (not in _data/tags.yaml)",
    ]
    assert [p.parent.name for p in (tmp_path / "site/_cache/t").glob("*/specs.md")] == ["cmake"]
    assert not (tmp_path / "site/_cache/<i>t").exists()
    assert yaml.safe_load((tmp_path / "site/_data/tags.yaml").read_text()) == [{"name": "t", "stacks": ["ok", "root"]}]
    assert _markup(tmp_path / "site") == []


def test_thousands_refused_are_counted_not_each_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mirror of thousands of hostile specs left a report (and the tag's record) of
    thousands of lines: the first are named, the others counted, the same ones however
    many processes share the tag."""
    catalog = Catalog(tmp_path / "catalog.sqlite")
    # (a package first by name whose hashes sort last: the report named the first by hash
    # of each share's first, so which were named depended on the workers)
    bad = [record(f"{i:032d}".replace("0", "x"), "aaa", version=f"1.{i}<i>") for i in range(NAMED_REFUSALS)]
    bad += [record(f"{i:032d}", "zlib", version=f"1.{i}<i>") for i in range(30)]
    names = [record(f"{i:032d}".replace("0", "f"), f"p{i}<b>") for i in range(1, SHOWN_WARNINGS + 6)]
    write_tag(catalog, "t", [*bad, *names, record("e" * 32, "zlib")])
    catalog.close()
    config = tmp_path / "cachedex.json"
    config.write_text(json.dumps({"catalog": str(tmp_path / "catalog.sqlite"), "tags": [{"name": "t", "url": "/m"}]}))
    with Catalog(tmp_path / "catalog.sqlite", readonly=True) as opened:
        (tag,) = write_jekyll(opened, tmp_path / "api").tags
    assert tag.pages == tag.specs == 1
    assert len(tag.skipped) == len(names) + NAMED_REFUSALS + 1
    assert tag.skipped[-1] == "30 more specs holding a value Spack's grammar cannot write"
    named = [line for line in tag.skipped if line.startswith("spec '")]
    assert [re.findall("spec '([0-9x]+)'", line)[0] for line in named] == sorted(r.hash for r in bad[:NAMED_REFUSALS])
    monkeypatch.setattr(jekyll, "PARALLEL_MIN_SPECS", 0)
    with Catalog(tmp_path / "catalog.sqlite", readonly=True) as opened:
        assert write_jekyll(opened, tmp_path / "shared", workers=3).tags[0].skipped == tag.skipped
    result = _jekyll(config, tmp_path / "site")
    warnings = result.stderr.splitlines()
    assert len(warnings) == SHOWN_WARNINGS + 1
    assert warnings[-1] == f"warning: t: and {len(tag.skipped) - SHOWN_WARNINGS:,} more skipped"


#: cache.spack.io's layout, as far as it prints a page's values (``_layouts/cache.html``).
LAYOUT = """<h1>{{ page.title }}</h1>
<a href="https://packages.spack.io/package.html?name={{ page.title }}">{{ page.title }}</a>
{% for spec in page.spec_details %}<tr><td>{{ spec.hash }}</td>
<td>{% for v in spec.versions %}<button>{{ v }}</button>{% endfor %}</td>
<td><button>{{ spec.compiler }}</button></td><td><button>{{ spec.architecture }}</button></td>
<td>{% for v in spec.variants %}<button>{{ v }}</button>{% endfor %}</td>
<td>{% for s in spec.stacks %}<button>{{ s }}</button>{% endfor %}</td>
<td>{{ spec.size }}</td><td><a href="{{ spec.tarball }}"></a></td></tr>{% endfor %}
"""


@pytest.mark.jekyll
def test_a_jekyll_build_with_cache_spack_io_s_layout_holds_no_payload(hostile: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    _jekyll(hostile, site)
    jekyll_build(site, LAYOUT)
    built = {p.relative_to(site / "_site"): p.read_text() for p in (site / "_site").rglob("*.html")}
    assert len(built) == 4 and "<h1>libdwarf</h1>" in built[Path("cache/t/libdwarf/specs.html")]
    # The layout's own markup only: no element, attribute or entity of a mirror's.
    for path, html in built.items():
        assert set(re.findall(r"<(/?[a-z0-9]+)", html)) <= {
            "h1",
            "/h1",
            "a",
            "/a",
            "tr",
            "/tr",
            "td",
            "/td",
            "button",
            "/button",
        }, path
        assert "onerror" not in html and "onload" not in html and "&" not in html and html.isascii(), path


def test_as_many_skipped_as_are_shown_are_each_said_and_one_current_page_is_current(tmp_path: Path) -> None:
    """SHOWN_WARNINGS skipped names are printed with no "and 0 more skipped"; a tag of
    one page that is current "is" so."""
    catalog = Catalog(tmp_path / "catalog.sqlite")
    names = [record(f"{i:032d}".replace("0", "f"), f"p{i}<b>") for i in range(1, SHOWN_WARNINGS + 1)]
    write_tag(catalog, "t", [*names, record("e" * 32, "zlib")])
    catalog.close()
    config = tmp_path / "cachedex.json"
    config.write_text(json.dumps({"catalog": str(tmp_path / "catalog.sqlite"), "tags": [{"name": "t", "url": "/m"}]}))
    first = _jekyll(config, tmp_path / "site")
    assert len(first.stderr.splitlines()) == SHOWN_WARNINGS and "more skipped" not in first.stderr
    again = _jekyll(config, tmp_path / "site")
    assert "t: 1 page (1 spec) is current: written from this state" in again.stdout, again.stdout
