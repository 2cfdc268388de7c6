"""Requests to an OCI registry with the authorization it asks for: the distribution spec's
bearer-token flow.

A registry that wants a token answers 401 with ``WWW-Authenticate: Bearer realm="…",
service="…",scope="…"``. The client then asks the realm (the token service) for a token,
``GET <realm>?service=…&scope=…&client_id=cachedex`` (one ``scope`` parameter per
space-separated scope of the challenge, as the distribution spec's ``token.md`` says;
a challenge without a scope, or with an empty one, as Sonatype Nexus and Oracle's OCIR
send, gets the repository's pull scope, as Docker's client asks; one without a service
names none),
anonymously or with Basic credentials, reads ``token`` (or ``access_token``) and
``expires_in`` (60 s when absent) from its JSON answer, and repeats the request with
``Authorization: Bearer <token>``. A second 401 to the same request is an error. A
registry configured with ``token_env`` gets that token as a bearer directly. A registry
that asks for Basic credentials instead (AWS ECR, a distribution registry with htpasswd)
is sent the configured user name and password, as Spack's ``OCIAuthHandler`` does.

A token may end during a long run of requests (thousands of spec manifests outlive a
token that lives minutes): a 401 to a token that was taken before brings a new one, as often as
that happens; a 401 to a new token that nothing took yet is an error.

Tokens are cached per HTTP client, registry and scope, so the stacks of one sync share
them. Credentials are read from the environment when they are needed, by the names the
config gives; no secret ever appears in a message, an exception or a ``repr``. A realm
that is not https is refused, unless the registry itself is plain http (``oci+http://``).
libcurl keeps a custom Authorization header to the host and port it was set for, so a
registry's redirect of a blob to a CDN does not carry the token there.
"""

from __future__ import annotations

import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple, TypeVar
from urllib.parse import urlencode, urlsplit

import msgspec

from ..config.tags import RegistryAuth
from ..errors import CachedexError, SourceError
from ..values import short_repr
from .credentials import TOKEN, basic, from_env
from .http_requests import ProgressCallback, Request, Response

if TYPE_CHECKING:
    from .http import HttpClient

__all__ = ["Challenge", "RegistrySession", "parse_challenge"]

K = TypeVar("K")
V = TypeVar("V")

#: The most bytes a token service's answer may take.
TOKEN_BYTES = 1_000_000
#: How long a token lives when its service does not say (the distribution spec's default).
DEFAULT_EXPIRES_IN = 60
#: A token this close to its end is replaced before use (seconds).
_MARGIN = 5.0
_BEARER = re.compile(r"(?:^|,)\s*Bearer\s+", re.IGNORECASE)
_PARAM = re.compile(r'\s*([A-Za-z][A-Za-z0-9_.-]*)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,"]*)\s*(?:,|$)')
_ESCAPE = re.compile(r"\\(.)")
_BASIC = re.compile(r"(?:^|,)\s*Basic(?:\s|,|$)", re.IGNORECASE)


class Challenge(NamedTuple):
    """A registry's Bearer challenge: where to ask for a token, and for what (``service``
    and ``scope`` empty when the challenge names none)."""

    realm: str
    service: str
    scope: str


def parse_challenge(header: str) -> Challenge | None:
    """The Bearer challenge in a ``WWW-Authenticate`` header, else None (no header,
    another scheme, no realm). Only the realm is required (RFC 6750): Nexus names no
    scope, OCIR an empty one, Google's Artifact Registry at times no service."""
    match = _BEARER.search(header)
    if match is None:
        return None
    params: dict[str, str] = {}
    position = match.end()
    while position < len(header):
        param = _PARAM.match(header, position)
        if param is None or param.end() == position:
            break  # the next challenge's scheme
        value = param.group(2)
        if value.startswith('"'):
            value = _ESCAPE.sub(r"\1", value[1:-1])
        params.setdefault(param.group(1).lower(), value)
        position = param.end()
    if not params.get("realm"):
        return None
    return Challenge(params["realm"], params.get("service", ""), params.get("scope", ""))


class _Unauthorized:
    """A 401 answer inside :meth:`HttpClient.map`, to be sent again with a token."""

    __slots__ = ("challenge",)

    def __init__(self, challenge: str) -> None:
        self.challenge = challenge


def _or_unauthorized(decode: Callable[[Response], V]) -> Callable[[Response], V | _Unauthorized]:
    def body(response: Response) -> V | _Unauthorized:
        if response.status == 401:
            return _Unauthorized(response.headers.get("www-authenticate", ""))
        return decode(response)

    return body


class _Token:
    """A bearer token and when it stops being good (monotonic seconds)."""

    __slots__ = ("expires", "value")

    def __init__(self, value: str, expires: float) -> None:
        self.value = value
        self.expires = expires

    def __repr__(self) -> str:
        return "<token, hidden>"


class _Renewal:
    """The tokens of one :meth:`RegistrySession.map`: the generation of the newest it
    fetched (-1: none yet), the generations a request was answered with other than a 401,
    and the error that ended it."""

    __slots__ = ("broken", "latest", "taken")

    def __init__(self) -> None:
        self.latest = -1
        self.taken: set[int] = set()
        self.broken: CachedexError | None = None


_Key = tuple[str, str, RegistryAuth | None]  # (scheme://host, scope, credentials' names)
_TOKENS: weakref.WeakKeyDictionary[HttpClient, dict[_Key, _Token]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _cached(client: HttpClient, key: _Key) -> _Token | None:
    with _LOCK:
        return _TOKENS.get(client, {}).get(key)


def _store(client: HttpClient, key: _Key, token: _Token) -> None:
    with _LOCK:
        _TOKENS.setdefault(client, {})[key] = token


class RegistrySession:
    """Requests to one registry (``origin``, ``scheme://host[:port]``) with the
    Authorization its 401 answers ask for: :meth:`request` for one, :meth:`map` for many
    at once. Either sends a request again, once, with a new token after a 401; a failure
    to get one is a SourceError naming the URL of the request that needed it."""

    def __init__(
        self, client: HttpClient, origin: str, auth: RegistryAuth | None, *, plain_http: bool, repository: str = ""
    ) -> None:
        self.client = client
        self.origin = origin
        self.auth = auth
        self.plain_http = plain_http
        #: The scope a token is asked for when a challenge names none.
        self.default_scope = f"repository:{repository}:pull" if repository else ""
        self._challenge: Challenge | None = None
        self._state: tuple[int, tuple[str, ...]] = (0, ())  # (generation, headers): one attribute, swapped whole
        self._lock = threading.Lock()
        self._settled = False  # a request got an answer other than 401: the headers are right

    def __repr__(self) -> str:
        scope = self._challenge.scope if self._challenge else None
        return f"RegistrySession({self.origin!r}, scope={scope!r})"

    def request(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Iterable[str] = (),
        limit: int,
        ok: tuple[int, ...] = (200,),
        progress: ProgressCallback | None = None,
    ) -> Response:
        """One request; a 401 brings a token and one more try. SourceError names ``url``."""
        self.prepare(url)
        for attempt in (1, 2):
            generation, auth = self._state
            request = Request(
                url, method=method, headers=[*headers, *auth], limit=limit, ok=(*ok, 401), progress=progress
            )
            try:
                response = self.client.request(request)
            except SourceError:
                self._settled = True
                raise
            if response.status != 401:
                self._settled = True
                return response
            if attempt == 2:
                raise SourceError(url, self._refused_again("the token the registry's token service gave"))
            self.refused(url, response.headers.get("www-authenticate", ""), generation)
        raise AssertionError("unreachable")

    def map(
        self, items: Iterable[tuple[K, str, list[str]]], decode: Callable[[Response], V], *, limit: int
    ) -> Iterator[tuple[K, V | CachedexError]]:
        """GET each ``(key, url, headers)`` (concurrently, through :meth:`HttpClient.map`)
        and yield ``(key, decode(response))`` or the CachedexError that ended it. A 401
        brings a new token (again whenever a token the registry took ends); what it
        refused is sent once more with it."""
        items = iter(items)
        try:
            self.prepare(self.origin)
        except SourceError as exc:
            yield from ((key, exc) for key, _url, _headers in items)
            return
        if not self._settled:  # learn what the registry wants on one request, not on all at once
            for key, url, headers in items:
                try:
                    yield key, decode(self.request(url, headers=headers, limit=limit))
                except CachedexError as exc:
                    yield key, exc
                break
        body = _or_unauthorized(decode)
        renewal = _Renewal()
        pending: Iterator[tuple[K, str, list[str]]] = items
        while True:  # each pass sends again what the last refused; each ends one token or shrinks
            retry: list[tuple[K, str, list[str]]] = []
            yield from self._pass(pending, body, limit, renewal, retry)
            if renewal.broken is not None:
                yield from ((key, renewal.broken) for key, _url, _headers in [*retry, *pending])
                return
            if not retry:
                return
            pending = iter(retry)

    def _pass(
        self,
        items: Iterator[tuple[K, str, list[str]]],
        body: Callable[[Response], V | _Unauthorized],
        limit: int,
        renewal: _Renewal,
        retry: list[tuple[K, str, list[str]]],
    ) -> Iterator[tuple[K, V | CachedexError]]:
        """Send ``items`` (until the token service fails); what a 401 refused goes to ``retry``."""

        def requests() -> Iterator[tuple[tuple[K, str, list[str], int], Request]]:
            while renewal.broken is None:  # the token service failed: send nothing more
                item = next(items, None)
                if item is None:
                    return
                key, url, headers = item
                generation, auth = self._state
                request = Request(url, headers=[*headers, *auth], limit=limit, ok=(200, 401))
                yield (key, url, headers, generation), request

        for (key, url, headers, generation), value in self.client.map(requests(), body):
            if not isinstance(value, _Unauthorized):
                renewal.taken.add(generation)
                yield key, value
                continue
            if renewal.broken is None and generation >= renewal.latest:
                if renewal.latest >= 0 and generation not in renewal.taken:
                    renewal.broken = SourceError(url, self._refused_again("a new token"))
                else:  # the first 401 of this map, or a token that was taken has ended
                    try:
                        self.refused(url, value.challenge, generation)
                        renewal.latest = self._state[0]
                    except SourceError as exc:
                        renewal.broken = exc
            if renewal.broken is not None:
                yield key, renewal.broken
            else:
                retry.append((key, url, headers))

    def _refused_again(self, what: str) -> str:
        """Why a request sent again with new credentials was refused once more."""
        sent = self._state[1]
        if sent and sent[0].startswith("Authorization: Basic ") and self.auth is not None:
            return (
                f"HTTP 401 Unauthorized: the registry refused the user name and password in registries.{self.auth.host}"
            )
        return f"HTTP 401 Unauthorized, even with {what}"

    def _set(self, header: str | None) -> None:
        generation = self._state[0] + 1
        self._state = (generation, (f"Authorization: {header}",) if header else ())

    def prepare(self, url: str) -> None:
        """Before a batch of requests: the token of ``token_env`` as it is now, or a new
        token from the token service if the cached one is at its end."""
        with self._lock:
            if self.auth is not None and self.auth.token_env:
                header = f"Bearer {from_env(url, self.auth, self.auth.token_env, 'token_env')}"
                if self._state[1] != (f"Authorization: {header}",):
                    self._set(header)
                return
            if self._challenge is None:
                return  # no 401 seen yet: anonymous until the registry says otherwise
            key = (self.origin, self._challenge.scope, self.auth)
            token = _cached(self.client, key)
            if token is None or token.expires - time.monotonic() < _MARGIN:
                token = self._fetch(url, self._challenge)
                _store(self.client, key, token)
            if self._state[1] != (f"Authorization: Bearer {token.value}",):
                self._set(f"Bearer {token.value}")

    def auth_headers(self, url: str) -> list[str]:
        """The headers that authorize a request to ``url`` now (:meth:`prepare`'s token),
        for a request made by its caller (a ``--deep`` read that hashes as it goes)."""
        self.prepare(url)
        return list(self._state[1])

    def refused(self, url: str, www_authenticate: str, generation: int) -> None:
        """A request to ``url`` sent with the headers of ``generation`` was answered 401
        with ``www_authenticate``: get the token it asks for (unless a newer one is
        already there), so that the request can be sent once more."""
        with self._lock:
            if generation != self._state[0]:
                return  # another request already brought a newer token
            if self.auth is not None and self.auth.token_env:
                raise SourceError(url, f"the registry refused the token in ${self.auth.token_env} (HTTP 401)")
            challenge = parse_challenge(www_authenticate)
            if challenge is None:
                self._basic(url, www_authenticate)
                return
            if not challenge.scope.strip():
                challenge = challenge._replace(scope=self.default_scope)
            self._challenge = challenge
            key = (self.origin, challenge.scope, self.auth)
            sent = self._state[1]
            token = _cached(self.client, key)
            if (
                token is None
                or token.expires - time.monotonic() < _MARGIN
                or sent == (f"Authorization: Bearer {token.value}",)
            ):
                token = self._fetch(url, challenge)
                _store(self.client, key, token)
            self._set(f"Bearer {token.value}")

    def _basic(self, url: str, www_authenticate: str) -> None:
        """A 401 without a Bearer challenge: a Basic one is answered with the configured
        user name and password (once: a 401 to them is an error); anything else is."""
        asks_basic = _BASIC.search(www_authenticate) is not None
        header = basic(url, self.auth) if asks_basic and self.auth is not None else None
        if header is None:
            shown = f" (WWW-Authenticate: {short_repr(www_authenticate, 60)})" if www_authenticate else ""
            hint = "; it asks for a user name and password: 'registries' names them" if asks_basic else ""
            raise SourceError(url, f"401 without a usable Bearer challenge{shown}{hint}")
        if self._state[1] == (header,):
            raise SourceError(url, self._refused_again("them"))
        self._set(header.removeprefix("Authorization: "))

    def _fetch(self, url: str, challenge: Challenge) -> _Token:
        realm = challenge.realm
        parts = urlsplit(realm)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SourceError(url, f"the registry's token realm {short_repr(realm)} is not an http(s) URL")
        if parts.scheme == "http" and not self.plain_http:
            raise SourceError(
                url, f"refusing to ask for a token over plain http ({realm}): an https registry's realm must be https"
            )
        service = [("service", challenge.service)] if challenge.service else []
        scopes = [("scope", scope) for scope in challenge.scope.split()]
        query = urlencode([*service, *scopes, ("client_id", "cachedex")])
        header = basic(url, self.auth) if self.auth is not None else None
        headers = [header] if header else []
        started = time.monotonic()
        try:
            response = self.client.request(
                Request(f"{realm}{'&' if parts.query else '?'}{query}", headers=headers, limit=TOKEN_BYTES)
            )
        except SourceError as exc:
            raise SourceError(url, f"cannot get a token from {realm}: {exc.problem}") from exc
        try:
            answer = msgspec.json.decode(response.body)
        except (msgspec.DecodeError, RecursionError):
            answer = None
        token = (answer.get("token") or answer.get("access_token")) if isinstance(answer, dict) else None
        if not isinstance(token, str) or not TOKEN.fullmatch(token):
            raise SourceError(url, f"cannot get a token from {realm}: its answer holds no usable token")
        expires_in = answer.get("expires_in") if isinstance(answer, dict) else None
        if not isinstance(expires_in, int) or isinstance(expires_in, bool) or expires_in <= 0:
            expires_in = DEFAULT_EXPIRES_IN
        return _Token(token, started + expires_in)
