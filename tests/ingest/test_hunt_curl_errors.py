"""How libcurl's errors are told and which are tried again: the wording of each kind of
failure (connect, cut answer, corrupt coding, TLS) and a proxy's refusal of a tunnel."""

from __future__ import annotations

import pycurl
import pytest

from cachedex.ingest.curl_errors import RETRYABLE, describe_failure, refused_tunnel


def test_the_network_failures_are_the_retryable_ones() -> None:
    """Exactly the failures of the network are retried: not a refused TLS handshake's
    CA problem, a bad coding or a file too big (no retry changes those)."""
    assert {
        pycurl.E_COULDNT_CONNECT,
        pycurl.E_COULDNT_RESOLVE_HOST,
        pycurl.E_OPERATION_TIMEDOUT,
        pycurl.E_RECV_ERROR,
        pycurl.E_SEND_ERROR,
        pycurl.E_PARTIAL_FILE,
        pycurl.E_GOT_NOTHING,
        pycurl.E_HTTP2,
        92,
        pycurl.E_SSL_CONNECT_ERROR,
    } == RETRYABLE
    for code in (pycurl.E_SSL_CACERT, pycurl.E_BAD_CONTENT_ENCODING, pycurl.E_FILESIZE_EXCEEDED):
        assert code not in RETRYABLE


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (
            "CONNECT tunnel failed, response 407",
            "the proxy asks for credentials (CONNECT tunnel failed, response 407): write them in the proxy's URL, "
            "https_proxy=http://USER:PASSWORD@HOST:PORT",
        ),
        (
            "CONNECT tunnel failed, response 403",
            "the proxy does not let this through (CONNECT tunnel failed, response 403): "
            "its rules refuse this host or port",
        ),
        ("CONNECT tunnel failed, response 502", None),  # (a proxy's passing trouble: tried again)
        ("Received HTTP code 407 from proxy after CONNECT, response 407", None),  # not a tunnel's refusal
        ("response 403", None),
    ],
)
def test_a_refused_tunnel_is_said_only_for_407_and_403(message: str, said: str | None) -> None:
    """Only a CONNECT refused with 407 or 403 is the proxy's final word."""
    assert refused_tunnel(message) == said


@pytest.mark.parametrize(
    ("code", "message", "said"),
    [
        (pycurl.E_COULDNT_CONNECT, "m", "cannot connect (m)"),
        (pycurl.E_COULDNT_RESOLVE_HOST, "m", "cannot connect (m)"),
        (pycurl.E_COULDNT_RESOLVE_PROXY, "m", "cannot connect (m)"),
        (pycurl.E_RECV_ERROR, "m", "connection closed before the whole answer arrived (m)"),
        (pycurl.E_PARTIAL_FILE, "m", "connection closed before the whole answer arrived (m)"),
        (pycurl.E_GOT_NOTHING, "m", "connection closed before the whole answer arrived (m)"),
        (pycurl.E_SEND_ERROR, "m", "connection closed before the whole answer arrived (m)"),
        (pycurl.E_BAD_CONTENT_ENCODING, "m", "the server's compressed answer is corrupt (m)"),
        (pycurl.E_WRITE_ERROR, "m", "HTTP transfer failed (m)"),
        (pycurl.E_WRITE_ERROR, "", f"HTTP transfer failed (libcurl error {pycurl.E_WRITE_ERROR})"),
        (
            pycurl.E_SSL_CONNECT_ERROR,
            "wrong version number",
            "TLS failed (wrong version number): the server speaks plain HTTP here; write http:// "
            "(oci+http:// for a registry) if that is meant",
        ),
        (  # (the plain-HTTP hint only for a handshake's error, not a CA's)
            pycurl.E_SSL_CACERT,
            "wrong version number",
            "TLS failed (wrong version number); set http.ca_bundle or SSL_CERT_FILE for a private CA",
        ),
        (
            pycurl.E_RECV_ERROR,
            "wrong version number",
            "connection closed before the whole answer arrived (wrong version number)",
        ),
        (
            pycurl.E_SSL_CACERT,
            "SSL: no alternative certificate Subject Name matches target host name 'x'",
            "TLS failed (SSL: no alternative certificate Subject Name matches target host name 'x'): "
            "the server's certificate is for another host name; use the name it names",
        ),
        (
            pycurl.E_SSL_CONNECT_ERROR,
            "certificate does not match target host",
            "TLS failed (certificate does not match target host): the server's certificate is for another "
            "host name; use the name it names",
        ),
        (
            pycurl.E_SSL_CACERT,
            "certificate has Expired",
            "TLS failed (certificate has Expired): the server's certificate is out of date (or this machine's "
            "clock is)",
        ),
        (
            pycurl.E_SSL_CACERT,
            "certificate is not yet valid",
            "TLS failed (certificate is not yet valid): the server's certificate is out of date (or this "
            "machine's clock is)",
        ),
        (
            pycurl.E_SSL_CACERT,
            "unable to get local issuer certificate",
            "TLS failed (unable to get local issuer certificate); set http.ca_bundle or SSL_CERT_FILE for a private CA",
        ),
    ],
)
def test_each_failure_is_worded_for_what_it_means(code: int, message: str, said: str) -> None:
    """Each libcurl error says what it means to the user, with libcurl's own message kept."""
    assert describe_failure(code, message) == said
