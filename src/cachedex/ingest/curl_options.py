"""How one request is set on a pooled curl handle: the part of :class:`~.http.HttpClient`'s
engine that turns a :class:`~.http_requests.Request` into libcurl options.

Apart from the engine's loop because it is a cache of its own: a handle keeps every option
of its last request, so what most requests share is set only when it differs (a sync's
tens of thousands of manifest reads then cost two options each), and each origin's proxy
is decided once. Only the engine thread uses it.
"""

from __future__ import annotations

import urllib.request
from urllib.parse import urlsplit

import pycurl

from .http_requests import Request, ascii_url, header_bytes

__all__ = ["HandleOptions"]

#: What a request whose body libcurl does not decode accepts: the bytes as they are.
_IDENTITY = "Accept-Encoding: identity"

#: Where a redirect of an http:// request may lead.
_HTTP_OR_HTTPS = pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS


class HandleOptions:
    """Sets each request's options on a curl handle, remembering what each handle was last set to."""

    def __init__(self) -> None:
        self._proxies = urllib.request.getproxies()
        self._proxy_of: dict[str, tuple[str, str]] = {}  # scheme://host:port -> (its proxy, NOPROXY)
        self._state: dict[pycurl.Curl, tuple[object, ...]] = {}  # a handle's options of its last request

    def forget(self, handle: pycurl.Curl) -> None:
        """Set every option of ``handle``'s next request, whatever it was last set to."""
        self._state.pop(handle, None)

    def prepare(self, handle: pycurl.Curl, request: Request) -> None:
        """Set ``request``, its next attempt, on ``handle``: its URL and where its headers and
        body go each time, the rest only where it differs from the handle's last request."""
        request.attempt += 1
        request._body = body = bytearray()
        request._raw_headers = raw = list[bytes]()
        request._reason = None
        handle.setopt(pycurl.URL, ascii_url(request.url))
        handle.setopt(pycurl.HEADERFUNCTION, raw.append)  # C to C: no Python frame per header line
        watched = request.progress is not None
        # What most requests share is set only when it differs from the handle's last
        # request: a sync's tens of thousands of manifest reads then cost two options each.
        state = (
            tuple(request.headers),
            request.method,
            watched,
            request.raw,
            request.limit,
            self.proxy_for(request.url),
            request.attempt > 1,
            request.url[:6].lower() == "https:",
        )
        if self._state.get(handle) != state:
            self._state[handle] = state
            # A retry on a connection of its own: kept-alive ones a proxy or server closed
            # meanwhile all fail alike (libcurl tries five, then gives up).
            handle.setopt(pycurl.FRESH_CONNECT, 1 if request.attempt > 1 else 0)
            headers = [header_bytes(header) for header in request.headers]
            if not (watched and not request.raw):
                # libcurl decodes nothing here: say so. No Accept-Encoding at all means any
                # coding will do (RFC 9110, 12.5.3), and a CDN may then pick zstd or br,
                # which nothing here decodes. Python's http.client, hence Spack, says the same.
                headers.append(_IDENTITY)
            if headers:
                handle.setopt(pycurl.HTTPHEADER, headers)
            else:
                # An empty list leaves libcurl's last list in place: a registry's token or an
                # index's If-Modified-Since would go with the next request, to any host.
                handle.unsetopt(pycurl.HTTPHEADER)
            handle.setopt(pycurl.NOBODY, 1 if request.method == "HEAD" else 0)
            proxy, bypassed = state[5]
            handle.setopt(pycurl.PROXY, proxy)
            handle.setopt(pycurl.NOPROXY, bypassed)
            # What was asked over TLS is not read in the clear: a redirect from https to
            # http is refused (a mirror's index and its checksums would come unprotected).
            handle.setopt(pycurl.REDIR_PROTOCOLS, pycurl.PROTO_HTTPS if state[7] else _HTTP_OR_HTTPS)
            if watched:
                # A big read, watched: counted as it arrives, decoded (gzip, deflate) first
                # unless its bytes as stored are asked for (libcurl decodes only then).
                handle.setopt(pycurl.ACCEPT_ENCODING, None if request.raw else "")
                handle.setopt(pycurl.MAXFILESIZE_LARGE, 0)
            else:
                # A small read: libcurl stops it at the limit. Not asking for compression
                # keeps what arrives what is counted.
                handle.setopt(pycurl.ACCEPT_ENCODING, None)
                handle.setopt(pycurl.MAXFILESIZE_LARGE, request.limit)
        # The body goes straight into its bytearray (C to C), or through the watcher.
        handle.setopt(pycurl.WRITEFUNCTION, request._write if watched else body.extend)

    def proxy_for(self, url: str) -> tuple[str, str]:
        """(the proxy, the hosts it is not used for) of ``url`` as pip and urllib find
        them (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, upper or lower case); ('', '') for none.
        Decided once per scheme and host. A host NO_PROXY names is said to libcurl by
        name, not by dropping the proxy: a redirect from it to a host that is not named
        went around the proxy (in a network whose only way out it is, "cannot connect")."""
        if not self._proxies:
            return "", ""
        origin = url[: url.find("/", url.find("//") + 2)] if url.count("/") >= 3 else url
        found = self._proxy_of.get(origin)
        if found is None:
            parts = urlsplit(url)
            proxy, bypassed = self._proxies.get(parts.scheme, ""), self._proxies.get("no", "")
            # (host:port, as urllib asks itself: NO_PROXY may name a port, or an IPv6 host in brackets)
            if proxy and urllib.request.proxy_bypass(parts.netloc.rpartition("@")[2]):
                host = parts.hostname or ""
                # ("*" is libcurl's wildcard only alone: "*,host" proxied every other host)
                every = "*" in (entry.strip() for entry in bypassed.split(","))
                bypassed = "*" if every else f"{bypassed},{host}" if bypassed else host
            found = self._proxy_of[origin] = (proxy, bypassed if proxy else "")
        return found
