"""The benchmark generators make data cachedex accepts, whatever the stack count."""

from __future__ import annotations

import importlib.util
import json
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


def test_the_serve_bench_starts_the_server_cachedex_serve_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """serve.py named an app factory that had moved: its server never started. Its
    workers time each request when asked (serve_timing.py)."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    _bench_module("ingest").generate(tmp_path / "data", 400, 1)
    config = make_config(tmp_path, [{"name": "bench", "url": str(tmp_path / "data/root")}])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    bench = _bench_module("serve")
    times = tmp_path / "times"
    times.mkdir()
    server, base = bench.start_server(config.catalog, 1, times)
    try:
        started = bench.time.time()
        answer = bench.httpx.get(base + "/api/tags", timeout=10).json()
        assert [tag["name"] for tag in answer] == ["bench"], answer
        # The reuse route is the CLI's app's own: the one `cachedex serve` runs.
        assert bench.httpx.post(base + "/api/reuse", content=b"", timeout=10).status_code == 400
        for _ in range(3):  # (a worker writes its times at least every half second, with a request)
            bench.time.sleep(0.6)
            bench.httpx.get(base + "/api/tags", timeout=10)
        taken = bench.server_times(times, started, bench.time.time())
        assert len(taken) >= 2 and all(0 < millis < 10_000 for millis in taken), taken
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_search_times_answers_the_serve_bench_queries_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """search_times.py times serve.py's (a'') queries through the app `cachedex serve`
    runs, and its queueing model sums the service times a worker's connections wait for."""
    _bench_module("ingest").generate(tmp_path / "data", 400, 2)
    tag = {"name": "bench", "url": str(tmp_path / "data/root")}
    tag["stacks"] = {f"stack-{n:02d}": str(tmp_path / f"data/stack-{n:02d}") for n in range(2)}
    config = make_config(tmp_path, [tag])
    with Catalog(config.catalog) as catalog:
        (outcome,) = sync(config, catalog)
    assert outcome.ok, outcome.error
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    bench = _bench_module("search_times")
    queries = bench.bench_queries(config.catalog, "bench", 40)
    urls = bench.search_paths("bench", queries.nameless)
    assert len(urls) > 20 and all(url.startswith("/api/search?q=") for url in urls)
    timed = bench.asyncio.run(bench.measure(config.catalog, urls, 0))
    assert [url for _, url in timed] == urls and all(seconds > 0 for seconds, _ in timed)
    # Two workers, two connections each: worker 0 answers 1, 3, 5, 7; worker 1 2, 4, 6, 8.
    p50, p99 = bench.queue_model([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], 2, 2)
    assert (p50, p99) == (9.0, 14.0)  # windows 1+3, 3+5, 5+7 and 2+4, 4+6, 6+8


def test_the_decode_floor_bench_decodes_every_record_each_way(mirrors: Path) -> None:
    """Its decodes are timed against each other: each must read the whole index."""
    from tests.helpers import fixture_index

    index = fixture_index(mirrors)
    data = json.dumps(index).encode()
    sys.path.insert(0, str(REPO / "bench"))  # (it imports ingest.py, beside it)
    try:
        counts = _bench_module("decode_floor").records(data)
    finally:
        sys.path.remove(str(REPO / "bench"))
    assert set(counts.values()) == {len(index["database"]["installs"])}  # type: ignore[index]
    assert list(counts) == ["(a) typed", "(s) the sync's", "(b) flags, specs raw", "(c) records raw"]
