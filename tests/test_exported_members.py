"""Every module says what it exports: ``__all__`` names only what exists and holds every
public class and function the module defines (as httpx pins its own; ruff's RUF022 keeps
it sorted)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import cachedex

MODULES = sorted(module.name for module in pkgutil.walk_packages(cachedex.__path__, "cachedex."))


def test_every_module_is_checked() -> None:
    assert {"cachedex.catalog.rows", "cachedex.ingest.sync", "cachedex.publish.serve.app", "cachedex.cli"} <= set(
        MODULES
    )


@pytest.mark.parametrize("name", [m for m in MODULES if not m.endswith("__main__")])
def test_all_is_sorted_complete_and_true(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    for member in exported:
        assert hasattr(module, member), f"{name}.__all__ names {member!r}, which it does not have"
    defined = {
        member
        for member, value in vars(module).items()
        if not member.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", None) == name
    }
    missing = defined - set(exported)
    assert not missing, f"{name} defines {sorted(missing)} but does not export them"
