"""libcurl's errors as cachedex tells them: which are worth another attempt, and what
each means to the user. Apart from :mod:`.http_requests` so that a request and a
response (what sources, OCI and verify build and read) load without pycurl."""

from __future__ import annotations

import pycurl

__all__ = ["RETRYABLE", "describe_failure", "refused_tunnel"]

#: libcurl errors worth another attempt: the network, not the request, failed.
RETRYABLE = {
    pycurl.E_COULDNT_CONNECT,
    pycurl.E_COULDNT_RESOLVE_HOST,
    pycurl.E_OPERATION_TIMEDOUT,
    pycurl.E_RECV_ERROR,
    pycurl.E_SEND_ERROR,
    pycurl.E_PARTIAL_FILE,
    pycurl.E_GOT_NOTHING,
    pycurl.E_HTTP2,
    92,  # CURLE_HTTP2_STREAM
    pycurl.E_SSL_CONNECT_ERROR,
}


def refused_tunnel(message: str) -> str | None:
    """What a proxy's refusal to open a tunnel (CONNECT, for an https:// mirror) means,
    if ``message`` is one that no retry changes (407: credentials; 403: not allowed)."""
    if "CONNECT tunnel failed" not in message:
        return None
    if "response 407" in message:
        return (
            f"the proxy asks for credentials ({message}): write them in the proxy's URL, "
            "https_proxy=http://USER:PASSWORD@HOST:PORT"
        )
    if "response 403" in message:
        return f"the proxy does not let this through ({message}): its rules refuse this host or port"
    return None


def describe_failure(code: int, message: str) -> str:
    if code in (pycurl.E_COULDNT_CONNECT, pycurl.E_COULDNT_RESOLVE_HOST, pycurl.E_COULDNT_RESOLVE_PROXY):
        return f"cannot connect ({message})"
    if code in (pycurl.E_RECV_ERROR, pycurl.E_PARTIAL_FILE, pycurl.E_GOT_NOTHING, pycurl.E_SEND_ERROR):
        return f"connection closed before the whole answer arrived ({message})"
    if code == pycurl.E_BAD_CONTENT_ENCODING:
        return f"the server's compressed answer is corrupt ({message})"
    if code == pycurl.E_SSL_CONNECT_ERROR and "wrong version number" in message:
        return (
            f"TLS failed ({message}): the server speaks plain HTTP here; write http:// (oci+http:// for a "
            "registry) if that is meant"
        )
    if code in (pycurl.E_SSL_CACERT, pycurl.E_SSL_CONNECT_ERROR):
        # (the CA's hint only where a CA is the problem: it was given for a certificate of
        # another host, or one expired, which no CA bundle changes)
        lowered = message.lower()
        if "subject name" in lowered or "does not match target host" in lowered:
            return f"TLS failed ({message}): the server's certificate is for another host name; use the name it names"
        if "expired" in lowered or "not yet valid" in lowered:
            return f"TLS failed ({message}): the server's certificate is out of date (or this machine's clock is)"
        return f"TLS failed ({message}); set http.ca_bundle or SSL_CERT_FILE for a private CA"
    return f"HTTP transfer failed ({message or f'libcurl error {code}'})"
