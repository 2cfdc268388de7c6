"""A libcurl handle as the HTTP engine (``http.py``) sets it up: the options every request
shares, the CA certificates it trusts, how many transfers the open-file limit leaves room
for, and why a server answered 401. Like ``http.py`` and ``curl_errors.py``, it loads
pycurl and ssl, and only a sync of a remote mirror imports it."""

from __future__ import annotations

import os
import resource
import ssl
from urllib.parse import urlsplit

import pycurl

from .. import __version__
from ..config import HttpOptions
from ..errors import ConfigError
from ..values import short_repr
from .credentials import endpoint
from .http_requests import Request

__all__ = ["ca_bundle", "fitting_concurrency", "new_handle", "unauthorized"]


def new_handle(options: HttpOptions, cainfo: str | None) -> pycurl.Curl:
    """A handle with every option that is the same for all requests."""
    handle = pycurl.Curl()
    handle.setopt(pycurl.NOSIGNAL, 1)
    handle.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
    handle.setopt(pycurl.REDIR_PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
    handle.setopt(pycurl.FOLLOWLOCATION, 1)
    handle.setopt(pycurl.MAXREDIRS, 10)
    handle.setopt(pycurl.USERAGENT, f"cachedex/{__version__}")
    handle.setopt(pycurl.CONNECTTIMEOUT_MS, int(options.timeout * 1000))
    # Idle timeout: fewer than 1 byte a second, on average over 'timeout' seconds.
    handle.setopt(pycurl.LOW_SPEED_LIMIT, 1)
    handle.setopt(pycurl.LOW_SPEED_TIME, max(1, round(options.timeout)))
    handle.setopt(pycurl.TIMEOUT_MS, int(options.deadline * 1000))
    handle.setopt(pycurl.PIPEWAIT, 1)
    if cainfo is not None:
        handle.setopt(pycurl.CAINFO, cainfo)
        # An HTTPS proxy (https_proxy=https://...) is checked against it too: behind a
        # private CA, its certificate failed with the advice to set what was set.
        handle.setopt(pycurl.PROXY_CAINFO, cainfo)
    return handle


def unauthorized(request: Request, handle: pycurl.Curl, url: str) -> str:
    """Why a server answered 401: credentials refused, or none sent (none configured, or a
    redirect to another host, which libcurl does not send them to)."""
    final = str(handle.getinfo(pycurl.EFFECTIVE_URL) or url)
    if not any(header[:14].lower() == "authorization:" for header in request.headers):
        return "it asks for credentials: 'registries' names them"
    if (urlsplit(final).scheme, endpoint(final)) != (urlsplit(url).scheme, endpoint(url)):
        return f"at {final}, a redirect to another host, which is not sent the credentials"
    return "the credentials were refused"


def fitting_concurrency(requested: int) -> int:
    """``requested``, or what the open-file limit leaves room for (descriptors kept for
    the catalog, the files being read and the interpreter)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, (soft - 48) // 3))


def ca_bundle(options: HttpOptions) -> str | None:
    """The CA certificates to trust: ``http.ca_bundle``, else ``$SSL_CERT_FILE``, else
    the system's (what Python's own ssl module uses), else libcurl's default. ConfigError
    if ``http.ca_bundle`` is not a file (passed over, it made a TLS error that said to
    set it)."""
    if options.ca_bundle and not os.path.isfile(options.ca_bundle):
        # (a folder of certificates, as /etc/ssl/certs is, was said to be no file at all)
        why = "a folder, not a file of certificates" if os.path.isdir(options.ca_bundle) else "no such file"
        raise ConfigError([f"'http.ca_bundle': {why}: {short_repr(options.ca_bundle)}"])
    named = os.environ.get("SSL_CERT_FILE")
    if named and not os.path.isfile(named):  # (passed over, a TLS error then said to set it)
        raise ConfigError([f"$SSL_CERT_FILE names no file: {short_repr(named)}"])
    for candidate in (options.ca_bundle, named, ssl.get_default_verify_paths().cafile):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None
