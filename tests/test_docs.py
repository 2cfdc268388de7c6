"""Docs that must stay true: generated references are current, every command and
option is documented, the package docstring draws today's tree."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import click
import pytest

import cachedex
from cachedex import config
from cachedex.cli import main, reference_markdown
from tests.helpers import REPO

DOCS = REPO / "docs"


@pytest.mark.parametrize(
    ("path", "made"),
    [("config.md", config.reference_markdown), ("cli.md", reference_markdown)],
)
def test_generated_docs_are_current(path: str, made: object) -> None:
    text = (DOCS / path).read_text(encoding="utf-8")
    assert text == made(), f"docs/{path} is stale: run 'bash scripts/gen-docs'"  # type: ignore[operator]


def test_every_setting_is_in_the_reference() -> None:
    text = (DOCS / "config.md").read_text(encoding="utf-8")
    for setting in config.SETTINGS:
        assert f"`{setting.key}`" in text


def test_every_command_and_option_is_documented() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    reference = (DOCS / "cli.md").read_text(encoding="utf-8")
    for name, command in main.commands.items():
        assert re.search(rf"cachedex {name}\b", readme), f"README.md does not show 'cachedex {name}'"
        assert f"## `cachedex {name}`" in reference
        assert command.help, f"'cachedex {name}' has no help"
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"'cachedex {name} {param.opts[0]}' has no help"
                assert any(opt in reference for opt in param.opts)


def test_the_package_docstring_draws_every_subpackage_and_shared_module() -> None:
    doc = cachedex.__doc__ or ""
    for module in pkgutil.iter_modules(cachedex.__path__):
        if module.name.startswith("_"):
            continue
        shown = f"{module.name}/" if module.ispkg else f"{module.name}.py"
        assert shown in doc, f"the package docstring does not mention {shown}"


def test_every_module_has_a_docstring() -> None:
    for module in pkgutil.walk_packages(cachedex.__path__, "cachedex."):
        loaded = importlib.import_module(module.name)
        assert (loaded.__doc__ or "").strip(), f"{module.name} has no docstring"


def test_python_dash_m_runs_the_cli() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "cachedex", "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and cachedex.__version__ in done.stdout


def test_changelog_and_contributing_exist() -> None:
    assert "## [Unreleased]" in (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "scripts/check" in (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert Path(DOCS / "architecture.md").is_file()


#: The reliability review's findings (cachedex 0.1.0): kinds and how many of each.
FINDINGS = {"SEC": 6, "DATA": 5, "CRASH": 15, "HANG": 5, "MSG": 9, "COS": 10}


def test_reliability_doc_names_a_real_test_for_every_promise_and_finding() -> None:
    text = (DOCS / "reliability.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)", text))
    assert len(named) > 60
    for path, name in sorted(named):
        source = (REPO / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.M), f"docs/reliability.md names {path}::{name}, which is gone"
    rows = dict(re.findall(r"^\| ((?:[A-Z]+)-\d+) \| (.*) \|$", text, re.M))
    expected = {f"{kind}-{n}" for kind, count in FINDINGS.items() for n in range(1, count + 1)}
    assert set(rows) == expected
    for finding, tests in rows.items():
        assert "::test_" in tests, f"{finding} has no test"
        # The test is named after the finding, or a case of it carries its id.
        for path, name in re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)", tests):
            source = (REPO / path).read_text(encoding="utf-8")
            tag = finding.lower().replace("-", "")
            assert name.startswith(f"test_{tag}_") or f'id="{finding}' in source, (finding, name)


def test_the_catalog_doc_names_the_schema_version() -> None:
    """It said 11 for a release of schema 12."""
    from cachedex.catalog.schema import SCHEMA_VERSION

    assert f"`PRAGMA user_version` (currently {SCHEMA_VERSION})" in (DOCS / "catalog.md").read_text()
