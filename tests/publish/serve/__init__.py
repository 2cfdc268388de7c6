"""cachedex serve under hostile or unusual conditions: what clients can make it hold and
do, replaced and damaged catalog files, the uvicorn limits of the ``serve`` command."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from cachedex.catalog import Catalog
from tests.helpers import record, write_tag
from tests.servers import cachedex_serving, free_port


def get(app: Any, path: str, method: str = "GET", **headers: str) -> httpx.Response:
    """One request to an ASGI app, in process."""

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return await client.request(method, path, headers=headers)

    return asyncio.run(go())


def _corrupt_specs(path: Path) -> None:
    """Overwrite every page of the specs table and of its indexes with 0xff: the file
    opens (header, schema, tags and syncs are intact), and any read of a spec fails."""
    db = sqlite3.connect(path)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'specs'")]
    pages = sorted(
        {row[0] for name in names for row in db.execute("SELECT pageno FROM dbstat WHERE name = ?", (name,))}
    )
    schema = {row[0] for row in db.execute("SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'")}
    db.close()
    assert pages and 1 in schema and not schema & set(pages)
    with path.open("r+b") as file:
        for page in pages:
            file.seek((page - 1) * page_size)
            file.write(b"\xff" * page_size)


def corrupt_catalog(path: Path) -> Path:
    """A catalog of 400 specs in tag t, their pages then damaged."""
    with Catalog(path) as catalog:
        write_tag(catalog, "t", [record(f"{n:032d}", f"pkg-{n:05d}") for n in range(400)])
    _corrupt_specs(path)
    return path


@contextmanager
def crowded(config: Path, said: list[str] | None = None) -> Iterator[str]:
    """``cachedex serve`` that takes two connections at once (an open-file limit of 66:
    ``concurrency_limit``), holding two idle ones: its URL, once a request gets 503.
    What it printed is appended to ``said`` once it is stopped."""
    port = free_port()
    limited = ["bash", "-c", 'ulimit -Sn 66 && exec "$@"', "serve"]
    with ExitStack() as held:
        held.enter_context(cachedex_serving(config, port, wrap=limited, said=said))
        held.enter_context(socket.create_connection(("127.0.0.1", port)))
        held.enter_context(socket.create_connection(("127.0.0.1", port)))
        # Each holds a place once the server has taken it: a loaded machine may take a while.
        deadline = time.monotonic() + 20
        while httpx.get(f"http://127.0.0.1:{port}/api/tags", timeout=5).status_code != 503:
            assert time.monotonic() < deadline, "the two idle connections never filled the server"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
