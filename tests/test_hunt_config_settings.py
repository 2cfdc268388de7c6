"""Mutation hunt of ``cachedex.config.settings``: each number's default and bounds as the
config applies them (not only as docs/config.md shows them), and the reference's
escaping of a table cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.config import parse_config, settings
from cachedex.config.settings import Setting, reference_markdown
from cachedex.errors import ConfigError

_TAGS = [{"name": "t", "url": "/srv/m"}]

#: Each number: (section, key, default, lowest taken, highest taken, a step past each bound).
_NUMBERS = [
    ("http", "timeout", 30.0, 0.1, 3600, 0.05),
    ("http", "deadline", 600.0, 1, 86400, 0.5),
    ("http", "retries", 3, 0, 20, 1),
    ("http", "backoff", 0.5, 0, 60, 0.25),
    ("http", "concurrency", 96, 1, 256, 1),
    ("limits", "index_bytes", 1_000_000_000, 1000, 2**40, 1),
    ("limits", "manifest_bytes", 1_000_000, 1000, 2**31, 1),
    ("limits", "spec_file_bytes", 16_000_000, 1000, 2**31, 1),
    ("limits", "discovery_bytes", 64_000_000, 1000, 2**31, 1),
]


def _parse(section: str, key: str, value: object) -> object:
    config = parse_config({"tags": _TAGS, section: {key: value}}, base=Path("/srv"))
    return getattr(getattr(config, section), key)


@pytest.mark.parametrize(("section", "key", "default", "low", "high", "step"), _NUMBERS)
def test_each_number_has_its_default_and_takes_its_bounds(
    section: str, key: str, default: float, low: float, high: float, step: float
) -> None:
    """A setting left out is its default; both bounds are taken (they are inclusive).
    A changed bound or default was caught only as a stale docs/config.md."""
    config = parse_config({"tags": _TAGS}, base=Path("/srv"))
    assert getattr(getattr(config, section), key) == default
    assert _parse(section, key, low) == low
    assert _parse(section, key, high) == high


@pytest.mark.parametrize(("section", "key", "default", "low", "high", "step"), _NUMBERS)
def test_each_number_past_its_bounds_is_refused(
    section: str, key: str, default: float, low: float, high: float, step: float
) -> None:
    """Just below the lowest and just above the highest value, the setting is refused
    with a message naming the key."""
    for value in (low - step, high + step):
        with pytest.raises(ConfigError) as caught:
            _parse(section, key, value)
        (problem,) = caught.value.problems
        assert problem.startswith(f"'{section}.{key}': expected a "), problem


def test_a_default_catalog_is_cachedex_sqlite_beside_the_config() -> None:
    """The catalog left out is ``cachedex.sqlite`` in the config's folder."""
    config = parse_config({"tags": _TAGS}, base=Path("/srv/site"))
    assert config.catalog == Path("/srv/site/cachedex.sqlite")


def test_a_pipe_in_a_setting_s_help_is_escaped_in_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``|`` in a help text or a kind would end the Markdown table's cell (and shift the
    rest of its row): it is written ``\\|``. No setting has one today."""
    added = Setting("x.y", "text | list", "d", "Either a | b.", 1, 2.5)
    monkeypatch.setattr(settings, "SETTINGS", (*settings.SETTINGS, added))
    last = reference_markdown().splitlines()[-1]
    assert last == '| `x.y` | text \\| list | `"d"` | Either a \\| b. From 1 to 2.5. |'
