"""``_data/meta.yaml`` and ``_data/tags.yaml`` as cache.spack.io's generator writes them."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachedex.catalog import Catalog
from cachedex.errors import JekyllError
from cachedex.publish import jekyll_data
from cachedex.publish.jekyll import write_jekyll
from tests.helpers import record, write_tag


def _meta(site: Path) -> Any:
    return yaml.safe_load((site / "_data/meta.yaml").read_text())


def test_parameters_count_only_truthy_variants_and_an_empty_quoted_value_is_false(tmp_path: Path) -> None:
    # cache.spack.io counts `if setting`: '' (an empty value, shown quoted) and ~x are false.
    variants = ("x=''", "y=v", "+z", "~w", "f:=a,b")
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "zlib", variants=variants)])
    with catalog:
        write_jekyll(catalog, tmp_path / "site")
    assert _meta(tmp_path / "site")["t"]["parameters"] == {"y": 1, "z": 1, "f": 1}


def test_a_tag_s_thousand_compilers_and_parameters_are_counted_with_a_thousands_separator(tmp_path: Path) -> None:
    # The generator writes f"{n:,}": a tag of 1,000 compilers shows "1,000", not "1000".
    specs = [record(f"{n:032x}", "zlib", compiler=f"gcc@{n}.0", variants=(f"+v{n}",)) for n in range(1000)]
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", specs)
    with catalog:
        write_jekyll(catalog, tmp_path / "site")
    entry = _meta(tmp_path / "site")["t"]
    assert len(entry["compilers"]) == 1000
    assert len(entry["parameters"]) == 1000
    assert entry["compiler_count"] == entry["parameter_count"] == "1,000"


def _small_catalog(tmp_path: Path) -> Catalog:
    catalog = Catalog(tmp_path / "c.sqlite")
    write_tag(catalog, "t", [record("a" * 32, "zlib")])
    return catalog


def test_a_tags_entry_without_a_name_is_dropped_and_named_ones_are_kept(tmp_path: Path) -> None:
    # An entry edited by hand may lack its name: it cannot be kept under one, nor stop the run.
    site = tmp_path / "site"
    (site / "_data").mkdir(parents=True)
    (site / "_data/tags.yaml").write_text("- stacks: [root]\n- name: develop\n  stacks: [e4s, root]\n")
    with _small_catalog(tmp_path) as catalog:
        write_jekyll(catalog, site)
    tags = yaml.safe_load((site / "_data/tags.yaml").read_text())
    assert tags == [{"name": "develop", "stacks": ["e4s", "root"]}, {"name": "t", "stacks": ["root"]}]


def test_a_data_file_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "_data").mkdir(parents=True)
    os.mkfifo(site / "_data/meta.yaml")
    with _small_catalog(tmp_path) as catalog, pytest.raises(JekyllError, match=r"meta\.yaml: not a file$"):
        write_jekyll(catalog, site)


def test_a_data_file_past_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (a smaller limit than the real 64 MiB, so the test writes no big file)
    site = tmp_path / "site"
    (site / "_data").mkdir(parents=True)
    text = "- name: develop\n  stacks: [root]\n"
    (site / "_data/tags.yaml").write_text(text)
    monkeypatch.setattr(jekyll_data, "DATA_FILE_BYTES", len(text) - 1)
    with _small_catalog(tmp_path) as catalog, pytest.raises(JekyllError, match=r"tags\.yaml: larger than"):
        write_jekyll(catalog, site)
    assert (site / "_data/tags.yaml").read_text() == text


def test_a_data_file_nested_too_deep_for_the_parser_is_invalid_yaml(tmp_path: Path) -> None:
    # PyYAML's composer recurses per level: deep nesting raises RecursionError, not YAMLError.
    site = tmp_path / "site"
    (site / "_data").mkdir(parents=True)
    depth = sys.getrecursionlimit()
    (site / "_data/meta.yaml").write_text("[" * depth + "]" * depth + "\n")
    with _small_catalog(tmp_path) as catalog, pytest.raises(JekyllError, match=r"meta\.yaml: not valid YAML"):
        write_jekyll(catalog, site)


def test_the_code_stamp_changes_with_the_page_writer_s_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A tag's record holds this stamp: a change to how pages are written (jekyll_pages.py,
    # say) must make the next run rewrite them, not report them current.
    here = Path(jekyll_data.__file__)
    for module in ("jekyll.py", "jekyll_pages.py", "jekyll_shares.py", "jekyll_data.py"):
        (tmp_path / module).write_bytes((here.with_name(module)).read_bytes())
    monkeypatch.setattr(jekyll_data, "__file__", str(tmp_path / "jekyll_data.py"))
    stamps = []
    for module in ("jekyll.py", "jekyll_pages.py", "jekyll_shares.py", "jekyll_data.py"):
        jekyll_data._code_stamp.cache_clear()
        before = jekyll_data._code_stamp()
        with open(tmp_path / module, "ab") as source:
            source.write(b"# changed\n")
        jekyll_data._code_stamp.cache_clear()
        stamps.append(before != jekyll_data._code_stamp())
    jekyll_data._code_stamp.cache_clear()
    assert stamps == [True, True, True, True]
