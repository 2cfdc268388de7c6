"""The benchmark generators make data cachedex accepts, whatever the stack count."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from tests.helpers import REPO, make_config


def _bench_module(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("stacks", [pytest.param(3, id="COS-9-three-stacks"), 1, 2, 7, 40])
def test_cos9_bench_stacks_hold_each_record_once(tmp_path: Path, stacks: int) -> None:
    facts = _bench_module("ingest").generate(tmp_path / "data", 400, stacks)
    tag = {"name": "bench", "url": str(tmp_path / "data/root")}
    tag["stacks"] = {f"stack-{n:02d}": str(tmp_path / f"data/stack-{n:02d}") for n in range(stacks)}
    config = make_config(tmp_path, [tag])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    assert outcome.stacks == stacks and facts["stacks"] == stacks
