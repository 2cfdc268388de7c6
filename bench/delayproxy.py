"""A reverse proxy that holds every request back by a fixed delay: a slow network, on 127.0.0.1.

    python bench/delayproxy.py --port 8081 --upstream 127.0.0.1:8080 --delay 0.03

Each client connection gets its own keep-alive connection upstream; each request waits
``delay`` seconds, then goes upstream, and the answer comes back as it is (the upstream,
nginx serving static files, always sends a Content-Length). Enough for GET and HEAD of
static files, which is all a sync asks; not a general proxy.
"""

from __future__ import annotations

import argparse
import asyncio


async def _read_head(reader: asyncio.StreamReader) -> bytes | None:
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


async def _serve(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    upstream: tuple[str, int],
    delay: float,
) -> None:
    up_reader, up_writer = await asyncio.open_connection(*upstream)
    try:
        while True:
            request = await _read_head(client_reader)
            if request is None:
                return
            await asyncio.sleep(delay)
            up_writer.write(request)
            head = await _read_head(up_reader)
            if head is None:
                return
            method = request.split(b" ", 1)[0]
            status = head.split(b" ", 2)[1]
            length = 0 if method == b"HEAD" or status in (b"304", b"204") else _content_length(head)
            body = await up_reader.readexactly(length) if length else b""
            client_writer.write(head + body)
            await client_writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        up_writer.close()
        client_writer.close()


async def _main(port: int, upstream: tuple[str, int], delay: float) -> None:
    server = await asyncio.start_server(
        lambda r, w: _serve(r, w, upstream, delay), "127.0.0.1", port, backlog=1024, reuse_address=True
    )
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="host:port")
    parser.add_argument("--delay", type=float, default=0.03)
    args = parser.parse_args()
    host, _, port = args.upstream.rpartition(":")
    try:
        import uvloop  # a faster event loop, when installed (uvicorn[standard] brings it)

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(_main(args.port, (host, int(port)), args.delay))


if __name__ == "__main__":
    main()
